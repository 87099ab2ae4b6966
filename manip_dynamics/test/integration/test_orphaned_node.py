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
A node whose launching process dies (SIGKILL to a launcher that does not stop its
children, as ``kill`` of ``ros2 launch`` leaves them) stops as on Ctrl-C; the
compensation sends its zero command.

Expected values come from what the test sends and the URDF.
"""

import os
import signal
import subprocess
import sys
import textwrap

import pytest
from ros_test_support import require_interfaces, require_rclpy, STARTUP_TIMEOUT, wait_until

rclpy = require_rclpy()
require_interfaces()


from manip_dynamics.bundled import urdf_path  # noqa: E402
from manip_dynamics.ros.runtime.node_process import PACKAGE_ROOT  # noqa: E402

pytestmark = [pytest.mark.rostest, pytest.mark.slow]


LAUNCHER = textwrap.dedent('''
    import sys, time
    from manip_dynamics.ros.runtime.node_process import start_node
    proc = start_node('gravity_compensation_node', 'orphan_gc',
                      {'robot_description': open(sys.argv[1]).read(), 'ramp_time': 0.0},
                      log_dir=sys.argv[2])
    print(proc.pid, flush=True)
    time.sleep(3600)
''')


def test_a_node_whose_launcher_died_stops_with_its_zero_command(tmp_path):
    env = dict(os.environ)
    env['PYTHONPATH'] = PACKAGE_ROOT + os.pathsep + env.get('PYTHONPATH', '')
    launcher = subprocess.Popen([sys.executable, '-c', LAUNCHER, urdf_path('cobot7'),
                                 str(tmp_path)], env=env, stdout=subprocess.PIPE, text=True)
    child = int(launcher.stdout.readline())
    log_path = tmp_path / 'orphan_gc.log'
    try:
        wait_until(lambda: log_path.exists() and "robot model 'cobot7'" in log_path.read_text(),
                   STARTUP_TIMEOUT, 'the compensation did not start')
        launcher.send_signal(signal.SIGKILL)  # gone without stopping its child
        launcher.wait(timeout=10)
        wait_until(lambda: not os.path.exists('/proc/%d' % child)
                   or open('/proc/%d/stat' % child).read().split()[2] == 'Z', 30.0,
                   'the orphaned node kept running:\n' + log_path.read_text())
    finally:
        try:
            os.kill(child, signal.SIGKILL)
        except ProcessLookupError:
            pass
        launcher.kill()
        launcher.stdout.close()
    log = log_path.read_text()
    assert 'has gone: stopping as on Ctrl-C' in log, log
    assert 'sent one zero command' in log, log
    assert 'Traceback' not in log, log
