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
feedforward_filter's FollowJointTrajectory server: a planner's goals relayed to JTC's action.

:class:`GoalRelay` serves ``~/follow_joint_trajectory`` as joint_trajectory_controller (JTC)
does and passes each goal on to JTC's own action (or, with no action client, its topic):

* what is knowable at goal time is refused then (REJECT): JTC not active, and whatever the
  node's ``prepare`` refuses (the plan read as JTC reads it, checked against the arm);
* one goal at a time, as JTC: a new one preempts the running one, whose coroutine ends at
  once (ABORTED, "preempted by a new goal") and whose state is its own :class:`GoalRun`;
* a cancel is passed down at once (JTC answers CANCELED and holds; the node holds with the
  gravity torques);
* JTC's answers are watched on the joint states' clock: its acceptance, or its result after
  a cancel or a contact stop, is due ``ANSWER_GRACE`` after it was asked for, its result
  ``RESULT_GRACE`` after the plan's end plus the goal time; an overdue one ends the goal here;
* every ending is :func:`~manip_dynamics.control.goal_endings.goal_ending`'s: the status JTC
  would give, announced on ``~/events`` with its stamp
  (:func:`~manip_dynamics.control.goal_endings.ending_line`), the node told to hold where
  the rules say so.
"""

from dataclasses import dataclass, field
from typing import Any, Callable

from action_msgs.msg import GoalStatus
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.task import Future
from trajectory_msgs.msg import JointTrajectory

from manip_dynamics.control.gains import GOAL_TIME
from manip_dynamics.control.goal_endings import Ending, ending_line, goal_ending, JtcResult
from manip_dynamics.control.plan_feedforward import PlannedMotion, PlanRefused
from manip_dynamics.ros.runtime.conversions import stamp_seconds
from manip_dynamics.ros.runtime.jtc_link import ACTIVE_SILENCE, JtcLink

#: Goals accepted and not yet executing kept prepared (goals arriving at once).
PREPARED_GOALS = 8
#: action_msgs/GoalStatus of JTC's result -> goal_endings' status names.
GOAL_STATUS = {GoalStatus.STATUS_SUCCEEDED: 'succeeded', GoalStatus.STATUS_CANCELED: 'canceled',
               GoalStatus.STATUS_ABORTED: 'aborted'}
#: JTC's answer is overdue ANSWER_GRACE [s, joint states' clock] after the goal was sent
#: (its acceptance) or after a cancel or a contact stop was passed down (its result: JTC
#: answers these at once), and RESULT_GRACE after the plan's end plus its goal time (the
#: larger of the goal's and GOAL_TIME, the launch's JTC configuration). The goal then ends
#: without the answer, and the arm is held. By hand behind the real controller_manager one
#: goal in 19 rounds never ended.
ANSWER_GRACE = 1.0
RESULT_GRACE = 2.0


@dataclass
class GoalRun:
    """One upstream goal from acceptance to its end (one runs at a time)."""

    upstream: Any                 # the upstream ServerGoalHandle
    plan: PlannedMotion
    message: JointTrajectory      # what goes to JTC
    end: float                    # the plan's end on the joint states' clock [s]
    downstream: Any = None        # JTC's ClientGoalHandle once accepted
    reasons: list = field(default_factory=list)   # why the node stopped it (contact)
    preempted: bool = False       # a newer goal replaced it
    finished: Future | None = None   # set when the goal ends: JTC answered, preempted, time up
    sending: Future | None = None    # the goal request to JTC, until JTC answers it
    deadline: float = float('inf')   # JTC's next answer is overdue then (joint states' clock)
    overdue: str = ''             # why the node ended the goal without JTC's answer

    def answer_due(self, after: float) -> None:
        """Make JTC's next answer due ANSWER_GRACE after ``after`` (or earlier)."""
        self.deadline = min(self.deadline, after + ANSWER_GRACE)

    def end_now(self, outcome: Any) -> None:
        """End the goal's wait now with ``outcome`` (False: preempted or stopped here)."""
        if self.finished is not None and not self.finished.done():
            self.finished.set_result(outcome)


