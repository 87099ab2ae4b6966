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
Retiming against TOPP-RA (the ``toppra`` package) on the same waypoints and limits.

Run: ``python benchmarks/retiming_benchmark.py`` (after ``source scripts/env.sh``;
``toppra`` and ``pin`` come with scripts/requirements-dev.txt). For random 4-waypoint moves
of cobot7 with a 2 kg payload, velocity limits from the URDF, 5 rad/s^2 and 60 % of the URDF
effort limits: the duration of both, the computation time of both (TOPP-RA with Pinocchio's
``rnea`` as its torque constraint, the way its docs build one), and how far each exceeds a
limit when sampled at 1 kHz and 10 kHz (efforts with Pinocchio). Then long paths (issue 30):
2 to 20 random waypoints (1 to 30 s) on 6- and 7-DoF arms none of the suite's tests use,
written here by varying puma560 and cobot7 (each link's mass and inertia, the lengths, the
velocity and effort limits) and three public descriptions as published (ur5, z1 and xarm7
from example-robot-data, when installed), against TOPP-RA on its own default grid, on 201
points and on as many points as ours. ``--output FILE`` replaces the ``retiming`` and
``retiming-long`` blocks of FILE.
"""

import argparse
import os
import platform
import sys
import time
import xml.etree.ElementTree as ElementTree

from doc_blocks import marked_block, replace_marked_block
import numpy as np

# the sources of this checkout, and the tests' finder of example-robot-data
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..',
                                'manip_dynamics'))
sys.path.insert(1, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..',
                                'manip_dynamics', 'test'))

import pinocchio as pin  # noqa: E402, I100
import toppra as ta  # noqa: E402
import toppra.algorithm as algo  # noqa: E402
import toppra.constraint as constraint  # noqa: E402
import urdf_factory  # noqa: E402

from manip_dynamics import RobotModel  # noqa: E402, I100, I201
from manip_dynamics.bundled import urdf_path  # noqa: E402
from manip_dynamics.planning import retime  # noqa: E402

BEGIN = '<!-- retiming:begin -->'
END = '<!-- retiming:end -->'
LONG_BEGIN = '<!-- retiming-long:begin -->'
LONG_END = '<!-- retiming-long:end -->'
#: (base arm, seed) of the varied arms of the long-path cases, and the waypoint counts.
LONG_ARMS = (('puma560', 1), ('puma560', 2), ('cobot7', 3), ('cobot7', 5))
#: Public descriptions as published (example-robot-data, a dev requirement), seed 1.
PUBLIC_ARMS = (('ur5', 'ur_description/urdf/ur5_robot.urdf'),
               ('z1', 'z1_description/urdf/z1.urdf'),
               ('xarm7', 'xarm_description/urdf/xarm7.urdf'))
LONG_WAYPOINTS = (2, 6, 12, 20)
READY = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])
ACC = 5.0
EFFORT_SCALE = 0.6
PAYLOAD = ('tool0', 2.0, [0.0, 0.0, 0.05], [0.005, 0, 0, 0.005, 0, 0.005])


def reference_model(model: RobotModel):
    """Return Pinocchio's cobot7 with the same payload and rotor inertias."""
    with open(urdf_path('cobot7'), encoding='utf-8') as stream:
        ref = pin.buildModelFromXML(stream.read())
    ref.gravity.linear = model.gravity
    frame = ref.frames[ref.getFrameId(PAYLOAD[0])]
    inertia = pin.Inertia(PAYLOAD[1], np.array(PAYLOAD[2]),
                          np.diag([PAYLOAD[3][0], PAYLOAD[3][3], PAYLOAD[3][5]]))
    ref.inertias[frame.parentJoint] += frame.placement.act(inertia)
    ref.armature = model.armature
    return ref


def overshoot(model, ref, data, sample, duration: float, rate: float) -> dict:
    """Return the largest use of each limit [1 = at the limit] sampled at ``rate``."""
    t = np.arange(0.0, duration, 1.0 / rate)
    q, qd, qdd = sample(t)
    tau = np.array([pin.rnea(ref, data, a, b, c) for a, b, c in zip(q, qd, qdd)])
    tau = tau + model.friction_torques(qd)
    return {'velocity': float(np.max(np.abs(qd) / model.velocity_limits)),
            'acceleration': float(np.max(np.abs(qdd) / ACC)),
            'effort': float(np.max(np.abs(tau) / (EFFORT_SCALE * model.effort_limits)))}


