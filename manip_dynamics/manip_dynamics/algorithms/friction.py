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
Joint friction: viscous plus Coulomb (Craig sec. 6.11).

``tau_f = b qd + f_c sgn_eps(qd)`` with ``b`` the URDF ``<dynamics damping>`` and ``f_c``
the URDF ``<dynamics friction>``.  ``sgn_eps(x) = tanh(x / eps)`` is a smooth sign: it
avoids the discontinuity at zero velocity that would make simulation chatter, at the price
of modelling no stiction (Craig: "when the velocity is zero the friction force can take any
value up to the static limit"; this model returns less than ``f_c`` for ``|qd| < 3 eps``).
"""

import numpy as np
from numpy.typing import NDArray


def friction_torques(qd: NDArray[np.float64], damping: NDArray[np.float64],
                     coulomb: NDArray[np.float64], velocity_eps: float) -> NDArray[np.float64]:
    """
    Return the friction torque that opposes joint motion.

    :param qd: Joint velocities [rad/s or m/s], shape (n,) or (N, n).
    :param damping: Viscous coefficients b [N m s/rad or N s/m], shape (n,).
    :param coulomb: Coulomb friction levels f_c [N m or N], shape (n,).
    :param velocity_eps: Width of the smooth sign [rad/s or m/s], > 0.
    :return: Friction torques, the shape of ``qd``; add them to the rigid-body torques in
        inverse dynamics, subtract them from the applied torques in forward dynamics.
    """
    return damping * qd + coulomb * np.tanh(qd / velocity_eps)
