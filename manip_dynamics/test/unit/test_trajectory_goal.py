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
read_trajectory_goal against joint_trajectory_controller's documented goal-time rules.

Reference: JTC's validate_trajectory_msg (ros2_controllers, jazzy branch): joints it
controls, points present, times strictly increasing, fields empty or one value per joint, a
last point at rest, a stamped trajectory that does not end in the past; with
allow_partial_joints_goal the joints left out hold; a first point after t = 0 is reached from
the current state.
"""

import numpy as np
import pytest

from manip_dynamics import RobotModel
from manip_dynamics.bundled import urdf_path
from manip_dynamics.control.plan_feedforward import PlanRefused
from manip_dynamics.control.trajectory_goal import read_trajectory_goal


@pytest.fixture(scope='module')
def model() -> RobotModel:
    return RobotModel.from_urdf_file(urdf_path('cobot7'))


def read(model, names=None, times=(0.0, 1.0), positions=None, velocities=None,
         stamp=0.0, now=10.0, q=None, qd=None, multi_dof=0):
    names = list(model.joint_names) if names is None else names
    q = np.zeros(model.dof) if q is None else q
    if positions is None:
        positions = [[0.0] * len(names), [0.1] * len(names)][:len(times)]
    velocities = velocities if velocities is not None else [[] for _ in positions]
    return read_trajectory_goal(model, names, times, positions, velocities,
                                [[] for _ in positions], stamp=stamp, now=now, q=q, qd=qd,
                                start_tolerance=0.05, multi_dof_points=multi_dof)


def test_a_valid_goal_is_complete_in_model_order(model):
    names = list(reversed(model.joint_names))
    positions = [[0.0] * 7, list(np.arange(7) * 0.01)]
    goal = read(model, names=names, positions=positions)
    assert goal.joint_names == tuple(model.joint_names)
    # reversed order mapped back: model joint k got the value given for it
    np.testing.assert_allclose(goal.positions[1], np.arange(7)[::-1] * 0.01)
    assert goal.start == 10.0 and not goal.prepended and goal.held == ()


@pytest.mark.parametrize('kwargs, words', [
    ({'names': []}, 'names no joints'),
    ({'names': ['cobot7_joint1', 'elbow']}, "'elbow'"),
    ({'times': (0.0, 0.0)}, 'strictly increasing'),
    ({'times': (0.5, 0.2)}, 'strictly increasing'),
    ({'times': (0.0, float('nan'))}, 'strictly increasing'),
    ({'positions': [[0.0] * 7, [0.1] * 6]}, 'one value per joint'),
    ({'positions': [[0.0] * 7, [float('inf')] * 7]}, 'not finite'),
    ({'velocities': [[0.0] * 7, [0.0] * 6 + [0.2]]},
     'non-zero velocity at joint cobot7_joint7'),
    ({'stamp': 5.0, 'now': 10.0}, 'before now'),
    ({'multi_dof': 3}, 'multi-DOF'),
    ({'positions': [[0.2] * 7, [0.1] * 7]}, 'start_tolerance'),
])
def test_goals_jtc_refuses_are_refused_with_the_reason(model, kwargs, words):
    with pytest.raises(PlanRefused) as raised:
        read(model, **kwargs)
    assert words in str(raised.value)


def test_a_future_stamp_starts_then_and_a_past_one_still_running_is_taken(model):
    assert read(model, stamp=12.0, now=10.0).start == 12.0
    assert read(model, stamp=9.5, now=10.0).start == 9.5   # ends at 10.5, after now


def test_a_joint_subset_holds_the_joints_left_out_where_they_are(model):
    q = np.linspace(-0.3, 0.3, 7)
    names = list(model.joint_names[:5])
    goal = read(model, names=names, positions=[list(q[:5]), [0.2] * 5], q=q)
    assert goal.held == tuple(model.joint_names[5:])
    np.testing.assert_array_equal(goal.positions[:, 5:], np.tile(q[5:], (2, 1)))
    np.testing.assert_allclose(goal.positions[1, :5], 0.2)


def test_a_first_point_after_zero_starts_from_the_current_state(model):
    q = np.full(7, 0.1)
    qd = np.full(7, 0.3)
    goal = read(model, times=(0.5,), positions=[[0.4] * 7], velocities=[[0.0] * 7],
                q=q, qd=qd)
    assert goal.prepended
    np.testing.assert_array_equal(goal.times, [0.0, 0.5])
    np.testing.assert_array_equal(goal.positions[0], q)
    np.testing.assert_array_equal(goal.velocities[0], qd)   # a continuation: its velocity
    # far from the pose is fine then: the segment is checked by the limits, not a jump
    far = read(model, times=(2.0,), positions=[[1.0] * 7], q=q)
    assert far.prepended and far.velocities is None


def test_gripper_arms_arm_group_plan_is_complete_with_the_fingers_held():
    """A MoveIt arm group without the fingers (prismatic joints) plans its 4 joints only."""
    from manip_dynamics.control.plan_feedforward import plan_with_feedforward
    arm = RobotModel.from_urdf_file(urdf_path('gripper_arm'))
    q = np.array([0.1, 0.2, -0.1, 0.3, 0.01, 0.01])
    names = list(arm.joint_names[:4])
    goal = read_trajectory_goal(arm, names, [0.0, 1.5], [list(q[:4]), [0.3, 0.1, 0.0, 0.2]],
                                [[], []], [[], []], stamp=0.0, now=1.0, q=q,
                                start_tolerance=0.05)
    assert goal.held == ('gripper_arm_finger_left_joint', 'gripper_arm_finger_right_joint')
    plan = plan_with_feedforward(arm, goal.joint_names, goal.times, goal.positions)
    # the fingers stay where they are through the whole plan, with their holding efforts
    np.testing.assert_allclose(plan.positions[:, 4:], np.tile(q[4:], (len(plan.times), 1)))
    np.testing.assert_allclose(plan.positions[-1, :4], [0.3, 0.1, 0.0, 0.2])
