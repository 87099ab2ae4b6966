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
launch_testing test of launch/gravity_compensation.launch.py (needs launch_testing).

Plays the joint_state_broadcaster (publishes /joint_states), waits for the effort commands on
/effort_controller/commands with WaitForTopics, checks they are g(q) clamped to the effort
limits in the configured joint order after the ramp, and that the node exits cleanly.
Skipped with the reason where launch_testing is not importable (the PyPI set-up).
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
from std_msgs.msg import Float64MultiArray  # noqa: E402

from manip_dynamics import RobotModel  # noqa: E402

URDF = launch_support.share_path('urdf', 'cobot7.urdf')
Q = [0.2, -0.4, 0.3, -1.8, 0.5, 1.6, 0.4]
RAMP_TIME = 0.5
EFFORT_SCALE = 0.5


@pytest.mark.rostest
def generate_test_description():
    """Include gravity_compensation.launch.py with a short ramp and half the limits."""
    return launch_support.include_launch_file(
        'gravity_compensation.launch.py',
        {'urdf': URDF, 'ramp_time': str(RAMP_TIME), 'effort_scale': str(EFFORT_SCALE)})


class TestGravityCompensationLaunch(unittest.TestCase):
    """The launched node commands the clamped gravity torques."""

    @classmethod
    def setUpClass(cls):
        """Create the test node and a 100 Hz joint_states publisher in a thread."""
        cls.node = launch_support.create_test_node('test_gravity_compensation_launch')
        cls.model = RobotModel.from_urdf_file(URDF)
        names = list(cls.model.joint_names)
        cls.timer = launch_support.publish_joint_states(cls.node, names[::-1], Q[::-1], 0.01)
        cls.executor = launch_support.spin_in_background(cls.node)

    @classmethod
    def tearDownClass(cls):
        """Stop spinning and shut down."""
        launch_support.stop_test_node(cls.node, cls.executor)

    def test_commands_are_clamped_gravity(self):
        """After the ramp, commands equal clip(g(q), +-effort_scale * limit), model order."""
        topic = '/effort_controller/commands'
        with WaitForTopics([(topic, Float64MultiArray)], timeout=60.0):
            pass
        time.sleep(RAMP_TIME + 0.5)
        with WaitForTopics([(topic, Float64MultiArray)], timeout=10.0) as wait:
            command = np.array(wait.received_messages(topic)[-1].data)
        limits = self.model.effort_limits * EFFORT_SCALE
        expected = np.clip(self.model.gravity_torques(Q), -limits, limits)
        np.testing.assert_allclose(command, expected, atol=1e-9)


@launch_testing.post_shutdown_test()
class TestGravityCompensationLaunchShutdown(unittest.TestCase):
    """The node exits cleanly (after its zero command) when the launch shuts down."""

    def test_exit_codes(self, proc_info):
        """Every launched process exited with code 0."""
        launch_testing.asserts.assertExitCodes(proc_info)
