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
Small states for the precompile steps that each kernel module declares (PRECOMPILE_STEPS).

A module that declares numba kernels also declares how to reach them through the public
API: ``PRECOMPILE_STEPS = [(label, step(model)), ...]``. :mod:`manip_dynamics.precompile`
collects those lists from every kernel module, so a new kernel needs no edit there. The
argument types, not the robot, select the compiled signature: any model serves.
"""

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]


def state(model, k: int = 0) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Return one state ``(q, qd, qdd)`` of ``model``, shape (n,) each."""
    n = model.dof
    q = np.linspace(0.1, 0.4, n) + 0.01 * k
    return q, np.full(n, 0.2), np.full(n, 0.3)


def batch(model, count: int = 3) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Return ``count`` copies of :func:`state`, shape (count, n) each."""
    q, qd, qdd = state(model)
    return (np.tile(q, (count, 1)), np.tile(qd, (count, 1)), np.tile(qdd, (count, 1)))


def tip(model) -> str:
    """Return the model's tip link, or its last link."""
    return model.tip_link or model.link_names[-1]
