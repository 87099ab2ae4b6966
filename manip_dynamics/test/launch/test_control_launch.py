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
launch_testing test of launch/control.launch.py: the real controller_manager chain.

Launches control.launch.py without RViz and without robot_state_publisher: the real
controller_manager (ros2_control_node) with topic_based_ros2_control's TopicBasedSystem, the
joint_state_broadcaster and the effort controller, simulator_node as the arm, the gravity
compensation commanding the effort controller and the external-torque observer on those
commands. Checks that only the broadcaster publishes /joint_states (the simulator's state
arrives on /sim/joint_states), that both controllers are active (joint_trajectory_controller
inactive where installed), that the commands the compensation sends reach the simulator
through the hardware interface, that the arm holds its pose within 1e-3 rad for 30 s, that a
15 N push on the tool raises the observer's contact flag and that every process exits
cleanly. Needs launch_testing, controller_manager_msgs, controller_manager,
ros2_controllers' joint_state_broadcaster and effort_controllers, and
topic_based_ros2_control: C++ packages not on PyPI (docs/ROS2_CONTROL.md). Where any is
missing the test cases are skipped with the reason (the launch is then not started).
"""

import os
import sys
import time
import unittest

import pytest

pytest.importorskip('launch_testing', reason='launch_testing not installed (not on PyPI); '
                    'run on a ROS 2 install')

# launch_test loads this file without its folder on sys.path; launch_support lives there.
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

JOINTS = ['cobot7_joint%d' % i for i in range(1, 8)]
#: How long the arm must hold its pose [s].
HOLD_TIME = 30.0


MISSING = launch_support.ros2_control_missing()


@pytest.mark.rostest
def generate_test_description():
    """Include control.launch.py (nothing when the ros2_control packages are missing)."""
    return launch_support.include_control_launch(
        MISSING, {'rviz': 'false', 'robot_state_publisher': 'false'})


@unittest.skipIf(MISSING, MISSING or '')
class TestControlLaunch(unittest.TestCase):
    """The controller_manager chain holds the simulated arm."""

    @classmethod
    def setUpClass(cls):
        """Create the test node, spun on a thread."""
        from manip_dynamics.ros.runtime.qos import CONTACT_QOS
        from manip_dynamics_interfaces.msg import Contact
        cls.node = launch_support.create_test_node('test_control_launch')
        # not /sim/joint_states (1 kHz): a Python subscriber that fast takes a core of this
        # 2-core machine from controller_manager; test_1 only checks that it is there
        cls.states, cls.sim_commands, cls.commands = [], [], []
        cls.contacts = []
        node = cls.node
        node.create_subscription(JointState, '/joint_states', cls.states.append, 100)
        node.create_subscription(JointState, '/sim/joint_commands', cls.sim_commands.append,
                                 100)
        node.create_subscription(Float64MultiArray, '/effort_controller/commands',
                                 cls.commands.append, 100)
        node.create_subscription(Contact, '/external_torque_observer/contact',
                                 cls.contacts.append, CONTACT_QOS)
        cls.executor = launch_support.spin_in_background(cls.node)

    @classmethod
    def tearDownClass(cls):
        """Stop spinning and shut down."""
        launch_support.stop_test_node(cls.node, cls.executor)

    def test_1_only_the_broadcaster_publishes_joint_states(self):
        """/joint_states comes from joint_state_broadcaster, the simulator's is remapped."""
        topics = [('/joint_states', JointState), ('/sim/joint_states', JointState),
                  ('/effort_controller/commands', Float64MultiArray)]
        with WaitForTopics(topics, timeout=120.0):
            pass
        publishers = self.node.get_publishers_info_by_topic('/joint_states')
        self.assertEqual([p.node_name for p in publishers], ['joint_state_broadcaster'])
        self.assertEqual(sorted(self.states[-1].name), sorted(JOINTS))

    def test_2_controllers_are_active(self):
        """Broadcaster and effort controller active; the trajectory controller inactive."""
        launch_support.check_controllers(self, self.node)

    def test_3_commands_reach_the_simulator_through_the_hardware(self):
        """The efforts on /sim/joint_commands are the compensation's, in joint order."""
        time.sleep(1.0)
        sent = np.array(self.commands[-1].data)
        names = list(self.sim_commands[-1].name)
        received = dict(zip(names, self.sim_commands[-1].effort))
        self.assertEqual(sorted(names), sorted(JOINTS))
        # the arm is still: consecutive commands differ by far less than this
        np.testing.assert_allclose([received[j] for j in JOINTS], sent, atol=1e-3)
        self.assertGreater(np.max(np.abs(sent)), 1.0, 'no gravity torque commanded')

    def test_4_the_arm_holds_its_pose_for_30_s(self):
        """Every /joint_states over 30 s is within 1e-3 rad of the first one then."""
        start = len(self.states)
        time.sleep(HOLD_TIME)
        window = self.states[start:]
        self.assertGreater(len(window), HOLD_TIME * 50)
        order = [list(window[0].name).index(j) for j in JOINTS]
        positions = np.array([np.array(m.position)[order] for m in window])
        first = np.array(self.states[0].position)[order]
        drift = np.max(np.abs(positions - first))
        print('hold over %.0f s: %d joint states, largest deviation from the start pose '
              '%.3g rad' % (HOLD_TIME, len(window), drift))
        self.assertLess(drift, 1e-3, 'the arm moved %.4g rad from its start pose' % drift)

    def test_5_a_push_raises_the_contact_flag(self):
        """15 N on the tool for 0.3 s: the observer (on the effort commands) flags a contact."""
        from manip_dynamics_interfaces.srv import ApplyWrench
        before, states_before = len(self.contacts), len(self.states)
        self.assertTrue(any(not c.contact for c in self.contacts[-20:]),
                        'contact flagged before any push')
        q_before = np.array(self.states[-1].position)
        request = ApplyWrench.Request(link='tool0', frame='world', duration=0.3)
        request.wrench.force.y = 15.0
        answer = launch_support.call_service(self.node, ApplyWrench, '/simulator/apply_wrench',
                                             request)
        self.assertTrue(answer.success, answer.message)
        pushed = time.monotonic()
        deadline = pushed + 5.0
        while not any(c.contact for c in self.contacts[before:]):
            self.assertLess(time.monotonic(), deadline, 'no contact flagged after the push')
            time.sleep(0.005)
        print('contact flagged %.0f ms (wall clock) after the push was accepted'
              % (1e3 * (time.monotonic() - pushed)))
        time.sleep(1.0)
        # the push moved the arm, and /joint_states (the broadcaster's) shows it
        moved = max(np.max(np.abs(np.array(m.position) - q_before))
                    for m in self.states[states_before:])
        self.assertGreater(moved, 1e-3, 'the push did not show in /joint_states')


@launch_testing.post_shutdown_test()
class TestControlLaunchShutdown(unittest.TestCase):
    """Every process exits cleanly when the launch shuts down."""

    @unittest.skipIf(MISSING, MISSING or '')
    def test_exit_codes(self, proc_info):
        """Every launched process exited with code 0 (spawners included)."""
        launch_testing.asserts.assertExitCodes(proc_info)
