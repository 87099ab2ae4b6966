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
The node actions the package's launch files share (sim.launch.py, control.launch.py).

launch and launch_ros are imported inside the functions: they are not on PyPI, and this
module is imported by the launch files only, where they exist.
"""

import os
import re
import tempfile
from typing import Any

from manip_dynamics.ros.launch_support.launch_helpers import LaunchArgumentError

PACKAGE = 'manip_dynamics'
#: The RViz display configuration the launch files start rviz2 with (its fixed frame is
#: replaced by the launched arm's root link, see :func:`rviz_config`).
RVIZ_CONFIG = ('config', 'sim.rviz')


def share(*parts: str) -> str:
    """
    Return a path inside this package's share directory.

    :param parts: Path components, e.g. ``('config', 'simulator.yaml')``.
    :return: The absolute path (not checked for existence).
    """
    from ament_index_python.packages import get_package_share_directory
    return os.path.join(get_package_share_directory(PACKAGE), *parts)


def config_file(name: str) -> str:
    """
    Return the path of the package's ``config/<name>``, which must be installed.

    launch_ros only warns about a parameter file that is not there ("Parameter file path is
    not a file") and starts the node with its built-in defaults: behind a ``colcon build
    --symlink-install`` done before a config file was added, the observer ran for hours
    with defaults its own file replaces. So a missing file stops the launch, saying why.

    :param name: The file's name, e.g. ``'simulator.yaml'``.
    :raises RuntimeError: The installed package has no such file.
    """
    path = share('config', name)
    if not os.path.isfile(path):
        raise RuntimeError(
            '%s is missing: the installed %s is older than its launch files (a file added '
            'since the last build): build it again (colcon build) and source the workspace'
            % (path, PACKAGE))
    return path


def stop_launch(what: str, launch_file: str) -> Any:
    """
    Return the action that ends the launch when a required process exits.

    :param what: The process, e.g. ``'simulator_node'``.
    :param launch_file: The launch file's name, for the reason.
    :return: A ``launch.actions.Shutdown``.
    """
    from launch.actions import Shutdown
    return Shutdown(reason='%s exited: stopping every node of %s' % (what, launch_file))


def description_node(state_publisher: bool, description: str, sim_time: bool) -> Any:
    """
    Return the node that publishes /robot_description.

    :param state_publisher: True: robot_state_publisher (also TF); False: the suite's
        description_publisher (the topic only, transient local).
    :param description: The URDF text.
    :param sim_time: ``use_sim_time`` of robot_state_publisher.
    :return: A ``launch_ros.actions.Node``.
    """
    from launch_ros.actions import Node
    if state_publisher:
        return Node(package='robot_state_publisher', executable='robot_state_publisher',
                    name='robot_state_publisher', output='screen',
                    parameters=[{'robot_description': description,
                                 'use_sim_time': sim_time}])
    # the topic for the nodes that follow it (controller_manager, viewer, observer), no TF
    return Node(package=PACKAGE, executable='description_publisher',
                name='description_publisher', output='screen',
                parameters=[{'robot_description': description}])


def remove_on_shutdown(path: str) -> Any:
    """
    Return the action that deletes a file the launch wrote when the launch ends.

    :param path: The file (a missing one is fine).
    :return: A ``launch.actions.RegisterEventHandler`` on ``OnShutdown``.
    """
    from launch.actions import RegisterEventHandler
    from launch.event_handlers import OnShutdown

    def remove(_event: Any, _context: Any) -> None:
        try:
            os.remove(path)
        except FileNotFoundError:
            pass
    return RegisterEventHandler(OnShutdown(on_shutdown=remove))


def launch_namespace(value: str) -> str:
    """
    Return the launch argument ``namespace`` as a namespace (``''``: the root one).

    :param value: E.g. ``'arm1'`` or ``'/arm1/'``.
    :return: E.g. ``'arm1'``.
    :raises LaunchArgumentError: A name ROS would refuse (characters other than letters,
        digits, ``_`` and ``/``, a token that starts with a digit, ``//``): launch prints the
        message and starts nothing.
    """
    name = value.strip().strip('/')
    if name and not re.fullmatch(r'[A-Za-z_][A-Za-z0-9_]*(/[A-Za-z_][A-Za-z0-9_]*)*', name):
        raise LaunchArgumentError(
            'namespace %r is not a ROS namespace (letters, digits and _, tokens separated by '
            '/, none starting with a digit)' % value)
    return name


def in_namespace(namespace: str, actions: list) -> list:
    """
    Return ``actions`` pushed into ``namespace`` (every node's relative names under it).

    :param namespace: From :func:`launch_namespace`; ``''`` returns ``actions`` as they are.
    :param actions: Launch actions (nodes, event handlers).
    :return: One ``GroupAction`` scoping them, or ``actions``.
    """
    if not namespace:
        return actions
    from launch.actions import GroupAction
    from launch_ros.actions import PushRosNamespace
    return [GroupAction([PushRosNamespace(namespace), *actions])]


def rviz_config(config_text: str, description: str, namespace: str = '') -> str:
    """
    Return the RViz configuration with its fixed frame set to the arm's root link.

    robot_state_publisher publishes the TF tree from the URDF's root link, so that frame
    exists for every arm (a fixed ``cobot7_base_link`` left every other arm undrawn: "Fixed
    Frame does not exist"). In a namespace the displays' topics (the description, the
    torque markers) are the namespace's; TF stays ``/tf`` (one tree per graph).

    :param config_text: The text of an RViz configuration (YAML) with a ``Fixed Frame`` line.
    :param description: The URDF text.
    :param namespace: From :func:`launch_namespace`.
    :return: The configuration text.
    :raises ValueError: The description does not load, or the text has no fixed frame.
    """
    from manip_dynamics.robot_model import RobotModel
    root = RobotModel.from_urdf_string(description).root_link
    text, count = re.subn(r'(?m)^(\s*Fixed Frame:\s*).*$', lambda m: m.group(1) + root,
                          config_text)
    if count != 1:
        raise ValueError('the RViz configuration has %d Fixed Frame lines, expected 1' % count)
    if namespace:
        text = re.sub(r'(?m)^(\s*Value:\s*)/(robot_description|manip_dynamics/)',
                      lambda m: '%s/%s/%s' % (m.group(1), namespace, m.group(2)), text)
    return text


def rviz_node(sim_time: bool, on_exit: Any, description: str, namespace: str = '') -> list:
    """
    Return rviz2 with the package's display configuration, fixed on the arm's root link.

    The configuration is written for this arm to a temporary file, deleted when the launch
    ends.

    :param sim_time: ``use_sim_time``.
    :param on_exit: The action run when rviz2 exits (see :func:`stop_launch`).
    :param description: The launched arm's URDF text.
    :param namespace: The launch's namespace (:func:`launch_namespace`).
    :return: The ``launch_ros.actions.Node`` and the action that deletes the file.
    """
    from launch_ros.actions import Node
    with open(share(*RVIZ_CONFIG), encoding='utf-8') as stream:
        text = rviz_config(stream.read(), description, namespace)
    handle, path = tempfile.mkstemp(prefix='manip_dynamics_', suffix='.rviz')
    with os.fdopen(handle, 'w', encoding='utf-8') as stream:
        stream.write(text)
    return [Node(package='rviz2', executable='rviz2', name='rviz2', output='log',
                 arguments=['-d', path], parameters=[{'use_sim_time': sim_time}],
                 on_exit=on_exit),
            remove_on_shutdown(path)]


def viewer_node(port: int, follow: dict[str, Any]) -> Any:
    """
    Return viewer_node: the arm in a web browser on http://127.0.0.1:<port>.

    :param port: The page's port.
    :param follow: The parameters every following node gets (description, sim time).
    :return: A ``launch_ros.actions.Node``.
    """
    from launch_ros.actions import Node
    return Node(package=PACKAGE, executable='viewer_node', name='viewer', output='screen',
                parameters=[{'port': port}, follow])


def trajectory_nodes(timeout: float, follow: dict[str, Any], on_exit: Any,
                     observer: dict[str, Any]) -> list[Any]:
    """
    Return trajectory_controller and the external-torque observer for its collision reaction.

    :param timeout: The controller's joint_states timeout [s].
    :param follow: The parameters every following node gets (description, sim time).
    :param on_exit: The action run when the controller exits.
    :param observer: Extra parameters of the observer (e.g. ``effort_source``).
    :return: Two ``launch_ros.actions.Node``.
    """
    from launch_ros.actions import Node
    return [
        Node(package=PACKAGE, executable='trajectory_controller',
             name='trajectory_controller', output='screen', sigterm_timeout='5',
             parameters=[config_file('trajectory_controller.yaml'),
                         {'timeout': timeout, 'acceleration_limits': [2.0]}, follow],
             on_exit=on_exit),
        observer_node(follow, observer),
    ]


def observer_node(follow: dict[str, Any], parameters: dict[str, Any]) -> Any:
    """
    Return external_torque_observer (contact flag on ``/external_torque_observer/contact``).

    :param follow: The parameters every following node gets (description, sim time).
    :param parameters: Its own parameters (e.g. ``effort_source``), may be empty.
    :return: A ``launch_ros.actions.Node``.
    """
    from launch_ros.actions import Node
    return Node(package=PACKAGE, executable='external_torque_observer',
                name='external_torque_observer', output='screen',
                parameters=[config_file('external_torque_observer.yaml'), follow,
                            parameters])
