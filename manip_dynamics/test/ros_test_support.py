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
The ROS imports every integration test starts with, skipped or failed with a reason.

Call the functions at the top of a test module, before its other ROS imports::

    rclpy = require_rclpy()
    srv = require_interfaces()

Without rclpy the module is skipped. Without the generated manip_dynamics_interfaces the
module is skipped too, except when MANIP_DYNAMICS_REQUIRE_INTERFACES=1 (scripts/test.sh,
i.e. ``make test``, sets it right after building the interfaces): then the ImportError is
raised and the module fails. Skips are reported at the caller's line (``__tracebackhide__``).
"""

import contextlib
import importlib
import os
import threading
import time
from types import ModuleType
from typing import Any, Iterator
import weakref

import pytest

from manip_dynamics.ros.runtime.node_process import read_log, wait_until  # noqa: F401
from manip_dynamics.ros.runtime.node_process import wait_for_log as wait_for_text

REQUIRE_INTERFACES_VARIABLE = 'MANIP_DYNAMICS_REQUIRE_INTERFACES'
#: Longest wait for a node to become ready [s]. A first start without a numba disk cache
#: compiles every kernel (about 30 s of CPU; minutes of wall time on a loaded 2-core machine,
#: see ``make test-cold``). Waits end as soon as the node is ready, so a generous bound costs
#: nothing when it is; MANIP_DYNAMICS_TEST_STARTUP_TIMEOUT overrides it.
STARTUP_TIMEOUT = float(os.environ.get('MANIP_DYNAMICS_TEST_STARTUP_TIMEOUT', '300'))
INTERFACES_SKIP_REASON = 'manip_dynamics_interfaces is not built or not sourced'


def require_rclpy() -> ModuleType:
    """
    Import rclpy, or skip the calling test module when it is not installed.

    :return: The ``rclpy`` module.
    """
    __tracebackhide__ = True
    return pytest.importorskip('rclpy', reason='rclpy not installed')


def interfaces_required() -> bool:
    """
    Tell whether a missing interfaces package must fail the tests instead of skipping them.

    :return: True when the environment variable MANIP_DYNAMICS_REQUIRE_INTERFACES is ``1``.
    """
    return os.environ.get(REQUIRE_INTERFACES_VARIABLE) == '1'


def require_interfaces() -> ModuleType:
    """
    Import the generated service module, or skip (fail under ``make test``) when absent.

    Works at module level (skips the whole module) and inside a test (skips that test).

    :return: The ``manip_dynamics_interfaces.srv`` module.
    :raises ModuleNotFoundError: When the module is missing and
        MANIP_DYNAMICS_REQUIRE_INTERFACES=1.
    """
    __tracebackhide__ = True
    try:
        return importlib.import_module('manip_dynamics_interfaces.srv')
    except ModuleNotFoundError as error:
        if interfaces_required():
            raise
        pytest.skip('%s (%s)' % (INTERFACES_SKIP_REASON, error), allow_module_level=True)


def wait_for_log(proc: Any, text: str, timeout: float = STARTUP_TIMEOUT) -> str:
    """Wait as :func:`wait_for_text` waits, :data:`STARTUP_TIMEOUT` s by default."""
    return wait_for_text(proc, text, timeout)


def exit_code_and_log(proc: Any, timeout: float = STARTUP_TIMEOUT) -> tuple[int, str]:
    """
    Wait for a node process that should end by itself; return its exit code and log.

    The process is stopped (and waited for) whatever happens, so none is left behind.

    :param proc: A process from :func:`manip_dynamics.ros.runtime.node_process.start_node`.
    :param timeout: Longest wait [s] (``subprocess.TimeoutExpired`` after it).
    """
    from manip_dynamics.ros.runtime.node_process import stop_node
    try:
        code = proc.wait(timeout=timeout)
    finally:
        stop_node(proc)
    return code, read_log(proc)


def send_until_logged(proc: Any, publisher: Any, msg: Any, text: str,
                      timeout: float = 20.0, period: float = 0.05) -> None:
    """
    Publish ``msg`` every ``period`` s until ``text`` appears once more in the node's log.

    Our publisher seeing the node's subscription does not mean that the node has matched
    our publisher yet (discovery runs both ways): a single message can be lost. A long
    ``period`` sends a message that must arrive once (a move) again only when it was lost.

    :param proc: A process from :func:`manip_dynamics.ros.runtime.node_process.start_node`.
    :raises AssertionError: ``text`` was not logged again within ``timeout`` s.
    """
    before = read_log(proc).count(text)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        publisher.publish(msg)
        resend = min(deadline, time.monotonic() + period)
        while True:
            time.sleep(min(0.05, period))
            if read_log(proc).count(text) > before:
                return
            if time.monotonic() >= resend:
                break
    raise AssertionError('%r not logged again by %s within %g s:\n%s' % (
        text, proc.args[2], timeout, read_log(proc)))


@contextlib.contextmanager
def spun_node(name: str) -> Iterator[Any]:
    """
    Yield an rclpy node in a context of its own, spun by an executor on a daemon thread.

    On exit the executor stops, the thread is joined (5 s at most), the node is destroyed
    and the context shut down.

    :param name: The node's name.
    """
    rclpy = require_rclpy()
    from rclpy.executors import SingleThreadedExecutor
    context = rclpy.Context()
    rclpy.init(context=context)
    node = rclpy.create_node(name, context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    thread = threading.Thread(target=executor.spin, daemon=True)
    thread.start()
    try:
        yield node
    finally:
        executor.shutdown()
        thread.join(timeout=5)
        node.destroy_node()
        rclpy.try_shutdown(context=context)


def push_ros_time(answer: Any) -> float | None:
    """Return the ROS time [s] simulator_node's ~/apply_wrench answer says it took the push."""
    import re
    found = re.search(r'\(ROS time ([0-9.]+) s\)', answer.message)
    return float(found.group(1)) if found else None


