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
Joint limits for retiming: from the URDF, from arguments, from a MoveIt joint_limits.yaml.

A URDF has velocity and effort limits but no acceleration field; MoveIt keeps acceleration
limits in ``config/joint_limits.yaml``::

    joint_limits:
      panda_joint1:
        has_velocity_limits: true
        max_velocity: 2.175
        has_acceleration_limits: true
        max_acceleration: 3.75

Every limit is one positive value per joint in model order (``inf``: unlimited).
"""

from collections.abc import Mapping, Sequence
import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

FloatArray = NDArray[np.float64]

#: What a limit argument may be: one number for every joint, one per joint in model order,
#: or a mapping joint name -> value (joints left out keep the default).
LimitSpec = float | ArrayLike | Mapping[str, float] | None


def limit_vector(spec: LimitSpec, names: Sequence[str], default: FloatArray | None,
                 what: str) -> FloatArray:
    """
    Return a limit per joint in model order.

    :param spec: None (use ``default``), a number, a sequence of ``len(names)`` numbers or a
        mapping joint name -> number.
    :param names: The model's joint names (model order).
    :param default: Values for joints not given (None: every joint must be given).
    :param what: Name of the limit, for messages (e.g. ``'acceleration_limits'``).
    :return: Positive values, ``inf`` for unlimited, shape (n,).
    :raises ValueError: A missing, unknown, non-positive or NaN entry, named.
    """
    n = len(names)
    if spec is None:
        if default is None:
            raise ValueError('%s: none given' % what)
        out = np.array(default, dtype=np.float64)
    elif isinstance(spec, Mapping):
        out = (np.array(default, dtype=np.float64) if default is not None
               else np.full(n, np.nan))
        for name, value in spec.items():
            if name not in names:
                raise ValueError('%s names an unknown joint %r (joints: %s)'
                                 % (what, name, ', '.join(names)))
            out[list(names).index(name)] = _number(value, '%s[%r]' % (what, name))
    else:
        try:
            arr = np.asarray(spec, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError('%s must be numbers, got %r' % (what, spec)) from None
        if arr.ndim == 0:
            arr = np.full(n, float(arr))
        if arr.shape != (n,):
            raise ValueError('%s has %d values for %d joints' % (what, arr.size, n))
        out = arr.copy()
    missing = [names[i] for i in np.flatnonzero(np.isnan(out))]
    if missing:
        raise ValueError('%s: no value for %s' % (what, ', '.join(missing)))
    bad = [names[i] for i in np.flatnonzero(~(out > 0.0))]
    if bad:
        raise ValueError('%s must be > 0 (inf: unlimited); not for %s' % (what, ', '.join(bad)))
    return out


def _number(value: object, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError('%s must be a number, got %r' % (what, value))
    return float(value)


def read_joint_limits_yaml(path_or_text: str, names: Sequence[str]) -> dict[str, dict]:
    """
    Read MoveIt's ``joint_limits.yaml``: the velocity and acceleration limits it enables.

    :param path_or_text: A file path, or the YAML text itself (when it contains a newline).
    :param names: The model's joint names; joints of the file not in the model are ignored
        (a MoveIt config often lists a gripper's joints too).
    :return: ``{'velocity': {name: value}, 'acceleration': {name: value}}`` for the joints
        whose ``has_*_limits`` is true.
    :raises ValueError: Unreadable YAML, no ``joint_limits`` mapping, or an enabled limit
        that is not a positive number.
    """
    import yaml

    if '\n' in path_or_text:
        text = path_or_text
    else:
        try:
            with open(path_or_text, encoding='utf-8') as stream:
                text = stream.read()
        except OSError as error:
            raise ValueError('cannot read joint limits %s: %s' % (path_or_text, error)) from None
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise ValueError('joint limits: not YAML: %s' % error) from None
    table = doc.get('joint_limits') if isinstance(doc, Mapping) else None
    if not isinstance(table, Mapping):
        raise ValueError('joint limits: no joint_limits mapping (MoveIt joint_limits.yaml)')
    out: dict[str, dict] = {'velocity': {}, 'acceleration': {}}
    for name, entry in table.items():
        if name not in names or not isinstance(entry, Mapping):
            continue
        for kind in ('velocity', 'acceleration'):
            if entry.get('has_%s_limits' % kind):
                value = _number(entry.get('max_%s' % kind), '%s max_%s' % (name, kind))
                if not (value > 0.0 and math.isfinite(value)):
                    raise ValueError('joint limits: %s max_%s must be > 0, got %s'
                                     % (name, kind, value))
                out[kind][name] = value
    return out
