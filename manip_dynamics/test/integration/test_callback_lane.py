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
Callback lanes (manip_dynamics.ros.runtime.callback_lane) with real rclpy entities.

A lane's subscription and timer run on the executor until the lane starts, on the lane's
thread after (never on both), each holding the node's callback lock; two-argument callbacks
get the message info as rclpy gives it; nothing runs after the lane stops.
"""

import threading
import time

import pytest
from ros_test_support import require_rclpy, wait_until

rclpy = require_rclpy()

from rclpy.executors import SingleThreadedExecutor  # noqa: E402, I100
from std_msgs.msg import Int32  # noqa: E402

from manip_dynamics.ros.runtime.guarded_node import GuardedNode  # noqa: E402

pytestmark = [pytest.mark.rostest]


class LaneProbe(GuardedNode):
    """A node with one lane: a subscription (with message info) and a 20 ms timer on it."""

    def __init__(self, context) -> None:
        super().__init__('lane_probe', context=context)
        self.lane = self.create_lane('probe')
        self.received = []   # (data, thread name, lock free to others, info)
        self.ticks = []      # thread names
        self.create_subscription(Int32, '~/numbers', self.numbers_callback, 10,
                                 callback_group=self.lane.group)
        self.create_timer(0.02, self.tick_callback, callback_group=self.lane.group)

    def lock_free_to_others(self) -> bool:
        """Whether another thread could take the callback lock right now."""
        result = []

        def probe() -> None:
            taken = self.callback_lock.acquire(blocking=False)
            if taken:
                self.callback_lock.release()
            result.append(taken)
        thread = threading.Thread(target=probe)
        thread.start()
        thread.join()
        return result[0]

    def numbers_callback(self, msg, info) -> None:
        self.received.append((msg.data, threading.current_thread().name,
                              self.lock_free_to_others(), info))

    def tick_callback(self) -> None:
        self.ticks.append(threading.current_thread().name)


@pytest.fixture
def graph():
    """Yield (probe node, publisher node, executor spun on the test's thread by steps)."""
    context = rclpy.Context()
    rclpy.init(context=context)
    probe = LaneProbe(context)
    sender = rclpy.create_node('lane_sender', context=context)
    pub = sender.create_publisher(Int32, '/lane_probe/numbers', 10)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(probe)
    try:
        wait_until(lambda: pub.get_subscription_count() > 0, 10.0, 'no subscription')
        yield probe, pub, executor
    finally:
        probe.destroy_node()
        sender.destroy_node()
        rclpy.try_shutdown(context=context)


def spin_for(executor, seconds: float) -> None:
    """Spin the executor on this thread for ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        executor.spin_once(timeout_sec=0.01)


def test_the_executor_runs_the_lane_until_it_starts_then_only_the_lane(graph):
    probe, pub, executor = graph
    main = threading.current_thread().name
    pub.publish(Int32(data=1))
    spin_for(executor, 0.5)
    assert [r[0] for r in probe.received] == [1]
    assert probe.received[0][1] == main and main in probe.ticks

    assert probe.lane.start()
    probe.ticks.clear()
    for k in range(2, 7):
        pub.publish(Int32(data=k))
        time.sleep(0.01)
    # the executor spins meanwhile: it must take none of the lane's work
    spin_for(executor, 0.5)
    wait_until(lambda: len(probe.received) == 6, 5.0, 'messages lost: %r' % probe.received)
    lane_part = probe.received[1:]
    assert [r[0] for r in lane_part] == [2, 3, 4, 5, 6]
    assert {r[1] for r in lane_part} == {'lane_probe'}
    assert probe.ticks and set(probe.ticks) == {'lane_probe'}
    # 20 ms timer over about 0.55 s: called per period, not in bursts, not twice per period
    assert 10 <= len(probe.ticks) <= 40, len(probe.ticks)


def test_lane_callbacks_hold_the_lock_and_get_the_message_info(graph):
    probe, pub, _ = graph
    probe.lane.start()
    pub.publish(Int32(data=7))
    wait_until(lambda: probe.received, 5.0, 'no message on the lane')
    data, thread, free, info = probe.received[0]
    assert data == 7 and thread == 'lane_probe'
    assert free is False, 'a lane callback ran without the node callback lock'
    # rclpy's message info: reception after the source's stamp, both in ns since the epoch
    assert info['received_timestamp'] >= info['source_timestamp'] > 0
    assert abs(info['received_timestamp'] * 1e-9 - time.time()) < 10.0


def test_nothing_runs_after_the_lane_stops(graph):
    probe, pub, _ = graph
    probe.lane.start()
    wait_until(lambda: len(probe.ticks) >= 3, 5.0, 'the lane timer never fired')
    started = time.monotonic()
    probe.stop_lanes()
    assert time.monotonic() - started < 1.0, 'the lane took more than 1 s to stop'
    assert not any(t.name == 'lane_probe' for t in threading.enumerate())
    ticks, received = len(probe.ticks), len(probe.received)
    pub.publish(Int32(data=9))
    time.sleep(0.3)
    assert (len(probe.ticks), len(probe.received)) == (ticks, received)


def test_an_error_of_the_lane_itself_is_logged_and_the_lane_goes_on(graph):
    probe, pub, _ = graph
    errors = []
    logger = probe.get_logger()
    original_error = logger.error
    logger.error = lambda text, *a, **k: errors.append(text)
    once = probe.lane._once
    failures = [RuntimeError('injected')]

    def failing_once(*args):
        if failures:
            raise failures.pop()
        return once(*args)
    probe.lane._once = failing_once
    try:
        probe.lane.start()
        wait_until(lambda: errors, 5.0, 'the lane error was not logged')
        pub.publish(Int32(data=11))
        wait_until(lambda: any(r[0] == 11 for r in probe.received), 5.0,
                   'the lane stopped after its error')
    finally:
        probe.stop_lanes()
        logger.error = original_error
    assert "callback lane 'probe'" in errors[0] and 'injected' in errors[0], errors
