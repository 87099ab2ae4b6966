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
A payload estimated from the joint states an arm has just sent: a bounded window and the fit.

:class:`JointStateWindow` keeps the last samples (time, positions, velocities, efforts, model
order) for a bounded time and count; :func:`estimate_payload_from_window` takes its last
seconds and calls :func:`manip_dynamics.identification.payload.estimate_payload` on them:
from positions alone when the arm stood still (mass and centre of mass), with velocities
and accelerations (differentiated over time) when it moved (the inertia too). dynamics_node's
``~/estimate_payload`` is the ROS face of it (docs/IDENTIFICATION.md).
"""

from collections import deque

import numpy as np

from manip_dynamics.errors import InputError
from manip_dynamics.identification.payload import estimate_payload, PayloadEstimate

#: Below this speed of every joint in the whole window the data count as static [rad/s].
STATIC_VELOCITY = 0.01
#: Most samples a window keeps, whatever the stamps say (60 s at 1 kHz, about 30 MB for a
#: 7-joint arm): a driver that does not stamp would otherwise grow the window for ever.
MAX_SAMPLES = 60000


class JointStateWindow:
    """The last ``max_seconds`` of joint states: time [s], q, qd, effort (model order)."""

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
        """
        Store one sample; a sample without efforts is of no use and is skipped.

        :param t: Its time [s]; earlier than the newest kept (a simulation reset): the
            window starts again from this sample.
        :param q: Positions (n,) [rad or m], model order; ``qd`` velocities or None,
            ``effort`` the applied joint torques [N m or N] or None.
        """
        if effort is None:
            return
        if self._items and t < self._items[-1][0]:
            self._items.clear()
        self._items.append((t, q, qd, effort))
        while self._items and t - self._items[0][0] > self.max_seconds:
            self._items.popleft()

    def clear(self) -> None:
        """Forget every sample (a new model may have other joints)."""
        self._items.clear()

    def last(self, seconds: float) -> list[tuple]:
        """Return the samples ``(t, q, qd, effort)`` of the last ``seconds`` before the newest."""
        if not self._items:
            return []
        newest = self._items[-1][0]
        return [item for item in self._items if newest - item[0] <= seconds]


def estimate_payload_from_window(model, window: JointStateWindow, link: str,
                                 seconds: float) -> tuple[PayloadEstimate, bool]:
    """
    Estimate the payload on ``link`` from the last ``seconds`` of ``window``.

    :param model: The :class:`~manip_dynamics.RobotModel` of the arm; a payload it already
        has on ``link`` is left out of the fit (a copy without it is used).
    :param window: The recent joint states.
    :param link: The link that carries the payload.
    :param seconds: How far back to take the samples [s], > 0.
    :return: ``(estimate, static)``: the estimate and whether the arm stood still (then
        mass and centre of mass only).
    :raises InputError: No link, a window too short (fewer than 3 samples), a bad link, or
        data the fit refuses (its message).
    """
    if not link:
        raise InputError('link is empty; name a link of %s' % list(model.link_names))
    if not seconds > 0.0:
        raise InputError('window_seconds must be > 0, got %r' % seconds)
    items = window.last(seconds)
    if len(items) < 3:
        raise InputError('only %d joint_states with efforts in the last %g s' % (
            len(items), seconds))
    t = np.array([i[0] for i in items])
    q = np.array([i[1] for i in items])
    tau = np.array([i[3] for i in items])
    have_qd = all(i[2] is not None for i in items)
    qd = np.array([i[2] for i in items]) if have_qd else np.gradient(q, t, axis=0)
    bare = model.with_joint_dynamics()     # a copy with the same payloads
    bare.remove_payload(link)
    static = float(np.max(np.abs(qd))) < STATIC_VELOCITY
    if static:
        return estimate_payload(bare, link, q, tau), True
    qdd = np.gradient(qd, t, axis=0)
    return estimate_payload(bare, link, q, tau, qd=qd, qdd=qdd), False
