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
The simulator node over real DDS (loopback), as a separate process.

Two simulators run side by side for the whole module: ``sim_a`` with the defaults of the
bundled cobot7 (friction, spring limits, semi-implicit Euler) and ``sim_b`` without friction
or limits, with RK4, to check energy conservation. Expected values come from physics (energy
is conserved without friction; an arm with no torque falls), from the URDF text (the ready
pose of its <ros2_control> block, its effort limits) and from what the test itself sends.
"""

import math
import threading
import time

import numpy as np
import pytest
from ros_test_support import read_log, require_rclpy, STARTUP_TIMEOUT

rclpy = require_rclpy()

from rclpy.executors import SingleThreadedExecutor  # noqa: E402, I100
from rosgraph_msgs.msg import Clock  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402
from std_srvs.srv import SetBool, Trigger  # noqa: E402

from manip_dynamics import RobotModel  # noqa: E402
from manip_dynamics.bundled import urdf_path  # noqa: E402
from manip_dynamics.ros.runtime.node_process import start_node, stop_node  # noqa: E402

pytestmark = [pytest.mark.rostest, pytest.mark.slow, pytest.mark.realtime]

# The Panda 'ready' pose, as cobot7.urdf's <ros2_control> initial_value entries give it.
READY = np.array([0.0, -math.pi / 4, 0.0, -3 * math.pi / 4, 0.0, math.pi / 2, math.pi / 4])
# cobot7's effort limits (Franka's published Panda values, as in the URDF).
EFFORT_LIMITS = np.array([87.0, 87.0, 87.0, 87.0, 12.0, 12.0, 12.0])


def stamp_seconds(msg) -> float:
    """Return a header stamp in seconds."""
    return msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec


class Probe:
    """A test-side node spun on a background thread that records joint states."""

    def __init__(self, name: str) -> None:
        self.node = rclpy.create_node(name)
        self.lock = threading.Lock()
        self.states: dict[str, list] = {}
        self.executor = SingleThreadedExecutor()
        self.executor.add_node(self.node)
        self.thread = threading.Thread(target=self.executor.spin, daemon=True)
        self.thread.start()

    def record(self, topic: str) -> None:
        """Record every JointState on ``topic`` as (receive time, message)."""
        self.states[topic] = []

        def callback(msg, topic=topic):
            with self.lock:
                self.states[topic].append((time.monotonic(), msg))
        self.node.create_subscription(JointState, topic, callback, 100)

    def since(self, topic: str, t0: float) -> list:
        """Return the messages of ``topic`` received after monotonic time ``t0``."""
        with self.lock:
            return [m for t, m in self.states[topic] if t > t0]

    def wait_for(self, topic: str, count: int = 1, timeout: float = 10.0,
                 after: float | None = None) -> list:
        """Wait until ``count`` messages arrived after ``after`` (default: now)."""
        t0 = time.monotonic() if after is None else after
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            msgs = self.since(topic, t0)
            if len(msgs) >= count:
                return msgs
            time.sleep(0.01)
        raise AssertionError('%d messages on %s not received within %.0f s' % (
            count, topic, timeout))

    def call(self, srv_type, name: str, request, timeout: float = 10.0):
        """Call a service from the test thread; the executor thread completes it."""
        client = self.node.create_client(srv_type, name)
        assert client.wait_for_service(timeout_sec=timeout), 'no service %s' % name
        future = client.call_async(request)
        deadline = time.monotonic() + timeout
        while not future.done() and time.monotonic() < deadline:
            time.sleep(0.005)
        assert future.done(), 'service %s did not answer' % name
        return future.result()

    def close(self) -> None:
        """Stop spinning and destroy the node."""
        self.executor.shutdown()
        self.node.destroy_node()


def sim_time_elapsed(probe: Probe, topic: str, duration: float, timeout: float = 30.0,
                     after: float | None = None) -> list:
    """Collect the messages of ``topic`` over ``duration`` seconds of simulated time."""
    t0 = time.monotonic() if after is None else after
    first = probe.wait_for(topic, 1, after=t0)[0]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        msgs = probe.since(topic, t0)
        if stamp_seconds(msgs[-1]) - stamp_seconds(first) >= duration:
            return msgs
        time.sleep(0.02)
    raise AssertionError('simulated time did not advance %.1f s on %s' % (duration, topic))


@pytest.fixture(scope='module')
def cobot7():
    """Return the cobot7 URDF text and its model (the reference for names and energy)."""
    with open(urdf_path('cobot7')) as stream:
        xml = stream.read()
    return xml, RobotModel.from_urdf_string(xml)


@pytest.fixture(scope='module')
def graph(cobot7):
    """Start sim_a (defaults) and sim_b (no friction, no limits, RK4); yield a probe."""
    xml = cobot7[0]
    rclpy.init()
    procs = []
    probe = None
    try:
        # brakes off: these tests are about the free dynamics (the brakes are tested in
        # test_node_lifecycle.py)
        # zero effort on a stale command (the protective stop is test_node_lifecycle's)
        procs.append(start_node('simulator_node', 'sim_a', {
            'robot_description': xml, 'publish_clock': True, 'command_timeout': 0.1,
            'brakes': False, 'command_timeout_action': 'zero'}))
        procs.append(start_node('simulator_node', 'sim_b', {
            'robot_description': xml, 'publish_clock': True, 'simulate_friction': False,
            'brakes': False,
            'limits': 'none', 'integrator': 'rk4', 'start_paused': True,
            'controller_name': 'sim_b_controller', 'joint_commands_topic': '/sim_b/commands'},
            remaps=('/joint_states:=/sim_b/joint_states', '/clock:=/sim_b/clock')))
        probe = Probe('simulator_test_probe')
        probe.record('/joint_states')
        probe.record('/sim_b/joint_states')
        probe.clock = []
        probe.node.create_subscription(
            Clock, '/clock', lambda m: probe.clock.append((time.monotonic(), m)), 100)
        probe.commands = probe.node.create_publisher(
            Float64MultiArray, '/effort_controller/commands', 10)
        probe.joint_commands = probe.node.create_publisher(JointState, '/joint_commands', 10)
        probe.wait_for('/joint_states', 5, timeout=STARTUP_TIMEOUT)
        probe.call(Trigger, '/sim_b/reset', Trigger.Request(), timeout=STARTUP_TIMEOUT)
        probe.sim_a = procs[0]
        yield probe
    finally:
        for proc in procs:
            stop_node(proc)
        if probe is not None:
            probe.close()
        rclpy.try_shutdown()
    for proc in procs:
        assert proc.returncode in (0, -2, 130), 'a simulator exited with %s' % proc.returncode


def reset(probe: Probe, name: str = '/sim_a') -> None:
    """Reset a simulator and check the answer."""
    answer = probe.call(Trigger, name + '/reset', Trigger.Request())
    assert answer.success, answer.message


def send(probe: Probe, values, duration: float, rate: float = 100.0) -> None:
    """Publish Float64MultiArray efforts for ``duration`` seconds at ``rate``."""
    end = time.monotonic() + duration
    while time.monotonic() < end:
        probe.commands.publish(Float64MultiArray(data=[float(v) for v in values]))
        time.sleep(1.0 / rate)


def test_joint_states_names_and_rate(graph, cobot7):
    model = cobot7[1]
    t0 = time.monotonic()
    time.sleep(2.0)
    msgs = graph.since('/joint_states', t0)
    assert list(msgs[-1].name) == list(model.joint_names)
    assert list(msgs[-1].name) == ['cobot7_joint%d' % i for i in range(1, 8)]
    for field in ('position', 'velocity', 'effort'):
        assert len(getattr(msgs[-1], field)) == 7
    # 250 Hz of simulated time at real_time_factor 1: count per wall second and per sim second.
    assert 200.0 < len(msgs) / 2.0 < 300.0
    stamps = np.array([stamp_seconds(m) for m in msgs])
    assert np.median(np.diff(stamps)) == pytest.approx(1.0 / 250.0, abs=1e-9)


def test_reset_returns_to_ready_pose_and_arm_falls_without_commands(graph):
    t0 = time.monotonic()
    reset(graph)
    msgs = sim_time_elapsed(graph, '/joint_states', 1.0, after=t0)
    # published at once, stamped one held step after 0: never a zero ("unstamped") stamp
    assert all(stamp_seconds(m) > 0.0 for m in msgs), 'a joint state with a zero stamp'
    first = [m for m in msgs if stamp_seconds(m) <= 0.01]
    assert first, 'no message at the start of simulated time after the reset'
    np.testing.assert_allclose(first[0].position, READY, atol=1e-5)
    np.testing.assert_allclose(first[0].velocity, 0.0, atol=0.0)
    # No torque: gravity pulls the arm away from the ready pose within one simulated second.
    drift = np.max(np.abs(np.array(msgs[-1].position) - READY))
    assert drift > 0.05, 'the arm did not fall: largest drift %.4f rad' % drift
    assert all(np.allclose(m.effort, 0.0) for m in msgs)


def wait_until_silent(probe: Probe, topic: str, quiet: float, timeout: float = 30.0) -> float:
    """
    Wait for ``quiet`` seconds without a message on ``topic``; return when they began.

    Messages still in flight are waited out however long they take on a loaded machine;
    a topic that never falls silent fails after ``timeout`` seconds.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        t0 = time.monotonic()
        time.sleep(quiet)
        if not probe.since(topic, t0):
            return t0
    raise AssertionError('%s kept coming for %.0f s' % (topic, timeout))


