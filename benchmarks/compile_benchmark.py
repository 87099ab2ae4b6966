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
Measure the first start: numba compile cost from an empty cache, import time and memory.

Run after ``source scripts/env.sh``::

    python benchmarks/compile_benchmark.py [--output docs/BENCHMARKS.md] [--tag after]
        [--repeat 5] [--json FILE]

Every measurement runs in a fresh subprocess of this checkout's sources:

- **cold**: ``NUMBA_CACHE_DIR`` = an empty temporary directory; ``import manip_dynamics``,
  then the warm-up steps of :func:`manip_dynamics.precompile.steps` one by one (wall and
  CPU time of each), the compile time of each kernel (numba's ``numba:compile`` events;
  "self" leaves out the kernels it compiled as callees) and the resident memory after.
- **warm**: the same steps again in a new process on the now filled cache (load, no compile).
- **cli**: ``manip-dynamics id cobot7`` end to end on the warm cache (wall time).
- **node** (``--node``): dynamics_node from its start to the first successful
  ``~/inverse_dynamics`` answer, on the warm cache and on an empty one (wall time).
- **import**: ``import manip_dynamics``, ``import numba`` and ``import pinocchio`` alone
  (median of ``--repeat`` processes), and Pinocchio's resident memory after loading cobot7
  and calling rnea, crba, aba, the Coriolis matrix and the gravity torques once.

With ``--output FILE`` the Markdown report replaces the block between the
``compile-benchmark:<tag>`` markers of FILE (appended under "## First start" if missing).
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

from doc_blocks import marked_block, replace_marked_block

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PKG = os.path.join(REPO, 'manip_dynamics')
COBOT7_STATE = '0.1,0.2,0.3,0.4,0.5,0.6,0.7'


# ---------------------------------------------------------------------- child side
def _rss_mib() -> dict:
    """Return the current and peak resident set size [MiB] from /proc (Linux)."""
    out = {}
    try:
        with open('/proc/self/status', encoding='ascii') as f:
            for line in f:
                if line.startswith(('VmRSS:', 'VmHWM:')):
                    out[line[:5]] = int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return {'rss': out.get('VmRSS'), 'peak': out.get('VmHWM')}


def child_steps() -> dict:
    """Import the library, run every warm-up step and time it (in this process)."""
    t0, c0 = time.perf_counter(), time.process_time()
    import manip_dynamics  # noqa: F401
    t_import, c_import = time.perf_counter() - t0, time.process_time() - c0
    from numba.core import event

    from manip_dynamics import precompile

    stack = []
    kernels = {}

    class Recorder(event.Listener):
        def on_start(self, ev):
            stack.append([time.perf_counter(), 0.0])

        def on_end(self, ev):
            start, children = stack.pop()
            total = time.perf_counter() - start
            if stack:
                stack[-1][1] += total
            disp = ev.data['dispatcher']
            name = '%s.%s' % (disp.py_func.__module__.replace('manip_dynamics.', ''),
                              disp.py_func.__qualname__)
            entry = kernels.setdefault(name, {'total': 0.0, 'self': 0.0, 'signatures': 0})
            entry['total'] += total if len(stack) == 0 else 0.0
            entry['self'] += total - children
            entry['signatures'] += 1

    steps = []
    with event.install_listener('numba:compile', Recorder()):
        t1, c1 = time.perf_counter(), time.process_time()
        model = precompile.warm_model()
        steps.append({'label': 'load the small arm', 'wall': time.perf_counter() - t1,
                      'cpu': time.process_time() - c1})
        for label, step in precompile.steps():
            t1, c1 = time.perf_counter(), time.process_time()
            step(model)
            steps.append({'label': label, 'wall': time.perf_counter() - t1,
                          'cpu': time.process_time() - c1})
    # The cache now holds every kernel: say so, as precompile would (the node runs use it).
    precompile.mark_warm()
    return {'import': {'wall': t_import, 'cpu': c_import}, 'steps': steps,
            'kernels': kernels, 'total': {'wall': time.perf_counter() - t0,
                                          'cpu': time.process_time() - c0},
            'memory': _rss_mib()}


