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
A thread of its own for a node's per-sample callbacks, outside rclpy's executor.

rclpy's SingleThreadedExecutor rebuilds its wait set from every entity of the node at every
wake (services, parameter services, QoS event handlers, timers) and wraps each callback in a
task: about 0.2 ms per joint state on this project's machine, most of what the story's nodes
cost at 1 kHz (docs/BENCHMARKS.md). A :class:`CallbackLane` waits on the few entities that
fire per sample (the joint-state subscription, the command subscription, the simulator's step
timer) with a wait set built once, takes their messages and calls their callbacks directly;
everything else of the node (services, parameters, the description, watchdog timers) stays on
the executor. What rclpy's ``wait_for_message`` does for one message, kept open.

How a node uses it: create the lane, give its :attr:`CallbackLane.group` as the callback group
of those entities. Until :meth:`CallbackLane.start` the group behaves as a plain callback
group and the executor runs them as before (a node spun by a test's own executor); after it
the executor leaves them out of its wait set and the lane runs them. :func:`run_node` starts
every lane of a node (``node.callback_lanes``) before spinning and stops them before the node
is destroyed. The node's callbacks, on the executor and on the lane, are serialized by the
node's ``callback_lock`` (:class:`GuardedNode`), so a node's code still runs one callback at a
time as on a single-threaded executor.
"""

from __future__ import annotations

import contextlib
import threading
import time
from typing import Any, Callable

#: How long one wait may last when nothing fires [ns]: the lane checks its stop flag at
#: least this often (a stop also wakes it at once through its guard condition).
WAIT_NS = 100_000_000


def _lane_group_class() -> type:
    """Return the callback group class of lanes (built on first use: imports rclpy)."""
    from rclpy.callback_groups import CallbackGroup

    class LaneCallbackGroup(CallbackGroup):
        """Entities of a :class:`CallbackLane`: the executor's until the lane starts."""

        def __init__(self, lane: CallbackLane) -> None:
            super().__init__()
            self._lane = lane

        def can_execute(self, entity: Any) -> bool:
            """Executor: run the entity only while its lane does not (before start)."""
            return not self._lane.running

        def beginning_execution(self, entity: Any) -> bool:
            """Executor: see :meth:`can_execute`."""
            return not self._lane.running

        def ending_execution(self, entity: Any) -> None:
            """Executor: nothing to release."""
    return LaneCallbackGroup


class CallbackLane:
    """
    One thread that waits on a few subscriptions and timers of a node and runs their callbacks.

    Messages are taken as the executor takes them (every message queued, oldest first, each
    callback given ``(msg)`` or ``(msg, info)`` as rclpy would) and timers are called as
    rcl calls them (a timer that fell behind fires once, not once per missed period).
    Exceptions and the node's ``callback_lock`` are the callbacks' business:
    :class:`GuardedNode` wraps every callback so that none raises and each holds the lock.
    """

    def __init__(self, node: Any, name: str) -> None:
        """
        Create a lane of ``node`` (not started).

        :param node: The node whose entities it runs (a :class:`GuardedNode`: its callbacks
            hold its ``callback_lock``, which serializes the lane's with the executor's).
        :param name: The thread's name (e.g. ``'joint_states'``).
        """
        self.node = node
        self.name = name
        self.running = False
        self.group = _lane_group_class()(self)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._wake: Any = None
        self._reported = -1e9
        self._after_batch: list[Callable[[], None]] = []

    def after_batch(self, callback: Callable[[], None]) -> None:
        """
        Call ``callback()`` after every wake in which the lane delivered a message.

        By then every message that was queued has been delivered, oldest first: a callback
        that must read every sample (an integrator) can leave what it publishes to this
        call, once per batch, for the newest sample. Only while the lane runs; on the
        executor (before :meth:`start`) messages come one at a time and the node publishes
        per message. Guarding ``callback`` (lock, exceptions) is the caller's business, as
        for the lane's other callbacks.
        """
        self._after_batch.append(callback)

    def _entities(self) -> tuple[list[Any], list[Any]]:
        """Return the node's subscriptions and timers in this lane's group."""
        subs = [s for s in self.node.subscriptions if s.callback_group is self.group]
        timers = [t for t in self.node.timers if t.callback_group is self.group]
        return subs, timers

    def start(self) -> bool:
        """
        Take the lane's entities from the executor and run them on the lane's thread.

        :return: False when the lane has nothing to run (nothing is started).
        """
        if self.running:
            return True
        subs, timers = self._entities()
        if not subs and not timers:
            return False
        from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy
        self._wake = _rclpy.GuardCondition(self.node.context.handle)
        self._stop.clear()
        self.running = True
        self._thread = threading.Thread(target=self._run, args=(subs, timers),
                                        name='lane_' + self.name, daemon=True)
        self._thread.start()
        return True

    def stop(self, timeout: float = 2.0) -> None:
        """Stop the thread (it ends its current callback first); the executor gets nothing back."""
        thread = self._thread
        if thread is None:
            return
        self._stop.set()
        try:
            self._wake.trigger_guard_condition()
        except Exception:  # noqa: B902 - the context may be gone; the wait times out then
            pass
        if thread is not threading.current_thread():
            thread.join(timeout)
        self._thread = None

    def _run(self, subs: list[Any], timers: list[Any]) -> None:
        """Wait, call the ready timers, take and deliver the messages, until stopped."""
        from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy
        from rclpy.subscription import Subscription
        message_only = getattr(getattr(Subscription, 'CallbackType', None), 'MessageOnly', None)
        context = self.node.context
        with contextlib.ExitStack() as held:
            try:
                for entity in subs + timers:
                    held.enter_context(entity.handle)
                held.enter_context(context.handle)
            except Exception:  # noqa: B902 - destroyed before the lane started
                return
            wait_set = _rclpy.WaitSet(len(subs), 1, len(timers), 0, 0, 0, context.handle)
            # (handle, pointer, callback, msg type, raw, passes info) per subscription
            takes = [(s.handle, s.handle.pointer, s.callback, s.msg_type, s.raw,
                      getattr(s, '_callback_type', message_only) is not message_only)
                     for s in subs]
            calls = [(t.handle, t.handle.pointer, t) for t in timers]
            while not self._stop.is_set() and context.ok():
                try:
                    self._once(wait_set, takes, calls)
                except Exception as error:  # noqa: B902 - the lane must not end silently
                    if self._stop.is_set() or not context.ok():
                        return   # shut down under it
                    self._report(error)
                    time.sleep(0.01)   # a persistent error must not spin a core

    def _once(self, wait_set: Any, takes: list[tuple], calls: list[tuple]) -> None:
        """Wait once (at most :data:`WAIT_NS`), then run what became ready."""
        wait_set.clear_entities()
        for handle, *_ in takes:
            wait_set.add_subscription(handle)
        for handle, *_ in calls:
            wait_set.add_timer(handle)
        wait_set.add_guard_condition(self._wake)
        wait_set.wait(WAIT_NS)
        if self._stop.is_set():
            return
        timers_ready = wait_set.get_ready_entities('timer') if calls else ()
        subs_ready = wait_set.get_ready_entities('subscription')
        for handle, pointer, timer in calls:
            if pointer in timers_ready and handle.is_timer_ready():
                try:
                    (getattr(handle, 'call_timer_with_info', None) or handle.call_timer)()
                except Exception:  # noqa: B902 - canceled meanwhile: nothing to call
                    continue
                timer.callback()
        delivered = False
        for handle, pointer, callback, msg_type, raw, with_info in takes:
            if pointer not in subs_ready:
                continue
            while not self._stop.is_set():
                taken = handle.take_message(msg_type, raw)
                if taken is None:
                    break
                delivered = True
                if with_info:
                    callback(*taken)
                else:
                    callback(taken[0])
        if delivered:
            for callback in self._after_batch:
                callback()

    def _report(self, error: Exception) -> None:
        """Log an error of the lane's own loop (not of a callback), at most every 2 s."""
        now = time.monotonic()
        if now - self._reported >= 2.0:
            self._reported = now
            self.node.get_logger().error(
                'callback lane %r: %s: %s (the lane goes on)' % (
                    self.name, type(error).__name__, error))
