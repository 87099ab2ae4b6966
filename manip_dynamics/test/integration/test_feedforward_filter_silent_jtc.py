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
A goal whose result JTC never sends still ends, and the arm is held where it is.

Behind the real controller_manager with a busy core, one goal in 19 rounds never ended: the
filter waited for JTC's result for good, and the client with it. Here a JTC that accepts
goals and then says nothing more (no result, also not after a cancel) stands behind
feedforward_filter. It is JTC as far as the filter can tell (controller_state flowing, the
action served, a hold goal of one point answered at once as JTC answers a goal that has
nothing left to run); the joint states stand at one pose.

Independent references: the plan's own end and the goal time JTC is configured with
(``control.gains.GOAL_TIME``), the end of a goal as JTC reports a goal past its goal time
(ABORTED, GOAL_TOLERANCE_VIOLATED) or a canceled goal (CANCELED), and the pose the joint
states give (the hold's positions).
"""

import threading

import numpy as np
import pytest
from ros_test_support import (bundled_arm, read_log, require_interfaces, require_rclpy,
                              spun_node, STARTUP_TIMEOUT, wait_until)

require_rclpy()
require_interfaces()
pytest.importorskip('control_msgs.action', reason='control_msgs is not built (scripts/build.sh '
                    'builds test_support/control_msgs where no ROS 2 install provides it)')

from action_msgs.msg import GoalStatus  # noqa: E402, I100
from control_msgs.action import FollowJointTrajectory  # noqa: E402
from control_msgs.msg import JointTrajectoryControllerState  # noqa: E402
from rclpy.action import ActionServer, CancelResponse  # noqa: E402
from rclpy.task import Future  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Header  # noqa: E402

from manip_dynamics.control.gains import GOAL_TIME  # noqa: E402
from manip_dynamics.ros.runtime.conversions import stamp_seconds  # noqa: E402
from manip_dynamics.ros.runtime.node_process import start_node, stop_node  # noqa: E402
from manip_dynamics.ros.testing.chain_watch import quintic_plan  # noqa: E402
from manip_dynamics.ros.testing.moveit_like_client import MoveItLikeClient  # noqa: E402

pytestmark = [pytest.mark.rostest, pytest.mark.slow]

CONTROLLER = 'joint_trajectory_controller'
PLAN_TIME = 1.0
#: Wall time the test waits for each ending [s]: the plan, JTC's goal time and the filter's
#: allowance are a few seconds; the rest is a loaded machine.
ENDING_WAIT = 60.0


class SilentJtc:
    """JTC's interfaces on ``node``: state flows, goals are accepted, plans never answered."""

    def __init__(self, node, names: list, q: np.ndarray) -> None:
        self.node, self.names, self.q = node, names, q
        self.plans: list = []      # (stamp, goal) of every goal of more than one point
        self.holds: list = []      # (stamp, goal) of every one-point goal
        self.lock = threading.Lock()
        self._never = Future()
        self._states = node.create_publisher(JointState, '/joint_states', 10)
        self._jtc_state = node.create_publisher(
            JointTrajectoryControllerState, '/%s/controller_state' % CONTROLLER, 10)
        self._server = ActionServer(node, FollowJointTrajectory,
                                    '/%s/follow_joint_trajectory' % CONTROLLER, self._execute,
                                    cancel_callback=lambda _goal: CancelResponse.ACCEPT)
        node.create_timer(0.01, self._publish)

    def now(self) -> float:
        return self.node.get_clock().now().nanoseconds * 1e-9

    def _publish(self) -> None:
        stamp = self.node.get_clock().now().to_msg()
        self._states.publish(JointState(header=Header(stamp=stamp), name=self.names,
                                        position=self.q.tolist(),
                                        velocity=[0.0] * len(self.names)))
        state = JointTrajectoryControllerState(joint_names=self.names)
        state.header.stamp = stamp
        state.reference.positions = self.q.tolist()
        self._jtc_state.publish(state)

    async def _execute(self, goal):
        points = goal.request.trajectory.points
        with self.lock:
            (self.holds if len(points) == 1 else self.plans).append((self.now(), goal.request))
        if len(points) == 1:   # nothing left to run: JTC ends it at once
            goal.succeed()
            return FollowJointTrajectory.Result()
        await self._never      # the result that never comes
        return FollowJointTrajectory.Result()


def holds_after(jtc: SilentJtc, stamp: float) -> list:
    with jtc.lock:
        return [goal for sent, goal in jtc.holds if sent >= stamp]


@pytest.mark.parametrize('stop', ['none', 'cancel'])
def test_a_goal_jtc_never_answers_ends_and_the_arm_is_held(stop):
    xml, model, q0 = bundled_arm('cobot7')
    names = list(model.joint_names)
    with spun_node('silent_jtc') as probe:
        jtc = SilentJtc(probe, names, q0)
        moveit = MoveItLikeClient(probe, '/feedforward_filter/follow_joint_trajectory',
                                  clock=jtc.now, monitor=False)
        filt = start_node('feedforward_filter', 'feedforward_filter', {
            'robot_description': xml, 'downstream': 'action', 'observer_namespace': ''})
        try:
            assert moveit.wait_for_server(STARTUP_TIMEOUT), 'no filter action'
            wait_until(lambda: jtc.holds, STARTUP_TIMEOUT,
                       'the filter never held when JTC appeared:\n' + read_log(filt)[-3000:])
            target = q0.copy()
            target[0] += 0.05
            plan, _ = quintic_plan(names, q0, target, PLAN_TIME)
            execution = moveit.execute(plan)
            wait_until(lambda: jtc.plans, ENDING_WAIT, 'the plan never reached JTC:\n'
                       + read_log(filt)[-3000:])
            sent = jtc.plans[0][0]
            if stop == 'cancel':
                moveit.stop(execution)
            outcome = moveit.wait(execution, ENDING_WAIT)
            ended = jtc.now()
            wait_until(lambda: holds_after(jtc, sent), ENDING_WAIT,
                       'no hold after the goal ended:\n' + read_log(filt)[-3000:])
            log = read_log(filt)
        finally:
            stop_node(filt)
    Result = FollowJointTrajectory.Result
    if stop == 'cancel':
        assert outcome == 'CANCELED', (outcome, execution.error_string, log[-3000:])
    else:
        assert outcome == 'ABORTED', (outcome, execution.error_string, log[-3000:])
        assert execution.status == GoalStatus.STATUS_ABORTED
        # not before JTC itself could have ended it: the plan's end plus its goal time
        assert ended - sent >= PLAN_TIME + GOAL_TIME, (ended - sent, log[-3000:])
    assert execution.error_code == Result.GOAL_TOLERANCE_VIOLATED, execution.error_string
    assert 'did not send its result' in execution.error_string, execution.error_string
    hold = holds_after(jtc, sent)[0].trajectory
    assert list(hold.joint_names) == names
    np.testing.assert_allclose(hold.points[0].positions, q0, atol=1e-12)
    assert stamp_seconds(hold.points[0].time_from_start) == 0.0
    assert len(hold.points[0].effort) == len(names) and \
        np.all(np.isfinite(hold.points[0].effort))
