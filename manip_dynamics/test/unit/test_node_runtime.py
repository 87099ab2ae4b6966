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

"""manip_dynamics.ros.runtime.node_runtime: log throttling, thread priority, garbage collection."""

import gc

from manip_dynamics.ros.runtime import node_runtime
from manip_dynamics.ros.runtime.node_runtime import KindThrottle, LostMessages


class Recorder:
    """A logger stand-in that keeps (level, message)."""

    def __init__(self) -> None:
        self.lines = []

    def warning(self, message: str) -> None:
        self.lines.append(('warning', message))

    def error(self, message: str) -> None:
        self.lines.append(('error', message))


def test_lost_messages_are_counted_from_sequence_numbers() -> None:
    """Numbers 1, 2, 5: two lost; a restart or a missing number counts none."""
    lost = LostMessages()
    counts = [lost.since_last({'publication_sequence_number': n}) for n in (1, 2, 5, 1, 3)]
    assert counts == [0, 0, 2, 0, 1]
    assert lost.since_last(None) == 0 and lost.since_last({}) == 0
    assert lost.since_last({'publication_sequence_number': 9}) == 0   # nothing to count from


def test_different_kinds_are_not_hidden_by_each_other() -> None:
    log = Recorder()
    throttle = KindThrottle(log, period=5.0)
    assert throttle.warning("position of joint 'a' is nan")
    assert throttle.warning('message has no joint names')
    assert throttle.warning("lack joints ['b']")
    assert [m for _, m in log.lines] == ["position of joint 'a' is nan",
                                         'message has no joint names', "lack joints ['b']"]


def test_same_kind_is_throttled_and_counted(monkeypatch) -> None:
    now = [100.0]
    monkeypatch.setattr(node_runtime.time, 'monotonic', lambda: now[0])
    log = Recorder()
    throttle = KindThrottle(log, period=1.0)
    assert throttle.warning('carries 2 values, expected 7')
    # the same problem with other numbers is the same kind
    assert not throttle.warning('carries 3 values, expected 7')
    assert not throttle.warning('carries 4 values, expected 7')
    now[0] += 1.5
    assert throttle.warning('carries 5 values, expected 7')
    assert log.lines[-1] == ('warning', 'carries 5 values, expected 7 (2 more like this in '
                                        'the last 1 s)')
    assert throttle.error('stale', kind='x') and not throttle.error('stale again', kind='x')


def test_kinds_are_bounded() -> None:
    throttle = KindThrottle(Recorder(), period=10.0, max_kinds=3)
    for k in range(10):
        throttle.warning('problem', kind='kind %d' % k)
    assert len(throttle._last) == 3


def test_warning_and_error_through_a_real_rclpy_logger() -> None:
    """Both severities through one KindThrottle: Kilted's rclpy raised on a shared call site."""
    import pytest
    logging = pytest.importorskip('rclpy.logging', reason='rclpy not installed')
    throttle = KindThrottle(logging.get_logger('test_node_runtime'), period=0.0)
    for _ in range(2):
        assert throttle.warning('a warning', kind='w')
        assert throttle.error('an error', kind='e')
        assert throttle.log('info', 'some info', kind='i')


_FIFO_PROBE = '''
import os, sys, threading
from manip_dynamics.ros.runtime.node_runtime import apply_thread_priority
before = threading.Thread(target=lambda: threading.Event().wait(2.0), daemon=True)
before.start()
refused = apply_thread_priority(int(sys.argv[1]))
later = []
after = threading.Thread(target=lambda: later.append(os.sched_getscheduler(0)))
after.start()
after.join()
print(repr((refused, os.sched_getscheduler(0), os.sched_getscheduler(before.native_id),
            later[0], os.sched_getparam(0).sched_priority)))
'''


def _probe(priority: int) -> tuple:
    """Run apply_thread_priority(priority) in a process of its own; return what it saw."""
    import ast
    import subprocess
    import sys
    run = subprocess.run([sys.executable, '-c', _FIFO_PROBE, str(priority)],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    return ast.literal_eval(run.stdout.strip().splitlines()[-1])


def test_thread_priority_moves_every_thread_or_says_why_not() -> None:
    """SCHED_FIFO for the threads that exist and those started later, or a reason."""
    import os
    refused, main, before, later, priority = _probe(7)
    if refused is None:
        assert (main, before, later, priority) == (os.SCHED_FIFO,) * 3 + (7,)
    else:
        # not permitted here (no root, no rtprio limit): the reason names the remedy and
        # nothing changed
        assert 'rtprio' in refused or 'not available' in refused, refused
        assert (main, before, later) == (os.SCHED_OTHER,) * 3
    refused, main, before, later, priority = _probe(0)
    assert refused is None and (main, before, later) == (os.SCHED_OTHER,) * 3


class _Node:
    """The parameter calls of an rclpy node, with overrides as given on the command line."""

    class _Value:
        def __init__(self, value) -> None:
            self.value = value

    def __init__(self, **overrides) -> None:
        self.overrides, self.declared = overrides, {}

    def has_parameter(self, name: str) -> bool:
        return name in self.declared

    def declare_parameter(self, name: str, default, descriptor) -> None:
        assert descriptor.read_only
        self.declared[name] = self.overrides.get(name, default)

    def get_parameter(self, name: str):
        return self._Value(self.declared[name])


def test_thread_priority_parameter_default_and_range() -> None:
    from manip_dynamics.ros.runtime.node_runtime import thread_priority
    assert thread_priority(_Node()) == 0
    assert thread_priority(_Node(), default=50) == 50
    assert thread_priority(_Node(thread_priority=20), default=50) == 20
    for bad in (-1, 100, 2.5, True, 'high'):
        try:
            thread_priority(_Node(thread_priority=bad))
        except ValueError as error:
            assert 'thread_priority' in str(error) and '0 to 99' in str(error)
        else:
            raise AssertionError('accepted thread_priority %r' % (bad,))


def test_startup_objects_are_left_out_of_later_collections() -> None:
    # what exists when the node is built is frozen: the oldest generation no longer holds
    # it (CPython walks only the generations' objects), a later object is collected as usual
    built = [[k] for k in range(1000)]
    try:
        frozen = node_runtime.freeze_startup_objects()
        assert frozen >= len(built)
        assert gc.get_freeze_count() == frozen
        assert not any(o is built for g in range(3) for o in gc.get_objects(generation=g))
        later = [[k] for k in range(10)]
        assert any(o is later for g in range(3) for o in gc.get_objects(generation=g))
    finally:
        gc.unfreeze()
    assert any(o is built for o in gc.get_objects(generation=2))
