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
The nodes' ``strict`` parameter and their model warnings (docs/ROS_API.md).

A robot description with physically suspect inertias (test/fixtures/suspect/
triangle_10_to_50.urdf: four links whose principal moments violate the triangle inequality)
starts every node with ``strict`` false (the default), and each model warning is logged
exactly once; with ``strict`` true the node does not start: one ``cannot start`` line naming
the links, exit code 1, no traceback.
"""

import os
import time

import pytest
from ros_test_support import exit_code_and_log, read_log, require_rclpy, STARTUP_TIMEOUT

require_rclpy()

from manip_dynamics.ros.runtime.node_process import start_node, stop_node  # noqa: E402, I100

pytestmark = [pytest.mark.rostest]

FIXTURE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                       'fixtures', 'suspect', 'triangle_10_to_50.urdf')
SUSPECT_LINKS = ('upper_arm', 'forearm', 'camera', 'finger_link')
NODES = ('dynamics_node', 'gravity_compensation_node', 'simulator_node')


@pytest.fixture(scope='module')
def xml() -> str:
    with open(FIXTURE, encoding='utf-8') as stream:
        return stream.read()


def wait_for_log(proc, text: str, timeout: float) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        log = read_log(proc)
        if text in log or proc.poll() is not None:
            return log
        time.sleep(0.1)
    return read_log(proc)


@pytest.mark.parametrize('module', NODES)
def test_suspect_description_starts_and_each_warning_is_logged_once(xml, module):
    proc = start_node(module, 'strict_off_%s' % module.replace('_node', ''),
                      {'robot_description': xml})
    try:
        log = wait_for_log(proc, "robot model 'fixture_triangle_10_to_50'", STARTUP_TIMEOUT)
        assert proc.poll() is None, log
        time.sleep(0.5)
        log = read_log(proc)
    finally:
        code = stop_node(proc)
    for link in SUSPECT_LINKS:
        assert log.count("URDF: link '%s'" % link) == 1, log
    assert 'triangle inequality' in log and 'Traceback' not in log, log
    assert code == 0, log


@pytest.mark.parametrize('module', NODES)
def test_strict_node_refuses_a_suspect_description(xml, module):
    proc = start_node(module, 'strict_on_%s' % module.replace('_node', ''),
                      {'robot_description': xml, 'strict': True})
    code, log = exit_code_and_log(proc)
    assert code == 1, log
    assert 'cannot start' in log and 'strict' in log and 'Traceback' not in log, log
    for link in SUSPECT_LINKS:
        assert "'%s'" % link in log, log
