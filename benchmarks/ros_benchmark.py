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
Benchmark the ROS nodes on the default arm (cobot7, 7 DoF) over real DDS on loopback.

1. joint_states -> ~/gravity_torques latency of dynamics_node at 1 kHz input: a separate
   publisher process stamps each /joint_states with the ROS clock; this process receives
   /manip_dynamics/gravity_torques (stamp copied from the input) and takes the difference.
2. Service round trip of ~/inverse_dynamics and ~/dynamics_terms: one client calling in a
   loop (call_async + spin_until_future_complete), p50 and calls per second.
3. simulator_node real-time factor at 1 kHz with real_time_factor 0: simulated time on
   /clock over wall time.

Every node is its own process; ROS traffic stays on loopback on a domain of its own.
Usage::

    python benchmarks/ros_benchmark.py [--quick] [--output docs/BENCHMARKS.md]

With ``--output`` the results replace the marked ROS block of that file (nothing else).
"""

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time

from doc_blocks import marked_block, replace_marked_block
import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE_ROOT = os.path.join(REPO, 'manip_dynamics')
DISTRO = os.environ.get('ROS_DISTRO', 'jazzy')
BEGIN = '<!-- ros-benchmark-%s:begin -->' % DISTRO
END = '<!-- ros-benchmark-%s:end -->' % DISTRO
PLACEHOLDER = '(to be added by benchmarks for the nodes)'

os.environ.setdefault('ROS_DOMAIN_ID', '71')
if PACKAGE_ROOT not in sys.path:
    sys.path.insert(0, PACKAGE_ROOT)
# loopback-only discovery, as each distribution wants it (before rclpy is initialised)
from manip_dynamics.ros.runtime.discovery import apply_loopback_environment  # noqa: E402
apply_loopback_environment()


def machine() -> list[str]:
    """Return lines describing the machine, OS and software."""
    cpu = platform.processor() or platform.machine()
    try:
        with open('/proc/cpuinfo') as stream:
            for line in stream:
                if line.startswith('model name'):
                    cpu = line.split(':', 1)[1].strip()
                    break
    except OSError:
        pass
    osname = platform.platform()
    try:
        with open('/etc/os-release') as stream:
            fields = dict(line.rstrip().split('=', 1) for line in stream if '=' in line)
        osname = '%s (kernel %s)' % (fields.get('PRETTY_NAME', '').strip('"'),
                                     platform.release())
    except OSError:
        pass
    import rclpy
    rclpy_version = 'unknown'
    try:
        from importlib.metadata import version
        rclpy_version = version('ros-rclpy')
    except Exception:  # noqa: B902 - a plain ROS install has no ros-rclpy dist
        pass
    load = ', '.join('%.2f' % x for x in os.getloadavg())
    return [
        '- Machine: %s, %d logical CPUs; load average at start %s (other processes share '
        'the cores)' % (cpu, os.cpu_count() or 0, load),
        '- OS: %s' % osname,
        '- ROS 2 %s (rclpy %s, %s), Python %s; RMW %s; loopback discovery only' % (
            os.environ.get('ROS_DISTRO', '?'), rclpy_version, os.path.dirname(rclpy.__file__),
            platform.python_version(), os.environ.get('RMW_IMPLEMENTATION',
                                                      'rmw_fastrtps_cpp (default)')),
    ]


def publisher_main(rate: float, duration: float, names: list[str]) -> None:
    """Publish /joint_states at ``rate`` Hz for ``duration`` s (the latency input)."""
    import rclpy
    from sensor_msgs.msg import JointState
    rclpy.init()
    node = rclpy.create_node('bench_joint_states')
    pub = node.create_publisher(JointState, '/joint_states', 10)
    clock = node.get_clock()
    q0 = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])
    period = 1.0 / rate
    time.sleep(2.0)  # discovery
    start = time.monotonic()
    k = 0
    while True:
        target = start + k * period
        now = time.monotonic()
        if now - start > duration:
            break
        if target > now:
            time.sleep(target - now)
        q = q0 + 0.1 * np.sin(0.5 * k * period + np.arange(7))
        msg = JointState(name=names, position=q.tolist(), velocity=[0.0] * 7)
        msg.header.stamp = clock.now().to_msg()
        pub.publish(msg)
        k += 1
    node.destroy_node()
    rclpy.try_shutdown()


SERVICE_REQUESTS = {
    # service name -> (interface module, type, request fields)
    '/manip_dynamics/inverse_dynamics': (
        'manip_dynamics_interfaces.srv', 'InverseDynamics',
        {'joint_names': ['cobot7_joint%d' % i for i in range(1, 8)],
         'positions': [0.1, -0.7, 0.2, -2.3, 0.1, 1.6, 0.8],
         'velocities': [0.2, -0.1, 0.3, 0.1, -0.2, 0.1, 0.05],
         'accelerations': [0.5] * 7}),
    '/manip_dynamics/dynamics_terms': (
        'manip_dynamics_interfaces.srv', 'GetDynamicsTerms',
        {'joint_names': ['cobot7_joint%d' % i for i in range(1, 8)],
         'positions': [0.1, -0.7, 0.2, -2.3, 0.1, 1.6, 0.8],
         'velocities': [0.2, -0.1, 0.3, 0.1, -0.2, 0.1, 0.05]}),
    '/bench_trigger': ('std_srvs.srv', 'Trigger', {}),
}


def client_main(name: str, calls: int) -> None:
    """Call one service ``calls`` times from a fresh process; print the result as JSON."""
    import importlib
    import json
    import rclpy
    module, type_name, fields = SERVICE_REQUESTS[name]
    srv_type = getattr(importlib.import_module(module), type_name)
    rclpy.init()
    node = rclpy.create_node('bench_client')
    result = bench_service(node, srv_type, name, srv_type.Request(**fields), calls)
    node.destroy_node()
    rclpy.try_shutdown()
    print('RESULT ' + json.dumps(result), flush=True)


def run_client(name: str, calls: int) -> dict:
    """Run :func:`client_main` in a new process (rclpy slows down with every call a
    process makes, so each measurement starts fresh) and return its result."""
    import json
    env = dict(os.environ)
    env['PYTHONPATH'] = PACKAGE_ROOT + os.pathsep + env.get('PYTHONPATH', '')
    out = subprocess.run([sys.executable, os.path.abspath(__file__), '--role', 'client',
                          '--service', name, '--calls', str(calls)], env=env,
                         capture_output=True, text=True, timeout=600)
    for line in out.stdout.splitlines():
        if line.startswith('RESULT '):
            return json.loads(line[len('RESULT '):])
    raise RuntimeError('client for %s failed:\n%s%s' % (name, out.stdout, out.stderr))


def spin_until_stopped(node) -> None:
    """Spin a helper process's node until SIGINT or shutdown, then clean up."""
    import rclpy
    from rclpy.executors import ExternalShutdownException
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()


