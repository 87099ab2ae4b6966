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
``manip-dynamics retime``: a torque-feasible, near time-optimal trajectory through waypoints.

Reads waypoints (a YAML JointTrajectory, e.g. a planner's output, or a CSV of one waypoint
per row with a header of joint names), retimes them with
:func:`manip_dynamics.planning.retime` and writes a JointTrajectory YAML that
``manip-dynamics identify play`` (or any trajectory controller) takes.
"""

import argparse
import csv
import math
from typing import TextIO

import numpy as np

from manip_dynamics.cli import common, formatting as fmt

RETIME_EXAMPLE = ('example:\n  manip-dynamics retime cobot7 waypoints.csv '
                  '--acceleration-limits 5 --effort-scale 0.8 --out timed.yaml')


def read_waypoints(path: str, names: list[str]) -> np.ndarray:
    """
    Return the waypoints of a file in model joint order, shape (K, n).

    :param path: ``.yaml``/``.yml``: a JointTrajectory (``joint_names``, ``points`` with
        ``positions``; times ignored); ``.csv``: a header of joint names, one row per
        waypoint.
    :param names: The model's joint names; the file names every one of them.
    :raises CliError: Unreadable file, unknown or missing joints, bad numbers.
    """
    try:
        if path.endswith(('.yaml', '.yml')):
            import yaml
            with open(path, encoding='utf-8') as stream:
                doc = yaml.safe_load(stream)
            if not isinstance(doc, dict) or 'joint_names' not in doc or 'points' not in doc:
                raise common.CliError('%s: expected a JointTrajectory (joint_names, points)'
                                      % path)
            header = list(doc['joint_names'])
            rows = [p.get('positions') for p in doc['points']]
        else:
            with open(path, encoding='utf-8', newline='') as stream:
                table = [r for r in csv.reader(stream) if r and not r[0].startswith('#')]
            if not table:
                raise common.CliError('%s is empty' % path)
            header, rows = [h.strip() for h in table[0]], table[1:]
    except OSError as error:
        raise common.CliError('cannot read %s: %s' % (path, error)) from None
    unknown = [h for h in header if h not in names]
    missing = [n for n in names if n not in header]
    if unknown or missing:
        raise common.CliError('%s: joints %s%s' % (
            path, ('unknown %s' % unknown) if unknown else '',
            (' missing %s' % missing) if missing else ''))
    try:
        values = np.array(rows, dtype=np.float64)
    except (TypeError, ValueError):
        raise common.CliError('%s: every waypoint needs one number per joint' % path) from None
    if values.ndim != 2 or values.shape[1] != len(header):
        raise common.CliError('%s: every waypoint needs %d numbers' % (path, len(header)))
    return values[:, [header.index(n) for n in names]]


def cmd_retime(args: argparse.Namespace, out: TextIO) -> int:
    """Retime waypoints and write the timed JointTrajectory YAML."""
    import yaml

    from manip_dynamics.planning import retime
    model = common.load_model(args)
    names = list(model.joint_names)
    for spec in args.payload or ():
        link, sep, mass = spec.partition('=')
        if not sep:
            raise common.CliError('--payload %r must look like LINK=MASS' % spec)
        try:
            model.set_payload(link.strip(), common.parse_number(mass, '--payload mass'))
        except ValueError as error:
            raise common.CliError('--payload %s: %s' % (spec, error)) from None
    waypoints = read_waypoints(args.waypoints, names)

    def limits(text: str | None, option: str):
        if text is None:
            return None
        if '=' in text:
            return dict(zip(names, common.parse_joint_values(text, names, option)))
        parts = text.split(',')
        if len(parts) == 1:
            return common.parse_number(parts[0], option)
        return common.parse_vector(text, len(names), option)
    accel = limits(args.acceleration_limits, '--acceleration-limits')
    if isinstance(accel, dict):  # named form: unnamed joints are not limited by 0
        accel = {n: v for n, v in accel.items() if v != 0.0}
    if not (math.isfinite(args.rate) and args.rate > 0):
        raise common.CliError('--rate must be > 0 Hz')
    try:
        traj = retime(model, waypoints, acceleration_limits=accel,
                      velocity_limits=limits(args.velocity_limits, '--velocity-limits'),
                      velocity_scale=args.velocity_scale,
                      acceleration_scale=args.acceleration_scale,
                      effort_scale=args.effort_scale, joint_limits=args.joint_limits,
                      include_friction=not args.no_friction)
    except ValueError as error:
        raise common.CliError(str(error).replace('acceleration_limits=', '--acceleration-limits')
                              .replace('joint_limits=', '--joint-limits')) from None
    doc = traj.to_joint_trajectory(args.rate)
    if args.out:
        with open(args.out, 'w', encoding='utf-8') as stream:
            stream.write('# retimed by manip-dynamics retime: %.4f s, %d waypoints, %d points\n'
                         % (traj.duration, len(waypoints), len(doc['points'])))
            yaml.safe_dump({'header': {'stamp': {'sec': 0, 'nanosec': 0}, 'frame_id': ''},
                            **doc}, stream, default_flow_style=None, sort_keys=False,
                           width=120)
    report = traj.report
    summary = {'duration_s': traj.duration, 'waypoint_times_s': traj.waypoint_times,
               'peak_velocity': report.velocity, 'peak_acceleration': report.acceleration,
               'peak_effort': report.effort, 'repairs': report.repairs,
               'slowed_down': report.slowed_down, 'points': len(doc['points']),
               'out': args.out}
    if args.json:
        common._emit_json(out, summary)
        return 0
    out.write('retimed %d waypoints: %.4f s%s\n' % (
        len(waypoints), traj.duration, (' -> %s (%d points at %g Hz)' % (
            args.out, len(doc['points']), args.rate)) if args.out else ''))
    out.write('waypoint times [s]: %s\n' % ', '.join('%.4f' % t for t in traj.waypoint_times))
    out.write(fmt.table(['limit', 'peak use [%]'], [
        ['velocity', fmt.num(100 * report.velocity, '%.1f')],
        ['acceleration', fmt.num(100 * report.acceleration, '%.1f')],
        ['effort', fmt.num(100 * report.effort, '%.1f')]], numeric_from=1))
    return 0


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add the options of ``retime`` to its parser."""
    p.add_argument('waypoints', metavar='WAYPOINTS',
                   help='YAML JointTrajectory or CSV (header: joint names, one row each)')
    p.add_argument('--out', metavar='YAML', help='write the timed JointTrajectory here')
    p.add_argument('--acceleration-limits', metavar='A|A1,..,An|NAME=A,..',
                   help='[rad/s^2 | m/s^2] (a URDF has none: this or --joint-limits)')
    p.add_argument('--velocity-limits', metavar='V|V1,..,Vn|NAME=V,..',
                   help='[rad/s | m/s] (default: the URDF)')
    p.add_argument('--joint-limits', metavar='YAML', help="MoveIt's joint_limits.yaml")
    p.add_argument('--velocity-scale', type=float, default=1.0, metavar='S')
    p.add_argument('--acceleration-scale', type=float, default=1.0, metavar='S')
    p.add_argument('--effort-scale', type=float, default=1.0, metavar='S',
                   help='fraction of the URDF effort limits (1)')
    p.add_argument('--payload', action='append', metavar='LINK=MASS',
                   help='a point-mass payload counted in the torques (repeatable)')
    p.add_argument('--no-friction', action='store_true',
                   help="leave the URDF's joint friction out of the torque limit")
    p.add_argument('--rate', type=float, default=100.0, metavar='HZ',
                   help='points per second in --out (100)')
