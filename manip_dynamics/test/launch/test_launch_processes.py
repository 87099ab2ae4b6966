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
``ros2 launch`` as a user runs it: what starts, what stops, what is left behind.

Each case runs ``ros2 launch manip_dynamics <file> ...`` in a session of its own, like a
terminal, and afterwards lists every process of that session from /proc: none may survive.

* An optional executable that is switched on but not installed (rviz2,
  robot_state_publisher) stops the launch before anything starts, with one line naming the
  argument that turns it off. (Before: four nodes were left running, re-parented to PID 1.)
* A node that dies after the start (here: the simulator and the compensation refuse a
  negative timeout) takes the whole launch down; the dynamics node does not survive it.
* Ctrl-C in the terminal (SIGINT to the process group) ends every node with a clean exit
  and the launch with exit code 0; the compensation sends its zero command.

This is a plain pytest module (no launch_testing plugin): it runs wherever the ``ros2``
command with launch_ros and this package's install are available, and is skipped otherwise.
"""

import glob
import os
import re
import signal
import subprocess
import tempfile
import time

from launch_support import ros2_control_missing, ros2_launch_missing
import pytest

pytestmark = [pytest.mark.rostest, pytest.mark.slow, pytest.mark.launch_test]


REASON = ros2_launch_missing()
if REASON:
    pytest.skip(REASON, allow_module_level=True)

#: A cold numba cache compiles for tens of seconds before the nodes exist.
STARTUP_TIMEOUT = 180.0


def session_processes(sid: int) -> list[tuple[int, str]]:
    """
    Return ``(pid, command line)`` of every live process of a session (from /proc).

    :param sid: The session id (the pid of the process that started it).
    """
    found = []
    for entry in os.listdir('/proc'):
        if not entry.isdigit():
            continue
        try:
            with open('/proc/%s/stat' % entry, encoding='utf-8') as stream:
                stat = stream.read()
            fields = stat[stat.rindex(')') + 2:].split()
            if fields[0] == 'Z' or int(fields[3]) != sid:
                continue
            with open('/proc/%s/cmdline' % entry, 'rb') as stream:
                cmd = stream.read().replace(b'\0', b' ').decode(errors='replace')
            found.append((int(entry), cmd))
        except (OSError, ValueError, IndexError):
            continue
    return found


class Launch:
    """One ``ros2 launch`` in a new session, its output in a file."""

    def __init__(self, tmp_path, *arguments: str, env: dict | None = None) -> None:
        self.log_path = tmp_path / ('launch_%d.log' % len(list(tmp_path.glob('launch*.log'))))
        env = dict(env or os.environ, PYTHONUNBUFFERED='1')
        with open(self.log_path, 'w', encoding='utf-8') as log:
            self.proc = subprocess.Popen(['ros2', 'launch', 'manip_dynamics', *arguments],
                                         stdout=log, stderr=subprocess.STDOUT, env=env,
                                         start_new_session=True)

    def output(self) -> str:
        return self.log_path.read_text(encoding='utf-8', errors='replace')

    def wait_for(self, text: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if text in self.output():
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.2)
        raise AssertionError('%r not in the launch output:\n%s' % (text, self.output()))

    def wait(self, timeout: float) -> int:
        return self.proc.wait(timeout=timeout)

    def survivors(self, grace: float = 5.0) -> list[tuple[int, str]]:
        """Return the processes of the session still alive ``grace`` s after the launch."""
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            left = session_processes(self.proc.pid)
            if not left:
                return []
            time.sleep(0.2)
        return session_processes(self.proc.pid)

    def kill_all(self) -> None:
        """Clean up after a failed test: SIGKILL whatever is left of the session."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for pid, _ in session_processes(self.proc.pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


@pytest.fixture
def launch(tmp_path):
    """Yield a factory of launches; kill what is left of them at the end."""
    started = []

    def factory(*arguments: str, env: dict | None = None) -> Launch:
        started.append(Launch(tmp_path, *arguments, env=env))
        return started[-1]
    yield factory
    for item in started:
        item.kill_all()


