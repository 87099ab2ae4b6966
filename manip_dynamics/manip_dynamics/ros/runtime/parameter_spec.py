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
Declare a node's parameters from its table (:mod:`manip_dynamics.ros.parameters`).

Each :class:`~manip_dynamics.ros.parameters.spec.Param` becomes one declared parameter whose
descriptor carries the text, the unit and valid values, a FloatingPointRange or
IntegerRange (``ros2 param describe`` shows them; an open bound is shown closed there and
checked open), the choices in ``additional_constraints``, and read-only unless the
parameter is tunable. Every value is checked by its Param, at start-up (a StartupError
naming the parameter, what it must be and the value) and, for a tunable one, on every
``ros2 param set`` (refused with the same message; the node's values change only when the
whole set is valid).
"""

from collections.abc import Callable
import math
import sys
from typing import Any

import numpy as np
from rcl_interfaces.msg import (
    FloatingPointRange, IntegerRange, ParameterDescriptor, SetParametersResult)
from rclpy.exceptions import (
    InvalidParameterTypeException, InvalidParameterValueException,
    ParameterUninitializedException)
from rclpy.node import Node
from rclpy.parameter import Parameter

from manip_dynamics.ros.parameters.spec import Param, ParameterValueError, spec_by_name
from manip_dynamics.ros.runtime.startup import StartupError
from manip_dynamics.safety.ranges import Range

#: The ROS type a parameter without a default is declared with.
_UNSET_TYPES = {'double_array': Parameter.Type.DOUBLE_ARRAY,
                'string_array': Parameter.Type.STRING_ARRAY}
#: The largest magnitude an IntegerRange can carry (int64).
_INT64 = 2 ** 63 - 1


class NodeParameters:
    """A node's parameter values by attribute (``values.timeout``); tunables follow sets."""

    def __init__(self, values: dict) -> None:
        self.__dict__.update(values)

    def as_dict(self) -> dict:
        """Return ``{name: value}``."""
        return dict(self.__dict__)


def descriptor(param: Param) -> ParameterDescriptor:
    """Return the ROS descriptor of ``param`` (module docstring)."""
    text = param.description
    valid = param.valid_text()
    if valid:
        text = '%s; valid: %s' % (text, valid)
    result = ParameterDescriptor(
        description=text + ('' if param.tunable else ' (read-only)'),
        read_only=not param.tunable, dynamic_typing=param.default is not None,
        additional_constraints=('one of: ' + ', '.join(param.choices)) if param.choices else '')
    bounds = param.valid
    if bounds is not None and param.kind == 'double':
        result.floating_point_range = [FloatingPointRange(
            from_value=max(bounds.low, -sys.float_info.max),
            to_value=min(bounds.high, sys.float_info.max), step=0.0)]
    elif bounds is not None and param.kind == 'integer':
        result.integer_range = [IntegerRange(
            from_value=int(bounds.low) if math.isfinite(bounds.low) else -_INT64,
            to_value=int(bounds.high) if math.isfinite(bounds.high) else _INT64, step=0)]
    return result


def _declare_one(node: Node, param: Param) -> Any:
    """Declare ``param`` on ``node``; return its checked value (None: an unset array)."""
    described = descriptor(param)
    try:
        if param.default is None:
            node.declare_parameter(param.name, _UNSET_TYPES[param.kind], described)
        else:
            node.declare_parameter(param.name, param.default, described)
    except InvalidParameterTypeException:
        raise StartupError('parameter %s must be %s' % (param.name, param.type_text())) \
            from None
    except InvalidParameterValueException:
        # outside the descriptor's range: declared without it, to name the value our way
        described.floating_point_range, described.integer_range = [], []
        node.declare_parameter(param.name, param.default, described)
    try:
        value = node.get_parameter(param.name).value
    except ParameterUninitializedException:
        return None
    try:
        return param.check(value)
    except ParameterValueError as error:
        raise StartupError(str(error)) from None


