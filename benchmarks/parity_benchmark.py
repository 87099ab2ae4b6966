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
Per-call parity with Pinocchio (and the simulator against MuJoCo), side by side in one run.

Run after ``source scripts/env.sh``::

    python benchmarks/parity_benchmark.py [--output docs/BENCHMARKS.md] [--quick]

Every row of issue 10's table: single-state inverse dynamics, mass matrix, forward
dynamics, gravity, Coriolis matrix and the tip Jacobian (world axes) on Panda
(example-robot-data) and cobot7 (bundled), forward dynamics on a 120-joint chain, a
10,000-state inverse-dynamics batch against a Python loop of ``pin.rnea``, one
``Simulator.step`` against one ``mujoco.mj_step`` (skipped with the reason when MuJoCo is
not importable), the batch threads (1 against 2 on 100,000 states), and the cost against
the number of joints of random chains (2 to 120) as a table and a log-log plot
(``img/cost_vs_dof.png`` next to the ``--output`` file, ``out/cost_vs_dof.png`` without
one).

Times are CPU time of this process (``time.process_time``), the best of several repeats
of a timeit loop, ours and the reference measured alternately repeat by repeat: on a
machine shared with other work, CPU time and alternation keep the ratios meaningful where
wall time would not.  ``--output FILE`` replaces the block between the
``parity-benchmark`` markers of FILE (appended when missing).
"""

import argparse
import functools
import os
import sys
import time
import timeit

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, 'manip_dynamics'))
sys.path.insert(1, os.path.join(REPO, 'manip_dynamics', 'test'))
sys.path.insert(2, HERE)

import urdf_factory  # noqa: E402

from core_benchmark import fmt_time, machine_lines  # noqa: E402, I100
from doc_blocks import marked_block, replace_marked_block  # noqa: E402

from manip_dynamics import batching, robot_model_calls, RobotModel  # noqa: E402, I100
from manip_dynamics.algorithms import kernels  # noqa: E402
from manip_dynamics.bundled import urdf_path  # noqa: E402
from manip_dynamics.simulation import Simulator  # noqa: E402

try:
    import pinocchio as pin
except ImportError:
    pin = None
try:
    import mujoco
except ImportError as error:
    mujoco = None
    MUJOCO_WHY = str(error)

BEGIN = '<!-- parity-benchmark:begin -->'
END = '<!-- parity-benchmark:end -->'
PLOT = os.path.join('docs', 'img', 'cost_vs_dof.png')
GOALS = {'inverse dynamics': 1.0, 'mass matrix': 1.0, 'forward dynamics': 1.0,
         'gravity': 1.0, 'Coriolis matrix': 1.2, 'tip Jacobian (world axes)': 1.2,
         'forward dynamics, 120-joint chain': 1.2, '10,000-state batch ID': 0.15}
BATCH_WALL = '10,000-state batch ID, wall clock (%d threads)'


def cpu_pair(ours, ref, number: int, repeat: int, timer=time.process_time
             ) -> tuple[float, float]:
    """
    Return the best time per call [s] of ``ours`` and ``ref``, measured alternately.

    :param timer: ``time.process_time`` (CPU time of all threads, the default) or
        ``time.perf_counter`` (wall clock).
    """
    ours()
    if ref is not None:
        ref()
    best = [np.inf, np.inf]
    for _ in range(repeat):
        for i, func in enumerate((ours, ref)):
            if func is None:
                continue
            t = timeit.Timer(func, timer=timer).timeit(number) / number
            best[i] = min(best[i], t)
    return best[0], best[1]


class Pair:
    """Our model and Pinocchio's from the same URDF text (joint order mapped by name)."""

    def __init__(self, xml: str) -> None:
        self.ours = RobotModel.from_urdf_string(xml)
        self.model = pin.buildModelFromXML(xml)
        self.model.gravity.linear = self.ours.gravity
        self.data = self.model.createData()
        self.idx = np.array([self.model.joints[self.model.getJointId(j)].idx_v
                             for j in self.ours.joint_names])
        assert self.model.nq == self.model.nv == self.ours.dof

    def v(self, x: np.ndarray) -> np.ndarray:
        out = np.zeros(self.model.nv)
        out[self.idx] = x
        return out

    def state(self, seed: int) -> tuple[tuple, tuple]:
        """Return a random ``(q, qd, qdd, tau)`` (ours, tau its torques) and Pinocchio's."""
        rng = np.random.default_rng(seed)
        q, qd, qdd = (rng.uniform(-1.0, 1.0, self.ours.dof) for _ in range(3))
        ours = (q, qd, qdd, self.ours.inverse_dynamics(q, qd, qdd))
        return ours, tuple(self.v(x) for x in ours)


