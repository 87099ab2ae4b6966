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
The gravity_compensation_node over real DDS: ramp, clamp, watchdog, NaN, payload, shutdown.

The node runs as its own process on the default arm (cobot7) whose effort limits are cut to
6 N m on joints 1-4 so that the clamp acts at the test pose; it commands the joints in
reverse model order with effort_scale 0.5. This test plays the joint_state_broadcaster
(publishes sensor_msgs/JointState) and the effort controller (subscribes to
``/<controller_name>/commands``). Expected efforts come from :class:`RobotModel` evaluated
here on the same URDF. Discovery is loopback-only on a test-own domain (conftest.py).
"""

import math
import os
import re
import subprocess
import time

import numpy as np
import pytest
from ros_test_support import require_interfaces, require_rclpy, STARTUP_TIMEOUT

rclpy = require_rclpy()
srv = require_interfaces()

from sensor_msgs.msg import JointState  # noqa: E402, I100
from std_msgs.msg import Float64MultiArray  # noqa: E402

from manip_dynamics import RobotModel  # noqa: E402
from manip_dynamics.ros.runtime.node_process import start_node, stop_node  # noqa: E402

pytestmark = [pytest.mark.rostest, pytest.mark.realtime]

PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
JOINT_STATES_TOPIC = '/md_test_gc_joint_states'
CONTROLLER = 'md_test_effort_controller'
EFFORT_SCALE = 0.5
RAMP_TIME = 1.0
TIMEOUT = 0.5
STALE = TIMEOUT * 2 + 0.3  # seconds without joint_states that surely end commanding
RATE = 100.0

with open(os.path.join(PACKAGE_ROOT, 'urdf', 'cobot7.urdf'), encoding='utf-8') as _stream:
    URDF = re.sub(r'effort="87\.0"', 'effort="6.0"', _stream.read())
assert URDF.count('effort="6.0"') == 4
MODEL = RobotModel.from_urdf_string(URDF)
NAMES = list(MODEL.joint_names)
N = MODEL.dof
COMMAND_JOINTS = NAMES[::-1]
ORDER = [MODEL.joint_index(name) for name in COMMAND_JOINTS]
LIMITS = MODEL.effort_limits[ORDER] * EFFORT_SCALE
Q = np.array([0.2, -0.4, 0.3, -1.8, 0.5, 1.6, 0.4])


def expected_command(model: RobotModel = MODEL) -> np.ndarray:
    """Return the settled command: g(q) in command order, clamped to limit * scale."""
    return np.clip(model.gravity_torques(Q)[ORDER], -LIMITS, LIMITS)


def _start(name: str, **overrides) -> tuple[subprocess.Popen, str]:
    params = {'robot_description': URDF, 'controller_name': CONTROLLER,
              'command_joints': COMMAND_JOINTS, 'effort_scale': EFFORT_SCALE,
              'ramp_time': RAMP_TIME, 'timeout': TIMEOUT,
              'joint_states_topic': JOINT_STATES_TOPIC}
    params.update(overrides)
    process = start_node('gravity_compensation_node', name, params)
    return process, process.log_path


class Rig:
    """The test's node: joint_states publisher and command subscriber."""

    def __init__(self, controller: str = CONTROLLER) -> None:
        """Create the context, node, publisher, subscriber and executor."""
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node('md_test_gc_rig', context=self.context)
        self.executor = rclpy.executors.SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.commands: list[tuple[float, np.ndarray]] = []
        self.node.create_subscription(
            Float64MultiArray, '/%s/commands' % controller,
            lambda msg: self.commands.append((time.monotonic(), np.array(msg.data))), 100)
        self.pub = self.node.create_publisher(JointState, JOINT_STATES_TOPIC, 10)

    def joint_state(self, q=Q) -> JointState:
        """Return a joint state with the model joints shuffled between extra joints."""
        msg = JointState()
        msg.header.stamp = self.node.get_clock().now().to_msg()
        order = [3, 0, 6, 2, 5, 1, 4]
        msg.name = ['finger'] + [NAMES[i] for i in order] + ['rail']
        msg.position = [0.0] + [float(q[i]) for i in order] + [0.7]
        return msg

    def run(self, seconds: float, q=Q, publish: bool = True) -> None:
        """Publish joint states at RATE (or only spin) for a while."""
        end = time.monotonic() + seconds
        next_pub = time.monotonic()
        while time.monotonic() < end:
            if publish and time.monotonic() >= next_pub:
                self.pub.publish(self.joint_state(q))
                next_pub += 1.0 / RATE
            self.executor.spin_once(timeout_sec=0.002)

    def settle(self, expected: np.ndarray, timeout: float = RAMP_TIME + 8.0) -> np.ndarray:
        """Publish joint states until the last command equals ``expected`` (or time out)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            self.run(0.2)
            if self.commands and np.allclose(self.commands[-1][1], expected, rtol=0,
                                             atol=1e-9):
                break
        assert self.commands, 'no commands'
        return self.commands[-1][1]

    def drain(self, quiet: float = STALE, timeout: float = 60.0) -> None:
        """
        Spin without publishing until no command arrived for ``quiet`` seconds.

        Waits out a late watchdog command on a loaded machine, where a fixed pause is not
        enough.
        """
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            count = len(self.commands)
            self.run(quiet, publish=False)
            if len(self.commands) == count:
                return
        raise AssertionError('commands kept coming %g s after joint_states stopped' % timeout)

    def wait_for_commands(self, timeout: float = STARTUP_TIMEOUT) -> None:
        """Publish joint states until commands arrive."""
        end = time.monotonic() + timeout
        while not self.commands and time.monotonic() < end:
            self.run(0.1)
        assert self.commands, 'no command on /%s/commands' % CONTROLLER

    def close(self) -> None:
        """Destroy the node and shut the context down."""
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)


@pytest.fixture(scope='module')
def node():
    """Start the node under test (stale_action zero: every test starts from zero); yield."""
    process, log_path = _start('md_test_gravity_compensation', stale_action='zero')
    yield process, log_path
    stop_node(process, timeout=15.0)


@pytest.fixture(scope='module')
def rig(node):
    """Yield the test's node, after the node under test started commanding once."""
    r = Rig()
    r.wait_for_commands()
    r.run(STALE, publish=False)   # let it go stale again: every test starts stale
    r.commands.clear()
    yield r
    r.close()


