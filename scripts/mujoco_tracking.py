#!/usr/bin/env python3
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
One 2 s plan through feedforward_filter and JTC on an arm that is not the model: RMS error.

Takes the folder ``scripts/identify_mujoco_arm.py`` wrote and, for the description and for
the identified model in turn, runs the chain of docs/ROS2_CONTROL.md: simulator_node
(``engine: mujoco``, the true arm, lockstep) as the hardware behind the controller_manager
stand-in in its JTC mode (co-simulation at 250 Hz, jitter, skipped cycles, a busy loop on
``--busy-core``), feedforward_filter with that model filling the efforts, and a
kinematically timed quintic (a planner's plan) from the excitation's start pose, stamped to
start 0.3 s after it is sent. JTC's gains (``manip_dynamics.control.gains.design_joint_gains``)
are designed from the description for both models (``--gains described``: only the
feed-forward differs), or from each model (``--gains own``: a user who identified the arm
designs its gains again, and the rotor inertia the description omits raises them). Prints,
per run and model, the RMS of q - q_d over the plan (q_d on the plan's stamped time base, the
reference JTC tracks), the largest error at its end, and the sag of the hold before it.
Usage::

    python scripts/mujoco_tracking.py --run out/identify_mujoco [--runs 3] [--busy-core 0]
        [--gains described|own]
"""

import argparse
import os
import sys
import threading

from identify_mujoco_arm import read_run   # beside this script
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), 'manip_dynamics'))

from manip_dynamics import RobotModel  # noqa: E402
from manip_dynamics.control.gains import design_joint_gains  # noqa: E402
from manip_dynamics.ros.runtime.discovery import apply_loopback_environment  # noqa: E402
from manip_dynamics.ros.runtime.node_process import (  # noqa: E402
    start_node, stop_node, wait_for_log)

RATE = 250.0
#: The stand-in's co-simulation: a command acts over the period after the sample it answers.
DELAY_BUDGET = 2.0 / RATE
PLAN_TIME = 2.0
#: The plan's header stamp: this long [s, the arm's clock] after the last joint state seen
#: when it is sent (the filter and JTC have it well before).
START_LEAD = 0.3
#: The plan's move from the start pose [rad], as the CI chain test moves cobot7 (first n).
MOVE = np.array([0.5, 0.3, -0.4, 0.4, 0.6, -0.3, 0.8])


def run(label: str, xml: str, dynamics: dict, true_arm: str, designed: RobotModel,
        q0: np.ndarray, qb: np.ndarray, busy_core: int, seed: int) -> dict:
    """Hold at ``q0``, send the plan to ``qb`` (JTC's gains from ``designed``); return figures."""
    import rclpy

    from manip_dynamics.ros.runtime.conversions import time_msg
    from manip_dynamics.ros.testing.chain_watch import ChainWatch, quintic_plan
    from trajectory_msgs.msg import JointTrajectory

    names = list(designed.joint_names)
    gains = design_joint_gains(designed, RATE, start=q0, delay_budget=DELAY_BUDGET)
    procs = {}
    rclpy.init(args=[])
    node = rclpy.create_node('tracking_' + label)
    watch = ChainWatch(node, names)
    plans = node.create_publisher(JointTrajectory, '/feedforward_filter/joint_trajectory', 10)
    spinner = threading.Thread(target=rclpy.spin, args=(node,), daemon=True)
    spinner.start()
    try:
        procs['simulator'] = start_node('simulator_node', 'simulator', {
            'robot_description': xml, 'engine': 'mujoco', 'mujoco_model': true_arm,
            'joint_commands_topic': '/sim/joint_commands', 'controller_commands': False,
            'lockstep': True, 'publish_rate': RATE, 'brake_release': 'holding_command',
            'command_timeout': 0.5, 'initial_positions': [float(v) for v in q0]},
            remaps=('/joint_states:=/sim/joint_states',))
        procs['controller_manager'] = start_node(
            'testing.controller_manager_standin', 'controller_manager', {
                'use_sim_time': True, 'update_rate': RATE, 'jitter': 0.3,
                'skip_probability': 0.02, 'seed': float(seed), 'joints': names,
                'cosimulation': True, 'controller': 'jtc', 'busy_core': float(busy_core),
                'gains_p': gains.p.tolist(), 'gains_d': gains.d.tolist(),
                'hardware_states_topic': '/sim/joint_states',
                'hardware_commands_topic': '/sim/joint_commands'})
        procs['feedforward_filter'] = start_node('feedforward_filter', 'feedforward_filter', {
            'robot_description': xml, 'observer_namespace': '', **dynamics})
        wait_for_log(procs['simulator'], 'brakes released', 300.0)
        wait_for_log(procs['feedforward_filter'], 'JTC appeared', 300.0)
        watch.wait_simulated(2.0, 60.0, timeout=120.0)
        qa = watch.last()[1]
        sag = float(np.abs(qa - q0).max())
        plan, desired = quintic_plan(names, qa, qb, PLAN_TIME)
        sent = watch.last()[0]
        # stamped: JTC starts it then, and q - q_d is read on that time base (the start
        # read from the arm's first motion would be its late breakaway from dry friction)
        start = sent + START_LEAD
        plan.header.stamp = time_msg(start)
        plans.publish(plan)
        watch.wait_simulated(START_LEAD + PLAN_TIME + 1.5, 60.0, timeout=120.0)
        rms = watch.tracking_rms(sent, desired, qa, PLAN_TIME, start=start)
        end = float(np.abs(watch.last()[1] - qb).max())
    finally:
        for proc in procs.values():
            stop_node(proc)
        node.destroy_node()
        rclpy.try_shutdown()
        spinner.join(5.0)
    return {'model': label, 'rms_mrad': round(1e3 * rms, 2), 'end_mrad': round(1e3 * end, 2),
            'hold_sag_mrad': round(1e3 * sag, 2)}


def main(argv: list[str] | None = None) -> int:
    """Run both models ``--runs`` times; print each run's figures and the medians."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[1])
    parser.add_argument('--run', required=True, help='folder identify_mujoco_arm.py wrote')
    parser.add_argument('--runs', type=int, default=3, help='runs per model (3)')
    parser.add_argument('--busy-core', type=int, default=0,
                        help='core of a busy loop for the whole run (0; -1: none)')
    parser.add_argument('--gains', choices=('described', 'own'), default='described',
                        help="JTC's gains from the description for both models, or from "
                        'each model (described)')
    args = parser.parse_args(argv)
    apply_loopback_environment()
    found = read_run(args.run)
    q0 = found['start']
    described = RobotModel.from_urdf_string(found['described'])
    identified = (RobotModel.from_urdf_string(found['identified']).with_joint_dynamics(
        **found['overrides']) if args.gains == 'own' else described)
    qb = np.clip(q0 + MOVE[:described.dof], described.position_lower + 0.05,
                 described.position_upper - 0.05)
    figures: dict[str, list] = {'described': [], 'identified': []}
    for k in range(args.runs):
        for label, xml, extra, designed in (
                ('described', found['described'], {}, described),
                ('identified', found['identified'], found['dynamics'], identified)):
            result = run(label, xml, extra, found['true_arm'], designed, q0, qb,
                         args.busy_core, k)
            figures[label].append(result['rms_mrad'])
            print({'run': k + 1, **result}, flush=True)
    before, after = np.median(figures['described']), np.median(figures['identified'])
    print('RMS tracking error of the 2 s plan, median of %d runs (gains: %s): %.2f mrad with '
          'the description, %.2f mrad identified (%.1fx lower)' % (
              args.runs, args.gains, before, after, before / after))
    return 0


if __name__ == '__main__':
    sys.exit(main())
