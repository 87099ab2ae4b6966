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
feedforward_filter: the node between a planner and joint_trajectory_controller (issue 29).

The controller MoveIt's simple controller manager is pointed at: it serves
``~/follow_joint_trajectory`` (control_msgs/FollowJointTrajectory, where control_msgs is
installed, as it is with every apt ROS 2) and takes plans on ``~/joint_trajectory``
(trajectory_msgs/JointTrajectory, JTC's own topic interface, for scripts and CI). Each plan
is checked against the arm's limits and given the model's torques as feed-forward
(:func:`manip_dynamics.control.plan_feedforward.plan_with_feedforward`: retimed or refused
when it asks for more than the limits, ``on_infeasible``), then forwarded to
joint_trajectory_controller (JTC, ``controller_name``) on the effort interface, whose PID in
controller_manager's real-time loop adds each point's ``effort`` (ros2_controllers 4.22 and
newer): to JTC's action ``/<controller_name>/follow_joint_trajectory`` (feedback relayed,
result passed on, a cancel passed down) or, with ``downstream: topic`` or without
control_msgs, to its topic ``/<controller_name>/joint_trajectory``.

Holding: JTC holds a pose with its PID alone (its hold point has no effort), so an arm on the
effort interface sags by ``g / p`` there. The node therefore sends JTC a hold with gravity
torques (:func:`~manip_dynamics.control.plan_feedforward.hold_efforts`) when JTC becomes
active, before any plan: at once on JTC's first ``~/controller_state`` (which JTC publishes
only while active), of the pose of the newest joint state stamped before it (the pose the
previous controller held, before JTC's PID-only hold moved the arm); downstream topic: when
its topic subscriber appears, of the current pose. Every forwarded plan ends on a point
whose effort holds its last pose.

Contact: a ``contact: true`` on ``<observer_namespace>/contact`` stamped at most
``max_contact_age`` before the newest joint state, while a plan runs, cancels the
downstream goal, holds the current pose with its gravity torques and ends the upstream goal
with PATH_TOLERANCE_VIOLATED and the reason; when the flag falls, the node holds again where
the push left the arm, with that pose's gravity torques (JTC's gains, stable under delay, are
soft: a push can move a light joint far, and the old pose's g(q) would not fit); a new goal
from the pose where the arm stopped continues. A plan whose first point is farther than
``start_tolerance`` from the current pose is refused (INVALID_GOAL). ``~/events``
(std_msgs/String) says each decision in one line (hold, forwarded, retimed, refused,
contact), as the log does.
"""

from collections import deque
import sys
import time
from typing import Any

from builtin_interfaces.msg import Duration
import numpy as np
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.clock import Clock, ClockType
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from manip_dynamics.control.feedforward import GRAVITY_MODES
from manip_dynamics.control.plan_feedforward import (
    hold_efforts, ON_INFEASIBLE, plan_with_feedforward, PlannedMotion, PlanRefused)
from manip_dynamics.errors import InputError
from manip_dynamics.robot_model import RobotModel
from manip_dynamics.ros.runtime.conversions import (
    joint_state_arrays, stamp_seconds, time_msg)
from manip_dynamics.ros.runtime.node_runtime import GuardedNode, run_node
from manip_dynamics.ros.runtime.robot_description import (
    declare_model_parameters, param_bool, param_choice, param_float, param_float_list,
    param_string, report_startup_error, RobotDescriptionSource, STARTUP_ERRORS, StartupError)

#: Default node name.
NODE_NAME = 'feedforward_filter'
#: Where plans go: JTC's action, its topic, or the action where control_msgs is installed.
DOWNSTREAMS = ('auto', 'action', 'topic')
#: Newest sample only (issue 28).
JOINT_STATES_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT)
#: How often the node looks whether JTC has appeared [s].
WATCH_PERIOD = 0.2
#: JTC counts as inactive after this long without its controller_state [s].
ACTIVE_SILENCE = 1.0
#: Joint states kept to find the pose from before JTC's first command (0.1 s at 1 kHz).
RECENT_STATES = 100


class FeedforwardFilterNode(GuardedNode):
    """Check plans, fill the feed-forward, forward to JTC, hold on contact (module doc)."""

    def __init__(self, **kwargs: Any) -> None:
        """
        Declare and check the parameters, then create the model source and interfaces.

        :raises StartupError: A bad parameter or robot_description.
        """
        super().__init__(NODE_NAME, **kwargs)
        urdf, build = declare_model_parameters(self)
        self.controller_name = param_string(
            self, 'controller_name', 'joint_trajectory_controller',
            'The joint_trajectory_controller plans go to (effort interface)').strip('/')
        self.downstream = param_choice(self, 'downstream', 'auto', "'action': JTC's "
                                       "FollowJointTrajectory; 'topic': its joint_trajectory "
                                       "topic; 'auto': the action where control_msgs exists",
                                       DOWNSTREAMS)
        self.on_infeasible = param_choice(self, 'on_infeasible', 'retime', 'A plan over a '
                                          'velocity or effort limit: retime or refuse',
                                          ON_INFEASIBLE)
        self.gravity = param_choice(self, 'gravity_feedforward', 'include', "'include': "
                                    "efforts with g(q); 'exclude': the driver adds gravity",
                                    GRAVITY_MODES)
        self.feedforward = param_bool(self, 'feedforward', True, 'Fill the efforts (false: '
                                      'plans and holds without them, JTC as without this '
                                      'node, to measure what they do)')
        self.acceleration_limits = param_float_list(
            self, 'acceleration_limits', 'For retiming, per joint in model order or one for '
            "all [rad/s^2 or m/s^2]; empty = the plan's own peak accelerations")
        self.start_tolerance = param_float(
            self, 'start_tolerance', 0.05, 'Refuse a plan starting farther than this from '
            'the current pose [rad or m]', low=0.0, high=10.0, low_open=True)
        self.max_contact_age = param_float(
            self, 'max_contact_age', 0.1, 'Ignore a contact message stamped more than this '
            'before the newest joint state [s]', low=0.0, high=10.0, low_open=True)
        self.observer_namespace = param_string(
            self, 'observer_namespace', '/external_torque_observer',
            'Namespace of the observer whose contact flag stops a plan; empty = none')
        self._model: RobotModel | None = None
        self._q: np.ndarray | None = None
        self._stamp = -1.0          # newest joint state's stamp [s]
        # the last RECENT_STATES joint states (stamp, q): the pose before JTC's first command
        self._recent: deque = deque(maxlen=RECENT_STATES)
        self._before_jtc: np.ndarray | None = None
        self._running_until = -1.0  # topic downstream: the plan's end on the states' clock
        self._downstream_goal = None   # the downstream goal handle of the running plan
        self._upstream = None          # (upstream goal handle, reason holder) while running
        self._jtc_seen = False
        self._rehold = False   # hold again where the arm is when the contact ends
        self._holds = 0
        self.plans = self.refused = self.contacts = 0
        self.events_pub = self.create_publisher(String, '~/events', 10)
        group = MutuallyExclusiveCallbackGroup()
        self.source = RobotDescriptionSource(self, urdf, build, on_model=self._set_model,
                                             callback_group=MutuallyExclusiveCallbackGroup())
        self.create_subscription(JointState, '/joint_states', self._joint_states,
                                 JOINT_STATES_QOS, callback_group=group)
        self.create_subscription(JointTrajectory, '~/joint_trajectory', self._topic_plan, 10,
                                 callback_group=group)
        self.contact_topic = ''
        if self.observer_namespace.strip('/'):
            from manip_dynamics_interfaces.msg import Contact
            self.contact_topic = '/%s/contact' % self.observer_namespace.strip('/')
            self.create_subscription(Contact, self.contact_topic, self._contact, 10,
                                     callback_group=group)
        self._Action = self._action_type()
        if self.downstream == 'action' and self._Action is None:
            raise StartupError('downstream: action needs control_msgs, which is not '
                               'installed (apt install ros-$ROS_DISTRO-control-msgs)')
        use_action = self._Action is not None and self.downstream != 'topic'
        self._jtc_topic = '/%s/joint_trajectory' % self.controller_name
        self._jtc_action = '/%s/follow_joint_trajectory' % self.controller_name
        self._topic_pub = self.create_publisher(JointTrajectory, self._jtc_topic, 10)
        self._client = None
        self._jtc_state_wall = -1.0   # monotonic time of JTC's last controller_state
        if use_action:
            from control_msgs.msg import JointTrajectoryControllerState
            from rclpy.action import ActionClient
            self._client = ActionClient(self, self._Action, self._jtc_action,
                                        callback_group=group)
            # JTC publishes its state only while active: the sign that it became active
            self.create_subscription(
                JointTrajectoryControllerState, '/%s/controller_state' % self.controller_name,
                self._jtc_state, JOINT_STATES_QOS, callback_group=group)
        served = self._serve_action(group)
        # discovery is wall-clock business: a steady timer also runs when /clock does not
        self.create_timer(WATCH_PERIOD, self._watch_jtc, callback_group=group,
                          clock=Clock(clock_type=ClockType.STEADY_TIME))
        self.get_logger().info(
            'feed-forward filter: plans on %s%s -> %s (%s); on_infeasible %s, gravity %s; '
            'contact from %s' % (
                self.resolve_topic_name('~/joint_trajectory'),
                ' and the action ' + served if served else
                ' (no action: control_msgs is not installed)',
                self._jtc_action if self._client else self._jtc_topic,
                'feed-forward' if self.feedforward else 'NO feed-forward',
                self.on_infeasible, self.gravity, self.contact_topic or '(none)'))

    # ------------------------------------------------------------------ set-up
    @staticmethod
    def _action_type() -> Any:
        """Return control_msgs' FollowJointTrajectory, or None where it is not installed."""
        try:
            from control_msgs.action import FollowJointTrajectory
        except ImportError:
            return None
        return FollowJointTrajectory

    def _serve_action(self, group: Any) -> str:
        """Serve ~/follow_joint_trajectory where control_msgs is installed."""
        if self._Action is None:
            return ''
        from rclpy.action import ActionServer, CancelResponse
        self._server = ActionServer(self, self._Action, '~/follow_joint_trajectory',
                                    self._execute, callback_group=group,
                                    cancel_callback=lambda handle: CancelResponse.ACCEPT)
        return self.resolve_topic_name('~/follow_joint_trajectory')

    def _set_model(self, model: RobotModel) -> None:
        """Take a new model (the plans' checks and torques use it from now on)."""
        # compile and import once, off the plans (the first plan took 0.8 s otherwise)
        rest = np.clip(np.zeros(model.dof), model.position_lower, model.position_upper)
        plan_with_feedforward(model, model.joint_names, [0.0, 0.5], [rest, rest])
        self._model = model
        self._q = None

    def _event(self, text: str, error: bool = False) -> None:
        """Log a decision and publish it on ~/events."""
        if error:   # rclpy: one severity per call site
            self.get_logger().error(text)
        else:
            self.get_logger().info(text)
        self.events_pub.publish(String(data=text))

    # ------------------------------------------------------------------ inputs
    def _joint_states(self, msg: JointState) -> None:
        model = self._model
        if model is None:
            return
        try:
            q, _ = joint_state_arrays(model, msg)
        except (InputError, ValueError):
            return
        if not np.all(np.isfinite(q)):
            return
        self._q = q
        self._stamp = stamp_seconds(msg.header.stamp)
        self._recent.append((self._stamp, q))

    def _jtc_state(self, msg: Any) -> None:
        now = time.monotonic()
        silent = now - self._jtc_state_wall >= ACTIVE_SILENCE
        self._jtc_state_wall = now
        if not self._jtc_seen:
            # JTC has just become active and holds with its PID alone: the gravity hold goes
            # out now, not at the next watch period (a soft arm sags fast meanwhile), and to
            # the pose of the newest joint state stamped before JTC's first update, which its
            # first command had not yet moved (the previous controller's hold)
            if silent:
                first = stamp_seconds(msg.header.stamp)
                before = [q for stamp, q in self._recent if stamp < first]
                self._before_jtc = before[-1] if before else None
            self._watch_jtc()

    def _watch_jtc(self) -> None:
        """Send the hold when JTC becomes active (its state flows) or its topic appears."""
        if self._client is not None:
            present = (time.monotonic() - self._jtc_state_wall < ACTIVE_SILENCE
                       and self._client.server_is_ready())
        else:
            present = self.count_subscribers(self._jtc_topic) > 0
        busy = (self._upstream is not None or self._downstream_goal is not None
                or self._stamp < self._running_until)
        if not present and not busy:   # a plan in progress: JTC is active, this node was busy
            self._jtc_seen = False
            return
        if present and not self._jtc_seen and self._q is not None and \
                self._model is not None:
            self._jtc_seen = True
            pose, self._before_jtc = self._before_jtc, None
            self._hold('JTC appeared (%s): holding the %s pose with gravity torques before any '
                       'plan' % (self._jtc_action if self._client else self._jtc_topic,
                                 'current' if pose is None else 'last held'), pose)

    def _hold(self, why: str, pose: np.ndarray | None = None) -> None:
        """Send JTC one point: ``pose`` (default the current one), at rest, with its gravity."""
        model, q = self._model, self._q if pose is None else pose
        if model is None or q is None:
            return
        point = JointTrajectoryPoint(
            positions=q.tolist(), velocities=[0.0] * model.dof,
            accelerations=[0.0] * model.dof,
            effort=hold_efforts(model, q, self.gravity).tolist() if self.feedforward else [],
            time_from_start=Duration())
        msg = JointTrajectory(joint_names=list(model.joint_names), points=[point])
        self._holds += 1
        self._event('hold: %s' % why)
        if self._client is not None:
            goal = self._Action.Goal(trajectory=msg)
            self._client.send_goal_async(goal)
        else:
            self._topic_pub.publish(msg)

    def _contact(self, msg: Any) -> None:
        """Stop a running plan and hold on a fresh contact flag (module docstring)."""
        if not msg.contact:
            if self._rehold and self._stamp - stamp_seconds(msg.header.stamp) <= \
                    self.max_contact_age:
                # the push has ended where it left the arm: hold there, with the gravity
                # torques of that pose (JTC's PID alone would carry the old pose's g(q) and
                # the mismatch over the displacement)
                self._rehold = False
                self._hold('the contact has ended: holding the pose it left')
            return
        running = ((self._upstream is not None and not self._upstream[1])
                   or self._downstream_goal is not None or self._stamp < self._running_until)
        if not running:   # nothing moving, or this plan already stopped
            return
        age = self._stamp - stamp_seconds(msg.header.stamp)
        if age > self.max_contact_age:
            return
        self.contacts += 1
        reason = ('contact: strongest joint %s at %.2f of its threshold; stopped and holding '
                  'the current pose; send a new goal from here to continue'
                  % (msg.strongest_joint, msg.strongest_normalized_residual))
        self._running_until = -1.0
        self._rehold = True
        if self._upstream is not None:
            self._upstream[1].append(reason)
        handle, self._downstream_goal = self._downstream_goal, None
        if handle is not None:
            handle.cancel_goal_async()
        self._hold(reason)

    # ------------------------------------------------------------------ plans
    def _prepare(self, trajectory: JointTrajectory) -> PlannedMotion:
        """Check a plan against the pose and the limits; retime and fill (PlanRefused)."""
        model, q = self._model, self._q
        if model is None:
            raise PlanRefused('no robot model yet')
        if q is None:
            raise PlanRefused('no joint state yet: the pose the plan starts from is unknown')
        points = trajectory.points
        if not points:
            raise PlanRefused('the plan has no points')
        names = list(trajectory.joint_names)
        times = [stamp_seconds(p.time_from_start) for p in points]

        def field(name: str) -> Any:
            rows = [list(getattr(p, name)) for p in points]
            if all(len(r) == 0 for r in rows):
                return None
            if any(len(r) != len(names) for r in rows):
                raise PlanRefused('%s must have one value per joint at every point or be '
                                  'empty at all' % name)
            return np.array(rows, dtype=np.float64)
        positions = field('positions')
        if positions is None:
            raise PlanRefused('the plan has no positions')
        acc = self.acceleration_limits
        plan = plan_with_feedforward(
            model, names, times, positions, field('velocities'), field('accelerations'),
            on_infeasible=self.on_infeasible, gravity=self.gravity,
            acceleration_limits=None if not acc else np.broadcast_to(np.array(acc),
                                                                     (model.dof,)))
        if plan.times[0] == 0.0:
            gap = np.abs(plan.positions[0] - q)
            if gap.max() > self.start_tolerance:
                j = int(np.argmax(gap))
                raise PlanRefused('the plan starts %.3f from the current pose at joint %s '
                                  '(start_tolerance %g)' % (gap[j], model.joint_names[j],
                                                            self.start_tolerance))
        return plan

    def _downstream_message(self, plan: PlannedMotion) -> JointTrajectory:
        """Return the plan as JTC's trajectory (efforts unless ``feedforward`` is off)."""
        msg = JointTrajectory(joint_names=list(plan.joint_names))
        for k, t in enumerate(plan.times):
            msg.points.append(JointTrajectoryPoint(
                positions=plan.positions[k].tolist(), velocities=plan.velocities[k].tolist(),
                accelerations=plan.accelerations[k].tolist(),
                effort=plan.efforts[k].tolist() if self.feedforward else [],
                time_from_start=_duration(float(t))))
        return msg

    def _accepted(self, plan: PlannedMotion) -> str:
        self.plans += 1
        return ('plan %d: %d points over %.2f s, %s (peak use of the limits as planned: '
                'velocity %.2f, effort %.2f), %s -> %s' % (
                    self.plans, len(plan.times), plan.duration,
                    'retimed' if plan.retimed else 'timing kept', plan.velocity_usage,
                    plan.effort_usage, 'feed-forward filled' if self.feedforward else
                    'without feed-forward', self.controller_name))

    def _topic_plan(self, trajectory: JointTrajectory) -> None:
        """Forward a plan from ~/joint_trajectory (to JTC's action or topic)."""
        try:
            plan = self._prepare(trajectory)
        except PlanRefused as error:
            self.refused += 1
            self._event('refused: %s' % error, error=True)
            return
        self._event(self._accepted(plan))
        msg = self._downstream_message(plan)
        if self._client is not None:
            future = self._client.send_goal_async(self._Action.Goal(trajectory=msg))
            future.add_done_callback(self._topic_goal_sent)
        else:
            self._topic_pub.publish(msg)
        self._running_until = self._stamp + plan.duration

    def _topic_goal_sent(self, future: Any) -> None:
        handle = future.result()
        self._downstream_goal = handle if handle is not None and handle.accepted else None
        if self._downstream_goal is not None:
            handle.get_result_async().add_done_callback(
                lambda _: setattr(self, '_downstream_goal', None))

    async def _execute(self, upstream: Any) -> Any:
        """Serve one FollowJointTrajectory goal through JTC's action (module docstring)."""
        Result = self._Action.Result
        result = Result()
        try:
            plan = self._prepare(upstream.request.trajectory)
        except PlanRefused as error:
            self.refused += 1
            self._event('refused: %s' % error, error=True)
            result.error_code, result.error_string = Result.INVALID_GOAL, str(error)
            upstream.abort()
            return result
        if self._client is None:   # downstream: topic; the goal ends with the plan's time
            self._topic_plan(upstream.request.trajectory)
            result.error_string = 'forwarded to %s' % self._jtc_topic
            upstream.succeed()
            return result
        self._event(self._accepted(plan))
        reasons: list[str] = []
        self._upstream = (upstream, reasons)
        try:
            goal = self._Action.Goal(trajectory=self._downstream_message(plan),
                                     path_tolerance=upstream.request.path_tolerance,
                                     goal_tolerance=upstream.request.goal_tolerance,
                                     goal_time_tolerance=upstream.request.goal_time_tolerance)

            def relay(feedback: Any) -> None:
                upstream.publish_feedback(feedback.feedback)
                if upstream.is_cancel_requested and self._downstream_goal is not None:
                    self._downstream_goal.cancel_goal_async()
            handle = await self._client.send_goal_async(goal, feedback_callback=relay)
            if handle is None or not handle.accepted:
                result.error_code = Result.INVALID_GOAL
                result.error_string = '%s refused the plan' % self._jtc_action
                upstream.abort()
                return result
            self._downstream_goal = handle
            downstream = await handle.get_result_async()
        finally:
            self._upstream = None
            self._downstream_goal = None
        if reasons:
            result.error_code = Result.PATH_TOLERANCE_VIOLATED
            result.error_string = reasons[0]
            upstream.abort()
        elif upstream.is_cancel_requested:
            result.error_string = 'canceled'
            upstream.canceled()
        else:
            result.error_code = downstream.result.error_code
            result.error_string = downstream.result.error_string
            if result.error_code == Result.SUCCESSFUL:
                upstream.succeed()
            else:
                upstream.abort()
        return result


def _duration(seconds: float) -> Duration:
    """Return builtin_interfaces/Duration of ``seconds`` (>= 0)."""
    stamp = time_msg(seconds)
    return Duration(sec=stamp.sec, nanosec=stamp.nanosec)


def main(args: list[str] | None = None) -> int:
    """Run the feed-forward filter until Ctrl-C, SIGTERM or an external shutdown."""
    return run_node(NODE_NAME, FeedforwardFilterNode, args, STARTUP_ERRORS,
                    report_startup_error)


if __name__ == '__main__':
    sys.exit(main())
