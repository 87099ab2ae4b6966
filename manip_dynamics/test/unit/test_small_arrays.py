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


"""small_arrays answers as numpy's own reductions do, for every shape and NaN/inf."""

import numpy as np
import pytest

from manip_dynamics.small_arrays import all_finite, all_true, any_true, same_values


def _arrays():
    rng = np.random.default_rng(7)
    out = [np.zeros(0), np.zeros((0, 3)), np.array([np.nan]), np.array([np.inf, 1.0]),
           np.array([-np.inf]), np.zeros(7), np.ones((2, 3))]
    for shape in [(7,), (3, 4), (2, 2, 2)]:
        x = rng.normal(size=shape)
        out.append(x)
        for bad in (np.nan, np.inf, -np.inf):
            y = x.copy()
            y.flat[rng.integers(y.size)] = bad
            out.append(y)
    return out


@pytest.mark.parametrize('x', _arrays())
def test_answers_match_numpy(x):
    assert all_finite(x) == bool(np.isfinite(x).all())
    mask = x > 0.3
    assert any_true(mask) == bool(mask.any())
    assert all_true(mask) == bool(mask.all())
    assert type(any_true(mask)) is bool and type(all_true(mask)) is bool
    assert same_values(x, x.copy()) == bool(np.array_equal(x, x))  # False with a NaN
    if x.size:
        y = x.copy()
        y.flat[-1] = 2.0 * y.flat[-1] + 1.0
        assert same_values(x, y) == bool(np.array_equal(x, y))
    assert not same_values(x, x.reshape(-1, 1)) or x.ndim == 2 and x.shape[1] == 1
