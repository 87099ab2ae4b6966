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
The story's three nodes at 1 kHz joint states: the CPU they take together (issue 28, item 5).

simulator_node (cobot7, integrating and publishing /joint_states at 1 kHz on the wall
clock), trajectory_controller holding the arm (config/trajectory_controller.yaml:
one command per state) and external_torque_observer (the story's parameters), each a
process as the launch files start them. After a warm-up, the processes' CPU time (user +
system, from /proc) over a window, as a share of one core, and the rate of /joint_states
this process received. Three ways to run the nodes, one after the other in one run and
repeated in turn (the table gives each one's median over the repeats):

- ``lanes``: the default (rclpy's SingleThreadedExecutor, the per-sample callbacks on the
  nodes' callback lanes, runtime/callback_lane.py);
- ``executor``: every callback on the SingleThreadedExecutor (``MANIP_DYNAMICS_LANES=0``,
  how the nodes ran before the lanes);
- ``events``: rclpy's experimental EventsExecutor (``MANIP_DYNAMICS_EXECUTOR=events``).

Usage::

    python benchmarks/story_cpu_benchmark.py [--seconds 20] [--repeats 2] [--output FILE]

With ``--output`` the table replaces the marked block of that file for this distribution.
"""

import argparse
import os
import platform
import statistics
import sys
import threading
import time

NODES = ('simulator_node', 'trajectory_controller', 'external_torque_observer')
#: configuration -> (environment, column title)
CONFIGS = {
    'lanes': ({'MANIP_DYNAMICS_EXECUTOR': 'single', 'MANIP_DYNAMICS_LANES': '1'},
              'callback lanes (default)'),
    'executor': ({'MANIP_DYNAMICS_EXECUTOR': 'single', 'MANIP_DYNAMICS_LANES': '0'},
                 'all on the SingleThreadedExecutor (before)'),
    'events': ({'MANIP_DYNAMICS_EXECUTOR': 'events'}, 'EventsExecutor (on request)'),
}


def cpu_seconds(pid: int) -> float:
    """Return a process's user + system CPU time [s] (/proc/<pid>/stat)."""
    with open('/proc/%d/stat' % pid, encoding='utf-8') as stream:
        fields = stream.read().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')


def run(config: str, seconds: float, warmup: float) -> dict:
    """
    Start the three nodes in configuration ``config`` (:data:`CONFIGS`), measure, stop them.

    :return: ``{'cpu': {node: share of one core}, 'rate': /joint_states per second}``.
    """
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState

    from manip_dynamics.bundled import urdf_path
    from manip_dynamics.demo.scenario import config_parameters
    from manip_dynamics.ros.runtime.node_process import start_node, stop_node

    with open(urdf_path('cobot7'), encoding='utf-8') as stream:
        xml = stream.read()
    env = dict(os.environ, **CONFIGS[config][0])
    params = {
        'simulator_node': {'rate': 1000.0, 'publish_rate': 1000.0, 'command_timeout': 0.5},
        'trajectory_controller': {**config_parameters('trajectory_controller'),
                                  'timeout': 0.5},
        'external_torque_observer': config_parameters('external_torque_observer'),
    }
    procs = {name: start_node(name, 'cpu_%s' % name, {'robot_description': xml,
                                                      **params[name]}, env=env)
             for name in NODES}
    context = rclpy.Context()
    rclpy.init(context=context)
    count = [0]
    try:
        node = rclpy.create_node('story_cpu_benchmark', context=context)
        node.create_subscription(
            JointState, '/joint_states', lambda msg: count.__setitem__(0, count[0] + 1),
            QoSProfile(depth=10, reliability=ReliabilityPolicy.BEST_EFFORT))
        spin = SingleThreadedExecutor(context=context)
        spin.add_node(node)
        thread = threading.Thread(target=spin.spin, daemon=True)
        thread.start()
        time.sleep(warmup)
        for name, proc in procs.items():
            if proc.poll() is not None:
                raise RuntimeError('%s exited during the warm-up; see %s'
                                   % (name, proc.log_path))
        start = {name: cpu_seconds(proc.pid) for name, proc in procs.items()}
        counted, t0 = count[0], time.monotonic()
        time.sleep(seconds)
        elapsed = time.monotonic() - t0
        used = {name: (cpu_seconds(proc.pid) - start[name]) / elapsed
                for name, proc in procs.items()}
        rate = (count[0] - counted) / elapsed
        spin.shutdown()
        node.destroy_node()
    finally:
        for proc in procs.values():
            stop_node(proc)
        rclpy.try_shutdown(context=context)
    return {'cpu': used, 'rate': rate}


def table(results: dict) -> str:
    """Return the results (configuration -> list of :func:`run` results) as Markdown."""
    configs = [c for c in CONFIGS if c in results]
    lines = ['| node, 1 kHz joint states | ' + ' | '.join(
        '%s: share of one core' % CONFIGS[c][1] for c in configs) + ' |',
        '| --- |' + ' ---: |' * len(configs)]

    def share(config: str, name: str | None) -> float:
        return 100 * statistics.median(sum(r['cpu'].values()) if name is None
                                       else r['cpu'][name] for r in results[config])
    for name in NODES:
        lines.append('| %s | ' % name + ' | '.join(
            '%.0f %%' % share(c, name) for c in configs) + ' |')
    lines.append('| the three together | ' + ' | '.join(
        '%.0f %% (%s)' % (share(c, None), ', '.join(
            '%.0f' % (100 * sum(r['cpu'].values())) for r in results[c]))
        for c in configs) + ' |')
    lines.append('| /joint_states received [1/s] | ' + ' | '.join(
        '%.0f' % statistics.median([r['rate'] for r in results[c]]) for c in configs) + ' |')
    return '\n'.join(lines)


def main() -> int:
    """Measure every configuration in turn, print, and optionally write the marked block."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[1])
    parser.add_argument('--seconds', type=float, default=20.0, help='measuring window [s]')
    parser.add_argument('--warmup', type=float, default=15.0,
                        help='seconds after the start before measuring')
    parser.add_argument('--repeats', type=int, default=2,
                        help='rounds over the configurations (each gives one run of each)')
    parser.add_argument('--output', help='Markdown file with the marked block to replace')
    args = parser.parse_args()
    from manip_dynamics.ros.runtime.discovery import apply_loopback_environment
    apply_loopback_environment()   # this process's own counting node stays on loopback too
    load_text = ', '.join('%.2f' % v for v in os.getloadavg())
    results: dict = {config: [] for config in CONFIGS}
    for _ in range(args.repeats):
        for config in CONFIGS:
            results[config].append(run(config, args.seconds, args.warmup))
    distro = os.environ.get('ROS_DISTRO', 'unknown')
    header = ('Measured %s on %s (%s, %d cores), Python %s, ROS 2 %s; %g s windows after '
              "%g s of warm-up, %d rounds over the configurations (medians; the rounds' "
              'totals in brackets); load average at start %s.' % (
                  time.strftime('%Y-%m-%d'), platform.node() or 'this machine',
                  platform.machine(), os.cpu_count() or 0, platform.python_version(),
                  distro, args.seconds, args.warmup, args.repeats, load_text))
    text = header + '\n\n' + table(results)
    print(text)
    if args.output:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from doc_blocks import write_block
        title = "### The story's three nodes at 1 kHz, ROS 2 %s" % distro.capitalize()
        write_block(args.output, 'story-cpu-%s' % distro, title, text)
    return 0


if __name__ == '__main__':
    sys.exit(main())