def test_ramp_in_then_clamped_gravity(node, rig) -> None:
    """From stale: ramp from ~0 over ramp_time, then g(q) clamped, in command_joints order."""
    rig.commands.clear()
    rig.run(RAMP_TIME + 0.8)
    commands = [c for _, c in rig.commands]
    assert len(commands) > 0.5 * RATE * (RAMP_TIME + 0.8)
    assert all(c.shape == (N,) and np.all(np.isfinite(c)) for c in commands)
    assert all(np.all(np.abs(c) <= LIMITS + 1e-12) for c in commands)
    full = expected_command()
    np.testing.assert_allclose(rig.settle(full), full, rtol=0, atol=1e-9)
    # The clamp acts at this pose (otherwise the test proves nothing about it) ...
    unclamped = MODEL.gravity_torques(Q)[ORDER]
    clamped = np.abs(unclamped) > LIMITS
    assert clamped.any() and (~clamped & (np.abs(unclamped) > 0.05)).any()
    # ... and the ramp starts near zero and grows monotonically on unclamped joints.
    free = ~clamped & (np.abs(unclamped) > 0.05)
    assert np.all(np.abs(commands[0][free]) < 0.2 * np.abs(unclamped[free]))
    ratios = np.array([c[free] / unclamped[free] for c in commands])
    assert np.all(np.diff(ratios, axis=0) >= -1e-9)
    assert np.all(ratios <= 1.0 + 1e-9)


def test_stale_joint_states_stop_output_with_one_zero(node, rig) -> None:
    """After timeout: exactly one zero command, then silence; resume ramps in again."""
    rig.run(0.5)
    assert rig.commands
    stop_time = time.monotonic()
    rig.commands.clear()
    rig.run(TIMEOUT + 1.5, publish=False)
    late = [c for t, c in rig.commands]
    zeros = [k for k, c in enumerate(late) if not np.any(c)]
    assert len(zeros) == 1, 'expected one zero command, got %d' % len(zeros)
    assert zeros[0] == len(late) - 1, 'commands after the zero command'
    assert rig.commands[-1][0] - stop_time > TIMEOUT - 0.05
    assert rig.commands[-1][0] - stop_time < TIMEOUT + 1.0
    # joint_states come back: commands resume, ramping from near zero.
    rig.commands.clear()
    rig.run(0.3)
    assert rig.commands, 'no commands after joint_states resumed'
    unclamped = MODEL.gravity_torques(Q)[ORDER]
    free = (np.abs(unclamped) <= LIMITS) & (np.abs(unclamped) > 0.05)
    first = rig.commands[0][1]
    assert np.all(np.abs(first[free]) < 0.2 * np.abs(unclamped[free]))
    rig.run(STALE, publish=False)


def test_nan_never_published(node, rig) -> None:
    """NaN joint positions produce no computed command; the node keeps running."""
    rig.drain()
    rig.commands.clear()
    nan_q = Q.copy()
    nan_q[2] = math.nan
    rig.run(0.5, q=nan_q)
    # NaN positions do not count as fresh joint_states: once they have lasted the timeout
    # (0.5 s, as long as this run: on a loaded machine it fires inside it) the watchdog may
    # send its one zero command. Nothing else.
    assert all(np.all(c == 0.0) for _, c in rig.commands), rig.commands
    assert len(rig.commands) <= 1, rig.commands
    rig.run(0.5)  # good messages again
    assert rig.commands and all(np.all(np.isfinite(c)) for _, c in rig.commands)
    assert node[0].poll() is None
    rig.run(STALE, publish=False)


