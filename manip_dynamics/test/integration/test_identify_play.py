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
``manip-dynamics identify play`` publishes the default excitation trajectory, larger than
one command-line argument may be, and a subscriber receives every point.

Expected values come from the file written and what the subscriber receives.
"""

import os
import subprocess
import sys

import numpy as np
import pytest
from ros_test_support import (require_interfaces, require_rclpy, spun_node, STARTUP_TIMEOUT,
                              wait_until)

rclpy = require_rclpy()
require_interfaces()

from rclpy.qos import QoSProfile, ReliabilityPolicy  # noqa: E402, I100
from trajectory_msgs.msg import JointTrajectory  # noqa: E402
import yaml  # noqa: E402

from manip_dynamics.ros.runtime.node_process import PACKAGE_ROOT  # noqa: E402

pytestmark = [pytest.mark.rostest, pytest.mark.slow]

#: Linux caps one command-line argument at 32 pages (MAX_ARG_STRLEN) [bytes].
MAX_ARG_STRLEN = 128 * 1024


def test_identify_play_publishes_the_default_excitation(tmp_path):
    path = tmp_path / 'excite.yaml'
    env = dict(os.environ)
    env['PYTHONPATH'] = PACKAGE_ROOT + os.pathsep + env.get('PYTHONPATH', '')
    cli = [sys.executable, '-m', 'manip_dynamics.cli', 'identify']
    # the documented excitation (docs/IDENTIFICATION.md), one optimiser iteration: the
    # file's size depends on the periods and the rate, not on the iterations
    subprocess.run(cli + ['excite', 'cobot7', '--out', str(path), '--speed-scale', '0.3',
                          '--iterations', '1', '--quiet'], env=env, check=True,
                   capture_output=True, timeout=STARTUP_TIMEOUT)
    size = path.stat().st_size
    assert size > MAX_ARG_STRLEN, 'the excitation file is only %d bytes' % size
    expected = yaml.safe_load(path.read_text())
    received = []
    qos = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE)
    with spun_node('play_probe') as node:
        node.create_subscription(JointTrajectory, '/play_probe/joint_trajectory',
                                 received.append, qos)
        proc = subprocess.run(cli + ['play', str(path), '--topic',
                                     '/play_probe/joint_trajectory', '--wait', '60'],
                              env=env, capture_output=True, text=True, timeout=120,
                              check=False)
        assert proc.returncode == 0, proc.stderr
        wait_until(lambda: received, 30.0, 'nothing received: ' + proc.stdout)
    msg = received[0]
    assert list(msg.joint_names) == expected['joint_names']
    assert len(msg.points) == len(expected['points'])
    for k in (0, len(msg.points) // 2, len(msg.points) - 1):
        np.testing.assert_allclose(msg.points[k].positions, expected['points'][k]['positions'],
                                   rtol=0, atol=0)
        t = expected['points'][k]['time_from_start']
        assert (msg.points[k].time_from_start.sec,
                msg.points[k].time_from_start.nanosec) == (t['sec'], t['nanosec'])
    assert 'published %d points' % len(msg.points) in proc.stdout
