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
viewer_node and ``manip-dynamics view`` without viser: one line saying how to install
it, exit code 1, no traceback (a module ``viser`` that fails to import stands in for the
missing package).

Expected values come from what the test sends and the URDF.
"""

import os
import subprocess
import sys

import pytest
from ros_test_support import exit_code_and_log, require_interfaces, require_rclpy, STARTUP_TIMEOUT

rclpy = require_rclpy()
require_interfaces()

from manip_dynamics.ros.runtime.node_process import PACKAGE_ROOT, start_node  # noqa: E402

pytestmark = [pytest.mark.rostest, pytest.mark.slow]


def no_viser(tmp_path) -> dict:
    """Return an environment in which ``import viser`` fails as when it is not installed."""
    shim = tmp_path / 'no_viser'
    shim.mkdir()
    (shim / 'viser.py').write_text("raise ImportError(\"No module named 'viser'\")\n")
    env = dict(os.environ)
    env['PYTHONPATH'] = str(shim) + os.pathsep + env.get('PYTHONPATH', '')
    return env


def test_viewer_node_without_viser_says_so_in_one_line(tmp_path, cobot7_xml):
    proc = start_node('viewer_node', 'viewer_no_viser', {'robot_description': cobot7_xml},
                      env=no_viser(tmp_path))
    code, log = exit_code_and_log(proc)
    assert code == 1, log
    assert 'Traceback' not in log, log
    assert 'the viewer needs viser' in log and 'pip install viser' in log, log


def test_view_command_without_viser_says_so_in_one_line(tmp_path):
    env = no_viser(tmp_path)
    env['PYTHONPATH'] = env['PYTHONPATH'] + os.pathsep + PACKAGE_ROOT
    proc = subprocess.run([sys.executable, '-m', 'manip_dynamics.cli', 'view', 'cobot7',
                           '--duration', '1'], env=env, capture_output=True, text=True,
                          timeout=STARTUP_TIMEOUT, check=False)
    assert proc.returncode != 0
    assert 'Traceback' not in proc.stderr, proc.stderr
    assert 'the viewer needs viser' in proc.stderr, proc.stderr
