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
What every node of the package does around its Node subclass: start, spin, stop, log.

* :func:`run_node` is the body of every ``main()``: it prepares the numba kernels *before*
  the node exists (so while they compile the node is not in the graph: its services do not
  exist yet and ``ros2 param get`` answers at once that the node is not found, instead of
  blocking), then spins the node on one thread (:func:`make_executor`) until SIGINT,
  SIGTERM or an external shutdown, and exits 0 without a traceback whatever the number of
  signals (a Ctrl-C in a terminal reaches a launched node twice: from the terminal and from
  launch).
* :func:`prepare_kernels` is that preparation, with one log line of progress per kernel that
  had to be compiled.
* :class:`KindThrottle` throttles repeated log lines per kind of problem, so that one
  malformed message does not hide the next, different one. It keeps its own clock: rclpy's
  ``throttle_duration_sec`` throttles per call site, and Kilted's rclpy raises when one call
  site is used with two throttle durations.
* :func:`guarded` and :func:`guarded_service` wrap a callback so that no exception ever
  leaves it into rclpy's executor (which would end the node): it is logged with its
  traceback (throttled per callback) and, for a service, answered with ``success: false``
  and the message. :class:`~manip_dynamics.ros.runtime.guarded_node.GuardedNode`, the base
  class of every node of the package, wraps each callback it creates with them.
