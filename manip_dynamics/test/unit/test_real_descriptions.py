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
Public robot descriptions load as urdfdom loads them, and match Pinocchio.

The descriptions come from the example-robot-data package (PyPI ``example-robot-data``, a
test dependency) and are chosen for their defects, not for being clean: principal moments
that violate the triangle inequality (by round-off, by 9 to 80 %), inertias with a negative
principal moment, old-format transmissions, materials with a ``<texture/>`` without a
filename (link level and robot level), ``<mimic>`` naming a joint that does not exist,
joints that move no mass.  Each loads with one warning per defect, is refused under
``strict=True`` when it has any, and matches Pinocchio (which loads them as written) to 1e-8
for ID, M, g, C and FD (FD and C where our M is positive definite).

Measured on example-robot-data 6.0.0 (69 URDFs): before this loader 48 loaded; now 66 do.
The three refused: ``ur3.urdf`` (``<robot>`` without a name: urdfdom and Pinocchio refuse it
too) and the quadrotors ``quadrotor_base.urdf`` and ``iris_simple.urdf`` (no actuated joint:
a 0-DoF model is refused with a message saying so, see docs/PYTHON_API.md).
"""

import glob
import os

import pytest
import urdf_factory

from manip_dynamics import RobotModel
from manip_dynamics.errors import URDFError

pin = pytest.importorskip('pinocchio', reason='pin (Pinocchio) not installed')
from test_against_pinocchio import PinPair  # noqa: E402, I100
from test_suspect_inertias import compare_where_positive_definite  # noqa: E402

#: relative path -> (why it is here, {link or joint: words its warning must contain})
DESCRIPTIONS = {
    'allegro_hand_description/urdf/allegro_left_hand.urdf': (
        'triangle inequality by 19-20 % on four moving finger links', {
            'link_3.0': ['(20.4 % of I3)'], 'link_7.0': ['(20.4 % of I3)'],
            'link_11.0': ['(20.4 % of I3)'], 'link_15.0': ['(18.9 % of I3)']}),
    'pr2_description/urdf/pr2.urdf': (
        'old-format transmissions (no <type>, <actuator> with <mechanicalReduction> only, '
        'wrist transmissions); triangle inequality by 80 % on two head links', {
            'sensor_mount_link': ['(80 % of I3)', "moves with joint 'head_tilt_joint'"],
            'double_stereo_link': ['(80 % of I3)']}),
    'tiago_description/robots/tiago_no_hand.urdf': (
        'negative principal moment -3.5e-8 on two antenna links bolted to the root', {
            'base_antenna_left_link': ['-3.53486e-08', 'cannot affect'],
            'base_antenna_right_link': ['-3.53486e-08', 'cannot affect']}),
    'anymal_b_simple_description/robots/anymal.urdf': (
        'triangle inequality by round-off (-2e-22) on the trunk, bolted to the root', {
            # the round-off's digits depend on the LAPACK build: its size only
            'base': ['triangle inequality', 'e-22', 'cannot affect']}),
    'icub_description/robots/icub_reduced.urdf': (
        '<texture/> without filename inside link visuals; point-mass inertias that are zero '
        'up to round-off (-1e-20), which are physical', {}),
    'romeo_description/urdf/romeo_laas_small.urdf': (
        '<texture/> without filename at robot level; negative principal moments on moving '
        'hip links and on the trunk; triangle inequality; grippers that move no mass', {
            'body': ['not positive semi-definite', 'cannot affect'],
            'LShoulderYaw_link': ['triangle inequality'],
            'LElbowYaw_link': ['triangle inequality'],
            'LHipPitch_link': ['-0.00272042', "moves with joint 'LHipPitch_joint'"],
            'RHipPitch_link': ['not positive semi-definite'],
            'l_gripper_joint': ['moves no mass'], 'r_gripper_joint': ['moves no mass']}),
    'romeo_description/urdf/romeo_small.urdf': (
        'triangle inequality by 74-80 % on moving arm links', {
            'RShoulderYawLink': ['(79.6 % of I3)'], 'RElbowYawLink': ['(73.8 % of I3)']}),
    'alex_description/urdf/alex_psyonic_hands.urdf': (
        'triangle inequality by 8.8 % on hand links; <mimic> naming joints that do not exist', {
            'LeftPsyonicAbilityBaseLink': ['(8.83 % of I3)'], 'Left_thumb_base': ['8.83 %'],
            'RightPsyonicAbilityBaseLink': ['8.83 %'], 'Right_thumb_base': ['8.83 %'],
            'Left_index_q2': ["'index_q1'"], 'Left_middle_q2': ["'middle_q1'"],
            'Left_ring_q2': ["'ring_q1'"], 'Left_pinky_q2': ["'pinky_q1'"],
            'Right_index_q2': ["'index_q1'"], 'Right_middle_q2': ["'middle_q1'"],
            'Right_ring_q2': ["'ring_q1'"], 'Right_pinky_q2': ["'pinky_q1'"]}),
}

#: descriptions this library refuses although Pinocchio loads them (reason in the docstring)
REFUSED = {'hector_description/robots/quadrotor_base.urdf': 'no actuated joint',
           'iris_description/robots/iris_simple.urdf': 'no actuated joint'}


def robots_dir() -> str:
    base = urdf_factory.example_robot_data_dir()
    if base is None:
        pytest.skip('example-robot-data not installed')
    return base


def read(rel: str) -> str:
    path = os.path.join(robots_dir(), rel)
    if not os.path.isfile(path):
        pytest.skip('example-robot-data has no %s' % rel)
    with open(path, encoding='utf-8') as stream:
        return stream.read()


def warned(model: RobotModel) -> dict[str, str]:
    """Return element name -> its warning (each element must be warned once)."""
    out: dict[str, str] = {}
    for text in model.warnings:
        name = text.split("'")[1]
        assert name not in out, 'warned twice about %r' % name
        out[name] = text
    return out


@pytest.mark.parametrize('rel', sorted(DESCRIPTIONS))
def test_description_loads_with_its_warnings(rel):
    model = RobotModel.from_urdf_string(read(rel))
    expected = DESCRIPTIONS[rel][1]
    found = warned(model)
    assert set(found) == set(expected), sorted(found)
    for name, words in expected.items():
        for word in words:
            assert word in found[name], (word, found[name])
    if expected:
        with pytest.raises(URDFError, match='strict'):
            RobotModel.from_urdf_string(read(rel), strict=True)
    else:
        assert RobotModel.from_urdf_string(read(rel), strict=True).warnings == ()


@pytest.mark.parametrize('rel', sorted(DESCRIPTIONS))
def test_description_matches_pinocchio(rel):
    pair = PinPair(read(rel))
    compare_where_positive_definite(pair, seeds=range(3))


@pytest.mark.slow
def test_everything_urdfdom_loads_loads_here():
    paths = sorted(glob.glob(os.path.join(robots_dir(), '**', '*.urdf'), recursive=True))
    assert len(paths) >= 60
    loaded, refused = [], {}
    for path in paths:
        rel = os.path.relpath(path, robots_dir())
        with open(path, encoding='utf-8') as stream:
            xml = stream.read()
        try:
            pin.buildModelFromXML(xml)
        except Exception:  # noqa: B902 - Pinocchio (urdfdom) refuses it: so may we
            continue
        try:
            RobotModel.from_urdf_string(xml)
            loaded.append(rel)
        except URDFError as exc:
            refused[rel] = str(exc)
    unexpected = {rel: text for rel, text in refused.items()
                  if REFUSED.get(rel) is None or REFUSED[rel] not in text}
    assert not unexpected, unexpected
    assert len(loaded) >= 60
