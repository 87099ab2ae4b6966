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
Benchmark external_torque_observer: /joint_states -> ~/contact latency, 1 kHz and 250 Hz.

A publisher process sends /joint_states of a smooth motion of cobot7 (position, velocity and
the inverse-dynamics effort, so no contact), stamped with the ROS clock, at 1 kHz and then
at 250 Hz. This process receives the observer's ``~/contact`` (stamp copied from the input)
and takes the difference; then the same through ros_benchmark.py's relay node (republishes
each /joint_states unchanged: the rclpy + DDS floor). Each node is its own process, DDS on
loopback, a domain of its own. The library's share of the observer's work per message is
timed in this process first. Usage::

    python benchmarks/observer_benchmark.py [--quick] [--output docs/BENCHMARKS.md]

With ``--output`` the results replace the marked observer block of that file.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

from doc_blocks import replace_marked_block
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ros_benchmark  # noqa: E402, I100 (sets loopback discovery and the package path)

DISTRO = ros_benchmark.DISTRO
BEGIN = '<!-- observer-benchmark-%s:begin -->' % DISTRO
END = '<!-- observer-benchmark-%s:end -->' % DISTRO
OUT_TOPIC = '/external_torque_observer/contact'
RELAY_TOPIC = '/manip_dynamics/gravity_torques'
#: Input rates [Hz]: a 1 kHz control loop, and the simulator's default /joint_states rate.
RATES = (1000.0, 250.0)


def publisher_main(duration: float, rate: float) -> None:
    """Publish /joint_states with efforts at ``rate`` Hz for ``duration`` s."""
    import rclpy
    from sensor_msgs.msg import JointState
    from manip_dynamics import RobotModel
    from manip_dynamics.bundled import urdf_path
    model = RobotModel.from_urdf_file(urdf_path('cobot7'))
    names = list(model.joint_names)
    rclpy.init()
    node = rclpy.create_node('bench_observer_joint_states')
    pub = node.create_publisher(JointState, '/joint_states', 10)
    clock = node.get_clock()
    q0 = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])
    phase = np.arange(7.0)
    period = 1.0 / rate
    model.inverse_dynamics(q0, q0 * 0.0, q0 * 0.0, include_friction=True)  # compile
    time.sleep(2.0)  # discovery
    start = time.monotonic()
    k = 0
    while time.monotonic() - start <= duration:
        target = start + k * period
        now = time.monotonic()
        if target > now:
            time.sleep(target - now)
        t = now - start
        q = q0 + 0.1 * np.sin(0.5 * t + phase)
        qd = 0.05 * np.cos(0.5 * t + phase)
        qdd = -0.025 * np.sin(0.5 * t + phase)
        tau = model.inverse_dynamics(q, qd, qdd, include_friction=True)
        msg = JointState(name=names, position=q.tolist(), velocity=qd.tolist(),
                         effort=tau.tolist())
        msg.header.stamp = clock.now().to_msg()
        pub.publish(msg)
        k += 1
    node.destroy_node()
    rclpy.try_shutdown()


def measure(node, msg_type, topic: str, duration: float, rate: float, log_dir: str) -> dict:
    """Receive ``topic`` while the publisher runs at ``rate``; return percentiles [ms]."""
    env = dict(os.environ)
    env['PYTHONPATH'] = ros_benchmark.PACKAGE_ROOT + os.pathsep + env.get('PYTHONPATH', '')
    latencies = ros_benchmark.record_latencies(
        node, msg_type, topic,
        [sys.executable, os.path.abspath(__file__), '--role', 'publisher', '--rate', str(rate)],
        env, duration, log_dir, 60.0)
    if not latencies:
        raise RuntimeError('nothing received on %s; see %s' % (topic, log_dir))
    return {'p50': ros_benchmark.percentile_ms(latencies, 50),
            'p99': ros_benchmark.percentile_ms(latencies, 99),
            'received': len(latencies), 'sent': int(duration * rate)}


def library_cost(count: int = 3000, wrench: bool = True) -> float:
    """
    Time what the node asks of the library per message, in this process.

    :param count: Messages to time.
    :param wrench: Include the Jacobian and the wrench estimate.
    :return: Median over 5 rounds of the mean time per message [us].
    """
    from manip_dynamics import RobotModel
    from manip_dynamics.bundled import urdf_path
    from manip_dynamics.observers import ContactDetector, estimate_wrench, MomentumObserver
    model = RobotModel.from_urdf_file(urdf_path('cobot7'))
    observer = MomentumObserver(model, 50.0)
    detector = ContactDetector(np.ones(model.dof))
    q = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])
    qd = np.full(model.dof, 0.05)
    tau = model.gravity_torques(q)
    observer.update(0.0, q, qd, tau)
    rounds = []
    k = 1
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(count):
            r = observer.update(k * 1e-3, q, qd, tau)
            detector.update(r)
            if wrench:
                estimate_wrench(model.jacobian(q, 'tool0'), r)
            k += 1
        rounds.append((time.perf_counter() - start) / count * 1e6)
    return float(np.median(rounds))