def robot_rows(label: str, xml: str, tip: str, number: int, repeat: int) -> list[tuple]:
    """Return ``(row, robot, ours [s], reference [s], reference name)`` for one robot."""
    p = Pair(xml)
    m, d, ours = p.model, p.data, p.ours
    n = ours.dof
    (q, qd, qdd, tau), (pq, pv, pa, pt) = p.state(0)
    rng = np.random.default_rng(1)
    fid = m.getFrameId(tip)
    world = pin.LOCAL_WORLD_ALIGNED
    rows = [
        ('inverse dynamics', lambda: ours.inverse_dynamics(q, qd, qdd),
         lambda: pin.rnea(m, d, pq, pv, pa), 'pin.rnea'),
        ('mass matrix', lambda: ours.mass_matrix(q), lambda: pin.crba(m, d, pq), 'pin.crba'),
        ('forward dynamics', lambda: ours.forward_dynamics(q, qd, tau),
         lambda: pin.aba(m, d, pq, pv, pt), 'pin.aba'),
        ('gravity', lambda: ours.gravity_torques(q),
         lambda: pin.computeGeneralizedGravity(m, d, pq), 'pin.computeGeneralizedGravity'),
        ('Coriolis matrix', lambda: ours.coriolis_matrix(q, qd),
         lambda: pin.computeCoriolisMatrix(m, d, pq, pv), 'pin.computeCoriolisMatrix'),
        ('tip Jacobian (world axes)', lambda: ours.jacobian(q, tip),
         lambda: pin.computeFrameJacobian(m, d, pq, fid, world),
         'pin.computeFrameJacobian (LOCAL_WORLD_ALIGNED)'),
    ]
    out = []
    for name, func, ref, ref_name in rows:
        t_ours, t_ref = cpu_pair(func, ref, number, repeat)
        out.append((name, '%s (%d)' % (label, n), t_ours, t_ref, ref_name))
    batch = 10_000
    qs, qds, qdds = (rng.uniform(-1.0, 1.0, (batch, n)) for _ in range(3))
    pqs, pvs, pas = (np.zeros((batch, m.nv)) for _ in range(3))
    pqs[:, p.idx], pvs[:, p.idx], pas[:, p.idx] = qs, qds, qdds

    def pin_loop():
        for k in range(batch):
            pin.rnea(m, d, pqs[k], pvs[k], pas[k])
    t_ours, t_ref = cpu_pair(lambda: ours.inverse_dynamics(qs, qds, qdds), pin_loop, 1,
                             repeat)
    out.append(('10,000-state batch ID', '%s (%d)' % (label, n), t_ours, t_ref,
                'Python loop of pin.rnea'))
    t_ours, t_ref = cpu_pair(lambda: ours.inverse_dynamics(qs, qds, qdds), pin_loop, 1,
                             repeat, timer=time.perf_counter)
    out.append((BATCH_WALL % batching.worker_count(),
                '%s (%d)' % (label, n), t_ours, t_ref, 'Python loop of pin.rnea'))
    return out


