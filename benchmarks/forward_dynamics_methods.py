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
Measure the two forward-dynamics kernels side by side: ABA against CRBA + Cholesky.

Run: ``python benchmarks/forward_dynamics_methods.py`` (after ``source scripts/env.sh``).
Prints a Markdown table of the median time per state for serial chains of 2 to 120 joints
(link frames aligned with the root, diagonal inertias), for general chains (random link
orientations, full inertia tensors, off-axis centres of mass: issue 19 found the two shapes
timed differently) and for bundled robots, with Pinocchio's ``aba`` on the same state beside
them when Pinocchio is importable.  It sets ``ABA_MIN_DOF`` (robot_model_calls.py), the
number of joints from which the facade's ``method='auto'`` uses ABA.  ``--output FILE``
replaces the block between the ``fd-methods`` markers of FILE (appended when missing).
"""

import argparse
import os
import platform
import sys
import time
import timeit

from doc_blocks import marked_block, replace_marked_block
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..',
                                'manip_dynamics'))
sys.path.insert(1, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..',
                                'manip_dynamics', 'test'))

import urdf_factory  # noqa: E402, I100

from manip_dynamics import RobotModel  # noqa: E402, I100, I201
from manip_dynamics.bundled import urdf_path  # noqa: E402

try:
    import pinocchio as pin
except ImportError:  # the table then has no Pinocchio column
    pin = None


def chain_urdf(n: int, rng: np.random.Generator) -> str:
    """Return a URDF string of a serial chain of ``n`` revolute joints, random geometry."""
    links = ['<link name="l0"/>']
    joints = []
    for i in range(1, n + 1):
        axis = rng.normal(size=3)
        xyz = rng.uniform(-0.3, 0.3, 3)
        links.append(
            '<link name="l%d"><inertial><origin xyz="0.05 0.02 0.1"/><mass value="1.5"/>'
            '<inertia ixx="0.02" ixy="0" ixz="0" iyy="0.03" iyz="0" izz="0.025"/>'
            '</inertial></link>' % i)
        joints.append(
            '<joint name="j%d" type="revolute"><parent link="l%d"/><child link="l%d"/>'
            '<origin xyz="%f %f %f"/><axis xyz="%f %f %f"/>'
            '<limit effort="10" velocity="1" lower="-3" upper="3"/></joint>'
            % (i, i - 1, i, *xyz, *axis))
    return '<robot name="chain">%s%s</robot>' % (''.join(links), ''.join(joints))


def median_time(call) -> float:
    """Return the median CPU time of ``call()`` over 7 x 2000 calls [us]."""
    call()
    runs = timeit.repeat(call, number=2000, repeat=7, timer=time.process_time)
    return float(np.median(runs)) / 2000 * 1e6


def time_method(method: str, model: RobotModel, rng: np.random.Generator) -> float:
    """Return the median CPU time of one single-state ``forward_dynamics`` call [us]."""
    n = model.dof
    q, qd, tau = (rng.uniform(-1.0, 1.0, n) for _ in range(3))
    out = np.empty(n)

    def call():
        model.forward_dynamics(q, qd, tau, method=method, out=out)
    return median_time(call)


def time_pinocchio(urdf: str, model: RobotModel, rng: np.random.Generator) -> float:
    """
    Return the median CPU time of one ``pin.aba`` call on the same description [us].

    Checks first that Pinocchio and this library's 'auto' method agree on the state.
    """
    pm = pin.buildModelFromXML(urdf)
    pd = pm.createData()
    n = model.dof
    q, qd, tau = (rng.uniform(-1.0, 1.0, n) for _ in range(3))
    ours = model.forward_dynamics(q, qd, tau)
    ref = pin.aba(pm, pd, q, qd, tau)
    assert np.allclose(ours, ref, rtol=1e-8, atol=1e-8), 'FD differs from pin.aba'
    return median_time(lambda: pin.aba(pm, pd, q, qd, tau))


BEGIN = '<!-- fd-methods:begin -->'
END = '<!-- fd-methods:end -->'


def write_block(path: str, table: str) -> None:
    """Replace (or append) the marked block of ``path`` with ``table``."""
    text = open(path, encoding='utf-8').read() if os.path.exists(path) else ''
    text = replace_marked_block(text, BEGIN, END, table) or (
        text.rstrip() + '\n\n## Forward dynamics: ABA against CRBA + Cholesky\n\n'
        + marked_block(BEGIN, END, table) + '\n')
    with open(path, 'w', encoding='utf-8') as stream:
        stream.write(text)


def main() -> None:
    """Print the comparison table, optionally into a Markdown file."""
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument('--output', help='Markdown file whose fd-methods block is replaced')
    parser.add_argument('--quick', action='store_true', help='accepted for run_all.sh')
    args = parser.parse_args()
    lines = []
    rng = np.random.default_rng(0)
    urdfs = [('chain %d' % n, chain_urdf(n, rng))
             for n in (2, 5, 7, 8, 10, 12, 15, 20, 25, 30, 35, 40, 50, 120)]
    urdfs += [('general chain %d' % n, urdf_factory.random_chain_urdf(n, n))
              for n in (7, 20, 40, 120)]
    urdfs += [(name, open(urdf_path(name), encoding='utf-8').read())
              for name in ('cobot7', 'gripper_arm')]
    lines.append('Single-state `forward_dynamics(..., method=...)` CPU time per call (process '
                 'time, so other load on the machine inflates it less than wall time), median '
                 'of 7 x 2000 calls, all in one run. Machine: %s, %d cores, '
                 'Python %s, numpy %s, Pinocchio %s. '
                 'Run: `python benchmarks/forward_dynamics_methods.py`.'
                 % (platform.processor() or platform.machine(), os.cpu_count(),
                    platform.python_version(), np.__version__,
                    pin.__version__ if pin is not None else 'not installed'))
    lines.append('')
    lines.append('| model | DoF | ABA [us] | CRBA + Cholesky [us] | ABA / Cholesky '
                 "| 'auto' [us] | `pin.aba` [us] | 'auto' / `pin.aba` |")
    lines.append('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |')
    for name, urdf in urdfs:
        model = RobotModel.from_urdf_string(urdf)
        t_aba = time_method('aba', model, rng)
        t_chol = time_method('cholesky', model, rng)
        t_auto = time_method('auto', model, rng)
        t_pin = time_pinocchio(urdf, model, rng) if pin is not None else float('nan')
        lines.append('| %s | %d | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |' % (
            name, model.dof, t_aba, t_chol, t_aba / t_chol, t_auto, t_pin, t_auto / t_pin))
    table = '\n'.join(lines)
    print(table)
    if args.output:
        write_block(args.output, table)


if __name__ == '__main__':
    main()
