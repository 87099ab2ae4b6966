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
feedforward_filter: the node between a planner and joint_trajectory_controller (JTC).

The controller MoveIt's simple controller manager is pointed at. It serves
``~/follow_joint_trajectory`` (control_msgs/FollowJointTrajectory, where control_msgs is
installed) and takes plans on ``~/joint_trajectory``. Each plan is read as JTC reads it
(:func:`~manip_dynamics.control.trajectory_goal.read_trajectory_goal`), checked against the
arm's limits and given the model's torques as feed-forward
(:func:`~manip_dynamics.control.plan_feedforward.plan_with_feedforward`), then forwarded to
JTC's action (or, with ``downstream: topic``, its topic) on the effort interface.

One goal runs at a time (a new one preempts it); what is knowable at goal time is refused
then (REJECT); results carry the status JTC's had
(:func:`~manip_dynamics.control.goal_endings.goal_ending`); after every ending that is not a
success the arm is held with its gravity torques where it stopped and again where it comes to
rest (:class:`~manip_dynamics.control.goal_endings.RestDetector`), each hold checked. JTC's
answers are watched on the joint states' clock (``ANSWER_GRACE``, ``RESULT_GRACE``): an
overdue one ends the goal here and holds. A raised ``<observer_namespace>/contact`` stamped
during the running plan and at most ``max_contact_age`` old stops it and holds; when the flag
falls the node holds where the push left the arm. ``~/events`` says each decision in one
line. The rules, with JTC's and MoveIt's: docs/ROS2_CONTROL.md, "Goals, endings and holds".
"""

import sys
import threading
import time
from typing import Any

import numpy as np
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from trajectory_msgs.msg import JointTrajectory

from manip_dynamics.control.goal_endings import RestDetector
from manip_dynamics.control.plan_feedforward import (
    plan_with_feedforward, PlannedMotion, PlanRefused)
from manip_dynamics.errors import InputError
from manip_dynamics.observers.contact import contact_is_current
from manip_dynamics.robot_model import RobotModel
from manip_dynamics.ros.parameters.feedforward_filter import PARAMETERS
from manip_dynamics.ros.runtime.conversions import (
    joint_state_arrays, read_trajectory_message, stamp_seconds)
from manip_dynamics.ros.runtime.goal_relay import GoalRelay
from manip_dynamics.ros.runtime.guarded_node import GuardedNode
from manip_dynamics.ros.runtime.jtc_link import JtcLink
from manip_dynamics.ros.runtime.jtc_messages import follow_joint_trajectory, plan_message
from manip_dynamics.ros.runtime.names import child_name, JOINT_STATES
from manip_dynamics.ros.runtime.node_runtime import KindThrottle, run_node
from manip_dynamics.ros.runtime.parameter_spec import declare_parameters
from manip_dynamics.ros.runtime.qos import CONTACT_QOS, JOINT_STATES_QOS
from manip_dynamics.ros.runtime.robot_description import model_builder, RobotDescriptionSource
from manip_dynamics.ros.runtime.startup import report_startup_error, STARTUP_ERRORS, StartupError

#: Default node name.
NODE_NAME = 'feedforward_filter'


class FeedforwardFilterNode(GuardedNode):
    """Check plans, fill the feed-forward, forward to JTC, hold after every stop (module)."""

    def __init__(self, **kwargs: Any) -> None:
        """Declare and check the parameters, then the interfaces (StartupError: bad ones)."""
        super().__init__(NODE_NAME, **kwargs)
        values = declare_parameters(self, PARAMETERS, on_change=self._tuned)
        urdf, build = model_builder(values)
        self.p = values   # tunable ones follow ros2 param set (checked)
        self.controller_name = values.jtc_name.rstrip('/')
        if not self.controller_name.strip('/'):
            raise StartupError('parameter jtc_name must not be empty')
        self._late_flags = KindThrottle(self.get_logger(), 2.0)
        self._model: RobotModel | None = None
        self._q: np.ndarray | None = None
        self._qd: np.ndarray | None = None
        self._stamp = -1.0          # newest joint state's stamp [s]
        self._running_until = -1.0  # topic plans: the plan's end on the states' clock
        # a contact flag counts from this stamp on: the running plan's start, or the flag
        # that stopped it (for the flag's fall) [s, joint states' clock]
        self._contact_since = float('-inf')
        self._topic_goal = None               # JTC's goal handle of a ~/joint_trajectory plan
        self._rehold = False   # hold again where the arm is when the contact ends
        # after a stop: [why, (stamp, pose) the arm has stayed near since] until it holds
        self._settle: RestDetector | None = None
        self.plans = self.refused = self.contacts = 0
        self.events_pub = self.create_publisher(String, '~/events', 10)
        group = MutuallyExclusiveCallbackGroup()
        self.source = RobotDescriptionSource(self, urdf, build, on_model=self._set_model,
                                             callback_group=MutuallyExclusiveCallbackGroup())
        # The streams (joint states, JTC's state, the contact flag: 500 Hz each behind
        # controller_manager) run on a lane of their own: the executor's wait set holds the
        # actions' many entities, and waking it per sample cost the node half a core. The
        # lane only records; what acts (a hold, a stop) is handed to the executor, where the
        # goals' coroutines run (:meth:`_defer`).
        self._due: dict[str, tuple] = {}   # kind -> (call, args) the executor runs next
        self._due_lock = threading.Lock()   # the lane adds while the executor takes
        self._wake = self.create_guard_condition(self._run_due, callback_group=group)
        streams = self.create_lane('streams').group
        self.create_subscription(JointState, JOINT_STATES, self._joint_states,
                                 JOINT_STATES_QOS, callback_group=streams)
        self.create_subscription(JointTrajectory, '~/joint_trajectory', self._topic_plan, 10,
                                 callback_group=group)
        self.contact_topic = ''
        if self.p.observer_namespace.strip('/'):
            from manip_dynamics_interfaces.msg import Contact
            self.contact_topic = self.create_subscription(
                Contact, child_name(self.p.observer_namespace, 'contact'), self._contact,
                CONTACT_QOS, callback_group=streams).topic_name
        self._Action = follow_joint_trajectory()
        if self.p.downstream == 'action' and self._Action is None:
            raise StartupError('downstream: action needs control_msgs, which is not '
                               'installed (apt install ros-$ROS_DISTRO-control-msgs)')
        self.link = JtcLink(
            self, self.controller_name, action=self._Action,
            use_action=self._Action is not None and self.p.downstream != 'topic',
            gravity=self.p.gravity_feedforward, feedforward=self.p.feedforward,
            event=self._event, defer=self._defer, pose=lambda: (self._model, self._q),
            busy=self._busy, goal_running=lambda: self._run is not None, group=group,
            streams=streams)
        self.relay = None if self._Action is None else GoalRelay(
            self, self._Action, self.link, group=group, prepare=self._prepare,
            accepted=self._accepted, refused=self._refused, event=self._event,
            stamp=lambda: self._stamp, started=self._goal_started, until=self._until,
            ended=self._goal_ended)
        served = self.relay.name if self.relay else ''
        self.get_logger().info(
            'feed-forward filter: plans on %s%s -> %s (%s); on_infeasible %s, gravity %s; '
            'contact from %s' % (
                self.resolve_topic_name('~/joint_trajectory'),
                ' and the action ' + served if served else
                ' (no action: control_msgs is not installed)',
                self.link.target,
                'feed-forward' if self.p.feedforward else 'NO feed-forward',
                self.p.on_infeasible, self.p.gravity_feedforward, self.contact_topic or '(none)'))

    # ------------------------------------------------------------------ set-up
    def _tuned(self, name: str, value: Any) -> None:
        """Log a new start_tolerance or max_contact_age (in self.p, checked; used from now)."""
        self.get_logger().info('%s set to %g' % (name, value))

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
            q, qd = joint_state_arrays(model, msg)
        except (InputError, ValueError):
            return
        if not np.all(np.isfinite(q)):
            return
        self._q = q
        self._qd = qd if qd is not None and np.all(np.isfinite(qd)) else None
        self._stamp = stamp_seconds(msg.header.stamp)
        self.link.note_state(self._stamp, q)
        settle = self._settle
        if settle is not None and self._run is None and settle.update(self._stamp, q):
            self._defer('settled', self._settled, settle)
        run = self._run
        if run is not None and run.downstream is None and run.finished is not None and \
                not run.finished.done() and self._stamp >= run.end:
            self._defer('time up', GoalRelay.time_up, run)
        if run is not None and not run.overdue and self._stamp >= run.deadline:
            self._defer('overdue', self.relay.overdue, run)

    def _defer(self, kind: str, call: Any, *args: Any) -> None:
        """From the lane: have the executor run ``call(*args)`` (once per kind pending)."""
        with self._due_lock:
            if kind in self._due:
                return
            self._due[kind] = (call, args)
        self._wake.trigger()

    def _run_due(self) -> None:
        """On the executor: run what the lane handed over, oldest first."""
        while True:
            with self._due_lock:   # (unlocked, the lane's insert could break the iteration)
                if not self._due:
                    return
                call, args = self._due.pop(next(iter(self._due)))
            call(*args)

    def _settled(self, settle: RestDetector) -> None:
        """Hold where the arm has come to rest after a stop (:class:`RestDetector`)."""
        if self._settle is settle and self._run is None:
            self._settle = None
            self.link.hold('at rest after: %s' % settle.why)

    def _busy(self) -> bool:
        return (self._run is not None or self._topic_goal is not None
                or self._stamp < self._running_until)

    # ------------------------------------------------------------------ contact
    def _fresh(self, msg: Any) -> bool:
        """Whether a contact flag speaks of the running plan (or the flag that stopped it)."""
        return contact_is_current(stamp_seconds(msg.header.stamp), self._stamp,
                                  self._contact_since, self.p.max_contact_age)

    def _contact(self, msg: Any) -> None:
        """From the lane: a contact flag that may stop a plan, or end a push, to the executor."""
        if msg.contact and self._busy() and self._fresh(msg):
            self._defer('contact', self._contact_acted, msg)
        elif msg.contact and self._busy() and \
                stamp_seconds(msg.header.stamp) >= self._contact_since:
            self._late_flag(msg, 'the observer trails the joint states')
        elif not msg.contact and self._rehold and self._fresh(msg):
            self._defer('contact ended', self._contact_acted, msg)

    def _late_flag(self, msg: Any, why: str) -> None:
        """Say (throttled) that a contact flag about the running plan was not acted on."""
        stamp = stamp_seconds(msg.header.stamp)
        self._late_flags.warning(
            'contact flag stamped %.3f s, %.3f s older than the newest joint state, not acted '
            'on (max_contact_age %g s): %s' % (stamp, self._stamp - stamp,
                                               self.p.max_contact_age, why),
            kind='late flag')

    def _contact_acted(self, msg: Any) -> None:
        """Stop a running plan and hold on a fresh contact flag (module docstring)."""
        if not msg.contact:
            if self._rehold and self._fresh(msg):
                # the push has ended where it left the arm: hold there, with the gravity
                # torques of that pose (JTC's PID alone would carry the old pose's g(q) and
                # the mismatch over the displacement)
                self._rehold = False
                self.link.hold('the contact has ended: holding the pose it left')
                self._settle = RestDetector('the contact')
            return
        run = self._run
        running = ((run is not None and not run.reasons) or self._topic_goal is not None
                   or self._stamp < self._running_until)
        if not running:   # nothing moving, or this plan already stopped
            return
        if not self._fresh(msg):
            self._late_flag(msg, 'it went stale before the executor ran it')
            return
        self.contacts += 1
        self._contact_since = stamp_seconds(msg.header.stamp)
        reason = ('contact: strongest joint %s at %.2f of its threshold (stamp %.3f s); '
                  'stopped and holding the current pose; send a new goal from here to '
                  'continue' % (msg.strongest_joint, msg.strongest_normalized_residual,
                                stamp_seconds(msg.header.stamp)))
        self._running_until = -1.0
        self._rehold = True
        if self._topic_goal is not None:
            self._topic_goal.cancel_goal_async()
        self._topic_goal = None
        if run is not None:
            self.relay.stop(reason)
        self.link.hold(reason)

    # ------------------------------------------------------------------ plans
    def _prepare(self, trajectory: JointTrajectory,
                 multi_dof_points: int = 0) -> tuple[PlannedMotion, JointTrajectory, float]:
        """
        Read, check and fill a plan as JTC will run it (PlanRefused with the reason).

        :return: The plan (model order), JTC's message and the plan's end on the joint
            states' clock [s].
        """
        model, q = self._model, self._q
        if model is None:
            raise PlanRefused('no robot model yet')
        if q is None:
            raise PlanRefused('no joint state yet: the pose the plan starts from is unknown')
        goal = read_trajectory_message(model, trajectory, now=self._stamp, q=q, qd=self._qd,
                                       start_tolerance=self.p.start_tolerance,
                                       multi_dof_points=multi_dof_points)
        acc = self.p.acceleration_limits
        plan = plan_with_feedforward(
            model, goal.joint_names, goal.times, goal.positions, goal.velocities,
            goal.accelerations, on_infeasible=self.p.on_infeasible,
            gravity=self.p.gravity_feedforward,
            acceleration_limits=None if not acc else np.broadcast_to(np.array(acc),
                                                                     (model.dof,)))
        msg = plan_message(plan, self.p.feedforward)
        msg.header.stamp = trajectory.header.stamp
        return plan, msg, goal.start + plan.duration

    def _accepted(self, plan: PlannedMotion) -> str:
        self.plans += 1
        return ('plan %d: %d points over %.2f s, %s (peak use of the limits as planned: '
                'velocity %.2f, effort %.2f), %s -> %s' % (
                    self.plans, len(plan.times), plan.duration,
                    'retimed' if plan.retimed else 'timing kept', plan.velocity_usage,
                    plan.effort_usage, 'feed-forward filled' if self.p.feedforward else
                    'without feed-forward', self.controller_name))

    def _topic_plan(self, trajectory: JointTrajectory) -> None:
        """Forward a plan from ~/joint_trajectory (to JTC's action or topic)."""
        try:
            if not self.link.active():
                raise PlanRefused('%s is not active' % self.controller_name)
            plan, msg, end = self._prepare(trajectory)
        except PlanRefused as error:
            self._refused(error)
            return
        self._event(self._accepted(plan))
        self._settle = None
        if self.link.client is not None:
            future = self.link.client.send_goal_async(self._Action.Goal(trajectory=msg))
            future.add_done_callback(self._topic_goal_sent)
        else:
            self.link.publish(msg)
        self._running_until = end
        self._contact_since = self._stamp

    def _topic_goal_sent(self, future: Any) -> None:
        handle = future.result()
        if handle is None or not handle.accepted:
            self._event('%s refused the plan%s' % (self.link.action_name, self.link.log.refusal()),
                        error=True)
            self._running_until = -1.0
            return
        self._topic_goal = handle

        def ended(_: Any) -> None:
            if self._topic_goal is handle:
                self._topic_goal = None
        handle.get_result_async().add_done_callback(ended)

    # ------------------------------------------------------------------ the action
    @property
    def _run(self) -> Any:
        """The upstream goal that runs (a :class:`GoalRun` of ros/runtime/goal_relay.py)."""
        return None if self.relay is None else self.relay.run

    def _refused(self, error: PlanRefused) -> None:
        self.refused += 1
        self._event('refused: %s' % error, error=True)

    def _goal_started(self) -> None:
        """Start counting contact flags from now, without a settling hold (a goal starts)."""
        self._contact_since = self._stamp
        self._settle = None

    def _until(self, end: float) -> None:
        self._running_until = end

    def _goal_ended(self, ending: Any, run: Any, from_jtc: bool) -> None:
        """Hold where a relayed goal's ending says (at the pose JTC holds, if it answered)."""
        if ending.hold is not None and (self._run is run or self._run is None) and \
                not run.reasons:
            pose = self.link.hold_pose(self._model) if from_jtc else None
            self.link.hold(ending.hold + ('; at the pose JTC holds' if pose is not None
                                          else ''), pose)
            self._settle = RestDetector(ending.hold)


def _hold_on_the_way_out(node: FeedforwardFilterNode) -> None:
    """``before_destroy``: hold the current pose with its gravity on JTC's topic."""
    if node.link.shutdown_hold():
        node.get_logger().info('shutting down: sent JTC a hold of the current pose')
        time.sleep(0.05)  # let the middleware hand the message out


def main(args: list[str] | None = None) -> int:
    """Run the feed-forward filter until Ctrl-C, SIGTERM or an external shutdown."""
    return run_node(NODE_NAME, FeedforwardFilterNode, args, STARTUP_ERRORS,
                    report_startup_error, before_destroy=_hold_on_the_way_out)


if __name__ == '__main__':
    sys.exit(main())
