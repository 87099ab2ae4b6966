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
manip_dynamics: rigid-body dynamics of fixed-base manipulators from a URDF.

The core library (this package minus :mod:`manip_dynamics.ros`) needs only numpy, scipy,
numba and urdfdom-py.  Start with :class:`RobotModel`.
"""

import importlib

from manip_dynamics._numba_cache import ensure_cache_location
from manip_dynamics.errors import InputError, ManipDynamicsError, URDFError

# Before any kernel is defined: numba must have a writable cache folder (read-only installs).
ensure_cache_location()

__all__ = ['CartesianDynamics', 'InputError', 'ManipDynamicsError', 'RobotModel', 'URDFError']
__version__ = '0.1.0'

# Imported on first use, so that ``import manip_dynamics`` (and e.g. manip_dynamics.bundled,
# the launch files, the node launcher) does not load numba (about 0.4 s) until needed.
_LAZY = {'CartesianDynamics': 'manip_dynamics.algorithms.cartesian',
         'RobotModel': 'manip_dynamics.robot_model'}


def __getattr__(name: str):
    """Return :class:`RobotModel` or :class:`CartesianDynamics`, importing it once."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError('module %r has no attribute %r' % (__name__, name))
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """List the module's names, the lazily imported ones included."""
    return sorted(set(globals()) | set(_LAZY))
