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
Identification through ROS on an arm that is not its model, end to end (docs/IDENTIFICATION.md).

The procedure of docs/IDENTIFICATION.md, run by one command on a MuJoCo arm whose masses,
centres of mass, inertias, friction and rotor inertia differ from the description:

1. ``manip-dynamics mujoco-arm``: the "true" arm (seeded), written to ``OUT/true_arm.xml``;
2. ``manip-dynamics identify excite``: the excitation trajectory, ``OUT/excite.yaml``;
3. simulator_node (``engine: mujoco``, lockstep) and trajectory_controller (the suite's
   computed-torque law from the description), each a process; ``identify play`` sends the
   excitation, ``identify record`` records ``/joint_states`` into the rosbag2
   ``OUT/excite_run``;
4. ``identify fit``: ``OUT/identified.urdf`` and ``OUT/identified_joint_dynamics.yaml``;
5. gravity_compensation_node holding the true arm, with the description and then with the
   identified model loaded back: the drift from the hold pose after ``--hold`` seconds.

Every step is the documented command (run as ``python -m manip_dynamics.cli ...``) or node;
the nodes run on this machine only (loopback discovery). Prints the figures and writes
``OUT/summary.yaml``. ``--short`` is the CI version (two 4 s periods of 3 harmonics, 20
optimiser iterations). Usage::

    python scripts/identify_mujoco_arm.py --out out/identify_mujoco [--robot cobot7]
        [--seed 3] [--hold 10] [--short]
