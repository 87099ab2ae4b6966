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
The dynamics_node over real DDS: services, torque topics and robot_description updates.

One dynamics_node process (``python -m manip_dynamics.ros.nodes.dynamics_node``) serves the whole
module. It starts with an empty robot_description parameter, so it takes the URDF from the
robot_description topic (remapped to a test-own name); this test publishes the default arm
(cobot7) there with transient-local durability. Every answer is compared with
:class:`manip_dynamics.RobotModel` evaluated in this process on the same URDF: the node is
a message adapter, the library (checked against Pinocchio in the unit tests) is the
reference. Discovery is loopback-only on a test-own domain (conftest.py).
"""

import math
import os
import time

import numpy as np
import pytest
from ros_test_support import require_interfaces, require_rclpy, STARTUP_TIMEOUT

rclpy = require_rclpy()
srv = require_interfaces()

from builtin_interfaces.msg import Time  # noqa: E402, I100
from geometry_msgs.msg import WrenchStamped  # noqa: E402
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import String  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402
from visualization_msgs.msg import MarkerArray  # noqa: E402

from manip_dynamics import RobotModel  # noqa: E402
from manip_dynamics.ros.runtime.node_process import start_node, stop_node  # noqa: E402

pytestmark = pytest.mark.rostest

PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
URDF_DIR = os.path.join(PACKAGE_ROOT, 'urdf')
NODE = '/md_test_dynamics'
DESCRIPTION_TOPIC = '/md_test_dynamics_description'
JOINT_STATES_TOPIC = '/md_test_dynamics_joint_states'
CALL_TIMEOUT = 30.0
TOL = 1e-9


def _read(name: str) -> str:
    with open(os.path.join(URDF_DIR, name), encoding='utf-8') as stream:
        return stream.read()


COBOT7 = _read('cobot7.urdf')
PLANAR = _read('planar_2r.urdf')
MODEL = RobotModel.from_urdf_string(COBOT7)
NAMES = list(MODEL.joint_names)
N = MODEL.dof


class Graph:
    """A client node in its own context, with helpers that spin it."""

    def __init__(self) -> None:
        """Create the context, the node and its executor."""
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node('md_test_dynamics_client', context=self.context)
        self.executor = rclpy.executors.SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.clients = {}

    def spin_for(self, seconds: float) -> None:
        """Process callbacks for a while."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.executor.spin_once(timeout_sec=0.01)

    def spin_until(self, predicate, timeout: float) -> bool:
        """Process callbacks until ``predicate()`` holds or the timeout passes."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if predicate():
                return True
            self.executor.spin_once(timeout_sec=0.01)
        return predicate()

    def call(self, srv_type, name: str, request, timeout: float = CALL_TIMEOUT):
        """Call a service of the node under test and return the response."""
        if name not in self.clients:
            self.clients[name] = self.node.create_client(srv_type, NODE + '/' + name)
        client = self.clients[name]
        assert client.wait_for_service(timeout_sec=STARTUP_TIMEOUT), name + ' not offered'
        future = client.call_async(request)
        self.executor.spin_until_future_complete(future, timeout_sec=timeout)
        assert future.done(), '%s did not answer within %g s' % (name, timeout)
        return future.result()

    def close(self) -> None:
        """Destroy the node and shut the context down."""
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)


@pytest.fixture(scope='module')
def graph():
    """Yield the test's client node."""
    g = Graph()
    yield g
    g.close()


@pytest.fixture(scope='module')
def node(graph):
    """Start dynamics_node (URDF from the topic); yield (process, log path, first answer)."""
    process = start_node('dynamics_node', 'md_test_dynamics', {
        'joint_states_topic': JOINT_STATES_TOPIC, 'marker_rate': 100.0},
        remaps=['/robot_description:=' + DESCRIPTION_TOPIC])
    log_path = process.log_path
    try:
        # Before any description: every service answers success = false.
        first = graph.call(srv.InverseDynamics, 'inverse_dynamics',
                           srv.InverseDynamics.Request(positions=[0.0] * N))
        qos = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)
        graph.description_pub = graph.node.create_publisher(String, DESCRIPTION_TOPIC, qos)
        graph.description_pub.publish(String(data=COBOT7))
        _wait_for_model(graph, NAMES)
        yield process, log_path, first
    finally:
        stop_node(process, timeout=15.0)


