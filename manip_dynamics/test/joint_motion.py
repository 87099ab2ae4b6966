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

"""Joint-space motion for the tests: sinusoids through a model's joint ranges."""

import numpy as np


def moving_data(model, seconds: float = 6.0, rate: float = 250.0):
    """Sinusoids through the joint ranges: (q, qd, qdd), each (N, n)."""
    t = np.arange(0.0, seconds, 1.0 / rate)
    rng = np.random.default_rng(7)
    mid = 0.5 * (model.position_lower + model.position_upper)
    amp = 0.4 * 0.5 * (model.position_upper - model.position_lower)
    w = rng.uniform(0.5, 1.5, model.dof)
    phase = rng.uniform(0.0, 6.0, model.dof)
    arg = np.outer(t, w) + phase
    return mid + amp * np.sin(arg), amp * w * np.cos(arg), -amp * w * w * np.sin(arg)