def varied_arm(name: str, seed: int) -> str:
    """
    Return the URDF of bundled arm ``name`` varied by ``seed``: an arm no test has seen.

    Every link's mass times 0.5 to 2 (its inertia with it), every length (joint origins,
    centres of mass) times one factor of 0.7 to 1.4 (inertias times its square), each
    joint's velocity limit times 0.6 to 1.5 and effort limit times 0.8 to 2.
    """
    rng = np.random.default_rng(seed)
    root = ElementTree.parse(urdf_path(name)).getroot()
    length = rng.uniform(0.7, 1.4)

    def stretch(origin) -> None:
        if origin is not None and origin.get('xyz'):
            origin.set('xyz', ' '.join(repr(float(v) * length)
                                       for v in origin.get('xyz').split()))
    for link in root.iter('link'):
        inertial = link.find('inertial')
        if inertial is None:
            continue
        factor = rng.uniform(0.5, 2.0)
        mass = inertial.find('mass')
        mass.set('value', repr(float(mass.get('value')) * factor))
        stretch(inertial.find('origin'))
        inertia = inertial.find('inertia')
        for key in inertia.attrib:
            inertia.set(key, repr(float(inertia.get(key)) * factor * length ** 2))
    for joint in root.iter('joint'):
        stretch(joint.find('origin'))
        limit = joint.find('limit')
        if limit is not None and joint.get('type') != 'fixed':
            limit.set('velocity', repr(float(limit.get('velocity')) * rng.uniform(0.6, 1.5)))
            limit.set('effort', repr(float(limit.get('effort')) * rng.uniform(0.8, 2.0)))
    return ElementTree.tostring(root, encoding='unicode')


def random_waypoints(model: RobotModel, rng: np.random.Generator, count: int) -> np.ndarray:
    """Return ``count`` waypoints, uniform in the middle half of each joint's range."""
    lower = np.maximum(model.position_lower, -3.0)
    upper = np.minimum(model.position_upper, 3.0)
    return (0.5 * (lower + upper)
            + rng.uniform(-0.5, 0.5, (count, model.dof)) * 0.5 * (upper - lower))


def run_toppra(model, ref, data, w: np.ndarray, grid: int | None = None):
    """
    Return TOPP-RA's trajectory and its computation time [s] (Pinocchio's rnea inside).

    ``grid``: that many equally spaced grid points; None: TOPP-RA's own choice.
    """
    start = time.perf_counter()
    path = ta.SplineInterpolator(np.linspace(0.0, 1.0, len(w)), w)
    vel = constraint.JointVelocityConstraint(
        np.vstack([-model.velocity_limits, model.velocity_limits]).T)
    acc = constraint.JointAccelerationConstraint(
        np.vstack([-np.full(model.dof, ACC), np.full(model.dof, ACC)]).T)
    tau = EFFORT_SCALE * model.effort_limits

    def inv_dyn(q, qd, qdd):
        return pin.rnea(ref, data, q, qd, qdd)
    torque = constraint.JointTorqueConstraint(inv_dyn, np.vstack([-tau, tau]).T,
                                              np.zeros(model.dof))
    options = {} if grid is None else {'gridpoints': np.linspace(0.0, 1.0, grid)}
    result = algo.TOPPRA([vel, acc, torque], path, **options).compute_trajectory(0, 0)
    return result, time.perf_counter() - start


def setting() -> tuple:
    """Return what both tables' headers name: limits, versions and the machine."""
    return (ACC, 100 * EFFORT_SCALE, getattr(ta, '__version__', '0.6.10'), pin.__version__,
            platform.processor() or platform.machine(), os.cpu_count(),
            platform.python_version())


def best_of(function, runs: int = 3):
    """Return ``function()``'s result and its shortest time of ``runs`` calls [s]."""
    took = []
    for _ in range(runs):
        start = time.perf_counter()
        result = function()
        took.append(time.perf_counter() - start)
    return result, min(took)