def test_set_payload_enters_the_command(node, rig) -> None:
    """~/set_payload: the settled command becomes the loaded model's clamped g(q)."""
    client = rig.node.create_client(srv.SetPayload,
                                    '/md_test_gravity_compensation/set_payload')
    assert client.wait_for_service(timeout_sec=STARTUP_TIMEOUT)

    def call(request):
        future = client.call_async(request)
        rig.executor.spin_until_future_complete(future, timeout_sec=30.0)
        return future.result()
    answer = call(srv.SetPayload.Request(link='moon', mass=1.0))
    assert not answer.success and 'moon' in answer.message
    request = srv.SetPayload.Request(link='tool0', mass=1.5)
    request.center_of_mass.x = 0.1
    answer = call(request)
    assert answer.success, answer.message
    loaded = RobotModel.from_urdf_string(URDF)
    loaded.set_payload('tool0', 1.5, (0.1, 0.0, 0.0))
    try:
        rig.commands.clear()
        np.testing.assert_allclose(rig.settle(expected_command(loaded)),
                                   expected_command(loaded), rtol=0, atol=1e-9)
        assert np.max(np.abs(expected_command(loaded) - expected_command())) > 0.1
    finally:
        assert call(srv.SetPayload.Request(link='tool0', mass=0.0)).success
    rig.commands.clear()
    np.testing.assert_allclose(rig.settle(expected_command()), expected_command(), rtol=0,
                               atol=1e-9)
    rig.run(STALE, publish=False)


def test_stale_action_hold_sends_gravity_at_the_last_pose_once_then_goes_on(node, rig):
    """The default for bare effort arms: one hold command, no ramp from zero."""
    process, _ = _start('md_test_gc_hold', controller_name='md_test_gc_hold')
    other = Rig(controller='md_test_gc_hold')
    try:
        other.wait_for_commands()
        other.run(RAMP_TIME + 0.5)
        settled = other.commands[-1][1]
        np.testing.assert_allclose(settled, expected_command(), rtol=0, atol=1e-9)
        other.commands.clear()
        stopped = time.monotonic()
        other.run(TIMEOUT + 1.5, publish=False)
        # answers to the last joint states still in flight arrive at once; the hold only
        # when the last state the node received is TIMEOUT old
        answers = [c for t, c in other.commands if t < stopped + 0.5 * TIMEOUT]
        late = [c for t, c in other.commands if t >= stopped + 0.5 * TIMEOUT]
        for answer in answers:
            np.testing.assert_allclose(answer, settled, rtol=0, atol=1e-9)
        assert len(late) == 1, 'expected one hold command, got %d (at %s s after the stop)' % (
            len(late), [round(t - stopped, 3) for t, _ in other.commands])
        np.testing.assert_allclose(late[0], settled, rtol=0, atol=1e-9)
        other.commands.clear()
        other.run(0.3)
        assert other.commands, 'no commands after joint_states resumed'
        np.testing.assert_allclose(other.commands[0][1], settled, rtol=0, atol=1e-9)
    finally:
        stop_node(process, timeout=15.0)
        other.close()


def test_shutdown_publishes_one_zero_command(node, rig) -> None:
    """SIGINT while commanding: a zero command is the last message, exit code 0."""
    process, log_path = _start('md_test_gc_shutdown', controller_name='md_test_gc_shutdown')
    other = Rig(controller='md_test_gc_shutdown')
    try:
        other.wait_for_commands()
        other.run(0.3)
        assert np.any(other.commands[-1][1])
        process.send_signal(subprocess.signal.SIGINT)
        other.run(1.0, publish=False)
        assert process.wait(timeout=15) == 0
        other.run(0.3, publish=False)
        assert not np.any(other.commands[-1][1]), 'last command is not zero'
    finally:
        stop_node(process, timeout=15.0)
        other.close()


@pytest.mark.parametrize('overrides, needle', [
    ({'effort_scale': 1.5}, 'effort_scale'),
    ({'timeout': -1.0}, 'timeout'),
    ({'command_joints': NAMES[:3] + ['wrist_of_nobody']}, 'wrist_of_nobody'),
    ({'payload_link': 'moon', 'payload_mass': 1.0}, 'moon'),
    ({'robot_description': '<robot name="x"><link'}, 'robot_description'),
])
def test_bad_parameters_exit_nonzero(overrides, needle) -> None:
    """Unusable parameters: one error line naming the problem, exit code 1, no traceback."""
    process, log_path = _start('md_test_gc_bad', **overrides)
    try:
        code = process.wait(timeout=STARTUP_TIMEOUT)
    finally:
        stop_node(process, timeout=15.0)
    with open(log_path, encoding='utf-8') as stream:
        log = stream.read()
    assert code == 1, log
    assert needle in log and 'Traceback' not in log, log
