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
Physically suspect is a warning, impossible is an error (docs/PYTHON_API.md).

One fixture URDF per cause of refusal measured on public robot descriptions, written for
these tests in ``test/fixtures/suspect/`` (their numbers reproduce the real defects):
principal moments violating the triangle inequality by round-off (-2e-22) and by 10 to 50 %,
a tiny negative principal moment (-3.5e-8), old-format transmissions and simulator blocks,
textures without a filename, no actuated joint.  Each suspect fixture loads as written with
one warning per bad link (numbers and a suggested correction), matches Pinocchio (an
independent implementation that also loads them as written) to 1e-8 for ID, M, g, C and FD
where M is positive definite, and is refused with ``strict=True``; the fixtures that carry
only elements the dynamics ignore load without any warning, also in strict mode.
"""

import io
import json
import os
import re
import xml.etree.ElementTree as ElementTree

import numpy as np
import pytest

from manip_dynamics import cli, RobotModel
from manip_dynamics.errors import URDFError
from manip_dynamics.model import load_urdf_file
from manip_dynamics.model_check import check_urdf_file, fails_strict, has_errors
from manip_dynamics.spatial import inertia_defect, inertia_from_urdf

pin = pytest.importorskip('pinocchio', reason='pin (Pinocchio) not installed')
from test_against_pinocchio import compare, PinPair, REL, rel_error  # noqa: E402, I100

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        'fixtures', 'suspect')
KEYS = ('ixx', 'ixy', 'ixz', 'iyy', 'iyz', 'izz')

#: fixture -> link -> words its (single) warning must contain
SUSPECT = {
    'triangle_roundoff.urdf': {
        # the round-off moments' digits depend on the LAPACK build: their size only
        'base': ['e-22', 'e-23', '3e-06', 'triangle inequality',
                 "bolted to the root link 'world'", 'cannot affect the fixed-base dynamics'],
        'foot': ['e-22', '3e-06', 'triangle inequality', "moves with joint 'knee'"],
    },
    'triangle_10_to_50.urdf': {
        'upper_arm': ['0.004, 0.012, 0.032', '(50 % of I3)',
                      "moves with joint 'shoulder_lift'", "root_link='forearm'"],
        'forearm': ['0.01, 0.02, 0.0334', '(10.2 % of I3)',
                    "leave it out of the model with root_link='hand'"],
        'camera': ['8.67232e-06, 0.000668801, 0.00137355', '(50.7 % of I3)',
                   "moves with joint 'elbow'"],
        'finger_link': ['2.30064e-06, 3.48527e-06, 7.2659e-06', '(20.4 % of I3)'],
    },
    'not_positive_semidefinite.urdf': {
        'base_antenna_link': ['-3.53486e-08', 'not positive semi-definite',
                              "bolted to the root link 'base_footprint'", 'cannot affect'],
        'head_antenna_link': ['-3.53486e-08', "moves with joint 'head_pan'"],
        'forearm': ['-0.001, 0.01, 0.041', 'not positive semi-definite'],
    },
}

#: fixtures that only carry elements the dynamics do not read
IGNORED = ['transmissions_and_plugins.urdf', 'textures.urdf']


def fixture_path(name: str) -> str:
    return os.path.join(FIXTURES, name)


def read(name: str) -> str:
    with open(fixture_path(name), encoding='utf-8') as stream:
        return stream.read()


def compare_where_positive_definite(pair: PinPair, seeds=range(4)) -> None:
    """Compare with Pinocchio; FD and C only at states where our M is positive definite."""
    for seed in seeds:
        q, qd, qdd = pair.state(seed)
        try:
            np.linalg.cholesky(pair.ours.mass_matrix(q))
        except np.linalg.LinAlgError:
            pq, pv, pa = pair.q(q), pair.v(qd), pair.v(qdd)
            m_pin = pin.crba(pair.pin, pair.data, pq).copy()
            m_pin = np.triu(m_pin) + np.triu(m_pin, 1).T
            for what, ours, ref in (
                    ('ID', pair.ours.inverse_dynamics(q, qd, qdd),
                     pin.rnea(pair.pin, pair.data, pq, pv, pa)),
                    ('M', pair.ours.mass_matrix(q), m_pin),
                    ('g', pair.ours.gravity_torques(q),
                     pin.computeGeneralizedGravity(pair.pin, pair.data, pq))):
                err = rel_error(ours, pair.back(np.array(ref)))
                assert err <= REL, '%s differs from Pinocchio by %.3e' % (what, err)
            continue
        compare(pair, seeds=[seed])


def with_inertia(xml: str, values: dict[str, list[float]]) -> str:
    """Return the URDF with the six inertia values of some links replaced."""
    root = ElementTree.fromstring(xml)
    for link in root.findall('link'):
        if link.get('name') in values:
            inertia = link.find('inertial').find('inertia')
            for key, value in zip(KEYS, values[link.get('name')]):
                inertia.set(key, repr(float(value)))
    return ElementTree.tostring(root, encoding='unicode')


def suggestion(warning: str) -> list[float]:
    """Return the six values of the correction a warning suggests."""
    found = dict(re.findall(r'(i[xyz]{2})="([^"]+)"', warning))
    return [float(found[key]) for key in KEYS]


@pytest.mark.parametrize('name', sorted(SUSPECT))
def test_suspect_fixture_loads_with_one_warning_per_bad_link(name):
    model = RobotModel.from_urdf_file(fixture_path(name))
    expected = SUSPECT[name]
    for link, words in expected.items():
        hits = [w for w in model.warnings if w.startswith('link %r:' % link)]
        assert len(hits) == 1, (link, model.warnings)  # once, also for links on the root
        for word in words:
            assert word in hits[0], (word, hits[0])
        assert 'Suggested <inertia>' in hits[0]
        assert 'np.float64' not in hits[0]
        # only links with an actuated joint below them are suggested as root_link
        assert "root_link='camera'" not in hits[0]
    assert len(model.warnings) == len(expected), model.warnings


@pytest.mark.parametrize('name', sorted(SUSPECT))
def test_strict_refuses_each_suspect_fixture(name):
    for load in (lambda: RobotModel.from_urdf_file(fixture_path(name), strict=True),
                 lambda: RobotModel.from_urdf_string(read(name), strict=True),
                 lambda: load_urdf_file(fixture_path(name), strict=True)):
        with pytest.raises(URDFError) as info:
            load()
        message = str(info.value)
        assert 'strict' in message
        for link in SUSPECT[name]:
            assert repr(link) in message


@pytest.mark.parametrize('name', sorted(SUSPECT) + IGNORED)
def test_fixture_matches_pinocchio(name):
    pair = PinPair(read(name))
    compare_where_positive_definite(pair)


@pytest.mark.parametrize('name', sorted(SUSPECT))
def test_suggested_corrections_are_physical_and_pass_strict(name):
    xml = read(name)
    model = RobotModel.from_urdf_string(xml)
    fixed = {}
    for link in SUSPECT[name]:
        text = next(w for w in model.warnings if w.startswith('link %r:' % link))
        values = suggestion(text)
        assert inertia_defect(inertia_from_urdf(*values)) is None, (link, values)
        fixed[link] = values
    corrected = RobotModel.from_urdf_string(with_inertia(xml, fixed), strict=True)
    assert corrected.warnings == ()


@pytest.mark.parametrize('name, links', [
    ('triangle_roundoff.urdf', ['base']),
    ('not_positive_semidefinite.urdf', ['base_antenna_link']),
])
def test_defects_on_links_bolted_to_the_root_change_no_number(name, links):
    # The warning says it cannot affect fixed-base dynamics: check that it does not.
    xml = read(name)
    model = RobotModel.from_urdf_string(xml)
    other = RobotModel.from_urdf_string(with_inertia(
        xml, {link: [0.3, 0.0, 0.0, 0.2, 0.0, 0.4] for link in links}))
    rng = np.random.default_rng(3)
    for _ in range(3):
        q, qd, qdd = (rng.uniform(-1, 1, model.dof) for _ in range(3))
        assert np.array_equal(model.inverse_dynamics(q, qd, qdd),
                              other.inverse_dynamics(q, qd, qdd))
        assert np.array_equal(model.mass_matrix(q), other.mass_matrix(q))


@pytest.mark.parametrize('name', IGNORED)
def test_ignored_elements_load_without_warning_also_strict(name):
    model = RobotModel.from_urdf_file(fixture_path(name), strict=True)
    assert model.warnings == ()
    findings = check_urdf_file(fixture_path(name))
    assert not fails_strict(findings), findings


def test_no_actuated_joint_is_an_error_that_says_so():
    with pytest.raises(URDFError) as info:
        RobotModel.from_urdf_file(fixture_path('no_actuated_joint.urdf'))
    message = str(info.value)
    assert 'no actuated joint' in message and '0 degrees of freedom' in message
    assert "'base_link'" in message


def test_check_lists_the_warnings_with_corrections():
    findings = check_urdf_file(fixture_path('triangle_10_to_50.urdf'))
    assert not has_errors(findings)
    warned = {f.name for f in findings if f.severity == 'warning'}
    assert warned == set(SUSPECT['triangle_10_to_50.urdf'])
    assert all('Suggested <inertia>' in f.message for f in findings if f.severity == 'warning')
    assert fails_strict(findings)


def _cli(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    parser = cli.build_parser()
    parsed = parser.parse_args(list(args))
    return parsed.func(parsed, out), out.getvalue()


@pytest.mark.parametrize('name', sorted(SUSPECT) + IGNORED)
def test_cli_check_strict_fails_on_physics_only(name):
    code, text = _cli('check', fixture_path(name))
    assert code == 0, text  # warnings only
    code, text = _cli('check', fixture_path(name), '--strict')
    assert code == (1 if name in SUSPECT else 0), text
    if name in SUSPECT:
        for link in SUSPECT[name]:
            assert link in text


def test_cli_strict_option_refuses_suspect_models():
    path = fixture_path('triangle_roundoff.urdf')
    code, text = _cli('gravity', path, '--q', '0.3,-0.5')
    assert code == 0 and 'hip' in text
    with pytest.raises(URDFError, match='strict'):
        _cli('gravity', path, '--q', '0.3,-0.5', '--strict')


def test_check_with_root_link_notes_defects_outside_the_model():
    findings = check_urdf_file(fixture_path('triangle_10_to_50.urdf'), root_link='forearm')
    upper = [f for f in findings if f.name == 'upper_arm']
    assert len(upper) == 1 and upper[0].severity == 'info'
    assert 'outside the model' in upper[0].message
    forearm = [f for f in findings if f.name == 'forearm']
    assert len(forearm) == 1 and forearm[0].severity == 'warning'
    assert "bolted to the root link 'forearm'" in forearm[0].message


def test_cli_info_lists_each_warning_once():
    code, text = _cli('info', fixture_path('triangle_10_to_50.urdf'), '--json')
    assert code == 0
    warnings = json.loads(text)['warnings']
    for link in SUSPECT['triangle_10_to_50.urdf']:
        assert len([w for w in warnings if "link '%s':" % link in w]) == 1, warnings
