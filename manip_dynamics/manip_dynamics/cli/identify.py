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
``manip-dynamics identify``: excitation, fit and validation of the dynamic parameters.

Subcommands (see docs/IDENTIFICATION.md)::

    manip-dynamics identify excite ROBOT --out excite.yaml [--csv excite.csv]
    manip-dynamics identify fit ROBOT BAG --out robot_identified.urdf
    manip-dynamics identify validate ROBOT BAG [--identified robot_identified.urdf]
    manip-dynamics identify simulate ROBOT --out BAG   (a test bag from the simulator)

``BAG`` is a rosbag2 folder (sqlite3 or mcap) with ``sensor_msgs/JointState`` on
``/joint_states`` (position and effort, velocity if present), or a CSV file.  Progress goes
to stderr; the summary table (or ``--json``) to stdout.  The library does the work:
:mod:`manip_dynamics.identification`.
"""

import argparse
import math
import os
import sys
from typing import TextIO

from manip_dynamics.cli import common, formatting as fmt
from manip_dynamics.observers.momentum_observer import REST_SPEED

EXCITE_EXAMPLE = ('example:\n  manip-dynamics identify excite cobot7 --out excite.yaml '
                  '--csv excite.csv --speed-scale 0.3')
RECORD_EXAMPLE = ('example:\n  manip-dynamics identify record excite_run --duration 40 '
                  '--topic /joint_states')
PLAY_EXAMPLE = ('example:\n  manip-dynamics identify play excite.yaml --topic '
                '/joint_trajectory_controller/joint_trajectory')
FIT_EXAMPLE = ('example:\n  manip-dynamics identify fit cobot7 excite_run/ --out '
               'cobot7_identified.urdf --joint-dynamics cobot7_joint_dynamics.yaml')
VALIDATE_EXAMPLE = ('example:\n  manip-dynamics identify validate cobot7 held_out_run/ '
                    '--identified cobot7_identified.urdf --joint-dynamics '
                    'cobot7_joint_dynamics.yaml --plot validation.png')
SIMULATE_EXAMPLE = ('example:\n  manip-dynamics identify simulate cobot7 --excitation '
                    'excite.yaml --duration 30 --out sim_run')


def _progress(args: argparse.Namespace, label: str):
    if args.json or getattr(args, 'quiet', False):
        return None, lambda: None
    bar = common.ProgressBar(sys.stderr, label)
    return bar, bar.close


def cmd_excite(args: argparse.Namespace, out: TextIO) -> int:
    """Optimise an excitation trajectory and write it as JointTrajectory YAML (and CSV)."""
    from manip_dynamics.identification.excitation import (
        optimise_excitation, trajectory_yaml, write_trajectory_csv)

    model = common.load_model(args)
    bar, close = _progress(args, 'optimise')
    total = max(1, args.iterations)
    result = optimise_excitation(
        model, base_frequency=args.base_frequency, harmonics=args.harmonics,
        margin=args.margin, speed_scale=args.speed_scale, max_iterations=args.iterations,
        seed=args.seed, progress=None if bar is None else (lambda k, c: bar(k / total)))
    if bar is not None:
        bar(1.0)
    close()
    with open(args.out, 'w', encoding='utf-8') as stream:
        stream.write(trajectory_yaml(result.trajectory, periods=args.periods,
                                     rate=args.rate, approach_time=args.approach_time))
    if args.csv:
        write_trajectory_csv(args.csv, result.trajectory, periods=args.periods,
                             rate=args.rate)
    doc = {'out': args.out, 'csv': args.csv, 'condition': result.condition,
           'initial_condition': result.initial_condition,
           'period_s': result.trajectory.period, 'periods': args.periods,
           'joint_names': list(model.joint_names),
           'position_margin': result.position_margin,
           'velocity_usage': result.velocity_usage, 'effort_usage': result.effort_usage,
           'coefficients': result.trajectory.to_dict(), 'optimiser': result.message}
    if args.json:
        common._emit_json(out, doc)
        return 0
    out.write('excitation: %d harmonics of %g Hz (period %g s), %d periods -> %s%s\n' % (
        args.harmonics, args.base_frequency, result.trajectory.period, args.periods,
        args.out, ' and ' + args.csv if args.csv else ''))
    out.write('condition number of the base regressor: %.1f (start %.1f; %s)\n' % (
        result.condition, result.initial_condition, result.message))
    rows = [[name, fmt.num(m, '%.3f'), fmt.num(100 * v, '%.0f'), fmt.num(100 * e, '%.0f')]
            for name, m, v, e in zip(model.joint_names, result.position_margin,
                                     result.velocity_usage, result.effort_usage)]
    out.write(fmt.table(['joint', 'margin to limit [rad|m]', 'peak velocity [% limit]',
                         'peak effort [% limit]'], rows, numeric_from=1))
    return 0


def cmd_play(args: argparse.Namespace, out: TextIO) -> int:
    """Publish an excitation (any JointTrajectory YAML file) once to a trajectory controller."""
    import yaml
    try:
        from manip_dynamics.ros.runtime.discovery import apply_loopback_environment
        from manip_dynamics.ros.runtime.trajectory_player import (
            publish_once, trajectory_from_document)
    except ImportError as error:
        raise common.CliError('identify play needs ROS 2 (rclpy, trajectory_msgs): %s'
                              % error) from None
    if not (math.isfinite(args.wait) and args.wait > 0):
        raise common.CliError('--wait must be > 0 seconds')
    try:
        with open(args.trajectory, encoding='utf-8') as stream:
            doc = yaml.safe_load(stream)
        msg = trajectory_from_document(doc)
    except OSError as error:
        raise common.CliError('cannot read %s: %s' % (args.trajectory, error)) from None
    except (yaml.YAMLError, ValueError) as error:
        raise common.CliError('%s: %s' % (args.trajectory, error)) from None
    if args.local:
        apply_loopback_environment()
    try:
        count = publish_once(msg, args.topic, wait=args.wait)
    except TimeoutError as error:
        raise common.CliError(str(error)) from None
    end = msg.points[-1].time_from_start
    out.write('published %d points of %s (%.1f s) on %s to %d subscriber(s)\n' % (
        len(msg.points), ', '.join(msg.joint_names), end.sec + 1e-9 * end.nanosec,
        args.topic, count))
    return 0


def cmd_record(args: argparse.Namespace, out: TextIO) -> int:
    """Record JointState messages into a rosbag2 folder (where ros2 bag is not installed)."""
    try:
        from manip_dynamics.identification.data import write_rosbag
        from manip_dynamics.ros.runtime.discovery import apply_loopback_environment
        from manip_dynamics.ros.runtime.joint_state_recorder import record_joint_states
    except ImportError as error:
        raise common.CliError('identify record needs ROS 2 (rclpy, sensor_msgs) and rosbags: '
                              '%s' % error) from None
    for value, option in ((args.duration, '--duration'), (args.wait, '--wait')):
        if not (math.isfinite(value) and value > 0):
            raise common.CliError('%s must be > 0 seconds' % option)
    if os.path.exists(args.out):
        raise common.CliError('%s exists: rosbag2 writes a new folder' % args.out)
    if args.local:
        apply_loopback_environment()
    try:
        recording = record_joint_states(args.topic, args.duration, wait=args.wait)
    except TimeoutError as error:
        raise common.CliError(str(error)) from None
    write_rosbag(args.out, recording, topic=args.topic, storage=args.storage)
    out.write('wrote %s: %d messages of %s (%s) over %.2f s of their stamps\n' % (
        args.out, recording.t.size, args.topic, ', '.join(recording.joint_names),
        recording.duration))
    return 0


def _read(args: argparse.Namespace, model, path: str):
    from manip_dynamics.identification.data import read_recording

    bar, close = _progress(args, 'read %s' % os.path.basename(path.rstrip('/')))
    try:
        return read_recording(path, model, topic=args.topic, progress=bar)
    finally:
        close()


def _load_with_dynamics(args: argparse.Namespace, urdf: str | None, yaml_path: str | None):
    from manip_dynamics.identification.urdf_writer import read_joint_dynamics_yaml

    if urdf is None:
        model = common.load_model(args)
    else:
        saved = args.urdf
        args.urdf = urdf
        try:
            model = common.load_model(args)
        finally:
            args.urdf = saved
    if yaml_path:
        with open(yaml_path, encoding='utf-8') as stream:
            model = model.with_joint_dynamics(**read_joint_dynamics_yaml(stream.read()))
    return model


def cmd_fit(args: argparse.Namespace, out: TextIO) -> int:
    """Fit base parameters and a physically consistent URDF from a recording."""
    from manip_dynamics.identification.data import prepare
    from manip_dynamics.identification.estimation import (
        least_squares, physically_consistent)
    from manip_dynamics.identification.urdf_writer import (
        joint_dynamics_yaml, link_parameters, write_identified_urdf)

    model = _load_with_dynamics(args, None, args.joint_dynamics_in)
    text, label = common.read_description(args.urdf, args.xacro_arg or ())
    recording = _read(args, model, args.bag)
    samples = prepare(recording, cutoff_hz=args.cutoff)
    friction = not args.no_friction
    base = model.base_parameters(friction=friction, armature=args.armature)
    ls = least_squares(model, samples, base, offset=args.offset, min_speed=args.min_speed)
    bar, close = _progress(args, 'fit')
    _, fixed = link_parameters(model, text)
    result = physically_consistent(
        model, samples, ls, fixed_params=fixed, regularization=args.regularization,
        progress=None if bar is None else (lambda k, c: bar(min(1.0, k / 200.0))))
    if bar is not None:
        bar(1.0)
    close()
    n = model.dof
    tail = result.params[10 * n:]
    fric = tail[:3 * n].reshape(n, 3) if friction else None
    arm = tail[-n:] if args.armature else None
    written = write_identified_urdf(text, model, result.link_params,
                                    friction=None if fric is None else fric[:, :2])
    with open(args.out, 'w', encoding='utf-8') as stream:
        stream.write(written)
    yaml_path = args.joint_dynamics
    if yaml_path is None:
        yaml_path = os.path.splitext(args.out)[0] + '_joint_dynamics.yaml'
    with open(yaml_path, 'w', encoding='utf-8') as stream:
        stream.write(joint_dynamics_yaml(
            model, damping=None if fric is None else fric[:, 0],
            friction=None if fric is None else fric[:, 1], armature=arm,
            comment='joint friction / rotor inertia identified by manip-dynamics identify fit\n'
                    'from %s; load with --params-file (nodes) or --joint-dynamics (CLI)'
                    % args.bag))
    rows = [[name, fmt.num(v, '%.6g'), fmt.num(s, '%.3g'),
             fmt.num(100 * s / abs(v) if v else float('inf'), '%.1f'),
             fmt.num(c, '%.6g')]
            for name, v, s, c in zip(ls.names, ls.values, ls.std, result.base_values)]
    doc = {'bag': args.bag, 'urdf_in': label, 'urdf_out': args.out,
           'joint_dynamics_out': yaml_path, 'samples': ls.samples,
           'duration_s': recording.duration, 'condition': ls.condition,
           'residual_sigma': dict(zip(model.joint_names, ls.sigma)),
           'base_parameters': [{'name': nm, 'least_squares': v, 'std': s, 'consistent': c}
                               for nm, v, s, c in zip(ls.names, ls.values, ls.std,
                                                      result.base_values)],
           'consistent_fit': result.message}
    if args.json:
        common._emit_json(out, doc)
        return 0
    out.write('%s: %d samples over %.1f s; %d base parameters; condition number %.1f\n' % (
        args.bag, ls.samples, recording.duration, len(ls.names), ls.condition))
    out.write(fmt.table(['base parameter', 'least squares', 'std', 'std [%]',
                         'consistent fit'], rows, numeric_from=1))
    out.write('residual std per joint [N m|N]: %s\n' % ', '.join(
        '%s %.3g' % (j, s) for j, s in zip(model.joint_names, ls.sigma)))
    out.write('wrote %s (only <inertial>%s replaced) and %s\n' % (
        args.out, ' and <dynamics>' if friction else '', yaml_path))
    return 0


def cmd_validate(args: argparse.Namespace, out: TextIO) -> int:
    """Compare measured torques with the URDF's and the identified model's predictions."""
    from manip_dynamics.identification.data import prepare
    from manip_dynamics.identification.validation import torque_report, write_plot

    nominal = common.load_model(args)
    recording = _read(args, nominal, args.bag)
    samples = prepare(recording, cutoff_hz=args.cutoff)
    models = {'urdf': nominal}
    if args.identified:
        models['identified'] = _load_with_dynamics(args, args.identified, args.joint_dynamics)
    report = torque_report(models, samples)
    if args.plot:
        write_plot(args.plot, report, nominal.joint_names)
    if args.json:
        common._emit_json(out, {'bag': args.bag, 'samples': int(samples.t.size),
                                'rms': {k: dict(zip(nominal.joint_names, v))
                                        for k, v in report.rms.items()},
                                'plot': args.plot})
        return 0
    headers = ['joint'] + ['RMS %s [N m|N]' % k for k in report.rms]
    if 'identified' in report.rms:
        headers.append('ratio')
    rows = []
    for j, name in enumerate(nominal.joint_names):
        row = [name] + [fmt.num(v[j], '%.4f') for v in report.rms.values()]
        if 'identified' in report.rms:
            row.append(fmt.num(report.rms['urdf'][j] / max(report.rms['identified'][j], 1e-12),
                               '%.1f'))
        rows.append(row)
    out.write('%s: %d samples; torque error, measured minus predicted (friction included)\n'
              % (args.bag, samples.t.size))
    out.write(fmt.table(headers, rows, numeric_from=1))
    if args.plot:
        out.write('plot: %s\n' % args.plot)
    return 0


def cmd_simulate_bag(args: argparse.Namespace, out: TextIO) -> int:
    """Record a bag from the simulator: a perturbed 'true' arm following an excitation."""
    from manip_dynamics.identification.data import write_rosbag
    from manip_dynamics.identification.excitation import (
        optimise_excitation, read_trajectory_yaml)
    from manip_dynamics.identification.synthetic import (
        Noise, perturbed_model, simulate_recording)

    nominal = common.load_model(args)
    if args.excitation:
        with open(args.excitation, encoding='utf-8') as stream:
            traj = read_trajectory_yaml(stream.read())
    else:
        traj = optimise_excitation(nominal, max_iterations=10, seed=args.seed).trajectory
    true = perturbed_model(nominal, seed=args.seed)
    bar, close = _progress(args, 'simulate')
    _, noisy = simulate_recording(
        true, nominal, traj, duration=args.duration, rate=args.rate,
        noise=Noise(args.position_noise, args.velocity_noise, args.effort_noise),
        seed=args.seed + 1, progress=bar)
    close()
    write_rosbag(args.out, noisy, storage=args.storage)
    if args.json:
        common._emit_json(out, {'out': args.out, 'samples': int(noisy.t.size),
                                'true_parameters': true.inertial_parameters(friction=True)})
    else:
        out.write('wrote %s: %d joint_states at %g Hz over %g s (true arm: %s perturbed, '
                  'seed %d)\n' % (args.out, noisy.t.size, args.rate, args.duration,
                                  nominal.name, args.seed))
    return 0


def register(sub, shared: argparse.ArgumentParser, parser_class) -> None:
    """Add ``identify`` and its subcommands to the ``manip-dynamics`` parser."""
    text = ('identification: excitation trajectory, fit from a recorded bag to a corrected '
            'URDF, validation (docs/IDENTIFICATION.md)')
    p = sub.add_parser('identify', help=text, description=text)
    inner = p.add_subparsers(dest='identify_command', metavar='STEP',
                             parser_class=parser_class)
    inner.required = True

    def add(name, func, helptext, example):
        q = inner.add_parser(name, parents=[shared], help=helptext, description=helptext,
                             epilog=example, formatter_class=argparse.RawDescriptionHelpFormatter)
        q.set_defaults(func=func)
        q.add_argument('--quiet', action='store_true', help='no progress bars')
        return q

    q = add('excite', cmd_excite, 'optimise a Fourier excitation trajectory (Swevers 1997)',
            EXCITE_EXAMPLE)
    q.add_argument('--out', required=True, metavar='YAML',
                   help='trajectory_msgs/JointTrajectory YAML to write')
    q.add_argument('--csv', metavar='CSV', help='also write t, q, qd, qdd as CSV')
    q.add_argument('--base-frequency', type=float, default=0.1, metavar='HZ',
                   help='base frequency [Hz] (0.1: a 10 s period)')
    q.add_argument('--harmonics', type=int, default=5, help='harmonics (5)')
    q.add_argument('--margin', type=float, default=0.1, metavar='RAD',
                   help='distance kept from every position limit (0.1)')
    q.add_argument('--speed-scale', type=float, default=0.5, metavar='FRACTION',
                   help='fraction of the velocity and effort limits allowed (0.5)')
    q.add_argument('--periods', type=int, default=3, help='periods written (3)')
    q.add_argument('--rate', type=float, default=50.0, metavar='HZ',
                   help='trajectory points per second (50)')
    q.add_argument('--approach-time', type=float, default=5.0, metavar='SECONDS',
                   help='time to reach the start pose (5)')
    q.add_argument('--iterations', type=int, default=60, help='optimiser iterations (60)')
    q.add_argument('--seed', type=int, default=0, help='random start (0)')

    q = inner.add_parser('play', help='publish a trajectory YAML (identify excite --out) once '
                         'to a trajectory controller; ros2 topic pub cannot take one this big',
                         description='Publish a trajectory_msgs/JointTrajectory YAML file once '
                         '(reliable) after a subscriber appears, and wait for its '
                         'acknowledgement.', epilog=PLAY_EXAMPLE,
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    q.set_defaults(func=cmd_play)
    q.add_argument('trajectory', metavar='YAML', help='JointTrajectory YAML file')
    q.add_argument('--topic', default='/joint_trajectory_controller/joint_trajectory',
                   help='JointTrajectory topic (/joint_trajectory_controller/joint_trajectory)')
    q.add_argument('--wait', type=float, default=10.0, metavar='SECONDS',
                   help='wait this long for a subscriber and for its acknowledgement (10)')
    q.add_argument('--local', action='store_true',
                   help="keep DDS discovery on this machine (as the suite's own processes)")

    q = inner.add_parser('record', help='record JointState messages into a rosbag2 folder '
                         '(what ros2 bag record does, without rosbag2)',
                         description='Record the JointState messages of one topic for a span '
                         'of their header stamps into a new rosbag2 folder (rosbags writes '
                         'it), for identify fit.', epilog=RECORD_EXAMPLE,
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    q.set_defaults(func=cmd_record)
    q.add_argument('out', metavar='BAG', help='rosbag2 folder to create')
    q.add_argument('--duration', type=float, required=True, metavar='SECONDS',
                   help="span of the messages' stamps to record [s]")
    q.add_argument('--topic', default='/joint_states', help='JointState topic (/joint_states)')
    q.add_argument('--storage', choices=('sqlite3', 'mcap'), default='sqlite3',
                   help='rosbag2 storage (sqlite3)')
    q.add_argument('--wait', type=float, default=10.0, metavar='SECONDS',
                   help='give up when no message comes for this long (10)')
    q.add_argument('--local', action='store_true',
                   help="keep DDS discovery on this machine (as the suite's own processes)")

    def data_options(q):
        q.add_argument('bag', metavar='BAG', help='rosbag2 folder or CSV file')
        q.add_argument('--topic', default='/joint_states', help='JointState topic')
        q.add_argument('--cutoff', type=float, default=8.0, metavar='HZ',
                       help='zero-phase low-pass cut-off [Hz] (8)')

    q = add('fit', cmd_fit, 'fit the base parameters and a physically consistent URDF',
            FIT_EXAMPLE)
    data_options(q)
    q.add_argument('--out', required=True, metavar='URDF', help='identified URDF to write')
    q.add_argument('--joint-dynamics', metavar='YAML',
                   help='friction/armature parameter file to write (default: next to --out)')
    q.add_argument('--joint-dynamics-in', metavar='YAML',
                   help='friction/armature overrides of the starting model')
    q.add_argument('--no-friction', action='store_true', help='do not fit friction')
    q.add_argument('--armature', action='store_true', help='fit rotor inertias')
    q.add_argument('--offset', action='store_true', help='fit a torque offset per joint')
    q.add_argument('--min-speed', type=float, default=REST_SPEED, metavar='RAD/S',
                   help="leave out a joint's samples slower than this: at rest its dry "
                   'friction holds an unknown torque (%g; 0 keeps them)' % REST_SPEED)
    q.add_argument('--regularization', type=float, default=1e-3,
                   help='pull towards the URDF, relative to one sample (1e-3)')

    q = add('validate', cmd_validate, 'torque error on a recording: URDF vs identified',
            VALIDATE_EXAMPLE)
    data_options(q)
    q.add_argument('--identified', metavar='URDF', help='identified URDF to compare')
    q.add_argument('--joint-dynamics', metavar='YAML', help='its friction/armature file')
    q.add_argument('--plot', metavar='PNG', help='measured and predicted torques')

    q = add('simulate', cmd_simulate_bag, 'record a test bag from the simulator: a perturbed '
            '"true" arm following an excitation', SIMULATE_EXAMPLE)
    q.add_argument('--out', required=True, metavar='BAG', help='rosbag2 folder to create')
    q.add_argument('--excitation', metavar='YAML', help='trajectory from identify excite')
    q.add_argument('--duration', type=float, default=30.0, metavar='SECONDS')
    q.add_argument('--rate', type=float, default=250.0, metavar='HZ')
    q.add_argument('--storage', choices=('sqlite3', 'mcap'), default='sqlite3')
    q.add_argument('--position-noise', type=float, default=1e-4, metavar='RAD')
    q.add_argument('--velocity-noise', type=float, default=1e-3, metavar='RAD/S')
    q.add_argument('--effort-noise', type=float, default=0.05, metavar='NM')
    q.add_argument('--seed', type=int, default=1)