def test_pause_stops_time_and_joint_states(graph):
    answer = graph.call(SetBool, '/sim_a/pause', SetBool.Request(data=True))
    assert answer.success, answer.message
    try:
        t0 = wait_until_silent(graph, '/joint_states', 1.0)
        assert [c for t, c in graph.clock if t > t0] == []
        last = graph.since('/joint_states', 0.0)[-1]
    finally:  # never leave sim_a paused for the next tests
        answer = graph.call(SetBool, '/sim_a/pause', SetBool.Request(data=False))
    assert answer.success, answer.message
    resumed = graph.wait_for('/joint_states', 1, after=t0)[0]
    # Simulated time continues where it stopped: no jump over the paused second.
    assert 0.0 < stamp_seconds(resumed) - stamp_seconds(last) < 0.05


def test_float64multiarray_commands_are_applied_and_clamped(graph):
    command = [200.0, 3.0, 0.0, -2.5, 20.0, 0.5, -1.0]
    t0 = time.monotonic()
    send(graph, command, 0.5)
    msgs = graph.since('/joint_states', t0 + 0.2)
    expected = np.clip(command, -EFFORT_LIMITS, EFFORT_LIMITS)
    applied = [m for m in msgs if np.allclose(m.effort, expected)]
    assert len(applied) > 0.5 * len(msgs), 'commands not applied as %s' % expected


