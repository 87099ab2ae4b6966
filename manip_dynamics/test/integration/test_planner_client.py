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
manip_dynamics.ros.client.DynamicsClient against a running dynamics_node (cobot7).

The answers obey the equation of motion across services (inverse dynamics equals
M qdd + C qd + g from ~/dynamics_terms, forward dynamics inverts it), a refused request
raises ServiceCallError with the node's message, a missing node raises TimeoutError, and a
retimed path comes back with its waypoints and its efforts within the limits.
"""

import numpy as np
import pytest
from ros_test_support import require_interfaces, require_rclpy

require_rclpy()
require_interfaces()

from manip_dynamics import RobotModel  # noqa: E402
from manip_dynamics.bundled import urdf_path  # noqa: E402
from manip_dynamics.ros.client import DynamicsClient, ServiceCallError  # noqa: E402
from manip_dynamics.ros.runtime.node_process import start_node, stop_node  # noqa: E402

pytestmark = [pytest.mark.rostest]
NODE = 'client_dynamics'
Q = np.array([0.2, -0.4, 0.3, -1.8, 0.5, 1.6, 0.4])


@pytest.fixture(scope='module')
def dyn():
    with open(urdf_path('cobot7'), encoding='utf-8') as stream:
        xml = stream.read()
    proc = start_node('dynamics_node', NODE, {'robot_description': xml,
                                              'publish_torques': False})
    try:
        with DynamicsClient('/' + NODE, timeout=180.0) as client:
            client.gravity(Q)    # waits for the services (the kernels load first)
            client.timeout = 20.0
            yield client
    finally:
        code = stop_node(proc)
    assert code == 0, open(proc.log_path).read()


def test_inverse_dynamics_is_the_equation_of_motion_of_the_terms(dyn):
    rng = np.random.default_rng(3)
    for _ in range(5):
        q, qd, qdd = Q + rng.normal(0, 0.3, 7), rng.normal(0, 1, 7), rng.normal(0, 2, 7)
        tau = dyn.inverse_dynamics(q, qd, qdd)
        terms = dyn.dynamics_terms(q, qd)
        assert tau.shape == (7,) and terms.mass_matrix.shape == (7, 7)
        np.testing.assert_allclose(tau, terms.mass_matrix @ qdd + terms.coriolis_torques
                                   + terms.gravity_torques, atol=1e-9)
        np.testing.assert_allclose(terms.coriolis_matrix @ qd, terms.coriolis_torques,
                                   atol=1e-9)
        np.testing.assert_allclose(dyn.forward_dynamics(q, qd, tau), qdd, atol=1e-8)
        np.testing.assert_allclose(terms.mass_matrix, terms.mass_matrix.T, atol=1e-12)


def test_a_refused_request_raises_with_the_nodes_message(dyn):
    with pytest.raises(ServiceCallError, match='position'):
        dyn.inverse_dynamics(Q[:3])
    with pytest.raises(ValueError, match='finite'):
        dyn.inverse_dynamics(np.full(7, np.nan))   # refused before it is sent
    assert dyn.inverse_dynamics(Q).shape == (7,)   # the client goes on


def test_no_node_under_the_name_is_a_timeout():
    with DynamicsClient('/no_such_dynamics_node', timeout=0.5) as client:
        with pytest.raises(TimeoutError, match='no_such_dynamics_node'):
            client.gravity(Q)


def test_retime_reaches_the_waypoints_within_the_effort_limits(dyn):
    model = RobotModel.from_urdf_file(urdf_path('cobot7'))
    waypoints = np.array([Q, Q + 0.3, Q - 0.2])
    path = dyn.retime(waypoints, acceleration_limits=[2.0], rate=250.0)
    assert path.duration > 0.0 and path.times[-1] == pytest.approx(path.duration, abs=1e-6)
    for t, waypoint in zip(path.waypoint_times, waypoints):
        k = int(np.argmin(np.abs(path.times - t)))
        np.testing.assert_allclose(path.positions[k], waypoint, atol=1e-6)
    plan = dyn.trajectory_efforts(path.times, path.positions, path.velocities,
                                  path.accelerations)
    assert plan.efforts.shape == path.positions.shape
    assert plan.feasible
    assert np.all(plan.peak_efforts <= model.effort_limits * (1 + 1e-6))
    # the efforts are the inverse dynamics of each point (Craig eq. 6.59), also by service
    k = len(path.times) // 2
    np.testing.assert_allclose(plan.efforts[k], dyn.inverse_dynamics(
        path.positions[k], path.velocities[k], path.accelerations[k]), atol=1e-6)


def test_retime_fills_the_feedforward_with_or_without_gravity(dyn):
    """~/retime's efforts: M qdd + C qd + g of ~/dynamics_terms at each point; without g."""
    model = RobotModel.from_urdf_file(urdf_path('cobot7'))
    waypoints = np.array([Q, Q + 0.25])
    bare = dyn.retime(waypoints, acceleration_limits=2.0, rate=100.0)
    assert bare.efforts.size == 0
    full = dyn.retime(waypoints, acceleration_limits=2.0, rate=100.0, efforts='include')
    without = dyn.retime(waypoints, acceleration_limits=2.0, rate=100.0, efforts='exclude')
    assert full.efforts.shape == full.positions.shape
    np.testing.assert_allclose(full.positions, bare.positions, atol=1e-12)
    for k in range(0, len(full.times), max(1, len(full.times) // 5)):
        q, qd, qdd = full.positions[k], full.velocities[k], full.accelerations[k]
        terms = dyn.dynamics_terms(q, qd)
        # Craig eq. 6.59 with the URDF's friction at the desired velocity (no rotor inertia:
        # a URDF has none and the node was given none)
        expected = terms.mass_matrix @ qdd + terms.coriolis_torques + terms.gravity_torques \
            + model.friction_torques(qd)
        np.testing.assert_allclose(full.efforts[k], expected, atol=1e-6)
        np.testing.assert_allclose(without.efforts[k], expected - terms.gravity_torques,
                                   atol=1e-6)
    with pytest.raises(ServiceCallError, match='efforts must be'):
        dyn.retime(waypoints, acceleration_limits=2.0, efforts='gravity')
