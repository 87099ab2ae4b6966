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
launch_testing test of ``control.launch.py hardware:=mock robot:=puma560``: a dry run.

mock_components/GenericSystem stands in for the hardware (no physics, no simulator): the
real controller_manager loads it from the <ros2_control> block control.launch.py rewrote,
the broadcaster and the effort controller come up active (joint_trajectory_controller, where
installed, inactive; a strict switch to it and back succeeds), /joint_states shows puma560's
start pose (the block's initial values), the compensation's commands (ramped in, then g(q)
checked against the model of the bundled URDF) flow to /effort_controller/commands, no
simulator runs and every process exits cleanly. Skipped with the reason where the
ros2_control packages are missing (see test_control_launch.py).
"""

import os
import sys
import time
import unittest

import pytest

pytest.importorskip('launch_testing', reason='launch_testing not installed (not on PyPI); '
                    'run on a ROS 2 install')

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import launch_support  # noqa: E402, I100
import launch_testing.actions  # noqa: E402
import launch_testing.asserts  # noqa: E402
from launch_testing_ros import WaitForTopics  # noqa: E402
import numpy as np  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402

from manip_dynamics import RobotModel  # noqa: E402
from manip_dynamics.bundled import urdf_path  # noqa: E402
from manip_dynamics.ros.launch_support.ros2_control_setup import ros2_control_joints  # noqa: E402

MISSING = launch_support.ros2_control_missing()


@pytest.mark.rostest
def generate_test_description():
    """Include control.launch.py with mock hardware (nothing when ros2_control is missing)."""
    return launch_support.include_control_launch(
        MISSING, {'hardware': 'mock', 'robot': 'puma560', 'rviz': 'false',
                  'robot_state_publisher': 'false'})


@unittest.skipIf(MISSING, MISSING or '')
class TestControlMockLaunch(unittest.TestCase):
    """The controllers run on mock hardware; the compensation commands g(q0)."""

    @classmethod
    def setUpClass(cls):
        """Create the test node, spun on a thread."""
        cls.node = launch_support.create_test_node('test_control_mock_launch')
        cls.executor = launch_support.spin_in_background(cls.node)

    @classmethod
    def tearDownClass(cls):
        """Stop spinning and shut down."""
        launch_support.stop_test_node(cls.node, cls.executor)

    def test_controllers_run_on_mock_hardware(self):
        """Active controllers, the start pose on /joint_states, g(q0) commanded, no simulator."""
        topics = [('/joint_states', JointState),
                  ('/effort_controller/commands', Float64MultiArray)]
        with WaitForTopics(topics, timeout=120.0) as wait:
            state = wait.received_messages('/joint_states')[-1]
        launch_support.check_controllers(self, self.node)
        with open(urdf_path('puma560'), encoding='utf-8') as stream:
            xml = stream.read()
        model = RobotModel.from_urdf_string(xml)
        start = {j.name: j.initial_position for j in ros2_control_joints(xml)}
        order = [list(state.name).index(name) for name in model.joint_names]
        q = np.array(state.position)[order]
        np.testing.assert_allclose(q, [start[name] for name in model.joint_names], atol=1e-9)
        # not the simulator: the compensation ramps in over ramp_time (2 s by default), each
        # command is s g(q) with s rising from 0 to 1
        g = model.gravity_torques(q)
        commands = []
        self.node.create_subscription(Float64MultiArray, '/effort_controller/commands',
                                      lambda m: commands.append(np.array(m.data)), 100)
        deadline = time.monotonic() + 30.0
        while not commands or not np.allclose(commands[-1], g, rtol=0.0, atol=1e-9):
            self.assertLess(time.monotonic(), deadline, 'the command never reached g(q): %s'
                            % (commands[-1:] or 'no command'))
            time.sleep(0.05)
        scale = [float(np.dot(c, g) / np.dot(g, g)) for c in commands]
        for c, s in zip(commands, scale):
            np.testing.assert_allclose(c, s * g, atol=1e-9)
        self.assertTrue(all(b >= a - 1e-12 for a, b in zip(scale, scale[1:])),
                        'the ramp went down: %s' % scale)
        time.sleep(1.0)
        self.assertEqual(self.node.get_publishers_info_by_topic('/sim/joint_states'), [])

    def test_the_trajectory_controller_switches_in_and_back(self):
        """A strict switch effort_controller -> joint_trajectory_controller, and back."""
        from manip_dynamics.ros.launch_support.launch_helpers import executable_path
        if executable_path('joint_trajectory_controller', '') is None:
            self.skipTest('joint_trajectory_controller not installed '
                          '(apt install ros-$ROS_DISTRO-joint-trajectory-controller)')
        from controller_manager_msgs.srv import ListControllers, SwitchController
        launch_support.check_controllers(self, self.node)

        def switch(activate, deactivate):
            request = SwitchController.Request(
                activate_controllers=[activate], deactivate_controllers=[deactivate],
                strictness=SwitchController.Request.STRICT)
            answer = launch_support.call_service(
                self.node, SwitchController, '/controller_manager/switch_controller', request)
            self.assertTrue(answer.ok, 'switch to %s refused' % activate)
            states = {c.name: c.state for c in launch_support.call_service(
                self.node, ListControllers, '/controller_manager/list_controllers',
                ListControllers.Request()).controller}
            self.assertEqual((states[activate], states[deactivate]), ('active', 'inactive'))

        switch('joint_trajectory_controller', 'effort_controller')
        switch('effort_controller', 'joint_trajectory_controller')


@launch_testing.post_shutdown_test()
class TestControlMockLaunchShutdown(unittest.TestCase):
    """Every process exits cleanly when the launch shuts down."""

    @unittest.skipIf(MISSING, MISSING or '')
    def test_exit_codes(self, proc_info):
        """Every launched process exited with code 0 (spawners included)."""
        launch_testing.asserts.assertExitCodes(proc_info)