def child_import(module: str) -> dict:
    """Time ``import module`` alone."""
    t0, c0 = time.perf_counter(), time.process_time()
    __import__(module)
    return {'wall': time.perf_counter() - t0, 'cpu': time.process_time() - c0}


def child_pinocchio() -> dict:
    """Import Pinocchio, load cobot7, call each algorithm once; time and memory."""
    import numpy as np
    t0 = time.perf_counter()
    import pinocchio as pin
    t_import = time.perf_counter() - t0
    # The bundled URDF by path: importing manip_dynamics would load numba into this process.
    model = pin.buildModelFromUrdf(os.path.join(PKG, 'urdf', 'cobot7.urdf'))
    data = model.createData()
    q = np.full(model.nq, 0.3)
    v = np.full(model.nv, 0.2)
    pin.rnea(model, data, q, v, v)
    pin.crba(model, data, q)
    pin.aba(model, data, q, v, v)
    pin.computeCoriolisMatrix(model, data, q, v)
    pin.computeGeneralizedGravity(model, data, q)
    return {'import': t_import, 'total': time.perf_counter() - t0, 'memory': _rss_mib()}


def child_node() -> dict:
    """Start dynamics_node on cobot7; time its first successful ~/inverse_dynamics answer."""
    import rclpy

    from manip_dynamics.ros.runtime.node_process import start_node, stop_node
    from manip_dynamics_interfaces.srv import InverseDynamics
    with open(os.path.join(PKG, 'urdf', 'cobot7.urdf'), encoding='utf-8') as f:
        xml = f.read()
    from manip_dynamics.ros.runtime.discovery import apply_loopback_environment
    apply_loopback_environment()   # the client stays on loopback (the node does: start_node)
    rclpy.init()
    node = rclpy.create_node('compile_benchmark_client')
    client = node.create_client(InverseDynamics, '/compile_benchmark_dynamics/inverse_dynamics')
    request = InverseDynamics.Request(positions=[0.1] * 7, velocities=[0.0] * 7,
                                      accelerations=[0.0] * 7)
    t0 = time.perf_counter()
    proc = start_node('dynamics_node', 'compile_benchmark_dynamics', {'robot_description': xml})
    answered = None
    try:
        while time.perf_counter() - t0 < 900.0 and proc.poll() is None:
            if not client.wait_for_service(timeout_sec=0.05):
                continue
            future = client.call_async(request)
            rclpy.spin_until_future_complete(node, future, timeout_sec=60.0)
            if future.done() and future.result().success:
                answered = time.perf_counter() - t0
                break
            time.sleep(0.05)
    finally:
        stop_node(proc)
        node.destroy_node()
        rclpy.try_shutdown()
    return {'first_answer': answered}


# ---------------------------------------------------------------------- parent side
def run_child(mode: str, env: dict | None = None, arg: str = '') -> dict:
    """Run this script as ``--child mode`` in a fresh interpreter; return its JSON."""
    cmd = [sys.executable, os.path.abspath(__file__), '--child', mode]
    if arg:
        cmd += ['--module', arg]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError('child %s failed:\n%s' % (mode, proc.stderr[-3000:]))
    return json.loads(proc.stdout.strip().splitlines()[-1])


def child_env(cache_dir: str) -> dict:
    """Return the environment of a child: this checkout first, the given numba cache."""
    env = dict(os.environ)
    env['PYTHONPATH'] = PKG + os.pathsep + env.get('PYTHONPATH', '')
    env['NUMBA_CACHE_DIR'] = cache_dir
    return env