"""

from collections import OrderedDict
from collections.abc import Callable
import contextlib
import faulthandler
import functools
import gc
import os
import re
import signal
import socket
import sys
import threading
import time
import traceback
from typing import Any

#: Exit code of a normal shutdown (signal, external shutdown, launching process gone).
EXIT_OK = 0
#: Environment variable: '0' lets a node outlive the process that started it.
WATCH_PARENT_ENV = 'MANIP_DYNAMICS_WATCH_PARENT'
#: Environment variable: 'events' spins the nodes on rclpy's experimental EventsExecutor
#: instead of its SingleThreadedExecutor.
EXECUTOR_ENV = 'MANIP_DYNAMICS_EXECUTOR'
#: Environment variable: '0' leaves every callback on the executor (no
#: :class:`~manip_dynamics.ros.runtime.callback_lane.CallbackLane` is started).
LANES_ENV = 'MANIP_DYNAMICS_LANES'
#: Seconds a node may take to stop after SIGINT or SIGTERM (its spin loop to end, its last
#: command, its clean-up) before it prints the stack of every thread and exits with
#: :data:`EXIT_STUCK`. Below launch's 5 s before SIGTERM: two of about 20 control.launch.py
#: Ctrl-Cs on a heavily loaded 2-core machine left one node (once the simulator, once the
#: observer) alive 15 s later, when launch killed it, with nothing said about where it hung.
STOP_GRACE = 4.0
#: Exit code of a node that did not stop within :data:`STOP_GRACE`.
EXIT_STUCK = 1
#: Seconds between the last zero command and its copy (:func:`send_last_zero`).
LAST_COMMAND_REPEAT = 0.02
#: Parameter of every node that :func:`run_node` runs: the SCHED_FIFO priority of the node's
#: threads, 1 to 99 (0: the normal scheduler), as controller_manager's ``thread_priority``.
THREAD_PRIORITY = 'thread_priority'
#: The values it takes: 0, the normal scheduler, or a SCHED_FIFO priority 1 to 99.
THREAD_PRIORITIES = range(0, 100)


class KindThrottle:
    """
    Log a message at most once per ``period`` seconds per kind of problem.

    The kind is a short key the caller chooses (e.g. ``'joint_states'`` plus the first words
    of the error); by default the message with its numbers blanked out, so the same problem
    with other values counts as the same kind. Suppressed repetitions are counted and the
    count is appended to the next line of that kind. At most ``max_kinds`` kinds are
    remembered (least recently logged dropped first).
    """

    def __init__(self, logger: Any, period: float, max_kinds: int = 64) -> None:
        """
        Wrap a logger.

        :param logger: An rclpy logger (``node.get_logger()``).
        :param period: Smallest time between two lines of one kind [s, monotonic clock].
        :param max_kinds: Number of kinds remembered.
        """
        self._logger = logger
        self._period = float(period)
        self._max = int(max_kinds)
        self._last: OrderedDict[str, list] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def kind_of(message: str) -> str:
        """
        Return the default kind of a message: its text with every number replaced by ``#``.

        :param message: The log message.
        :return: The kind key.
        """
        return re.sub(r'[-+]?\d+(\.\d*)?([eE][-+]?\d+)?', '#', message)[:200]

    def log(self, level: str, message: str, kind: str | None = None) -> bool:
        """
        Log ``message`` at ``level`` unless a line of the same kind was logged recently.

        :param level: ``'info'``, ``'warning'`` or ``'error'``.
        :param message: The text.
        :param kind: The kind key; default :meth:`kind_of` the message.
        :return: True when the line was logged.
        """
        key = self.kind_of(message) if kind is None else kind
        now = time.monotonic()
        with self._lock:
            entry = self._last.get(key)
            if entry is not None and now - entry[0] < self._period:
                entry[1] += 1
                return False
            suppressed = entry[1] if entry is not None else 0
            self._last[key] = [now, 0]
            self._last.move_to_end(key)
            while len(self._last) > self._max:
                self._last.popitem(last=False)
        if suppressed:
            message = '%s (%d more like this in the last %g s)' % (
                message, suppressed, self._period)
        # One call site per severity: Kilted's rclpy raises when one call site logs at two
        # severities ("Logger severity cannot be changed between calls").
        if level == 'error':
            self._logger.error(message)
        elif level == 'warning':
            self._logger.warning(message)
        else:
            self._logger.info(message)
        return True

    def warning(self, message: str, kind: str | None = None) -> bool:
        """Log a warning, throttled per kind like :meth:`log`."""
        return self.log('warning', message, kind)

    def error(self, message: str, kind: str | None = None) -> bool:
        """Log an error, throttled per kind like :meth:`log`."""
        return self.log('error', message, kind)


def _log_callback_error(node: Any, callback: Callable) -> str:
    """Log the exception being handled for ``callback`` (throttled); return its text."""
    error = sys.exc_info()[1]
    text = 'internal error: %s: %s' % (type(error).__name__, error)
    throttle = getattr(node, '_md_callback_throttle', None)
    if throttle is None:
        throttle = KindThrottle(node.get_logger(), 2.0)
        node._md_callback_throttle = throttle
    name = getattr(callback, '__name__', type(callback).__name__)
    throttle.error('unexpected error in %s, the node keeps running: %s\n%s' % (
        name, text, traceback.format_exc()), kind='callback ' + name)
    return text


def _callback_lock(node: Any) -> Any:
    """Return the lock a callback of ``node`` holds (:class:`GuardedNode`'s), or a no-op."""
    return getattr(node, 'callback_lock', None) or contextlib.nullcontext()


def guarded(node: Any, callback: Callable) -> Callable:
    """
    Return ``callback`` wrapped so that no exception leaves it (subscriptions, timers).

    The wrapper keeps the callback's signature (rclpy reads it to decide whether to pass
    message or timer info) and calls ``wrapper.__wrapped__`` at call time, holding the node's
    ``callback_lock`` where it has one (:class:`GuardedNode`: its callbacks run one at a time
    whether the executor or a :class:`~manip_dynamics.ros.runtime.callback_lane.CallbackLane`
    calls them).

    :param node: The node whose logger reports the error.
    :param callback: The callback.
    :return: The wrapper; it returns None after an error.
    """
    if getattr(callback, '_md_guarded', False):
        return callback

    lock = _callback_lock(node)

    @functools.wraps(callback)
    def wrapper(*args: Any) -> Any:
        with lock:
            try:
                return wrapper.__wrapped__(*args)
            except Exception:  # noqa: B902 - a callback must never end the node
                _log_callback_error(node, wrapper.__wrapped__)
                return None
    wrapper._md_guarded = True
    return wrapper


def guarded_service(node: Any, callback: Callable, srv_type: Any) -> Callable:
    """
    Return a service callback wrapped so that an exception becomes a failed response.

    :param node: The node whose logger reports the error (its ``callback_lock`` is held
        during the call, as in :func:`guarded`).
    :param callback: ``callback(request, response) -> response``.
    :param srv_type: The service type (its Response is filled on an error: ``success``
        false and ``message`` the error, where the response has those fields).
    :return: The wrapper.
    """
    if getattr(callback, '_md_guarded', False):
        return callback

    lock = _callback_lock(node)

    @functools.wraps(callback)
    def wrapper(request: Any, response: Any) -> Any:
        try:
            with lock:
                return wrapper.__wrapped__(request, response)
        except Exception:  # noqa: B902 - a request must never end the node
            text = _log_callback_error(node, wrapper.__wrapped__)
            failed = srv_type.Response()
            if hasattr(failed, 'success'):
                failed.success = False
            if hasattr(failed, 'message'):
                failed.message = text
            return failed
    wrapper._md_guarded = True
    return wrapper


#: For how long after its start a node looks for an older node of the same name [s], and
#: how often. Node names travel on their own discovery topic: 1.8 s on this machine's
#: loopback, so the window is 5 s; after it, a duplicate that appears is only warned about
#: (every DUPLICATE_WARN_PERIOD s): the newcomer refuses, the node already running goes on.
DUPLICATE_CHECK_SECONDS = 5.0
DUPLICATE_CHECK_PERIOD = 0.2
DUPLICATE_WARN_PERIOD = 10.0


def _process_name(pid: int, host: str) -> str:
    """Return ``'pid P on H (command)'`` for another process, the command when readable."""
    text = 'process %d on %s' % (pid, host)
    if host == socket.gethostname():
        try:
            with open('/proc/%d/cmdline' % pid, 'rb') as stream:
                words = stream.read().split(b'\0')
            command = ' '.join(w.decode('utf-8', 'replace') for w in words[:3] if w)
            text += ' (%s)' % command
        except OSError:
            pass
    return text


def duplicate_name_message(node: Any, final: bool = False) -> str | None:
    """
    Return why ``node`` must not run beside another node of its name, or None.

    A node of the same name and namespace on the graph that started earlier (its
    ``~/_started`` announcement) makes this one refuse; one that started later refuses
    itself. One that announced nothing (not a node of this package) counts as older once
    the check window closes (``final``).

    :param node: A :class:`GuardedNode`.
    :param final: The last check of the start-up window.
    :return: The message naming the other node's process when known, or None.
    """
    if getattr(node, 'allow_duplicate_name', False):
        return None
    name, namespace = node.get_name(), node.get_namespace()
    count = sum(1 for n, ns in node.get_node_names_and_namespaces()
                if n == name and ns == namespace)
    if count < 2:
        return None
    others = getattr(node, 'others_started', {})
    older = sorted(v for v in others.values() if v[0] < getattr(node, 'started_ns', 0))
    if older:
        who = 'in %s' % _process_name(older[0][1], older[0][2])
    elif others or not final:
        return None   # this one is the oldest (the others refuse), or no word yet
    else:
        who = '(it announced no start: not a manip_dynamics node; `ros2 node list` shows it)'
    full = (namespace.rstrip('/') + '/' + name) if namespace != '/' else '/' + name
    return ('a node named %s is already running on this ROS domain %s: two nodes of one name '
            "answer each other's requests, so this one does not run. Stop the other one, "
            'start this one under another name (--ros-args -r __node:=NAME), or set the '
            'parameter allow_duplicate_name:=true' % (full, who))


def prepare_kernels(logger: Any) -> float:
    """
    Compile (or load from numba's disk cache) every dynamics kernel the nodes use.

    Through :mod:`manip_dynamics.precompile` (the same code ``make build`` and
    ``manip-dynamics precompile`` run): nothing happens when its cache check says warm;
    otherwise one line per step, ``compiling dynamics kernels (first start after install):
    k/N <what>``.

    :param logger: The rclpy logger to report on (the node does not exist yet).
    :return: Wall time spent [s].
    """
    from manip_dynamics import precompile
    start = time.monotonic()

    def progress(done: int, total: int, label: str) -> None:
        logger.info(precompile.format_progress(done, total, label))
    state = precompile.cache_state()
    if not state.warm:
        logger.info('%s: cache cold (%s); compiling, or waiting for another process that '
                    'compiles them' % (precompile.PROGRESS_PREFIX, state.reason))
    report = precompile.precompile(progress)
    if report.compiled:
        logger.info('dynamics kernels ready after %.1f s (compiled once into %s; later '
                    'starts load them from there)' % (report.seconds,
                                                      ', '.join(report.directories)))
    return time.monotonic() - start


def send_last_zero(node: Any) -> None:
    """
    ``before_destroy`` of a node that commands an arm: one last zero command on the way out.

    Calls the node's ``publish_zero()`` (True when a command went out), sends the same zero
    command once more :data:`LAST_COMMAND_REPEAT` s later, logs it with the node's
    ``commands_topic`` and gives the middleware 50 ms to hand the message out. The copy is
    there because a reliable sample lost on the way is sent again only after the writer's
    next heartbeat (seconds), and the node's publisher is gone by then: the controller would
    keep the last non-zero command. (Waiting for the acknowledgments instead
    (``Publisher.wait_for_all_acked``) waited 1 s in 4 of 5 shutdowns on Fast DDS, whose
    readers acknowledge at the heartbeat, though every zero had arrived.)
    """
    if node.publish_zero():
        time.sleep(LAST_COMMAND_REPEAT)
        node.publish_zero()
        node.get_logger().info('shutting down: sent one zero command to %s (and a copy %g s '
                               'later)' % (node.commands_topic, LAST_COMMAND_REPEAT))
        time.sleep(0.05)  # let the middleware hand the last command out


def _exit_stuck(name: str, signum: int) -> None:
    """Say that the node did not stop after signal ``signum``, where it hung, and exit."""
    sys.stderr.write('[%s] did not stop within %g s of signal %d (a callback or the clean-up '
                     'is stuck; the stack of every thread follows): exiting with code %d\n'
                     % (name, STOP_GRACE, signum, EXIT_STUCK))
    sys.stderr.flush()
    faulthandler.dump_traceback(file=sys.stderr, all_threads=True)
    sys.stderr.flush()
    os._exit(EXIT_STUCK)


def executor_kind() -> str:
    """Return the executor :func:`make_executor` builds: ``'events'`` or ``'single'``."""
    if os.environ.get(EXECUTOR_ENV, 'single') == 'events':
        try:
            from rclpy.experimental import EventsExecutor  # noqa: F401
        except ImportError:
            return 'single'
        return 'events'
    return 'single'


def lanes_enabled() -> bool:
    """
    Return whether :func:`run_node` starts the node's callback lanes.

    Yes on the SingleThreadedExecutor unless ``MANIP_DYNAMICS_LANES=0`` (:data:`LANES_ENV`);
    never on the EventsExecutor (its C++ loop does not ask callback groups before waiting).
    """
    return executor_kind() == 'single' and os.environ.get(LANES_ENV, '1') != '0'


def passes_message_info() -> bool:
    """
    Return whether subscription callbacks get ``(msg, info)`` on this node's executor.

    rclpy's wait-set executors pass the message info (with its reception time) to a callback
    that takes two arguments (Iron and newer); the EventsExecutor passes the message only.
    """
    from rclpy.subscription import Subscription
    return hasattr(Subscription, 'CallbackType') and executor_kind() == 'single'


def with_message_info(callback: Any) -> Any:
    """
    Return ``callback(msg, info)`` in the form this rclpy calls.

    Where rclpy passes the message info (Iron and newer, the wait-set executors) it gets it
    (a callback that also binds one argument would get none: rclpy tries one first). Where it
    does not (older rclpy; the EventsExecutor, ``MANIP_DYNAMICS_EXECUTOR=events``) ``info``
    is None and the reception time is taken when the callback runs (:func:`received_ns`).
    """
    if passes_message_info():
        return callback
    return lambda msg: callback(msg, None)


def received_ns(info: Any) -> int:
    """Return the DDS reception time [ns, system clock] of a message's info, or now."""
    try:
        return int(info['received_timestamp'])
    except (TypeError, KeyError, ValueError):
        return time.time_ns()


class LostMessages:
    """Count one publisher's messages lost on the way, from their sequence numbers."""

    def __init__(self) -> None:
        self._last: int | None = None

    def since_last(self, info: Any) -> int:
        """
        Return how many messages were published between the previous one received and this.

        From ``info['publication_sequence_number']`` (:func:`with_message_info`; Fast DDS
        gives it): 0 where it is missing, and at a publisher's restart (a number not above
        the previous one). Call it for every message received, in order.
        """
        try:
            number = int(info['publication_sequence_number'])
        except (TypeError, KeyError, ValueError):
            self._last = None
            return 0
        last, self._last = self._last, number
        return number - last - 1 if last is not None and number > last else 0


def make_executor() -> Any:
    """
    Return the executor a node spins on: SingleThreadedExecutor, or on request EventsExecutor.

    One thread either way. rclpy's experimental EventsExecutor (``rclpy.experimental``,
    Jazzy's rclpy 7.1 and Kilted's) takes a message to its callback in about a quarter of
    the wait-set executor's time (52 against 215 us per JointState here,
    docs/BENCHMARKS.md), most of what a node costs at 1 kHz; ``MANIP_DYNAMICS_EXECUTOR=events``
    (:data:`EXECUTOR_ENV`) selects it where the installed rclpy has it. Not the default: in
    this suite's full test run its external_torque_observer went silent after one message
    in 4 of 7 tests (each passed alone), and a subscriber whose callback was slower than its
    1 kHz publisher spun one core at 100 % and ignored SIGTERM (docs/ROS_API.md).
    """
    from rclpy.executors import SingleThreadedExecutor
    if executor_kind() == 'events':
        from rclpy.experimental import EventsExecutor
        return EventsExecutor()
    return SingleThreadedExecutor()


def thread_priority(node: Any, default: int = 0) -> int:
    """
    Declare and return the node's :data:`THREAD_PRIORITY` parameter (read-only).

    :param node: The node (its parameter overrides are read).
    :param default: The value when the node was given none.
    :raises ValueError: Not an integer from 0 to 99 (the message names the parameter).
    """
    from rcl_interfaces.msg import ParameterDescriptor
    if not node.has_parameter(THREAD_PRIORITY):
        try:
            node.declare_parameter(THREAD_PRIORITY, int(default), ParameterDescriptor(
                description="SCHED_FIFO priority of this node's threads, 1 to 99; 0: the "
                "normal scheduler (as controller_manager's thread_priority)",
                read_only=True))
        except Exception as error:  # noqa: B902 - rclpy's type errors have no common base
            raise ValueError('parameter %s must be an integer from 0 to 99: %s'
                             % (THREAD_PRIORITY, error)) from None
    value = node.get_parameter(THREAD_PRIORITY).value
    if isinstance(value, bool) or not isinstance(value, int) or value not in THREAD_PRIORITIES:
        raise ValueError('parameter %s must be an integer from 0 to 99 (0: the normal '
                         'scheduler), got %r' % (THREAD_PRIORITY, value))
    return value


def apply_thread_priority(priority: int) -> str | None:
    """
    Run every thread of this process, and those it starts later, at SCHED_FIFO ``priority``.

    What controller_manager does for its update loop (its ``thread_priority``, default 50):
    a process in the real-time class runs whenever it is ready, before every normal process
    of its core, so a busy machine delays its callbacks by microseconds instead of the tens
    of milliseconds a fair share gives. Threads that exist now (the executor's, the DDS
    library's) are moved one by one; a thread inherits its creator's policy. Linux only;
    needs root or an ``rtprio`` limit (``/etc/security/limits.conf``, as for
    controller_manager). The kernel keeps 5 % of each second for normal processes
    (``sched_rt_runtime_us``), so a stuck callback cannot take a core whole.

    :param priority: 1 to 99 (0: nothing is changed).
    :return: None when applied (or 0), else why not (the caller warns and runs on).
    """
    if priority == 0:
        return None
    if not hasattr(os, 'sched_setscheduler') or not os.path.isdir('/proc/self/task'):
        return 'SCHED_FIFO is not available on this system'
    param = os.sched_param(priority)
    try:
        for tid in sorted(int(t) for t in os.listdir('/proc/self/task')):
            try:
                os.sched_setscheduler(tid, os.SCHED_FIFO, param)
            except ProcessLookupError:
                continue   # the thread ended meanwhile
    except OSError as error:
        return '%s (give this user an rtprio limit, e.g. in /etc/security/limits.conf)' % (
            error.strerror or error)
    return None


def freeze_startup_objects() -> int:
    """
    Collect once, then leave every object that exists now out of later garbage collections.

    A node's start-up builds about 140,000 long-lived Python objects (numba's dispatchers
    and type system, rclpy, the model). CPython's oldest-generation collection walks all of
    them whenever enough new objects have survived, and holds the interpreter meanwhile: by
    hand behind the real controller_manager with a busy core (docs/ROS2_CONTROL.md, round
    16) that was a 70 to 106 ms pause in every node of control.launch.py (the simulator, the
    compensation, the observer, the filter) about once a minute, and in the filter a goal's
    acceptance 110 ms late. After :func:`gc.freeze` those objects are never walked again:
    no pause over 4 ms in the same run. Objects made later (a new model, plans) are collected
    as usual.

    :return: How many objects are now frozen (:func:`gc.get_freeze_count`).
    """
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()


def run_node(name: str, factory: Callable[[], Any], args: list[str] | None = None,
             startup_errors: tuple = (), report: Callable[[str, Exception], int] | None = None,
             before_destroy: Callable[[Any], None] | None = None, prepare: bool = True,
             default_thread_priority: int = 0) -> int:
    """
    Prepare the kernels, create the node, spin it until shutdown and stop it cleanly.

    The node also stops, as on Ctrl-C, when the process that started it has gone (its
    parent PID changes: ``kill`` of ``ros2 launch`` alone ends the launch without stopping
    the nodes, and an orphaned compensation would keep commanding the arm); set the
    environment variable ``MANIP_DYNAMICS_WATCH_PARENT=0`` to let a node outlive its
    parent on purpose.

    SIGINT and SIGTERM only ask the spin loop to stop (rclpy's own handler is not
    installed, so the context stays valid for ``before_destroy``, e.g. a last zero
    command); while the kernels compile they end the process at once (exit 0, no node
    exists yet), while the node is being created they stop it as soon as it exists (with
    its clean-up); from the clean-up on, further signals are ignored (the handlers are not
    restored: the process is about to exit), so a second Ctrl-C cannot interrupt it with a
    traceback. A node still running :data:`STOP_GRACE` s after the first signal (a stuck
    callback or clean-up) prints the stack of every thread to stderr and exits with
    :data:`EXIT_STUCK`. What the start-up built is frozen out of the garbage collector
    before the node spins (:func:`freeze_startup_objects`).

    :param name: The node's default name (logger name before the node exists).
    :param factory: Creates the node (after ``rclpy.init``).
    :param args: Command-line arguments for rclpy; default ``sys.argv``.
    :param startup_errors: Exceptions of the factory that mean "cannot start".
    :param report: Logs such an exception and returns the exit code.
    :param before_destroy: Called with the node after the spin loop, before it is
        destroyed, while the context is still valid.
    :param prepare: Compile or load the dynamics kernels first (False: a node that computes
        no dynamics, e.g. the description publisher).
    :param default_thread_priority: The node's :data:`THREAD_PRIORITY` when it was given
        none; applied before it spins (:func:`apply_thread_priority`); where the system
        refuses, one warning and the node runs on with the normal scheduler.
    :return: The exit code: 0 after a signal or an external shutdown, ``report``'s code
        after a start-up error.
    """
    import rclpy
    from rclpy.executors import ExternalShutdownException
    from rclpy.logging import get_logger
    from rclpy.signals import SignalHandlerOptions

    stop = threading.Event()
    spinning = threading.Event()
    # set while the kernels compile (no node yet); a signal after it ends the spin loop, so
    # a node that exists always gets its clean-up (a commanding node's last zero command)
    preparing = threading.Event()
    preparing.set()
    # watched in the spin loop; 1 (init) or 0 (no parent known): started by no launcher
    parent_pid = os.getppid() if os.environ.get(WATCH_PARENT_ENV, '1') != '0' else 0

    def request_stop(signum: int, frame: Any) -> None:
        if spinning.is_set() and not stop.is_set():
            watchdog = threading.Timer(STOP_GRACE, _exit_stuck, (name, signum))
            watchdog.daemon = True
            watchdog.start()
        stop.set()
        if preparing.is_set():
            # Still compiling, no node yet: nothing to clean up. An exception raised into
            # numba's compiler would surface as an unrelated error, and numba writes each
            # cache file atomically, so leaving at once is the clean way out.
            sys.stderr.write('[%s] stopped by signal %d while preparing the kernels\n'
                             % (name, signum))
            sys.stderr.flush()
            os._exit(EXIT_OK)
    signals = (signal.SIGINT, signal.SIGTERM)
    for sig in signals:
        signal.signal(sig, request_stop)
    node = None
    executor = None
    code = EXIT_OK
    try:
        rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
        if prepare:
            prepare_kernels(get_logger(name))
        preparing.clear()
        if stop.is_set():
            return code
        try:
            node = factory()
        except startup_errors as error:
            return report(name, error) if report is not None else 1
        try:
            priority = thread_priority(node, default_thread_priority)
        except ValueError as error:
            node.get_logger().error('cannot start: %s' % error)
            before_destroy = None   # it never commanded: no last command
            return 1
        refused = apply_thread_priority(priority)
        if refused is not None:
            node.get_logger().warning('could not run at SCHED_FIFO priority %d: %s; running '
                                      'with the normal scheduler' % (priority, refused))
        elif priority:
            node.get_logger().info('threads at SCHED_FIFO priority %d' % priority)
        freeze_startup_objects()   # after the node is built, before it spins
        executor = make_executor()
        executor.add_node(node)
        if lanes_enabled():
            # the per-sample callbacks on threads of their own (they inherit the priority)
            for lane in getattr(node, 'callback_lanes', ()):
                lane.start()
        spinning.set()
        started = time.monotonic()
        next_check = started
        while not stop.is_set() and rclpy.ok():
            if parent_pid > 1 and os.getppid() != parent_pid:
                # the launching process died without stopping its children (SIGTERM or
                # SIGKILL to `ros2 launch` alone): stop as on Ctrl-C, not run on orphaned
                node.get_logger().warning(
                    'the process that started this node (pid %d) has gone: stopping as on '
                    'Ctrl-C' % parent_pid)
                break
            now = time.monotonic()
            if now >= next_check:
                young = now - started <= DUPLICATE_CHECK_SECONDS
                next_check = now + (DUPLICATE_CHECK_PERIOD if young else DUPLICATE_WARN_PERIOD)
                final = now - started + DUPLICATE_CHECK_PERIOD > DUPLICATE_CHECK_SECONDS
                refusal = duplicate_name_message(node, final=young and final)
                if refusal is not None and young:
                    node.get_logger().error('cannot start: %s' % refusal)
                    code = 1
                    before_destroy = None  # the other node is in charge: no last command
                    break
                if refusal is not None:
                    node.get_logger().warning('another node of this name appeared after this '
                                              'one started (it should refuse to run): %s'
                                              % refusal.split(':')[0])
            executor.spin_once(timeout_sec=0.1 if now - started > DUPLICATE_CHECK_SECONDS
                               else DUPLICATE_CHECK_PERIOD / 2)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except Exception:  # noqa: B902 - say what stopped the node, then clean up
        get_logger(name).error('stopped by an unexpected error in a callback:\n%s'
                               % traceback.format_exc())
        code = 1
    finally:
        # From here on a signal changes nothing, up to the process's end: SIG_IGN, never the
        # previous handlers back (the interpreter's exit resets Python handlers, not
        # SIG_IGN, to the default action, and a second Ctrl-C then killed the process).
        for sig in signals:
            signal.signal(sig, signal.SIG_IGN)
        try:
            if node is not None:
                if hasattr(node, 'stop_lanes'):
                    node.stop_lanes()   # no callback beside the last command
                if before_destroy is not None:
                    before_destroy(node)
                if executor is not None:
                    executor.remove_node(node)   # no callback into a destroyed node
                node.destroy_node()
        finally:
            rclpy.try_shutdown()
    return code
