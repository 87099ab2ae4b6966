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

Each stage is a two-variable linear programme, solved exactly: the interval of x for
which some u exists has ends where one upper and one lower bound on u cross (what
eliminating u pairwise, Fourier-Motzkin, gives), found by a few Newton steps on the gap
between the bounds (:func:`_x_range`), which for the few dozen constraints of an arm is
faster than any general LP solver call.
"""

import math

from numba import njit
import numpy as np

from manip_dynamics.algorithms._jit import JIT_OPTIONS

_JIT = {**JIT_OPTIONS, 'nogil': True}
#: |alpha| below this is taken as 0 (a constraint on x alone).
_TINY = 1e-12


@njit(**_JIT)
def _active_pair(al, ga, inv, slope_of, x, leftward):
    """
    Return ``(g, slope, p, q)``: the gap between the bounds on u at ``x`` and its slope.

    Every row ``al u + be x <= ga`` with ``al > 0`` bounds u from above by the line
    ``(ga - be x) / al`` in x, with ``al < 0`` from below (``inv``: ``1 / al``, 0 where
    ``al`` is about 0; ``slope_of``: ``-be / al``). ``g`` is the lowest upper line minus the
    highest lower line at ``x`` (some u exists iff ``g >= 0``; ``inf`` when a side has no
    line), ``slope`` the slope of that difference, ``p``, ``q`` the two lines' rows. Where
    lines tie at ``x``, the ones active on the side ``leftward`` (True: smaller x) are
    taken; any choice gives a line that lies above the gap, a concave function, everywhere.
    """
    up = np.inf
    up_slope = 0.0
    low = -np.inf
    low_slope = 0.0
    p = -1
    q = -1
    for k in range(al.shape[0]):
        a = al[k]
        if a > _TINY:
            s = slope_of[k]
            v = ga[k] * inv[k] + s * x
            if v < up or (v == up and ((s > up_slope) if leftward else (s < up_slope))):
                up, up_slope, p = v, s, k
        elif a < -_TINY:
            s = slope_of[k]
            v = ga[k] * inv[k] + s * x
            if v > low or (v == low and ((s < low_slope) if leftward else (s > low_slope))):
                low, low_slope, q = v, s, k
    if p < 0 or q < 0:
        return np.inf, 0.0, p, q
    return up - low, up_slope - low_slope, p, q


@njit(**_JIT)
def _x_range(al, be, ga, lo, hi, inv, slope_of):
    """
    Return the interval of x for which some u satisfies every ``al u + be x <= ga``.

    ``lo``/``hi``: a prior interval. An empty result has ``lo > hi``. ``inv``,
    ``slope_of``: scratch of the rows' length.

    The rows without u bound x directly. The gap ``g(x)`` between the lowest upper and the
    highest lower bound on u (:func:`_active_pair`) is concave and piecewise linear in x,
    and the interval is where ``g >= 0``. Each end is found by Newton steps inward from the
    prior end: the line of g's active piece (one upper and one lower row) lies above g, so
    its root lies between the last point and the end sought; the steps stop when the same
    pair is active again, at that pair's crossing (computed from the two rows, as the
    pairwise elimination of u, Fourier-Motzkin, would), usually after 1 to 3 steps of
    O(rows) each instead of O(rows^2).
    """
    for k in range(al.shape[0]):
        if abs(al[k]) <= _TINY:
            inv[k] = 0.0
            slope_of[k] = 0.0
            if be[k] > 0.0:
                hi = min(hi, ga[k] / be[k])
            elif be[k] < 0.0:
                lo = max(lo, ga[k] / be[k])
            elif ga[k] < 0.0:
                return 1.0, 0.0
        else:
            inv[k] = 1.0 / al[k]
            slope_of[k] = -be[k] * inv[k]
    if lo > hi:
        return lo, hi
    steps = al.shape[0] + 2
    for leftward in (True, False):
        x = hi if leftward else lo
        last_p = -1
        last_q = -1
        for _ in range(steps):
            g, slope, p, q = _active_pair(al, ga, inv, slope_of, x, leftward)
            if g >= 0.0 or (p == last_p and q == last_q):
                break
            # the gap grows no more toward the other end: empty
            if (slope >= 0.0) if leftward else (slope <= 0.0):
                return 1.0, 0.0
            ap = al[p]
            aq = al[q]
            x = (ga[q] * ap - ga[p] * aq) / (be[q] * ap - be[p] * aq)
            if not lo <= x <= hi:
                return 1.0, 0.0
            last_p = p
            last_q = q
        if leftward:
            hi = x
        else:
            lo = x
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
def scale_rows(ga, kind, phi):
    """
    Return ``ga`` (N + 1, m) with each entry times its limit factor: ``phi[kind]`` there.

    ``kind`` (N + 1, m): the row of ``phi`` (3, N + 1) that scales the entry, -1 for none.
    """
    out = np.empty_like(ga)
    for i in range(ga.shape[0]):
        for k in range(ga.shape[1]):
            c = kind[i, k]
            out[i, k] = ga[i, k] * phi[c, i] if c >= 0 else ga[i, k]
    return out


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
    m = al.shape[1]
    K = np.zeros((n + 1, 2))
    # one stage's rows and two more: K_{i+1}.lo <= x + 2 delta u <= K_{i+1}.hi
    a = np.empty(m + 2)
    b = np.empty(m + 2)
    g = np.empty(m + 2)
    inv = np.empty(m + 2)
    slope_of = np.empty(m + 2)
    b[m] = 1.0
    b[m + 1] = -1.0
    for i in range(n - 1, -1, -1):
        d2 = 2.0 * delta[i]
        a[:m] = al[i]
        b[:m] = be[i]
        g[:m] = ga[i]
        a[m] = d2
        g[m] = K[i + 1, 1]
        a[m + 1] = -d2
        g[m + 1] = -K[i + 1, 0]
        lo, hi = _x_range(a, b, g, 0.0, x_cap[i], inv, slope_of)
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
#: linearly between the grid points, and at those kinks the samples' second differences miss
#: a little (measured with twice the rows: 35 of 942 pieces of an 8-waypoint cobot7 path
#: under-bounded by at most 5.7e-6); the interpolation's own error is bounded apart
#: (retiming._interpolation_bound, good to 1e-5 of the limit where it falls short).
BOUND_SLACK = 1e-4


@njit(**_JIT)
def _sample_piece(p, inside, with_end, t_grid, coef, s_lo, s_hi, knots, poly, terms, err,
                  s_tab, inv_v, inv_a, inv_tau, damping, coulomb, eps, at, state, where,
                  peak, curve):
    """
    Sample piece ``p`` at its start and ``inside`` equally spaced points (and its end).

    Writes ``peak`` (3, n), the largest |ratio| per limit kind and joint (the effort's
    plus its interpolation bound), and ``curve`` (3, n), the largest |second difference|
    of the signed ratios over consecutive samples. ``at`` (2,): the spline piece and the
    table row reached, updated; ``state`` (5, S) and ``where`` (2, S): scratch for the
    samples' path state and rows.
    """
    n = inv_v.shape[0]
    rows = s_tab.shape[0]
    pieces = knots.shape[0] - 1
    seg = at[0]
    k = at[1]
    length = t_grid[p + 1] - t_grid[p]
    samples = inside + 2 if with_end else inside + 1
    c0 = coef[p, 0]
    c1 = coef[p, 1]
    c2 = coef[p, 2]
    c3 = coef[p, 3]
    c4 = coef[p, 4]
    c5 = coef[p, 5]
    # the path state of every sample first: sd, sdd, sd^2, the offset into the spline
    # piece and the table weight, then each joint over the samples
    for q in range(samples):
        h = length * q / (inside + 1.0)
        si = c0 + h * (c1 + h * (c2 + h * (c3 + h * (c4 + h * c5))))
        sdi = c1 + h * (2.0 * c2 + h * (3.0 * c3 + h * (4.0 * c4 + h * 5.0 * c5)))
        sddi = 2.0 * c2 + h * (6.0 * c3 + h * (12.0 * c4 + h * 20.0 * c5))
        si = min(max(si, s_lo), s_hi)
        # s grows along the pieces: walk the spline and the table forward (back to 0 if
        # it did not)
        if si < knots[seg]:
            seg = 0
        while seg < pieces - 1 and knots[seg + 1] <= si:
            seg += 1
        if si < s_tab[k]:
            k = 0
        while k < rows - 2 and s_tab[k + 1] <= si:
            k += 1
        state[0, q] = sdi
        state[1, q] = sddi
        state[2, q] = sdi * sdi
        state[3, q] = si - knots[seg]
        state[4, q] = (si - s_tab[k]) / (s_tab[k + 1] - s_tab[k])
        where[0, q] = seg
        where[1, q] = k
    for j in range(n):
        p0 = p1 = p2 = 0.0
        b0 = b1 = b2 = 0.0
        f0a = f1a = f2a = 0.0  # the ratios two samples back
        f0b = f1b = f2b = 0.0  # and one sample back
        for q in range(samples):
            sdi = state[0, q]
            sddi = state[1, q]
            x = state[2, q]
            d = state[3, q]
            w = state[4, q]
            w0 = 1.0 - w
            g = where[0, q]
            r = where[1, q]
            # q' and q'' of the cubic spline piece (highest power first)
            a3 = poly[g, 0, j]
            a2 = poly[g, 1, j]
            dq = (3.0 * a3 * d + 2.0 * a2) * d + poly[g, 2, j]
            qd = dq * sdi
            qdd = dq * sddi + (6.0 * a3 * d + 2.0 * a2) * x
            t = ((w0 * terms[r, 0, j] + w * terms[r + 1, 0, j]) * sddi
                 + (w0 * terms[r, 1, j] + w * terms[r + 1, 1, j]) * x
                 + w0 * terms[r, 2, j] + w * terms[r + 1, 2, j]
                 + damping[j] * qd)
            if coulomb[j] != 0.0:
                t += coulomb[j] * _friction_sign(qd / eps)
            e = (err[r, 0, j] * abs(sddi) + err[r, 1, j] * x + err[r, 2, j]) * inv_tau[j]
            # velocity, acceleration, effort ratios: peak and second difference
            f0 = qd * inv_v[j]
            f1 = qdd * inv_a[j]
            f2 = t * inv_tau[j]
            p0 = max(p0, abs(f0))
            p1 = max(p1, abs(f1))
            p2 = max(p2, abs(f2) + e)
            if q >= 2:
                b0 = max(b0, abs(f0 - 2.0 * f0b + f0a))
                b1 = max(b1, abs(f1 - 2.0 * f1b + f1a))
                b2 = max(b2, abs(f2 - 2.0 * f2b + f2a))
            f0a, f1a, f2a = f0b, f1b, f2b
            f0b, f1b, f2b = f0, f1, f2
        peak[0, j] = p0
        peak[1, j] = p1
        peak[2, j] = p2
        curve[0, j] = b0
        curve[1, j] = b1
        curve[2, j] = b2
    at[0] = seg
    at[1] = k


@njit(**_JIT)
def limit_usage(t_grid, coef, counts, todo, s_lo, s_hi, knots, poly, terms, err, s_tab,
                inv_v, inv_a, inv_tau, damping, coulomb, eps, coarse, accept, out):
    """
    Write each piece's largest ratio to the velocity, acceleration and effort limits.

    The timing is the piecewise quintic ``s(t)`` with breakpoints ``t_grid`` (N + 1,) and
    coefficients ``coef`` (N, 6) in the time since each breakpoint, ``s`` clipped to
    ``[s_lo, s_hi]``. The path: the cubic spline with breakpoints ``knots`` (K,) and
    coefficients ``poly`` (K - 1, 4, n), highest power first, in ``s - knots[i]``, gives
    ``q'`` and ``q''`` at each sample; velocity ``q' sd``, acceleration ``q' sdd + q'' sd^2``.
    The effort ``A sdd + B sd^2 + C`` (``terms`` (M, 3, n): A, B, C at ``s_tab`` (M,),
    linearly interpolated) plus the joint friction at that velocity (viscous, and Coulomb
    with the smooth sign ``tanh(qd / eps)``); its ratio counts with the interpolation's
    bound ``err`` (M - 1, 3, n) per table interval (``|sdd| eA + sd^2 eB + eC``) added.
    ``inv_v``, ``inv_a``, ``inv_tau`` (n,): the limits' reciprocals (0 = unlimited).
    ``out[:, i]`` (3, N) gets piece i's usage where ``todo[i]``; other columns are left as
    they are.

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
    most = 2
    for p in range(pieces):
        if todo[p]:
            most = max(most, counts[p] + 2, coarse + 2)
    state = np.empty((5, most))
    where = np.empty((2, most), dtype=np.int64)
    at = np.zeros(2, dtype=np.int64)
    start = np.zeros(2, dtype=np.int64)
    for p in range(pieces):
        if not todo[p]:
            continue
        inside = counts[p]
        final = p == pieces - 1
        if 0 < coarse < inside:
            start[:] = at
            _sample_piece(p, coarse, True, t_grid, coef, s_lo, s_hi, knots, poly, terms, err,
                          s_tab, inv_v, inv_a, inv_tau, damping, coulomb, eps, at, state,
                          where, peak, curve)
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
            at[:] = start
        _sample_piece(p, inside, final, t_grid, coef, s_lo, s_hi, knots, poly, terms, err,
                      s_tab, inv_v, inv_a, inv_tau, damping, coulomb, eps, at, state, where,
                      peak, curve)
        for kind in range(3):
            r = 0.0
            for j in range(n):
                r = max(r, peak[kind, j])
            out[kind, p] = r
