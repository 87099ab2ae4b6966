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

"""Why a node cannot start: the error type its start-up raises and how ``main()`` reports it."""

from rclpy.exceptions import ParameterException
from rclpy.logging import get_logger

from manip_dynamics.errors import ManipDynamicsError


class StartupError(ManipDynamicsError):
    """A parameter or the robot description is unusable at start-up: the node exits."""


#: What a node's ``main()`` reports with :func:`report_startup_error` (and exits 1) instead
#: of a traceback: a bad parameter, or a robot_description that does not load.
STARTUP_ERRORS = (StartupError, ParameterException, ValueError)


def report_startup_error(node_name: str, error: Exception) -> int:
    """
    Log why a node cannot start, on the node's logger.

    :class:`StartupError` and rclpy's ParameterException are logged as they are; any other
    ValueError comes from loading the robot description (URDF) and is labelled so.

    :param node_name: Name of the logger (the node's default name).
    :param error: One of :data:`STARTUP_ERRORS`.
    :return: The exit code for ``main()``: 1.
    """
    if isinstance(error, (StartupError, ParameterException)):
        get_logger(node_name).error('cannot start: %s' % error)
    else:
        get_logger(node_name).error('cannot start: robot_description: %s' % error)
    return 1
