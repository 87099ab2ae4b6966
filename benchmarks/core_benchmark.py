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
Benchmark the core library side by side with Pinocchio and print a Markdown report.

Run after ``source scripts/env.sh``::

    python benchmarks/core_benchmark.py [--output docs/BENCHMARKS.md] [--quick]

Measures (issue 2, "Performance"): per-call times of inverse_dynamics, forward_dynamics,
mass_matrix, gravity_torques and coriolis_matrix against pin.rnea, pin.aba, pin.crba,
pin.computeGeneralizedGravity and pin.computeCoriolisMatrix on Panda (example-robot-data)
and cobot7 (bundled); a 10,000-state batch of inverse dynamics against a Python loop of
pin.rnea; cost against DoF for random revolute chains; the numba first-call compile time
(empty NUMBA_CACHE_DIR, in a subprocess) and the cached import + first-call time.

Times are medians over repeats of timeit loops (``number`` calls each), per call.
With ``--output FILE`` the report replaces the block between the ``core-benchmark``
markers of FILE (created with a "Core library" and a "ROS nodes" section if missing).
"""

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
import timeit

from doc_blocks import marked_block, replace_marked_block
import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Benchmark the sources of this checkout, and reuse the tests' URDF generator.
sys.path.insert(0, os.path.join(REPO, 'manip_dynamics'))
sys.path.insert(1, os.path.join(REPO, 'manip_dynamics', 'test'))

import urdf_factory  # noqa: E402

from manip_dynamics import robot_model_calls  # noqa: E402
from manip_dynamics import RobotModel  # noqa: E402
from manip_dynamics.batching import worker_count  # noqa: E402
from manip_dynamics.bundled import urdf_path  # noqa: E402

try:
    import pinocchio as pin
except ImportError:  # the report says so
    pin = None

BEGIN = '<!-- core-benchmark:begin -->'
END = '<!-- core-benchmark:end -->'
TARGET_SINGLE = 5.0
TARGET_BATCH = 0.5
CHAIN_DOFS = (2, 5, 10, 20, 30, 50)


def per_call(func, number: int, repeat: int) -> float:
    """
    Return the median CPU time of one call of ``func`` [s] over ``repeat`` timeit loops.

    CPU time of this process, not wall time: on a machine shared with other work the wall
    clock counts the time other processes hold the cores.
    """
    func()
    times = timeit.Timer(func, timer=time.process_time).repeat(repeat=repeat, number=number)
    return float(np.median(times)) / number


def fmt_time(seconds: float) -> str:
    """Format a duration with a sensible unit."""
    if seconds < 1e-3:
        return '%.2f us' % (seconds * 1e6)
    if seconds < 1.0:
        return '%.2f ms' % (seconds * 1e3)
    return '%.2f s' % seconds


class PinModel:
    """Pinocchio model built from the same URDF text, with our joint order mapped."""

    def __init__(self, xml: str, ours: RobotModel) -> None:
        self.model = pin.buildModelFromXML(xml)
        self.model.gravity.linear = ours.gravity
        self.data = self.model.createData()
        self.idx_v = np.array([self.model.joints[self.model.getJointId(n)].idx_v
                               for n in ours.joint_names])
        assert self.model.nq == self.model.nv == ours.dof, 'continuous joints not supported'

    def v(self, x: np.ndarray) -> np.ndarray:
        out = np.zeros(self.model.nv)
        out[self.idx_v] = x
        return out


def robot_section(label: str, xml: str, number: int, repeat: int) -> list[str]:
    """Return the Markdown rows of the single-call and batch comparison for one robot."""
    ours = RobotModel.from_urdf_string(xml)
    n = ours.dof
    rng = np.random.default_rng(0)
    q, qd, qdd = (rng.uniform(-1.0, 1.0, n) for _ in range(3))
    tau = ours.inverse_dynamics(q, qd, qdd)
    calls = [
        ('inverse_dynamics', lambda: ours.inverse_dynamics(q, qd, qdd), 'rnea', TARGET_SINGLE),
        ('forward_dynamics', lambda: ours.forward_dynamics(q, qd, tau), 'aba', TARGET_SINGLE),
        ('mass_matrix', lambda: ours.mass_matrix(q), 'crba', TARGET_SINGLE),
        ('gravity_torques', lambda: ours.gravity_torques(q), 'computeGeneralizedGravity', None),
        ('coriolis_matrix', lambda: ours.coriolis_matrix(q, qd), 'computeCoriolisMatrix', None),
    ]
    pins = {}
    if pin is not None:
        pm = PinModel(xml, ours)
        m, d = pm.model, pm.data
        pq, pv, pa, pt = pm.v(q), pm.v(qd), pm.v(qdd), pm.v(tau)
        pins = {'rnea': lambda: pin.rnea(m, d, pq, pv, pa),
                'aba': lambda: pin.aba(m, d, pq, pv, pt),
                'crba': lambda: pin.crba(m, d, pq),
                'computeGeneralizedGravity': lambda: pin.computeGeneralizedGravity(m, d, pq),
                'computeCoriolisMatrix': lambda: pin.computeCoriolisMatrix(m, d, pq, pv)}
    rows = []
    for name, func, pin_name, target in calls:
        t_ours = per_call(func, number, repeat)
        if pins:
            t_pin = per_call(pins[pin_name], number, repeat)
            ratio = t_ours / t_pin
            verdict = '' if target is None else (
                '<= %gx: %s' % (target, 'met' if ratio <= target else 'MISSED'))
            rows.append('| %s (%d DoF) | `%s` | %s | `pin.%s` | %s | %.2f | %s |' % (
                label, n, name, fmt_time(t_ours), pin_name, fmt_time(t_pin), ratio, verdict))
        else:
            rows.append('| %s (%d DoF) | `%s` | %s | `pin.%s` | n/a | n/a | pin missing |' % (
                label, n, name, fmt_time(t_ours), pin_name))

    batch = 10_000
    qs, qds, qdds = (rng.uniform(-1.0, 1.0, (batch, n)) for _ in range(3))
    t_batch = per_call(lambda: ours.inverse_dynamics(qs, qds, qdds), 1, max(3, repeat // 4))
    if pins:
        pqs, pvs, pas = (np.zeros((batch, pm.model.nv)) for _ in range(3))
        pqs[:, pm.idx_v], pvs[:, pm.idx_v], pas[:, pm.idx_v] = qs, qds, qdds

        def pin_loop():
            for k in range(batch):
                pin.rnea(m, d, pqs[k], pvs[k], pas[k])

        t_loop = per_call(pin_loop, 1, max(3, repeat // 4))
        ratio = t_batch / t_loop
        rows.append('| %s (%d DoF) | `inverse_dynamics`, batch of 10,000 (%d threads) | %s | '
                    'Python loop of `pin.rnea` | %s | %.2f | <= %gx: %s |' % (
                        label, n, worker_count(), fmt_time(t_batch), fmt_time(t_loop), ratio,
                        TARGET_BATCH, 'met' if ratio <= TARGET_BATCH else 'MISSED'))
        # the same batch on the calling thread only (no split over the cores)
        saved = robot_model_calls.PARALLEL_MIN_STATES
        robot_model_calls.PARALLEL_MIN_STATES = batch + 1
        try:
            t_one = per_call(lambda: ours.inverse_dynamics(qs, qds, qdds), 1,
                             max(3, repeat // 4))
        finally:
            robot_model_calls.PARALLEL_MIN_STATES = saved
        rows.append('| %s (%d DoF) | `inverse_dynamics`, batch of 10,000 (1 thread) | %s | '
                    'Python loop of `pin.rnea` | %s | %.2f | <= %gx: %s |' % (
                        label, n, fmt_time(t_one), fmt_time(t_loop), t_one / t_loop,
                        TARGET_BATCH, 'met' if t_one / t_loop <= TARGET_BATCH else 'MISSED'))
    else:
        rows.append('| %s (%d DoF) | `inverse_dynamics`, batch of 10,000 | %s | n/a | n/a | '
                    'n/a | pin missing |' % (label, n, fmt_time(t_batch)))
    return rows


def dof_section(number: int, repeat: int) -> list[str]:
    """Return the cost-against-DoF table and the fitted exponents."""
    batch = 1000
    results = []
    for n in CHAIN_DOFS:
        xml = urdf_factory.random_chain_urdf(n, n)
        ours = RobotModel.from_urdf_string(xml)
        rng = np.random.default_rng(n)
        q, qd, qdd = (rng.uniform(-1.0, 1.0, n) for _ in range(3))
        qs, qds, qdds = (rng.uniform(-1.0, 1.0, (batch, n)) for _ in range(3))
        row = [n, per_call(lambda: ours.inverse_dynamics(q, qd, qdd), number, repeat),
               per_call(lambda: ours.mass_matrix(q), number, repeat),
               per_call(lambda: ours.inverse_dynamics(qs, qds, qdds), 3, 7) / batch,
               per_call(lambda: ours.mass_matrix(qs), 3, 7) / batch]
        if pin is not None:
            pm = PinModel(xml, ours)
            pq, pv, pa = pm.v(q), pm.v(qd), pm.v(qdd)
            row += [per_call(lambda: pin.rnea(pm.model, pm.data, pq, pv, pa), number, repeat),
                    per_call(lambda: pin.crba(pm.model, pm.data, pq), number, repeat)]
        results.append(row)
    lines = ['| DoF | `inverse_dynamics` | `mass_matrix` | ID per state, batch of %d | '
             'M per state, batch of %d | `pin.rnea` | `pin.crba` |' % (batch, batch),
             '| ---: | ---: | ---: | ---: | ---: | ---: | ---: |']
    for row in results:
        cells = [fmt_time(t) for t in row[1:]] + ['n/a'] * (7 - len(row))
        lines.append('| %d | %s |' % (row[0], ' | '.join(cells)))
    dofs = np.array([r[0] for r in results], dtype=float)
    lines += ['', 'Fitted exponent k of t ~ n^k (least squares on log t against log n over '
              'n >= 10; the single-call times carry a fixed per-call overhead of argument '
              'checks and allocation that flattens the slope, the batch columns amortise '
              'it):', '']
    big = dofs >= 10
    for label, col, expected in (('inverse_dynamics', 1, 1), ('mass_matrix', 2, 2),
                                 ('inverse_dynamics, batch', 3, 1),
                                 ('mass_matrix, batch', 4, 2),
                                 ('pin.rnea', 5, 1), ('pin.crba', 6, 2)):
        if col >= len(results[0]):
            continue
        times = np.array([r[col] for r in results])
        slope = np.polyfit(np.log(dofs[big]), np.log(times[big]), 1)[0]
        lines.append('- `%s`: k = **%.2f** (expected %d)' % (label, slope, expected))
    return lines


COMPILE_SNIPPET = '''
import time
c0 = time.process_time()
t0 = time.perf_counter()
import numpy as np
from manip_dynamics import RobotModel
from manip_dynamics.bundled import urdf_path
t1 = time.perf_counter()
m = RobotModel.from_urdf_file(urdf_path('cobot7'))
q = np.full(m.dof, 0.1)
m.inverse_dynamics(q, q, q)
m.mass_matrix(q)
m.coriolis_matrix(q, q)
m.forward_dynamics(q, q, q)
m.gravity_torques(q)
m.jacobian(q, 'tool0')
t2 = time.perf_counter()
print(t1 - t0, t2 - t1, time.process_time() - c0)
'''


def compile_section() -> list[str]:
    """Return the numba compile (empty cache) and cached first-call times."""
    env = dict(os.environ)
    env['PYTHONPATH'] = os.path.join(REPO, 'manip_dynamics') + os.pathsep + env.get(
        'PYTHONPATH', '')
    lines = ['| run | import (wall) | load cobot7 + first call of ID, M, C, FD, g, J (wall) | '
             'CPU, all of it |', '| --- | ---: | ---: | ---: |']
    with tempfile.TemporaryDirectory(prefix='md_numba_cache_') as cache:
        env['NUMBA_CACHE_DIR'] = cache
        for label in ('empty NUMBA_CACHE_DIR (compiles)', 'cached (second process)'):
            out = subprocess.run([sys.executable, '-c', COMPILE_SNIPPET], env=env,
                                 capture_output=True, text=True, check=True, timeout=600)
            t_import, t_first, cpu = (float(x) for x in out.stdout.split()[-3:])
            lines.append('| %s | %s | %s | %s |' % (label, fmt_time(t_import), fmt_time(t_first),
                                                    fmt_time(cpu)))
    return lines


def _version(module: str) -> str:
    try:
        mod = __import__(module)
        return getattr(mod, '__version__', '?')
    except ImportError:
        return 'not installed'


def machine_lines() -> list[str]:
    """Return the machine and software versions."""
    cpu = platform.processor() or platform.machine()
    try:
        info = subprocess.run(['lscpu'], capture_output=True, text=True, check=True).stdout
        fields = dict(line.split(':', 1) for line in info.splitlines() if ':' in line)
        cpu = '%s, %s logical CPUs (%s cores per socket x %s sockets)' % (
            fields.get('Model name', cpu).strip(), fields.get('CPU(s)', '?').strip(),
            fields.get('Core(s) per socket', '?').strip(), fields.get('Socket(s)', '?').strip())
    except (OSError, subprocess.CalledProcessError):
        pass
    os_name = platform.platform()
    try:
        with open('/etc/os-release', encoding='utf-8') as f:
            for line in f:
                if line.startswith('PRETTY_NAME='):
                    os_name = '%s (kernel %s)' % (line.split('=', 1)[1].strip().strip('"'),
                                                  platform.release())
    except OSError:
        pass
    load = ', '.join('%.2f' % x for x in os.getloadavg())
    return ['- Machine: %s; load average at start %s (other processes share the cores)'
            % (cpu, load), '- OS: %s' % os_name,
            '- Python %s, numpy %s, numba %s, pinocchio %s, ROS distro %s' % (
                platform.python_version(), np.__version__, _version('numba'),
                pin.__version__ if pin is not None else 'not installed',
                os.environ.get('ROS_DISTRO', 'unset'))]


def report(quick: bool) -> str:
    """Run every measurement and return the Markdown report."""
    number, repeat = (200, 7) if quick else (2000, 25)
    lines = ['Generated by `python benchmarks/core_benchmark.py%s`.' % (
        ' --quick' if quick else ''), ''] + machine_lines() + [
        '- Per-call time: CPU time of this process, median over %d timeit repeats of %d calls '
        'each, one state; the batch row: median of repeats of one call (CPU time of all '
        'threads, so the 2-thread row shows no gain here: see the parity section for wall '
        'time).' % (repeat, number), '',
        '### Single state and batch against Pinocchio', '',
        '| robot | ours | time | Pinocchio | time | ratio | target |',
        '| --- | --- | ---: | --- | ---: | ---: | --- |']
    panda = urdf_factory.example_robot_urdf('panda')
    robots = []
    if panda is None:
        lines.insert(len(lines) - 2, 'Panda: example-robot-data is not installed, row '
                     'skipped.\n')
    else:
        with open(panda, encoding='utf-8') as f:
            robots.append(('Panda', f.read()))
    with open(urdf_path('cobot7'), encoding='utf-8') as f:
        robots.append(('cobot7', f.read()))
    for label, xml in robots:
        lines += robot_section(label, xml, number, repeat)
    lines += ['', '### Cost against DoF (random revolute chains)', '']
    lines += dof_section(max(50, number // 4), repeat)
    lines += ['', '### Numba compile time (subprocess)', ''] + compile_section()
    return '\n'.join(lines) + '\n'


def write_section(path: str, body: str) -> None:
    """Replace the core-benchmark block of ``path`` (create the file when missing)."""
    block = marked_block(BEGIN, END, body)
    if os.path.isfile(path):
        with open(path, encoding='utf-8') as f:
            text = f.read()
        text = replace_marked_block(text, BEGIN, END, body) or (
            text.rstrip('\n') + '\n\n## Core library\n\n' + block + '\n')
    else:
        text = ('# Benchmarks\n\n## Core library\n\n%s\n\n## ROS nodes\n\n'
                '(to be added by benchmarks for the nodes)\n' % block)
    with open(path, 'w', encoding='utf-8') as f:
        f.write(text)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; print the report and optionally write it into a file."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--output', help='Markdown file whose core-benchmark block to replace')
    parser.add_argument('--quick', action='store_true', help='fewer repeats (a smoke run)')
    args = parser.parse_args(argv)
    text = report(args.quick)
    sys.stdout.write(text)
    if args.output:
        write_section(args.output, text)
    return 0


if __name__ == '__main__':
    sys.exit(main())
