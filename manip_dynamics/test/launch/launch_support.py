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
The parts the launch_testing tests of this folder share.

Plain functions: the launch description that includes one of the package's launch files,
the test-side node spun on a background thread, a periodic joint_states publisher; service
calls, waits and the launched control.launch.py come from
manip_dynamics.ros.testing.control_launch (shared with scripts/mujoco_tracking.py). The ROS
and launch packages are imported inside the functions, so importing this module never fails
where launch_testing is absent (each test module skips itself with pytest.importorskip
first). ``launch_test`` loads a test file without putting its
folder on sys.path: the test modules add it before importing this module.
"""

import os
import shutil
import threading
import time
from typing import Any, Mapping, Sequence
import xml.etree.ElementTree as ElementTree

from manip_dynamics.ros.launch_support.launch_helpers import NODE_PRIORITY
# driving a launched control.launch.py: shared with scripts/mujoco_tracking.py --launch
from manip_dynamics.ros.testing.control_launch import (  # noqa: F401 - the tests' names
    call_service, launched_control, log_text, switch_to_jtc, wait_for_bringup, wait_for_future)

PACKAGE = 'manip_dynamics'


def ros2_launch_missing() -> str | None:
    """Return why ``ros2 launch manip_dynamics ...`` cannot run here, or None."""
    if shutil.which('ros2') is None:
        return ('the ros2 command is not installed (not on PyPI: an apt ROS 2, or ros2cli and '
                'launch_ros built from source; see scripts/test_launch.sh)')
    try:
        import launch_ros  # noqa: F401
        from ament_index_python.packages import get_package_share_directory
        get_package_share_directory(PACKAGE)
    except Exception as error:  # noqa: B902 - any missing piece means: cannot run here
        return 'ros2 launch cannot run here: %s' % error
    return None


def share_path(*parts: str) -> str:
    """
    Return a path inside the installed share directory of manip_dynamics.

    :param parts: Path components below the share directory, e.g. ``('urdf', 'cobot7.urdf')``.
    :return: The absolute path (not checked for existence).
    """
    from ament_index_python.packages import get_package_share_directory
    return os.path.join(get_package_share_directory(PACKAGE), *parts)


def include_launch_file(launch_file: str, arguments: Mapping[str, str]) -> Any:
    """
    Build the test launch description: one launch file of the package, then ReadyToTest.

    :param launch_file: File name in the package's share ``launch/`` folder,
        e.g. ``'dynamics.launch.py'``.
    :param arguments: Launch arguments (name -> value as text) passed to the included file.
    :return: A ``launch.LaunchDescription`` for ``generate_test_description()`` to return.
    """
    import launch
    from launch.launch_description_sources import PythonLaunchDescriptionSource
    import launch_testing.actions
    return launch.LaunchDescription([
        launch.actions.IncludeLaunchDescription(
            PythonLaunchDescriptionSource(share_path('launch', launch_file)),
            launch_arguments=dict(arguments).items()),
        launch_testing.actions.ReadyToTest(),
    ])


def include_control_launch(missing: str | None, arguments: Mapping[str, str]) -> Any:
    """
    Build the test launch description of control.launch.py, or an empty one.

    :param missing: What :func:`ros2_control_missing` said; not None: the launch is not
        started (its test cases skip with that reason), only ReadyToTest.
    :param arguments: Launch arguments of control.launch.py.
    :return: A ``launch.LaunchDescription`` for ``generate_test_description()`` to return.
    """
    if missing:
        import launch
        from launch.actions import TimerAction
        import launch_testing.actions
        # a timer that never fires keeps the empty launch running until the (skipped) tests
        # have ended: without it launch_test could see the launch end first and fail with
        # "Processes under test stopped before tests completed"
        return launch.LaunchDescription([TimerAction(period=3600.0, actions=[]),
                                         launch_testing.actions.ReadyToTest()])
    return include_launch_file('control.launch.py', arguments)


def create_test_node(name: str) -> Any:
    """
    Initialise rclpy (the default context) and create the test-side node.

    :param name: Node name.
    :return: The ``rclpy.node.Node``.
    """
    import rclpy
    rclpy.init()
    return rclpy.create_node(name)


def publish_joint_states(node: Any, names: Sequence[str], positions: Sequence[float],
                         period: float, topic: str = '/joint_states') -> Any:
    """
    Publish a constant sensor_msgs/JointState, stamped with the node's clock, periodically.

    Plays the joint_state_broadcaster for the launched nodes.

    :param node: The test-side node that owns the publisher and the timer.
    :param names: Joint names, in the order the message lists them.
    :param positions: Joint positions [rad or m], shape (len(names),), same order.
    :param period: Timer period [s].
    :param topic: Topic name.
    :return: The timer (keep it alive as long as the node).
    """
    from sensor_msgs.msg import JointState
    publisher = node.create_publisher(JointState, topic, 10)
    names = list(names)
    positions = [float(value) for value in positions]

    def publish() -> None:
        msg = JointState(name=names, position=positions)
        msg.header.stamp = node.get_clock().now().to_msg()
        publisher.publish(msg)
    return node.create_timer(period, publish)


def spin_in_background(node: Any) -> Any:
    """
    Spin the node with a single-threaded executor on a daemon thread.

    Create the node's publishers, timers and subscriptions first.

    :param node: The test-side node.
    :return: The executor; pass it to :func:`stop_test_node`.
    """
    from rclpy.executors import SingleThreadedExecutor
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    executor.spin_thread = threading.Thread(target=executor.spin, daemon=True)
    executor.spin_thread.start()
    return executor


def stop_test_node(node: Any, executor: Any) -> None:
    """
    Stop the executor, destroy the node and shut rclpy down.

    :param node: The node from :func:`create_test_node`.
    :param executor: The executor from :func:`spin_in_background`.
    """
    import rclpy
    executor.shutdown()
    # let the spin thread leave before rclpy goes away: a thread still inside the executor
    # at interpreter exit aborts the process ("terminate called without an active exception")
    executor.spin_thread.join(timeout=2.0)
    node.destroy_node()
    rclpy.try_shutdown()


def ros2_control_missing() -> str | None:
    """
    Return why control.launch.py cannot run here, or None.

    :return: The missing ros2_control packages and how to install them, or None when
        controller_manager, the two controllers, the topic-based hardware
        (joint_state_topic_hardware_interface, or topic_based_ros2_control) and
        controller_manager_msgs' Python module are all there.
    """
    from manip_dynamics.ros.launch_support.launch_helpers import executable_path
    from manip_dynamics.ros.launch_support.ros2_control_setup import topic_based_hardware
    hardware, _ = topic_based_hardware(lambda name: bool(executable_path(name, '')))
    wanted = [('controller_manager', 'ros2_control_node'), ('joint_state_broadcaster', ''),
              ('forward_command_controller', ''), (hardware, '')]
    absent = [package for package, executable in wanted
              if executable_path(package, executable) is None]
    try:
        import controller_manager_msgs.srv  # noqa: F401
    except ImportError:
        absent.append('controller_manager_msgs')
    if absent:
        return ('%s not installed (C++ ros2_control packages, not on PyPI: apt install '
                'ros-$ROS_DISTRO-ros2-control ros-$ROS_DISTRO-ros2-controllers '
                'ros-$ROS_DISTRO-joint-state-topic-hardware-interface)' % ', '.join(absent))
    return None


def check_controllers(case: Any, node: Any, timeout: float = 60.0) -> dict[str, str]:
    """
    Wait until joint_state_broadcaster and effort_controller are active.

    joint_trajectory_controller, where installed, must be loaded and inactive.

    :param case: The ``unittest.TestCase`` that asserts.
    :param node: The test node.
    :return: Controller name -> state.
    """
    from controller_manager_msgs.srv import ListControllers
    from manip_dynamics.ros.launch_support.launch_helpers import executable_path
    trajectory = executable_path('joint_trajectory_controller', '') is not None
    deadline = time.monotonic() + timeout
    while True:
        states = {c.name: c.state for c in call_service(
            node, ListControllers, '/controller_manager/list_controllers',
            ListControllers.Request()).controller}
        if (states.get('joint_state_broadcaster') == 'active'
                and states.get('effort_controller') == 'active'
                # loaded is not enough: it is 'unconfigured' until the spawner configures it
                and (not trajectory or states.get('joint_trajectory_controller')
                     not in (None, 'unconfigured'))):
            break
        case.assertLess(time.monotonic(), deadline, states)
        time.sleep(1.0)
    if trajectory:
        case.assertEqual(states['joint_trajectory_controller'], 'inactive')
    return states


#: controller_manager's update rate of the chain's launch tests, the launch's default
#: (cobot7's gains hold every pose against gravity from 500 Hz on; at 250 Hz the launch
#: warns that they cannot).
CHAIN_RATE = 500
#: SCHED_FIFO priority of the measuring test process: the nodes' own (the launch's default
#: thread_priority), under controller_manager's. A lower one starved behind the loop with a
#: busy core (it saw the filter's hold 10 s late); refused without root or an rtprio limit:
#: a note, and the normal scheduler.
PROBE_PRIORITY = NODE_PRIORITY
#: The launch up to active controllers on a loaded 2-core machine [s].
CHAIN_STARTUP = 90.0
#: control.launch.py's arguments in those tests: no RViz, no robot_state_publisher; the
#: rest its defaults (update_rate CHAIN_RATE, thread_priority NODE_PRIORITY).
CHAIN_ARGUMENTS = ('rviz:=false', 'robot_state_publisher:=false')

#: ros2_controllers releases whose JTC adds a point's effort on the effort interface
#: (PR #1200): 4.22 and newer on the jazzy line, the 5.x (kilted) line.
FEEDFORWARD_JTC = (4, 22)


def feedforward_jtc_missing() -> str | None:
    """Return why a JTC with the effort feed-forward and control_msgs are not here, or None."""
    try:
        from ament_index_python.packages import get_package_share_directory
        share = get_package_share_directory('joint_trajectory_controller')
    except Exception:  # noqa: B902 - not installed at all
        return 'joint_trajectory_controller not installed (apt: ros-$ROS_DISTRO-ros2-controllers)'
    version = ElementTree.parse(os.path.join(share, 'package.xml')).findtext('version', '')
    parts = tuple(int(x) for x in version.split('.')[:2] if x.isdigit())
    if parts < FEEDFORWARD_JTC:
        return ('joint_trajectory_controller %s takes no effort feed-forward (4.22 or newer '
                'needed)' % version)
    try:
        import control_msgs.action  # noqa: F401
    except ImportError:
        return 'control_msgs not installed (apt: ros-$ROS_DISTRO-control-msgs)'
    return None