def peak_use(model, ref, data, sample, duration: float) -> float:
    """Return the largest use of any limit at 1 kHz and 10 kHz (1 = at the limit)."""
    return max(max(overshoot(model, ref, data, sample, duration, rate).values())
               for rate in (1000.0, 10000.0))


def public_arms() -> list:
    """Return ``(label, URDF text, seed)`` of PUBLIC_ARMS found installed (none: [])."""
    base = urdf_factory.example_robot_data_dir()
    if base is None:
        print('example-robot-data not installed: the public arms are left out',
              file=sys.stderr)
        return []
    found = []
    for name, rel in PUBLIC_ARMS:
        if os.path.isfile(os.path.join(base, rel)):
            with open(os.path.join(base, rel), encoding='utf-8') as stream:
                found.append(('%s (public)' % name, stream.read(), 1))
    return found


def long_paths(quick: bool) -> str:
    """Return the long-path table (Markdown), ours and TOPP-RA side by side in one run."""
    rows = []
    arms = [('%s #%d' % (name, seed), varied_arm(name, seed), seed)
            for name, seed in (LONG_ARMS[:2] if quick else LONG_ARMS)]
    for label, xml, seed in arms + ([] if quick else public_arms()):
        model = RobotModel.from_urdf_string(xml)
        ref = pin.buildModelFromXML(xml)
        ref.gravity.linear = model.gravity
        ref.armature = model.armature
        data = ref.createData()
        rng = np.random.default_rng(seed)
        for count in LONG_WAYPOINTS:
            w = random_waypoints(model, rng, count)
            try:
                retime(model, w, acceleration_limits=ACC, effort_scale=EFFORT_SCALE)
            except ValueError as error:
                rows.append('| %s (%d) | %d | refused: %s | | | | | | | | |'
                            % (label, model.dof, count, error))
                continue
            ours, t_ours = best_of(lambda: retime(model, w, acceleration_limits=ACC,
                                                  effort_scale=EFFORT_SCALE))
            grid = ours.report.grid_points
            (own, _), t_own = best_of(lambda: run_toppra(model, ref, data, w))
            (coarse, _), t_201 = best_of(lambda: run_toppra(model, ref, data, w, 201))
            (same, _), t_same = best_of(lambda: run_toppra(model, ref, data, w, grid))
            use = [peak_use(model, ref, data, ours.sample, ours.duration)]
            for traj in (own, coarse, same):
                use.append(float('nan') if traj is None else peak_use(
                    model, ref, data, lambda t, x=traj: (x(t), x(t, 1), x(t, 2)),
                    traj.duration))
            durations = [ours.duration] + [float('nan') if x is None else x.duration
                                           for x in (own, coarse, same)]
            rows.append(
                '| %s (%d) | %d | %.2f / %.2f / %.2f / %.2f | %.1f (%d, %d) | %.1f | %.2f '
                '| %.1f | %.2f | %.1f | %.2f | %.4f / %.4f / %.4f / %.4f |'
                % (label, model.dof, count, *durations, 1e3 * t_ours, grid,
                   ours.report.repairs, 1e3 * t_own, t_ours / t_own, 1e3 * t_201,
                   t_ours / t_201, 1e3 * t_same, t_ours / t_same, *use))
            print(rows[-1], flush=True)
    head = ('Long paths (issue 30): 2 to 20 random waypoints in the middle half of each '
            "joint's range, on arms varied from puma560 (6 DoF) and cobot7 (7 DoF) by a "
            'seed (`varied_arm`: masses and inertias, lengths, velocity and effort limits), '
            'and three public descriptions as published (ur5, z1, xarm7 from '
            'example-robot-data, with their friction), '
            'URDF velocity limits, %g rad/s^2, %d %% of the effort limits, no payload. '
            'Computation: best of 3 [ms], both in one run; TOPP-RA (`toppra` %s, Pinocchio '
            '%s `rnea`) on its own default grid, on 201 points, and on as many points as '
            "ours. Durations: ours / TOPP-RA's default / 201 / same grid [s]. Peak use: the "
            'largest |value| / limit sampled at 1 kHz and 10 kHz, efforts by Pinocchio plus '
            'the URDF friction, in the same order. Machine: %s, %d cores, Python %s. Run: '
            '`python benchmarks/retiming_benchmark.py`.'
            % setting())
    return '\n'.join([head, '',
                      '| arm (DoF) | waypoints | duration [s] | ours [ms] (grid, repairs) '
                      '| TOPP-RA default [ms] | ours / it | TOPP-RA 201 [ms] | ours / it '
                      '| TOPP-RA same grid [ms] | ours / it | peak use |',
                      '| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: '
                      '| --- |'] + rows)