class _Stub:
    """The facade's fast path with nothing behind it (the Python floor of one call)."""

    def __init__(self, n: int, entry) -> None:
        self._shape = (n,)
        self._entry = entry
        self._ints = np.zeros(2 * n, dtype=np.int64)
        self._flat = np.zeros(38 * n)
        self._acc = np.zeros(3)
        self._fext = np.zeros((0, 6))

    def method(self, q, qd, qdd, *, external_wrenches=None, include_friction=False,
               include_armature=False, out=None):
        """An empty method with the signature of ``inverse_dynamics``."""
        return None

    def fast(self, q, qd, qdd, *, external_wrenches=None, include_friction=False,
             include_armature=False, out=None):
        """
        The fast path's dtype and shape checks and its result allocation, then the entry.

        With ``entry`` None nothing is called; else a compiled function of the entry's
        argument types (one that returns at once).
        """
        shape = self._shape
        f8 = _F8
        if (q.dtype is f8 and qd.dtype is f8 and qdd.dtype is f8 and q.shape == shape
                and qd.shape == shape and qdd.shape == shape
                and not (external_wrenches or include_friction or include_armature)):
            res = np.empty(shape) if out is None else out
            entry = self._entry
            if entry is not None:
                entry(0, self._ints, self._flat, False, self._acc, q, qd, qdd, self._fext, res)
            return res
        return None


_F8 = np.dtype(np.float64)


