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
``~/estimate_payload`` of dynamics_node: a window of joint_states and the request handler.

The node keeps the joint_states it receives (model order) for a bounded time; a request
takes the last ``window_seconds`` and calls
:func:`manip_dynamics.identification.payload.estimate_payload` against the node's model
without a payload on that link.  With ``apply`` the estimate replaces that link's payload
(the node then re-applies it to every new model, like ``~/set_payload``).  To give it to
gravity_compensation_node too, call that node's ``~/set_payload`` with the returned
numbers (docs/IDENTIFICATION.md).
"""

from collections import deque
import time
from typing import Any

import numpy as np

from manip_dynamics.errors import InputError
from manip_dynamics.identification.payload import estimate_payload
from manip_dynamics.robot_model import RobotModel

#: Velocity below which the window counts as static [rad/s or m/s].
STATIC_VELOCITY = 0.01


#: Most samples a window keeps, whatever the stamps say (60 s at 1 kHz, about 30 MB for a
#: 7-joint arm): a driver that does not stamp would otherwise grow the window for ever.
MAX_SAMPLES = 60000


class JointStateWindow:
    """The last ``max_seconds`` of joint_states: time [s], q, qd, effort (model order)."""

    def __init__(self, max_seconds: float = 60.0, max_samples: int = MAX_SAMPLES) -> None:
        """
        Keep at most ``max_seconds`` of samples and at most ``max_samples`` of them.

        :param max_seconds: Oldest sample kept, by stamp, before the newest [s].
        :param max_samples: Most samples kept (the oldest go first), whatever the stamps.
        """
        self.max_seconds = float(max_seconds)
        self._items: deque = deque(maxlen=int(max_samples))

    def __len__(self) -> int:
        """Return the number of samples kept."""
        return len(self._items)

    def add(self, t: float, q: np.ndarray, qd: np.ndarray | None,
            effort: np.ndarray | None) -> None:
        """Store one sample; samples without efforts are not useful and are skipped."""
        if effort is None:
            return
        self._items.append((t, q, qd, effort))
        while self._items and t - self._items[0][0] > self.max_seconds:
            self._items.popleft()

    def add_message(self, model: RobotModel, msg: Any, q: np.ndarray,
                    qd: np.ndarray | None) -> None:
        """
        Store a joint_states message already converted to ``q``, ``qd`` (model order).

        Its efforts are reordered here; a message without efforts for every joint is
        skipped.  Time: the header stamp (the receive time when the stamp is zero).
        """
        if len(msg.effort) != len(msg.name) or not len(msg.name):
            return
        try:
            effort = model.to_model_order(msg.name, msg.effort, what='effort',
                                          allow_extra=True)
        except ValueError:
            return
        t = msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec
        if t <= 0.0:
            t = time.monotonic()
        if self._items and t < self._items[-1][0]:
            self._items.clear()     # time went back (simulation reset): start again
        self.add(t, q, qd, effort)

    def clear(self) -> None:
        """Forget every sample (a new model may have other joints)."""
        self._items.clear()

    def last(self, seconds: float) -> list[tuple]:
        """Return the samples of the last ``seconds`` before the newest one."""
        if not self._items:
            return []
        newest = self._items[-1][0]
        return [item for item in self._items if newest - item[0] <= seconds]


def handle_estimate_payload(model: RobotModel, window: JointStateWindow,
                            payloads: dict, request: Any, response: Any) -> None:
    """
    Fill an EstimatePayload response; raise ValueError on bad input or poor data.

    :param model: The node's current model.
    :param window: The received joint_states.
    :param payloads: The node's payload record (updated when ``apply``).
    :param request: ``link``, ``window_seconds``, ``apply``.
    :param response: Filled in place (success is set by the caller).
    """
    if not request.link:
        raise InputError('link is empty; name a link of %s' % list(model.link_names))
    if not request.window_seconds > 0.0:
        raise InputError('window_seconds must be > 0, got %r' % request.window_seconds)
    items = window.last(request.window_seconds)
    if len(items) < 3:
        raise InputError('only %d joint_states with efforts in the last %g s' % (
            len(items), request.window_seconds))
    t = np.array([i[0] for i in items])
    q = np.array([i[1] for i in items])
    tau = np.array([i[3] for i in items])
    have_qd = all(i[2] is not None for i in items)
    qd = np.array([i[2] for i in items]) if have_qd else np.gradient(q, t, axis=0)
    bare = model.with_joint_dynamics()     # a copy with the same payloads
    bare.remove_payload(request.link)
    static = float(np.max(np.abs(qd))) < STATIC_VELOCITY
    if static:
        est = estimate_payload(bare, request.link, q, tau)
    else:
        qdd = np.gradient(qd, t, axis=0)
        est = estimate_payload(bare, request.link, q, tau, qd=qd, qdd=qdd)
    response.mass = float(est.mass)
    response.center_of_mass.x, response.center_of_mass.y, response.center_of_mass.z = (
        float(v) for v in est.com)
    (response.ixx, response.ixy, response.ixz, response.iyy, response.iyz,
     response.izz) = (float(v) for v in est.inertia)
    response.samples = int(est.samples)
    response.inertia_estimated = bool(est.with_inertia)
    response.residual_rms = [float(v) for v in est.residual_rms]
    text = '%.4g kg at (%.4g, %.4g, %.4g) m on %r from %d samples (%s)' % (
        est.mass, *est.com, request.link, est.samples,
        'static: mass and centre of mass' if static else
        'with motion: inertia too' if est.with_inertia else 'with motion; %s' % est.note)
    if request.apply:
        model.set_payload(request.link, est.mass, est.com, est.inertia)
        payloads[request.link] = (float(est.mass), [float(v) for v in est.com],
                                  [float(v) for v in est.inertia])
        text = 'applied ' + text
    response.message = text
