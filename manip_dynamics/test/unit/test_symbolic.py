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
Tests of manip_dynamics.symbolic: the Lagrangian closed form (Craig sec. 6.9).

References: Craig's closed form of the planar 2R arm with point masses (sec. 6.7, eq. 6.58,
6.60-6.62) written out by hand below, and the model's numeric Newton-Euler / CRBA results
(themselves checked against Pinocchio elsewhere).  sympy's simplification of the 3-DoF
PUMA takes about 13 s, so the 3-DoF tests use ``simplify=False`` (about 2 s).
"""

import builtins

import numpy as np
import pytest
import urdf_factory

from manip_dynamics import InputError, RobotModel
from manip_dynamics.bundled import urdf_path

sympy = pytest.importorskip('sympy', reason='sympy not installed (optional extra)')

from manip_dynamics.symbolic import closed_form, ClosedForm  # noqa: E402

# planar_2r.urdf parameters (its header comment): point masses at the distal link ends
M1, M2, L1, L2, G0 = 2.0, 1.5, 1.0, 0.8, 9.81


def craig_2r(q, qd):
    """Craig eq. 6.60-6.62: M(q), V(q, qd), G(q) of the 2R arm with distal point masses."""
    return (urdf_factory.craig_m(L1, L2, M1, M2, q),
            urdf_factory.craig_v(L1, L2, M1, M2, q, qd),
            urdf_factory.craig_g(L1, L2, M1, M2, q, G0))


@pytest.fixture(scope='module')
def planar():
    return RobotModel.from_urdf_file(urdf_path('planar_2r'), gravity=(0.0, -G0, 0.0))


@pytest.fixture(scope='module')
def planar_cf(planar):
    return closed_form(planar, simplify=True)


@pytest.fixture(scope='module')
def puma3():
    return RobotModel.from_urdf_file(urdf_path('puma560'), tip_link='puma560_link3')


@pytest.fixture(scope='module')
def puma3_cf(puma3):
    return closed_form(puma3, simplify=False)


def random_states(n, count=8, seed=3):
    rng = np.random.default_rng(seed)
    return [(rng.uniform(-np.pi, np.pi, n), rng.uniform(-3.0, 3.0, n)) for _ in range(count)]


def test_planar_2r_matches_craig_closed_form(planar_cf):
    assert isinstance(planar_cf, ClosedForm)
    f = planar_cf.lambdify()
    for q, qd in random_states(2):
        m, v, g = f(q, qd)
        m_ref, v_ref, g_ref = craig_2r(q, qd)
        np.testing.assert_allclose(m, m_ref, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(v, v_ref, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(g, g_ref, rtol=1e-12, atol=1e-12)


def test_planar_2r_symbolic_structure(planar_cf):
    q1, q2 = planar_cf.q
    qd1, qd2 = planar_cf.qd
    # Craig eq. 6.60: M depends on q2 only; eq. 6.62: G has the compound angle q1 + q2
    assert planar_cf.M.free_symbols == {q2}
    c2 = sympy.cos(q2)
    m_ref = sympy.Matrix([[L2 ** 2 * M2 + 2 * L1 * L2 * M2 * c2 + L1 ** 2 * (M1 + M2),
                           L2 ** 2 * M2 + L1 * L2 * M2 * c2],
                          [L2 ** 2 * M2 + L1 * L2 * M2 * c2, L2 ** 2 * M2]])
    diff = (planar_cf.M - m_ref).applyfunc(sympy.expand)
    assert all(abs(float(c)) < 1e-12 for e in diff for c in sympy.Poly(e, c2).coeffs())
    assert sympy.expand(planar_cf.V - planar_cf.C * sympy.Matrix([qd1, qd2])) == \
        sympy.zeros(2, 1)


@pytest.mark.parametrize('which', ['planar', 'puma3'])
def test_lambdify_equals_numeric_model(request, which):
    model = request.getfixturevalue(which)
    cf = request.getfixturevalue(which + '_cf')
    assert cf.joint_names == model.joint_names
    f = cf.lambdify()
    for q, qd in random_states(model.dof):
        m, v, g = f(q, qd)
        scale = max(1.0, np.max(np.abs(model.mass_matrix(q))))
        np.testing.assert_allclose(m, model.mass_matrix(q), rtol=1e-10, atol=1e-10 * scale)
        np.testing.assert_allclose(v, model.coriolis_torques(q, qd), rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(g, model.gravity_torques(q), rtol=1e-10, atol=1e-10)
        c = np.array(sympy.lambdify((cf.q, cf.qd), cf.C, 'numpy')(q, qd), dtype=float)
        np.testing.assert_allclose(c @ qd, v, rtol=1e-10, atol=1e-10)


def test_christoffel_coriolis_makes_mdot_minus_2c_skew(puma3_cf):
    cf = puma3_cf
    mdot = sum((cf.M.diff(qk) * qdk for qk, qdk in zip(cf.q, cf.qd)), sympy.zeros(3, 3))
    n_fn = sympy.lambdify((cf.q, cf.qd), mdot - 2 * cf.C, 'numpy')
    for q, qd in random_states(3, count=4):
        n = np.array(n_fn(q, qd), dtype=float)
        np.testing.assert_allclose(n, -n.T, atol=1e-10)
        assert np.max(np.abs(n)) > 1e-3  # not trivially zero


@pytest.mark.parametrize('which', ['planar', 'puma3'])
def test_to_python_source_gives_the_same_numbers(request, which):
    model = request.getfixturevalue(which)
    cf = request.getfixturevalue(which + '_cf')
    source = cf.to_python()
    assert 'sympy' not in source
    namespace = {}
    exec(compile(source, '<closed_form>', 'exec'), namespace)  # noqa: S102
    fn = namespace['dynamics_terms']
    for q, qd in random_states(model.dof, count=4):
        m, v, g = fn(list(q), list(qd))
        assert m.shape == (model.dof, model.dof) and v.shape == (model.dof,)
        np.testing.assert_allclose(m, model.mass_matrix(q), atol=1e-10)
        np.testing.assert_allclose(v, model.coriolis_torques(q, qd), atol=1e-10)
        np.testing.assert_allclose(g, model.gravity_torques(q), atol=1e-10)


def test_to_latex(planar_cf):
    tex = planar_cf.to_latex()
    assert r'\ddot{q}_{1}' in tex and r'\ddot{q}_{2}' in tex
    assert r'\dot{q}_{1}' in tex
    assert r'\tau_{2}' in tex and r'\begin{align*}' in tex
    assert 'planar\\_2r\\_joint1' in tex


def test_more_than_three_joints_raises():
    model = RobotModel.from_urdf_file(urdf_path('cobot7'))
    with pytest.raises(InputError, match='at most 3'):
        closed_form(model)


def test_missing_sympy_gives_a_clear_error(planar, monkeypatch):
    real_import = builtins.__import__

    def no_sympy(name, *args, **kwargs):
        if name == 'sympy' or name.startswith('sympy.'):
            raise ImportError('No module named sympy')
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, '__import__', no_sympy)
    with pytest.raises(InputError, match='sympy is not installed: pip install sympy'):
        closed_form(planar)
