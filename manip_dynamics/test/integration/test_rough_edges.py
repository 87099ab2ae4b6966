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
What a ROS user met at the edges of the launch files and nodes, each as met.

* viewer_node and ``manip-dynamics view`` without viser: one line saying how to install
  it, exit code 1, no traceback (a module ``viser`` that fails to import stands in for
  the missing package).
* A node whose launching process dies (SIGKILL to a launcher that does not stop its
  children, as ``kill`` of ``ros2 launch`` leaves them) stops as on Ctrl-C; the
  compensation sends its zero command.
* After ``~/reset``, a command computed at a pose other than the reset pose (one still in
  flight from before the reset) does not release the simulator's brakes; one that holds
  the reset pose does.
* ``manip-dynamics identify play`` publishes the default excitation trajectory, larger
  than one command-line argument may be, and a subscriber receives every point.
* description_publisher offers /robot_description to a late subscriber (transient local).
* ``~/set_payload`` with mass 0 on a link without a payload says so.

Expected values come from what the test sends, the URDF and the file written.
"""

import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from ros_test_support import (read_log, require_interfaces, require_rclpy,
                              send_until_logged, spun_node, STARTUP_TIMEOUT, wait_until)

rclpy = require_rclpy()
srv = require_interfaces()

from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402, I100
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray, String  # noqa: E402
from std_srvs.srv import Trigger  # noqa: E402
from trajectory_msgs.msg import JointTrajectory  # noqa: E402
import yaml  # noqa: E402

from manip_dynamics import RobotModel  # noqa: E402
from manip_dynamics.bundled import urdf_path  # noqa: E402
from manip_dynamics.ros.runtime.node_process import (  # noqa: E402
    PACKAGE_ROOT, start_node, stop_node)

pytestmark = [pytest.mark.rostest, pytest.mark.slow]

#: Linux caps one command-line argument at 32 pages (MAX_ARG_STRLEN) [bytes].
MAX_ARG_STRLEN = 128 * 1024


@pytest.fixture(scope='module')
def xml() -> str:
    """Return the cobot7 URDF text."""
    with open(urdf_path('cobot7'), encoding='utf-8') as stream:
        return stream.read()


def wait_for_log(proc, text: str, timeout: float = STARTUP_TIMEOUT) -> str:
    """Wait until the node's log contains ``text``; fail with the log otherwise."""
    return wait_until(lambda: text in read_log(proc) and read_log(proc), timeout,
                      '%r not logged' % text) or read_log(proc)


def no_viser(tmp_path) -> dict:
    """Return an environment in which ``import viser`` fails as when it is not installed."""
    shim = tmp_path / 'no_viser'
    shim.mkdir()
    (shim / 'viser.py').write_text("raise ImportError(\"No module named 'viser'\")\n")
    env = dict(os.environ)
    env['PYTHONPATH'] = str(shim) + os.pathsep + env.get('PYTHONPATH', '')
    return env


def test_viewer_node_without_viser_says_so_in_one_line(tmp_path, xml):
    proc = start_node('viewer_node', 'viewer_no_viser', {'robot_description': xml},
                      env=no_viser(tmp_path))
    try:
        code = proc.wait(timeout=STARTUP_TIMEOUT)
    finally:
        stop_node(proc)
    log = read_log(proc)
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


def test_reset_releases_the_brakes_only_on_a_command_that_holds_the_reset_pose(xml):
    model = RobotModel.from_urdf_string(xml)
    proc = start_node('simulator_node', 'sim_reset_release', {
        'robot_description': xml, 'brakes': True, 'publish_clock': False,
        'controller_name': 'reset_release_controller', 'command_timeout': 5.0},
        remaps=('/joint_states:=/sim_reset_release/joint_states',))
    try:
        wait_for_log(proc, "simulating 'cobot7'")
        with spun_node('reset_release_probe') as node:
            states = []
            node.create_subscription(JointState, '/sim_reset_release/joint_states',
                                     lambda m: states.append(np.array(m.position)), 100)
            pub = node.create_publisher(Float64MultiArray,
                                        '/reset_release_controller/commands', 10)
            client = node.create_client(Trigger, '/sim_reset_release/reset')
            assert client.wait_for_service(timeout_sec=30.0)
            wait_until(lambda: states, 30.0, 'no joint_states')
            q0 = states[-1].copy()
            hold = model.gravity_torques(q0)
            pushed = model.gravity_torques(q0 + 0.05)  # computed at another pose
            wait_until(lambda: pub.get_subscription_count() > 0, 30.0, 'no subscription')

            def send_until(values, text):
                send_until_logged(proc, pub, Float64MultiArray(data=[float(v) for v in values]),
                                  text, timeout=20.0, period=0.02)
            send_until(hold, 'brakes released')  # engaged: the arm is held by g(q0)
            future = client.call_async(Trigger.Request())
            wait_until(future.done, 30.0, 'no answer from ~/reset')
            assert future.result().success, future.result().message
            released = read_log(proc).count('brakes released')
            # a command computed before the reset, at the pushed pose: refused for 0.3 s
            end = time.monotonic() + 0.3
            while time.monotonic() < end:
                pub.publish(Float64MultiArray(data=[float(v) for v in pushed]))
                time.sleep(0.02)
            log = read_log(proc)
            assert log.count('brakes released') == released, log
            assert 'brakes stay on after the reset' in log, log
            n = len(states)
            time.sleep(0.3)
            held = np.array(states[n:])
            assert held.size and np.max(np.abs(held - q0)) == 0.0, 'the arm moved while braked'
            send_until(hold, 'holds the reset pose')
            n = len(states)
            end = time.monotonic() + 1.0
            while time.monotonic() < end:  # the compensation keeps commanding g(q0)
                pub.publish(Float64MultiArray(data=[float(v) for v in hold]))
                time.sleep(0.01)
            drift = np.max(np.abs(np.array(states[n:]) - q0))
            assert drift < 1e-3, 'released with g(q0): drift %.3g rad' % drift
    finally:
        stop_node(proc)


