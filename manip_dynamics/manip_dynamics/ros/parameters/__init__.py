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
Each node's parameters, one typed table per node (:class:`~.spec.Param`).

The tables are the one declaration of every parameter: the node declares from its table
(:func:`manip_dynamics.ros.runtime.parameter_spec.declare_parameters`), docs/ROS_API.md's
parameter tables are generated from them (``python -m manip_dynamics.ros.parameters
docs/ROS_API.md``; test_parameter_tables fails when they differ), the config files' keys
are checked against them, and launch files take their defaults from them. Shared names
live once, in :mod:`.shared`.
"""

from importlib import import_module

#: The nodes with a table: executable name -> module of this folder.
TABLES = ('gravity_compensation_node', 'external_torque_observer', 'feedforward_filter',
          'trajectory_controller', 'simulator_node', 'dynamics_node', 'viewer_node')


def node_parameters(node: str) -> tuple:
    """Return the table of ``node`` (an executable name of :data:`TABLES`)."""
    if node not in TABLES:
        raise ValueError('no parameter table for %r; tables: %s' % (node, ', '.join(TABLES)))
    return import_module('%s.%s' % (__name__, node)).PARAMETERS


def default(node: str, name: str):
    """Return the default of parameter ``name`` of ``node`` (for launch files and the demo)."""
    for param in node_parameters(node):
        if param.name == name:
            return param.default
    raise ValueError('%s declares no parameter %r' % (node, name))


def docs_block_markers(node: str) -> tuple[str, str]:
    """Return the begin and end markers of ``node``'s table in docs/ROS_API.md."""
    return '<!-- parameters:%s:begin -->' % node, '<!-- parameters:%s:end -->' % node