def declare_parameters(node: Node, parameters: tuple,
                       on_change: Callable[[str, Any], None] | None = None) -> NodeParameters:
    """
    Declare every parameter of a node's table and return their checked values.

    :param node: The node.
    :param parameters: The node's table of Param.
    :param on_change: Called as ``on_change(name, value)`` when a tunable parameter is set
        (values already updated); a ValueError it raises refuses the set with its message
        and restores the values. None = the node reads its values where it uses them.
    :return: The values; a tunable parameter's value follows ``ros2 param set``.
    :raises StartupError: A value its Param does not allow (the message names it).
    """
    table = spec_by_name(parameters)
    values = NodeParameters({param.name: _declare_one(node, param) for param in parameters})

    def check_set(changes: list) -> SetParametersResult:
        checked = {}
        for change in changes:
            param = table.get(change.name)
            if param is None or not param.tunable:
                continue   # not ours, or read-only (rclpy refuses those itself)
            try:
                checked[param.name] = param.check(change.value)
            except ParameterValueError as error:
                return SetParametersResult(successful=False, reason=str(error))
        before = {name: getattr(values, name) for name in checked}
        for name, value in checked.items():
            setattr(values, name, value)
        try:
            for name, value in checked.items():
                if on_change is not None:
                    on_change(name, value)
        except ValueError as error:   # the node cannot use it (e.g. a list of a wrong length)
            for name, value in before.items():
                setattr(values, name, value)
            return SetParametersResult(successful=False, reason=str(error))
        return SetParametersResult(successful=True)
    if any(param.tunable for param in parameters):
        node.add_on_set_parameters_callback(check_set)
    return values


# ---------------------------------------------------------------------- one at a time
# For the nodes not yet given a table: the same Param, check and descriptor, one call each.
def per_joint_values(values: list[float], default: float, model: Any,
                     what: str) -> np.ndarray:
    """
    Return a per-joint parameter's values, or ``default`` for every joint when it is unset.

    :param values: The parameter's list (one per joint, model order), [] when unset.
    :param model: The robot model (its ``dof`` and ``joint_names``).
    :param what: The parameter's name, for the message.
    :raises StartupError: A list that is not one value per joint.
    """
    if not values:
        return np.full(model.dof, float(default))
    if len(values) != model.dof:
        raise StartupError('parameter %s has %d values but the model has %d joints %s' % (
            what, len(values), model.dof, list(model.joint_names)))
    return np.array(values, dtype=np.float64)


def param_string(node: Node, name: str, default: str, description: str) -> str:
    """Declare a read-only string parameter and return its value (StartupError if not one)."""
    return _declare_one(node, Param(name, 'string', default, description))


def param_choice(node: Node, name: str, default: str, description: str,
                 choices: tuple[str, ...]) -> str:
    """Declare a read-only string parameter that takes one of ``choices``; return it."""
    return _declare_one(node, Param(name, 'string', default, description, choices=tuple(choices)))


def param_bool(node: Node, name: str, default: bool, description: str) -> bool:
    """Declare a read-only boolean parameter and return its value."""
    return _declare_one(node, Param(name, 'bool', default, description))


def param_float(node: Node, name: str, default: float, description: str, *,
                low: float = -math.inf, high: float = math.inf,
                low_open: bool = False) -> float:
    """
    Declare a read-only number parameter (integers accepted) and return it as a float.

    :param low: Smallest allowed value.
    :param high: Largest allowed value.
    :param low_open: Exclude ``low`` itself.
    :raises StartupError: Not a finite number, or out of range.
    """
    bounded = math.isfinite(low) or math.isfinite(high)
    return _declare_one(node, Param(name, 'double', float(default), description,
                                    valid=Range(low, high, low_open) if bounded else None))


def param_range(node: Node, name: str, default: float, description: str,
                valid: Range) -> float:
    """Declare a read-only number parameter valid in ``valid`` and return it."""
    return _declare_one(node, Param(name, 'double', float(default), description, valid=valid))


def param_float_list(node: Node, name: str, description: str) -> list[float]:
    """Declare a read-only optional array of finite numbers; return it (empty when unset)."""
    return _declare_one(node, Param(name, 'double_array', None, description)) or []


def param_floats(node: Node, name: str, default: list[float], description: str,
                 length: int) -> list[float]:
    """Declare a read-only array of ``length`` finite numbers and return it."""
    return _declare_one(node, Param(name, 'double_array', [float(v) for v in default],
                                    description, length=length))


def param_strings(node: Node, name: str, description: str) -> list[str]:
    """Declare a read-only string array whose default is empty; return it (empty: unset)."""
    return _declare_one(node, Param(name, 'string_array', None, description)) or []
