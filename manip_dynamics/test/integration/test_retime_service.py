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
dynamics_node's ``~/retime`` over real DDS, as a planner calls it.

The waypoints come in a shuffled joint order; the answer is in that order, passes through
every waypoint at ``waypoint_times``, keeps the velocity and acceleration limits at every
returned point, and its efforts (Pinocchio's ``rnea`` where installed, else the library)
stay within the scaled effort limits. Bad requests answer ``success: false`` with a message.
"""

import numpy as np
import pytest
from ros_test_support import (require_interfaces, require_rclpy, spun_node, STARTUP_TIMEOUT,
                              wait_until)

rclpy = require_rclpy()
srv = require_interfaces()

from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402, I100

from manip_dynamics import RobotModel  # noqa: E402
from manip_dynamics.bundled import urdf_path  # noqa: E402
from manip_dynamics.ros.runtime.node_process import start_node, stop_node  # noqa: E402

pytestmark = [pytest.mark.rostest, pytest.mark.slow]

NAMES = ['cobot7_joint%d' % i for i in range(1, 8)]
WAYPOINTS = np.array([[0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785],
                      [0.5, -0.3, 0.2, -1.8, 0.3, 1.8, 0.5],
                      [1.0, 0.2, -0.2, -1.2, -0.3, 2.2, 0.2]])
ORDER = [3, 0, 6, 1, 5, 2, 4]


@pytest.fixture(scope='module')
def retime_client():
    """Start a dynamics node with acceleration_limits 4 and yield (node, client)."""
    with open(urdf_path('cobot7'), encoding='utf-8') as stream:
        xml = stream.read()
    proc = start_node('dynamics_node', 'retime_node',
                      {'robot_description': xml, 'acceleration_limits': [4.0],
                       'publish_torques': False, 'publish_markers': False})
    try:
        with spun_node('retime_probe') as node:
            client = node.create_client(srv.RetimeTrajectory, '/retime_node/retime')
            assert client.wait_for_service(timeout_sec=STARTUP_TIMEOUT), 'no ~/retime'
            yield client
    finally:
        stop_node(proc)


def call(client, request):
    """Call and wait for the answer."""
    future = client.call_async(request)
    wait_until(future.done, 60.0, 'no answer from ~/retime')
    return future.result()


def waypoints_message(order, rows) -> JointTrajectory:
    """Return a JointTrajectory of positions only in the given joint order."""
    msg = JointTrajectory(joint_names=[NAMES[i] for i in order])
    for row in rows:
        msg.points.append(JointTrajectoryPoint(positions=[float(v) for v in row[order]]))
    return msg


def test_retime_answers_a_trajectory_within_the_limits(retime_client):
    request = srv.RetimeTrajectory.Request(waypoints=waypoints_message(ORDER, WAYPOINTS),
                                           effort_scale=0.7, rate=500.0)
    answer = call(retime_client, request)
    assert answer.success, answer.message
    traj = answer.trajectory
    assert list(traj.joint_names) == [NAMES[i] for i in ORDER]
    times = np.array([p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec
                      for p in traj.points])
    assert np.all(np.diff(times) > 0.0)
    assert times[-1] == pytest.approx(answer.duration, abs=1e-9)
    q = np.array([p.positions for p in traj.points])
    qd = np.array([p.velocities for p in traj.points])
    qdd = np.array([p.accelerations for p in traj.points])
    for t_w, w in zip(answer.waypoint_times, WAYPOINTS):
        k = int(np.argmin(np.abs(times - t_w)))
        assert abs(times[k] - t_w) < 1e-9
        np.testing.assert_allclose(q[k], w[ORDER], atol=1e-6)
    model = RobotModel.from_urdf_file(urdf_path('cobot7'))
    back = np.argsort(ORDER)  # answer order -> model order
    q, qd, qdd = q[:, back], qd[:, back], qdd[:, back]
    assert np.all(np.abs(qd) <= model.velocity_limits)
    assert np.all(np.abs(qdd) <= 4.0)
    try:
        import pinocchio as pin
    except ImportError:  # the library's ID is checked against Pinocchio in the unit tests
        pin = None
    if pin is not None:
        with open(urdf_path('cobot7'), encoding='utf-8') as stream:
            ref = pin.buildModelFromXML(stream.read())
        ref.armature = model.armature
        data = ref.createData()
        tau = np.array([pin.rnea(ref, data, a, b, c) for a, b, c in zip(q, qd, qdd)])
    else:
        tau = model.inverse_dynamics(q, qd, qdd, include_armature=True)
    tau = tau + model.friction_torques(qd)
    assert np.max(np.abs(tau) / (0.7 * model.effort_limits)) <= 1.0
    assert 0.0 < answer.peak_effort <= 1.0 and answer.peak_acceleration > 0.9


@pytest.mark.parametrize('change, text', [
    (lambda r: setattr(r, 'acceleration_limits', [-1.0] * 7), 'must be > 0'),
    (lambda r: setattr(r, 'velocity_scale', 2.0), 'velocity_scale'),
    (lambda r: r.waypoints.points.pop(), 'waypoints must have shape'),
    (lambda r: setattr(r.waypoints.points[1], 'positions', [float('nan')] * 7), 'is nan'),
])
def test_bad_requests_answer_false_with_a_message(retime_client, change, text):
    request = srv.RetimeTrajectory.Request(waypoints=waypoints_message(ORDER, WAYPOINTS[:2]))
    change(request)
    answer = call(retime_client, request)
    assert not answer.success
    assert text in answer.message, answer.message
