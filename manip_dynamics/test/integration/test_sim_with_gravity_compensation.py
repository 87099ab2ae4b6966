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
simulator_node driven by gravity_compensation_node, each a separate process, real DDS.

The cobot7 arm is released at rest at a non-trivial pose (the test's own numbers, not the
ready pose) while the gravity compensation commands g(q) through the effort-controller
contract. Physics says the pose is then an equilibrium: it must hold within 1e-3 rad over
5 s of simulated time. Without the compensation the arm falls. Stopping joint_states
(pausing or killing the simulator) must stop the compensation output, and a restarted
simulator must get it back. Both timeouts are 0.5 s here (0.1 s by default) so that a
loaded CI machine that stalls a process for 0.1 s does not break the hold.
"""

import threading
import time

import numpy as np
import pytest
from ros_test_support import (call_service, require_rclpy, send_until_logged,
                              STARTUP_TIMEOUT, wait_until)

rclpy = require_rclpy()

from rclpy.executors import SingleThreadedExecutor  # noqa: E402, I100
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402
from std_srvs.srv import SetBool, Trigger  # noqa: E402

from manip_dynamics import RobotModel  # noqa: E402
from manip_dynamics.bundled import urdf_path  # noqa: E402
from manip_dynamics.ros.runtime.node_process import start_node, stop_node  # noqa: E402

pytestmark = [pytest.mark.rostest, pytest.mark.slow, pytest.mark.realtime]

# A pose away from the ready pose, inside cobot7's limits, with large gravity torques.
POSE = [0.3, -0.4, 0.2, -1.9, 0.1, 1.9, 0.5]
TIMEOUT = 0.5
COMMANDS = '/effort_controller/commands'


def stamp_seconds(msg) -> float:
    """Return a header stamp in seconds."""
    return msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec


class Graph:
    """The test-side node (spun on a thread) plus the node processes under test."""

    def __init__(self, xml: str) -> None:
        self.xml = xml
        self.node = rclpy.create_node('sim_gc_test_probe')
        self.lock = threading.Lock()
        self.states: list = []
        self.commands: list = []
        self.node.create_subscription(JointState, '/joint_states', self.states_callback, 100)
        self.node.create_subscription(Float64MultiArray, COMMANDS, self.commands_callback,
                                      100)
        self.executor = SingleThreadedExecutor()
        self.executor.add_node(self.node)
        self.thread = threading.Thread(target=self.executor.spin, daemon=True)
        self.thread.start()
        self.sim = None
        self.gc = None

    def states_callback(self, msg) -> None:
        with self.lock:
            self.states.append((time.monotonic(), msg))

    def commands_callback(self, msg) -> None:
        with self.lock:
            self.commands.append((time.monotonic(), list(msg.data)))

    def start_sim(self, paused: bool) -> None:
        self.sim = start_node('simulator_node', 'sim_gc', {
            'robot_description': self.xml, 'publish_clock': True, 'initial_positions': POSE,
            'start_paused': paused, 'command_timeout': TIMEOUT})

    def start_gc(self) -> None:
        self.gc = start_node('gravity_compensation_node', 'gc_under_test', {
            'robot_description': self.xml, 'ramp_time': 0.0, 'timeout': TIMEOUT})

    def states_since(self, t0: float) -> list:
        with self.lock:
            return [m for t, m in self.states if t > t0]

    def commands_since(self, t0: float) -> list:
        with self.lock:
            return [c for t, c in self.commands if t > t0]

    def wait(self, what, timeout: float, message: str):
        return wait_until(what, timeout, message)

    def call(self, srv_type, name: str, request, timeout: float = STARTUP_TIMEOUT):
        return call_service(self.node, srv_type, name, request, timeout)

    def sim_time_elapsed(self, t0: float, duration: float, timeout: float = 60.0) -> list:
        """Collect joint states received after ``t0`` until ``duration`` simulated s."""
        def enough():
            msgs = self.states_since(t0)
            return msgs if msgs and stamp_seconds(msgs[-1]) >= duration else None
        return self.wait(enough, timeout, 'simulated time did not reach %g s' % duration)


@pytest.fixture(scope='module')
def graph():
    """Start the simulator (paused) and the gravity compensation; stop both at the end."""
    with open(urdf_path('cobot7')) as stream:
        xml = stream.read()
    rclpy.init()
    g = None
    try:
        g = Graph(xml)
        g.model = RobotModel.from_urdf_string(xml)
        g.start_gc()
        g.start_sim(paused=True)
        g.call(SetBool, '/sim_gc/pause', SetBool.Request(data=False))
        g.wait(lambda: any(any(v != 0.0 for v in c) for c in g.commands_since(0.0)),
               STARTUP_TIMEOUT, 'no gravity compensation command arrived')
        yield g
    finally:
        if g is not None:
            for proc in (g.sim, g.gc):
                stop_node(proc)
            g.executor.shutdown()
            g.node.destroy_node()
        rclpy.try_shutdown()


def release(graph: Graph) -> float:
    """Put the arm back at rest at POSE with the compensation running; return the time."""
    time.sleep(0.3)  # the compensation is engaged and matched
    t0 = time.monotonic()
    answer = graph.call(Trigger, '/sim_gc/reset', Trigger.Request())
    assert answer.success, answer.message
    return t0


def test_released_pose_holds_for_5_s(graph):
    t0 = release(graph)
    msgs = graph.sim_time_elapsed(t0, 5.0)
    starts = [i for i, m in enumerate(msgs) if 0.0 < stamp_seconds(m) <= 0.01
              and (i == 0 or stamp_seconds(msgs[i - 1]) > stamp_seconds(m))]
    assert starts, 'the reset message (simulated time restarted) is missing'
    msgs = [m for m in msgs[starts[-1]:] if stamp_seconds(m) <= 5.0 + 1e-9]
    assert stamp_seconds(msgs[-1]) > 4.9
    q = np.array([m.position for m in msgs])
    drift = np.max(np.abs(q - POSE))
    assert drift < 1e-3, 'the arm drifted %.3g rad from the released pose' % drift
    # What held it is g(q) at that pose (the library is the reference for g here).
    expected = graph.model.gravity_torques(POSE)
    assert np.max(np.abs(expected)) > 5.0  # a pose where gravity matters
    np.testing.assert_allclose(msgs[-1].effort, expected, atol=1e-3 * np.max(
        np.abs(expected)))


def test_pausing_the_simulator_stops_the_compensation(graph):
    answer = graph.call(SetBool, '/sim_gc/pause', SetBool.Request(data=True))
    assert answer.success, answer.message
    time.sleep(TIMEOUT + 0.5)  # the watchdog has fired and sent its one zero command
    t0 = time.monotonic()
    time.sleep(1.0)
    assert graph.commands_since(t0) == [], 'commands kept coming with joint_states paused'
    answer = graph.call(SetBool, '/sim_gc/pause', SetBool.Request(data=False))
    assert answer.success, answer.message
    t1 = time.monotonic()
    graph.wait(lambda: len(graph.commands_since(t1)) >= 10, 10.0,
               'the compensation did not resume after un-pausing')
    assert all(any(v != 0.0 for v in c) for c in graph.commands_since(t1)[2:])


def test_simulator_restart_resumes_the_compensation(graph):
    code = stop_node(graph.sim)
    assert code in (0, -2, 130), 'the simulator exited with %s' % code
    time.sleep(TIMEOUT + 0.5)
    t0 = time.monotonic()
    time.sleep(1.0)
    assert graph.commands_since(t0) == [], 'commands kept coming with the simulator dead'
    t1 = time.monotonic()
    graph.start_sim(paused=False)
    graph.wait(lambda: len(graph.commands_since(t1)) >= 10, STARTUP_TIMEOUT,
               'the compensation did not resume after the simulator restarted')
    resumed = np.array(graph.commands_since(t1)[2:])
    assert np.all(np.isfinite(resumed)) and np.all(np.any(resumed != 0.0, axis=1))


def test_without_compensation_the_arm_falls(graph):
    code = stop_node(graph.gc)
    assert code in (0, -2, 130), 'the gravity compensation exited with %s' % code
    t0 = release(graph)
    # ~/reset engaged the simulator's brakes; a zero command releases them
    publisher = graph.node.create_publisher(Float64MultiArray, COMMANDS, 10)
    send_until_logged(graph.sim, publisher, Float64MultiArray(data=[0.0] * 7),
                      'brakes released', timeout=10.0)
    msgs = graph.sim_time_elapsed(t0, 1.0)
    drift = np.max(np.abs(np.array(msgs[-1].position) - POSE))
    assert drift > 0.05, 'the arm did not fall: drift %.4f rad' % drift
