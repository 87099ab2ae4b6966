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

"""Locate the robot descriptions bundled with the package (manip_dynamics/urdf/)."""

import os
from pathlib import Path
import site
import sys

from manip_dynamics.errors import InputError

#: The arm the demo, the launch files and the tutorials use by default.
DEFAULT_ARM = 'cobot7'


def urdf_directories() -> list[Path]:
    """
    Return the folders that may hold the bundled URDFs, most preferred first.

    The installed ament share directory (``share/manip_dynamics/urdf``), the source tree
    next to this package, the ``share/manip_dynamics/urdf`` a pip install writes (under
    ``sys.prefix``, the user base of ``--user``, or the folder of ``--target``), and
    ``$MANIP_DYNAMICS_URDF_DIR``; only existing folders.
    """
    found = []
    try:
        from ament_index_python.packages import get_package_share_directory
        found.append(Path(get_package_share_directory('manip_dynamics')) / 'urdf')
    except Exception:  # noqa: B902 - ament_index is optional (pip installs without ROS)
        pass
    here = Path(__file__).resolve().parent.parent
    found.append(here / 'urdf')
    share = Path('share', 'manip_dynamics', 'urdf')
    found += [Path(sys.prefix) / share, Path(site.getuserbase()) / share, here / share]
    if os.environ.get('MANIP_DYNAMICS_URDF_DIR'):
        found.append(Path(os.environ['MANIP_DYNAMICS_URDF_DIR']))
    return [path for path in found if path.is_dir()]


def bundled_robots() -> list[str]:
    """Return the stems of the bundled URDF files, e.g. ``['cobot7', ...]``."""
    return sorted({p.stem for folder in urdf_directories() for p in folder.glob('*.urdf')})


def urdf_path(name: str = DEFAULT_ARM) -> str:
    """
    Return the path of a bundled URDF.

    :param name: File name or stem, e.g. ``'cobot7'`` or ``'cobot7.urdf'``.
    :return: Absolute path of the file, from the first folder of :func:`urdf_directories`
        that has it.
    :raises InputError: No bundled robot has that name.
    """
    stem = name[:-5] if name.endswith('.urdf') else name
    for folder in urdf_directories():
        path = folder / (stem + '.urdf')
        if path.is_file():
            return str(path)
    raise InputError('no bundled robot %r; choose one of %s' % (name, bundled_robots()))
