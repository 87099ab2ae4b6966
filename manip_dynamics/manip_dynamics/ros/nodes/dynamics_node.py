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
The ``dynamics_node`` (default name ``manip_dynamics``): dynamics services and torque topics.

Services (manip_dynamics_interfaces): ``~/inverse_dynamics``, ``~/forward_dynamics``,
``~/dynamics_terms``, ``~/cartesian_dynamics``, ``~/trajectory_efforts``, ``~/retime``,
``~/set_payload``.
Topics: for every joint_states message ``~/gravity_torques`` g(q) and ``~/coriolis_torques``
C(q, qd) qd (sensor_msgs/JointState, name + effort, input stamp), and ``~/torque_markers``
(visualization_msgs/MarkerArray) for RViz. Every equation is the library's
(:class:`manip_dynamics.RobotModel`); this node only converts messages. See docs/ROS_API.md.
"""

from collections.abc import Callable
import sys
import time
import traceback
from typing import Any

import numpy as np
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from sensor_msgs.msg import JointState
from visualization_msgs.msg import MarkerArray

from manip_dynamics.algorithms.cartesian import DIRECTION_NAMES
from manip_dynamics.control.feedforward import GRAVITY_MODES, joint_trajectory_with_feedforward
from manip_dynamics.errors import InputError
from manip_dynamics.identification.payload_window import JointStateWindow
from manip_dynamics.robot_model import RobotModel
from manip_dynamics.ros.parameters.dynamics_node import PARAMETERS
from manip_dynamics.ros.runtime.conversions import (
    acceleration_limits, flatten_row_major, from_model_order, joint_state_arrays,
    joint_state_message, matrix_from_model_order, response_joint_names, stamp_seconds,
    to_model_order, trajectory_to_arrays, trajectory_with_efforts, wrenches_to_dict)
from manip_dynamics.ros.runtime.glitch_parameters import gate_parameters, held_back_or_implausible
from manip_dynamics.ros.runtime.guarded_node import GuardedNode
from manip_dynamics.ros.runtime.node_runtime import KindThrottle, run_node
from manip_dynamics.ros.runtime.parameter_spec import declare_parameters
from manip_dynamics.ros.runtime.payloads import (
    answer_estimate_payload, apply_payload_request, Payloads, reapply_payloads,
    record_for_estimate)
from manip_dynamics.ros.runtime.qos import JOINT_STATES_QOS, SERVICE_QOS
from manip_dynamics.ros.runtime.robot_description import (
    model_builder, NO_MODEL_MESSAGE, RobotDescriptionSource)
from manip_dynamics.ros.runtime.startup import report_startup_error, STARTUP_ERRORS, StartupError
from manip_dynamics.ros.runtime.torque_markers import torque_markers
from manip_dynamics_interfaces.srv import (
    ComputeTrajectoryEfforts, EstimatePayload, ForwardDynamics, GetCartesianDynamics,
    GetDynamicsTerms, InverseDynamics, RetimeTrajectory, SetPayload)

#: Default node name (the executable is ``dynamics_node``).
NODE_NAME = 'manip_dynamics'

#: Seconds between two warnings of the same kind about bad joint_states messages (each
#: kind of problem has its own period: one bad message does not hide a different one).
WARN_PERIOD = 5.0


class _NoModel(Exception):
    """Raised inside a service before any robot model exists."""


class DynamicsNode(GuardedNode):
    """Serve the dynamics of the robot description and publish its joint torques."""

    def __init__(self, **kwargs: Any) -> None:
        """
        Declare and check the parameters, then create the model source and interfaces.

        :param kwargs: Passed to :class:`rclpy.node.Node` (e.g. ``context``).
        :raises StartupError: A bad parameter, or a robot_description that does not load.
        """
        super().__init__(NODE_NAME, **kwargs)
        values = declare_parameters(self, PARAMETERS)
        urdf, build = model_builder(values)
        self.include_friction = values.include_friction
        self.joint_states_topic = values.joint_states_topic
        self.publish_torques = values.publish_torques
        self.publish_markers = values.publish_markers
        self.marker_rate = values.marker_rate
        self.marker_scale = values.marker_scale
        self.singular_threshold = values.singular_threshold
        self.singular_damping = values.singular_damping
        self.acceleration_limits = values.acceleration_limits or []
        self.joint_limits_file = values.joint_limits_file
        if not self.joint_states_topic:
            raise StartupError('parameter joint_states_topic must not be empty')
        self.gate_parameters = gate_parameters(values)
        self._gate = None  # (model, JointStateGate): the gate of the current model

        # Payloads set through ~/set_payload: re-applied when a new description arrives.
        self._payloads: Payloads = {}
        # Recent joint_states with efforts, for ~/estimate_payload (identification.payload_window).
        self._window = JointStateWindow()
        self._last_marker_time = 0.0
        self._throttle = KindThrottle(self.get_logger(), WARN_PERIOD)
        self._services_group = ReentrantCallbackGroup()
        self.source = RobotDescriptionSource(
            self, urdf, build, on_model=self._reapply_payloads,
            callback_group=MutuallyExclusiveCallbackGroup())

        for srv_type, name, callback in (
                (InverseDynamics, '~/inverse_dynamics', self.inverse_dynamics_callback),
                (ForwardDynamics, '~/forward_dynamics', self.forward_dynamics_callback),
                (GetDynamicsTerms, '~/dynamics_terms', self.dynamics_terms_callback),
                (GetCartesianDynamics, '~/cartesian_dynamics',
                 self.cartesian_dynamics_callback),
                (ComputeTrajectoryEfforts, '~/trajectory_efforts',
                 self.trajectory_efforts_callback),
                (RetimeTrajectory, '~/retime', self.retime_callback),
                (SetPayload, '~/set_payload', self.set_payload_callback),
                (EstimatePayload, '~/estimate_payload', self.estimate_payload_callback)):
            self.create_service(srv_type, name, callback, qos_profile=SERVICE_QOS,
                                callback_group=self._services_group)

        self.gravity_pub = self.coriolis_pub = self.marker_pub = None
        if self.publish_torques:
            self.gravity_pub = self.create_publisher(JointState, '~/gravity_torques', 10)
            self.coriolis_pub = self.create_publisher(JointState, '~/coriolis_torques', 10)
        if self.publish_markers:
            self.marker_pub = self.create_publisher(MarkerArray, '~/torque_markers', 10)
        if self.publish_torques or self.publish_markers:
            # each joint state on a thread of its own (run_node starts it)
            self.joint_states_sub = self.create_subscription(
                JointState, self.joint_states_topic, self.joint_states_callback,
                JOINT_STATES_QOS, callback_group=self.create_lane('joint_states').group)

    # ------------------------------------------------------------------ model changes
    def _reapply_payloads(self, model: RobotModel) -> None:
        """Attach the payloads set so far to a new model; drop those it cannot carry."""
        reapply_payloads(model, self._payloads, self.get_logger())

    # ------------------------------------------------------------------ topics
    def joint_states_callback(self, msg: JointState) -> None:
        """Publish g(q), C(q, qd) qd and the torque markers for one joint_states message."""
        model = self.source.model
        if model is None:
            self._throttle.warning(NO_MODEL_MESSAGE, kind='no model')
            return
        if self._gate is None or self._gate[0] is not model:
            self._gate = (model, self.gate_parameters.gate(model))
        gate = self._gate[1]
        try:
            q, qd = joint_state_arrays(model, msg)
            verdict = gate.check(time.monotonic(), q, qd, stamp_seconds(msg.header.stamp))
            if not verdict.ok:
                self._throttle.warning('%s on %s (%s): %s' % (
                    held_back_or_implausible(verdict.kind), self.joint_states_topic,
                    gate.summary(), verdict.message), kind='glitch ' + verdict.kind)
                return
            gravity = model.gravity_torques(q)
            coriolis = (model.coriolis_torques(q, qd)
                        if qd is not None and self.gravity_pub is not None else None)
            record_for_estimate(self._window, model, msg, q, qd)
        except ValueError as error:
            self._throttle.warning('ignoring joint_states on %s: %s' % (
                self.joint_states_topic, error))
            return
        names = model.joint_names
        if self.gravity_pub is not None:
            # gravity first: it is what controllers wait for
            self.gravity_pub.publish(joint_state_message(names, gravity, msg.header.stamp))
            if coriolis is not None:
                self.coriolis_pub.publish(joint_state_message(
                    names, coriolis, msg.header.stamp))
        if self.marker_pub is not None:
            now = time.monotonic()
            if now - self._last_marker_time >= 1.0 / self.marker_rate:
                self._last_marker_time = now
                self.marker_pub.publish(torque_markers(model, gravity, self.marker_scale))

    # ------------------------------------------------------------------ services
    def _answer(self, service: str, handler: Callable, request: Any, response: Any) -> Any:
        """
        Run a service handler; turn every exception into success = false with a message.

        :param service: Service name for the log.
        :param handler: ``handler(model, request, response)`` fills the response.
        :param request: The request.
        :param response: A fresh response.
        :return: The filled response (a new empty one on failure).
        """
        try:
            model = self.source.model
            if model is None:
                raise _NoModel(NO_MODEL_MESSAGE)
            handler(model, request, response)
            response.success = True
            return response
        except (_NoModel, ValueError) as error:
            message = str(error)
            self.get_logger().warning('%s: %s' % (service, message))
        except Exception as error:  # noqa: B902 - a request must never kill the node
            message = 'internal error: %s: %s' % (type(error).__name__, error)
            self.get_logger().error('%s: %s\n%s' % (service, message, traceback.format_exc()))
        failed = type(response)()
        failed.success = False
        failed.message = message
        return failed

    def _state(self, model: RobotModel, request: Any, *fields: str) -> list[np.ndarray]:
        """Return model-order arrays of request fields; empty non-position fields = zero."""
        return [to_model_order(model, request.joint_names, getattr(request, field),
                               what=field, empty_is_zero=field != 'positions')
                for field in fields]

    def _wrenches(self, model: RobotModel, request: Any) -> dict | None:
        return wrenches_to_dict(request.external_wrenches, model) or None

    def inverse_dynamics_callback(self, request: InverseDynamics.Request,
                                  response: InverseDynamics.Response
                                  ) -> InverseDynamics.Response:
        """Answer ~/inverse_dynamics: efforts = M qdd + C qd + g - sum J^T w (+ friction)."""
        def handler(model, req, resp):
            q, qd, qdd = self._state(model, req, 'positions', 'velocities', 'accelerations')
            tau = model.inverse_dynamics(
                q, qd, qdd, external_wrenches=self._wrenches(model, req),
                include_friction=req.include_friction or self.include_friction,
                include_armature=req.include_armature)
            resp.joint_names = response_joint_names(model, req.joint_names)
            resp.efforts = from_model_order(model, req.joint_names, tau).tolist()
        return self._answer('inverse_dynamics', handler, request, response)

    def forward_dynamics_callback(self, request: ForwardDynamics.Request,
                                  response: ForwardDynamics.Response
                                  ) -> ForwardDynamics.Response:
        """Answer ~/forward_dynamics: qdd = M^-1 (tau - C qd - g + sum J^T w - friction)."""
        def handler(model, req, resp):
            q, qd, tau = self._state(model, req, 'positions', 'velocities', 'efforts')
            qdd = model.forward_dynamics(
                q, qd, tau, external_wrenches=self._wrenches(model, req),
                include_friction=req.include_friction or self.include_friction,
                include_armature=req.include_armature)
            resp.joint_names = response_joint_names(model, req.joint_names)
            resp.accelerations = from_model_order(model, req.joint_names, qdd).tolist()
        return self._answer('forward_dynamics', handler, request, response)

    def dynamics_terms_callback(self, request: GetDynamicsTerms.Request,
                                response: GetDynamicsTerms.Response
                                ) -> GetDynamicsTerms.Response:
        """Answer ~/dynamics_terms: M(q), C(q, qd), C qd and g(q) in the request's order."""
        def handler(model, req, resp):
            q, qd = self._state(model, req, 'positions', 'velocities')
            names = req.joint_names
            resp.joint_names = response_joint_names(model, names)
            resp.mass_matrix = flatten_row_major(
                matrix_from_model_order(model, names, model.mass_matrix(q)))
            resp.coriolis_matrix = flatten_row_major(
                matrix_from_model_order(model, names, model.coriolis_matrix(q, qd)))
            resp.coriolis_torques = from_model_order(
                model, names, model.coriolis_torques(q, qd)).tolist()
            resp.gravity_torques = from_model_order(
                model, names, model.gravity_torques(q)).tolist()
        return self._answer('dynamics_terms', handler, request, response)

    def cartesian_dynamics_callback(self, request: GetCartesianDynamics.Request,
                                    response: GetCartesianDynamics.Response
                                    ) -> GetCartesianDynamics.Response:
        """Answer ~/cartesian_dynamics: Lambda, mu, p and J of one link (Khatib)."""
        def handler(model, req, resp):
            if not req.link:
                raise InputError('link is empty; name a link of %s' % list(model.link_names))
            q, qd = self._state(model, req, 'positions', 'velocities')
            # Rows always come in x y z rx ry rz order; unknown names are left for the
            # library to reject by name.
            directions = sorted(req.directions, key=lambda d: DIRECTION_NAMES.index(d)
                                if d in DIRECTION_NAMES else len(DIRECTION_NAMES))
            terms = model.cartesian_dynamics(
                q, qd, req.link, frame=req.reference_frame or 'world',
                directions=directions or None,
                singular_threshold=self.singular_threshold, damping=self.singular_damping)
            resp.joint_names = response_joint_names(model, req.joint_names)
            resp.directions = list(terms.directions)
            resp.jacobian = flatten_row_major(
                from_model_order(model, req.joint_names, terms.jacobian))
            resp.mass_matrix = flatten_row_major(terms.mass_matrix)
            resp.velocity_term = flatten_row_major(terms.velocity_term)
            resp.gravity_term = flatten_row_major(terms.gravity_term)
            resp.near_singular = bool(terms.near_singular)
            resp.min_singular_value = float(terms.min_singular_value)
        return self._answer('cartesian_dynamics', handler, request, response)

    def trajectory_efforts_callback(self, request: ComputeTrajectoryEfforts.Request,
                                    response: ComputeTrajectoryEfforts.Response
                                    ) -> ComputeTrajectoryEfforts.Response:
        """Answer ~/trajectory_efforts: inverse dynamics at every point, peaks, limits."""
        def handler(model, req, resp):
            names, q, qd, qdd = trajectory_to_arrays(model, req.trajectory)
            tau = model.inverse_dynamics(
                q, qd, qdd, include_friction=req.include_friction or self.include_friction)
            order = req.trajectory.joint_names
            efforts = from_model_order(model, order, tau)
            peaks = np.max(np.abs(efforts), axis=0)
            limits = from_model_order(model, order, model.effort_limits)
            within = peaks <= limits
            with np.errstate(divide='ignore', invalid='ignore'):
                usage = np.nan_to_num(peaks / limits, nan=np.inf)
            resp.trajectory = trajectory_with_efforts(req.trajectory, efforts)
            resp.peak_efforts = peaks.tolist()
            resp.effort_limits = limits.tolist()
            resp.within_limits = [bool(v) for v in within]
            resp.feasible = bool(np.all(within))
            if not resp.feasible:
                worst = int(np.argmax(usage))
                resp.message = 'joint %r needs %.6g but its effort limit is %.6g' % (
                    names[worst], peaks[worst], limits[worst])
        return self._answer('trajectory_efforts', handler, request, response)

    def retime_callback(self, request: RetimeTrajectory.Request,
                        response: RetimeTrajectory.Response) -> RetimeTrajectory.Response:
        """Answer ~/retime: a near time-optimal trajectory within every limit (planning/)."""
        def handler(model, req, resp):
            from manip_dynamics.planning import retime
            from manip_dynamics.ros.runtime.trajectory_player import trajectory_from_document
            order = list(req.waypoints.joint_names)
            _, q, _, _ = trajectory_to_arrays(model, req.waypoints)
            acc = acceleration_limits(model, order, req.acceleration_limits,
                                      self.acceleration_limits)
            traj = retime(model, q, acceleration_limits=acc,
                          velocity_scale=req.velocity_scale or 1.0,
                          acceleration_scale=req.acceleration_scale or 1.0,
                          effort_scale=req.effort_scale or 1.0,
                          joint_limits=self.joint_limits_file or None)
            if req.efforts not in ('',) + GRAVITY_MODES:
                raise ValueError('efforts must be "", %s, got %r' % (
                    ', '.join('"%s"' % mode for mode in GRAVITY_MODES), req.efforts))
            rate = req.rate or 100.0
            doc = joint_trajectory_with_feedforward(traj, rate, model, req.efforts) \
                if req.efforts else traj.to_joint_trajectory(rate)
            if order:
                fields = ('positions', 'velocities', 'accelerations') + (
                    ('effort',) if req.efforts else ())
                for point in doc['points']:
                    for field in fields:
                        point[field] = from_model_order(model, order, point[field]).tolist()
                doc['joint_names'] = order
            resp.trajectory = trajectory_from_document(doc)
            resp.trajectory.header = req.waypoints.header
            resp.duration = traj.duration
            resp.waypoint_times = traj.waypoint_times.tolist()
            resp.peak_velocity = traj.report.velocity
            resp.peak_acceleration = traj.report.acceleration
            resp.peak_effort = traj.report.effort
        return self._answer('retime', handler, request, response)

    def set_payload_callback(self, request: SetPayload.Request,
                             response: SetPayload.Response) -> SetPayload.Response:
        """Answer ~/set_payload: attach (mass > 0) or remove (mass = 0) a link's payload."""
        def handler(model, req, resp):
            resp.message = apply_payload_request(model, self._payloads, req)
            self.get_logger().info('set_payload: %s (total mass %.6g kg)' % (
                resp.message, model.total_mass))
        return self._answer('set_payload', handler, request, response)

    def estimate_payload_callback(self, request: EstimatePayload.Request,
                                  response: EstimatePayload.Response
                                  ) -> EstimatePayload.Response:
        """Answer ~/estimate_payload from the recent joint_states (payload_window)."""
        def handler(model, req, resp):
            answer_estimate_payload(model, self._payloads, self._window, req, resp)
            self.get_logger().info('estimate_payload: %s' % resp.message)
        return self._answer('estimate_payload', handler, request, response)


def main(args: list[str] | None = None) -> int:
    """
    Run the dynamics node until Ctrl-C, SIGTERM or an external shutdown.

    The kernels are compiled before the node exists (:func:`run_node`); the node then runs
    on one thread: rclpy's multi-threaded executor measured 20x slower here (joint_states ->
    gravity_torques p50 11 ms against 0.5 ms, docs/BENCHMARKS.md), and every callback is a
    few microseconds of library time.

    :param args: Command-line arguments (ROS arguments included); default ``sys.argv``.
    :return: Exit code: 0 after a normal shutdown, 1 when the start-up parameters or the
        robot_description parameter are unusable.
    """
    return run_node(NODE_NAME, DynamicsNode, args, STARTUP_ERRORS, report_startup_error)


if __name__ == '__main__':
    sys.exit(main())
