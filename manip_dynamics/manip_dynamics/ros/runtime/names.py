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
Names of the topics, services and actions the nodes share with other nodes (no ROS here).

Every shared name is relative, as in ros2_control and MoveIt: ``joint_states``,
``robot_description``, ``effort_controller/commands``. A node started in the namespace
``/arm1`` (``ros2 launch ... namespace:=arm1``, or ``--ros-args -r __ns:=/arm1``) then reads
``/arm1/joint_states`` and commands ``/arm1/effort_controller/commands``: one namespace moves
a whole arm's graph, and two arms run side by side. In the root namespace the names are the
ones they always were (``/joint_states``). A name given with a leading ``/`` stays absolute.
``/clock`` is the one absolute name (ROS time is one per graph).
"""

from manip_dynamics.ros.parameters.shared import JOINT_STATES_TOPIC

#: The joint states of the arm (sensor_msgs/JointState), as joint_state_broadcaster names them:
#: the default of every node's ``joint_states_topic``.
JOINT_STATES: str = JOINT_STATES_TOPIC.default

#: The URDF (std_msgs/String, transient local), as robot_state_publisher names it.
ROBOT_DESCRIPTION = 'robot_description'


def child_name(base: str, leaf: str) -> str:
    """
    Return ``<base>/<leaf>``: a name under a node's or controller's name.

    :param base: E.g. ``'effort_controller'`` (relative: under the caller's namespace) or
        ``'/arm1/effort_controller'`` (absolute); slashes at its end are dropped.
    :param leaf: E.g. ``'commands'``.
    :return: E.g. ``'effort_controller/commands'``.
    :raises ValueError: ``base`` is empty or only slashes.
    """
    stripped = base.strip('/')
    if not stripped:
        raise ValueError('an empty name cannot hold %r' % leaf)
    return ('/' if base.startswith('/') else '') + stripped + '/' + leaf


def namespaced_name(namespace: str, name: str) -> str:
    """
    Return the absolute name a relative ``name`` has in ``namespace``.

    For a name a node outside that namespace must reach, e.g. the topics a hardware plugin
    inside controller_manager publishes (its parameters are not resolved in the launch's
    namespace by every ros2_control version).

    :param namespace: E.g. ``'arm1'`` or ``'/arm1/'``; ``''`` is the root namespace.
    :param name: E.g. ``'sim/joint_states'`` (leading and trailing slashes are dropped).
    :return: E.g. ``'/arm1/sim/joint_states'`` (``'/sim/joint_states'`` in the root one).
    :raises ValueError: ``name`` is empty or only slashes.
    """
    leaf = name.strip('/')
    if not leaf:
        raise ValueError('an empty name has no place in namespace %r' % namespace)
    return '/' + '/'.join(part for part in (namespace.strip('/'), leaf) if part)
