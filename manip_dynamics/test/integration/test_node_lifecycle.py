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
Every node as a user meets it: stopped by signals, fed bad input, the simulator's brakes.

* SIGINT and SIGTERM to the node, and two SIGINTs to its process group (what a Ctrl-C in
  the terminal of ``ros2 launch`` delivers: one from the terminal, one from launch), end
  every node with exit code 0 and no traceback; the compensation sends its zero command.
* Each kind of bad input, sent to each node within one throttle period, is logged once per
  kind (a shared throttle hid all but the first), and the node keeps working. On Kilted a
  shared call site with two throttle durations killed the simulator once.
* The simulator holds every joint until the first command, says when it releases, falls
  after that without compensation, and holds again after ~/reset; it logs when it zeroes a
  stale command and when commands come back.

Expected values come from what the test sends and from the URDF's start pose.
"""

import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from ros_test_support import (read_log, require_interfaces, require_rclpy, send_until_logged,
                              wait_for_log)

rclpy = require_rclpy()
srv = require_interfaces()

from rclpy.executors import SingleThreadedExecutor  # noqa: E402, I100
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402
from std_srvs.srv import Trigger  # noqa: E402

from manip_dynamics.ros.runtime.node_process import start_node, stop_node  # noqa: E402
from manip_dynamics.ros.runtime.node_runtime import EXIT_STUCK, STOP_GRACE  # noqa: E402

pytestmark = [pytest.mark.rostest, pytest.mark.slow]

#: A cold numba cache compiles for tens of seconds before a node exists (2 loaded cores).
STARTUP_TIMEOUT = 180.0
NODES = ('dynamics_node', 'gravity_compensation_node', 'simulator_node')
JOINTS = ['cobot7_joint%d' % i for i in range(1, 8)]


class Probe:
    """A test-side node spun on a thread, recording joint_states."""

    def __init__(self, name: str) -> None:
        self.node = rclpy.create_node(name)
        self.lock = threading.Lock()
        self.states: list = []
        self.node.create_subscription(JointState, '/joint_states', self._state, 100)
        self.commands = self.node.create_publisher(Float64MultiArray,
                                                   '/effort_controller/commands', 10)
        self.joint_commands = self.node.create_publisher(JointState, '/joint_commands', 10)
        self.joint_states = self.node.create_publisher(JointState, '/joint_states', 10)
        self.executor = SingleThreadedExecutor()
        self.executor.add_node(self.node)
        self.thread = threading.Thread(target=self.executor.spin, daemon=True)
        self.thread.start()

    def _state(self, msg) -> None:
        with self.lock:
            self.states.append((time.monotonic(), msg))

    def since(self, t0: float) -> list:
        with self.lock:
            return [m for t, m in self.states if t > t0]

    def wait_states(self, count: int, timeout: float, after: float) -> list:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            msgs = self.since(after)
            if len(msgs) >= count:
                return msgs
            time.sleep(0.01)
        raise AssertionError('%d joint_states not received within %g s' % (count, timeout))

    def call(self, srv_type, name: str, request, timeout: float = 30.0):
        client = self.node.create_client(srv_type, name)
        try:
            assert client.wait_for_service(timeout_sec=timeout), 'no service %s' % name
            future = client.call_async(request)
            deadline = time.monotonic() + timeout
            while not future.done() and time.monotonic() < deadline:
                time.sleep(0.005)
            assert future.done(), '%s did not answer within %g s' % (name, timeout)
            return future.result()
        finally:
            self.node.destroy_client(client)

    def close(self) -> None:
        self.executor.shutdown()
        self.thread.join(timeout=2.0)
        self.node.destroy_node()


@pytest.fixture(scope='module')
def probe():
    """Initialise rclpy and yield a probe node; shut down at the end."""
    rclpy.init()
    p = Probe('lifecycle_probe')
    try:
        yield p
    finally:
        p.close()
        rclpy.try_shutdown()


# ---------------------------------------------------------------------- signals
@pytest.mark.parametrize('how', ['SIGINT', 'SIGTERM', 'SIGINT twice to the group'])
@pytest.mark.parametrize('module', NODES)
def test_signals_end_every_node_with_exit_code_0(cobot7_xml, module, how):
    """Exit code 0, no traceback; the compensation sends its zero command on the way out."""
    name = 'sig_%s' % module.replace('_node', '')
    proc = start_node(module, name, {'robot_description': cobot7_xml})
    try:
        wait_for_log(proc, "robot model 'cobot7'", STARTUP_TIMEOUT)
        time.sleep(0.5)  # spinning
        if how == 'SIGINT':
            proc.send_signal(signal.SIGINT)
        elif how == 'SIGTERM':
            proc.send_signal(signal.SIGTERM)
        else:
            os.killpg(proc.pid, signal.SIGINT)
            time.sleep(0.01)
            os.killpg(proc.pid, signal.SIGINT)
        code = proc.wait(timeout=30.0)
    finally:
        stop_node(proc)
    log = read_log(proc)
    assert code == 0, '%s exited %s after %s:\n%s' % (module, code, how, log)
    assert 'Traceback' not in log, log
    if module == 'gravity_compensation_node':
        assert 'sent one zero command' in log, log


#: A node whose timer callback never returns (what a hung DDS call or a stuck clean-up
#: looks like from outside), run by run_node as every node of the package is.
STUCK_NODE = '''
import time
from rclpy.node import Node
from manip_dynamics.ros.runtime.node_runtime import run_node


def stuck_in_a_callback():
    print('callback entered', flush=True)
    time.sleep(120.0)


def factory():
    node = Node('md_stuck_probe')
    node.create_timer(0.2, stuck_in_a_callback)
    return node


raise SystemExit(run_node('md_stuck_probe', factory, args=[], prepare=False))
'''


def test_a_node_stuck_in_a_callback_exits_after_the_grace_with_its_stack(tmp_path):
    """SIGINT to a stuck node: exit code EXIT_STUCK after STOP_GRACE s, and where it hung."""
    log = tmp_path / 'stuck.log'
    with open(log, 'w', encoding='utf-8') as stream:
        proc = subprocess.Popen([sys.executable, '-c', STUCK_NODE], stdout=stream,
                                stderr=subprocess.STDOUT,
                                env=dict(os.environ, PYTHONUNBUFFERED='1'))
    try:
        deadline = time.monotonic() + 60.0
        while 'callback entered' not in log.read_text():
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        signalled = time.monotonic()
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=60.0)
        took = time.monotonic() - signalled
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = log.read_text()
    assert code == EXIT_STUCK, text
    assert STOP_GRACE - 0.5 < took < STOP_GRACE + 10.0, took
    assert 'did not stop within' in text, text
    assert 'stuck_in_a_callback' in text, text  # the stack names the stuck function


# ---------------------------------------------------------------------- bad input
def _bad_joint_states() -> dict[str, JointState]:
    """Return one joint_states message per kind of problem, keyed by a text the log shows."""
    q = [0.1] * 7
    nan = list(q)
    nan[2] = float('nan')
    return {
        'lack joints': JointState(name=JOINTS[:6], position=q[:6]),
        "of joint 'cobot7_joint3' is": JointState(name=JOINTS, position=nan),
        '6 values for 7 joint names': JointState(name=JOINTS, position=q[:6]),
        'no joint names': JointState(),
    }


@pytest.mark.parametrize('module', ['dynamics_node', 'gravity_compensation_node'])
def test_each_kind_of_bad_joint_states_is_logged(cobot7_xml, probe, module):
    """
    Four different faults in a row: four warnings, and the node still works.

    The nodes keep the newest joint_states only (depth 1): a burst of different
    faults is one fault to them, so each kind is sent until the node logs it; then all are
    repeated within the throttle period, which must not add a line of any kind.
    """
    proc = start_node(module, 'bad_js_%s' % module.replace('_node', ''),
                      {'robot_description': cobot7_xml},
                      remaps=('/joint_states:=/bad_input/joint_states',))
    publisher = probe.node.create_publisher(JointState, '/bad_input/joint_states', 10)
    try:
        wait_for_log(proc, "robot model 'cobot7'", STARTUP_TIMEOUT)
        bad = _bad_joint_states()
        # each kind until the node logs it, well within one throttle period
        for text, msg in bad.items():
            send_until_logged(proc, publisher, msg, text)
        for _ in range(3):  # repeated within the throttle period: still one line per kind
            for msg in bad.values():
                publisher.publish(msg)
                time.sleep(0.05)
        deadline = time.monotonic() + 10.0
        while time.monotonic() < deadline:
            log = read_log(proc)
            if all(text in log for text in bad):
                break
            time.sleep(0.1)
        log = read_log(proc)
        missing = [text for text in bad if text not in log]
        assert not missing, 'kinds not logged: %s\n%s' % (missing, log)
        for text in bad:
            assert log.count(text) == 1, 'kind %r logged %d times' % (text, log.count(text))
        assert proc.poll() is None, 'the node died:\n%s' % log
    finally:
        probe.node.destroy_publisher(publisher)
        code = stop_node(proc)
    assert code == 0 and 'Traceback' not in read_log(proc), read_log(proc)


def test_each_kind_of_bad_command_is_logged_by_the_simulator(cobot7_xml, probe):
    """Every kind of rejected command is logged, the simulator keeps publishing."""
    proc = start_node('simulator_node', 'bad_cmd_sim', {'robot_description': cobot7_xml})
    try:
        wait_for_log(proc, 'simulating', STARTUP_TIMEOUT)
        probe.wait_states(5, 30.0, after=time.monotonic())
        kinds = {
            'carries 2 values, expected 7': (probe.commands,
                                             Float64MultiArray(data=[1.0, 2.0])),
            'has NaN/inf for cobot7_joint1': (probe.commands, Float64MultiArray(
                data=[float('nan')] + [0.0] * 6)),
            "names unknown joints ['no_such_joint']": (
                probe.joint_commands, JointState(name=['no_such_joint'], effort=[1.0])),
            'names a joint twice': (probe.joint_commands, JointState(
                name=['cobot7_joint1', 'cobot7_joint1'], effort=[1.0, 1.0])),
            'has 2 names and 1 efforts': (probe.joint_commands, JointState(
                name=['cobot7_joint1', 'cobot7_joint2'], effort=[1.0])),
        }
        # Sent again until logged: the node may not have matched our publishers yet, and
        # this test counts kinds, not lines.
        deadline = time.monotonic() + 20.0
        while time.monotonic() < deadline and not all(t in read_log(proc) for t in kinds):
            for publisher, msg in kinds.values():
                publisher.publish(msg)
            time.sleep(0.1)
        log = read_log(proc)
        missing = [text for text in kinds if text not in log]
        assert not missing, 'kinds not logged: %s\n%s' % (missing, log)
        t0 = time.monotonic()
        probe.wait_states(10, 10.0, after=t0)
        assert proc.poll() is None, 'the simulator died:\n%s' % log
    finally:
        code = stop_node(proc)
    assert code == 0 and 'Traceback' not in read_log(proc), read_log(proc)


# ---------------------------------------------------------------------- brakes
def test_simulator_brakes_hold_until_the_first_command(cobot7_xml, probe):
    """Held from the start, released by a command, held again after ~/reset."""
    proc = start_node('simulator_node', 'brake_sim', {
        'robot_description': cobot7_xml, 'command_timeout': 0.3})
    try:
        wait_for_log(proc, 'brakes on until the first command', STARTUP_TIMEOUT)
        t0 = time.monotonic()
        held = probe.wait_states(250, 30.0, after=t0)  # 1 s of states at 250 Hz
        q = np.array([m.position for m in held])
        # Without any command an unbraked cobot7 falls by > 0.05 rad in this time (below).
        assert np.array_equal(q, np.tile(q[0], (len(q), 1))), 'the arm moved while braked'
        assert not np.any([m.velocity for m in held])

        # A zero command releases the brakes: nothing holds the arm any more.
        zero = Float64MultiArray(data=[0.0] * 7)
        send_until_logged(proc, probe.commands, zero, 'brakes released')
        t1 = time.monotonic()
        fallen = probe.wait_states(250, 30.0, after=t1)
        drift = np.max(np.abs(np.array(fallen[-1].position) - q[0]))
        assert drift > 0.05, 'released arm did not fall (drift %.4f rad)' % drift

        # The zero command goes stale after command_timeout: a protective stop,
        # every joint braked where the arm is; a zero command does not hold that pose, so
        # the brakes stay on
        wait_for_log(proc, 'protective stop at t =', 10.0)
        time.sleep(0.2)
        stopped = probe.wait_states(50, 30.0, after=time.monotonic())
        p = np.array([m.position for m in stopped])
        np.testing.assert_array_equal(p, np.tile(p[0], (len(p), 1)))
        assert not np.any([m.velocity for m in stopped])
        send_until_logged(proc, probe.commands, zero, 'brakes stay on')

        # ~/reset engages the brakes again until the next command.
        answer = probe.call(Trigger, '/brake_sim/reset', Trigger.Request())
        assert answer.success and 'brakes on' in answer.message, answer.message
        t2 = time.monotonic()
        time.sleep(0.2)
        again = probe.wait_states(250, 30.0, after=t2)
        q2 = np.array([m.position for m in again])
        # On a loaded machine states published before the reset may still arrive after t2;
        # DDS keeps their order, so from the first state at the reset pose on, every state
        # must stay exactly there (brakes on until the next command).
        at_pose = np.flatnonzero(np.all(q2 == q[0], axis=1))
        assert at_pose.size, 'no joint_states at the reset pose after ~/reset'
        assert at_pose[0] < len(q2) // 2, 'reset pose reached only late: %d of %d' % (
            at_pose[0], len(q2))
        held_again = q2[at_pose[0]:]
        np.testing.assert_array_equal(held_again, np.tile(q[0], (len(held_again), 1)))
    finally:
        code = stop_node(proc)
    assert code == 0, read_log(proc)