def test_identify_play_publishes_the_default_excitation(tmp_path):
    path = tmp_path / 'excite.yaml'
    env = dict(os.environ)
    env['PYTHONPATH'] = PACKAGE_ROOT + os.pathsep + env.get('PYTHONPATH', '')
    cli = [sys.executable, '-m', 'manip_dynamics.cli', 'identify']
    # the documented excitation (docs/IDENTIFICATION.md), one optimiser iteration: the
    # file's size depends on the periods and the rate, not on the iterations
    subprocess.run(cli + ['excite', 'cobot7', '--out', str(path), '--speed-scale', '0.3',
                          '--iterations', '1', '--quiet'], env=env, check=True,
                   capture_output=True, timeout=STARTUP_TIMEOUT)
    size = path.stat().st_size
    assert size > MAX_ARG_STRLEN, 'the excitation file is only %d bytes' % size
    expected = yaml.safe_load(path.read_text())
    received = []
    qos = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE)
    with spun_node('play_probe') as node:
        node.create_subscription(JointTrajectory, '/play_probe/joint_trajectory',
                                 received.append, qos)
        proc = subprocess.run(cli + ['play', str(path), '--topic',
                                     '/play_probe/joint_trajectory', '--wait', '60'],
                              env=env, capture_output=True, text=True, timeout=120,
                              check=False)
        assert proc.returncode == 0, proc.stderr
        wait_until(lambda: received, 30.0, 'nothing received: ' + proc.stdout)
    msg = received[0]
    assert list(msg.joint_names) == expected['joint_names']
    assert len(msg.points) == len(expected['points'])
    for k in (0, len(msg.points) // 2, len(msg.points) - 1):
        np.testing.assert_allclose(msg.points[k].positions, expected['points'][k]['positions'],
                                   rtol=0, atol=0)
        t = expected['points'][k]['time_from_start']
        assert (msg.points[k].time_from_start.sec,
                msg.points[k].time_from_start.nanosec) == (t['sec'], t['nanosec'])
    assert 'published %d points' % len(msg.points) in proc.stdout


def test_description_publisher_serves_a_late_subscriber(xml):
    proc = start_node('description_publisher', 'description_publisher_test',
                      {'robot_description': xml},
                      remaps=('/robot_description:=/description_test/robot_description',))
    try:
        wait_for_log(proc, 'publishing /robot_description', 60.0)
        time.sleep(0.5)  # a late subscriber
        received = []
        qos = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)
        with spun_node('description_probe') as node:
            node.create_subscription(String, '/description_test/robot_description',
                                     received.append, qos)
            wait_until(lambda: received, 30.0, 'no /robot_description')
        assert received[0].data == xml
    finally:
        stop_node(proc)
    assert proc.returncode in (0, -2), read_log(proc)


def test_description_publisher_refuses_an_unusable_description():
    proc = start_node('description_publisher', 'description_publisher_bad',
                      {'robot_description': '<robot name="x"><link name="a"'})
    try:
        code = proc.wait(timeout=60.0)
    finally:
        stop_node(proc)
    log = read_log(proc)
    assert code == 1 and 'cannot start: robot_description' in log, log
    assert 'Traceback' not in log, log


def test_set_payload_of_zero_on_a_link_without_one_says_so(xml):
    proc = start_node('dynamics_node', 'payload_zero', {'robot_description': xml})
    try:
        wait_for_log(proc, "robot model 'cobot7'")
        with spun_node('payload_zero_probe') as node:
            client = node.create_client(srv.SetPayload, '/payload_zero/set_payload')
            assert client.wait_for_service(timeout_sec=30.0)
            request = srv.SetPayload.Request(link='tool0', mass=0.0)
            future = client.call_async(request)
            wait_until(future.done, 30.0, 'no answer')
            answer = future.result()
    finally:
        stop_node(proc)
    assert answer.success, answer.message
    assert 'had no payload' in answer.message and 'removed' not in answer.message