@pytest.mark.parametrize('arguments, package, argument', [
    (('rviz:=true', 'robot_state_publisher:=false'), 'rviz2', 'rviz'),
    (('rviz:=false', 'robot_state_publisher:=true'), 'robot_state_publisher',
     'robot_state_publisher'),
])
def test_missing_optional_executable_stops_before_anything_starts(launch, arguments,
                                                                  package, argument):
    from manip_dynamics.ros.launch_support.launch_helpers import executable_path
    if executable_path(package, package) is not None:
        pytest.skip('%s is installed here: nothing is missing' % package)
    run = launch('sim.launch.py', *arguments)
    code = run.wait(STARTUP_TIMEOUT)
    out = run.output()
    assert code != 0, out
    assert '%s (package %s) is not installed' % (package, package) in out, out
    assert '%s:=false' % argument in out, out
    assert 'process started' not in out, 'a node was started:\n%s' % out
    assert run.survivors() == []


def test_a_node_that_dies_takes_the_launch_down(launch):
    run = launch('sim.launch.py', 'rviz:=false', 'robot_state_publisher:=false',
                 'timeout:=-1')
    code = run.wait(STARTUP_TIMEOUT)
    out = run.output()
    assert 'cannot start' in out and 'timeout' in out, out
    assert 'shutting down launched system' in out or code != 0, out
    left = run.survivors()
    assert left == [], 'left running after the launch ended: %s\n%s' % (left, out)


def test_ctrl_c_stops_every_node_cleanly(launch):
    run = launch('sim.launch.py', 'rviz:=false', 'robot_state_publisher:=false')
    run.wait_for('brakes released', STARTUP_TIMEOUT)
    time.sleep(1.0)
    os.killpg(run.proc.pid, signal.SIGINT)  # what a Ctrl-C in the terminal does
    code = run.wait(60.0)
    out = run.output()
    assert code == 0, out
    # simulator, dynamics, compensation and description_publisher (no robot_state_publisher)
    assert out.count('process has finished cleanly') == 4, out
    assert 'Traceback' not in out and 'process has died' not in out, out
    assert 'sent one zero command' in out, out
    assert run.survivors() == []


def test_the_readme_no_rviz_line_works_without_robot_state_publisher(launch):
    """``sim.launch.py viewer:=true rviz:=false`` as written in the README."""
    from manip_dynamics.ros.launch_support.launch_helpers import executable_path
    if executable_path('robot_state_publisher', 'robot_state_publisher') is not None:
        pytest.skip('robot_state_publisher is installed here: auto starts it')
    run = launch('sim.launch.py', 'viewer:=true', 'rviz:=false')
    run.wait_for('brakes released', STARTUP_TIMEOUT)
    out = run.output()
    assert 'publishing /robot_description' in out, out
    assert 'is not installed' not in out, out
    os.killpg(run.proc.pid, signal.SIGINT)
    assert run.wait(60.0) == 0, run.output()
    assert run.survivors() == []


def test_killing_the_launch_process_alone_stops_every_node(launch):
    """SIGTERM to ``ros2 launch`` only: no node keeps running."""
    run = launch('sim.launch.py', 'rviz:=false', 'robot_state_publisher:=false')
    run.wait_for('brakes released', STARTUP_TIMEOUT)
    time.sleep(1.0)
    os.kill(run.proc.pid, signal.SIGTERM)  # the launch process, not its group
    run.wait(60.0)
    left = run.survivors(grace=15.0)
    assert left == [], 'orphaned nodes kept running: %s' % left


@pytest.mark.parametrize('file, robot', [('dynamics.launch.py', 'cobot7'),
                                         ('gravity_compensation.launch.py', 'cobot7'),
                                         ('gravity_compensation.launch.py', 'puma560')])
def test_robot_by_name_then_ctrl_c(launch, file, robot):
    run = launch(file, 'robot:=%s' % robot)
    run.wait_for("robot model '%s' from the robot_description parameter" % robot,
                 STARTUP_TIMEOUT)
    os.killpg(run.proc.pid, signal.SIGINT)
    code = run.wait(60.0)
    out = run.output()
    assert code == 0 and 'process has finished cleanly' in out, out
    assert run.survivors() == []


