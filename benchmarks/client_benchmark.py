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
Sequential service calls from one planner process: the suite's client beside plain rclpy.

dynamics_node runs on cobot7 (its own process); then, each in a fresh process, in one run:

* ``DynamicsClient.inverse_dynamics`` (manip_dynamics.ros.client), ``--calls`` calls
  (default 10,000);
* plain rclpy, ``call_async`` + ``rclpy.spin_until_future_complete(node, future)``, the
  pattern of rclpy's tutorials, ``--plain-calls`` calls (default 1,000: with Jazzy's wheels
  each call is slower than the last, and 10,000 would take most of an hour).

Printed: the median of the first and of the last tenth of the calls (and of the first and
last 1,000 for the client), their ratio, and the total time. Usage::

    python benchmarks/client_benchmark.py [--calls N] [--plain-calls M] [--output FILE]

With ``--output`` the table replaces the marked block of that file for this distribution.
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import textwrap

from doc_blocks import marked_block, replace_marked_block

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE_ROOT = os.path.join(REPO, 'manip_dynamics')
DISTRO = os.environ.get('ROS_DISTRO', 'jazzy')
BEGIN = '<!-- client-benchmark-%s:begin -->' % DISTRO
END = '<!-- client-benchmark-%s:end -->' % DISTRO
Q = [0.2, -0.4, 0.3, -1.8, 0.5, 1.6, 0.4]

os.environ.setdefault('ROS_DOMAIN_ID', '72')
if PACKAGE_ROOT not in sys.path:
    sys.path.insert(0, PACKAGE_ROOT)
from manip_dynamics.ros.runtime.discovery import apply_loopback_environment  # noqa: E402
apply_loopback_environment()

#: One measuring process: prints RESULT {json} with every call's time [s].
CALLER = textwrap.dedent('''
    import json, sys, time
    pattern, calls, q = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3])
    times = []
    if pattern == 'client':
        from manip_dynamics.ros.client import DynamicsClient
        with DynamicsClient('/bench_dynamics', timeout=120.0) as dyn:
            dyn.inverse_dynamics(q)
            for _ in range(calls):
                t0 = time.perf_counter()
                dyn.inverse_dynamics(q)
                times.append(time.perf_counter() - t0)
    else:
        import rclpy
        from manip_dynamics_interfaces.srv import InverseDynamics
        rclpy.init()
        node = rclpy.create_node('bench_plain_client')
        client = node.create_client(InverseDynamics, '/bench_dynamics/inverse_dynamics')
        assert client.wait_for_service(timeout_sec=120.0)
        for _ in range(calls):
            t0 = time.perf_counter()
            future = client.call_async(InverseDynamics.Request(positions=q))
            rclpy.spin_until_future_complete(node, future)
            assert future.result().success
            times.append(time.perf_counter() - t0)
        node.destroy_node()
        rclpy.try_shutdown()
    print('RESULT ' + json.dumps(times), flush=True)
''')


def measure(pattern: str, calls: int) -> list[float]:
    """Run one caller process; return its call times [s]."""
    env = dict(os.environ)
    env['PYTHONPATH'] = PACKAGE_ROOT + os.pathsep + env.get('PYTHONPATH', '')
    out = subprocess.run([sys.executable, '-c', CALLER, pattern, str(calls), json.dumps(Q)],
                         env=env, capture_output=True, text=True, timeout=7200)
    for line in out.stdout.splitlines():
        if line.startswith('RESULT '):
            return json.loads(line[len('RESULT '):])
    raise RuntimeError('%s caller failed:\n%s%s' % (pattern, out.stdout, out.stderr))


def median_ms(values: list[float]) -> float:
    ordered = sorted(values)
    return 1e3 * ordered[len(ordered) // 2]


def row(label: str, times: list[float], block: int) -> str:
    first, last = median_ms(times[:block]), median_ms(times[-block:])
    return '| %s | %d | %.2f ms | %.2f ms | %.2f | %.0f s |' % (
        label, len(times), first, last, last / first, sum(times))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--calls', type=int, default=10000)
    parser.add_argument('--plain-calls', type=int, default=1000)
    parser.add_argument('--output', default='')
    args = parser.parse_args(argv)
    from manip_dynamics.bundled import urdf_path
    from manip_dynamics.ros.runtime.node_process import start_node, stop_node
    with open(urdf_path('cobot7'), encoding='utf-8') as stream:
        xml = stream.read()
    proc = start_node('dynamics_node', 'bench_dynamics', {'robot_description': xml,
                                                          'publish_torques': False})
    try:
        client = measure('client', args.calls)
        plain = measure('plain', args.plain_calls)
    finally:
        stop_node(proc)
    import rclpy
    lines = [
        'Machine: %s, %d cores, Python %s, rclpy %s (ROS 2 %s). One process calls '
        '`~/inverse_dynamics` of dynamics_node (cobot7) back to back; medians of the first '
        'and last block of calls. Run: `python benchmarks/client_benchmark.py`.' % (
            platform.machine(), os.cpu_count(), platform.python_version(),
            getattr(rclpy, '__version__', _version('rclpy')), DISTRO.capitalize()),
        '',
        '| caller | calls | median, first block | median, last block | last / first | '
        'total |',
        '| --- | --- | --- | --- | --- | --- |',
        row('`DynamicsClient` (blocks of 1,000)', client, min(1000, max(1, len(client) // 10))),
        row('plain `rclpy.spin_until_future_complete` (blocks of a tenth)', plain,
            max(1, len(plain) // 10)),
    ]
    print('\n'.join(lines))
    if args.output:
        with open(args.output) as stream:
            text = stream.read()
        replaced = replace_marked_block(text, BEGIN, END, '\n'.join(lines))
        if replaced is None:
            replaced = text.rstrip('\n') + '\n\n### Planner client, ROS 2 %s\n\n%s\n' % (
                DISTRO.capitalize(), marked_block(BEGIN, END, '\n'.join(lines)))
        with open(args.output, 'w') as stream:
            stream.write(replaced)
    return 0


def _version(package: str) -> str:
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version(package)
    except PackageNotFoundError:
        return 'unknown'


if __name__ == '__main__':
    sys.exit(main())
