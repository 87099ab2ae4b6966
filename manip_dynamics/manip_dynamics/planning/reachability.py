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
Time-optimal path parameterization by reachability analysis (TOPP-RA), the numba kernels.

Pham and Pham, "A new approach to time-optimal path parameterization based on reachability
analysis", IEEE T-RO 34(3), 2018: along a path ``q(s)`` with grid points ``s_0 .. s_N``
(steps ``delta_i``), the path velocity squared ``x = sd^2`` and the path acceleration
``u = sdd`` obey ``x_{i+1} = x_i + 2 delta_i u_i``, and every joint limit at grid point i is
linear in ``(u, x)``: ``alpha u + beta x <= gamma`` (velocity: ``x <= (v / |q'|)^2``;
acceleration: ``|q' u + q'' x| <= a``; torque: ``|A u + B x + C| <= tau`` with A, B, C from
the inverse dynamics along the path, Craig eq. 6.59 ``tau = M qdd + V + G`` with
``qd = q' sd``, ``qdd = q' u + q'' x``). A backward pass computes the controllable sets
``K_i`` (the x from which the end, at rest, can still be reached), a greedy forward pass the
largest admissible x at each point: the time-optimal profile on the grid.

Each stage is a two-variable linear programme; it is solved exactly by eliminating u
(Fourier-Motzkin: every pair of an upper and a lower bound on u gives a bound on x), which
for the few dozen constraints of an arm is faster than any general LP solver call.
"""

import math

from numba import njit
import numpy as np

from manip_dynamics.algorithms._jit import JIT_OPTIONS

_JIT = {**JIT_OPTIONS, 'nogil': True}
#: |alpha| below this is taken as 0 (a constraint on x alone).
_TINY = 1e-12


@njit(**_JIT)
def _x_range(al, be, ga, lo, hi, extra_a, extra_b, extra_g):
    """
    Return the interval of x for which some u satisfies every ``al u + be x <= ga``.

    ``extra_*`` are two more rows (the controllable-set bounds); ``lo``/``hi`` a prior
    interval. An empty result has ``lo > hi``.
    """
    m = al.shape[0]
    a = np.empty(m + 2)
    b = np.empty(m + 2)
    g = np.empty(m + 2)
    a[:m] = al
    b[:m] = be
    g[:m] = ga
    a[m] = extra_a[0]
    a[m + 1] = extra_a[1]
    b[m] = extra_b[0]
    b[m + 1] = extra_b[1]
    g[m] = extra_g[0]
    g[m + 1] = extra_g[1]
    total = m + 2
    for k in range(total):
        if abs(a[k]) <= _TINY:
            if b[k] > 0.0:
                hi = min(hi, g[k] / b[k])
            elif b[k] < 0.0:
                lo = max(lo, g[k] / b[k])
            elif g[k] < 0.0:
                return 1.0, 0.0
    for p in range(total):
        ap = a[p]
        if ap <= _TINY:
            continue
        for q in range(total):
            aq = -a[q]
            if aq <= _TINY:
                continue
            # u <= (g_p - b_p x) / a_p and u >= -(g_q - b_q x) / aq must overlap:
            # (b_q ap + b_p aq) x <= g_p aq + g_q ap
            c = b[q] * ap + b[p] * aq
            d = g[p] * aq + g[q] * ap
            if c > 0.0:
                hi = min(hi, d / c)
            elif c < 0.0:
                lo = max(lo, d / c)
            elif d < 0.0:
                return 1.0, 0.0
    return lo, hi


@njit(**_JIT)
def _u_range(al, be, ga, x):
    """Return the interval of u allowed by ``al u + be x <= ga`` at this x."""
    lo = -np.inf
    hi = np.inf
    for k in range(al.shape[0]):
        r = ga[k] - be[k] * x
        if al[k] > _TINY:
            hi = min(hi, r / al[k])
        elif al[k] < -_TINY:
            lo = max(lo, r / al[k])
    return lo, hi


@njit(**_JIT)
def controllable_sets(al, be, ga, delta, x_cap):
    """
    Backward pass: the controllable sets ``K_i = [lo_i, hi_i]`` of x at each grid point.

    :param al: (N + 1, m) coefficients of u; ``be`` of x; ``ga`` right-hand sides.
    :param delta: (N,) grid steps ``s_{i+1} - s_i``.
    :param x_cap: (N + 1,) upper bound of x per point (the velocity limits).
    :return: (N + 1, 2) array; ``K_N = [0, 0]`` (at rest at the end). Returns the index of
        the first empty set as a negative number in ``[0, 0]`` entry (-1 - i) when the path
        cannot be followed within the limits, else the sets.
    """
    n = al.shape[0] - 1
    K = np.zeros((n + 1, 2))
    ea = np.empty(2)
    eb = np.empty(2)
    eg = np.empty(2)
    for i in range(n - 1, -1, -1):
        d2 = 2.0 * delta[i]
        # K_{i+1}.lo <= x + 2 delta u <= K_{i+1}.hi
        ea[0], eb[0], eg[0] = d2, 1.0, K[i + 1, 1]
        ea[1], eb[1], eg[1] = -d2, -1.0, -K[i + 1, 0]
        lo, hi = _x_range(al[i], be[i], ga[i], 0.0, x_cap[i], ea, eb, eg)
        if lo > hi:
            if lo - hi <= 1e-9 * max(1.0, abs(hi)):
                lo = hi
            else:
                K[0, 0] = -1.0 - i
                return K
        K[i, 0] = max(lo, 0.0)
        K[i, 1] = max(hi, 0.0)
    return K


@njit(**_JIT)
def forward_profile(al, be, ga, delta, K):
    """
    Forward pass: the greedy largest x at each grid point and the u of each step.

    :return: ``x`` (N + 1,) with ``x_0 = x_N = 0`` and ``u`` (N,).
    """
    n = al.shape[0] - 1
    x = np.zeros(n + 1)
    u = np.zeros(n)
    for i in range(n):
        d2 = 2.0 * delta[i]
        lo, hi = _u_range(al[i], be[i], ga[i], x[i])
        hi = min(hi, (K[i + 1, 1] - x[i]) / d2)
        lo = max(lo, (K[i + 1, 0] - x[i]) / d2)
        ui = hi if hi >= lo else lo  # rounding: stay inside K_{i+1}
        xn = x[i] + d2 * ui
        xn = min(max(xn, K[i + 1, 0]), K[i + 1, 1])
        if xn < 0.0:
            xn = 0.0
        u[i] = (xn - x[i]) / d2
        x[i + 1] = xn
    return x, u


@njit(**_JIT)
def _friction_sign(z):
    """Return ``tanh(z)``; exactly +-1 beyond |z| = 20, where tanh rounds to it."""
    if z > 20.0:
        return 1.0
    if z < -20.0:
        return -1.0
    return math.tanh(z)


#: Safety factor on the curvature term of the coarse check's bound (see limit_usage).
CURVE_SAFETY = 2.0
#: Added to the coarse check's bound, a share of the limit: the path terms are interpolated
#: linearly between the table's rows, and at the rows' kinks the samples' second differences
#: miss up to 6e-6 (measured: 35 of 942 pieces of an 8-waypoint cobot7 path under-bounded by
#: at most 5.7e-6); the interpolation itself is good to about 1.5e-4 (retiming._usage).
BOUND_SLACK = 1e-4


@njit(**_JIT)
def _sample_piece(p, inside, with_end, t_grid, coef, s_lo, s_hi, table, s_tab, inv_v,
                  inv_a, inv_tau, damping, coulomb, eps, k, peak, curve, prev, last):
    """
    Sample piece ``p`` at its start and ``inside`` equally spaced points (and its end).

    Writes ``peak`` (3, n), the largest |ratio| per limit kind and joint, and ``curve``
    (3, n), the largest |second difference| of the signed ratios over consecutive samples
    (``prev``, ``last``: scratch of the same shape). Returns the table row reached.
    """
    n = inv_v.shape[0]
    rows = s_tab.shape[0]
    length = t_grid[p + 1] - t_grid[p]
    samples = inside + 2 if with_end else inside + 1
    c0 = coef[p, 0]
    c1 = coef[p, 1]
    c2 = coef[p, 2]
    c3 = coef[p, 3]
    c4 = coef[p, 4]
    c5 = coef[p, 5]
    for j in range(n):
        for kind in range(3):
            peak[kind, j] = 0.0
            curve[kind, j] = 0.0
    for q in range(samples):
        h = length * q / (inside + 1.0)
        si = c0 + h * (c1 + h * (c2 + h * (c3 + h * (c4 + h * c5))))
        sdi = c1 + h * (2.0 * c2 + h * (3.0 * c3 + h * (4.0 * c4 + h * 5.0 * c5)))
        sddi = 2.0 * c2 + h * (6.0 * c3 + h * (12.0 * c4 + h * 20.0 * c5))
        si = min(max(si, s_lo), s_hi)
        # s grows along the pieces: walk the table forward (back to 0 if it did not)
        if si < s_tab[k]:
            k = 0
        while k < rows - 2 and s_tab[k + 1] <= si:
            k += 1
        w = (si - s_tab[k]) / (s_tab[k + 1] - s_tab[k])
        w0 = 1.0 - w
        x = sdi * sdi
        for j in range(n):
            dq = w0 * table[k, 0, j] + w * table[k + 1, 0, j]
            ddq = w0 * table[k, 1, j] + w * table[k + 1, 1, j]
            qd = dq * sdi
            qdd = dq * sddi + ddq * x
            t = ((w0 * table[k, 2, j] + w * table[k + 1, 2, j]) * sddi
                 + (w0 * table[k, 3, j] + w * table[k + 1, 3, j]) * x
                 + w0 * table[k, 4, j] + w * table[k + 1, 4, j]
                 + damping[j] * qd)
            if coulomb[j] != 0.0:
                t += coulomb[j] * _friction_sign(qd / eps)
            for kind in range(3):
                if kind == 0:
                    f = qd * inv_v[j]
                elif kind == 1:
                    f = qdd * inv_a[j]
                else:
                    f = t * inv_tau[j]
                peak[kind, j] = max(peak[kind, j], abs(f))
                if q >= 2:
                    curve[kind, j] = max(curve[kind, j],
                                         abs(f - 2.0 * last[kind, j] + prev[kind, j]))
                prev[kind, j] = last[kind, j]
                last[kind, j] = f
    return k


@njit(**_JIT)
def limit_usage(t_grid, coef, counts, todo, s_lo, s_hi, table, s_tab, inv_v, inv_a,
                inv_tau, damping, coulomb, eps, coarse, accept, out):
    """
    Write each piece's largest ratio to the velocity, acceleration and effort limits.

    The timing is the piecewise quintic ``s(t)`` with breakpoints ``t_grid`` (N + 1,) and
    coefficients ``coef`` (N, 6) in the time since each breakpoint, ``s`` clipped to
    ``[s_lo, s_hi]``. ``table`` (M, 5, n): rows q', q'', A, B, C of the path at ``s_tab``
    (M,), linearly interpolated at each sample's ``s``; velocity ``q' sd``, acceleration
    ``q' sdd + q'' sd^2``, effort ``A sdd + B sd^2 + C`` plus the joint friction at that
    velocity (viscous, and Coulomb with the smooth sign ``tanh(qd / eps)``). ``inv_v``,
    ``inv_a``, ``inv_tau`` (n,): the limits' reciprocals (0 = unlimited). ``out[:, i]``
    (3, N) gets piece i's usage where ``todo[i]``; other columns are left as they are.

    A piece with more than ``coarse`` check points (``counts[i]``) is first sampled at
    ``coarse`` equally spaced points inside and both ends. Between two samples a distance
    ``d`` apart a C2 function exceeds the larger of the two by at most ``d^2 / 8`` times
    its largest |second derivative|, which the samples' largest second difference
    estimates (times ``d^2``); with :data:`CURVE_SAFETY` on that estimate, the piece's
    bound per limit kind and joint is ``max |ratio| + CURVE_SAFETY / 8 * max |second
    difference| + BOUND_SLACK``. Where every bound is within ``accept``, or a sample itself
    is beyond it (the piece is over either way; the bound estimates by how much), the
    bounds are the usage. Else (a limit close, a sharp bend such as the friction's sign
    change) the piece is sampled at its start and ``counts[i]`` equally spaced points inside
    (the last piece at its end too) and the usage is the largest ratio over those samples.
    """
    pieces = t_grid.shape[0] - 1
    n = inv_v.shape[0]
    peak = np.zeros((3, n))
    curve = np.zeros((3, n))
    prev = np.zeros((3, n))
    last = np.zeros((3, n))
    k = 0
    for p in range(pieces):
        if not todo[p]:
            continue
        inside = counts[p]
        final = p == pieces - 1
        if 0 < coarse < inside:
            start = k
            k = _sample_piece(p, coarse, True, t_grid, coef, s_lo, s_hi, table, s_tab, inv_v,
                              inv_a, inv_tau, damping, coulomb, eps, k, peak, curve, prev,
                              last)
            fits = True
            over = False
            for kind in range(3):
                bound = 0.0
                for j in range(n):
                    bound = max(bound, peak[kind, j] + 0.125 * CURVE_SAFETY * curve[kind, j]
                                + BOUND_SLACK)
                    if peak[kind, j] > accept:
                        over = True
                out[kind, p] = bound
                if bound > accept:
                    fits = False
            if fits or over:
                continue
            k = start
        k = _sample_piece(p, inside, final, t_grid, coef, s_lo, s_hi, table, s_tab, inv_v,
                          inv_a, inv_tau, damping, coulomb, eps, k, peak, curve, prev, last)
        for kind in range(3):
            r = 0.0
            for j in range(n):
                r = max(r, peak[kind, j])
            out[kind, p] = r
