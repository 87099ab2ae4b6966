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

"""``manip-dynamics`` bench, view and precompile: timing, the browser view and the kernel cache."""

import argparse
from collections.abc import Callable
import math
import statistics
import time
from typing import TextIO

import numpy as np

from manip_dynamics.cli import formatting as fmt
from manip_dynamics.cli.common import _emit_json, CliError, EXIT_OK, load_model


def _time_calls(func: Callable[[], object], repeat: int) -> list[float]:
    samples = []
    clock = time.perf_counter_ns
    for _ in range(repeat):
        start = clock()
        func()
        samples.append((clock() - start) * 1e-3)
    return samples


def cmd_bench(args: argparse.Namespace, out: TextIO) -> int:
    """Time ID, M, FD (and g, C) on this machine: median of repeated single calls."""
    import platform
    if args.repeat < 1:
        raise CliError('--repeat must be at least 1, got %d' % args.repeat)
    if args.batch < 0:
        raise CliError('--batch must be >= 0, got %d' % args.batch)
    model = load_model(args)
    n = model.dof
    rng = np.random.default_rng(args.seed)
    lo = np.where(np.isfinite(model.position_lower), model.position_lower, -math.pi)
    hi = np.where(np.isfinite(model.position_upper), model.position_upper, math.pi)
    q = rng.uniform(lo, hi)
    qd = rng.uniform(-1.0, 1.0, n)
    qdd = rng.uniform(-1.0, 1.0, n)
    start = time.perf_counter_ns()
    tau = model.inverse_dynamics(q, qd, qdd)
    first_id = (time.perf_counter_ns() - start) * 1e-3
    calls = [
        ('inverse_dynamics', lambda: model.inverse_dynamics(q, qd, qdd)),
        ('mass_matrix', lambda: model.mass_matrix(q)),
        ('forward_dynamics', lambda: model.forward_dynamics(q, qd, tau)),
        ('gravity_torques', lambda: model.gravity_torques(q)),
        ('coriolis_matrix', lambda: model.coriolis_matrix(q, qd)),
    ]
    results = []
    for name, func in calls:
        # The first call of this process pays for loading (or compiling) its kernels.
        first = first_id if name == 'inverse_dynamics' else _time_calls(func, 1)[0]
        for _ in range(min(args.repeat, 50)):
            func()  # warm-up
        samples = _time_calls(func, args.repeat)
        row = {'function': name, 'first_call_us': first,
               'median_us': statistics.median(samples),
               'p90_us': float(np.percentile(samples, 90)), 'min_us': min(samples),
               'repeat': args.repeat}
        results.append(row)
    if args.batch:
        qb = rng.uniform(lo, hi, (args.batch, n))
        qdb = rng.uniform(-1.0, 1.0, (args.batch, n))
        qddb = rng.uniform(-1.0, 1.0, (args.batch, n))
        model.inverse_dynamics(qb[:2], qdb[:2], qddb[:2])
        samples = _time_calls(lambda: model.inverse_dynamics(qb, qdb, qddb), 5)
        for row in results:
            if row['function'] == 'inverse_dynamics':
                row['batch_per_state_us'] = statistics.median(samples) / args.batch
    machine = {'python': platform.python_version(), 'machine': platform.machine(),
               'processor': platform.processor() or platform.machine(),
               'numpy': np.__version__}
    try:
        import numba
        machine['numba'] = numba.__version__
    except ImportError:
        pass
    if args.json:
        _emit_json(out, {'robot': model.name, 'dof': n, 'machine': machine,
                         'batch': args.batch, 'results': results})
        return EXIT_OK
    out.write('%s (%d DoF) on %s, Python %s, numpy %s%s; median of %d calls\n' % (
        model.name, n, machine['processor'], machine['python'], machine['numpy'],
        ', numba %s' % machine['numba'] if 'numba' in machine else '', args.repeat))
    rows = []
    for row in results:
        rows.append([row['function'], '%.2f' % row['median_us'], '%.2f' % row['p90_us'],
                     '%.2f' % row['min_us'], '%.1f' % (row['first_call_us'] / 1000.0),
                     '%.2f' % row['batch_per_state_us'] if 'batch_per_state_us' in row
                     else '-'])
    out.write(fmt.table(['call', 'median [us]', 'p90 [us]', 'min [us]', 'first call [ms]',
                         'batch [us/state]'], rows, numeric_from=1))
    out.write('first call: the first call in this process, including loading the compiled '
              'kernels from the numba cache (or compiling them, about 15 s, on a fresh '
              'install)\n')
    return EXIT_OK


def cmd_view(args: argparse.Namespace, out: TextIO) -> int:
    """Serve a 3D view of the arm with joint sliders (see manip_dynamics.cli.view)."""
    from manip_dynamics.cli import view
    return view.run(args, out)


def cmd_precompile(args: argparse.Namespace, out: TextIO) -> int:
    """Compile the numba kernels into the disk cache (see manip_dynamics.precompile)."""
    from manip_dynamics import precompile
    return precompile.run(args, out)