def write_section(path: str, lines: list[str]) -> None:
    """Replace the text between BEGIN and END in ``path`` with ``lines``."""
    with open(path, encoding='utf-8') as stream:
        text = stream.read()
    new = replace_marked_block(text, BEGIN, END, '\n'.join(lines))
    if new is None:
        raise RuntimeError('%s has no %s ... %s block' % (path, BEGIN, END))
    with open(path, 'w', encoding='utf-8') as stream:
        stream.write(new)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print (optionally write) the table."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--quick', action='store_true', help='short runs (smoke test)')
    parser.add_argument('--output', default='', help='Markdown file to update')
    parser.add_argument('--role', default='bench', help=argparse.SUPPRESS)
    parser.add_argument('--duration', type=float, default=0.0, help=argparse.SUPPRESS)
    parser.add_argument('--rate', type=float, default=1000.0, help=argparse.SUPPRESS)
    parser.add_argument('--ros-args', nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.role == 'publisher':
        publisher_main(args.duration, args.rate)
        return 0

    import rclpy
    from sensor_msgs.msg import JointState
    from manip_dynamics.bundled import urdf_path
    from manip_dynamics.ros.runtime.node_process import start_node, stop_node
    from manip_dynamics_interfaces.msg import Contact

    with open(urdf_path('cobot7')) as stream:
        xml = stream.read()
    duration = 3.0 if args.quick else 10.0
    header = ros_benchmark.machine()
    library_us = (library_cost(wrench=False), library_cost())
    print('library work per message: %.1f us, %.1f us with the wrench' % library_us,
          flush=True)
    log_dir = tempfile.mkdtemp(prefix='observer_benchmark_')
    rclpy.init()
    node = rclpy.create_node('observer_benchmark')

    def measured(proc, name: str, msg_type, topic: str) -> dict:
        """Wait until ``proc`` publishes ``topic``, measure at every rate, then stop it."""
        try:
            deadline = time.monotonic() + 120.0
            while node.count_publishers(topic) == 0:  # a loaded machine starts it slowly
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError('the %s did not come up; see %s' % (name, log_dir))
                time.sleep(0.1)
            time.sleep(1.0)
            result = {rate: measure(node, msg_type, topic, duration, rate, log_dir)
                      for rate in RATES}
            print('%s: %s' % (name, result), flush=True)
            return result
        finally:
            stop_node(proc)

    try:
        observed = measured(start_node(
            'external_torque_observer', 'external_torque_observer',
            {'robot_description': xml, 'wrench_link': 'tool0'}, log_dir=log_dir),
            'observer', Contact, OUT_TOPIC)
        # Baseline: ros_benchmark.py's relay node (republishes /joint_states unchanged as
        # /manip_dynamics/gravity_torques), fed by the same publisher at the same rates.
        env = dict(os.environ)
        env['PYTHONPATH'] = ros_benchmark.PACKAGE_ROOT + os.pathsep + env.get('PYTHONPATH', '')
        relayed = measured(subprocess.Popen(
            [sys.executable, os.path.join(HERE, 'ros_benchmark.py'), '--role', 'relay'],
            env=env, stdout=open(os.path.join(log_dir, 'relay.log'), 'w'),
            stderr=subprocess.STDOUT, start_new_session=True), 'relay', JointState, RELAY_TOPIC)
    finally:
        node.destroy_node()
        rclpy.try_shutdown()

    def row(label: str, r: dict) -> str:
        return '| %s | %.3f ms | %.3f ms | %d of %d |' % (label, r['p50'], r['p99'],
                                                          r['received'], r['sent'])
    lines = [
        'Generated by `python benchmarks/observer_benchmark.py%s` (each node its own '
        'process, DDS on loopback).' % (' --quick' if args.quick else ''),
        '',
    ] + header + [
        '',
        '| measurement (cobot7, 7 DoF, %g s per row) | p50 | p99 | received |' % duration,
        '| --- | ---: | ---: | ---: |',
    ]
    for rate in RATES:
        lines += [
            row('/joint_states -> external_torque_observer ~/contact, %g Hz input' % rate,
                observed[rate]),
            row('baseline: the same path through a relay node that computes nothing, %g Hz '
                'input' % rate, relayed[rate]),
        ]
    lines += [
        '',
        'Library work per message, timed in one process: %.0f us for the observer update '
        'and the contact decision, %.0f us with the Jacobian and the wrench estimate (done '
        'only while ~/external_wrench has a subscriber; none here). ' % library_us +
        "Latency: receive time of ~/contact minus the input's header stamp (copied), both from "
        "the ROS clock of the same machine. The observer's own work per message: M(q), "
        'C(q, qd), g(q), friction, the contact decision and two messages (~/contact first, '
        'then ~/external_torques). When the node cannot keep up, its queue (queue_depth 100) '
        'fills: the latency becomes about 100 input periods and samples are skipped.',
    ]
    print('\n'.join(lines))
    if args.output:
        write_section(args.output, lines)
        print('wrote the observer block of %s' % args.output)
    return 0


if __name__ == '__main__':
    sys.exit(main())
