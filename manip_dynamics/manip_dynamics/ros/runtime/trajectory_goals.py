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
FollowJointTrajectory for a node that tracks trajectories itself (trajectory_controller).

As joint_trajectory_controller serves it, so MoveIt can send plans directly: one goal at a
time, a new one preempting the running one (ABORTED, INVALID_GOAL, "preempted by a new
goal"); a goal refused when it arrives for what is known then (the node's ``check``); a
cancel acted on at once (the node holds the current pose; CANCELED); the other endings as
the node's ``ending`` reads them from its control steps (SUCCESSFUL; PATH_TOLERANCE_VIOLATED
with the reason). Served only where control_msgs is installed (every apt ROS 2).
"""

from typing import Any, Callable

import numpy as np
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.task import Future
from trajectory_msgs.msg import JointTrajectory

#: The text of a goal ended by a cancel.
CANCELED_TEXT = 'canceled: holding the current pose'


class TrajectoryGoals:
    """The node's ``~/follow_joint_trajectory`` action server and its running goal."""

    def __init__(self, node: Any, action: Any, *, check: Callable[[Any], None],
                 start: Callable[[JointTrajectory], Any],
                 hold_here: Callable[[np.ndarray | None], None],
                 ending: Callable[[Any], tuple | None]) -> None:
        """
        Serve the action on ``node``.

        :param action: :func:`~manip_dynamics.ros.runtime.jtc_messages.follow_joint_trajectory`.
        :param check: Raises ValueError with the reason a goal request is refused.
        :param start: Starts following a goal's trajectory (ValueError: refused).
        :param hold_here: Stops and holds the given pose (None: the newest known).
        :param ending: For one control step's command: None while the goal runs, else
            (result constant name, text).
        """
        self.node = node
        self.Action = action
        self._check, self._start, self._hold_here, self._ending = check, start, hold_here, ending
        self._goal = None   # (goal handle, rclpy Future of (error code, text))
        self.server = ActionServer(node, action, '~/follow_joint_trajectory', self._execute,
                                   goal_callback=self._on_goal,
                                   cancel_callback=self._on_cancel)
        self.name = node.resolve_topic_name('~/follow_joint_trajectory')

    def _wake(self) -> None:
        # the goal's coroutine waits on the executor, which sleeps while a lane works
        if self.node.executor is not None:
            self.node.executor.wake()

    def _on_goal(self, request: Any) -> Any:
        try:
            if request.multi_dof_trajectory.points:
                raise ValueError('the goal has a multi-DOF part: single-DOF joints only')
            self._check(request)
        except ValueError as error:
            self.node.get_logger().error('goal refused: %s' % error)
            return GoalResponse.REJECT
        return GoalResponse.ACCEPT

    def _on_cancel(self, handle: Any) -> Any:
        # at once, not at the next joint state: stop and hold the current pose
        goal = self._goal
        if goal is not None and goal[0] is handle and not goal[1].done():
            with self.node.callback_lock:
                self._hold_here(None)
                goal[1].set_result((None, CANCELED_TEXT))
            self._wake()
        return CancelResponse.ACCEPT

    async def _execute(self, handle: Any) -> Any:
        """Follow the goal's trajectory; its outcome comes from :meth:`step`."""
        result = self.Action.Result()
        outcome = Future()
        # the coroutine runs outside the node's callbacks: their lock around what they read
        with self.node.callback_lock:
            previous = self._goal
            if previous is not None and not previous[1].done():
                previous[1].set_result((result.INVALID_GOAL, 'preempted by a new goal'))
            try:
                self._start(handle.request.trajectory)
            except ValueError as error:
                refused = error
            else:
                refused = None
                self._goal = (handle, outcome)
        if refused is not None:
            result.error_code = result.INVALID_GOAL
            result.error_string = str(refused)
            self.node.get_logger().error('goal refused: %s' % refused)
            handle.abort()
            return result
        code, text = await outcome
        result.error_string = text
        if handle.is_cancel_requested and code in (None, result.SUCCESSFUL):
            handle.canceled()   # CANCELED, as JTC answers a cancel
        elif code == result.SUCCESSFUL:
            result.error_code = code
            handle.succeed()
        else:   # a preemption (JTC: INVALID_GOAL), a tracking error or a contact
            result.error_code = code if code is not None else result.INVALID_GOAL
            handle.abort()
        return result

    def step(self, command: Any, q: np.ndarray) -> None:
        """End the running goal where one control step ends it (``command`` at pose ``q``)."""
        goal = self._goal
        if goal is None or goal[1].done():
            return
        handle, outcome = goal
        if handle.is_cancel_requested:
            self._hold_here(q)
            outcome.set_result((None, CANCELED_TEXT))
        else:
            ended = self._ending(command)
            if ended is None:
                return
            outcome.set_result((getattr(self.Action.Result, ended[0]), ended[1]))
        self._wake()
