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
launch_testing test of launch/sim.launch.py (needs launch_testing and robot_state_publisher).

Launches the demo without RViz and without robot_state_publisher (every node gets the URDF
as a parameter; neither C++ executable is needed), waits for /joint_states, /clock, the
dynamics node's gravity torques and the compensation's commands with WaitForTopics, checks
that the simulator publishes cobot7's joints, that the arm holds its start pose from the
very first message of a cold start (the simulator's brakes hold it until the compensation's
first command; before them it sagged by up to 1.57 rad), that it holds again
after ~/reset, and that every process exits cleanly. The same node graph is tested without
launch in test/integration/test_sim_with_gravity_compensation.py. Skipped with the reason
where launch_testing is not importable (the PyPI set-up).
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
import launch_testing.asserts  # noqa: E402
from launch_testing_ros import WaitForTopics  # noqa: E402
import numpy as np  # noqa: E402
from rosgraph_msgs.msg import Clock  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402
from std_srvs.srv import Trigger  # noqa: E402

JOINTS = ['cobot7_joint%d' % i for i in range(1, 8)]


@pytest.mark.rostest
def generate_test_description():
    """Include sim.launch.py without RViz and robot_state_publisher."""
    return launch_support.include_launch_file(
        'sim.launch.py', {'rviz': 'false', 'robot_state_publisher': 'false'})


class TestSimLaunch(unittest.TestCase):
    """The launched graph simulates the arm and holds it with gravity compensation."""

    @classmethod
    def setUpClass(cls):
        """Create the test node, spun on a thread."""
        cls.node = launch_support.create_test_node('test_sim_launch')
        cls.states = []
        cls.node.create_subscription(JointState, '/joint_states', cls.states.append, 100)
        cls.executor = launch_support.spin_in_background(cls.node)

    @classmethod
    def tearDownClass(cls):
        """Stop spinning and shut down."""
        launch_support.stop_test_node(cls.node, cls.executor)

    def test_1_topics_come_up(self):
        """The simulator, the dynamics node and the compensation all publish."""
        topics = [('/joint_states', JointState), ('/clock', Clock),
                  ('/manip_dynamics/gravity_torques', JointState),
                  ('/effort_controller/commands', Float64MultiArray)]
        with WaitForTopics(topics, timeout=90.0) as wait:
            state = wait.received_messages('/joint_states')[-1]
        self.assertEqual(list(state.name), JOINTS)

    def test_2_arm_holds_from_the_cold_start(self):
        """Every joint state since the first is within 1e-3 rad of the start pose."""
        time.sleep(3.0)
        positions = np.array([m.position for m in self.states])
        self.assertGreater(len(positions), 100)
        drift = np.max(np.abs(positions - positions[0]))
        self.assertLess(drift, 1e-3, 'the arm moved %.4g rad from its start pose' % drift)

    def test_3_holds_after_reset(self):
        """~/reset: back at the start pose, brakes on, released by the next command, holds."""
        client = self.node.create_client(Trigger, '/simulator/reset')
        self.assertTrue(client.wait_for_service(timeout_sec=30.0))
        future = client.call_async(Trigger.Request())
        self.assertTrue(launch_support.wait_for_future(future, 10.0)
                        and future.result().success)
        start = len(self.states)
        time.sleep(3.0)
        positions = np.array([m.position for m in self.states[start:]])
        self.assertGreater(len(positions), 100)
        first = np.array(self.states[0].position)
        self.assertLess(np.max(np.abs(positions - first)), 1e-3)


@launch_testing.post_shutdown_test()
class TestSimLaunchShutdown(unittest.TestCase):
    """Every process exits cleanly when the launch shuts down."""

    def test_exit_codes(self, proc_info):
        """Every launched process exited with code 0."""
        launch_testing.asserts.assertExitCodes(proc_info)