#: Each test node's service clients by (name, type): made once, used for every call.
_CLIENTS: 'weakref.WeakKeyDictionary[Any, dict]' = weakref.WeakKeyDictionary()


def call_service(node: Any, srv_type: Any, name: str, request: Any, timeout: float) -> Any:
    """
    Call a service from the test thread while another thread spins ``node``.

    The node's client of that service is made at the first call and kept: a new client per
    call waits for DDS to match it with the server first, which took up to 2 s on the
    loaded machine (a push the endings round timed for the middle of a goal arrived after
    its end).

    :param node: The test-side rclpy node (spun elsewhere).
    :param srv_type: The service type.
    :param name: The service name.
    :param request: The request.
    :param timeout: Longest wait for the service to appear [s]; the answer gets 10 s.
    :return: The response.
    """
    clients = _CLIENTS.setdefault(node, {})
    client = clients.get((name, srv_type))
    if client is None:
        client = clients[(name, srv_type)] = node.create_client(srv_type, name)
    assert client.wait_for_service(timeout_sec=timeout), 'no service %s' % name
    future = client.call_async(request)
    wait_until(future.done, 10.0, 'service %s did not answer' % name)
    return future.result()


def wait_simulated(watch: Any, seconds: float) -> float:
    """Wait as ``ChainWatch.wait_simulated``, the first state within :data:`STARTUP_TIMEOUT`."""
    return watch.wait_simulated(seconds, STARTUP_TIMEOUT)


def urdf_text(name: str) -> str:
    """Return a bundled arm's URDF text (e.g. ``cobot7``)."""
    from manip_dynamics.bundled import urdf_path
    with open(urdf_path(name), encoding='utf-8') as stream:
        return stream.read()


def bundled_arm(name: str) -> tuple:
    """
    Return a bundled arm's URDF text, its RobotModel and its start pose.

    :param name: A bundled arm, e.g. ``cobot7``.
    :return: ``(xml, model, q0)``; q0 [rad or m] as control.launch.py starts it, shape (n,).
    """
    from manip_dynamics import RobotModel
    from manip_dynamics.ros.launch_support.ros2_control_setup import default_initial_positions
    xml = urdf_text(name)
    model = RobotModel.from_urdf_string(xml)
    return xml, model, default_initial_positions(model, xml)
