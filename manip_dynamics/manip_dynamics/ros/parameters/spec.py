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
One node parameter, typed: name, type, default, valid values, unit, text, tunable or not.

Each node's parameters are one table of :class:`Param` (a module of this folder per node,
as generate_parameter_library's YAML is per controller in ros2_controllers). From the table
come the ROS descriptors with their ranges (:mod:`manip_dynamics.ros.runtime.
parameter_spec`), the checks with one message format (:meth:`Param.check`), and the
parameter tables of docs/ROS_API.md (:func:`markdown_table`). No rclpy here: launch files
and the docs read defaults from the tables.
"""

from collections.abc import Sequence
from dataclasses import dataclass
import math
from typing import Any

from manip_dynamics.safety.ranges import Range

#: The parameter types (ROS 2 parameter types, by their YAML names).
KINDS = ('string', 'bool', 'double', 'integer', 'double_array', 'string_array')
#: Array kinds whose default may be None: unset until given.
ARRAY_KINDS = ('double_array', 'string_array')


class ParameterValueError(ValueError):
    """A parameter value that its :class:`Param` does not allow (the message names both)."""


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


@dataclass(frozen=True)
class Param:
    """One parameter of one node (module docstring)."""

    name: str
    kind: str
    default: Any
    description: str
    unit: str = ''
    #: Valid interval of a number, or of each element of a double array.
    valid: Range | None = None
    #: The strings a string parameter may take.
    choices: tuple[str, ...] = ()
    #: The length a double array must have (None: any, when set).
    length: int | None = None
    #: Safe to change on a running node with ``ros2 param set`` (checked the same way).
    tunable: bool = False

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError('parameter %s: kind must be one of %s, got %r'
                             % (self.name, ', '.join(KINDS), self.kind))
        if self.default is not None or self.kind not in ARRAY_KINDS:
            self.check(self.default)   # a table's default is valid, or the import fails

    # ------------------------------------------------------------------ checks
    def _fail(self, wanted: str, value: Any) -> ParameterValueError:
        return ParameterValueError('parameter %s must be %s, got %r' % (self.name, wanted,
                                                                        value))

    def valid_text(self) -> str:
        """Return the valid values as the docs and the descriptor show them ('' = any)."""
        unit = ' ' + self.unit if self.unit else ''
        if self.choices:
            return 'one of ' + ', '.join(self.choices)
        if self.valid is not None:
            text = self.valid.text()
            text = text.replace('inf]', 'inf)').replace('[-inf', '(-inf')
            return ('each in ' if self.kind == 'double_array' else '') + text + unit
        return unit.strip()

    def check(self, value: Any) -> Any:
        """
        Return ``value`` in this parameter's Python type when it is valid.

        Integers are accepted for doubles (YAML's ``1`` for ``1.0``); bool is not a number.

        :raises ParameterValueError: The wrong type, NaN/inf, out of range, not a choice,
            the wrong length; the message names the parameter, what it must be and the value.
        """
        kind = self.kind
        if kind == 'string':
            if not isinstance(value, str):
                raise self._fail('a string', value)
            if self.choices and value not in self.choices:
                raise self._fail('one of ' + ', '.join(self.choices), value)
            return value
        if kind == 'bool':
            if not isinstance(value, bool):
                raise self._fail('true or false', value)
            return value
        if kind == 'integer':
            if not isinstance(value, int) or isinstance(value, bool):
                raise self._fail('an integer', value)
            if self.valid is not None and not self.valid.contains(value):
                raise self._fail('an integer in ' + self.valid.text(), value)
            return value
        if kind == 'double':
            if not _number(value) or not math.isfinite(value):
                raise self._fail('a finite number', value)
            if self.valid is not None and not self.valid.contains(float(value)):
                raise self._fail('in ' + self.valid.text(), value)
            return float(value)
        # rclpy gives arrays as array.array or lists
        values = list(value) if isinstance(value, Sequence) and \
            not isinstance(value, (str, bytes)) else None
        if kind == 'string_array':
            if values is None or not all(isinstance(v, str) for v in values):
                raise self._fail('a list of strings', value)
            return values
        wanted = '%s finite numbers' % (self.length if self.length is not None else 'a list of')
        if values is None or not all(_number(v) and math.isfinite(v) for v in values):
            raise self._fail(wanted, value)
        if self.length is not None and len(values) != self.length:
            raise self._fail(wanted, value)
        if self.valid is not None and not all(self.valid.contains(float(v)) for v in values):
            raise self._fail('numbers each in ' + self.valid.text(), value)
        return [float(v) for v in values]

    # ------------------------------------------------------------------ docs
    def default_text(self) -> str:
        """Return the default as the docs show it."""
        if self.default is None:
            return 'unset'
        if self.kind == 'bool':
            return 'true' if self.default else 'false'
        if self.kind == 'string':
            return self.default or "''"
        if self.kind == 'double':
            return repr(float(self.default))
        if self.kind == 'double_array':
            return '[%s]' % ', '.join(repr(float(v)) for v in self.default)
        if self.kind == 'string_array':
            return '[%s]' % ', '.join(self.default)
        return str(self.default)

    def type_text(self) -> str:
        """Return the type as the docs show it (``double[3]``, ``string[]``)."""
        if self.kind in ARRAY_KINDS:
            return '%s[%s]' % (self.kind.split('_')[0],
                               '' if self.length is None else self.length)
        return self.kind


def markdown_table(parameters: tuple) -> str:
    """
    Return a node's parameter table for docs/ROS_API.md (generated: never edited by hand).

    :param parameters: The node's table of :class:`Param`.
    :return: A Markdown table: name, type, default, valid values, set at run time, text.
    """
    lines = ['| name | type | default | valid (unit) | run time | description |',
             '| --- | --- | --- | --- | --- | --- |']
    for param in parameters:
        lines.append('| `%s` | %s | `%s` | %s | %s | %s |' % (
            param.name, param.type_text(), param.default_text(),
            param.valid_text().replace('|', '\\|'), 'tunable' if param.tunable else 'read-only',
            param.description.replace('|', '\\|')))
    return '\n'.join(lines)


def spec_by_name(parameters: tuple) -> dict:
    """
    Return ``{name: Param}`` of a node's table.

    :raises ValueError: A name twice in the table.
    """
    names: dict = {}
    for param in parameters:
        if param.name in names:
            raise ValueError('parameter %s is declared twice' % param.name)
        names[param.name] = param
    return names
