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

"""manip_dynamics.ros.runtime.trajectory_player: trajectory documents read and checked."""

import pytest


def test_play_checks_the_trajectory_file():
    pytest.importorskip('trajectory_msgs', reason='trajectory_msgs (ROS 2) not installed')
    from manip_dynamics.ros.runtime.trajectory_player import trajectory_from_document
    good = {'joint_names': ['a', 'b'], 'points': [
        {'positions': [0.0, 1.0], 'time_from_start': {'sec': 0, 'nanosec': 0}},
        {'positions': [0.5, 1.0], 'velocities': [0.0, 0.0], 'time_from_start': 1.5}]}
    msg = trajectory_from_document(good)
    assert list(msg.joint_names) == ['a', 'b'] and len(msg.points) == 2
    assert (msg.points[1].time_from_start.sec, msg.points[1].time_from_start.nanosec) == (
        1, 500_000_000)
    bad = [
        ({'joint_names': [], 'points': good['points']}, 'joint_names'),
        ({'joint_names': ['a', 'a'], 'points': good['points']}, 'twice'),
        ({'joint_names': ['a', 'b'], 'points': []}, 'points'),
        ({'joint_names': ['a', 'b'], 'points': [{'positions': [0.0]}]}, 'point 0: positions'),
        ({'joint_names': ['a', 'b'], 'points': [{'positions': [0.0, float('nan')]}]}, 'NaN'),
        ({'joint_names': ['a', 'b'], 'points': [
            {'positions': [0, 0], 'time_from_start': 2.0},
            {'positions': [0, 0], 'time_from_start': 1.0}]}, 'point 1: time_from_start'),
        ({'joint_names': ['a', 'b'], 'points': [
            {'positions': [0, 0], 'time_from_start': {'sec': 0, 'nanosec': 2e9}}]}, 'nanosec'),
        ('text', 'mapping'),
    ]
    for doc, text in bad:
        with pytest.raises(ValueError, match=text):
            trajectory_from_document(doc)
