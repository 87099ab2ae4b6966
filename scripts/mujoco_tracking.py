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

``--launch``: the same plan through ``ros2 launch manip_dynamics control.launch.py
hardware:=mujoco`` instead, as a ROS user runs it: the real controller_manager and
joint_trajectory_controller (500 Hz, the launch's defaults) behind the topic-based hardware,
the suite's nodes given the description, or the identified URDF with ``joint_dynamics:=``
(``observer:=false``: with the description it flags contact all along and the filter stops
the plan; scripts/mujoco_moves.py counts those);
JTC's gains are written from the description for both (``--gains described``) or by the
launch from the URDF it is given (``own``: without the rotor inertia, which only the
joint_dynamics file holds). The compensation holds the arm, the test switches to JTC in one
call, the filter holds, then the plan goes to the filter's topic; the busy loop is a process
pinned to ``--busy-core``. Needs ``ros2 launch`` and the ros2_control packages (not on PyPI).
Usage::

    python scripts/mujoco_tracking.py --run out/identify_mujoco [--runs 3] [--busy-core 0]
        [--gains described|own] [--launch [--moves 20]]
"""

import argparse
import contextlib
import os
import sys
import tempfile
import threading
import time

from identify_mujoco_arm import read_run   # beside this script
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), 'manip_dynamics'))

from manip_dynamics import RobotModel  # noqa: E402
from manip_dynamics.control.gains import design_joint_gains  # noqa: E402
from manip_dynamics.ros.runtime.discovery import apply_loopback_environment  # noqa: E402
from manip_dynamics.ros.runtime.node_process import (  # noqa: E402
    start_busy_loop, start_node, stop_node, wait_for_log)

RATE = 250.0
#: The stand-in's co-simulation: a command acts over the period after the sample it answers.
DELAY_BUDGET = 2.0 / RATE
#: controller_manager's rate in --launch (control.launch.py's default update_rate) [Hz].
LAUNCH_RATE = 500.0
#: After each of --moves' plans, this long is still counted [s].
SETTLE = 0.5
PLAN_TIME = 2.0
#: The plan's header stamp: this long [s, the arm's clock] after the last joint state seen
#: when it is sent (the filter and JTC have it well before).
START_LEAD = 0.3
#: The plan's move from the start pose [rad], as the CI chain test moves cobot7 (first n).
MOVE = np.array([0.5, 0.3, -0.4, 0.4, 0.6, -0.3, 0.8])


def spin_until_shutdown(node) -> None:
    """Spin ``node`` until rclpy shuts down (the shutdown ends it quietly)."""
    import rclpy
    from rclpy.executors import ExternalShutdownException
    try:
        rclpy.spin(node)
    except ExternalShutdownException:
        pass


def send_plan(watch, plans, names: list, qa: np.ndarray, qb: np.ndarray) -> tuple:
    """
    Publish the 2 s quintic from ``qa`` to ``qb``; return (sent, start [s], desired).

    The plan is stamped to start ``START_LEAD`` after the newest joint state: JTC starts it
    then, and q - q_d is read on that time base (the start read from the arm's first motion
    would be its late breakaway from dry friction).
    """
    from manip_dynamics.ros.runtime.conversions import time_msg
    from manip_dynamics.ros.testing.chain_watch import quintic_plan

    plan, desired = quintic_plan(names, qa, qb, PLAN_TIME)
    sent = watch.last()[0]
    start = sent + START_LEAD
    plan.header.stamp = time_msg(start)
    plans.publish(plan)
    return sent, start, desired


def plan_and_measure(watch, plans, names: list, qa: np.ndarray,
                     qb: np.ndarray) -> tuple[float, float]:
    """Send the plan (:func:`send_plan`); return its RMS error and the end error [rad]."""
    sent, start, desired = send_plan(watch, plans, names, qa, qb)
    watch.wait_simulated(START_LEAD + PLAN_TIME + 1.5, 60.0, timeout=120.0)
    rms = watch.tracking_rms(sent, desired, qa, PLAN_TIME, start=start)
    return rms, float(np.abs(watch.last()[1] - qb).max())


def run(label: str, xml: str, dynamics: dict, true_arm: str, designed: RobotModel,
        q0: np.ndarray, qb: np.ndarray, busy_core: int, seed: int) -> dict:
    """Hold at ``q0``, send the plan to ``qb`` (JTC's gains from ``designed``); return figures."""
    import rclpy

    from manip_dynamics.ros.testing.chain_watch import ChainWatch
    from trajectory_msgs.msg import JointTrajectory

    names = list(designed.joint_names)
    gains = design_joint_gains(designed, RATE, start=q0, delay_budget=DELAY_BUDGET)
    procs = {}
    rclpy.init(args=[])
    node = rclpy.create_node('tracking_' + label)
    watch = ChainWatch(node, names)
    plans = node.create_publisher(JointTrajectory, '/feedforward_filter/joint_trajectory', 10)
    spinner = threading.Thread(target=spin_until_shutdown, args=(node,), daemon=True)
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
        rms, end = plan_and_measure(watch, plans, names, qa, qb)
    finally:
        for proc in procs.values():
            stop_node(proc)
        node.destroy_node()
        rclpy.try_shutdown()
        spinner.join(5.0)
    return {'model': label, 'rms_mrad': round(1e3 * rms, 2), 'end_mrad': round(1e3 * end, 2),
            'hold_sag_mrad': round(1e3 * sag, 2)}


@contextlib.contextmanager
def busy_loop(core: int):
    """Keep ``core`` busy with a spinning process (none for a negative core)."""
    proc = start_busy_loop(core)
    try:
        yield
    finally:
        if proc is not None:
            proc.kill()
            proc.wait()


def run_launched(label: str, urdf_file: str, dynamics_file: str, true_arm: str,
                 controllers: str, folder: str, moves: int = 0, seed: int = 0) -> dict:
    """
    The plan through ``ros2 launch control.launch.py hardware:=mujoco``; return figures.

    :param urdf_file: The suite's description (the launch's ``urdf``).
    :param dynamics_file: Its joint_dynamics file, or ''.
    :param true_arm: The MuJoCo arm (``mujoco_model``).
    :param controllers: A controller_manager parameter file, or '' (the launch writes it).
    :param folder: Where the launch's log goes.
    :param moves: 0: the tracking figure (observer off). More: the observer on (the launch's
        default, ``stiction`` true on MuJoCo) and that many undisturbed 2 s plans to seeded
        targets within 0.3 rad of the held pose; the moves with a contact flag stamped
        within the plan (and ``SETTLE`` after it) are counted, and the largest normalised
        residual over them.
    :param seed: Seed of those targets.
    """
    import rclpy

    from manip_dynamics.ros.runtime.conversions import stamp_seconds
    from manip_dynamics.ros.runtime.qos import CONTACT_QOS
    from manip_dynamics.ros.testing.chain_watch import ChainWatch
    from manip_dynamics.ros.testing.control_launch import (launched_control, switch_to_jtc,
                                                           wait_for_bringup)
    from manip_dynamics_interfaces.msg import Contact
    from trajectory_msgs.msg import JointTrajectory

    with open(urdf_file, encoding='utf-8') as stream:
        model = RobotModel.from_urdf_string(stream.read())
    names = list(model.joint_names)
    # no observer: with the description's model it flags contact all along (its gravity is
    # up to 4 N m off; scripts/mujoco_moves.py counts that) and the filter would stop the
    # plan, so the figure would be a stopped plan's, not tracking (the stand-in runs above
    # have no observer either)
    arguments = ['hardware:=mujoco', 'mujoco_model:=' + true_arm, 'urdf:=' + urdf_file,
                 'rviz:=false', 'robot_state_publisher:=false',
                 'observer:=%s' % ('true' if moves else 'false')]
    if dynamics_file:
        arguments.append('joint_dynamics:=' + dynamics_file)
    if controllers:
        arguments.append('controllers:=' + controllers)
    log_path = os.path.join(folder, 'launch_%s_%d.log' % (label, time.time_ns()))
    # closing: Ctrl-C to the whole launch and its log closed, however this ends
    with contextlib.closing(launched_control(log_path, arguments)) as launched:
        launch, log = next(launched)
        rclpy.init(args=[])
        node = rclpy.create_node('tracking_' + label)
        watch = ChainWatch(node, names)
        plans = node.create_publisher(JointTrajectory, '/feedforward_filter/joint_trajectory', 10)
        residuals: list = []   # (stamp [s], strongest normalised residual)
        node.create_subscription(Contact, '/external_torque_observer/contact', lambda msg: (
            residuals.append((stamp_seconds(msg.header.stamp),
                              msg.strongest_normalized_residual))), CONTACT_QOS)
        spinner = threading.Thread(target=spin_until_shutdown, args=(node,), daemon=True)
        spinner.start()
        try:
            wait_for_bringup(node, launch, log, 300.0)
            watch.wait_simulated(3.0, 60.0, timeout=120.0)   # held by the compensation
            switch_to_jtc(node)
            wait_for_events = time.monotonic() + 20.0
            while not any(e.startswith('hold: JTC appeared') for e in watch.events):
                if time.monotonic() > wait_for_events:
                    raise RuntimeError('the filter did not hold: %s' % watch.events)
                time.sleep(0.05)
            q_held = watch.last()[1]
            watch.wait_simulated(3.0, 60.0, timeout=120.0)
            qa = watch.last()[1]
            sag = float(np.abs(qa - q_held).max())   # the filter's hold, over 3 s
            if moves:
                return moves_launched(label, model, watch, plans, residuals, moves, seed, log_path)
            qb = np.clip(qa + MOVE[:len(names)], model.position_lower + 0.05,
                         model.position_upper - 0.05)
            rms, end = plan_and_measure(watch, plans, names, qa, qb)
        finally:
            node.destroy_node()
            rclpy.try_shutdown()
            spinner.join(5.0)
    return {'model': label, 'rms_mrad': round(1e3 * rms, 2), 'end_mrad': round(1e3 * end, 2),
            'hold_sag_mrad': round(1e3 * sag, 2), 'log': log_path}


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
    parser.add_argument('--moves', type=int, default=0,
                        help='with --launch: that many undisturbed plans per model with the '
                        'observer on, counting false contacts, instead of the tracking figure')
    parser.add_argument('--launch', action='store_true',
                        help='through ros2 launch control.launch.py hardware:=mujoco (the '
                        'real controller_manager and JTC) instead of the stand-in')
    args = parser.parse_args(argv)
    apply_loopback_environment()
    if args.launch:
        return main_launched(args)
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


def moves_launched(label: str, model: RobotModel, watch, plans, residuals: list, moves: int,
                   seed: int, log_path: str) -> dict:
    """Send ``moves`` undisturbed plans through the filter; count those the observer flagged."""
    rng = np.random.default_rng(seed)
    names = list(model.joint_names)
    home = watch.last()[1]
    flagged, largest = 0, 0.0
    for _ in range(moves):
        qa = watch.last()[1]
        qb = np.clip(home + rng.uniform(-0.3, 0.3, len(names)), model.position_lower + 0.05,
                     model.position_upper - 0.05)
        _, start, _ = send_plan(watch, plans, names, qa, qb)
        watch.wait_simulated(START_LEAD + PLAN_TIME + SETTLE, 60.0, timeout=120.0)
        end = start + PLAN_TIME + SETTLE
        with watch.lock:
            hit = any(c for t, c in watch.contacts if start <= t <= end)
        seen = [r for t, r in list(residuals) if start <= t <= end]
        flagged += int(hit)
        largest = max([largest, *seen])
    return {'model': label, 'moves': moves, 'moves_flagged': flagged,
            'largest_residual': round(largest, 3), 'log': log_path}


def main_launched(args: argparse.Namespace) -> int:
    """``--launch``: both models ``--runs`` times through control.launch.py."""
    import yaml

    from manip_dynamics.ros.launch_support.ros2_control_setup import (
        controllers_parameters, with_hardware, write_parameters_file)

    folder = os.path.abspath(args.run)
    found = read_run(folder)
    with open(os.path.join(folder, 'summary.yaml'), encoding='utf-8') as stream:
        described_file = yaml.safe_load(stream)['description']
    controllers = ''
    if args.gains == 'described':
        controllers = write_parameters_file(controllers_parameters(
            with_hardware(found['described'], 'mujoco'), LAUNCH_RATE), tempfile.gettempdir())
    figures: dict[str, list] = {'described': [], 'identified': []}
    try:
        with busy_loop(args.busy_core):
            for k in range(args.runs):
                for label, urdf_file, dynamics_file in (
                        ('described', described_file, ''),
                        ('identified', os.path.join(folder, 'identified.urdf'),
                         os.path.join(folder, 'identified_joint_dynamics.yaml'))):
                    result = run_launched(label, urdf_file, dynamics_file, found['true_arm'],
                                          controllers, folder, args.moves, k)
                    print({'run': k + 1, **result}, flush=True)
                    if not args.moves:
                        figures[label].append(result['rms_mrad'])
    finally:
        if controllers:
            os.remove(controllers)
    if args.moves:
        return 0
    before, after = np.median(figures['described']), np.median(figures['identified'])
    print('Through control.launch.py (real JTC): RMS tracking error of the 2 s plan, median '
          'of %d runs (gains: %s): %.2f mrad with the description, %.2f mrad identified '
          '(%.1fx lower)' % (args.runs, args.gains, before, after, before / after))
    return 0


if __name__ == '__main__':
    sys.exit(main())
