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


"""The shared names are relative: a namespace moves them; a leading / keeps them absolute."""

import pytest

from manip_dynamics.ros.parameters import shared
from manip_dynamics.ros.parameters.external_torque_observer import PARAMETERS as OBSERVER
from manip_dynamics.ros.parameters.simulator_node import PARAMETERS as SIMULATOR
from manip_dynamics.ros.runtime.names import (
    child_name, JOINT_STATES, namespaced_name, ROBOT_DESCRIPTION)


def test_child_names_keep_their_base_relative_or_absolute():
    assert child_name('effort_controller', 'commands') == 'effort_controller/commands'
    assert child_name('effort_controller/', 'commands') == 'effort_controller/commands'
    assert child_name('/arm1/effort_controller', 'commands') == '/arm1/effort_controller/commands'
    for empty in ('', '/', '//'):
        with pytest.raises(ValueError, match='empty name'):
            child_name(empty, 'commands')


def test_a_relative_name_made_absolute_in_a_namespace():
    assert namespaced_name('arm1', 'sim/joint_states') == '/arm1/sim/joint_states'
    assert namespaced_name('/arm1/', '/sim/joint_states/') == '/arm1/sim/joint_states'
    assert namespaced_name('a/b', 'joint_states') == '/a/b/joint_states'
    assert namespaced_name('', 'sim/joint_states') == '/sim/joint_states'
    with pytest.raises(ValueError, match='empty name'):
        namespaced_name('arm1', '/')


def test_no_shared_name_is_absolute():
    """Every topic default a node shares is relative (in the node's namespace)."""
    assert not JOINT_STATES.startswith('/') and not ROBOT_DESCRIPTION.startswith('/')
    defaults = {p.name: p.default for p in (*OBSERVER, *SIMULATOR, shared.JOINT_STATES_TOPIC,
                                            shared.OBSERVER_NAMESPACE)}
    topics = {name: value for name, value in defaults.items()
              if name.endswith(('_topic', '_namespace'))}
    assert {'joint_states_topic', 'commands_topic', 'joint_commands_topic',
            'observer_namespace'} <= set(topics)
    assert not [name for name, value in topics.items() if str(value).startswith('/')], topics
