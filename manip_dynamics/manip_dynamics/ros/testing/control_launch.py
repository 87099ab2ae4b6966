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
Driving a real ``ros2 launch manip_dynamics control.launch.py`` from outside: test support.

What the launch tests behind a real controller_manager (test/launch/) and
``scripts/mujoco_tracking.py --launch`` both do: start the launch in a session of its own
and stop it with the whole session; call a service from a node spun by another thread (and
wait for a future); wait until the launch's controllers are up; switch from effort_controller to
joint_trajectory_controller. rclpy and controller_manager_msgs are imported inside the
functions, so importing this module needs neither.
"""

import os
import subprocess
import time
from typing import Any, IO, Iterator, Sequence

from manip_dynamics.ros.runtime.node_process import stop_node

#: How long a launch gets to end after SIGINT to its session, before SIGKILL [s].
STOP_TIMEOUT = 30.0
#: The controllers' states once control.launch.py is up.
BROUGHT_UP = {'joint_state_broadcaster': 'active', 'effort_controller': 'active',
              'joint_trajectory_controller': 'inactive'}


def launched_control(log_path: str, arguments: Sequence[str]) -> Iterator[tuple[Any, IO[str]]]:
    """
    Run ``ros2 launch manip_dynamics control.launch.py`` in a session of its own.

    A generator (a pytest fixture's body, or ``contextlib.contextmanager``): yields
    ``(process, log file)``; on exit SIGINT to the session (Ctrl-C to the launch and every
    node it started), SIGKILL after :data:`STOP_TIMEOUT`.

    :param log_path: File the launch's output goes to (opened for reading too).
    :param arguments: Launch arguments, e.g. ``['rviz:=false']``.
    """
    log = open(log_path, 'w+')
    proc = subprocess.Popen(
        ['ros2', 'launch', 'manip_dynamics', 'control.launch.py', *arguments], stdout=log,
        stderr=subprocess.STDOUT, start_new_session=True, env=dict(os.environ))
    try:
        yield proc, log
    finally:
        stop_node(proc, timeout=STOP_TIMEOUT, group=True)
        log.close()


def log_text(log: IO[str]) -> str:
    """Return what a :func:`launched_control` log file holds so far."""
    log.flush()
    log.seek(0)
    return log.read()


def wait_for_future(future: Any, timeout: float, poll: float = 0.01) -> bool:
    """
    Wait until a future completes (its node is spun by another thread).

    :param future: The ``rclpy.task.Future`` of a service call.
    :param timeout: Longest wait [s].
    :param poll: Polling interval [s].
    :return: True when the future is done.
    """
    deadline = time.monotonic() + timeout
    while not future.done() and time.monotonic() < deadline:
        time.sleep(poll)
    return future.done()


def call_service(node: Any, srv_type: Any, name: str, request: Any,
                 timeout: float = 30.0) -> Any:
    """
    Call a service from a node spun by another thread; return the response.

    :param timeout: Longest wait for the service, and then for its answer [s].
    :raises AssertionError: The service is not there or does not answer within ``timeout``.
    """
    client = node.create_client(srv_type, name)
    try:
        assert client.wait_for_service(timeout_sec=timeout), 'no service %s' % name
        future = client.call_async(request)
        assert wait_for_future(future, timeout), 'no answer from %s' % name
        return future.result()
    finally:
        node.destroy_client(client)


def _prefix(namespace: str) -> str:
    """Return the launch's ``namespace`` argument as a name prefix ('' or '/arm1')."""
    namespace = namespace.strip('/')
    return '/' + namespace if namespace else ''


def wait_for_bringup(node: Any, proc: Any, log: IO[str], timeout: float,
                     namespace: str = '') -> dict[str, str]:
    """
    Wait until control.launch.py's controllers are up (:data:`BROUGHT_UP`).

    :param node: A node spun by another thread.
    :param proc: The launch process (its end fails the wait at once).
    :param log: Its log file (its tail is shown when the wait fails).
    :param timeout: [s].
    :param namespace: The launch's ``namespace`` argument ('' for none).
    :return: Controller name -> state.
    :raises AssertionError: The launch ended, or the controllers were not up in time.
    """
    from controller_manager_msgs.srv import ListControllers
    service = _prefix(namespace) + '/controller_manager/list_controllers'
    deadline = time.monotonic() + timeout
    states: dict[str, str] = {}
    while True:
        assert proc.poll() is None, 'the launch ended:\n' + log_text(log)[-3000:]
        client = node.create_client(ListControllers, service)
        ready = client.wait_for_service(timeout_sec=1.0)
        node.destroy_client(client)
        if ready:
            states = {c.name: c.state for c in call_service(
                node, ListControllers, service, ListControllers.Request()).controller}
            if all(states.get(name) == state for name, state in BROUGHT_UP.items()):
                return states
        assert time.monotonic() < deadline, 'controllers: %s\n%s' % (
            states, log_text(log)[-3000:])
        time.sleep(1.0)


def switch_to_jtc(node: Any, to_jtc: bool = True, namespace: str = '') -> None:
    """
    Switch from effort_controller to joint_trajectory_controller in one call, or back.

    :param node: A node spun by another thread.
    :param to_jtc: True: JTC active, effort_controller inactive; False: the other way.
    :param namespace: The launch's ``namespace`` argument ('' for none).
    :raises AssertionError: controller_manager refused the switch.
    """
    from controller_manager_msgs.srv import SwitchController
    controllers = ['joint_trajectory_controller', 'effort_controller']
    if not to_jtc:
        controllers.reverse()
    switch = SwitchController.Request(
        activate_controllers=controllers[:1], deactivate_controllers=controllers[1:],
        strictness=SwitchController.Request.STRICT)
    assert call_service(node, SwitchController,
                        _prefix(namespace) + '/controller_manager/switch_controller',
                        switch).ok, 'the switch to %s failed' % controllers[0]