def _wait_for_model(graph: Graph, names: list[str]) -> None:
    """Call inverse_dynamics until the node answers with a model of these joints."""
    end = time.monotonic() + STARTUP_TIMEOUT
    while time.monotonic() < end:
        answer = graph.call(srv.InverseDynamics, 'inverse_dynamics',
                            srv.InverseDynamics.Request(positions=[0.0] * len(names)))
        if answer.success and list(answer.joint_names) == names:
            return
        graph.spin_for(0.2)
    raise AssertionError('the node never loaded the model with joints %s' % names)


def _log_contains(log_path: str, text: str, timeout: float = 10.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        with open(log_path, encoding='utf-8') as stream:
            if text in stream.read():
                return True
        time.sleep(0.1)
    return False


def _state(seed: int):
    rng = np.random.default_rng(seed)
    q = rng.uniform(MODEL.position_lower, MODEL.position_upper) * 0.8
    return q, rng.uniform(-1.0, 1.0, N), rng.uniform(-2.0, 2.0, N)


def _shuffled(seed: int) -> list[int]:
    return list(np.random.default_rng(seed).permutation(N))


def _wrench(link: str, values) -> WrenchStamped:
    msg = WrenchStamped()
    msg.header.frame_id = link
    (msg.wrench.force.x, msg.wrench.force.y, msg.wrench.force.z,
     msg.wrench.torque.x, msg.wrench.torque.y, msg.wrench.torque.z) = (float(v) for v in values)
    return msg


WRENCHES = {'tool0': [3.0, -2.0, 10.0, 0.5, 0.2, -0.3],
            'cobot7_link4': [0.0, 5.0, 0.0, 0.0, 0.0, 1.0]}


def test_no_model_before_description(node) -> None:
    """Answer success = false, naming the cure, before any robot description arrived."""
    first = node[2]
    assert first.success is False
    assert first.message == ('no robot model yet: set the robot_description parameter or '
                             'publish the robot_description topic')


def test_inverse_dynamics_matches_library(graph, node) -> None:
    """Reorder shuffled joints, apply link wrenches and friction exactly as the library."""
    q, qd, qdd = _state(1)
    order = _shuffled(2)
    request = srv.InverseDynamics.Request(
        joint_names=[NAMES[i] for i in order], positions=q[order].tolist(),
        velocities=qd[order].tolist(), accelerations=qdd[order].tolist(),
        external_wrenches=[_wrench(link, w) for link, w in WRENCHES.items()],
        include_friction=True)
    answer = graph.call(srv.InverseDynamics, 'inverse_dynamics', request)
    assert answer.success, answer.message
    assert list(answer.joint_names) == [NAMES[i] for i in order]
    expected = MODEL.inverse_dynamics(q, qd, qdd, external_wrenches=WRENCHES,
                                      include_friction=True)
    np.testing.assert_allclose(answer.efforts, expected[order], rtol=0, atol=TOL)
    # The wrenches matter: without them the answer differs.
    plain = MODEL.inverse_dynamics(q, qd, qdd, include_friction=True)
    assert np.max(np.abs(plain - expected)) > 0.1


def test_inverse_dynamics_model_order_and_empty_fields(graph, node) -> None:
    """Empty joint_names = model order; empty velocities/accelerations = zero."""
    q, _, _ = _state(3)
    answer = graph.call(srv.InverseDynamics, 'inverse_dynamics',
                        srv.InverseDynamics.Request(positions=q.tolist()))
    assert answer.success, answer.message
    assert list(answer.joint_names) == NAMES
    np.testing.assert_allclose(answer.efforts, MODEL.gravity_torques(q), rtol=0, atol=TOL)


def test_forward_dynamics_matches_library(graph, node) -> None:
    """Accelerations for shuffled joints with wrenches equal the library's."""
    q, qd, _ = _state(4)
    tau = np.random.default_rng(5).uniform(-5.0, 5.0, N)
    order = _shuffled(6)
    request = srv.ForwardDynamics.Request(
        joint_names=[NAMES[i] for i in order], positions=q[order].tolist(),
        velocities=qd[order].tolist(), efforts=tau[order].tolist(),
        external_wrenches=[_wrench(link, w) for link, w in WRENCHES.items()])
    answer = graph.call(srv.ForwardDynamics, 'forward_dynamics', request)
    assert answer.success, answer.message
    expected = MODEL.forward_dynamics(q, qd, tau, external_wrenches=WRENCHES)
    np.testing.assert_allclose(answer.accelerations, expected[order], rtol=1e-9, atol=1e-9)


def test_dynamics_terms_matches_library(graph, node) -> None:
    """M, C (rows and columns permuted, row-major), C qd and g in the request's order."""
    q, qd, _ = _state(7)
    order = _shuffled(8)
    request = srv.GetDynamicsTerms.Request(
        joint_names=[NAMES[i] for i in order], positions=q[order].tolist(),
        velocities=qd[order].tolist())
    answer = graph.call(srv.GetDynamicsTerms, 'dynamics_terms', request)
    assert answer.success, answer.message
    perm = np.ix_(order, order)
    np.testing.assert_allclose(np.reshape(answer.mass_matrix, (N, N)),
                               MODEL.mass_matrix(q)[perm], rtol=0, atol=TOL)
    np.testing.assert_allclose(np.reshape(answer.coriolis_matrix, (N, N)),
                               MODEL.coriolis_matrix(q, qd)[perm], rtol=0, atol=TOL)
    np.testing.assert_allclose(answer.coriolis_torques, MODEL.coriolis_torques(q, qd)[order],
                               rtol=0, atol=TOL)
    np.testing.assert_allclose(answer.gravity_torques, MODEL.gravity_torques(q)[order],
                               rtol=0, atol=TOL)


@pytest.mark.parametrize('frame', ['world', 'link'])
def test_cartesian_dynamics_matches_library(graph, node, frame: str) -> None:
    """Task rows come in x y z rx ry rz order; Jacobian columns follow the request."""
    q, qd, _ = _state(9)
    order = _shuffled(10)
    request = srv.GetCartesianDynamics.Request(
        link='tool0', reference_frame=frame, directions=['rz', 'x', 'z'],
        joint_names=[NAMES[i] for i in order], positions=q[order].tolist(),
        velocities=qd[order].tolist())
    answer = graph.call(srv.GetCartesianDynamics, 'cartesian_dynamics', request)
    assert answer.success, answer.message
    assert list(answer.directions) == ['x', 'z', 'rz']
    expected = MODEL.cartesian_dynamics(q, qd, 'tool0', frame=frame,
                                        directions=['x', 'z', 'rz'],
                                        singular_threshold=1e-3, damping=1e-2)
    np.testing.assert_allclose(np.reshape(answer.jacobian, (3, N)),
                               expected.jacobian[:, order], rtol=0, atol=TOL)
    np.testing.assert_allclose(np.reshape(answer.mass_matrix, (3, 3)), expected.mass_matrix,
                               rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(answer.velocity_term, expected.velocity_term, rtol=1e-9,
                               atol=1e-9)
    np.testing.assert_allclose(answer.gravity_term, expected.gravity_term, rtol=1e-9,
                               atol=1e-9)
    assert answer.near_singular == expected.near_singular
    assert math.isclose(answer.min_singular_value, expected.min_singular_value,
                        rel_tol=1e-9)


def _trajectory(names, q, qd=None, qdd=None) -> JointTrajectory:
    traj = JointTrajectory(joint_names=list(names))
    for k in range(q.shape[0]):
        point = JointTrajectoryPoint(positions=q[k].tolist())
        if qd is not None:
            point.velocities = qd[k].tolist()
        if qdd is not None:
            point.accelerations = qdd[k].tolist()
        point.time_from_start.nanosec = 100000000 * k
        traj.points.append(point)
    return traj


def test_trajectory_efforts_matches_library(graph, node) -> None:
    """Efforts at every point, peaks and limits per joint in the trajectory's order."""
    rng = np.random.default_rng(11)
    q = rng.uniform(-1.0, 1.0, (5, N))
    qd = rng.uniform(-1.0, 1.0, (5, N))
    qdd = rng.uniform(-1.0, 1.0, (5, N))
    order = _shuffled(12)
    request = srv.ComputeTrajectoryEfforts.Request(
        trajectory=_trajectory([NAMES[i] for i in order], q[:, order], qd[:, order],
                               qdd[:, order]))
    answer = graph.call(srv.ComputeTrajectoryEfforts, 'trajectory_efforts', request)
    assert answer.success, answer.message
    expected = MODEL.inverse_dynamics(q, qd, qdd)[:, order]
    efforts = np.array([p.effort for p in answer.trajectory.points])
    np.testing.assert_allclose(efforts, expected, rtol=0, atol=TOL)
    np.testing.assert_allclose([p.positions for p in answer.trajectory.points], q[:, order])
    np.testing.assert_allclose(answer.peak_efforts, np.max(np.abs(expected), axis=0),
                               rtol=0, atol=TOL)
    np.testing.assert_allclose(answer.effort_limits, MODEL.effort_limits[order])
    within = np.max(np.abs(expected), axis=0) <= MODEL.effort_limits[order]
    assert list(answer.within_limits) == within.tolist()
    assert answer.feasible == bool(np.all(within))


def test_trajectory_efforts_quasi_static_and_infeasible(graph, node) -> None:
    """No velocities/accelerations anywhere = zero (g only); violent motion is infeasible."""
    q = np.random.default_rng(13).uniform(-1.0, 1.0, (3, N))
    answer = graph.call(srv.ComputeTrajectoryEfforts, 'trajectory_efforts',
                        srv.ComputeTrajectoryEfforts.Request(trajectory=_trajectory([], q)))
    assert answer.success, answer.message
    np.testing.assert_allclose([p.effort for p in answer.trajectory.points],
                               MODEL.gravity_torques(q), rtol=0, atol=TOL)
    assert answer.feasible
    qdd = np.full((3, N), 500.0)
    answer = graph.call(srv.ComputeTrajectoryEfforts, 'trajectory_efforts',
                        srv.ComputeTrajectoryEfforts.Request(
                            trajectory=_trajectory([], q, np.zeros((3, N)), qdd)))
    assert answer.success, answer.message
    peaks = np.max(np.abs(MODEL.inverse_dynamics(q, np.zeros((3, N)), qdd)), axis=0)
    assert list(answer.within_limits) == (peaks <= MODEL.effort_limits).tolist()
    assert not answer.feasible
    assert 'effort limit' in answer.message


def test_set_payload_changes_every_answer(graph, node) -> None:
    """A payload on tool0 enters inverse dynamics; mass 0 removes it again."""
    q, qd, qdd = _state(14)
    request = srv.SetPayload.Request(link='tool0', mass=2.5, ixx=0.01, iyy=0.02, izz=0.03)
    request.center_of_mass.z = 0.05
    answer = graph.call(srv.SetPayload, 'set_payload', request)
    assert answer.success, answer.message
    loaded = RobotModel.from_urdf_string(COBOT7)
    loaded.set_payload('tool0', 2.5, (0.0, 0.0, 0.05), (0.01, 0.0, 0.0, 0.02, 0.0, 0.03))
    try:
        answer = graph.call(srv.InverseDynamics, 'inverse_dynamics', srv.InverseDynamics.Request(
            positions=q.tolist(), velocities=qd.tolist(), accelerations=qdd.tolist()))
        assert answer.success, answer.message
        np.testing.assert_allclose(answer.efforts, loaded.inverse_dynamics(q, qd, qdd),
                                   rtol=0, atol=TOL)
        assert np.max(np.abs(loaded.inverse_dynamics(q, qd, qdd)
                             - MODEL.inverse_dynamics(q, qd, qdd))) > 0.5
    finally:
        removed = graph.call(srv.SetPayload, 'set_payload',
                             srv.SetPayload.Request(link='tool0', mass=0.0))
    assert removed.success, removed.message
    answer = graph.call(srv.InverseDynamics, 'inverse_dynamics', srv.InverseDynamics.Request(
        positions=q.tolist(), velocities=qd.tolist(), accelerations=qdd.tolist()))
    np.testing.assert_allclose(answer.efforts, MODEL.inverse_dynamics(q, qd, qdd), rtol=0,
                               atol=TOL)


def _id(**fields):
    return srv.InverseDynamics, 'inverse_dynamics', srv.InverseDynamics.Request(**fields)


Q0 = [0.1] * N
BAD_REQUESTS = {
    'unknown joint': (_id(joint_names=NAMES[:-1] + ['elbow_of_nobody'], positions=Q0),
                      'elbow_of_nobody'),
    'duplicate joint': (_id(joint_names=NAMES[:-1] + [NAMES[0]], positions=Q0), NAMES[0]),
    'missing joint': (_id(joint_names=NAMES[:-1], positions=Q0[:-1]), NAMES[-1]),
    'length mismatch': (_id(joint_names=NAMES, positions=Q0[:-1]), 'positions'),
    'velocities length': (_id(positions=Q0, velocities=[0.0] * 3), 'velocities'),
    'NaN position': (_id(joint_names=NAMES, positions=Q0[:3] + [math.nan] + Q0[4:]),
                     NAMES[3]),
    'inf acceleration': (_id(positions=Q0, accelerations=[math.inf] + Q0[1:]), NAMES[0]),
    'empty positions': (_id(), 'positions'),
    'unknown wrench link': (_id(positions=Q0, external_wrenches=[_wrench('gripper9', [1] * 6)]),
                            'gripper9'),
    'empty wrench frame': (_id(positions=Q0, external_wrenches=[_wrench('', [1] * 6)]),
                           'frame_id'),
    'NaN wrench': (_id(positions=Q0, external_wrenches=[_wrench('tool0', [math.nan] * 6)]),
                   'tool0'),
    'forward unknown joint': (
        (srv.ForwardDynamics, 'forward_dynamics',
         srv.ForwardDynamics.Request(joint_names=['x'] * N, positions=Q0)), "'x'"),
    'terms NaN velocity': (
        (srv.GetDynamicsTerms, 'dynamics_terms',
         srv.GetDynamicsTerms.Request(positions=Q0, velocities=[math.nan] * N)), NAMES[0]),
    'cartesian unknown link': (
        (srv.GetCartesianDynamics, 'cartesian_dynamics',
         srv.GetCartesianDynamics.Request(link='moon', positions=Q0)), 'moon'),
    'cartesian bad direction': (
        (srv.GetCartesianDynamics, 'cartesian_dynamics',
         srv.GetCartesianDynamics.Request(link='tool0', directions=['x', 'w'], positions=Q0)),
        "'w'"),
    'cartesian bad frame': (
        (srv.GetCartesianDynamics, 'cartesian_dynamics',
         srv.GetCartesianDynamics.Request(link='tool0', reference_frame='base',
                                          positions=Q0)), "'base'"),
    'trajectory no points': (
        (srv.ComputeTrajectoryEfforts, 'trajectory_efforts',
         srv.ComputeTrajectoryEfforts.Request()), 'no points'),
    'trajectory some velocities': (
        (srv.ComputeTrajectoryEfforts, 'trajectory_efforts',
         srv.ComputeTrajectoryEfforts.Request(trajectory=JointTrajectory(points=[
             JointTrajectoryPoint(positions=Q0, velocities=Q0),
             JointTrajectoryPoint(positions=Q0)]))), 'point 1'),
    'trajectory NaN': (
        (srv.ComputeTrajectoryEfforts, 'trajectory_efforts',
         srv.ComputeTrajectoryEfforts.Request(trajectory=JointTrajectory(points=[
             JointTrajectoryPoint(positions=Q0),
             JointTrajectoryPoint(positions=[math.nan] * N)]))), 'point 1'),
    'payload unknown link': (
        (srv.SetPayload, 'set_payload', srv.SetPayload.Request(link='moon', mass=1.0)),
        'moon'),
    'payload negative mass': (
        (srv.SetPayload, 'set_payload', srv.SetPayload.Request(link='tool0', mass=-1.0)),
        'mass'),
}


@pytest.mark.parametrize('case', sorted(BAD_REQUESTS))
def test_bad_request_then_good_request(graph, node, case: str) -> None:
    """Answer success = false naming the problem, then serve the next good request."""
    (srv_type, name, request), needle = BAD_REQUESTS[case]
    answer = graph.call(srv_type, name, request)
    assert answer.success is False
    assert needle in answer.message, answer.message
    q, _, _ = _state(15)
    good = graph.call(srv.InverseDynamics, 'inverse_dynamics',
                      srv.InverseDynamics.Request(positions=q.tolist()))
    assert good.success, good.message
    np.testing.assert_allclose(good.efforts, MODEL.gravity_torques(q), rtol=0, atol=TOL)
    assert node[0].poll() is None, 'the node died'


def test_robot_description_updates(graph, node) -> None:
    """Keep the model on a malformed URDF; rebuild on a good one; restore the default arm."""
    process, log_path, _ = node
    graph.description_pub.publish(String(data='<robot name="broken"><link name="a"></robot'))
    assert _log_contains(log_path, 'rejected the robot description'), 'no rejection logged'
    q, _, _ = _state(16)
    answer = graph.call(srv.InverseDynamics, 'inverse_dynamics',
                        srv.InverseDynamics.Request(positions=q.tolist()))
    assert answer.success, answer.message
    np.testing.assert_allclose(answer.efforts, MODEL.gravity_torques(q), rtol=0, atol=TOL)
    try:
        graph.description_pub.publish(String(data=PLANAR))
        planar = RobotModel.from_urdf_string(PLANAR)
        _wait_for_model(graph, list(planar.joint_names))
        answer = graph.call(srv.InverseDynamics, 'inverse_dynamics',
                            srv.InverseDynamics.Request(positions=[0.3, 0.4]))
        assert answer.success, answer.message
        np.testing.assert_allclose(answer.efforts, planar.gravity_torques([0.3, 0.4]),
                                   rtol=0, atol=TOL)
    finally:
        graph.description_pub.publish(String(data=COBOT7))
        _wait_for_model(graph, NAMES)
    assert process.poll() is None


def _joint_state(order, q, qd=None, stamp=(0, 0), extra=True) -> JointState:
    msg = JointState()
    msg.header.stamp = Time(sec=stamp[0], nanosec=stamp[1])
    msg.name = [NAMES[i] for i in order]
    msg.position = [float(q[i]) for i in order]
    if qd is not None:
        msg.velocity = [float(qd[i]) for i in order]
    if extra:  # joints the model does not have, first and last
        msg.name = ['gripper_finger'] + msg.name + ['conveyor']
        msg.position = [0.01] + list(msg.position) + [3.0]
        if qd is not None:
            msg.velocity = [0.0] + list(msg.velocity) + [1.0]
    return msg


def test_gravity_and_coriolis_topics(graph, node) -> None:
    """Extra joints in shuffled order: g(q) and C qd in model order, stamp copied."""
    received = {'gravity': [], 'coriolis': [], 'markers': []}
    subs = [
        graph.node.create_subscription(JointState, NODE + '/gravity_torques',
                                       received['gravity'].append, 10),
        graph.node.create_subscription(JointState, NODE + '/coriolis_torques',
                                       received['coriolis'].append, 10),
        graph.node.create_subscription(MarkerArray, NODE + '/torque_markers',
                                       received['markers'].append, 10)]
    pub = graph.node.create_publisher(JointState, JOINT_STATES_TOPIC, 10)
    try:
        q, qd, _ = _state(17)
        order = _shuffled(18)
        good = _joint_state(order, q, qd, stamp=(42, 123))
        bad = _joint_state(order[1:], q, qd, stamp=(43, 0))  # lacks a model joint

        def stamps(key):
            return [(m.header.stamp.sec, m.header.stamp.nanosec) for m in received[key]]

        def publish_and_check():
            pub.publish(bad)
            pub.publish(good)
            return (42, 123) in stamps('coriolis') and bool(received['markers'])
        assert graph.spin_until(publish_and_check, timeout=20.0), 'no torques received'
        graph.spin_for(0.3)
        assert (43, 0) not in stamps('gravity') + stamps('coriolis')
        gravity = next(m for m in received['gravity'] if m.header.stamp.sec == 42)
        coriolis = next(m for m in received['coriolis'] if m.header.stamp.sec == 42)
        assert list(gravity.name) == NAMES and list(coriolis.name) == NAMES
        np.testing.assert_allclose(gravity.effort, MODEL.gravity_torques(q), rtol=0, atol=TOL)
        np.testing.assert_allclose(coriolis.effort, MODEL.coriolis_torques(q, qd), rtol=0,
                                   atol=TOL)
        markers = received['markers'][-1].markers
        child_links = [j.child_link for j in MODEL.tree.joints]
        assert sorted({m.header.frame_id for m in markers}) == sorted(child_links)
        assert len(markers) == 2 * N
    finally:
        for sub in subs:
            graph.node.destroy_subscription(sub)
        graph.node.destroy_publisher(pub)
    assert _log_contains(log_path=node[1], text=NAMES[order[0]])