class GoalRelay:
    """The node's ``~/follow_joint_trajectory`` and the goal that runs (module docstring)."""

    def __init__(self, node: Any, action: Any, link: JtcLink, *, group: Any,
                 prepare: Callable[[JointTrajectory, int], tuple],
                 accepted: Callable[[PlannedMotion], str],
                 refused: Callable[[PlanRefused], None], event: Callable[..., None],
                 stamp: Callable[[], float], started: Callable[[], None],
                 until: Callable[[float], None],
                 ended: Callable[[Ending, GoalRun, bool], None]) -> None:
        """
        Serve the action on ``node``.

        :param action: control_msgs' FollowJointTrajectory type.
        :param link: The node's :class:`~manip_dynamics.ros.runtime.jtc_link.JtcLink` (its
            client, or None: JTC's topic).
        :param group: The callback group of the server.
        :param prepare: ``prepare(trajectory, multi_dof_points)`` -> (plan, JTC's message,
            the plan's end on the joint states' clock); raises PlanRefused.
        :param accepted: The ``~/events`` line of an accepted plan.
        :param refused: Called with the reason of a goal refused at goal time.
        :param event: ``event(text, error=False)``: log a decision and publish it.
        :param stamp: The newest joint state's stamp [s].
        :param started: Called when a goal starts (contact flags count from now on).
        :param until: ``until(end)``: with JTC's topic, the plan runs until ``end`` on the
            joint states' clock; ``until(-1)`` when the goal is over.
        :param ended: ``ended(ending, run, from_jtc)`` after a goal ended (``from_jtc``: JTC
            answered it): the node holds where the ending says.
        """
        self.node = node
        self.Action = action
        self.link = link
        self._prepare, self._accepted, self._refused = prepare, accepted, refused
        self._event, self._stamp, self._ended = event, stamp, ended
        self._started, self._until = started, until
        self.run: GoalRun | None = None
        self._prepared: dict = {}   # id(goal request) -> (request, plan, message, end)
        self.server = ActionServer(node, action, '~/follow_joint_trajectory', self._execute,
                                   callback_group=group, goal_callback=self._goal_callback,
                                   handle_accepted_callback=self._accepted_callback,
                                   cancel_callback=self._cancel_callback)
        self.name = node.resolve_topic_name('~/follow_joint_trajectory')

    # ------------------------------------------------------------------ watched answers
    def overdue(self, run: GoalRun) -> None:
        """
        End a goal JTC has not answered in time: cancel it there, end it here, hold.

        The node's hold goal preempts whatever JTC still runs; the upstream goal ends
        ABORTED with GOAL_TOLERANCE_VIOLATED (JTC's code for a goal past its goal time), or
        CANCELED when it was canceled.
        """
        if self.run is not run or run.overdue:
            return
        waited = ('its acceptance' if run.downstream is None else 'its result')
        run.overdue = ('%s did not send %s in time (by %.3f s, joint states clock); '
                       'the goal was ended here and the arm held where it is' % (
                           self.link.action_name, waited, run.deadline))
        if run.downstream is not None:
            run.downstream.cancel_goal_async()
        if run.sending is not None and not run.sending.done():
            run.sending.cancel()   # _execute's await returns None
        run.end_now(None)

    @staticmethod
    def time_up(run: GoalRun) -> None:
        """Downstream topic: the plan's time is up on the joint states' clock."""
        run.end_now(True)

    def stop(self, reason: str) -> None:
        """Stop the running goal for ``reason`` (a contact): cancel it at JTC, end it here."""
        run = self.run
        if run is None:
            return
        run.reasons.append(reason)
        if run.downstream is not None:
            run.downstream.cancel_goal_async()
            run.answer_due(self._stamp())
        else:
            run.end_now(False)   # downstream topic: it ends now (not yet at JTC: on acceptance)

    def _goal_callback(self, request: Any) -> Any:
        """Refuse at goal time what can be known then (module docstring); ACCEPT the rest."""
        try:
            if not self.link.active():
                raise PlanRefused(
                    '%s is not active (no controller_state for %g s): activate it, e.g. '
                    'ros2 control switch_controllers --activate %s' % (
                        self.link.name, ACTIVE_SILENCE, self.link.name))
            plan, msg, end = self._prepare(request.trajectory,
                                           len(request.multi_dof_trajectory.points))
        except PlanRefused as error:
            self._refused(error)
            return GoalResponse.REJECT
        # the goal handle carries this very request object: the plan is found by it
        self._prepared[id(request)] = (request, plan, msg, end)
        while len(self._prepared) > PREPARED_GOALS:
            self._prepared.pop(next(iter(self._prepared)))
        return GoalResponse.ACCEPT

    def _accepted_callback(self, upstream: Any) -> None:
        """One goal at a time, as JTC: the new one preempts the running one."""
        previous = self.run
        if previous is not None:
            previous.preempted = True
            previous.end_now(False)   # it ends now, not when JTC says so
        upstream.execute()

    def _cancel_callback(self, upstream: Any) -> Any:
        """Accept, and pass the cancel down at once (JTC holds; the node holds with g)."""
        run = self.run
        if run is not None and run.upstream is upstream:
            if self.link.client is not None:
                run.answer_due(self._stamp())
            if run.downstream is not None:
                run.downstream.cancel_goal_async()   # JTC answers CANCELED at once
            else:
                run.end_now(False)   # downstream topic: it ends now
        return CancelResponse.ACCEPT

    async def _execute(self, upstream: Any) -> Any:
        """Serve one FollowJointTrajectory goal through JTC (module docstring)."""
        Result = self.Action.Result
        result = Result()
        request, plan, msg, end = self._prepared.pop(id(upstream.request), (None,) * 4)
        if request is not upstream.request:   # cannot happen: accepted goals were prepared
            result.error_code, result.error_string = Result.INVALID_GOAL, 'not prepared'
            upstream.abort()
            return result
        run = GoalRun(upstream, plan, msg, end)
        previous, self.run = self.run, run
        self._started()
        self._event(self._accepted(plan) + (' (preempts the running goal)' if previous else ''))
        try:
            if self.link.client is None:
                self.link.publish(msg)
                self._until(end)
                run.finished = Future()
                await run.finished
                return self._end(run, None, result)

            def relay(feedback: Any) -> None:
                if self.run is run:
                    upstream.publish_feedback(feedback.feedback)
            run.answer_due(self._stamp())
            run.sending = self.link.client.send_goal_async(
                self.Action.Goal(trajectory=msg,
                                 path_tolerance=upstream.request.path_tolerance,
                                 goal_tolerance=upstream.request.goal_tolerance,
                                 goal_time_tolerance=upstream.request.goal_time_tolerance),
                feedback_callback=relay)
            handle = await run.sending
            if run.overdue:
                return self._end(run, None, result)
            if handle is None or not handle.accepted:
                result.error_code = Result.INVALID_GOAL
                result.error_string = '%s refused the plan%s' % (
                    self.link.action_name, self.link.log.refusal())
                self._event('goal aborted: %s' % result.error_string, error=True)
                upstream.abort()
                if previous is not None and previous.downstream is not None:
                    previous.downstream.cancel_goal_async()   # it would run on at JTC
                if self.run is run:
                    self.link.hold('%s refused the goal' % self.link.name)
                return result
            run.downstream = handle
            goal_time = stamp_seconds(upstream.request.goal_time_tolerance)
            run.deadline = max(end + max(goal_time, GOAL_TIME) + RESULT_GRACE,
                               self._stamp() + ANSWER_GRACE)
            if upstream.is_cancel_requested or run.reasons:
                run.answer_due(self._stamp())
                handle.cancel_goal_async()
            # JTC's result, or the preemption by a newer goal, whichever comes first: JTC
            # (4.22) sends the result of a goal it replaced only when the new one ends
            run.finished = Future()
            handle.get_result_async().add_done_callback(
                lambda answered: run.finished.done() or run.finished.set_result(
                    answered.result()))
            downstream = await run.finished
            return self._end(run, downstream or None, result)
        finally:
            if self.run is run:
                self.run = None
                self._until(-1.0)

    def _end(self, run: GoalRun, downstream: Any, result: Any) -> Any:
        """
        End the upstream goal as :func:`~manip_dynamics.control.goal_endings.goal_ending` says.

        ``downstream`` is JTC's result response (status and result), None on the topic path.
        """
        upstream = run.upstream
        jtc = None if downstream is None else JtcResult(
            GOAL_STATUS.get(downstream.status, 'unknown'), downstream.result.error_code,
            downstream.result.error_string)
        ending = goal_ending(jtc, overdue=run.overdue, preempted=run.preempted,
                             cancel_requested=upstream.is_cancel_requested,
                             contact=run.reasons[0] if run.reasons else '',
                             controller=self.link.name, action=self.link.action_name)
        if jtc is not None:
            result.error_code = jtc.error_code
        if ending.error_code is not None:
            result.error_code = getattr(self.Action.Result, ending.error_code)
        result.error_string = ending.error_string
        {'succeeded': upstream.succeed, 'canceled': upstream.canceled}.get(
            ending.status, upstream.abort)()
        # when, on the arm's clock (the newest joint state's stamp), the filter ended it:
        # a contact flag stamped later has no goal of the filter's to stop
        self._event(ending_line(ending.status, self._stamp(), result.error_string))
        self._ended(ending, run, downstream is not None)
        return result