def trigger_server_main() -> None:
    """Serve a trivial std_srvs/Trigger on /bench_trigger (baseline of rclpy services)."""
    import rclpy
    from std_srvs.srv import Trigger

    def answer(request, response):
        response.success = True
        return response
    rclpy.init()
    node = rclpy.create_node('bench_trigger_server')
    node.create_service(Trigger, '/bench_trigger', answer)
    spin_until_stopped(node)


def relay_main() -> None:
    """
    Republish /joint_states on /manip_dynamics/gravity_torques unchanged (latency floor).

    The same topics, QoS depth and single-threaded executor as dynamics_node, no dynamics:
    what rclpy and DDS alone cost on the latency path.
    """
    import rclpy
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState
    rclpy.init()
    node = rclpy.create_node('bench_relay')
    pub = node.create_publisher(JointState, '/manip_dynamics/gravity_torques', 10)
    node.create_subscription(JointState, '/joint_states', pub.publish,
                             QoSProfile(depth=10, reliability=ReliabilityPolicy.BEST_EFFORT))
    spin_until_stopped(node)


def percentile_ms(values: list[float], p: float) -> float:
    """Return a percentile of durations in seconds, in milliseconds."""
    return 1e3 * float(np.percentile(np.asarray(values), p))


def wait_for_dynamics(node, failure: str) -> None:
    """Wait until /manip_dynamics/inverse_dynamics is offered; raise ``failure`` if not."""
    from manip_dynamics_interfaces.srv import InverseDynamics
    client = node.create_client(InverseDynamics, '/manip_dynamics/inverse_dynamics')
    if not client.wait_for_service(timeout_sec=120.0):
        raise RuntimeError(failure)
    node.destroy_client(client)


