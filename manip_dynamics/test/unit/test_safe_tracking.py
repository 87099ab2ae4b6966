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
control.safe_tracking.SafeTracker, without ROS: every sample answered, stale input stopped.

The references are the model's own gravity torques at the last good pose (the hold) and the
controller's law on the last good state (a glitch within the hold time), computed here from
the model and the controller directly.
"""

import numpy as np
import pytest

from manip_dynamics import RobotModel
from manip_dynamics.bundled import urdf_path
from manip_dynamics.control import ComputedTorqueController
from manip_dynamics.control.safe_tracking import SafeTracker
from manip_dynamics.safety import JointStateGate

RATE = 500.0
TIMEOUT = 0.1


@pytest.fixture(scope='module')
def cobot():
    return RobotModel.from_urdf_file(urdf_path('cobot7'))


def tracker(model, stale_action='hold'):
    controller = ComputedTorqueController(model, 100.0, 20.0)
    gate = JointStateGate(model, hold_time=0.05)
    index = list(range(model.dof))[::-1]   # a command order other than the model's
    return SafeTracker(controller, gate, index, timeout=TIMEOUT, period=TIMEOUT / 4,
                       stale_action=stale_action)


def pose(model):
    return 0.5 * (model.position_lower + model.position_upper)


def feed(track, q, t0, t1, qd=None):
    """Good samples at RATE from t0 to t1 (stamp = receive time); the last step."""
    qd = np.zeros(len(q)) if qd is None else qd
    step = None
    for t in np.arange(t0, t1, 1.0 / RATE):
        step = track.update(t, t, q, qd)
    return step


def test_a_glitch_is_answered_from_the_last_good_state_then_with_the_hold(cobot):
    track = tracker(cobot)
    q = pose(cobot)
    good = feed(track, q, 1.0, 1.2)
    assert good.events == () and good.command is not None
    glitch = np.full(cobot.dof, 1e6)
    first = track.update(1.2, 1.2, q, glitch)
    assert first.events == ('glitch',) and 'velocity' in first.message
    # the law on the last good state: the controller holding q at rest, in command order
    np.testing.assert_allclose(first.command, good.command, atol=1e-9)
    # past the gate's hold time: gravity at the last good pose, clamped, once announced
    steps = [track.update(t, t, q, glitch) for t in np.arange(1.202, 1.4, 1.0 / RATE)]
    events = [s.events for s in steps]
    assert events.count(('holding_glitch',)) == 1
    limits = track.controller.limits
    hold = np.clip(cobot.gravity_torques(q), -limits, limits)[track.index]
    np.testing.assert_allclose(steps[-1].command, hold, rtol=1e-12)
    # never silence: every sample got a command
    assert all(s.command is not None for s in steps)
    assert track.update(1.4, 1.4, q, np.zeros(cobot.dof)).events == ('recovered',)


def test_stale_input_stops_once_with_the_chosen_command_and_holds_where_it_returns(cobot):
    for action in ('hold', 'zero'):
        track = tracker(cobot, action)
        q = pose(cobot)
        feed(track, q, 0.0, 0.2)
        ticks = [track.watchdog(t) for t in np.arange(0.2, 0.2 + 3 * TIMEOUT, TIMEOUT / 4)]
        stops = [s for s in ticks if s.command is not None]
        assert len(stops) == 1 and stops[0].events == ('stopped_stale',)
        expected = (np.zeros(cobot.dof) if action == 'zero' else
                    np.clip(cobot.gravity_torques(q), -track.controller.limits,
                            track.controller.limits)[track.index])
        np.testing.assert_allclose(stops[0].command, expected, rtol=1e-12)
        assert ('sent one %s' % action) in stops[0].message
        moved = q + 0.01
        again = track.update(0.6, 0.6, moved, np.zeros(cobot.dof))
        assert 'resumed' in again.events
        assert track.controller.state != 'tracking'


def test_a_duplicate_sends_nothing_and_a_stamp_going_back_drops_the_trajectory(cobot):
    track = tracker(cobot)
    q = pose(cobot)
    qd = np.zeros(cobot.dof)
    first = track.update(0.0, 5.0, q, qd)
    assert first.command is not None
    same = track.update(0.002, 5.0, q, qd)   # the same sample again, its stamp too
    assert same.events == ('duplicate',) and same.command is None
    # a simulator reset: the stamps start again lower (the gate first holds the new stream
    # back); once it takes it, the tracker drops the trajectory and holds there
    events = [track.update(0.1 + k / RATE, 1.0 + k / RATE, q, qd).events for k in range(20)]
    assert sum('time_back' in e for e in events) == 1, events
    assert track.stamp < 2.0 and track.controller.state != 'tracking'