def test_joint_state_commands_keyed_by_name(graph):
    msg = JointState()
    msg.name = ['cobot7_joint7', 'cobot7_joint2']
    msg.effort = [1.5, -4.0]
    t0 = time.monotonic()
    end = t0 + 0.5
    while time.monotonic() < end:
        graph.joint_commands.publish(msg)
        time.sleep(0.01)
    expected = np.array([0.0, -4.0, 0.0, 0.0, 0.0, 0.0, 1.5])
    msgs = graph.since('/joint_states', t0 + 0.2)
    assert any(np.allclose(m.effort, expected) for m in msgs)


def test_bad_commands_are_rejected_and_the_node_keeps_running(graph):
    good = [2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    bad_messages = [
        Float64MultiArray(data=[1.0, 2.0]),  # wrong length
        Float64MultiArray(data=[float('nan')] + good[1:]),
        Float64MultiArray(data=[float('inf')] + good[1:]),
        Float64MultiArray(data=[]),
    ]
    bad_joint_states = JointState(name=['no_such_joint'], effort=[1.0])
    short = JointState(name=['cobot7_joint1', 'cobot7_joint2'], effort=[1.0])
    nan_state = JointState(name=['cobot7_joint1'], effort=[float('nan')])
    stale_before = read_log(graph.sim_a).count('applying zero effort')
    t0 = time.monotonic()
    end = t0 + 1.0
    while time.monotonic() < end:
        graph.commands.publish(Float64MultiArray(data=good))
        for bad in bad_messages:
            graph.commands.publish(bad)
        for bad in (bad_joint_states, short, nan_state):
            graph.joint_commands.publish(bad)
        time.sleep(0.02)
    msgs = graph.since('/joint_states', t0 + 0.1)
    assert len(msgs) > 100, 'the simulator stopped publishing'
    efforts = np.array([m.effort for m in msgs])
    assert np.all(np.isfinite(efforts))
    # Every message shows the last good command: bad ones changed nothing. Zero effort is
    # the stale-command action (command_timeout 0.1 s here) when this loop or the simulator
    # stalled that long under load: allowed only where the simulator said so.
    tail = efforts[len(efforts) // 4:]
    is_good = np.all(np.isclose(tail, np.array(good), rtol=1e-7, atol=0.0), axis=1)
    is_zero = np.all(tail == 0.0, axis=1)
    if np.any(is_zero):
        assert read_log(graph.sim_a).count('applying zero effort') > stale_before, (
            'zero effort, and the simulator found no stale command')
    assert np.all(is_good | is_zero), tail[~(is_good | is_zero)][:3]
    assert np.mean(is_good) > 0.5, 'the good command was applied in %.0f %% of the samples' % (
        100 * np.mean(is_good))
    later = graph.wait_for('/joint_states', 10)
    assert np.all(np.isfinite([m.position for m in later]))


def test_stale_commands_drop_to_zero(graph):
    graph.commands.publish(Float64MultiArray(data=[5.0, 0, 0, 0, 0, 0, 0]))
    t_sent = time.monotonic()

    def dropped() -> bool:
        """Return True once a message with the command was followed by one without it."""
        efforts = [m.effort[0] for m in graph.since('/joint_states', t_sent)]
        return 5.0 in efforts and 0.0 in efforts[efforts.index(5.0):]
    deadline = time.monotonic() + 30.0
    while not dropped() and time.monotonic() < deadline:
        time.sleep(0.02)
    efforts = [m.effort[0] for m in graph.since('/joint_states', t_sent)]
    assert 5.0 in efforts, 'the command never arrived'
    assert dropped(), 'the command did not go stale (command_timeout is 0.1 s)'
    late = graph.wait_for('/joint_states', 10)
    assert all(m.effort[0] == 0.0 for m in late)


def test_energy_is_conserved_without_friction(graph, cobot7):
    model = cobot7[1]
    answer = graph.call(SetBool, '/sim_b/pause', SetBool.Request(data=False))
    assert answer.success, answer.message
    try:
        msgs = sim_time_elapsed(graph, '/sim_b/joint_states', 2.0)
    finally:
        graph.call(SetBool, '/sim_b/pause', SetBool.Request(data=True))
    q = np.array([m.position for m in msgs])
    qd = np.array([m.velocity for m in msgs])
    kinetic = model.kinetic_energy(q, qd)
    energy = kinetic + model.potential_energy(q)
    # The arm falls freely: kinetic energy grows to joules, so a leak would show.
    assert kinetic.max() > 1.0
    drift = np.max(np.abs(energy - energy[0]))
    # RK4 at 1 ms: the energy error is orders of magnitude below this (0.1 % of the swing).
    assert drift < 1e-3 * kinetic.max(), 'energy drift %.3g J of %.3g J' % (
        drift, kinetic.max())