def record_latencies(node, msg_type, topic: str, publisher: list[str], env: dict,
                     duration: float, log_dir: str, wait_timeout: float) -> list[float]:
    """
    Receive ``topic`` for ``duration`` s while a publisher process feeds the input.

    ``node`` is spun on a thread; the publisher runs ``publisher`` plus ``--duration``
    (warm-up and a margin included) with its output in ``log_dir``/publisher.log.

    :param node: The receiving node.
    :param msg_type: The message type of ``topic`` (it must have a header).
    :param topic: The output topic.
    :param publisher: The publisher's command line, without ``--duration``.
    :param env: The publisher's environment.
    :param duration: How long to record [s], after 2 s discovery and 2 s warm-up.
    :param log_dir: Folder for publisher.log.
    :param wait_timeout: How long to wait for the publisher to finish [s].
    :return: Latencies [s]: receive time minus the header stamp (same ROS clock), one per
        message received while recording.
    """
    from rclpy.executors import SingleThreadedExecutor
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()
    clock = node.get_clock()
    latencies = []
    recording = threading.Event()

    def callback(msg):
        if recording.is_set():
            now = clock.now().nanoseconds
            stamp = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
            latencies.append((now - stamp) * 1e-9)
    sub = node.create_subscription(msg_type, topic, callback, 1000)
    warmup = 2.0
    pub = subprocess.Popen(
        publisher + ['--duration', str(duration + warmup + 1.0)], env=env,
        stdout=open(os.path.join(log_dir, 'publisher.log'), 'w'), stderr=subprocess.STDOUT)
    time.sleep(2.0 + warmup)  # publisher discovery + warm-up
    recording.set()
    time.sleep(duration)
    recording.clear()
    pub.wait(timeout=wait_timeout)
    node.destroy_subscription(sub)
    executor.shutdown()
    executor.remove_node(node)
    return latencies


def bench_latency(node, names, duration: float, log_dir: str) -> dict:
    """Measure joint_states -> ~/gravity_torques latency at 1 kHz (``node`` spun on a thread)."""
    from sensor_msgs.msg import JointState
    latencies = record_latencies(
        node, JointState, '/manip_dynamics/gravity_torques',
        [sys.executable, os.path.abspath(__file__), '--role', 'publisher'], dict(os.environ),
        duration, log_dir, 30.0)
    sent = duration * 1000.0
    return {'p50': percentile_ms(latencies, 50), 'p99': percentile_ms(latencies, 99),
            'received': len(latencies), 'sent': sent}


def bench_service(node, srv_type, name: str, request, calls: int) -> dict:
    """Call a service ``calls`` times in a loop; return p50 and calls per second."""
    import rclpy
    client = node.create_client(srv_type, name)
    if not client.wait_for_service(timeout_sec=60.0):
        raise RuntimeError('service %s not available' % name)
    for _ in range(20):  # warm up
        future = client.call_async(request)
        rclpy.spin_until_future_complete(node, future)
    times = []
    start = time.perf_counter()
    for _ in range(calls):
        t0 = time.perf_counter()
        future = client.call_async(request)
        rclpy.spin_until_future_complete(node, future)
        times.append(time.perf_counter() - t0)
        if not future.result().success:
            raise RuntimeError('%s failed: %s' % (name, future.result().message))
    total = time.perf_counter() - start
    node.destroy_client(client)
    return {'p50': percentile_ms(times, 50), 'p99': percentile_ms(times, 99),
            'rate': calls / total, 'first': percentile_ms(times[:100], 50),
            'last': percentile_ms(times[-100:], 50)}