def time_cli(env: dict) -> float:
    """Return the wall time of one ``manip-dynamics id cobot7`` process [s]."""
    cmd = [sys.executable, '-m', 'manip_dynamics.cli', 'id', 'cobot7', '--q', COBOT7_STATE,
           '--qd', COBOT7_STATE, '--qdd', COBOT7_STATE]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError('manip-dynamics id failed: %s' % proc.stderr[-2000:])
    return wall


def measure(repeat: int, with_node: bool = False) -> dict:
    """Run every child and return all the numbers."""
    with tempfile.TemporaryDirectory(prefix='md-numba-cache-') as cache:
        env = child_env(cache)
        cold = run_child('steps', env)
        warm = run_child('steps', env)
        cli = [time_cli(env) for _ in range(repeat)]
        imports = {}
        for module in ('manip_dynamics', 'manip_dynamics.robot_model', 'numba', 'pinocchio'):
            try:
                runs = [run_child('import', env, module) for _ in range(repeat)]
            except RuntimeError:
                continue
            imports[module] = statistics.median(r['wall'] for r in runs)
        try:
            pin = run_child('pinocchio', env)
        except RuntimeError:
            pin = None
        nodes = {}
        if with_node:
            nodes['warm'] = run_child('node', env)['first_answer']
            with tempfile.TemporaryDirectory(prefix='md-numba-cache-') as empty:
                nodes['cold'] = run_child('node', child_env(empty))['first_answer']
    return {'cold': cold, 'warm': warm, 'cli': statistics.median(cli), 'imports': imports,
            'pinocchio': pin, 'nodes': nodes, 'machine': '%s, %d CPUs, Python %s' % (
                platform.processor() or platform.machine(), os.cpu_count() or 0,
                platform.python_version())}


def report(data: dict, tag: str) -> str:
    """Return the Markdown report of ``measure``'s numbers."""
    cold, warm = data['cold'], data['warm']
    lines = ['### %s' % tag, '',
             'Machine: %s. Cold = empty `NUMBA_CACHE_DIR`, fresh process.' % data['machine'],
             '']
    steps_cpu = sum(s['cpu'] for s in cold['steps'])
    lines += ['| | wall | CPU |', '| --- | ---: | ---: |',
              '| cold: import + every warm-up step | %.1f s | %.1f s |' % (
                  cold['total']['wall'], cold['total']['cpu']),
              '| cold: warm-up steps only (compile) | %.1f s | %.1f s |' % (
                  sum(s['wall'] for s in cold['steps']), steps_cpu),
              '| warm cache: import + every step (load) | %.2f s | %.2f s |' % (
                  warm['total']['wall'], warm['total']['cpu']),
              '| `manip-dynamics id cobot7` process, warm cache | %.2f s | |' % data['cli']]
    for which, label in (('warm', 'warm cache'), ('cold', 'empty cache')):
        if which in data.get('nodes', {}):
            value = data['nodes'][which]
            lines.append('| dynamics_node start to first answered `~/inverse_dynamics`, %s '
                         '| %s | |' % (label, 'none' if value is None else '%.1f s' % value))
    lines.append('')
    lines += ['| warm-up step (cold) | wall | CPU | warm wall |', '| --- | ---: | ---: | ---: |']
    for c, w in zip(cold['steps'], warm['steps']):
        lines.append('| %s | %.2f s | %.2f s | %.3f s |' % (c['label'], c['wall'], c['cpu'],
                                                            w['wall']))
    lines += ['', 'Kernel compile time (cold; "self" leaves out callees compiled inside):', '',
              '| kernel | signatures | self (wall) | incl. callees, top level (wall) |',
              '| --- | ---: | ---: | ---: |']
    ranked = sorted(cold['kernels'].items(), key=lambda kv: -kv[1]['self'])
    ours = [(name, k) for name, k in ranked if not name.startswith('numba.')]
    for name, k in ours:
        lines.append('| `%s` | %d | %.2f s | %s |' % (
            name, k['signatures'], k['self'], '%.2f s' % k['total'] if k['total'] else ''))
    theirs = [k for name, k in ranked if name.startswith('numba.')]
    if theirs:
        lines.append('| numba library overloads (%d functions, compiled inside ours) | %d | '
                     '%.2f s | |' % (len(theirs), sum(k['signatures'] for k in theirs),
                                     sum(k['self'] for k in theirs)))
    lines.append('| **sum of top-level kernels** | | | %.2f s |' % sum(
        k['total'] for _, k in ranked))
    imports = data['imports']
    lines += ['', '| import and memory | manip_dynamics | Pinocchio |', '| --- | ---: | ---: |']
    pin = data['pinocchio']
    lines.append('| `import manip_dynamics` / `import pinocchio` (median of processes) | %.2f s '
                 '| %s |' % (imports.get('manip_dynamics', float('nan')),
                             '%.2f s' % imports['pinocchio'] if 'pinocchio' in imports
                             else 'n/a'))
    if 'manip_dynamics.robot_model' in imports:
        lines.append('| `from manip_dynamics import RobotModel` (loads numba) | %.2f s | |'
                     % imports['manip_dynamics.robot_model'])
    lines.append('| `import numba` alone | %.2f s | |' % imports.get('numba', float('nan')))
    lines.append('| resident memory after the first calls (peak) | %.0f MiB (%.0f) | %s |' % (
        warm['memory']['rss'] or float('nan'), cold['memory']['peak'] or float('nan'),
        '%.0f MiB (%.0f)' % (pin['memory']['rss'], pin['memory']['peak']) if pin else 'n/a'))
    lines += ['', 'manip_dynamics memory: after loading from the cache; peak: while '
              'compiling. Pinocchio: cobot7 loaded, rnea, crba, aba, Coriolis matrix and '
              'gravity called once.', '']
    return '\n'.join(lines)