def breakdown_lines(number: int, repeat: int) -> list[str]:
    """
    Return where one single-state call's time goes (cobot7), against Pinocchio.

    Public call; the bound kernel called directly with the same arrays (the difference is
    the facade's Python); the bound kernel with zero states (argument unboxing, model
    views, scratch allocation); the rest is the dynamics of one state.  The Python floor:
    a stub with the facade's signature, checks and allocation around a compiled function
    of the entry's argument types that returns at once.
    """
    from numba import njit
    p = Pair(open(urdf_path('cobot7'), encoding='utf-8').read())
    one = Pair(urdf_factory.random_chain_urdf(1, 1))
    ours, m, d = p.ours, p.model, p.data
    n = ours.dof
    (q, qd, qdd, tau), (pq, pv, pa, pt) = p.state(5)
    K = kernels.KERNELS
    # the kernel floor: the facade's own kernel calls, so its internals beside `packed`
    (ints, flat), acc, nofe = ours.packed, ours._base_acc, robot_model_calls._NO_FEXT
    e, e2 = np.empty(0), np.empty((0, n))
    res, res_m, res_j = np.empty(n), np.empty((n, n)), np.empty((6, n))
    body, tbl = ours._body_of('tool0')
    grav = ours._gravity
    q1, v1 = np.zeros(1), np.zeros(1)
    fid = m.getFrameId('tool0')
    rows = [
        ('inverse dynamics', lambda: ours.inverse_dynamics(q, qd, qdd),
         lambda: K.dynamics(kernels.INVERSE_DYNAMICS, ints, flat, False, acc, q, qd, qdd, nofe,
                            res),
         lambda: K.dynamics(kernels.INVERSE_DYNAMICS, ints, flat, False, acc, e, e, e, nofe,
                            e),
         lambda: pin.rnea(m, d, pq, pv, pa),
         lambda: pin.rnea(one.model, one.data, q1, v1, v1), 'pin.rnea'),
        ('gravity', lambda: ours.gravity_torques(q),
         lambda: K.dynamics(kernels.INVERSE_DYNAMICS, ints, flat, False, acc, q, ours._zero_n,
                            ours._zero_n, nofe, res),
         lambda: K.dynamics(kernels.INVERSE_DYNAMICS, ints, flat, False, acc, e, e, e, nofe,
                            e),
         lambda: pin.computeGeneralizedGravity(m, d, pq),
         lambda: pin.computeGeneralizedGravity(one.model, one.data, q1),
         'pin.computeGeneralizedGravity'),
        ('forward dynamics', lambda: ours.forward_dynamics(q, qd, tau),
         lambda: K.dynamics(ours._fd_method, ints, flat, False, acc, q, qd, tau, nofe, res),
         lambda: K.dynamics(ours._fd_method, ints, flat, False, acc, e, e, e, nofe, e),
         lambda: pin.aba(m, d, pq, pv, pt),
         lambda: pin.aba(one.model, one.data, q1, v1, v1), 'pin.aba'),
        ('mass matrix', lambda: ours.mass_matrix(q),
         lambda: K.matrices(kernels.MASS_MATRIX, ints, flat, False, q, q, res_m),
         lambda: K.matrices(kernels.MASS_MATRIX, ints, flat, False, e, e, e2),
         lambda: pin.crba(m, d, pq), lambda: pin.crba(one.model, one.data, q1), 'pin.crba'),
        ('tip Jacobian', lambda: ours.jacobian(q, 'tool0'),
         lambda: K.kinematics(kernels.JACOBIAN, ints, flat, body, tbl, False, grav, q, q,
                              res_j),
         lambda: K.kinematics(kernels.JACOBIAN, ints, flat, body, tbl, False, grav, e, e, e2),
         lambda: pin.computeFrameJacobian(m, d, pq, fid, pin.LOCAL_WORLD_ALIGNED),
         lambda: pin.computeJointJacobian(one.model, one.data, q1, 1),
         'pin.computeFrameJacobian'),
    ]
    lines = ['| call (cobot7, 7 DoF) | ours | facade (Python) | kernel call, 0 states | '
             'dynamics of 1 state | Pinocchio | Pinocchio on a 1-joint chain |',
             '| --- | ---: | ---: | ---: | ---: | ---: | ---: |']
    for name, public, kernel, empty, ref, ref_one, ref_name in rows:
        t_pub, t_ref = cpu_pair(public, ref, number, repeat)
        t_ker, t_one = cpu_pair(kernel, ref_one, number, repeat)
        t_empty, _ = cpu_pair(empty, None, number, repeat)
        lines.append('| %s | %s | %s | %s | %s | %s (`%s`) | %s |' % (
            name, fmt_time(t_pub), fmt_time(t_pub - t_ker), fmt_time(t_empty),
            fmt_time(t_ker - t_empty), fmt_time(t_ref), ref_name, fmt_time(t_one)))

    def noop(op, ints, flat, use_armature, base_acc, q, qd, x, fext, out):
        return 0
    noop_kernel = njit(noop).compile(kernels.DYNAMICS_SIG)
    stub, bare = _Stub(n, noop_kernel), _Stub(n, None)
    t_method, _ = cpu_pair(lambda: stub.method(q, qd, qdd), None, number, repeat)
    t_checks, _ = cpu_pair(lambda: bare.fast(q, qd, qdd), None, number, repeat)
    t_noop, _ = cpu_pair(lambda: stub.fast(q, qd, qdd), None, number, repeat)
    t_bare, _ = cpu_pair(lambda: noop_kernel(0, ints, flat, False, acc, q, qd, qdd, nofe, res),
                         None, number, repeat)
    lines += ['', 'The Python floor of one inverse-dynamics call, measured on a stub: an '
              'empty method with the same signature %s; with the dtype and shape checks of the '
              'fast path and the result allocation %s; with a compiled call of the argument '
              'types of the entry that returns at once %s (that call alone: %s).' % (
                  fmt_time(t_method), fmt_time(t_checks), fmt_time(t_noop),
                  fmt_time(t_bare))]
    lines += ['', fixed_cost_line(ours, number, repeat)]
    return lines


