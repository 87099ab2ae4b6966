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
sensor_msgs/JointState fields in a model's joint order, the names checked once per name list.

joint_states carry the same joint names message after message: :class:`JointStateReader`
runs the library's full check of names, lengths and values when the name list (or the
model) changes, and from then on only picks each field's values in model order and checks
that they are finite.
"""

from typing import Any

import numpy as np
from numpy.typing import NDArray

from manip_dynamics.errors import InputError
from manip_dynamics.robot_model import RobotModel
from manip_dynamics.ros.runtime.conversions import joint_state_arrays
from manip_dynamics.small_arrays import all_finite


class JointStateReader:
    """The fields of joint_states messages in a model's joint order."""

    def __init__(self) -> None:
        """Start with no name list learnt."""
        self._names: list[str] = []
        self._model: RobotModel | None = None
        self._index = np.zeros(0, dtype=np.int64)

    def learn(self, model: RobotModel, msg: Any) -> None:
        """
        Check a message's joint names (once per name list and model) and where each joint is.

        :raises InputError: Missing, unknown-only or duplicate joints, bad lengths, NaN/inf.
        """
        if model is self._model and msg.name == self._names:
            return
        joint_state_arrays(model, msg)  # the full check of names, lengths and values
        where = {name: i for i, name in enumerate(msg.name)}
        self._index = np.array([where[name] for name in model.joint_names], dtype=np.int64)
        self._names = list(msg.name)
        self._model = model

    def field(self, values: Any, what: str) -> NDArray[np.float64]:
        """
        Return one array field of the message (position, velocity, effort) in model order.

        Call :meth:`learn` with the message first.

        :raises InputError: Not one value per name, or NaN/inf for a model joint.
        """
        arr = np.asarray(values, dtype=np.float64)
        if arr.shape != (len(self._names),):
            raise InputError('joint_states %s has %d values for %d joint names' % (
                what, arr.size, len(self._names)))
        out = arr[self._index]
        if not all_finite(out):
            bad = int(np.argmax(~np.isfinite(out)))
            raise InputError('joint_states %s of joint %r is %r' % (
                what, self._names[self._index[bad]], float(out[bad])))
        return out
