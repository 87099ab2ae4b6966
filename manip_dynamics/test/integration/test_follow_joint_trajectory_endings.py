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
Every way a FollowJointTrajectory goal ends, as MoveIt drives feedforward_filter -> JTC.

The chain: the simulator in lockstep behind the controller_manager stand-in in its JTC mode
(JTC's endings: preemption aborts the old goal, cancel and aborts hold positions with the
effort JTC's hold message carries, tolerances from ``constraints``; JTC starts inactive as
control.launch.py loads it), the external-torque observer and feedforward_filter; a client
that behaves as MoveIt's execution does (:mod:`manip_dynamics.ros.testing.moveit_like_client`).
One round: a goal while JTC is inactive, a plan with a continuation goal mid-move and a push
on the second goal, a plan canceled mid-move, a goal that ends off target, a plan on a joint
subset.

Independent references: JTC's documented endings (status and error code of each), the arm's
own pose when a goal ended (a hold without gravity torques sags by ``g / p``: tens to
hundreds of mrad on cobot7), the push's start time from the simulator.
"""

import os

import numpy as np
import pytest
from ros_test_support import (bundled_arm, call_service, read_log, require_interfaces,
                              require_rclpy, spun_node, STARTUP_TIMEOUT, wait_simulated,
                              wait_until)

require_rclpy()
require_interfaces()
pytest.importorskip('control_msgs.action', reason='control_msgs is not built (scripts/build.sh '
                    'builds test_support/control_msgs where no ROS 2 install provides it)')

from follow_joint_trajectory_round import (  # noqa: E402, I100
    check_rounds, ended_at, INVALID_GOAL, MOVE, PLAN_TIME, run_round)
from std_srvs.srv import SetBool  # noqa: E402

from manip_dynamics import RobotModel  # noqa: E402
from manip_dynamics.control.gains import design_joint_gains, trajectory_tolerances  # noqa: E402
from manip_dynamics.demo.scenario import config_parameters  # noqa: E402
from manip_dynamics.ros.runtime.node_process import start_node, stop_node  # noqa: E402
from manip_dynamics.ros.testing.chain_watch import ChainWatch, quintic_plan  # noqa: E402
from manip_dynamics.ros.testing.moveit_like_client import MoveItLikeClient  # noqa: E402

pytestmark = [pytest.mark.rostest, pytest.mark.slow, pytest.mark.realtime]

RATE = 500.0
DELAY_BUDGET = 2.0 / RATE
#: Rounds per test run (the campaign by hand runs more: MANIP_DYNAMICS_ENDINGS_ROUNDS).
ROUNDS = int(os.environ.get('MANIP_DYNAMICS_ENDINGS_ROUNDS', '1'))


def start_chain(xml: str, model: RobotModel, q0: np.ndarray, downstream: str = 'auto',
                jtc_active: bool = False) -> dict:
    """Start simulator, stand-in (JTC inactive), observer and filter; return the processes."""
    gains = design_joint_gains(model, RATE, start=q0, delay_budget=DELAY_BUDGET)
    tolerances = trajectory_tolerances(model, gains.p)
    names = list(model.joint_names)
    procs = {}
    procs['simulator'] = start_node('simulator_node', 'simulator', {
        'robot_description': xml, 'joint_commands_topic': '/sim/joint_commands',
        'controller_commands': False, 'lockstep': True, 'publish_rate': RATE,
        'brake_release': 'holding_command', 'command_timeout': 0.5},
        remaps=('/joint_states:=/sim/joint_states',))
    procs['controller_manager'] = start_node(
        'testing.controller_manager_standin', 'controller_manager', {
            'use_sim_time': True, 'update_rate': RATE, 'jitter': 0.3,
            'skip_probability': 0.02, 'seed': 7.0, 'joints': names,
            'cosimulation': True, 'controller': 'jtc', 'jtc_active': jtc_active,
            'gains_p': gains.p.tolist(), 'gains_d': gains.d.tolist(),
            'constraints_trajectory': tolerances.trajectory.tolist(),
            'constraints_goal': tolerances.goal.tolist(),
            'constraints_stopped_velocity_tolerance': tolerances.stopped_velocity,
            'constraints_goal_time': tolerances.goal_time,
            'hardware_states_topic': '/sim/joint_states',
            'hardware_commands_topic': '/sim/joint_commands'})
    procs['external_torque_observer'] = start_node(
        'external_torque_observer', 'external_torque_observer', {
            'robot_description': xml, **config_parameters('external_torque_observer')})
    procs['feedforward_filter'] = start_node('feedforward_filter', 'feedforward_filter',
                                             {'robot_description': xml,
                                              'downstream': downstream})
    return procs


def test_every_ending_is_jtcs_and_leaves_the_arm_held():
    xml, model, q0 = bundled_arm('cobot7')
    with spun_node('endings_probe') as probe:
        watch = ChainWatch(probe, list(model.joint_names))
        moveit = MoveItLikeClient(probe, '/feedforward_filter/follow_joint_trajectory',
                                  clock=lambda: watch.last()[0] if watch.states else 0.0)
        procs = start_chain(xml, model, q0)
        rounds = []
        try:
            assert moveit.wait_for_server(STARTUP_TIMEOUT), 'no filter action'
            wait_until(lambda: watch.states, STARTUP_TIMEOUT, 'no joint states')

            def activate(active: bool) -> None:
                # the stand-in has no compensation to hold the arm while JTC is inactive:
                # JTC starts inactive and is activated once
                assert active
                answer = call_service(probe, SetBool, '/controller_manager/activate_jtc',
                                      SetBool.Request(data=True), 10.0)
                assert answer.success, answer.message
                wait_until(lambda: 'brakes released' in read_log(procs['simulator']),
                           STARTUP_TIMEOUT, 'the arm was never held:\n'
                           + read_log(procs['feedforward_filter'])[-3000:])
                wait_simulated(watch, 1.0)

            for k in range(ROUNDS):
                # in lockstep the simulator's clock is the joint states' clock
                rounds.append(run_round(probe, watch, moveit, model, q0,
                                        activate if k == 0 else None,
                                        lambda answer, _requested: answer.start_time,
                                        jtc_active=k > 0))
        finally:
            logs = {name: read_log(proc) for name, proc in procs.items()}
            for proc in procs.values():
                stop_node(proc)
    for k, out in enumerate(rounds):
        shown = {key: value for key, value in out.items() if key != 'events'}
        print('endings round %d: %s' % (k, shown))
    if os.environ.get('MANIP_DYNAMICS_ENDINGS_EVENTS'):
        print('\n'.join(rounds[-1]['events']))
    check_rounds(rounds, logs['feedforward_filter'])


def test_on_jtcs_topic_an_action_goal_ends_with_its_plan_and_is_preempted_or_canceled():
    """``downstream: topic``: no result before the plan's time is up; preemption and cancel."""
    xml, model, q0 = bundled_arm('cobot7')
    names = list(model.joint_names)
    with spun_node('topic_endings_probe') as probe:
        watch = ChainWatch(probe, names)
        moveit = MoveItLikeClient(probe, '/feedforward_filter/follow_joint_trajectory',
                                  clock=lambda: watch.last()[0] if watch.states else 0.0,
                                  monitor=False)
        procs = start_chain(xml, model, q0, downstream='topic', jtc_active=True)
        try:
            assert moveit.wait_for_server(STARTUP_TIMEOUT), 'no filter action'
            wait_until(lambda: 'brakes released' in read_log(procs['simulator']),
                       STARTUP_TIMEOUT, 'the arm was never held:\n'
                       + read_log(procs['feedforward_filter'])[-3000:])
            # the observer's start-up transient (flags within about 1 s of the release)
            wait_simulated(watch, 2.0)
            here = watch.last()[1]
            plan, _ = quintic_plan(names, here, q0 + 0.3 * MOVE, PLAN_TIME)
            execution = moveit.execute(plan)
            ended = ended_at(watch, execution, 60.0)
            full = (execution.outcome(), ended - execution.sent)
            plan, _ = quintic_plan(names, watch.last()[1], q0, PLAN_TIME)
            first = moveit.execute(plan)
            wait_simulated(watch, 0.5)
            plan, _ = quintic_plan(names, watch.last()[1], q0, PLAN_TIME)
            second = moveit.execute(plan)
            ended_at(watch, first)
            wait_simulated(watch, 0.5)
            moveit.stop(second)
            ended_at(watch, second)
        finally:
            logs = {name: read_log(proc) for name, proc in procs.items()}
            for proc in procs.values():
                stop_node(proc)
    # the result waits for the plan's time on the arm's clock (before: SUCCEEDED at once);
    # the probe's view of that clock lags by a varying 0.1 s or so on a loaded machine
    # (1.91 s seen for a 2 s plan), so the bound leaves a quarter of the plan for it
    assert full[0] == 'SUCCEEDED', (full, logs['feedforward_filter'][-2000:])
    assert full[1] >= 0.75 * PLAN_TIME, full
    assert (first.outcome(), first.error_code) == ('ABORTED', INVALID_GOAL)
    assert second.outcome() == 'CANCELED', (second, logs['feedforward_filter'][-2000:])
