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

"""``manip-dynamics simulate``: the arm offline, with a progress bar, a plot and CSV."""

import argparse
from collections.abc import Callable
import math
import os
import sys
import time
from typing import TextIO

import numpy as np

from manip_dynamics.cli import formatting as fmt
from manip_dynamics.cli.common import (
    _emit_json, _joint_table, _position_units, _units, CliError, EXIT_OK, load_model,
    parse_joint_values, ProgressBar)


def _make_controller(args: argparse.Namespace, model, q0: np.ndarray
                     ) -> Callable[[float, np.ndarray, np.ndarray], np.ndarray] | None:
    if args.controller == 'none':
        return None
    if args.controller == 'gravity-comp':
        def gravity_comp(t: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
            return model.gravity_torques(q)
        return gravity_comp
    target = q0 if args.target is None else parse_joint_values(
        args.target, model.joint_names, '--target')
    kp, kd = args.kp, args.kd

    def pd(t: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        return model.gravity_torques(q) + kp * (target - q) - kd * qd
    return pd


def cmd_simulate(args: argparse.Namespace, out: TextIO) -> int:
    """Simulate the arm offline; summary table, optional PNG plot and CSV."""
    try:
        from manip_dynamics.simulation import simulate
    except ImportError as exc:
        raise CliError('the simulation module is not available: %s' % exc) from None
    model = load_model(args)
    names = model.joint_names
    q0 = parse_joint_values(args.q0, names, '--q0')
    qd0 = parse_joint_values(args.qd0, names, '--qd0')
    if not args.duration > 0.0 or not math.isfinite(args.duration):
        raise CliError('--duration must be a positive number of seconds, got %r'
                       % args.duration)
    if not args.dt > 0.0 or not math.isfinite(args.dt):
        raise CliError('--dt must be a positive number of seconds, got %r' % args.dt)
    for path in (args.plot, args.csv):
        if path:
            folder = os.path.dirname(os.path.abspath(path))
            if not os.path.isdir(folder):
                raise CliError('cannot write %r: folder %r does not exist' % (path, folder))
    if args.plot:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise CliError('--plot needs matplotlib: pip install matplotlib') from None
    controller = _make_controller(args, model, q0)
    bar = None if args.quiet else ProgressBar(sys.stderr, 'simulate')
    started = time.perf_counter()
    try:
        result = simulate(model, q0, qd0, duration=args.duration, dt=args.dt,
                          integrator=args.integrator, controller=controller,
                          include_friction=not args.no_friction, limits=args.limits,
                          clamp_effort=not args.no_clamp, record_every=args.record_every,
                          progress=bar)
    finally:
        if bar is not None:
            bar.close()
    wall = time.perf_counter() - started
    written = []
    if args.csv:
        fmt.write_csv(args.csv, result, names)
        written.append(args.csv)
    if args.plot:
        from manip_dynamics.cli import plots
        plots.plot_simulation(args.plot, result, names, _position_units(model),
                              title='%s: %s, controller %s, %s' % (
                                  model.name, args.integrator, args.controller,
                                  'friction' if not args.no_friction else 'no friction'))
        written.append(args.plot)
    drift = np.max(np.abs(result.q - q0), axis=0)
    energy = np.asarray(result.energy)
    summary = {
        'robot': model.name, 'joint_names': list(names), 'duration': args.duration,
        'dt': args.dt, 'integrator': args.integrator, 'controller': args.controller,
        'include_friction': not args.no_friction, 'samples': int(len(result.t)),
        'wall_time': wall, 'real_time_factor': args.duration / wall if wall > 0 else None,
        'q0': q0, 'q_final': result.q[-1], 'qd_final': result.qd[-1],
        'max_drift': drift, 'max_abs_tau': np.max(np.abs(result.tau), axis=0),
        'energy_initial': float(energy[0]), 'energy_final': float(energy[-1]),
        'energy_max_deviation': float(np.max(np.abs(energy - energy[0]))),
        'files': written}
    if args.json:
        _emit_json(out, summary)
        return EXIT_OK
    out.write('%s: %.4g s simulated in %.3g s wall (%.3g x real time), %s, dt %g s, '
              'controller %s, %s\n' % (
                  model.name, args.duration, wall, summary['real_time_factor'] or 0.0,
                  args.integrator, args.dt, args.controller,
                  'friction on' if not args.no_friction else 'friction off'))
    pu = _position_units(model)
    out.write(_joint_table(model, [('q0', q0, pu), ('q final', result.q[-1], pu),
                                   ('max |q - q0|', drift, pu),
                                   ('max |tau|', summary['max_abs_tau'], _units(model))]))
    out.write('total energy: %.6g J at start, %.6g J at end, largest deviation %.3g J\n' % (
        summary['energy_initial'], summary['energy_final'], summary['energy_max_deviation']))
    for path in written:
        out.write('wrote %s\n' % path)
    return EXIT_OK