def bench_simulator(node, xml: str, duration: float, log_dir: str) -> dict:
    """Run simulator_node with real_time_factor 0 and measure simulated / wall time."""
    import rclpy
    from rosgraph_msgs.msg import Clock
    from manip_dynamics.ros.runtime.node_process import start_node, stop_node
    samples = []
    sub = node.create_subscription(
        Clock, '/clock', lambda m: samples.append(
            (time.monotonic(), m.clock.sec + 1e-9 * m.clock.nanosec)), 1000)
    proc = start_node('simulator_node', 'bench_simulator', {
        'robot_description': xml, 'real_time_factor': 0.0, 'publish_clock': True,
        'rate': 1000.0, 'publish_rate': 250.0}, log_dir=log_dir)
    try:
        deadline = time.monotonic() + 120.0
        while not samples and time.monotonic() < deadline:
            rclpy.spin_once(node, timeout_sec=0.1)
        end = time.monotonic() + 1.0 + duration
        while time.monotonic() < end:
            rclpy.spin_once(node, timeout_sec=0.1)
    finally:
        stop_node(proc)
        node.destroy_subscription(sub)
    t_start = samples[0][0] + 1.0
    window = [s for s in samples if s[0] >= t_start]
    rtf = (window[-1][1] - window[0][1]) / (window[-1][0] - window[0][0])
    return {'rtf': rtf, 'sim_seconds': window[-1][1] - window[0][1],
            'wall_seconds': window[-1][0] - window[0][0]}


def write_section(path: str, lines: list[str]) -> None:
    """Replace (or insert under '## ROS nodes') the marked ROS block of ``path``."""
    block = marked_block(BEGIN, END, '\n'.join(lines))
    with open(path) as stream:
        text = stream.read()
    replaced = replace_marked_block(text, BEGIN, END, '\n'.join(lines))
    if replaced is not None:
        text = replaced
    elif PLACEHOLDER in text:
        text = text.replace(PLACEHOLDER, block, 1)
    elif '## ROS nodes' in text:
        text = text.replace('## ROS nodes', '## ROS nodes\n\n### ROS 2 %s\n\n%s' % (
            DISTRO.capitalize(), block), 1)
    else:
        text = text.rstrip('\n') + '\n\n## ROS nodes\n\n### ROS 2 %s\n\n%s\n' % (
            DISTRO.capitalize(), block)
    with open(path, 'w') as stream:
        stream.write(text)


