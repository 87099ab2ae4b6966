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

from manip_dynamics.errors import InputError

#: The arm the demo, the launch files and the tutorials use by default.
DEFAULT_ARM = 'cobot7'


def urdf_directory() -> Path:
    """
    Return the folder holding the bundled URDFs.

    Looks in the installed ament share directory (``share/manip_dynamics/urdf``) first,
    then in the source tree next to this package.
    """
    try:
        from ament_index_python.packages import get_package_share_directory
        share = Path(get_package_share_directory('manip_dynamics')) / 'urdf'
        if share.is_dir():
            return share
    except Exception:  # noqa: B902 - ament_index is optional (pip installs without ROS)
        pass
    for candidate in (Path(__file__).resolve().parent.parent / 'urdf',
                      Path(os.environ.get('MANIP_DYNAMICS_URDF_DIR', '/nonexistent'))):
        if candidate.is_dir():
            return candidate
    raise InputError('cannot find the bundled URDF folder; set MANIP_DYNAMICS_URDF_DIR')


def bundled_robots() -> list[str]:
    """Return the stems of the bundled URDF files, e.g. ``['cobot7', ...]``."""
    return sorted(p.stem for p in urdf_directory().glob('*.urdf'))


def urdf_path(name: str = DEFAULT_ARM) -> str:
    """
    Return the path of a bundled URDF.

    :param name: File name or stem, e.g. ``'cobot7'`` or ``'cobot7.urdf'``.
    :return: Absolute path of the file.
    :raises InputError: No bundled robot has that name.
    """
    stem = name[:-5] if name.endswith('.urdf') else name
    path = urdf_directory() / (stem + '.urdf')
    if not path.is_file():
        raise InputError('no bundled robot %r; choose one of %s' % (name, bundled_robots()))
    return str(path)
