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
Closed-form dynamics of a small manipulator by the Lagrangian method (Craig sec. 6.9).

For a model of at most 3 DoF, :func:`closed_form` builds, in sympy, from the model's
kinematic parameters (joint axes and tree transforms) and its current inertial parameters
(including payloads):

* the world position of each body's centre of mass ``c_i(q)`` and its angular velocity
  ``w_i = sum_{revolute j <= i} R0_j a_j qd_j`` (root axes);
* the kinetic energy ``k = sum_i 1/2 (m_i v_ci^T v_ci + w_i^T I0_i w_i)`` with
  ``v_ci = dc_i/dq qd`` and ``I0_i = R0_i I_i R0_i^T`` (Craig eq. 6.69-6.70);
* the mass matrix ``M_ij = d^2 k / (d qd_i d qd_j)`` (from ``k = 1/2 qd^T M qd``, Craig
  eq. 6.71);
* the potential energy ``u = -sum_i m_i g^T c_i`` (Craig eq. 6.73-6.74, zero at the root
  origin);
* the Coriolis matrix from the Christoffel symbols of the first kind (Euler-Lagrange
  equations, Craig eq. 6.76-6.77; the seed lecture notes' form)::

      c_ijk = 1/2 (dM_ij/dq_k + dM_ik/dq_j - dM_jk/dq_i),   C_ij = sum_k c_ijk qd_k

  so ``V = C qd`` (Craig eq. 6.59) and ``dM/dt - 2 C`` is skew-symmetric;
* the gravity vector ``G_i = du/dq_i``.

Then ``tau = M(q) qdd + V(q, qd) + G(q)``.  Numbers enter as floats (integers as integers);
those with ``|x| < 1e-12`` (round-off of rotations by multiples of pi/2) become 0.

Cost grows quickly with the DoF (Craig sec. 6.13: the Lagrangian is O(n^4)); simplification
(``trigsimp``) of a 3-DoF spatial arm takes seconds to tens of seconds.
"""

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from manip_dynamics.errors import InputError

#: Largest number of joints :func:`closed_form` accepts.
MAX_DOF = 3
#: Numbers smaller than this in magnitude are taken as exactly zero.
ZERO_TOL = 1e-12


def _sympy():
    """Import sympy or raise InputError telling how to install it."""
    try:
        import sympy
    except ImportError:
        raise InputError('sympy is not installed: pip install sympy') from None
    return sympy


def _number(sp, x: float):
    """Return ``x`` as a sympy number: 0 below ZERO_TOL, an Integer when integral."""
    x = float(x)
    if abs(x) < ZERO_TOL:
        return sp.Integer(0)
    r = round(x)
    if abs(x - r) < ZERO_TOL * max(1.0, abs(x)):
        return sp.Integer(int(r))
    return sp.Float(x)


def _matrix(sp, a: np.ndarray):
    a = np.asarray(a, dtype=np.float64)
    if a.ndim == 1:
        return sp.Matrix([_number(sp, v) for v in a])
    return sp.Matrix([[_number(sp, v) for v in row] for row in a])


def _pythagoras(sp, expr):
    """
    Expand, rewrite even powers ``sin(x)^2k`` as ``(1 - cos(x)^2)^k`` and expand again.

    A cheap exact reduction that cancels the ``sin^2 + cos^2`` pairs which the products of
    rotation matrices create, before the (much slower) ``trigsimp``.
    """
    def is_even_sin_power(e) -> bool:
        return (e.is_Pow and isinstance(e.base, sp.sin) and e.exp.is_Integer
                and int(e.exp) >= 2)

    def rewrite(e):
        k, r = divmod(int(e.exp), 2)
        return (1 - sp.cos(e.base.args[0]) ** 2) ** k * e.base ** r

    return sp.expand(sp.expand(expr).replace(is_even_sin_power, rewrite))


def _clean(sp, expr):
    """Drop floating round-off: Float atoms with ``|x| < ZERO_TOL`` become 0."""
    tiny = {f: 0 for f in expr.atoms(sp.Float) if abs(float(f)) < ZERO_TOL}
    return expr.xreplace(tiny) if tiny else expr


@dataclass(frozen=True)
class ClosedForm:
    """
    Closed-form joint-space dynamics ``tau = M(q) qdd + V(q, qd) + G(q)``.

    Sympy matrices in the symbols ``q`` = (q1..qn) [rad or m] and ``qd`` = (qd1..qdn):
    ``M`` (n, n), ``C`` (n, n) with ``V = C qd``, ``V`` (n, 1), ``G`` (n, 1); the energies
    ``kinetic`` and ``potential`` [J]; ``qdd`` = (qdd1..qddn) for printing; ``joint_names``
    maps q_i to the model's joint i (model order).
    """

    M: Any
    C: Any
    V: Any
    G: Any
    kinetic: Any
    potential: Any
    q: tuple
    qd: tuple
    qdd: tuple
    joint_names: tuple[str, ...]
    gravity: tuple[float, float, float]
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def dof(self) -> int:
        """Return the number of joints n."""
        return len(self.q)

    def _latex_names(self) -> dict:
        names = {}
        for i, (q, qd, qdd) in enumerate(zip(self.q, self.qd, self.qdd), start=1):
            names[q] = 'q_{%d}' % i
            names[qd] = r'\dot{q}_{%d}' % i
            names[qdd] = r'\ddot{q}_{%d}' % i
        return names

    def to_latex(self) -> str:
        r"""
        Return the equations of motion in LaTeX (an ``align*`` environment).

        First ``\tau = M(q)\ddot{q} + V(q,\dot{q}) + G(q)`` with the matrices written out,
        then one equation per joint, ``\tau_i = sum_j M_ij \ddot{q}_j + V_i + G_i``.

        :return: LaTeX source (needs amsmath).
        """
        sp = _sympy()
        names = self._latex_names()

        def tex(e) -> str:
            return sp.latex(e, symbol_names=names)

        lines = [r'\boldsymbol{\tau} &= M(q)\,\ddot{q} + V(q, \dot{q}) + G(q)',
                 r'M(q) &= ' + tex(self.M),
                 r'V(q, \dot{q}) &= ' + tex(self.V),
                 r'G(q) &= ' + tex(self.G)]
        qdd = sp.Matrix(self.qdd)
        rows = self.M * qdd + self.V + self.G
        for i in range(self.dof):
            lines.append(r'\tau_{%d} &= %s' % (i + 1, tex(rows[i])))
        joints = ', '.join(r'q_{%d}: \texttt{%s}' % (i + 1, name.replace('_', r'\_'))
                           for i, name in enumerate(self.joint_names))
        return ('%% joints: %s\n\\begin{align*}\n' % joints
                + ' \\\\\n'.join(lines) + '\n\\end{align*}\n')

    def to_python(self) -> str:
        """
        Return the source of ``dynamics_terms(q, qd) -> (M, V, G)`` using math and numpy.

        Common subexpressions are shared (``sympy.cse``).  The function takes sequences of
        n numbers and returns numpy arrays M (n, n), V (n,), G (n,).

        :return: Python source text (imports included).
        """
        sp = _sympy()
        from sympy.printing.pycode import PythonCodePrinter
        printer = PythonCodePrinter({'fully_qualified_modules': True})
        n = self.dof
        exprs = list(self.M) + list(self.V) + list(self.G)
        subs, reduced = sp.cse(exprs, symbols=sp.numbered_symbols('x'))
        m_e, v_e, g_e = reduced[:n * n], reduced[n * n:n * n + n], reduced[n * n + n:]
        names = ', '.join(self.joint_names)
        out = ['import math', '', 'import numpy as np', '', '',
               'def dynamics_terms(q, qd):',
               '    """',
               '    Return M(q) (n, n), V(q, qd) (n,), G(q) (n,) of tau = M qdd + V + G.',
               '',
               '    Generated by manip_dynamics.symbolic (Lagrangian closed form).',
               '    Joints in order: %s.' % names,
               '    """']
        out.append('    %s = (%s)' % (', '.join(str(s) for s in self.q) + ',',
                                      ', '.join('float(q[%d])' % i for i in range(n))))
        out.append('    %s = (%s)' % (', '.join(str(s) for s in self.qd) + ',',
                                      ', '.join('float(qd[%d])' % i for i in range(n))))
        out.append('    _ = (math, %s, %s)  # every input is read' % (
            ', '.join(str(s) for s in self.q), ', '.join(str(s) for s in self.qd)))
        for sym, expr in subs:
            out.append('    %s = %s' % (sym, printer.doprint(expr)))
        rows = []
        for i in range(n):
            rows.append('[' + ', '.join(printer.doprint(m_e[i * n + j]) for j in range(n))
                        + ']')
        out.append('    M = np.array([%s], dtype=float)' % ', '.join(rows))
        out.append('    V = np.array([%s], dtype=float)' % ', '.join(
            printer.doprint(e) for e in v_e))
        out.append('    G = np.array([%s], dtype=float)' % ', '.join(
            printer.doprint(e) for e in g_e))
        out.append('    return M, V, G')
        return '\n'.join(out) + '\n'

    def lambdify(self):
        """
        Return a numpy function ``f(q, qd) -> (M (n, n), V (n,), G (n,))``.

        :return: The compiled function (``sympy.lambdify`` with the numpy backend).
        """
        fn = self._cache.get('lambdified')
        if fn is None:
            sp = _sympy()
            raw = sp.lambdify((list(self.q), list(self.qd)), [self.M, self.V, self.G],
                              modules='numpy')
            n = self.dof

            def fn(q, qd):
                m, v, g = raw(list(np.asarray(q, dtype=float).reshape(n)),
                              list(np.asarray(qd, dtype=float).reshape(n)))
                return (np.array(m, dtype=float).reshape(n, n),
                        np.array(v, dtype=float).reshape(n),
                        np.array(g, dtype=float).reshape(n))
            self._cache['lambdified'] = fn
        return fn


