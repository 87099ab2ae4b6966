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
What the package's launch files share: the robot description arguments and start checks.

Plain functions without launch imports, so they are unit-tested without a ROS install:

* :func:`robot_description` turns the ``urdf`` / ``robot`` launch arguments into URDF text
  (a ``.xacro`` file is expanded), or ``''`` to read ``/robot_description``;
* :func:`missing_executables` finds, before anything starts, the optional executables
  (rviz2, robot_state_publisher) that are switched on but not installed, and
  :func:`missing_message` says in one line which argument turns each off.
"""

import os
from typing import Callable, Iterable

from manip_dynamics.bundled import bundled_robots, urdf_path
from manip_dynamics.ros.runtime.node_runtime import THREAD_PRIORITIES, THREAD_PRIORITY


class LaunchArgumentError(ValueError):
    """A launch argument that cannot be used; the message says what to pass instead."""


def read_description_file(path: str) -> str:
    """
    Return the URDF text of a file: a ``.xacro`` file is expanded by xacro.

    :param path: The file (``~`` expanded).
    :return: The URDF XML text.
    :raises LaunchArgumentError: The file does not exist, or xacro is missing for a .xacro.
    """
    path = os.path.expanduser(path)
    if not os.path.isfile(path):
        raise LaunchArgumentError('urdf:=%s: no such file' % path)
    if path.endswith('.xacro'):
        try:
            import xacro
        except ImportError:
            raise LaunchArgumentError('urdf:=%s is a xacro file but xacro is not installed '
                                      '(apt install ros-$ROS_DISTRO-xacro, or pip install '
                                      'xacro)' % path) from None
        return xacro.process_file(path).toxml()
    with open(path, encoding='utf-8') as stream:
        return stream.read()


def robot_description(urdf: str, robot: str) -> str:
    """
    Return the robot description text the launch arguments ask for.

    :param urdf: The ``urdf`` argument: a URDF or xacro file, or ``''``.
    :param robot: The ``robot`` argument: a bundled arm (``cobot7``, ...), or ``''``.
    :return: The URDF text, or ``''`` when both are empty (the node then reads the
        ``/robot_description`` topic).
    :raises LaunchArgumentError: Both given, an unknown bundled arm, or an unreadable file.
    """
    urdf, robot = urdf.strip(), robot.strip()
    if urdf and robot:
        raise LaunchArgumentError('give urdf:=<file> or robot:=<name>, not both (urdf:=%s, '
                                  'robot:=%s)' % (urdf, robot))
    if robot:
        if robot not in bundled_robots():
            raise LaunchArgumentError('robot:=%s: no bundled robot of that name; bundled: %s'
                                      % (robot, ', '.join(bundled_robots())))
        return read_description_file(urdf_path(robot))
    if urdf:
        return read_description_file(urdf)
    return ''


JOINT_DYNAMICS_HELP = ("Identified joint dynamics for the suite's model nodes (the "
                       'parameter file `manip-dynamics identify fit` writes: friction, '
                       "damping, rotor inertia); empty: the description's own. The simulated "
                       'arm keeps its description')


def joint_dynamics_parameters(path: str) -> dict[str, list]:
    """
    Return the ``joint_dynamics.*`` node parameters of an identified joint-dynamics file.

    :param path: The ``joint_dynamics`` launch argument: a YAML file as ``manip-dynamics
        identify fit`` writes it (``/**: ros__parameters: joint_dynamics: ...``), or empty.
    :return: ``{'joint_dynamics.joint_names': [...], 'joint_dynamics.damping': [...], ...}``
        (N m s/rad, N m, kg m^2 per joint, or N s/m, N, kg on prismatic joints), or ``{}``
        for an empty path.
    :raises LaunchArgumentError: No such file, or no well-formed ``joint_dynamics`` block
        (the message names the problem).
    """
    import yaml

    from manip_dynamics.errors import InputError
    from manip_dynamics.identification.urdf_writer import read_joint_dynamics_yaml

    if not path.strip():
        return {}
    path = os.path.expanduser(path.strip())
    if not os.path.isfile(path):
        raise LaunchArgumentError('joint_dynamics:=%s: no such file' % path)
    with open(path, encoding='utf-8') as stream:
        text = stream.read()
    try:
        per_joint = read_joint_dynamics_yaml(text)
    except (InputError, yaml.YAMLError, ValueError, TypeError) as exc:
        raise LaunchArgumentError('joint_dynamics:=%s: %s' % (path, exc)) from None
    if not per_joint:
        raise LaunchArgumentError('joint_dynamics:=%s: no damping, friction or armature '
                                  'values' % path)
    names = list(next(iter(per_joint.values())))   # each key: the block's joint_names
    params: dict[str, list] = {'joint_dynamics.joint_names': names}
    for key, values in per_joint.items():
        params['joint_dynamics.' + key] = [values[name] for name in names]
    return params


def executable_path(package: str, executable: str) -> str | None:
    """
    Return the path of an installed ROS executable, as ``ros2 run`` finds it, or None.

    :param package: The package, e.g. ``'rviz2'``.
    :param executable: The executable in ``<prefix>/lib/<package>/``; ``''``: the package
        alone (a plugin library such as joint_state_broadcaster), its prefix is returned.
    :return: The path, or None when the package or the executable is not installed.
    """
    try:
        from ament_index_python.packages import get_package_prefix, PackageNotFoundError
    except ImportError:
        return None
    try:
        prefix = get_package_prefix(package)
    except PackageNotFoundError:
        return None
    if not executable:
        return prefix
    path = os.path.join(prefix, 'lib', package, executable)
    return path if os.path.isfile(path) and os.access(path, os.X_OK) else None


def missing_executables(wanted: Iterable[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    """
    Return the wanted executables that are not installed.

    :param wanted: ``(package, executable, argument)`` triples of the parts switched on;
        ``argument`` is the launch argument that switches the part off (``''``: none does);
        ``executable`` ``''``: the package alone (a plugin library).
    :return: The missing ones, in the given order.
    """
    return [item for item in wanted if executable_path(item[0], item[1]) is None]


def missing_message(missing: Iterable[tuple[str, str, str]]) -> str:
    """
    Return the one-line explanation for missing executables.

    :param missing: ``(package, executable, argument)`` triples.
    :return: E.g. ``rviz2 (package rviz2) is not installed: install it (...) or pass
        rviz:=false. Nothing was started.``
    """
    return '; '.join('%s (package %s) is not installed: install it (apt install '
                     'ros-$ROS_DISTRO-%s)%s' % (
                         executable or package, package, package.replace('_', '-'),
                         ' or pass %s:=false' % argument if argument else '')
                     for package, executable, argument in missing) + '. Nothing was started.'


def is_true(value: str, name: str = '') -> bool:
    """
    Read a boolean launch argument as launch's IfCondition does.

    :param value: The argument text.
    :param name: The argument's name, for the message.
    :return: True for ``true``/``1``/``yes``/``on`` (any case).
    :raises LaunchArgumentError: Anything else but ``false``/``0``/``no``/``off``.
    """
    text = value.strip().lower()
    if text in ('true', '1', 'yes', 'on'):
        return True
    if text in ('false', '0', 'no', 'off'):
        return False
    if name:
        raise LaunchArgumentError('%s:=%s: expected true or false' % (name, value))
    raise LaunchArgumentError('expected true or false, got %r' % value)


#: The ``thread_priority`` launch argument's default (control.launch.py, sim.launch.py): the
#: SCHED_FIFO priority of the simulator, the commanding nodes and the observer. Below
#: controller_manager's update loop (its own default, 50) and below the rest of
#: controller_manager (:data:`MANAGER_ABOVE_NODES`), above everything on the normal
#: scheduler. Measured behind the real controller_manager with a busy core
#: (docs/ROS2_CONTROL.md): nodes at 50 over a controller_manager whose other threads ran on
#: the normal scheduler starved those threads (``/joint_states`` at 72 to 132 Hz instead of
#: 500); nodes at 40 under a controller_manager at 45 kept its 2 ms period and 474 Hz.
NODE_PRIORITY = 40
#: How far above the nodes' priority control.launch.py runs controller_manager's process
#: (its executor, the topic-based hardware's subscription, joint_state_broadcaster's
#: publisher thread; its update loop then sets its own ``thread_priority``).
MANAGER_ABOVE_NODES = 5
#: How far above the nodes' priority the launch files run the simulator: it stands for the
#: arm, which no node of the suite delays on a real robot. By hand with a busy core behind
#: the real controller_manager (docs/ROS2_CONTROL.md): with the simulator at the
#: nodes' priority, 2 of 2 launches had cobot7's wrist joints oscillate under JTC's hold
#: (up to 50 rad/s); 2 above, 0 of 5 launches (28 rounds of the endings test).
SIMULATOR_ABOVE_NODES = 2
#: sim.launch.py's ``hardware`` choices and the simulator_node ``engine`` each runs.
SIM_HARDWARE = {'simulator': 'suite', 'mujoco': 'mujoco'}
#: The ``mujoco_model`` launch argument of sim.launch.py and control.launch.py.
MUJOCO_MODEL_HELP = ('hardware:=mujoco: MJCF or URDF file of the arm and its scene '
                     '(manip-dynamics mujoco-arm writes one); empty = the description '
                     'compiled by MuJoCo')
#: The ``observer_stiction`` launch argument of sim.launch.py and control.launch.py.
OBSERVER_STICTION_HELP = ("external_torque_observer's stiction: true for an arm whose dry "
                          'friction sticks at rest (a physical arm: a breakaway from rest is '
                          'then no contact), false for one whose does not; empty = true '
                          'with MuJoCo as the arm (its frictionloss sticks) and on a real '
                          "driver, false on the suite's simulator and the mock")


def observer_stiction(value: str, hardware: str) -> bool:
    """
    Return the observer's ``stiction`` for the ``observer_stiction`` launch argument.

    :param value: The argument: true, false, or empty (:data:`OBSERVER_STICTION_HELP`).
    :param hardware: The launch's ``hardware`` argument.
    :raises LaunchArgumentError: Not true, false or empty.
    """
    if value.strip():
        return is_true(value, 'observer_stiction')
    return hardware not in ('simulator', 'topic_based', 'mock')


#: How far above the nodes' priority control.launch.py runs feedforward_filter: a goal's
#: acceptance waits for its goal callback (5 to 10 ms of work), which at the nodes' own
#: priority queued behind the compensation and the observer. By hand behind the real
#: controller_manager with a busy core (docs/ROS2_CONTROL.md), 15 goals each: the
#: callback took 10 to 133 ms of wall time at the nodes' priority, 8 to 25 ms one above.
#: Its steady load is light (a joint-state copy per sample), below the simulator.
FILTER_ABOVE_NODES = 1
#: How far above the nodes' priority (the observer's) control.launch.py runs
#: gravity_compensation_node: it holds the arm while JTC is inactive, and
#: ForwardCommandController applies its last command until a new one comes. By hand behind
#: the real controller_manager with a busy core (the host's load average 11 to 19), at the
#: observer's priority it sent 1 to 243 of the about 550 commands of the first 1.1 s after
#: a switch from JTC, and the arm, held by the torque of a pose it had left, fell (over 2.9
#: rad/s, up to 26) in 3 of 15 and in 2 of 14 switches; one above, the filter's level, 0 of
#: 8 (at most 1.3 rad/s; the 9th switch was not answered by controller_manager).
COMPENSATION_ABOVE_NODES = 1


def fifo_permitted(priority: int) -> bool:
    """
    Return whether this system lets a new process run at SCHED_FIFO ``priority``.

    Tried with ``chrt`` (util-linux) on ``true``: root, CAP_SYS_NICE or an rtprio limit of
    at least ``priority`` permit it; a container or a user session often does not.

    :param priority: 1 to 99.
    """
    import shutil
    import subprocess
    chrt = shutil.which('chrt')
    if chrt is None:
        return False
    try:
        return subprocess.run([chrt, '-f', str(priority), 'true'], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, timeout=10).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def manager_prefix(node_priority: int,
                   permitted: Callable[[int], bool] = fifo_permitted) -> tuple[str | None, str]:
    """
    Return the command prefix of controller_manager's process, and what it means.

    When the suite's nodes run at SCHED_FIFO, controller_manager's whole process runs
    :data:`MANAGER_ABOVE_NODES` above them (``chrt -f``): the nodes it feeds never outrank
    the threads that receive the hardware's state and publish ``/joint_states``. Its update
    loop sets its own priority (``thread_priority``, 50) on top of that.

    :param node_priority: The nodes' ``thread_priority`` (0: the normal scheduler).
    :param permitted: Whether a process may run at a SCHED_FIFO priority
        (:func:`fifo_permitted`).
    :return: ``(prefix, note)``: the prefix (None: none) and a line for the launch's log,
        a warning when the system refuses.
    """
    if node_priority <= 0:
        return None, 'controller_manager on the normal scheduler (thread_priority:=0)'
    priority = min(node_priority + MANAGER_ABOVE_NODES, 99)
    if not permitted(priority):
        return None, ('warning: this system refuses SCHED_FIFO priority %d (needs root, '
                      'CAP_SYS_NICE or an rtprio limit): controller_manager, apart from its '
                      'update loop, runs on the normal scheduler' % priority)
    return 'chrt -f %d' % priority, ('controller_manager at SCHED_FIFO %d, above the nodes '
                                     'at %d' % (priority, node_priority))


def loop_priority(value: str) -> dict[str, int]:
    """
    Read the ``thread_priority`` launch argument: the parameters of the nodes in the loop.

    The simulator, the commanding nodes and the observer get it (docs/ROS_API.md:
    SCHED_FIFO, as controller_manager's ``thread_priority``); 0 leaves them on the normal
    scheduler.

    :param value: The argument text, an integer from 0 to 99.
    :return: ``{'thread_priority': priority}``.
    :raises LaunchArgumentError: Not an integer from 0 to 99.
    """
    try:
        priority = int(value.strip())
    except ValueError:
        priority = -1
    if priority not in THREAD_PRIORITIES:
        raise LaunchArgumentError('thread_priority:=%s: expected an integer from 0 to 99 '
                                  '(SCHED_FIFO priority; 0: the normal scheduler)' % value)
    return {THREAD_PRIORITY: priority}


def priority_above(loop: dict[str, int], above: int) -> dict[str, int]:
    """
    Return a ``thread_priority`` parameter ``above`` the nodes' (:func:`loop_priority`).

    For the simulator (:data:`SIMULATOR_ABOVE_NODES`) and feedforward_filter
    (:data:`FILTER_ABOVE_NODES`) when the nodes run at SCHED_FIFO (at most 99, and below
    controller_manager's :data:`MANAGER_ABOVE_NODES`); 0 (the normal scheduler) stays 0.
    """
    priority = loop[THREAD_PRIORITY]
    return {THREAD_PRIORITY: min(priority + above, 99) if priority > 0 else 0}


def state_publisher_wanted(value: str) -> bool:
    """
    Read the ``robot_state_publisher`` launch argument: true, false or auto.

    ``auto`` (the default of the launch files) starts robot_state_publisher where it is
    installed; elsewhere the suite's description_publisher provides /robot_description (no
    TF), so the lines without RViz work on a machine without either.

    :param value: The argument text.
    :return: Whether to start robot_state_publisher.
    :raises LaunchArgumentError: Not true, false or auto.
    """
    if value.strip().lower() == 'auto':
        return executable_path('robot_state_publisher', 'robot_state_publisher') is not None
    try:
        return is_true(value, 'robot_state_publisher')
    except LaunchArgumentError:
        raise LaunchArgumentError('robot_state_publisher:=%s: expected true, false or auto'
                                  % value) from None