def main() -> None:
    """Print the comparison, optionally into a Markdown file."""
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument('--output', help='Markdown file whose retiming block is replaced')
    parser.add_argument('--quick', action='store_true', help='3 moves instead of 8')
    args = parser.parse_args()
    model = RobotModel.from_urdf_file(urdf_path('cobot7'))
    model.set_payload(*PAYLOAD)
    ref = reference_model(model)
    data = ref.createData()
    rng = np.random.default_rng(0)
    moves = 3 if args.quick else 8
    retime(model, np.array([READY, READY + 0.1]), acceleration_limits=ACC)  # compiled
    rows = []
    for k in range(moves):
        w = READY + rng.uniform(-0.5, 0.5, (4, model.dof))
        w[0] = READY
        times = []
        for _ in range(5):
            start = time.perf_counter()
            ours = retime(model, w, acceleration_limits=ACC, effort_scale=EFFORT_SCALE)
            times.append(time.perf_counter() - start)
        t_ours = float(np.median(times))
        t_ref = []
        for _ in range(5):
            theirs, took = run_toppra(model, ref, data, w)
            t_ref.append(took)
        t_ref = float(np.median(t_ref))
        if theirs is None:
            continue

        def sample_theirs(t, traj=theirs):
            return traj(t), traj(t, 1), traj(t, 2)
        worst_mine = peak_use(model, ref, data, ours.sample, ours.duration)
        worst_other = peak_use(model, ref, data, sample_theirs, theirs.duration)
        rows.append((k, ours.duration, theirs.duration, t_ours, t_ref, worst_mine,
                     worst_other))
    lines = ['Random 4-waypoint moves of cobot7 (2 kg payload at tool0), URDF velocity limits, '
             '%g rad/s^2, %d %% of the URDF effort limits; both in one run. Computation: median '
             'of 5 [ms] (TOPP-RA: `toppra` %s with Pinocchio %s `rnea` as its torque '
             'constraint). Peak use: the largest |value| / limit over the trajectory sampled at '
             '1 kHz and 10 kHz, efforts by Pinocchio plus the URDF friction. Machine: %s, %d '
             'cores, Python %s. Run: `python benchmarks/retiming_benchmark.py`.'
             % setting(), '',
             '| move | ours [s] | TOPP-RA [s] | ours / TOPP-RA | ours [ms] | TOPP-RA [ms] '
             '| peak use, ours | peak use, TOPP-RA |',
             '| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |']
    for k, d_ours, d_ref, t_ours, t_ref, p_ours, p_ref in rows:
        lines.append('| %d | %.3f | %.3f | %.3f | %.1f | %.1f | %.4f | %.4f |' % (
            k, d_ours, d_ref, d_ours / d_ref, 1e3 * t_ours, 1e3 * t_ref, p_ours, p_ref))
    table = '\n'.join(lines)
    print(table)
    long_table = long_paths(args.quick)
    print(long_table)
    if args.output:
        text = open(args.output, encoding='utf-8').read()
        text = replace_marked_block(text, BEGIN, END, table) or (
            text.rstrip() + '\n\n## Retiming against TOPP-RA\n\n'
            + marked_block(BEGIN, END, table) + '\n')
        text = replace_marked_block(text, LONG_BEGIN, LONG_END, long_table) or (
            text.replace(END, END + '\n\n' + marked_block(LONG_BEGIN, LONG_END,
                                                          long_table), 1))
        with open(args.output, 'w', encoding='utf-8') as stream:
            stream.write(text)


if __name__ == '__main__':
    main()
