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
control.goal_endings: the status a relayed goal ends with, and when the arm is at rest.

The expected endings are JTC's own (ros2_controllers' joint_trajectory_controller: a
preempted goal ABORTED with INVALID_GOAL, a cancel CANCELED, a tolerance violation ABORTED
with its code) and the rule that every ending but a success holds the arm, except a
preemption (the new goal moves it) and a contact stop (held when the contact was seen).
"""

import numpy as np

from manip_dynamics.control.goal_endings import (
    ending_line, goal_ending, JTC_PREEMPTED, JtcResult, read_ending_line, RestDetector,
    SETTLED_SPEED, SETTLED_TIME)

SUCCESS = JtcResult('succeeded', 0, 'Goal successfully reached!')
ABORTED_GOAL_TIME = JtcResult('aborted', -5, 'Aborted due to goal_time_tolerance exceeding')


def test_success_and_the_topic_path_succeed_without_a_hold():
    for jtc in (SUCCESS, None):
        ending = goal_ending(jtc)
        assert ending.status == 'succeeded' and ending.hold is None
        assert ending.error_code is None


def test_a_status_of_success_with_an_error_code_is_not_a_success():
    ending = goal_ending(JtcResult('succeeded', -4, 'path'))
    assert ending.status == 'aborted' and ending.hold is not None


def test_cancel_ends_canceled_and_holds():
    ending = goal_ending(JtcResult('canceled', 0, ''), cancel_requested=True)
    assert (ending.status, ending.error_code) == ('canceled', None)
    assert ending.hold == 'the goal was canceled'


def test_preemption_aborts_with_invalid_goal_and_leaves_the_arm_to_the_new_goal():
    jtc = JtcResult('aborted', -1, 'Current goal ' + JTC_PREEMPTED + '.')
    ending = goal_ending(jtc, preempted=True)
    assert (ending.status, ending.error_code) == ('aborted', 'INVALID_GOAL')
    assert ending.error_string == 'preempted by a new goal' and ending.hold is None
    # preempted after JTC had already reported success: the success stands
    assert goal_ending(SUCCESS, preempted=True).status == 'succeeded'


def test_a_contact_stop_aborts_with_path_tolerance_violated_not_held_again():
    ending = goal_ending(JtcResult('canceled', 0, ''), contact='contact: joint 2')
    assert (ending.status, ending.error_code) == ('aborted', 'PATH_TOLERANCE_VIOLATED')
    assert ending.error_string == 'contact: joint 2' and ending.hold is None


def test_jtc_abort_passes_its_code_and_text_and_holds():
    ending = goal_ending(ABORTED_GOAL_TIME, controller='jtc')
    assert (ending.status, ending.error_code) == ('aborted', None)   # JTC's -5 stands
    assert ending.error_string == ABORTED_GOAL_TIME.error_string
    assert ending.hold == 'jtc ended the goal (%s)' % ABORTED_GOAL_TIME.error_string


def test_a_cancel_by_someone_else_is_an_abort_never_a_success():
    ending = goal_ending(JtcResult('canceled', 0, ''), action='/jtc/follow')
    assert (ending.status, ending.error_code) == ('aborted', 'INVALID_GOAL')
    assert 'canceled by someone else' in ending.error_string
    assert '/jtc/follow' in ending.error_string and ending.hold is not None


def test_jtc_preempting_for_another_client_leaves_the_arm_to_that_goal():
    ending = goal_ending(JtcResult('aborted', -1, 'Current goal ' + JTC_PREEMPTED + '.'))
    assert ending.status == 'aborted' and ending.hold is None


def test_an_overdue_answer_ends_the_goal_here_and_holds():
    why = 'no answer in time'
    ending = goal_ending(None, overdue=why)
    assert (ending.status, ending.error_code, ending.hold) == (
        'aborted', 'GOAL_TOLERANCE_VIOLATED', why)
    # overdue wins over everything, a cancel only changes the status
    ending = goal_ending(SUCCESS, overdue=why, cancel_requested=True, preempted=True)
    assert (ending.status, ending.error_code) == ('canceled', 'GOAL_TOLERANCE_VIOLATED')


def test_rest_needs_the_pose_kept_for_the_settling_time():
    detector = RestDetector('a stop')
    q = np.zeros(3)
    step = 0.002
    radius = SETTLED_SPEED * SETTLED_TIME
    times = np.arange(0.0, SETTLED_TIME + 3 * step, step)
    # creeping at 40 % of the radius over the whole window: within it, so at rest in time
    verdicts = [detector.update(t, q + 0.4 * radius * t / SETTLED_TIME) for t in times]
    first = times[verdicts.index(True)]
    assert abs(first - SETTLED_TIME) <= step + 1e-12
    # a move beyond the radius starts the count again from that sample
    moved = times[-1] + step
    assert not detector.update(moved, q + 2 * radius)
    assert not detector.update(moved + SETTLED_TIME - step, q + 2 * radius)
    assert detector.update(moved + SETTLED_TIME, q + 2 * radius)


def test_an_ending_line_reads_back_and_other_lines_do_not():
    text = 'contact: strongest joint j2 at 5.70 of its threshold (stamp 12.500 s); stopped'
    line = ending_line('aborted', 1764383403.1234, text)
    assert line.startswith('goal aborted at stamp 1764383403.123 s: contact')
    status, stamp, back = read_ending_line(line)
    assert (status, back) == ('aborted', text)
    assert abs(stamp - 1764383403.1234) <= 5e-4
    assert read_ending_line(ending_line('succeeded', 3.0, '')) == ('succeeded', 3.0, '')
    for other in ('hold: the contact has ended', 'goal accepted: 2.0 s plan',
                  'goal aborted: no stamp'):
        assert read_ending_line(other) is None
