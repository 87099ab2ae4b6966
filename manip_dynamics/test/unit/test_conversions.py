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
Message <-> numpy helpers of manip_dynamics.ros.runtime.conversions (no ROS graph needed).

Expected values are written out by hand on the planar 2R arm and a permutation of the
default arm's joint names; the helpers must reorder, flatten and reject exactly as stated.
"""

import math
import os

import numpy as np
import pytest

pytest.importorskip('sensor_msgs.msg', reason='ROS message packages not installed')
pytest.importorskip('trajectory_msgs.msg', reason='ROS message packages not installed')

from geometry_msgs.msg import WrenchStamped  # noqa: E402, I100
from sensor_msgs.msg import JointState  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

from manip_dynamics import InputError, RobotModel  # noqa: E402
from manip_dynamics.ros.runtime import conversions as conv  # noqa: E402

URDF_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), 'urdf')


@pytest.fixture(scope='module')
def arm() -> RobotModel:
    """Return the default arm (7 joints cobot7_joint1..7)."""
    return RobotModel.from_urdf_file(os.path.join(URDF_DIR, 'cobot7.urdf'))


def test_to_model_order_shuffled_and_empty_is_zero(arm) -> None:
    """Reorder by name; an empty optional field is zeros but its names are still checked."""
    names = ['cobot7_joint%d' % i for i in (3, 1, 7, 2, 6, 4, 5)]
    values = [3.0, 1.0, 7.0, 2.0, 6.0, 4.0, 5.0]
    np.testing.assert_array_equal(conv.to_model_order(arm, names, values),
                                  [1, 2, 3, 4, 5, 6, 7])
    np.testing.assert_array_equal(
        conv.to_model_order(arm, names, [], what='velocities', empty_is_zero=True),
        np.zeros(7))
    with pytest.raises(InputError, match='bogus'):
        conv.to_model_order(arm, names[:-1] + ['bogus'], [], empty_is_zero=True)
    with pytest.raises(InputError, match='positions is empty'):
        conv.to_model_order(arm, [], [])


def test_from_model_order_inverts(arm) -> None:
    """from_model_order undoes to_model_order for single states and batches."""
    names = ['cobot7_joint%d' % i for i in (7, 6, 5, 4, 3, 2, 1)]
    model_order = np.arange(1.0, 8.0)
    np.testing.assert_array_equal(conv.from_model_order(arm, names, model_order),
                                  model_order[::-1])
    batch = np.vstack([model_order, 10 * model_order])
    np.testing.assert_array_equal(conv.from_model_order(arm, names, batch), batch[:, ::-1])
    np.testing.assert_array_equal(conv.from_model_order(arm, [], model_order), model_order)


def test_matrix_permutation_and_row_major(arm) -> None:
    """Rows and columns permute together; flattening is row by row."""
    names = ['cobot7_joint2', 'cobot7_joint1'] + ['cobot7_joint%d' % i for i in range(3, 8)]
    matrix = np.arange(49.0).reshape(7, 7)
    permuted = conv.matrix_from_model_order(arm, names, matrix)
    assert permuted[0, 0] == matrix[1, 1] and permuted[0, 1] == matrix[1, 0]
    assert permuted[1, 0] == matrix[0, 1] and permuted[6, 6] == matrix[6, 6]
    assert conv.flatten_row_major([[1.0, 2.0], [3.0, 4.0]]) == [1.0, 2.0, 3.0, 4.0]
    assert conv.flatten_row_major(np.array([[1.0, 2.0], [3.0, 4.0]]).T) == [1.0, 3.0, 2.0, 4.0]
    np.testing.assert_array_equal(conv.unflatten_row_major([1, 2, 3, 4, 5, 6], 2, 3),
                                  [[1, 2, 3], [4, 5, 6]])
    with pytest.raises(InputError, match='2 x 3'):
        conv.unflatten_row_major([1, 2, 3], 2, 3)


def _stamped(link, values):
    msg = WrenchStamped()
    msg.header.frame_id = link
    msg.wrench = conv.array_to_wrench(values)
    return msg


def test_wrenches_to_dict(arm) -> None:
    """frame_id names the link; force first; wrenches on one link add up; bad ones named."""
    out = conv.wrenches_to_dict([_stamped('tool0', [1, 2, 3, 4, 5, 6]),
                                 _stamped('cobot7_link3', [0, 0, -9.81, 0, 0, 0]),
                                 _stamped('tool0', [1, 0, 0, 0, 0, 1])], arm)
    assert sorted(out) == ['cobot7_link3', 'tool0']
    np.testing.assert_array_equal(out['tool0'], [2, 2, 3, 4, 5, 7])
    np.testing.assert_array_equal(out['cobot7_link3'], [0, 0, -9.81, 0, 0, 0])
    assert conv.wrenches_to_dict([]) == {}
    with pytest.raises(InputError, match='frame_id'):
        conv.wrenches_to_dict([_stamped('', [0] * 6)])
    with pytest.raises(InputError, match="'moon'"):
        conv.wrenches_to_dict([_stamped('moon', [0] * 6)], arm)
    with pytest.raises(InputError, match='tool0'):
        conv.wrenches_to_dict([_stamped('tool0', [math.nan] + [0] * 5)])


def test_joint_state_arrays_extra_and_missing(arm) -> None:
    """Extra joints are ignored; a missing model joint and NaN are named."""
    msg = JointState()
    msg.name = ['gripper'] + ['cobot7_joint%d' % i for i in (7, 6, 5, 4, 3, 2, 1)]
    msg.position = [9.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0]
    q, qd = conv.joint_state_arrays(arm, msg)
    np.testing.assert_array_equal(q, [1, 2, 3, 4, 5, 6, 7])
    assert qd is None
    msg.velocity = [0.0, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1]
    _, qd = conv.joint_state_arrays(arm, msg)
    np.testing.assert_allclose(qd, [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7])
    short = JointState(name=list(msg.name[:-1]), position=list(msg.position[:-1]))
    with pytest.raises(InputError, match='cobot7_joint1'):
        conv.joint_state_arrays(arm, short)
    msg.position = [9.0, 7.0, math.nan, 5.0, 4.0, 3.0, 2.0, 1.0]
    with pytest.raises(InputError, match='cobot7_joint6'):
        conv.joint_state_arrays(arm, msg)


def test_joint_state_message_and_commands(arm) -> None:
    """Output JointState carries names, efforts, stamp; commands map back to model order."""
    msg = conv.joint_state_message(['a', 'b'], np.array([1.5, -2.0]))
    assert list(msg.name) == ['a', 'b'] and list(msg.effort) == [1.5, -2.0]
    assert len(msg.position) == 0
    cmd = conv.float64_multi_array([3.0, 1.0])
    assert list(cmd.data) == [3.0, 1.0]
    tau = conv.command_to_model_order(arm, ['cobot7_joint3', 'cobot7_joint1'], cmd.data)
    np.testing.assert_array_equal(tau, [1.0, 0.0, 3.0, 0.0, 0.0, 0.0, 0.0])
    with pytest.raises(InputError, match='2 command_joints'):
        conv.command_to_model_order(arm, ['cobot7_joint3', 'cobot7_joint1'], [1.0])
    with pytest.raises(InputError, match='cobot7_joint3'):
        conv.command_to_model_order(arm, ['cobot7_joint3'], [math.inf])


def _traj(names, points):
    return JointTrajectory(joint_names=names, points=[
        JointTrajectoryPoint(**fields) for fields in points])


def test_trajectory_to_arrays(arm) -> None:
    """Points become (N, n) batches in model order; missing vel/acc everywhere = zero."""
    names = ['cobot7_joint%d' % i for i in (2, 1, 3, 4, 5, 6, 7)]
    p = [0.2, 0.1, 0.3, 0.4, 0.5, 0.6, 0.7]
    out_names, q, qd, qdd = conv.trajectory_to_arrays(
        arm, _traj(names, [{'positions': p}, {'positions': p}]))
    assert out_names == names
    np.testing.assert_allclose(q, [[0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]] * 2)
    assert not qd.any() and not qdd.any()
    _, _, qd, _ = conv.trajectory_to_arrays(
        arm, _traj(names, [{'positions': p, 'velocities': p}]))
    np.testing.assert_allclose(qd[0], [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7])
    with pytest.raises(InputError, match='point 1 has no accelerations'):
        conv.trajectory_to_arrays(arm, _traj(names, [
            {'positions': p, 'accelerations': p}, {'positions': p}]))
    with pytest.raises(InputError, match='no points'):
        conv.trajectory_to_arrays(arm, _traj(names, []))
    with pytest.raises(InputError, match='point 0: velocities'):
        conv.trajectory_to_arrays(arm, _traj(names, [{'positions': p, 'velocities': [1.0]}]))


def test_trajectory_with_efforts_fills_in_place() -> None:
    """Efforts land in the given trajectory's points (no deep copy); positions unchanged."""
    traj = _traj(['a'], [{'positions': [0.0]}, {'positions': [1.0]}])
    out = conv.trajectory_with_efforts(traj, [[1.0], [2.0]])
    assert out is traj
    assert [list(pt.effort) for pt in out.points] == [[1.0], [2.0]]
    assert [list(pt.positions) for pt in out.points] == [[0.0], [1.0]]
    with pytest.raises(InputError, match='one row per trajectory point'):
        conv.trajectory_with_efforts(traj, [[1.0]])


