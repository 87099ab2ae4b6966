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
Conversion of user input to float64 arrays, with the checks every entry point shares.

Rejected with an :class:`~manip_dynamics.errors.InputError` naming the argument: complex
numbers (numpy would drop the imaginary part with only a ComplexWarning), ``np.matrix``
(always 2-D, so a "vector" would silently become a batch of one state) and anything that
is not numbers.
"""

import numpy as np
from numpy.typing import ArrayLike, NDArray

from manip_dynamics.errors import InputError


def float_array(value: ArrayLike, what: str) -> NDArray[np.float64]:
    """
    Return ``value`` as a C-contiguous float64 array (any shape) or raise InputError.

    :param value: Numbers: an array, a sequence or a scalar.
    :param what: Name of the argument for the error message, e.g. ``'q'``.
    :raises InputError: Complex values, ``np.matrix``, or not numbers.
    """
    if isinstance(value, np.matrix):
        raise InputError('%s is an np.matrix, which is always 2-D; pass a 1-D array, e.g. '
                         'np.asarray(%s).ravel(), or an (N, n) array for a batch' % (what, what))
    try:
        arr = np.asarray(value)
        if arr.dtype.kind == 'c' or (arr.dtype == object and any(
                isinstance(x, complex) for x in arr.reshape(-1))):
            raise InputError('%s has complex values; joint quantities are real numbers'
                             % what)
        return np.ascontiguousarray(arr, dtype=np.float64)
    except (TypeError, ValueError, OverflowError) as error:
        if isinstance(error, InputError):
            raise
        raise InputError('%s must be an array of numbers, got %r' % (what, value)) from None
