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
A FollowJointTrajectory client that behaves as MoveIt's execution does: test support.

Written from what MoveIt's simple controller manager and trajectory execution manager do
(moveit2 main): a goal carries the plan with empty tolerances (the controller's defaults
apply) and its multi-DOF part as planned; a new plan may be sent while one runs (a
continuation: the controller preempts the old goal); stopping cancels the running goal;
``execution_duration_monitoring`` (on by default) cancels an execution still running past
``allowed_execution_duration_scaling`` (1.1) x its expected duration +
``allowed_goal_duration_margin`` (0.5 s); a goal the server rejects is logged as "Goal was
rejected by server" and the execution fails.

Goals are sent and canceled from the spinning executor's own thread (rclpy's action client
dropped goal responses when called from another thread), so the caller's thread only waits.
"""

from dataclasses import dataclass, field
import threading
import time
from typing import Any, Callable

from action_msgs.msg import GoalStatus
from trajectory_msgs.msg import JointTrajectory

from manip_dynamics.ros.runtime.conversions import stamp_seconds

#: MoveIt's trajectory_execution defaults.
DURATION_SCALING = 1.1
DURATION_MARGIN = 0.5
#: The outcome of a finished goal's action_msgs/GoalStatus.
STATUS_NAMES = {GoalStatus.STATUS_SUCCEEDED: 'SUCCEEDED', GoalStatus.STATUS_CANCELED: 'CANCELED',
                GoalStatus.STATUS_ABORTED: 'ABORTED'}


@dataclass
class Execution:
    """One goal as MoveIt sees it (filled in from the executor's thread)."""

    trajectory: JointTrajectory
    sent: float                   # the client's clock when sent [s]
    monitored_from: float = 0.0   # the monitor's clock when sent [s]
    accepted: bool | None = None  # None until the server answers
    status: int | None = None     # action_msgs/GoalStatus once finished
    error_code: int | None = None
    error_string: str = ''
    canceled_by_monitor: bool = False
    handle: Any = None
    log: list = field(default_factory=list)
    done: threading.Event = field(default_factory=threading.Event)

    @property
    def expected_duration(self) -> float:
        """The plan's duration [s] (its last point's time_from_start)."""
        return stamp_seconds(self.trajectory.points[-1].time_from_start)

    def outcome(self) -> str:
        """Return 'REJECTED', 'SUCCEEDED', 'CANCELED', 'ABORTED' or 'RUNNING'."""
        if self.accepted is False:
            return 'REJECTED'
        return STATUS_NAMES.get(self.status, 'RUNNING')


class MoveItLikeClient:
    """Send plans as MoveIt does, from ``node``'s executor thread (module docstring)."""

    def __init__(self, node: Any, action_name: str,
                 clock: Callable[[], float] | None = None, monitor: bool = True,
                 monitor_clock: Callable[[], float] | None = None) -> None:
        """
        Create the action client on ``node`` (spun by an executor elsewhere).

        :param action_name: The FollowJointTrajectory action, e.g.
            ``/feedforward_filter/follow_joint_trajectory``.
        :param clock: The clock of :attr:`Execution.sent` [s]; default the monotonic clock.
        :param monitor: Cancel executions past 1.1 x duration + 0.5 s (MoveIt's default).
        :param monitor_clock: The clock the duration monitor reads [s]: MoveIt's ROS time,
            the simulated time where the arm is simulated, else the system clock; default
            ``clock``. Not a test probe's view of the joint states where that view lags
            by a varying amount: a goal sent while it lagged 0.7 s was canceled after 2.04
            s of a 2 s plan (allowed: 2.7 s).
        """
        from control_msgs.action import FollowJointTrajectory
        from rclpy.action import ActionClient
        self._Action = FollowJointTrajectory
        self.node = node
        self.clock = clock or time.monotonic
        self.monitor = monitor
        self.monitor_clock = monitor_clock or self.clock
        self.client = ActionClient(node, FollowJointTrajectory, action_name)
        self.running: list[Execution] = []
        self._timer = node.create_timer(0.01, self._monitor)

    def wait_for_server(self, timeout: float) -> bool:
        """Wait for the action server [s of wall time]; return whether it is there."""
        return self.client.wait_for_server(timeout_sec=timeout)

    def execute(self, trajectory: JointTrajectory, multi_dof: Any = None,
                goal_tolerance: float = 0.0, goal_time_tolerance: float = 0.0) -> Execution:
        """
        Send ``trajectory`` as a goal with empty tolerances; return its :class:`Execution`.

        :param multi_dof: A trajectory_msgs/MultiDOFJointTrajectory to forward (MoveIt
            forwards the plan's multi-DOF part); None = empty.
        :param goal_tolerance: > 0: a goal position tolerance for every joint [rad or m]
            (not what MoveIt sends: to make a goal end off target in a test).
        :param goal_time_tolerance: > 0: the goal's time tolerance [s] (likewise).
        """
        from control_msgs.msg import JointTolerance
        execution = Execution(trajectory, self.clock(), self.monitor_clock())
        goal = self._Action.Goal(trajectory=trajectory)
        if multi_dof is not None:
            goal.multi_dof_trajectory = multi_dof
        if goal_tolerance > 0.0:
            goal.goal_tolerance = [JointTolerance(name=name, position=goal_tolerance)
                                   for name in trajectory.joint_names]
        if goal_time_tolerance > 0.0:
            sec, nanosec = divmod(int(round(goal_time_tolerance * 1e9)), 1_000_000_000)
            goal.goal_time_tolerance.sec, goal.goal_time_tolerance.nanosec = sec, nanosec

        async def send() -> None:
            handle = await self.client.send_goal_async(goal)
            execution.accepted = bool(handle is not None and handle.accepted)
            if not execution.accepted:
                execution.log.append('Goal was rejected by server')
                execution.done.set()
                return
            execution.handle = handle
            self.running.append(execution)
            response = await handle.get_result_async()
            execution.status = response.status
            execution.error_code = response.result.error_code
            execution.error_string = response.result.error_string
            if execution in self.running:
                self.running.remove(execution)
            execution.done.set()
        self.node.executor.create_task(send)
        return execution

    def stop(self, execution: Execution) -> None:
        """Cancel ``execution`` (MoveIt's stop), from the executor's thread."""
        async def cancel() -> None:
            if execution.handle is not None:
                await execution.handle.cancel_goal_async()
        self.node.executor.create_task(cancel)

    def _monitor(self) -> None:
        """Cancel an execution that runs too long (MoveIt's execution_duration_monitoring)."""
        if not self.monitor:
            return
        now = self.monitor_clock()
        for execution in list(self.running):
            allowed = DURATION_SCALING * execution.expected_duration + DURATION_MARGIN
            if not execution.canceled_by_monitor and now - execution.monitored_from > allowed:
                execution.canceled_by_monitor = True
                execution.log.append('execution took longer than %.2f s: canceled' % allowed)
                execution.handle.cancel_goal_async()

    def wait(self, execution: Execution, timeout: float) -> str:
        """Wait for ``execution`` to end [s of wall time]; return its outcome."""
        execution.done.wait(timeout)
        return execution.outcome()
