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
How a FollowJointTrajectory goal relayed to joint_trajectory_controller (JTC) ends (no rclpy).

feedforward_filter passes a planner's goal on to JTC and ends the planner's goal when JTC's
ends, or earlier. :func:`goal_ending` decides, from what happened to the goal and JTC's
result, the status the planner's goal ends with (the one JTC itself would give), its error
code and text, and whether the arm must be held where it stopped: after every ending that is
not a success, except a preemption (the goal that preempted it moves the arm) and a contact
stop (held when the contact was seen). :class:`RestDetector` tells when the arm has come to
rest after a stop, where the node holds it once more. :func:`ending_line` is the line the
node announces an ending with, :func:`read_ending_line` reads it back.

Error codes are the names of control_msgs/FollowJointTrajectory's result constants
(``SUCCESSFUL``, ``INVALID_GOAL``, ``PATH_TOLERANCE_VIOLATED``, ``GOAL_TOLERANCE_VIOLATED``),
statuses those of action_msgs/GoalStatus in lower case.
"""

from dataclasses import dataclass
import re

import numpy as np
from numpy.typing import NDArray

#: JTC's result text for a goal it preempted (joint_trajectory_controller.cpp), lower case.
JTC_PREEMPTED = 'preempted by new incoming action'

#: After a stop the arm is at rest when no joint has moved more than SETTLED_SPEED x
#: SETTLED_TIME from one pose for SETTLED_TIME [s] (SETTLED_SPEED in rad/s or m/s).
#: 0.01 rad/s over 50 ms (round 19) held an arm still creeping at up to 10 mrad/s: it came
#: to rest past the new hold pose and the PD pulled it back against friction, 1.03 mrad in
#: the 3 s after rest once in 20 rounds by hand. 2 mrad/s over 0.1 s: docs/ROS2_CONTROL.md.
SETTLED_SPEED = 0.002
SETTLED_TIME = 0.1


#: :func:`ending_line`'s form: status, stamp [s], and the result's text after a colon.
_ENDING_LINE = re.compile(r'^goal (\w+) at stamp (-?[0-9.]+) s(?:: (.*))?$', re.S)


def ending_line(status: str, stamp: float, text: str) -> str:
    """
    Return the line that announces a goal's ending, e.g. ``goal aborted at stamp 12.345 s: ...``.

    :param status: How the goal ended (:class:`Ending`'s ``status``).
    :param stamp: When, on the arm's clock [s]: the newest joint state's stamp as the goal
        ended (a contact flag stamped later has no goal to stop).
    :param text: The result's error text ('' for none).
    """
    return 'goal %s at stamp %.3f s%s' % (status, stamp, ': ' + text if text else '')


def read_ending_line(line: str) -> tuple[str, float, str] | None:
    """Return (status, stamp [s], text) of an :func:`ending_line`, None for another line."""
    found = _ENDING_LINE.match(line)
    if found is None:
        return None
    return found.group(1), float(found.group(2)), found.group(3) or ''


@dataclass(frozen=True)
class JtcResult:
    """JTC's answer to a goal: its GoalStatus (lower case) and its result's code and text."""

    status: str          # 'succeeded', 'canceled', 'aborted', ...
    error_code: int      # the result's error_code (0 = SUCCESSFUL)
    error_string: str


@dataclass(frozen=True)
class Ending:
    """How the planner's goal ends."""

    status: str              # 'succeeded', 'canceled' or 'aborted'
    error_code: str | None   # a result constant's name to set; None: JTC's code stands
    error_string: str        # the result's text
    hold: str | None         # why the arm is held where it stopped; None: no hold


def goal_ending(jtc: JtcResult | None, *, overdue: str = '', preempted: bool = False,
                cancel_requested: bool = False, contact: str = '',
                controller: str = 'joint_trajectory_controller',
                action: str = '/joint_trajectory_controller/follow_joint_trajectory') -> Ending:
    """
    Return how the planner's goal ends, first rule that applies.

    1. JTC's answer overdue (``overdue``: why): ABORTED, or CANCELED when the planner had
       canceled, with GOAL_TOLERANCE_VIOLATED (JTC's code for a goal past its goal time);
       held.
    2. Preempted by a newer goal and JTC did not report success: ABORTED, INVALID_GOAL,
       "preempted by a new goal" (JTC's code and text); not held.
    3. Canceled by the planner: CANCELED with JTC's code and text; held.
    4. Stopped on a contact (``contact``: the reason): ABORTED, PATH_TOLERANCE_VIOLATED;
       not held here (it was when the contact was seen).
    5. JTC succeeded (or, ``jtc`` None, a plan sent on JTC's topic ran its time): SUCCEEDED.
    6. Else ABORTED with JTC's code and text; a goal canceled at JTC by someone else says so
       and never carries SUCCESSFUL; held, unless JTC preempted it for another client's goal
       (that goal moves the arm).

    :param jtc: JTC's result, or None on the topic path (the plan's time is up).
    :param controller: JTC's name, for the hold's reason.
    :param action: JTC's action name, for the text of a cancel by someone else.
    """
    code, text = (0, '') if jtc is None else (jtc.error_code, jtc.error_string)
    status = 'succeeded' if jtc is None else jtc.status
    succeeded = jtc is not None and status == 'succeeded' and code == 0
    if overdue:
        return Ending('canceled' if cancel_requested else 'aborted',
                      'GOAL_TOLERANCE_VIOLATED', overdue, overdue)
    if preempted and not succeeded:
        return Ending('aborted', 'INVALID_GOAL', 'preempted by a new goal', None)
    if cancel_requested:
        return Ending('canceled', None, text, 'the goal was canceled')
    if contact:
        return Ending('aborted', 'PATH_TOLERANCE_VIOLATED', contact, None)
    if status == 'succeeded' and code == 0:
        return Ending('succeeded', None, text, None)
    reason = text or 'no reason given'
    code_name = None
    if status == 'canceled':
        text = 'the goal at %s was canceled by someone else (%s)' % (action, reason)
        code_name = 'INVALID_GOAL' if code == 0 else None
    hold = None if JTC_PREEMPTED in reason.lower() else \
        '%s ended the goal (%s)' % (controller, text or reason)
    return Ending('aborted', code_name, text, hold)


class RestDetector:
    """
    Whether the arm has come to rest after a stop (a position test on the joint states).

    At rest: within ``SETTLED_SPEED x SETTLED_TIME`` of one pose for ``SETTLED_TIME``. A
    position test, not a velocity one: a light joint's velocity can chatter about zero at
    rest. JTC's hold, and the node's first one, are at the pose where the arm stopped being
    driven; it comes to rest a little farther, and a PD pulling it back against friction
    slips in steps: so the node holds once more where the arm rests.
    """

    def __init__(self, why: str, speed: float = SETTLED_SPEED,
                 duration: float = SETTLED_TIME) -> None:
        """
        Start watching after a stop (no pose seen yet).

        :param why: The stop it follows (for the hold's reason).
        :param speed: [rad/s or m/s]; ``speed * duration`` is the largest motion at rest.
        :param duration: How long the arm must stay there [s].
        """
        self.why = why
        self._radius = speed * duration
        self._duration = duration
        self._since: tuple[float, NDArray[np.float64]] | None = None   # (stamp, pose)

    def update(self, stamp: float, q: NDArray[np.float64]) -> bool:
        """
        Take one joint state; return whether the arm is at rest.

        :param stamp: Its time [s], one clock throughout (the joint states').
        :param q: Its joint positions, shape (dof,) [rad or m].
        """
        since = self._since
        if since is None or np.max(np.abs(q - since[1])) > self._radius:
            self._since = (stamp, q)
            return False
        return stamp - since[0] >= self._duration
