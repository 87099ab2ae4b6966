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
import time

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


def test_identify_record_writes_what_was_published(tmp_path):
    """A publisher of known samples, 2 s of stamps at 200 Hz: the bag holds them exactly."""
    from sensor_msgs.msg import JointState
    from manip_dynamics import RobotModel
    from manip_dynamics.bundled import urdf_path
    from manip_dynamics.identification.data import read_rosbag

    model = RobotModel.from_urdf_file(urdf_path('cobot7'))
    names = list(model.joint_names)
    bag = tmp_path / 'recorded'
    env = dict(os.environ)
    env['PYTHONPATH'] = PACKAGE_ROOT + os.pathsep + env.get('PYTHONPATH', '')
    start_ns = 1_700_000_000 * 1_000_000_000

    def sample(k: int) -> tuple[list, list, list]:
        x = 0.01 * k
        # the first effort is the sample's number: the bag says which sample each row is
        return ([np.sin(x + j) for j in range(7)], [np.cos(x + j) for j in range(7)],
                [float(k)] + [float(k % 50 - 25 + j) for j in range(1, 7)])
    with spun_node('record_source') as node:
        pub = node.create_publisher(JointState, '/record_probe/joint_states',
                                    QoSProfile(depth=100,
                                               reliability=ReliabilityPolicy.RELIABLE))
        proc = subprocess.Popen(
            [sys.executable, '-m', 'manip_dynamics.cli', 'identify', 'record', str(bag),
             '--duration', '2.0', '--topic', '/record_probe/joint_states', '--wait', '60'],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            wait_until(lambda: pub.get_subscription_count() > 0 or proc.poll() is not None,
                       STARTUP_TIMEOUT, 'identify record did not subscribe')
            k = 0
            while proc.poll() is None and k < 2000:
                ns = start_ns + k * 5_000_000
                q, qd, tau = sample(k)
                msg = JointState(name=names, position=q, velocity=qd, effort=tau)
                msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(ns, 1_000_000_000)
                pub.publish(msg)
                k += 1
                time.sleep(0.002)
            out, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode == 0, err
    recording = read_rosbag(str(bag), model, topic='/record_probe/joint_states')
    assert recording.duration >= 2.0 and 'wrote %s' % bag in out
    assert recording.t.size >= 400
    numbers = recording.tau[:, 0].astype(int)
    np.testing.assert_allclose(recording.t, (numbers - numbers[0]) * 0.005, atol=1e-9)
    for i in (0, recording.t.size // 2, recording.t.size - 1):
        q, qd, tau = sample(int(numbers[i]))
        np.testing.assert_allclose(recording.q[i], q, atol=1e-12)
        np.testing.assert_allclose(recording.qd[i], qd, atol=1e-12)
        np.testing.assert_allclose(recording.tau[i], tau, atol=1e-12)
