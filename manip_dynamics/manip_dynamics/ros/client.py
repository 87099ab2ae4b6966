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
A Python client for dynamics_node's services: numpy arrays in, numpy arrays out.

A planner script that calls the suite many times from one process::

    from manip_dynamics.ros.client import DynamicsClient

    with DynamicsClient('/manip_dynamics') as dyn:
        tau = dyn.inverse_dynamics(q, qd, qdd)          # shape (n,), [N m or N]
        terms = dyn.dynamics_terms(q, qd)               # M, C, C qd, g

One object per node namespace. It owns an rclpy node in a context of its own (the caller's
``rclpy.init`` is neither needed nor touched) and waits for each answer by spinning its own
executor one callback at a time until the answer is there. rclpy's
``spin_until_future_complete`` adds a done-callback to the future on every spin (rclpy
7.1.5, Jazzy's wheels): they become executor tasks and each call gets slower than the last
(1,000 calls: 5 ms growing to 47 ms here; rclpy PR #1374 fixed the ``spin_until_future_
complete`` path, PR #1702 the public ``spin_once_until_future_complete``). This client never
adds one, so its latency stays flat (docs/BENCHMARKS.md).

Answers with ``success: false`` raise :class:`ServiceCallError` (a ValueError) with the
node's message; no answer within ``timeout`` raises :class:`TimeoutError`. Arrays use the
order of ``joint_names`` when given, else the model's order.
"""

from __future__ import annotations

import itertools
import os
import time
from typing import Any, NamedTuple, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from manip_dynamics.ros.runtime.conversions import (
    duration_msg, stamp_seconds, unflatten_row_major)

FloatArray = NDArray[np.float64]

#: Client QoS: depth 1000, as docs/ROS_API.md recommends for clients that call in a loop
#: beside other clients (rclpy's default depth 10 lost about 1 call in 300 under load).
CLIENT_DEPTH = 1000
#: How long one spin of the client's executor may block while an answer is awaited [s].
SPIN_SLICE = 0.1

_NAMES = itertools.count()


class ServiceCallError(ValueError):
    """The node answered ``success: false``: the request was refused (message says why)."""


class DynamicsTerms(NamedTuple):
    """The terms of M(q) qdd + C(q, qd) qd + g(q) = tau at one state (Craig eq. 6.59)."""

    mass_matrix: FloatArray        # M(q), shape (n, n)
    coriolis_matrix: FloatArray    # C(q, qd), shape (n, n)
    coriolis_torques: FloatArray   # C(q, qd) qd, shape (n,)
    gravity_torques: FloatArray    # g(q), shape (n,)


class TrajectoryEfforts(NamedTuple):
    """Efforts along a trajectory (``~/trajectory_efforts``)."""

    efforts: FloatArray            # shape (N, n) [N m or N], one row per point
    peak_efforts: FloatArray       # shape (n,), max |effort| per joint
    effort_limits: FloatArray      # shape (n,), the URDF limits
    feasible: bool


class RetimedPath(NamedTuple):
    """A retimed path (``~/retime``), sampled at the requested rate."""

    times: FloatArray              # shape (N,) [s] from the start
    positions: FloatArray          # shape (N, n)
    velocities: FloatArray         # shape (N, n)
    accelerations: FloatArray      # shape (N, n)
    efforts: FloatArray            # shape (N, n), empty when the node sent none
    waypoint_times: FloatArray     # shape (W,) [s]: when each waypoint is reached
    duration: float


def _floats(values: ArrayLike | None, what: str) -> list[float]:
    """Return a flat list of finite floats (empty for None)."""
    if values is None:
        return []
    array = np.asarray(values, dtype=np.float64).ravel()
    if not np.all(np.isfinite(array)):
        raise ValueError('%s must be finite, got %s' % (what, array))
    return array.tolist()


class DynamicsClient:
    """
    Calls to one dynamics_node (module docstring).

    :param namespace: The node's fully qualified name, e.g. ``'/manip_dynamics'``.
    :param timeout: Longest wait for the services to appear and for each answer [s].
    :param joint_names: Joint order of every array in and out; default the model's.
    """

    def __init__(self, namespace: str = '/manip_dynamics', *, timeout: float = 10.0,
                 joint_names: Sequence[str] | None = None) -> None:
        import rclpy
        from rclpy.executors import SingleThreadedExecutor
        self.namespace = '/' + namespace.strip('/')
        self.timeout = float(timeout)
        self.joint_names = list(joint_names or [])
        self._context = rclpy.Context()
        rclpy.init(context=self._context)
        self._node = rclpy.create_node('manip_dynamics_client_%d_%d' % (
            os.getpid(), next(_NAMES)), context=self._context)
        self._executor = SingleThreadedExecutor(context=self._context)
        self._executor.add_node(self._node)
        self._clients: dict[str, Any] = {}

    # ------------------------------------------------------------------ plumbing
    def close(self) -> None:
        """Destroy the node and shut the client's context down (idempotent)."""
        import rclpy
        if self._node is None:
            return
        self._executor.shutdown()
        self._node.destroy_node()
        self._node = None
        rclpy.try_shutdown(context=self._context)

    def __enter__(self) -> DynamicsClient:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def _client(self, srv_type: Any, service: str) -> Any:
        client = self._clients.get(service)
        if client is None:
            from rclpy.qos import QoSProfile
            client = self._node.create_client(
                srv_type, '%s/%s' % (self.namespace, service),
                qos_profile=QoSProfile(depth=CLIENT_DEPTH))
            if not client.wait_for_service(timeout_sec=self.timeout):
                self._node.destroy_client(client)
                raise TimeoutError('no service %s/%s within %g s: is dynamics_node running '
                                   'under that name, on this ROS_DOMAIN_ID?' % (
                                       self.namespace, service, self.timeout))
            self._clients[service] = client
        return client

    def call(self, srv_type: Any, service: str, request: Any) -> Any:
        """
        Send one request and wait for its answer (flat latency: module docstring).

        :param srv_type: The service type, e.g. ``InverseDynamics``.
        :param service: The service's name under the namespace, e.g. ``'inverse_dynamics'``.
        :param request: The request message.
        :return: The response (``success`` true when the type has it).
        :raises TimeoutError: No answer within ``timeout``.
        :raises ServiceCallError: ``success: false``; the message is the node's.
        """
        if self._node is None:
            raise RuntimeError('DynamicsClient is closed')
        client = self._client(srv_type, service)
        future = client.call_async(request)
        deadline = time.monotonic() + self.timeout
        while not future.done():
            left = deadline - time.monotonic()
            if left <= 0.0:
                client.remove_pending_request(future)
                raise TimeoutError('%s/%s did not answer within %g s' % (
                    self.namespace, service, self.timeout))
            self._executor.spin_once(timeout_sec=min(left, SPIN_SLICE))
        response = future.result()
        if hasattr(response, 'success') and not response.success:
            raise ServiceCallError('%s/%s: %s' % (self.namespace, service, response.message))
        return response

    # ------------------------------------------------------------------ services
    def inverse_dynamics(self, q: ArrayLike, qd: ArrayLike | None = None,
                         qdd: ArrayLike | None = None, *, include_friction: bool = False,
                         include_armature: bool = False) -> FloatArray:
        """
        Return the joint efforts tau = M qdd + C qd + g [N m or N], shape (n,).

        :param q: Joint positions [rad or m], shape (n,).
        :param qd: Joint velocities, shape (n,); None = zero.
        :param qdd: Joint accelerations, shape (n,); None = zero.
        """
        from manip_dynamics_interfaces.srv import InverseDynamics
        response = self.call(InverseDynamics, 'inverse_dynamics', InverseDynamics.Request(
            joint_names=self.joint_names, positions=_floats(q, 'q'),
            velocities=_floats(qd, 'qd'), accelerations=_floats(qdd, 'qdd'),
            include_friction=include_friction, include_armature=include_armature))
        return np.array(response.efforts, dtype=np.float64)

    def forward_dynamics(self, q: ArrayLike, qd: ArrayLike | None, tau: ArrayLike, *,
                         include_friction: bool = False,
                         include_armature: bool = False) -> FloatArray:
        """
        Return the joint accelerations qdd = M^-1 (tau - C qd - g), shape (n,).

        :param q: Joint positions, shape (n,).
        :param qd: Joint velocities, shape (n,); None = zero.
        :param tau: Joint efforts [N m or N], shape (n,).
        """
        from manip_dynamics_interfaces.srv import ForwardDynamics
        response = self.call(ForwardDynamics, 'forward_dynamics', ForwardDynamics.Request(
            joint_names=self.joint_names, positions=_floats(q, 'q'),
            velocities=_floats(qd, 'qd'), efforts=_floats(tau, 'tau'),
            include_friction=include_friction, include_armature=include_armature))
        return np.array(response.accelerations, dtype=np.float64)

    def dynamics_terms(self, q: ArrayLike, qd: ArrayLike | None = None) -> DynamicsTerms:
        """Return M(q), C(q, qd), C qd and g(q) at one state (see :class:`DynamicsTerms`)."""
        from manip_dynamics_interfaces.srv import GetDynamicsTerms
        response = self.call(GetDynamicsTerms, 'dynamics_terms', GetDynamicsTerms.Request(
            joint_names=self.joint_names, positions=_floats(q, 'q'),
            velocities=_floats(qd, 'qd')))
        g = np.array(response.gravity_torques, dtype=np.float64)
        n = g.size
        return DynamicsTerms(unflatten_row_major(response.mass_matrix, n, n),
                             unflatten_row_major(response.coriolis_matrix, n, n),
                             np.array(response.coriolis_torques, dtype=np.float64), g)

    def gravity(self, q: ArrayLike) -> FloatArray:
        """Return g(q), the efforts that hold the arm still at ``q`` [N m or N], shape (n,)."""
        return self.dynamics_terms(q).gravity_torques

    def trajectory_efforts(self, times: ArrayLike, positions: ArrayLike,
                           velocities: ArrayLike | None = None,
                           accelerations: ArrayLike | None = None, *,
                           include_friction: bool = False) -> TrajectoryEfforts:
        """
        Return the efforts along a timed trajectory.

        :param times: Time from start of each point [s], shape (N,), increasing.
        :param positions: Shape (N, n); ``velocities``/``accelerations`` the same or None.
        """
        from manip_dynamics_interfaces.srv import ComputeTrajectoryEfforts
        from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
        times = np.asarray(times, dtype=np.float64).ravel()
        positions = np.atleast_2d(np.asarray(positions, dtype=np.float64))
        if positions.shape[0] != times.size:
            raise ValueError('%d times for %d points' % (times.size, positions.shape[0]))
        rows = {'velocities': velocities, 'accelerations': accelerations}
        for name, values in rows.items():
            if values is not None and np.shape(values) != positions.shape:
                raise ValueError('%s has shape %s, positions %s' % (
                    name, np.shape(values), positions.shape))
        trajectory = JointTrajectory(joint_names=self.joint_names)
        for k, t in enumerate(times):
            trajectory.points.append(JointTrajectoryPoint(
                positions=_floats(positions[k], 'positions'),
                velocities=_floats(None if velocities is None else
                                   np.asarray(velocities)[k], 'velocities'),
                accelerations=_floats(None if accelerations is None else
                                      np.asarray(accelerations)[k], 'accelerations'),
                time_from_start=duration_msg(float(t))))
        response = self.call(ComputeTrajectoryEfforts, 'trajectory_efforts',
                             ComputeTrajectoryEfforts.Request(
                                 trajectory=trajectory, include_friction=include_friction))
        efforts = np.array([p.effort for p in response.trajectory.points], dtype=np.float64)
        return TrajectoryEfforts(efforts, np.array(response.peak_efforts),
                                 np.array(response.effort_limits), bool(response.feasible))

    def retime(self, waypoints: ArrayLike, *, velocity_scale: float = 1.0,
               acceleration_scale: float = 1.0, effort_scale: float = 1.0,
               acceleration_limits: ArrayLike | None = None,
               rate: float = 0.0, efforts: str = '') -> RetimedPath:
        """
        Return the fastest timing of a path through ``waypoints`` within the limits.

        :param waypoints: Shape (W, n) [rad or m], W >= 2.
        :param acceleration_limits: [rad/s^2 or m/s^2], one for every joint or one per joint
            (URDFs carry none); None = the node's.
        :param rate: Sample rate of the answer [Hz]; 0 = the node's default.
        :param efforts: Feed-forward torques at the points: ``''`` none (``efforts`` of the
            answer has 0 columns), ``'include'`` or ``'exclude'`` gravity (drivers that add
            it themselves).
        """
        from manip_dynamics_interfaces.srv import RetimeTrajectory
        from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
        waypoints = np.atleast_2d(np.asarray(waypoints, dtype=np.float64))
        if acceleration_limits is not None and np.size(acceleration_limits) == 1:
            acceleration_limits = np.full(waypoints.shape[1], float(np.ravel(
                acceleration_limits)[0]))
        path = JointTrajectory(joint_names=self.joint_names,
                               points=[JointTrajectoryPoint(positions=_floats(w, 'waypoint'))
                                       for w in waypoints])
        response = self.call(RetimeTrajectory, 'retime', RetimeTrajectory.Request(
            waypoints=path, acceleration_limits=_floats(acceleration_limits,
                                                        'acceleration_limits'),
            velocity_scale=float(velocity_scale), acceleration_scale=float(acceleration_scale),
            effort_scale=float(effort_scale), rate=float(rate), efforts=efforts))
        points = response.trajectory.points

        def rows(field: str) -> FloatArray:
            return np.array([getattr(p, field) for p in points], dtype=np.float64)

        times = np.array([stamp_seconds(p.time_from_start) for p in points])
        return RetimedPath(times, rows('positions'), rows('velocities'),
                           rows('accelerations'), rows('effort'),
                           np.array(response.waypoint_times, dtype=np.float64),
                           float(response.duration))

    def set_payload(self, link: str, mass: float, com: ArrayLike = (0.0, 0.0, 0.0),
                    inertia: ArrayLike | None = None) -> None:
        """
        Attach (mass > 0) or remove (mass = 0) a payload on ``link``.

        :param mass: [kg]. :param com: Centre of mass in the link frame [m], shape (3,).
        :param inertia: About the centre of mass, link axes [kg m^2], shape (3, 3); None =
            a point mass.
        """
        from geometry_msgs.msg import Point
        from manip_dynamics_interfaces.srv import SetPayload
        inertia = np.zeros((3, 3)) if inertia is None else np.asarray(inertia, float)
        com = _floats(com, 'com')
        if len(com) != 3 or inertia.shape != (3, 3):
            raise ValueError('com must have 3 values and inertia shape (3, 3)')
        self.call(SetPayload, 'set_payload', SetPayload.Request(
            link=link, mass=float(mass), center_of_mass=Point(x=com[0], y=com[1], z=com[2]),
            ixx=inertia[0, 0], ixy=inertia[0, 1], ixz=inertia[0, 2], iyy=inertia[1, 1],
            iyz=inertia[1, 2], izz=inertia[2, 2]))
