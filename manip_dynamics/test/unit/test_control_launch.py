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
Driving a launched control.launch.py (manip_dynamics.ros.testing.control_launch), without ROS.

A ``ros2`` of the test's own on PATH stands for the launch (it starts a child in its
session and waits); fake nodes and clients stand for rclpy, and a fake
``controller_manager_msgs.srv`` for the messages (not on PyPI).
"""

import os
import sys
import time
import types

import pytest

from manip_dynamics.ros.runtime.node_process import process_alive
from manip_dynamics.ros.testing import control_launch

#: The fake ``ros2``: prints its arguments and its child's pid, then waits.
FAKE_ROS2 = ('#!%s\n'
             'import subprocess, sys, time\n'
             'child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])\n'
             'print("args", *sys.argv[1:], flush=True)\n'
             'print("child", child.pid, flush=True)\n'
             'time.sleep(60)\n')


def test_launched_control_runs_the_launch_and_stops_its_whole_session(tmp_path, monkeypatch):
    ros2 = tmp_path / 'ros2'
    ros2.write_text(FAKE_ROS2 % sys.executable)
    ros2.chmod(0o755)
    monkeypatch.setenv('PATH', '%s:%s' % (tmp_path, os.environ['PATH']))
    launched = control_launch.launched_control(str(tmp_path / 'launch.log'), ['rviz:=false'])
    proc, log = next(launched)
    deadline = time.monotonic() + 30.0
    while 'child' not in control_launch.log_text(log) and time.monotonic() < deadline:
        time.sleep(0.05)
    text = control_launch.log_text(log)
    assert 'args launch manip_dynamics control.launch.py rviz:=false' in text
    child = int(text.split('child ')[1].split()[0])
    assert process_alive(child)
    launched.close()
    assert proc.poll() is not None, 'the launch still runs'
    deadline = time.monotonic() + 10.0
    while process_alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not process_alive(child), 'a node the launch started outlived it'
    assert log.closed


class _Future:
    def __init__(self, result):
        self._result = result

    def done(self):
        return self._result is not None

    def result(self):
        return self._result


class _Client:
    def __init__(self, node, name):
        self.node, self.name = node, name

    def wait_for_service(self, timeout_sec):
        return self.node.services.get(self.name) is not None

    def call_async(self, request):
        self.node.requests.append((self.name, request))
        return _Future(self.node.services[self.name](request))


class _Node:
    """A node whose services are plain functions; it counts the clients it still holds."""

    def __init__(self, services):
        self.services, self.requests, self.clients = services, [], 0

    def create_client(self, srv_type, name):
        self.clients += 1
        return _Client(self, name)

    def destroy_client(self, client):
        self.clients -= 1


class _Proc:
    def __init__(self, code=None):
        self.code = code

    def poll(self):
        return self.code


@pytest.fixture()
def srv(monkeypatch):
    """A fake ``controller_manager_msgs.srv`` with ListControllers and SwitchController."""
    module = types.ModuleType('controller_manager_msgs.srv')

    class ListControllers:
        Request = type('Request', (), {})

    class SwitchController:
        class Request:
            STRICT = 2

            def __init__(self, **fields):
                self.__dict__.update(fields)

    module.ListControllers, module.SwitchController = ListControllers, SwitchController
    package = types.ModuleType('controller_manager_msgs')
    package.srv = module
    monkeypatch.setitem(sys.modules, 'controller_manager_msgs', package)
    monkeypatch.setitem(sys.modules, 'controller_manager_msgs.srv', module)
    return module


def _listing(states):
    controllers = [types.SimpleNamespace(name=n, state=s) for n, s in states.items()]
    return types.SimpleNamespace(controller=controllers)


def test_call_service_answers_and_names_a_missing_service():
    node = _Node({'/a': lambda request: 'answer'})
    assert control_launch.call_service(node, object, '/a', 'request') == 'answer'
    with pytest.raises(AssertionError, match='no service /b'):
        control_launch.call_service(node, object, '/b', 'request', timeout=0.1)
    assert node.clients == 0


def test_call_service_names_a_service_that_does_not_answer():
    node = _Node({'/a': lambda request: None})
    with pytest.raises(AssertionError, match='no answer from /a'):
        control_launch.call_service(node, object, '/a', 'request', timeout=0.1)
    assert node.clients == 0


def test_wait_for_bringup_reads_the_namespaced_manager_until_the_controllers_are_up(
        srv, tmp_path, monkeypatch):
    monkeypatch.setattr(control_launch.time, 'sleep', lambda seconds: None)
    answers = [{'joint_state_broadcaster': 'active'},
               {**control_launch.BROUGHT_UP, 'effort_controller': 'inactive'},
               dict(control_launch.BROUGHT_UP)]
    node = _Node({'/arm1/controller_manager/list_controllers':
                  lambda request: _listing(answers.pop(0))})
    with open(tmp_path / 'log', 'w+') as log:
        states = control_launch.wait_for_bringup(node, _Proc(), log, 60.0, namespace='arm1')
    assert states == control_launch.BROUGHT_UP
    assert answers == [] and node.clients == 0


def test_wait_for_bringup_fails_at_once_when_the_launch_ends(srv, tmp_path):
    node = _Node({})
    with open(tmp_path / 'log', 'w+') as log:
        log.write('ros2_control_node (package controller_manager) is not installed')
        with pytest.raises(AssertionError, match='launch ended:\nros2_control_node'):
            control_launch.wait_for_bringup(node, _Proc(1), log, 60.0)
    assert node.requests == []


def test_wait_for_bringup_gives_up_with_the_states_it_saw(srv, tmp_path, monkeypatch):
    monkeypatch.setattr(control_launch.time, 'sleep', lambda seconds: None)
    node = _Node({'/controller_manager/list_controllers':
                  lambda request: _listing({'effort_controller': 'inactive'})})
    with open(tmp_path / 'log', 'w+') as log:
        with pytest.raises(AssertionError, match="'effort_controller': 'inactive'"):
            control_launch.wait_for_bringup(node, _Proc(), log, 0.0)


def test_switch_to_jtc_asks_for_a_strict_switch_either_way(srv):
    node = _Node({'/arm2/controller_manager/switch_controller':
                  lambda request: types.SimpleNamespace(ok=True)})
    control_launch.switch_to_jtc(node, namespace='/arm2')
    control_launch.switch_to_jtc(node, to_jtc=False, namespace='arm2')
    (_, there), (_, back) = node.requests
    assert there.activate_controllers == ['joint_trajectory_controller']
    assert there.deactivate_controllers == ['effort_controller']
    assert back.activate_controllers == ['effort_controller']
    assert there.strictness == back.strictness == srv.SwitchController.Request.STRICT


def test_switch_to_jtc_fails_when_the_manager_refuses(srv):
    node = _Node({'/controller_manager/switch_controller':
                  lambda request: types.SimpleNamespace(ok=False)})
    with pytest.raises(AssertionError, match='switch to joint_trajectory_controller failed'):
        control_launch.switch_to_jtc(node)
