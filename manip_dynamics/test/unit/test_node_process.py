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

"""Stopping child processes (manip_dynamics.ros.runtime.node_process), without ROS."""

import os
import subprocess
import sys
import time

from manip_dynamics.ros.runtime.node_process import process_alive, start_busy_loop, stop_node

#: A parent that starts a child in its process group, prints the child's pid and waits.
PARENT = ('import subprocess, sys, time\n'
          'child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])\n'
          'print(child.pid, flush=True)\n'
          'time.sleep(60)\n')


def _parent_and_child() -> tuple:
    proc = subprocess.Popen([sys.executable, '-c', PARENT], stdout=subprocess.PIPE,
                            text=True, start_new_session=True)
    return proc, int(proc.stdout.readline())


def test_group_stop_reaches_every_process_of_the_session() -> None:
    proc, child = _parent_and_child()
    code = stop_node(proc, timeout=5.0, group=True)
    assert code is not None and code != 0
    deadline = time.monotonic() + 5.0
    while process_alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not process_alive(child), 'the child of the stopped process still runs'


def test_a_plain_stop_signals_only_the_process() -> None:
    proc, child = _parent_and_child()
    try:
        stop_node(proc, timeout=5.0)
        assert proc.returncode is not None
        assert process_alive(child), ('the child went with its parent: the stop was not the '
                                      'plain one')
    finally:
        os.kill(child, 9)


def test_stop_reaps_an_exited_process_and_takes_none() -> None:
    proc = subprocess.Popen([sys.executable, '-c', 'raise SystemExit(3)'])
    proc.wait()
    assert stop_node(proc, group=True) == 3
    assert stop_node(None) is None


def test_busy_loop_runs_on_its_core_and_none_for_a_negative_core() -> None:
    assert start_busy_loop(-1) is None
    proc = start_busy_loop(0)
    try:
        time.sleep(0.2)
        assert proc.poll() is None
        with open('/proc/%d/status' % proc.pid) as stream:
            allowed = [line for line in stream if line.startswith('Cpus_allowed_list')][0]
        assert allowed.split()[1] == '0', allowed
    finally:
        proc.kill()
        proc.wait()