def fixed_cost_line(ours: RobotModel, number: int, repeat: int) -> str:
    """
    Return what the forward-dynamics entry costs before its first state (cobot7).

    Probes compiled with the kernels' options (GIL released) and the entry's signature:
    one that returns at once; one that also unpacks the model's views; one that also makes
    the four scratch arrays of the Cholesky path; then the entry itself with 0 states (the
    rest: the per-state views and the zeroed row).  And the entry compiled holding the GIL,
    against the real one, on one state.
    """
    from numba import njit
    from manip_dynamics.algorithms._jit import JIT_OPTIONS
    from manip_dynamics.algorithms.packed import unpack
    options = {k: v for k, v in JIT_OPTIONS.items() if k != 'cache'}

    def returns(op, ints, flat, use_armature, base_acc, q, qd, x, fext, out):
        return 0

    def unpacks(op, ints, flat, use_armature, base_acc, q, qd, x, fext, out):
        parent, kind, axis, R_tree, p_tree, mass, com, inertia, armature = unpack(ints, flat)
        return int(kind[0] + axis[0, 0] + R_tree[0, 0, 0] + p_tree[0, 0] + mass[0] + com[0, 0]
                   + inertia[0, 0, 0] + armature[0] > 1e300)

    def allocates(op, ints, flat, use_armature, base_acc, q, qd, x, fext, out):
        parent, kind, axis, R_tree, p_tree, mass, com, inertia, armature = unpack(ints, flat)
        n = parent.shape[0]
        # the Cholesky path's scratch, as in kernels.dynamics
        mats = np.empty((2, n, 3, 3))
        vec = np.empty((7, n, 3))
        st = np.empty((7, n))
        M = np.empty((n, n))
        mats[0, 0, 0, 0] = vec[0, 0, 0] = st[0, 0] = M[0, 0] = 0.0
        return int(kind[0] + axis[0, 0] + R_tree[0, 0, 0] + p_tree[0, 0] + mass[0] + com[0, 0]
                   + inertia[0, 0, 0] + armature[0] + mats[0, 0, 0, 0] + vec[0, 0, 0]
                   + st[0, 0] + M[0, 0] > 1e300)

    probes = [njit(**options)(f).compile(kernels.DYNAMICS_SIG)
              for f in (returns, unpacks, allocates)]
    held = njit(**{k: v for k, v in options.items() if k != 'nogil'})(
        kernels.dynamics.py_func).compile(kernels.DYNAMICS_SIG)
    e, nofe, code = np.empty(0), robot_model_calls._NO_FEXT, ours._fd_method
    empty = (code, *ours.packed, False, ours._base_acc, e, e, e, nofe, e)
    times = [cpu_pair(lambda f=f: f(*empty), None, number, repeat)[0]
             for f in probes + [kernels.KERNELS.dynamics]]
    q = np.full(ours.dof, 0.3)
    one = (code, *ours.packed, False, ours._base_acc, q, q, q, nofe, np.empty(ours.dof))
    t_released, t_held = cpu_pair(lambda: kernels.KERNELS.dynamics(*one), lambda: held(*one),
                                  number, repeat)
    return ('Inside the forward-dynamics entry before its first state (cobot7, compiled '
            'probes of the same signature, GIL released): the call returns at once %s; '
            "unpacking the model's views adds %s; the four scratch arrays of the Cholesky "
            'path add %s; the entry with 0 states costs %s (the rest, %s, is the per-state '
            'views and the zeroed row). The same entry holding the GIL, on one state: %s '
            'against %s with the GIL released.' % (
                fmt_time(times[0]), fmt_time(times[1] - times[0]),
                fmt_time(times[2] - times[1]), fmt_time(times[3]),
                fmt_time(times[3] - times[2]), fmt_time(t_held), fmt_time(t_released)))


def chain_fd_row(number: int, repeat: int) -> tuple:
    """Return the 120-joint forward-dynamics row."""
    p = Pair(urdf_factory.random_chain_urdf(120, 120))
    rng = np.random.default_rng(1)
    q, qd, tau = (rng.uniform(-1.0, 1.0, 120) for _ in range(3))
    pq, pv, pt = p.v(q), p.v(qd), p.v(tau)
    t_ours, t_ref = cpu_pair(lambda: p.ours.forward_dynamics(q, qd, tau),
                             lambda: pin.aba(p.model, p.data, pq, pv, pt), number, repeat)
    return ('forward dynamics, 120-joint chain', 'chain (120)', t_ours, t_ref, 'pin.aba')


