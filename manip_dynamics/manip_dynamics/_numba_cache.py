# Copyright 2026 The manip_dynamics Authors
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

"""
Make sure numba has somewhere to write its kernel cache (run before any kernel is defined).

numba's own rule, applied per kernel source folder: ``$NUMBA_CACHE_DIR`` when set; else
``__pycache__`` next to the sources when writable; else the per-user
``$XDG_CACHE_HOME/numba`` (default ``~/.cache/numba``).  When none of these is writable
(a read-only install run by a user without a writable home, e.g. a service account or a
read-only container), numba refuses to define a cached kernel at all (``RuntimeError:
cannot cache function ...: no locator available``).  :func:`ensure_cache_location` then
points ``NUMBA_CACHE_DIR`` at a per-user folder in the temporary directory, so the library
imports and caches for as long as that folder lives.  It does nothing in every other case.
"""

import os
import sys
import tempfile

#: Kernel source folders of the package (numba caches each next to its sources).
_KERNEL_FOLDERS = ('algorithms', 'simulation')


def _writable_folder(path: str) -> bool:
    """Return True when ``path`` exists or can be made, and a file can be written in it."""
    try:
        os.makedirs(path, exist_ok=True)
        tempfile.TemporaryFile(dir=path).close()
    except OSError:
        return False
    return True


def user_cache_folder() -> str:
    """Return numba's per-user cache folder on Linux: ``$XDG_CACHE_HOME/numba``."""
    base = os.environ.get('XDG_CACHE_HOME') or os.path.join(os.path.expanduser('~'), '.cache')
    return os.path.join(base, 'numba')


def fallback_folder() -> str:
    """Return the last-resort cache folder: ``<tmp>/manip_dynamics-numba-<uid>``."""
    uid = os.getuid() if hasattr(os, 'getuid') else 0
    return os.path.join(tempfile.gettempdir(), 'manip_dynamics-numba-%d' % uid)


def ensure_cache_location() -> str | None:
    """
    Set ``NUMBA_CACHE_DIR`` to :func:`fallback_folder` when numba would find no cache folder.

    Cheap (a few file-system calls, numba not imported).  Applies to numba's configuration
    too when numba is already imported.

    :return: The folder set, or None when numba's own choice works (nothing changed).
    """
    if os.environ.get('NUMBA_CACHE_DIR'):
        return None
    here = os.path.dirname(os.path.abspath(__file__))
    folders = [os.path.join(here, name, '__pycache__') for name in _KERNEL_FOLDERS]
    if all(_writable_folder(f) for f in folders) or _writable_folder(user_cache_folder()):
        return None
    path = fallback_folder()
    if not _writable_folder(path):
        return None  # nothing writable at all: numba reports it
    os.environ['NUMBA_CACHE_DIR'] = path
    config = sys.modules.get('numba.core.config')
    if config is not None:
        config.CACHE_DIR = path
    return path