def main(argv: list[str] | None = None) -> int:
    """Run the three benchmarks and print (optionally write) the results table."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--quick', action='store_true', help='short runs (smoke test)')
    parser.add_argument('--output', default='', help='Markdown file to update')
    parser.add_argument('--role', default='bench', help=argparse.SUPPRESS)
    parser.add_argument('--ros-args', nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    parser.add_argument('--duration', type=float, default=0.0, help=argparse.SUPPRESS)
    parser.add_argument('--service', default='', help=argparse.SUPPRESS)
    parser.add_argument('--calls', type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    names = ['cobot7_joint%d' % i for i in range(1, 8)]
    if args.role == 'publisher':
        publisher_main(1000.0, args.duration, names)
        return 0
    if args.role == 'client':
        client_main(args.service, args.calls)
        return 0
    if args.role == 'trigger_server':
        trigger_server_main()
        return 0
    if args.role == 'relay':
        relay_main()
        return 0

    import rclpy
    from manip_dynamics.bundled import urdf_path
    # Imported here, not at the top: the child roles above must start fast.
    from manip_dynamics.ros.runtime.node_process import start_node, stop_node

    with open(urdf_path('cobot7')) as stream:
        xml = stream.read()
    latency_s = 3.0 if args.quick else 10.0
    calls = 100 if args.quick else 300
    sim_s = 3.0 if args.quick else 10.0
    header = machine()
    log_dir = tempfile.mkdtemp(prefix='ros_benchmark_')
    rclpy.init()
    node = rclpy.create_node('ros_benchmark')
    dyn = start_node('dynamics_node', 'manip_dynamics', {'robot_description': xml},
                     log_dir=log_dir)
    try:
        # Services first, on an idle node; then the latency run (a flood of joint_states),
        # its subscriptions spun on a thread while this thread sleeps.
        wait_for_dynamics(node, 'dynamics_node did not come up; see %s' % log_dir)
        services = {name: run_client('/manip_dynamics/' + name, calls)
                    for name in ('inverse_dynamics', 'dynamics_terms')}
        print('services: %s' % services, flush=True)
        latency = bench_latency(node, names, latency_s, log_dir)
        print('latency: %s' % latency, flush=True)
    finally:
        stop_node(dyn)
    env = dict(os.environ)
    env['PYTHONPATH'] = PACKAGE_ROOT + os.pathsep + env.get('PYTHONPATH', '')
    # Baseline: the same latency path through a relay node that computes nothing.
    relay = subprocess.Popen(
        [sys.executable, os.path.abspath(__file__), '--role', 'relay'],
        env=env, stdout=open(os.path.join(log_dir, 'relay.log'), 'w'),
        stderr=subprocess.STDOUT, start_new_session=True)
    try:
        time.sleep(3.0)  # discovery
        latency_relay = bench_latency(node, names, latency_s, log_dir)
        print('latency (relay): %s' % latency_relay, flush=True)
    finally:
        stop_node(relay)
    # Baseline: the same client loop against a trivial rclpy Trigger server.
    trigger = subprocess.Popen(
        [sys.executable, os.path.abspath(__file__), '--role', 'trigger_server'],
        env=env, stdout=open(os.path.join(log_dir, 'trigger.log'), 'w'),
        stderr=subprocess.STDOUT, start_new_session=True)
    try:
        baseline = run_client('/bench_trigger', calls)
        print('baseline: %s' % baseline, flush=True)
    finally:
        stop_node(trigger)
    try:
        sim = bench_simulator(node, xml, sim_s, log_dir)
        print('simulator: %s' % sim, flush=True)
    finally:
        node.destroy_node()
        rclpy.try_shutdown()

    def verdict(ok: bool) -> str:
        return 'met' if ok else 'NOT met'
    lines = [
        'Generated by `python benchmarks/ros_benchmark.py%s` (each node its own process, '
        'DDS on loopback).' % (' --quick' if args.quick else ''),
        '',
    ] + header + [
        '',
        '| measurement (cobot7, 7 DoF) | p50 | p99 | throughput | target |',
        '| --- | ---: | ---: | ---: | --- |',
        '| /joint_states -> ~/gravity_torques latency, 1 kHz input, %g s (%d of %d '
        'received) | %.3f ms | %.3f ms | | p50 < 0.5 ms: %s |' % (
            latency_s, latency['received'], latency['sent'], latency['p50'], latency['p99'],
            verdict(latency['p50'] < 0.5)),
        '| baseline: the same path through a relay node that computes nothing (%d of %d '
        'received) | %.3f ms | %.3f ms | | |' % (
            latency_relay['received'], latency_relay['sent'], latency_relay['p50'],
            latency_relay['p99']),
    ] + [
        '| %s service round trip, %d calls (p50 of the first / last 100: %.2f / %.2f ms) '
        '| %.3f ms | %.3f ms | %.0f calls/s | |' % (
            label, calls, r['first'], r['last'], r['p50'], r['p99'], r['rate'])
        for label, r in (('~/inverse_dynamics', services['inverse_dynamics']),
                         ('~/dynamics_terms', services['dynamics_terms']),
                         ('baseline: trivial std_srvs/Trigger rclpy server', baseline))
    ] + [
        '| simulator_node, rate 1 kHz, real_time_factor 0: real-time factor over %.1f s of '
        'wall time | | | **%.1f x** real time | >= 5: %s |' % (
            sim['wall_seconds'], sim['rtf'], verdict(sim['rtf'] >= 5.0)),
        '',
        'Service round trips: a fresh client process calling in a loop with '
        "`spin_until_future_complete`, so the client's own rclpy overhead is included"
        + ('. With these rclpy wheels the round trip grows with every call the client '
           'process has made (the same against the trivial Trigger server; a new node or '
           'client in the same process does not reset it): compare the first and last 100 '
           'calls. ' if baseline['last'] > 1.5 * baseline['first'] else
           '; the first and last 100 calls show no growth. ') +
        "Latency: receive time minus the input's header stamp, both from the ROS clock of "
        'the same machine, dynamics_node as shipped (single-threaded executor; '
        "rclpy's multi-threaded executor measured 11 ms p50 on this path and dropped most "
        'input at 1 kHz).',
    ]
    print('\n'.join(lines))
    if args.output:
        write_section(args.output, lines)
        print('wrote the ROS block of %s' % args.output)
    return 0


if __name__ == '__main__':
    sys.exit(main())
