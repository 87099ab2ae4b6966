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
The nodes' parameter tables: the docs generated from them, the config files, one default.

The tables (manip_dynamics/ros/parameters/) are the one declaration of every parameter; the
docs' tables must be what the generator writes, every key of a node's config file must be
declared with a value its table allows, and a name shared by tables has one declaration.
"""

import math
import os

import pytest
import yaml

from manip_dynamics.ros.parameters import (
    default, docs_block_markers, node_parameters, TABLES)
from manip_dynamics.ros.parameters.spec import markdown_table, Param, ParameterValueError
from manip_dynamics.safety.ranges import Range

PACKAGE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOCS = os.path.join(os.path.dirname(PACKAGE), 'docs', 'ROS_API.md')
#: The config file of each node with a table, and the node's section in it.
CONFIGS = {'gravity_compensation_node': ('gravity_compensation.yaml', '/**'),
           'external_torque_observer': ('external_torque_observer.yaml', '/**'),
           'trajectory_controller': ('trajectory_controller.yaml', '/**'),
           'simulator_node': ('simulator.yaml', '/**'),
           'dynamics_node': ('dynamics_node.yaml', '/**')}


def flat(mapping: dict, prefix: str = '') -> dict:
    """Return a nested ROS parameter mapping as ``{dotted.name: value}``."""
    out = {}
    for key, value in mapping.items():
        if isinstance(value, dict):
            out.update(flat(value, prefix + key + '.'))
        else:
            out[prefix + key] = value
    return out


@pytest.mark.parametrize('node', TABLES)
def test_the_docs_table_is_the_generated_one(node):
    with open(DOCS, encoding='utf-8') as stream:
        text = stream.read()
    begin, end = docs_block_markers(node)
    assert begin in text and end in text, 'docs/ROS_API.md has no block for %s' % node
    block = text.split(begin, 1)[1].split(end, 1)[0].strip('\n')
    assert block == markdown_table(node_parameters(node)), (
        'docs/ROS_API.md is out of date for %s: run python -m manip_dynamics.ros.parameters '
        'docs/ROS_API.md' % node)


@pytest.mark.parametrize('node', sorted(CONFIGS))
def test_every_config_key_is_declared_with_a_valid_value(node):
    path, section = CONFIGS[node]
    with open(os.path.join(PACKAGE, 'config', path), encoding='utf-8') as stream:
        document = yaml.safe_load(stream)
    table = {param.name: param for param in node_parameters(node)}
    for name, value in flat(document[section]['ros__parameters']).items():
        assert name in table, '%s sets %s, which %s does not declare' % (path, name, node)
        table[name].check(value)


def test_a_name_shared_by_tables_has_one_declaration():
    seen: dict = {}
    for node in TABLES:
        names = [param.name for param in node_parameters(node)]
        assert len(names) == len(set(names)), '%s declares a name twice' % node
        for param in node_parameters(node):
            other = seen.setdefault(param.name, (node, param))
            assert other[1] == param, '%s: %s and %s declare it differently' % (
                param.name, other[0], node)


def test_every_configurable_node_has_a_config_check():
    assert set(CONFIGS) <= set(TABLES)


def test_checks_name_the_parameter_the_rule_and_the_value():
    scale = Param('scale', 'double', 0.5, 'a scale', valid=Range(0.0, 1.0, low_open=True))
    assert scale.check(1) == 1.0 and isinstance(scale.check(1), float)   # YAML's 1 for 1.0
    for bad, rule in ((0.0, 'in (0, 1]'), (1.5, 'in (0, 1]'), (math.nan, 'a finite number'),
                      (True, 'a finite number'), ('0.5', 'a finite number')):
        with pytest.raises(ParameterValueError) as error:
            scale.check(bad)
        assert str(error.value) == 'parameter scale must be %s, got %r' % (rule, bad)
    mode = Param('mode', 'string', 'hold', 'a mode', choices=('hold', 'zero'))
    with pytest.raises(ParameterValueError, match="one of hold, zero, got 'fall'"):
        mode.check('fall')
    com = Param('com', 'double_array', [0.0, 0.0, 0.0], 'a point', length=3)
    with pytest.raises(ParameterValueError, match='3 finite numbers'):
        com.check([0.0, 1.0])
    with pytest.raises(ParameterValueError, match='3 finite numbers'):
        com.check([0.0, math.inf, 1.0])
    count = Param('count', 'integer', 5, 'a count', valid=Range(1, 10))
    with pytest.raises(ParameterValueError, match='an integer in'):
        count.check(0)
    with pytest.raises(ParameterValueError, match='an integer'):
        count.check(2.5)


def test_a_table_with_an_invalid_default_does_not_import():
    with pytest.raises(ParameterValueError, match='parameter rate must be in'):
        Param('rate', 'double', 0.0, 'a rate', valid=Range(0.0, 10.0, low_open=True))


def test_launch_files_read_defaults_from_the_tables():
    assert default('gravity_compensation_node', 'controller_name') == 'effort_controller'
    with pytest.raises(ValueError, match='declares no parameter'):
        default('gravity_compensation_node', 'no_such_parameter')
