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
dynamics_node under load: many clients at once, and one very large request.

* Four client processes call ~/inverse_dynamics 2,000 times each, back to back, while
  joint_states stream in at 250 Hz: every call must be answered (a node once lost 14 of
  38,000), with the library's number. The calls were lost on the client side: with
  rclpy's default client QoS (depth 10) a client stalled by the load lost about 1 call in
  300 here, against dynamics_node and a trivial Trigger server alike (the server answered
  every request); with the depth docs/ROS_API.md recommends (1000) none was lost. The
  clients here use that depth (manip_dynamics.ros.client does).
* A burst: 40 clients in one process send one request each at the same moment (more than
  the depth of rclpy's default service queues, 10; the node keeps 1000): every one is
  answered.
* ~/trajectory_efforts with the largest accepted trajectory is answered with the library's
  efforts while another client keeps calling; one point more is refused with a message
  that gives the limit.
"""

import os
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest
from ros_test_support import require_interfaces, require_rclpy

rclpy = require_rclpy()
srv = require_interfaces()

from rclpy.executors import SingleThreadedExecutor  # noqa: E402, I100
from rclpy.qos import QoSProfile  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

from manip_dynamics import RobotModel  # noqa: E402
from manip_dynamics.bundled import urdf_path  # noqa: E402
from manip_dynamics.ros.runtime.conversions import MAX_TRAJECTORY_POINTS  # noqa: E402
from manip_dynamics.ros.runtime.node_process import (  # noqa: E402
    PACKAGE_ROOT, start_node, stop_node)

pytestmark = [pytest.mark.rostest, pytest.mark.slow, pytest.mark.realtime]

STARTUP_TIMEOUT = 180.0
NODE = 'load_dynamics'
Q = [0.2, -0.4, 0.3, -1.8, 0.5, 1.6, 0.4]

#: One client process: ``calls`` sequential calls through manip_dynamics.ros.client (its
#: client QoS has depth 1000 and its wait keeps the latency flat); prints the number
#: answered, the number correct, the slowest answer and the medians of the first and last
#: tenth of the calls [s].
CLIENT = textwrap.dedent('''
    import sys, time
    import numpy as np
    from manip_dynamics.ros.client import DynamicsClient
    calls, expected = int(sys.argv[1]), np.array([float(v) for v in sys.argv[2].split(',')])
    answered = correct = 0
    times = []
    with DynamicsClient('/{node}', timeout=300.0) as dyn:
        dyn.gravity({q})   # waits for the service
        dyn.timeout = 30.0
        for k in range(calls):
            t0 = time.monotonic()
            try:
                tau = dyn.inverse_dynamics({q})
            except TimeoutError:
                print('LOST', k)
                continue
            times.append(time.monotonic() - t0)
            answered += 1
            correct += bool(np.allclose(tau, expected, atol=1e-9))
    tenth = max(1, len(times) // 10)
    print('RESULT %d %d %.3f %.6f %.6f' % (answered, correct, max(times), np.median(
        times[:tenth]), np.median(times[-tenth:])))
''').replace('{node}', NODE).replace('{q}', repr(Q))


@pytest.fixture(scope='module')
def model() -> RobotModel:
    """Return the cobot7 model (the reference for every answer)."""
    return RobotModel.from_urdf_file(urdf_path('cobot7'))


@pytest.fixture(scope='module')
def graph(model):
    """Start dynamics_node on cobot7 and a probe that streams joint_states at 250 Hz."""
    with open(urdf_path('cobot7'), encoding='utf-8') as stream:
        xml = stream.read()
    # a joint_states topic of its own: other tests of the domain are not disturbed
    proc = start_node('dynamics_node', NODE, {'robot_description': xml},
                      remaps=('/joint_states:=/%s/joint_states' % NODE,))
    rclpy.init()
    node = rclpy.create_node('load_probe')
    publisher = node.create_publisher(JointState, '/%s/joint_states' % NODE, 10)
    names = list(model.joint_names)
    node.create_timer(0.004, lambda: publisher.publish(JointState(name=names, position=Q)))
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    thread = threading.Thread(target=executor.spin, daemon=True)
    thread.start()
    try:
        client = node.create_client(srv.InverseDynamics, '/%s/inverse_dynamics' % NODE)
        assert client.wait_for_service(timeout_sec=STARTUP_TIMEOUT), (
            'dynamics_node did not come up:\n%s' % open(proc.log_path).read())
        node.destroy_client(client)
        node.proc = proc
        yield node
    finally:
        executor.shutdown()
        thread.join(timeout=2.0)
        node.destroy_node()
        rclpy.try_shutdown()
        code = stop_node(proc)
    assert code == 0, open(proc.log_path).read()


def _wait(future, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not future.done() and time.monotonic() < deadline:
        time.sleep(0.002)
    return future.done()


@pytest.mark.timeout(600)
def test_four_clients_2000_calls_each_all_answered(graph, model):
    expected = model.inverse_dynamics(Q, [0.0] * 7, [0.0] * 7)
    env = dict(os.environ, PYTHONPATH=PACKAGE_ROOT + os.pathsep + os.environ.get(
        'PYTHONPATH', ''))
    procs = [subprocess.Popen(
        [sys.executable, '-c', CLIENT, '2000', ','.join(repr(float(v)) for v in expected),
         str(k)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        for k in range(4)]
    try:
        # with rclpy.spin_until_future_complete 2,000 calls took 10-20 minutes per client
        # here (each call slower than the last, as measured once); the client's wait keeps it flat
        outputs = [proc.communicate(timeout=3300)[0] for proc in procs]
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    results = []
    for out in outputs:
        line = [ln for ln in out.splitlines() if ln.startswith('RESULT')]
        assert line, 'a client failed:\n%s' % out
        answered, correct, slowest, first, last = line[-1].split()[1:]
        results.append((int(answered), int(correct), float(slowest)))
        print('client: %s answered, slowest %s s, median of the first 200 calls %s s, of '
              'the last 200 %s s' % (answered, slowest, first, last))
    assert [r[0] for r in results] == [2000] * 4, 'calls lost: %s' % results
    assert [r[1] for r in results] == [2000] * 4, 'wrong answers: %s' % results


def test_burst_of_40_clients_all_answered(graph, model):
    # Clients with the QoS docs/ROS_API.md recommends: every client's reader receives the
    # answers to all 40 (measured: with rclpy's default depth 10 most of them were lost in
    # the readers of this one process before its executor could take them).
    clients = [graph.create_client(srv.InverseDynamics, '/%s/inverse_dynamics' % NODE,
                                   qos_profile=QoSProfile(depth=1000)) for _ in range(40)]
    try:
        for client in clients:
            assert client.wait_for_service(timeout_sec=30.0)
        futures = [c.call_async(srv.InverseDynamics.Request(positions=Q)) for c in clients]
        answered = [_wait(f, 30.0) for f in futures]
        assert all(answered), '%d of 40 calls unanswered' % answered.count(False)
        expected = model.inverse_dynamics(Q, [0.0] * 7, [0.0] * 7)
        for future in futures:
            np.testing.assert_allclose(future.result().efforts, expected, atol=1e-9)
    finally:
        for client in clients:
            graph.destroy_client(client)


def _trajectory(model, count: int) -> tuple[JointTrajectory, np.ndarray]:
    rng = np.random.default_rng(7)
    q = rng.uniform(-1.0, 1.0, size=(count, model.dof))
    names = list(model.joint_names)[::-1]
    traj = JointTrajectory(joint_names=names, points=[
        JointTrajectoryPoint(positions=row[::-1], velocities=0.5 * row[::-1],
                             accelerations=0.1 * row[::-1]) for row in q])
    return traj, q


def test_largest_trajectory_answered_while_others_are_served(graph, model):
    traj, q = _trajectory(model, MAX_TRAJECTORY_POINTS)
    big = graph.create_client(srv.ComputeTrajectoryEfforts,
                              '/%s/trajectory_efforts' % NODE)
    small = graph.create_client(srv.InverseDynamics, '/%s/inverse_dynamics' % NODE)
    try:
        assert big.wait_for_service(timeout_sec=30.0) and small.wait_for_service(10.0)
        future = big.call_async(srv.ComputeTrajectoryEfforts.Request(trajectory=traj))
        # Another client keeps calling meanwhile: each call answered within a generous 30 s.
        served = 0
        while not future.done():
            assert _wait(small.call_async(srv.InverseDynamics.Request(positions=Q)), 30.0)
            served += 1
            assert served < 100000
        assert _wait(future, 120.0), 'trajectory_efforts did not answer'
        response = future.result()
        assert response.success, response.message
        tau = model.inverse_dynamics(q, 0.5 * q, 0.1 * q)
        for k in (0, 1, MAX_TRAJECTORY_POINTS // 2, MAX_TRAJECTORY_POINTS - 1):
            np.testing.assert_allclose(response.trajectory.points[k].effort, tau[k][::-1],
                                       atol=1e-9)
        np.testing.assert_allclose(response.peak_efforts, np.max(np.abs(tau), axis=0)[::-1],
                                   atol=1e-9)
    finally:
        graph.destroy_client(big)
        graph.destroy_client(small)


def test_one_point_more_is_refused_with_the_limit(graph, model):
    traj, _ = _trajectory(model, MAX_TRAJECTORY_POINTS + 1)
    client = graph.create_client(srv.ComputeTrajectoryEfforts,
                                 '/%s/trajectory_efforts' % NODE)
    try:
        assert client.wait_for_service(timeout_sec=30.0)
        future = client.call_async(srv.ComputeTrajectoryEfforts.Request(trajectory=traj))
        assert _wait(future, 120.0), 'trajectory_efforts did not answer'
        response = future.result()
        assert not response.success
        assert 'at most %d' % MAX_TRAJECTORY_POINTS in response.message, response.message
        assert graph.proc.poll() is None
    finally:
        graph.destroy_client(client)