def simulator_rows(number: int, repeat: int) -> tuple[list[tuple], str]:
    """Return the Simulator.step rows (against mj_step when MuJoCo is importable)."""
    path = urdf_path('cobot7')
    ours = RobotModel.from_urdf_file(path)
    n = ours.dof
    q0 = np.full(n, 0.2)
    # the defaults: URDF joint friction and spring joint limits keep a long unactuated
    # run bounded (the timing loops step it for minutes of simulated time)
    sim = Simulator(ours, q0, dt=1e-3)
    tau = np.zeros(n)
    rows = []
    note = ''
    step_mj = None
    if mujoco is None:
        note = 'MuJoCo row skipped: mujoco is not importable (%s).' % MUJOCO_WHY
    else:
        with open(path, encoding='utf-8') as f:
            mj = mujoco.MjModel.from_xml_string(f.read())
        mj.opt.timestep = 1e-3
        mj.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONTACT)
        data = mujoco.MjData(mj)
        data.qpos[:] = 0.2

        step_mj = functools.partial(mujoco.mj_step, mj, data)
        note = ('MuJoCo %s loads the same URDF (contacts disabled, 1 ms step, its default '
                'semi-implicit Euler); `mj_step` is called once per step from Python, like '
                '`Simulator.step` (semi-implicit Euler with the URDF friction and the spring '
                'joint limits, its defaults).' % mujoco.__version__)
    t_ours, t_ref = cpu_pair(lambda: sim.step(tau), step_mj, number, repeat)
    rows.append(('simulator: one step', 'cobot7 (%d)' % n, t_ours,
                 t_ref if step_mj is not None else np.nan, 'mujoco.mj_step'))
    t_roll, _ = cpu_pair(lambda: sim.step(tau, steps=1000), None, max(1, number // 1000),
                         repeat)
    rows.append(('simulator: rollout, per step (`step(tau, steps=1000)`)', 'cobot7 (%d)' % n,
                 t_roll / 1000, t_ref if step_mj is not None else np.nan, 'mujoco.mj_step'))
    return rows, note


def thread_lines() -> list[str]:
    """Return the batch-thread measurement: 100,000 states, 1 against 2 threads."""
    ours = RobotModel.from_urdf_file(urdf_path('cobot7'))
    count = 100_000
    qs = np.random.default_rng(2).uniform(-1.0, 1.0, (count, ours.dof))
    ours.inverse_dynamics(qs[:4096], qs[:4096], qs[:4096])
    results = {}
    saved = robot_model_calls.PARALLEL_MIN_STATES
    try:
        for label, threshold in (('1 thread', count + 1), ('2 threads', saved)):
            robot_model_calls.PARALLEL_MIN_STATES = threshold
            best = None
            for _ in range(5):
                wall, cpu = time.perf_counter(), time.process_time()
                ours.inverse_dynamics(qs, qs, qs)
                wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
                if best is None or wall < best[0]:
                    best = (wall, cpu)
            results[label] = best
    finally:
        robot_model_calls.PARALLEL_MIN_STATES = saved
    lines = ['| threads | wall | CPU (all threads) | CPU / wall |', '| --- | ---: | ---: | ---: |']
    for label, (wall, cpu) in results.items():
        lines.append('| %s | %s | %s | %.2f |' % (label, fmt_time(wall), fmt_time(cpu),
                                                  cpu / wall))
    lines += ['', 'Wall-clock speed-up of 2 threads over 1: **%.2fx** (best of 5 each; '
              'load average at the end %s).' % (
                  results['1 thread'][0] / results['2 threads'][0],
                  ', '.join('%.1f' % x for x in os.getloadavg()))]
    return lines


CURVE_DOFS = (2, 5, 10, 20, 30, 50, 80, 120)


def dof_curves(number: int, repeat: int) -> tuple[list[str], dict]:
    """Return the cost-against-DoF table and the series for the plot."""
    series = {k: [] for k in ('ID', 'M', 'FD auto', 'FD ABA', 'pin.rnea', 'pin.crba',
                              'pin.aba')}
    for n in CURVE_DOFS:
        p = Pair(urdf_factory.random_chain_urdf(n, n))
        ours = p.ours
        rng = np.random.default_rng(n)
        q, qd, x = (rng.uniform(-1.0, 1.0, n) for _ in range(3))
        pq, pv, px = p.v(q), p.v(qd), p.v(x)
        m, d = p.model, p.data
        calls = int(max(20, number * 10 / n))
        for key, ref_key, func, ref in (
                ('ID', 'pin.rnea', lambda: ours.inverse_dynamics(q, qd, x),
                 lambda: pin.rnea(m, d, pq, pv, px)),
                ('M', 'pin.crba', lambda: ours.mass_matrix(q), lambda: pin.crba(m, d, pq)),
                ('FD auto', 'pin.aba', lambda: ours.forward_dynamics(q, qd, x),
                 lambda: pin.aba(m, d, pq, pv, px))):
            t_ours, t_ref = cpu_pair(func, ref, calls, repeat)
            series[key].append(t_ours)
            series[ref_key].append(t_ref)
        series['FD ABA'].append(cpu_pair(
            lambda: ours.forward_dynamics(q, qd, x, method='aba'), None, calls, repeat)[0])
    keys = list(series)
    lines = ['| DoF | %s |' % ' | '.join('`%s`' % k for k in keys),
             '| ---: |%s' % (' ---: |' * len(keys))]
    for i, n in enumerate(CURVE_DOFS):
        lines.append('| %d | %s |' % (n, ' | '.join(fmt_time(series[k][i]) for k in keys)))
    dofs = np.array(CURVE_DOFS, dtype=float)
    big = dofs >= 20
    lines += ['', 'Slope k of t ~ n^k over n >= 20 (least squares on log-log; a fixed '
              'per-call cost flattens it at small n):', '']
    for k in keys:
        slope = np.polyfit(np.log(dofs[big]), np.log(np.array(series[k])[big]), 1)[0]
        lines.append('- `%s`: k = %.2f' % (k, slope))
    return lines, series


def plot(series: dict, path: str) -> str:
    """Write the log-log cost plot; return a Markdown line (or why there is none)."""
    try:
        import matplotlib
        matplotlib.use('Agg')
        import matplotlib.pyplot as plt
    except ImportError as error:
        return 'Plot skipped: matplotlib is not importable (%s).' % error
    fig, ax = plt.subplots(figsize=(7.0, 4.5), dpi=110)
    styles = {'ID': ('C0', '-'), 'pin.rnea': ('C0', '--'), 'M': ('C1', '-'),
              'pin.crba': ('C1', '--'), 'FD auto': ('C2', '-'), 'FD ABA': ('C3', ':'),
              'pin.aba': ('C2', '--')}
    for key, values in series.items():
        color, style = styles[key]
        ax.loglog(CURVE_DOFS, np.array(values) * 1e6, style, color=color, marker='o',
                  markersize=3, label=key)
    ax.set_xlabel('joints n (random revolute chain)')
    ax.set_ylabel('CPU time per call [us]')
    ax.set_title('manip_dynamics (solid) against Pinocchio (dashed), one state per call')
    ax.grid(True, which='both', alpha=0.3)
    ax.legend(ncol=2, fontsize=8)
    fig.tight_layout()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return '![cost against DoF](img/%s)' % os.path.basename(path)


def report(quick: bool, plot_path: str) -> str:
    """Run every measurement and return the Markdown block."""
    if pin is None:
        return 'Pinocchio (`pin`) is not installed: no parity table.\n'
    number, repeat = (300, 3) if quick else (3000, 9)
    lines = ['Generated by `python benchmarks/parity_benchmark.py%s`.' % (
        ' --quick' if quick else ''), ''] + machine_lines() + [
        '- CPU time of this process per call (all threads), best of %d alternating repeats of '
        '%d calls; the "wall clock" row times the batch by the clock instead, so its threads '
        'count; ratio = ours / reference (below 1: ours is faster).' % (repeat, number), '']
    rows = []
    panda = urdf_factory.example_robot_urdf('panda')
    robots = [('Panda', panda, 'panda_hand')] if panda else []
    robots.append(('cobot7', urdf_path('cobot7'), 'tool0'))
    for label, path, tip in robots:
        with open(path, encoding='utf-8') as f:
            rows += robot_rows(label, f.read(), tip, number, repeat)
    rows.append(chain_fd_row(max(50, number // 10), repeat))
    sim_rows, sim_note = simulator_rows(number, repeat)
    rows += sim_rows
    batch_wall = BATCH_WALL % batching.worker_count()
    goals = dict(GOALS, **{batch_wall: GOALS['10,000-state batch ID']})
    order = list(goals) + [r[0] for r in sim_rows]
    rows.sort(key=lambda r: order.index(r[0]))
    lines += ['| operation | robot (DoF) | ours | reference | reference time | ratio | goal |',
              '| --- | --- | ---: | --- | ---: | ---: | --- |']
    for name, robot, t_ours, t_ref, ref_name in rows:
        goal = goals.get(name)
        ratio = t_ours / t_ref
        verdict = '' if goal is None or not np.isfinite(ratio) else '<= %gx: %s' % (
            goal, 'met' if ratio <= goal else 'not met')
        lines.append('| %s | %s | %s | `%s` | %s | %s | %s |' % (
            name, robot, fmt_time(t_ours), ref_name,
            fmt_time(t_ref) if np.isfinite(t_ref) else 'n/a',
            '%.2f' % ratio if np.isfinite(ratio) else 'n/a', verdict))
    lines += ['', sim_note, '', '#### Where the time of one call goes', '']
    lines += breakdown_lines(number, repeat)
    lines += ['', '#### Batch threads (cobot7, 100,000 states of inverse dynamics)',
              ''] + thread_lines()
    curve_lines, series = dof_curves(max(100, number // 10), repeat)
    lines += ['', '#### Cost against DoF (random revolute chains, one state per call)', '']
    lines += curve_lines + ['', plot(series, plot_path)]
    return '\n'.join(lines) + '\n'


def write_block(path: str, body: str) -> None:
    """Replace (or append) the parity-benchmark block of ``path``."""
    text = open(path, encoding='utf-8').read() if os.path.exists(path) else ''
    text = replace_marked_block(text, BEGIN, END, body) or (
        text.rstrip() + '\n\n## Per-call parity with Pinocchio\n\n'
        + marked_block(BEGIN, END, body) + '\n')
    with open(path, 'w', encoding='utf-8') as stream:
        stream.write(text)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; print the report and optionally write it into a file."""
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument('--output', help='Markdown file whose parity-benchmark block to '
                        'replace (the plot goes to docs/img/ next to it)')
    parser.add_argument('--quick', action='store_true', help='fewer repeats (a smoke run)')
    args = parser.parse_args(argv)
    # the plot goes next to the Markdown it is written into; a run that writes no Markdown
    # (a smoke run) leaves the committed plot alone and writes out/ (git-ignored)
    plot_dir = (os.path.join(os.path.dirname(os.path.abspath(args.output)), 'img')
                if args.output else os.path.join(REPO, 'out'))
    text = report(args.quick, os.path.join(plot_dir, os.path.basename(PLOT)))
    sys.stdout.write(text)
    if args.output:
        write_block(args.output, text)
    return 0


if __name__ == '__main__':
    sys.exit(main())