def write_block(path: str, tag: str, text: str) -> None:
    """Replace (or append) the ``compile-benchmark:<tag>`` block of ``path``."""
    begin = '<!-- compile-benchmark:%s:begin -->' % tag
    end = '<!-- compile-benchmark:%s:end -->' % tag
    with open(path, encoding='utf-8') as f:
        doc = f.read()
    new = replace_marked_block(doc, begin, end, text)
    if new is None:
        if '## First start' not in doc:
            doc = doc.rstrip() + '\n\n## First start\n\nWritten by '
            doc += '`benchmarks/compile_benchmark.py`.\n'
        new = doc.rstrip() + '\n\n' + marked_block(begin, end, text) + '\n'
    with open(path, 'w', encoding='utf-8') as f:
        f.write(new)


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, measure, print and optionally write the report."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--child', help=argparse.SUPPRESS)
    parser.add_argument('--module', help=argparse.SUPPRESS)
    parser.add_argument('--output', help='Markdown file whose block to replace')
    parser.add_argument('--tag', default='latest', help='block name (e.g. before, after)')
    parser.add_argument('--repeat', type=int, default=5, help='processes per import time')
    parser.add_argument('--json', help='also write the raw numbers to this JSON file')
    parser.add_argument('--quick', action='store_true', help='repeat imports 2 times')
    parser.add_argument('--node', action='store_true',
                        help='also time dynamics_node to its first answer, warm and cold '
                        '(needs rclpy and the built interfaces; uses $ROS_DOMAIN_ID)')
    args = parser.parse_args(argv)
    if args.child:
        result = {'steps': child_steps, 'pinocchio': child_pinocchio, 'node': child_node,
                  'import': lambda: child_import(args.module)}[args.child]()
        print(json.dumps(result))
        return 0
    data = measure(2 if args.quick else args.repeat, args.node)
    text = report(data, args.tag)
    print(text)
    if args.json:
        with open(args.json, 'w', encoding='utf-8') as f:
            json.dump(data, f, indent=1)
    if args.output:
        write_block(args.output, args.tag, text)
    return 0


if __name__ == '__main__':
    sys.exit(main())