def test_trajectory_to_arrays_large_matches_per_point(arm) -> None:
    """A long shuffled trajectory converts exactly as the per-point library call would."""
    rng = np.random.default_rng(3)
    names = ['cobot7_joint%d' % i for i in (7, 2, 1, 3, 5, 4, 6)]
    values = rng.normal(size=(3, 2000, 7))
    traj = _traj(names, [{'positions': values[0, k], 'velocities': values[1, k],
                          'accelerations': values[2, k]} for k in range(2000)])
    _, q, qd, qdd = conv.trajectory_to_arrays(arm, traj)
    for got, field in zip((q, qd, qdd), range(3)):
        for k in (0, 1, 999, 1999):
            np.testing.assert_array_equal(
                got[k], arm.to_model_order(names, values[field, k], what='x'))


def test_trajectory_to_arrays_names_the_bad_point(arm) -> None:
    """NaN, a wrong length or a bad name list: the message names the point and joint."""
    names = list(arm.joint_names)
    good = [0.1] * 7
    bad = list(good)
    bad[3] = math.nan
    with pytest.raises(InputError, match="point 2: positions of joint 'cobot7_joint4'"):
        conv.trajectory_to_arrays(arm, _traj(names, [{'positions': good}] * 2
                                             + [{'positions': bad}]))
    with pytest.raises(InputError, match='point 1: velocities has 6 values'):
        conv.trajectory_to_arrays(arm, _traj(names, [
            {'positions': good, 'velocities': good},
            {'positions': good, 'velocities': good[:6]}]))
    with pytest.raises(InputError, match='unknown joint'):
        conv.trajectory_to_arrays(arm, _traj(names[:6] + ['bogus'], [{'positions': good}]))
    with pytest.raises(InputError, match='model has 7 joints'):
        conv.trajectory_to_arrays(arm, _traj([], [{'positions': good[:5]}]))


def test_trajectory_point_limit(arm, monkeypatch) -> None:
    """Above MAX_TRAJECTORY_POINTS the request is rejected with the limit in the message."""
    monkeypatch.setattr(conv, 'MAX_TRAJECTORY_POINTS', 3)
    with pytest.raises(InputError, match='at most 3 are accepted'):
        conv.trajectory_to_arrays(arm, _traj([], [{'positions': [0.1] * 7}] * 4))


def test_duration_msg_splits_seconds_and_carries_a_full_second():
    assert (conv.duration_msg(2.25).sec, conv.duration_msg(2.25).nanosec) == (2, 250_000_000)
    assert (conv.duration_msg(0.0).sec, conv.duration_msg(0.0).nanosec) == (0, 0)
    # 0.9999999999 s rounds to 1e9 ns: carried into the seconds, never nanosec = 1e9
    carried = conv.duration_msg(0.9999999999)
    assert (carried.sec, carried.nanosec) == (1, 0)
    assert type(carried).__name__ == 'Duration'