def test_dynamics_launch_reads_the_topic_by_default(launch):
    run = launch('dynamics.launch.py')
    run.wait_for('waiting for /robot_description', STARTUP_TIMEOUT)
    os.killpg(run.proc.pid, signal.SIGINT)
    assert run.wait(60.0) == 0, run.output()
    assert run.survivors() == []


def test_sim_launch_simulates_another_bundled_arm(launch):
    """The YAML files list cobot7's joints; the launch gives every node the arm's own."""
    run = launch('sim.launch.py', 'robot:=puma560', 'rviz:=false')
    run.wait_for('brakes released', STARTUP_TIMEOUT)
    os.killpg(run.proc.pid, signal.SIGINT)
    code = run.wait(60.0)
    out = run.output()
    assert code == 0 and 'cannot start' not in out, out
    assert run.survivors() == []


# ------------------------------------------------------------------ control.launch.py
def test_control_launch_refuses_an_unknown_hardware(launch):
    run = launch('control.launch.py', 'hardware:=gazebo', 'rviz:=false')
    code = run.wait(STARTUP_TIMEOUT)
    out = run.output()
    assert code != 0, out
    assert 'hardware:=gazebo: expected one of topic_based, mock, description' in out, out
    assert 'process started' not in out, 'a node was started:\n%s' % out


def test_control_launch_names_a_missing_controller_manager(launch):
    """Without ros2_control (hidden from the ament index here) nothing starts."""
    from ament_index_python.packages import get_package_prefix, PackageNotFoundError
    env = dict(os.environ)
    try:
        hidden = get_package_prefix('controller_manager')
    except PackageNotFoundError:
        hidden = None
    if hidden is not None:
        env['AMENT_PREFIX_PATH'] = os.pathsep.join(
            p for p in env.get('AMENT_PREFIX_PATH', '').split(os.pathsep)
            if os.path.realpath(p) != os.path.realpath(hidden))
    run = launch('control.launch.py', 'rviz:=false', env=env)
    code = run.wait(STARTUP_TIMEOUT)
    out = run.output()
    assert code != 0, out
    assert ('ros2_control_node (package controller_manager) is not installed: install it '
            '(apt install ros-$ROS_DISTRO-controller-manager)') in out, out
    assert 'process started' not in out, 'a node was started:\n%s' % out


@pytest.mark.parametrize('robot', ['cobot7', 'gripper_arm', 'planar_2r', 'puma560'])
def test_control_launch_runs_every_bundled_arm_then_ctrl_c(launch, robot):
    """The real controller_manager accepts the arm's block; the chain releases the brakes."""
    missing = ros2_control_missing()
    if missing:
        pytest.skip(missing)
    pattern = os.path.join(tempfile.gettempdir(), 'manip_dynamics_controllers_*.yaml')
    before = set(glob.glob(pattern))
    run = launch('control.launch.py', 'robot:=%s' % robot, 'rviz:=false')
    run.wait_for('Configured and activated', STARTUP_TIMEOUT)
    run.wait_for('command on /sim/joint_commands holds the held pose', 60.0)
    run.wait_for('process has finished cleanly', 60.0)  # the spawner, done
    os.killpg(run.proc.pid, signal.SIGINT)  # Ctrl-C in the terminal
    code = run.wait(60.0)
    out = run.output()
    assert code == 0 and 'cannot start' not in out, out
    for node in ('description_publisher', 'simulator_node', 'gravity_compensation_node',
                 'external_torque_observer'):
        assert re.search(r'\[%s-\d+\]: process has finished cleanly' % node, out), out
    # ros2_control_node gets SIGINT from the terminal and again from launch: it shuts its
    # controllers and hardware down, then ends by the second signal (exit code -2)
    assert 'Shutting down the controller manager' in out, out
    assert run.survivors() == []
    # the controllers file written from the description went with the launch
    assert set(glob.glob(pattern)) <= before, set(glob.glob(pattern)) - before
