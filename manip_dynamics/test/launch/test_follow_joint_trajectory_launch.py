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
Every way a FollowJointTrajectory goal ends, through control.launch.py and the real JTC.

``ros2 launch manip_dynamics control.launch.py`` (no RViz, no robot_state_publisher): the
real controller_manager with the topic-based hardware and the simulator, the arm held by the
gravity compensation, joint_trajectory_controller (JTC) loaded inactive, feedforward_filter
and the external-torque observer. A client that behaves as MoveIt's execution does
(:mod:`manip_dynamics.ros.testing.moveit_like_client`) runs the rounds of
test/follow_joint_trajectory_round.py: per round a goal while JTC is inactive (refused at goal
time), the switch from the compensation to JTC, a plan with a continuation goal
mid-move and a push on the second goal, a plan canceled mid-move, a goal that ends off
target (JTC's own goal tolerance check, from the ``constraints`` the launch writes), a plan
on a joint subset. The same round runs in CI behind the controller_manager stand-in
(test/integration/test_follow_joint_trajectory_endings.py); here JTC's endings are JTC's.

Rounds: ``MANIP_DYNAMICS_ENDINGS_ROUNDS`` (default 1). One line of figures per round is
printed (``pytest -s``). A plain pytest module; it skips with the reason where ``ros2
launch``, the ros2_control packages, a JTC with the effort feed-forward or control_msgs are
missing (CI: none of them is on PyPI).
"""

import os
import threading
import time

from launch_support import (CHAIN_STARTUP, feedforward_jtc_missing, log_text,
                            PROBE_PRIORITY, ros2_control_missing, ros2_launch_missing,
                            switch_to_jtc, wait_for_bringup)
import pytest
from ros_test_support import bundled_arm, push_ros_time, wait_until

pytestmark = [pytest.mark.rostest, pytest.mark.slow, pytest.mark.launch_test,
              pytest.mark.realtime]

REASON = ros2_launch_missing() or ros2_control_missing() or feedforward_jtc_missing()
if REASON:
    pytest.skip(REASON, allow_module_level=True)

import rclpy  # noqa: E402, I100
from rclpy.executors import SingleThreadedExecutor  # noqa: E402

from follow_joint_trajectory_round import check_rounds, run_round  # noqa: E402, I100

from manip_dynamics.ros.runtime.node_runtime import (  # noqa: E402
    apply_thread_priority, freeze_startup_objects)
from manip_dynamics.ros.testing.chain_watch import ChainWatch  # noqa: E402
from manip_dynamics.ros.testing.moveit_like_client import MoveItLikeClient  # noqa: E402

#: Bound on the contact flag's stamp after the push began [s] (the stand-in test's, 0.1 s, in
#: lockstep; here the push's start is known to within the simulator's clock).
FLAG_LATENCY = 0.2
ROUNDS = int(os.environ.get('MANIP_DYNAMICS_ENDINGS_ROUNDS', '1'))


def test_every_ending_through_the_real_jtc_leaves_the_arm_held(chain_launched):
    proc, log = chain_launched
    _, model, q0 = bundled_arm('cobot7')
    rclpy.init()
    node = rclpy.create_node('test_follow_joint_trajectory_launch')
    watch = ChainWatch(node, list(model.joint_names))
    # the duration monitor on MoveIt's clock here, ROS time = the system clock as
    # controller_manager's (the probe's view of the joint states lags by a varying amount)
    moveit = MoveItLikeClient(node, '/feedforward_filter/follow_joint_trajectory',
                              clock=lambda: watch.last()[0] if watch.states else 0.0,
                              monitor_clock=lambda: node.get_clock().now().nanoseconds * 1e-9)
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    spin = threading.Thread(target=executor.spin, daemon=True)
    spin.start()
    # the measuring side at the nodes' priority (a test process on the normal scheduler
    # missed joint states for up to 0.7 s on a busy machine)
    refused = apply_thread_priority(PROBE_PRIORITY)
    # and without the interpreter's pauses for its oldest objects (the nodes' run_node does
    # the same; MoveIt, in C++, has none)
    freeze_startup_objects()
    rounds = []
    try:
        wait_for_bringup(node, proc, log, CHAIN_STARTUP)
        wait_until(lambda: watch.states, 30.0, 'no /joint_states')
        assert moveit.wait_for_server(CHAIN_STARTUP), 'no filter action'
        wait_until(lambda: node.count_publishers('/feedforward_filter/events') > 0, 30.0,
                   'no /feedforward_filter/events')
        time.sleep(2.0)   # held by the compensation

        def push_start(answer, requested: float) -> float:
            # the push's start on the joint states' clock (controller_manager's ROS time):
            # the ROS time the simulator gives in its answer (the push acts from its next
            # step, controller_manager reads that at its next update: a few ms later), never
            # before the request. Not the newest stamp at the request (the simulator's own
            # stamps lag controller_manager's clock in lockstep): with it the service's
            # delay, up to 2.6 s on the loaded machine, counted as the observer's latency
            ros_time = push_ros_time(answer)
            return max(requested, ros_time if ros_time is not None else requested)

        def switch(active: bool) -> None:
            # to JTC: the filter holds the arm when JTC appears; back: the compensation
            with watch.lock:
                before = sum(e.startswith('hold: JTC appeared') for e in watch.events)
            switch_to_jtc(node, active)
            if active:
                wait_until(lambda: sum(e.startswith('hold: JTC appeared')
                                       for e in watch.events) > before,
                           10.0, 'the filter did not hold when JTC became active: %s'
                           % watch.events[-6:])
            time.sleep(3.0)   # the switch's dip (docs/ROS2_CONTROL.md) and back

        for k in range(ROUNDS):
            assert proc.poll() is None, 'the launch ended:\n' + log_text(log)[-3000:]
            # every round: a goal while JTC is inactive (the compensation holds the arm),
            # then the switch to JTC
            rounds.append(run_round(node, watch, moveit, model, q0, switch, push_start,
                                    jtc_active=k > 0))
            shown = {key: value for key, value in rounds[-1].items() if key != 'events'}
            print('endings round %d (real JTC): %s' % (k, shown), flush=True)
        text = log_text(log)
    finally:
        executor.shutdown()
        spin.join(timeout=2.0)
        node.destroy_node()
        rclpy.try_shutdown()
    if refused:
        print('endings: the test process stayed on the normal scheduler: %s' % refused)
    check_rounds(rounds, text, FLAG_LATENCY)