"""

import argparse
import os
import subprocess
import sys
import time

import numpy as np
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), 'manip_dynamics'))

from manip_dynamics import RobotModel  # noqa: E402
from manip_dynamics.bundled import urdf_path  # noqa: E402
from manip_dynamics.ros.runtime.discovery import apply_loopback_environment  # noqa: E402
from manip_dynamics.ros.runtime.joint_state_recorder import record_joint_states  # noqa: E402
from manip_dynamics.ros.runtime.node_process import (  # noqa: E402
    start_node, stop_node, wait_for_log)

#: Seconds the recorder runs before the excitation is sent (DDS matching on a loaded machine).
RECORD_LEAD = 3.0
#: Where the arm is held for the drift figure (cobot7; other arms: the excitation's start).
HOLD_POSES = {'cobot7': [0.3, -0.4, 0.2, -1.9, 0.1, 1.9, 0.5]}


def cli(*args: str) -> str:
    """Run ``manip-dynamics ARGS`` in a subprocess; return its output, raise on failure."""
    done = subprocess.run([sys.executable, '-m', 'manip_dynamics.cli', *args],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError('manip-dynamics %s failed (%d): %s' % (
            ' '.join(args), done.returncode, done.stderr.strip() or done.stdout.strip()))
    return done.stdout


def simulator(xml: str, true_arm: str, name: str, pose) -> object:
    """Start simulator_node on the MuJoCo arm (lockstep: time moves with the commands)."""
    params = {'robot_description': xml, 'engine': 'mujoco', 'mujoco_model': true_arm,
              'publish_clock': False, 'lockstep': True, 'publish_rate': 250.0,
              'command_timeout': 0.5}
    if pose is not None:
        params['initial_positions'] = list(pose)
    return start_node('simulator_node', name, params)


def hold_drift(xml: str, true_arm: str, pose, seconds: float, label: str,
               extra: dict | None = None) -> np.ndarray:
    """Return each joint's largest drift [rad] over ``seconds`` of the compensation's hold."""
    gc = start_node('gravity_compensation_node', 'gc_' + label, {
        'robot_description': xml, 'ramp_time': 0.0, 'timeout': 0.5, **(extra or {})})
    sim = None
    try:
        wait_for_log(gc, 'commanding joints', 120.0)
        sim = simulator(xml, true_arm, 'sim_' + label, pose)
        recording = record_joint_states('/joint_states', seconds, wait=60.0,
                                        node_name='hold_' + label)
    finally:
        for proc in (sim, gc):
            if proc is not None:
                stop_node(proc)
    return np.abs(recording.q - recording.q[0]).max(axis=0)


def read_run(folder: str) -> dict:
    """
    Return what a finished run of this script left in ``folder``.

    Read by scripts/mujoco_moves.py and scripts/mujoco_tracking.py. Keys: ``start`` (n,)
    the excitation's first positions [rad or m]; ``described`` and ``identified``, URDF
    texts; ``dynamics``, the identified joint_dynamics node parameters; ``overrides``, the
    same as :meth:`RobotModel.with_joint_dynamics` takes them; ``true_arm``, the MuJoCo
    arm's path.
    """
    from manip_dynamics.identification.urdf_writer import read_joint_dynamics_yaml

    folder = os.path.abspath(folder)

    def text(name: str) -> str:
        with open(os.path.join(folder, name), encoding='utf-8') as stream:
            return stream.read()
    summary = yaml.safe_load(text('summary.yaml'))   # written last: the run finished
    with open(summary['description'], encoding='utf-8') as stream:
        described = stream.read()
    dynamics = text('identified_joint_dynamics.yaml')
    return {'start': np.array(yaml.safe_load(text('excite.yaml'))['points'][0]['positions']),
            'described': described, 'identified': text('identified.urdf'),
            'dynamics': yaml.safe_load(dynamics)['/**']['ros__parameters'],
            'overrides': read_joint_dynamics_yaml(dynamics),
            'true_arm': os.path.join(folder, 'true_arm.xml')}


def main(argv: list[str] | None = None) -> int:
    """Run the procedure; print and write the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[1])
    parser.add_argument('--out', required=True, help='folder for every file written')
    parser.add_argument('--robot', default='cobot7', help='bundled arm (cobot7)')
    parser.add_argument('--urdf', default='', help='any URDF file instead of --robot')
    parser.add_argument('--seed', type=int, default=3, help='seed of the true arm (3)')
    parser.add_argument('--armature', type=float, default=0.1,
                        help='rotor inertia of the true arm the description omits [kg m^2]')
    parser.add_argument('--friction-of-limit', type=float, default=0.0,
                        help='dry friction the true arm has beyond the description, as a '
                        'fraction of each effort limit (0; for a URDF that states none)')
    parser.add_argument('--hold', type=float, default=10.0, help='hold figure span [s] (10)')
    parser.add_argument('--short', action='store_true', help='the short CI version')
    args = parser.parse_args(argv)
    apply_loopback_environment()
    os.makedirs(args.out, exist_ok=True)
    path = os.path.abspath(args.urdf) if args.urdf else urdf_path(args.robot)
    with open(path, encoding='utf-8') as stream:
        xml = stream.read()
    model = RobotModel.from_urdf_string(xml)
    out = os.path.abspath(args.out)
    true_arm = os.path.join(out, 'true_arm.xml')
    excite = os.path.join(out, 'excite.yaml')
    bag = os.path.join(out, 'excite_run')
    identified = os.path.join(out, 'identified.urdf')
    dynamics = os.path.join(out, 'identified_joint_dynamics.yaml')
    for stale in (bag,):
        if os.path.exists(stale):
            raise SystemExit('%s exists: give a new --out' % stale)

    cli('mujoco-arm', path, '--seed', str(args.seed), '--armature', str(args.armature),
        '--friction-of-limit', str(args.friction_of_limit), '-o', true_arm)
    # (period [s], periods, harmonics, optimiser iterations, approach [s])
    period, periods, harmonics, iterations, approach = ((4.0, 2, 3, 20, 2.0) if args.short
                                                        else (10.0, 3, 5, 40, 5.0))
    cli('identify', 'excite', path, '--out', excite, '--base-frequency', str(1.0 / period),
        '--harmonics', str(harmonics), '--periods', str(periods), '--iterations',
        str(iterations), '--approach-time', str(approach), '--speed-scale', '0.5', '--quiet')
    with open(excite, encoding='utf-8') as stream:
        document = yaml.safe_load(stream)
    start = document['points'][0]['positions']
    motion = approach + periods * period

    sim = simulator(xml, true_arm, 'identify_sim', start)
    controller = start_node('trajectory_controller', 'identify_controller', {
        'robot_description': xml, 'timeout': 0.5})
    try:
        wait_for_log(controller, 'controlling joints', 120.0)
        wait_for_log(sim, 'brakes released', 60.0)
        # the recorder first (it records the hold before the motion too: rest data, and
        # time for its subscription to be matched), then the excitation
        recorder = subprocess.Popen(
            [sys.executable, '-m', 'manip_dynamics.cli', 'identify', 'record', bag,
             '--duration', str(motion + RECORD_LEAD + 1.0), '--local', '--wait', '30'],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(RECORD_LEAD)
        cli('identify', 'play', excite, '--topic', '/identify_controller/joint_trajectory',
            '--local', '--wait', '30')
        stdout, stderr = recorder.communicate(timeout=600)
        if recorder.returncode != 0:
            raise RuntimeError('identify record failed: %s' % stderr.strip())
        print(stdout.strip())
    finally:
        for proc in (controller, sim):
            stop_node(proc)
    fit = cli('identify', 'fit', path, bag, '--out', identified, '--joint-dynamics',
              dynamics, '--armature', '--quiet')
    print(fit.strip().splitlines()[0] if fit.strip() else 'fit done')

    pose = HOLD_POSES.get(model.name, start)
    before = hold_drift(xml, true_arm, pose, args.hold, 'described')
    with open(identified, encoding='utf-8') as stream:
        identified_xml = stream.read()
    with open(dynamics, encoding='utf-8') as stream:
        joint_dynamics = yaml.safe_load(stream)['/**']['ros__parameters']
    after = hold_drift(identified_xml, true_arm, pose, args.hold, 'identified',
                       joint_dynamics)
    summary = {'robot': model.name, 'description': path, 'seed': args.seed,
               'short': args.short,
               'excitation_s': motion, 'hold_s': args.hold,
               'hold_drift_described_mrad': [round(1e3 * float(v), 3) for v in before],
               'hold_drift_identified_mrad': [round(1e3 * float(v), 3) for v in after]}
    with open(os.path.join(out, 'summary.yaml'), 'w', encoding='utf-8') as stream:
        yaml.safe_dump(summary, stream, sort_keys=False)
    print('gravity compensation on the MuJoCo arm, drift over %g s: %.2f mrad with the '
          'description, %.2f mrad with the identified model' % (
              args.hold, 1e3 * before.max(), 1e3 * after.max()))
    return 0


if __name__ == '__main__':
    sys.exit(main())
