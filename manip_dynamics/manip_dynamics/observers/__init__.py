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
Observers that estimate what the robot model cannot see: external joint torques, contacts.

No ROS here: :mod:`manip_dynamics.ros.nodes.external_torque_observer` is a thin adapter.

* :class:`MomentumObserver`: the generalised-momentum residual r ~ tau_ext.
* :class:`ContactDetector`: per-joint thresholds with hysteresis on r.
* :class:`GatedObserver`: the observer behind the plausibility gate, output bounded.
* :func:`estimate_wrench`: the link wrench that best explains r (damped pseudo-inverse of
  J^T), :func:`wrench_in_axes` to re-express it; :func:`link_wrench` both for a model's
  link, :func:`wrench_frames` the link and axes a node's parameters name.
"""

from manip_dynamics.observers.contact import (
    contact_is_current, ContactDetector, ContactState, DEFAULT_WRENCH_DAMPING,
    estimate_wrench, link_wrench, MAX_CONTACT_AGE, wrench_frames, wrench_in_axes)
from manip_dynamics.observers.gated_observer import GatedObserver
from manip_dynamics.observers.momentum_observer import MomentumObserver

__all__ = ['contact_is_current', 'ContactDetector', 'ContactState', 'DEFAULT_WRENCH_DAMPING',
           'estimate_wrench', 'GatedObserver', 'link_wrench', 'MAX_CONTACT_AGE',
           'MomentumObserver', 'wrench_frames', 'wrench_in_axes']