def _rotation(sp, axis, angle):
    """Rodrigues rotation matrix about the unit ``axis`` (sympy numbers) by ``angle``."""
    x, y, z = axis
    c = sp.cos(angle)
    s = sp.sin(angle)
    v = 1 - c
    return sp.Matrix([[c + v * x * x, v * x * y - s * z, v * x * z + s * y],
                      [v * x * y + s * z, c + v * y * y, v * y * z - s * x],
                      [v * x * z - s * y, v * y * z + s * x, c + v * z * z]])


def closed_form(model, *, simplify: bool = True) -> ClosedForm:
    """
    Derive ``M``, ``C``, ``V = C qd`` and ``G`` of a model symbolically (Craig sec. 6.9).

    See the module docstring for the equations.  Uses the model's current inertial
    parameters (payloads included) and gravity; friction and armature are not included.

    :param model: A :class:`~manip_dynamics.RobotModel` with at most 3 joints.
    :param simplify: Apply ``trigsimp`` to every entry (slower, shorter expressions).
    :return: A :class:`ClosedForm`.
    :raises InputError: More than 3 joints, or sympy not installed.
    """
    n = model.dof
    if n > MAX_DOF:
        raise InputError('closed_form supports at most %d joints; model %r has %d (%s): use '
                         'tip_link to select a shorter chain' % (
                             MAX_DOF, model.name, n, ', '.join(model.joint_names)))
    sp = _sympy()
    tree = model.tree
    arrays = model.body_inertia  # current inertia, payloads included
    q = sp.symbols('q1:%d' % (n + 1), real=True)
    qd = sp.symbols('qd1:%d' % (n + 1), real=True)
    qdd = sp.symbols('qdd1:%d' % (n + 1), real=True)
    gravity = _matrix(sp, model.gravity)
    R0 = [None] * n
    p0 = [None] * n
    kinetic = sp.Integer(0)
    potential = sp.Integer(0)
    qd_vec = sp.Matrix(qd)
    for i in range(n):
        axis = _matrix(sp, tree.axis[i])
        R_tree = _matrix(sp, tree.R_tree[i])
        p_tree = _matrix(sp, tree.p_tree[i])
        if tree.kind[i] == 0:  # revolute / continuous
            R = R_tree * _rotation(sp, axis, q[i])
            p = p_tree
        else:  # prismatic
            R = R_tree
            p = p_tree + R_tree * axis * q[i]
        j = int(tree.parent[i])
        if j < 0:
            R0[i], p0[i] = R, p
        else:
            R0[i], p0[i] = R0[j] * R, p0[j] + R0[j] * p
        # entries of R0 are short: trigsimp turns c1 c2 - s1 s2 into cos(q1 + q2) cheaply
        tidy_pose = (lambda e: _clean(sp, sp.trigsimp(_pythagoras(sp, e)))) if simplify \
            else (lambda e: _clean(sp, _pythagoras(sp, e)))
        R0[i] = R0[i].applyfunc(tidy_pose)
        p0[i] = p0[i].applyfunc(tidy_pose)
        mass = _number(sp, arrays.mass[i])
        com = _matrix(sp, arrays.com[i])
        inertia = _matrix(sp, arrays.inertia[i])
        c = p0[i] + R0[i] * com
        # angular velocity of body i in root axes: revolute ancestors' axes
        w = sp.zeros(3, 1)
        k = i
        while k >= 0:
            if tree.kind[k] == 0:
                w += R0[k] * _matrix(sp, tree.axis[k]) * qd[k]
            k = int(tree.parent[k])
        v = c.jacobian(q) * qd_vec
        inertia0 = R0[i] * inertia * R0[i].T
        # Craig eq. 6.69, 6.73
        kinetic += sp.Rational(1, 2) * (mass * (v.T * v)[0] + (w.T * inertia0 * w)[0])
        potential -= mass * (gravity.T * c)[0]
    kinetic = _clean(sp, _pythagoras(sp, kinetic))
    potential = _clean(sp, _pythagoras(sp, potential))
    # Craig eq. 6.71: k = 1/2 qd^T M qd
    M = sp.Matrix(n, n, lambda r, s: _clean(sp, _pythagoras(
        sp, sp.diff(kinetic, qd[r], qd[s]))))
    if simplify:
        M = M.applyfunc(lambda e: _clean(sp, sp.trigsimp(e)))
    # Christoffel symbols of the first kind (Craig eq. 6.76-6.77)
    dM = [M.diff(q[k]) for k in range(n)]
    C = sp.zeros(n, n)
    for r in range(n):
        for s in range(n):
            C[r, s] = sum(sp.Rational(1, 2) * (dM[k][r, s] + dM[s][r, k] - dM[r][s, k])
                          * qd[k] for k in range(n))
    G = sp.Matrix([sp.diff(potential, q[r]) for r in range(n)])
    V = C * qd_vec
    tidy = (lambda e: _clean(sp, sp.trigsimp(_pythagoras(sp, e)))) if simplify else \
        (lambda e: _clean(sp, _pythagoras(sp, e)))
    C = C.applyfunc(tidy)
    V = V.applyfunc(tidy)
    G = G.applyfunc(tidy)
    if simplify:
        kinetic = sp.trigsimp(kinetic)
        potential = sp.trigsimp(potential)
    return ClosedForm(M=M, C=C, V=V, G=G, kinetic=kinetic, potential=potential, q=q, qd=qd,
                      qdd=qdd, joint_names=tuple(model.joint_names),
                      gravity=tuple(float(x) for x in model.gravity))


__all__ = ['ClosedForm', 'closed_form', 'MAX_DOF']
