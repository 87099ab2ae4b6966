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
simulator_node as control.launch.py runs it: the arm behind topic_based_ros2_control.

There the controller_manager's TopicBasedSystem sends sensor_msgs/JointState effort commands
on /sim/joint_commands every cycle, zeros until a controller has written its command
interfaces, and the controllers' Float64MultiArray commands must not reach the simulator
directly. With ``controller_commands: false`` and ``brake_release: holding_command``:

* nothing subscribes to ``/<controller_name>/commands``;
* all-zero commands (what the hardware sends before the effort controller writes) keep the
  brakes on, however long they come, and the arm does not move;
* a command that holds the pose (g(q0), from the URDF model) releases them and the arm
  stays within 1e-3 rad.

The real controller_manager chain is checked by hand and by the launch test
test/launch/test_control_launch.py (docs/ROS2_CONTROL.md).
"""

import time

import numpy as np
import pytest
from ros_test_support import (read_log, require_interfaces, require_rclpy,
                              send_until_logged, spun_node, STARTUP_TIMEOUT, wait_until)

rclpy = require_rclpy()
require_interfaces()

from sensor_msgs.msg import JointState  # noqa: E402, I100
from std_msgs.msg import Float64MultiArray  # noqa: E402

from manip_dynamics import RobotModel  # noqa: E402
from manip_dynamics.bundled import urdf_path  # noqa: E402
from manip_dynamics.ros.runtime.node_process import start_node, stop_node  # noqa: E402

pytestmark = [pytest.mark.rostest, pytest.mark.slow, pytest.mark.realtime]
NS = 'sim_behind_rc'


def test_zero_commands_keep_the_brakes_and_a_holding_one_releases_them():
    with open(urdf_path('cobot7'), encoding='utf-8') as stream:
        xml = stream.read()
    model = RobotModel.from_urdf_string(xml)
    proc = start_node('simulator_node', NS, {
        'robot_description': xml, 'brakes': True, 'publish_clock': False,
        'brake_release': 'holding_command', 'controller_commands': False,
        'controller_name': NS + '_controller', 'joint_commands_topic': '/%s/commands' % NS,
        'command_timeout': 5.0},
        remaps=('/joint_states:=/%s/joint_states' % NS,))
    try:
        wait_until(lambda: "simulating 'cobot7'" in read_log(proc), STARTUP_TIMEOUT,
                   'the simulator did not start')
        with spun_node(NS + '_probe') as node:
            states = []
            node.create_subscription(JointState, '/%s/joint_states' % NS,
                                     lambda m: states.append(np.array(m.position)), 100)
            commands = node.create_publisher(JointState, '/%s/commands' % NS, 10)
            direct = node.create_publisher(Float64MultiArray,
                                           '/%s_controller/commands' % NS, 10)
            wait_until(lambda: states, 30.0, 'no joint_states')
            wait_until(lambda: commands.get_subscription_count() > 0, 30.0,
                       'the simulator does not subscribe to its joint_commands_topic')
            assert direct.get_subscription_count() == 0, \
                'the simulator takes Float64MultiArray commands with controller_commands off'
            q0 = states[-1].copy()
            names = list(model.joint_names)

            def command(effort) -> JointState:
                return JointState(name=names, effort=[float(v) for v in effort])
            # zeros for longer than the 0.5 s a moving controller is given
            send_until_logged(proc, commands, command(np.zeros(model.dof)),
                              'all-zero commands', timeout=20.0, period=0.02)
            n = len(states)
            end = time.monotonic() + 1.0
            while time.monotonic() < end:
                commands.publish(command(np.zeros(model.dof)))
                time.sleep(0.02)
            log = read_log(proc)
            assert 'brakes released' not in log, log
            held = np.array(states[n:])
            assert held.size and np.max(np.abs(held - q0)) == 0.0, 'the arm moved while braked'
            hold = model.gravity_torques(q0)
            send_until_logged(proc, commands, command(hold), 'holds the held pose',
                              timeout=20.0, period=0.02)
            n = len(states)
            end = time.monotonic() + 1.0
            while time.monotonic() < end:
                commands.publish(command(hold))
                time.sleep(0.01)
            drift = np.max(np.abs(np.array(states[n:]) - q0))
            assert drift < 1e-3, 'released with g(q0): drift %.3g rad' % drift
    finally:
        stop_node(proc)
