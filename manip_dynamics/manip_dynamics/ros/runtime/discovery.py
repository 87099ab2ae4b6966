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
Loopback-only DDS discovery, the way each ROS 2 distribution wants it set (no rclpy here).

Jazzy and newer: ``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`` alone. Setting the older
``ROS_LOCALHOST_ONLY=1`` as well makes every process print two deprecation warnings
(``ROS_LOCALHOST_ONLY is deprecated ... will be ignored``), so it is removed there. Humble
knows only ``ROS_LOCALHOST_ONLY=1``. Every process this project starts (tests, the demo,
benchmarks, node processes) takes its environment from :func:`loopback_environment`;
scripts/common.sh does the same for the shell.
"""

from collections.abc import Mapping
import os

#: Distributions that know only ROS_LOCALHOST_ONLY (no discovery range).
LOCALHOST_ONLY_DISTROS = ('foxy', 'galactic', 'humble', 'iron')


def loopback_environment(env: Mapping[str, str] | None = None,
                         distro: str | None = None) -> dict[str, str]:
    """
    Return a copy of ``env`` whose DDS discovery stays on this machine.

    :param env: The environment to start from; default ``os.environ``.
    :param distro: The ROS 2 distribution; default ``env['ROS_DISTRO']`` (unset = a
        distribution with the discovery range, Jazzy or newer).
    :return: The new environment: on Humble and older ``ROS_LOCALHOST_ONLY=1``; otherwise
        ``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`` and no ``ROS_LOCALHOST_ONLY``.
    """
    out = dict(os.environ if env is None else env)
    distro = (distro or out.get('ROS_DISTRO') or '').lower()
    if distro in LOCALHOST_ONLY_DISTROS:
        out['ROS_LOCALHOST_ONLY'] = '1'
    else:
        out['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
        out.pop('ROS_LOCALHOST_ONLY', None)
        out.pop('ROS_STATIC_PEERS', None)
    return out


def apply_loopback_environment() -> None:
    """Make this process's own environment loopback-only (before rclpy is initialised)."""
    wanted = loopback_environment()
    for key in ('ROS_LOCALHOST_ONLY', 'ROS_AUTOMATIC_DISCOVERY_RANGE', 'ROS_STATIC_PEERS'):
        if key in wanted:
            os.environ[key] = wanted[key]
        else:
            os.environ.pop(key, None)
