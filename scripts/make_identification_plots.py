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
Regenerate the plots of docs/IDENTIFICATION.md from a simulator run (no ROS, no robot).

Runs the documented procedure on the simulated "true" cobot7 (a perturbed copy of the
bundled one) through the ``manip-dynamics identify`` commands, then simulates the
gravity-compensation hold with the nominal and the identified URDF.  Writes
docs/img/identification_*.png and prints the command outputs.

Usage: ``python scripts/make_identification_plots.py [WORKDIR]``.
"""

import os
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, 'manip_dynamics'))

from manip_dynamics import cli, RobotModel  # noqa: E402
from manip_dynamics.bundled import urdf_path  # noqa: E402
from manip_dynamics.identification.excitation import read_trajectory_yaml  # noqa: E402
from manip_dynamics.identification.synthetic import perturbed_model  # noqa: E402
from manip_dynamics.identification.urdf_writer import read_joint_dynamics_yaml  # noqa: E402
from manip_dynamics.simulation import simulate  # noqa: E402


def run(*argv: str) -> None:
    """Run one CLI command, echo it, stop on failure."""
    print('$ manip-dynamics ' + ' '.join(argv), flush=True)
    code = cli.main(list(argv))
    if code != 0:
        raise SystemExit('command failed with exit code %d' % code)


def main() -> None:
    """Run the procedure and write the plots."""
    import matplotlib
    matplotlib.use('Agg')
    from matplotlib import pyplot as plt

    work = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix='identify_')
    img = os.path.join(ROOT, 'docs', 'img')
    os.makedirs(img, exist_ok=True)
    j = lambda name: os.path.join(work, name)  # noqa: E731
    run('identify', 'excite', 'cobot7', '--out', j('excite.yaml'), '--csv', j('excite.csv'),
        '--iterations', '40', '--quiet')
    run('identify', 'excite', 'cobot7', '--out', j('held_out.yaml'), '--seed', '1',
        '--iterations', '3', '--quiet')
    run('identify', 'simulate', 'cobot7', '--excitation', j('excite.yaml'), '--duration', '30',
        '--out', j('excite_run'), '--quiet')
    run('identify', 'simulate', 'cobot7', '--excitation', j('held_out.yaml'), '--duration',
        '10', '--out', j('held_out_run'), '--storage', 'mcap', '--quiet')
    run('identify', 'fit', 'cobot7', j('excite_run'), '--out', j('cobot7_identified.urdf'),
        '--quiet')
    run('identify', 'validate', 'cobot7', j('held_out_run'), '--identified',
        j('cobot7_identified.urdf'), '--joint-dynamics',
        j('cobot7_identified_joint_dynamics.yaml'), '--plot',
        os.path.join(img, 'identification_validation.png'), '--quiet')

    # the excitation, one period
    with open(j('excite.yaml'), encoding='utf-8') as stream:
        traj = read_trajectory_yaml(stream.read())
    t = np.linspace(0.0, traj.period, 500)
    q, qd, _ = traj.evaluate(t)
    nominal = RobotModel.from_urdf_file(urdf_path('cobot7'))
    fig, axes = plt.subplots(2, 1, figsize=(8, 5), sharex=True)
    for k, name in enumerate(nominal.joint_names):
        axes[0].plot(t, q[:, k], label=name.replace('cobot7_', ''))
        axes[1].plot(t, qd[:, k] / nominal.velocity_limits[k])
    axes[0].set_ylabel('q [rad]')
    axes[1].set_ylabel('qd / velocity limit')
    axes[1].set_xlabel('time [s] (one period)')
    axes[0].legend(fontsize=7, ncol=4)
    fig.suptitle('optimised excitation (Fourier series, Swevers 1997)', fontsize=9)
    fig.tight_layout()
    fig.savefig(os.path.join(img, 'identification_excitation.png'), dpi=90)
    plt.close(fig)

    # gravity compensation hold on the simulated true arm: nominal vs identified URDF
    true = perturbed_model(nominal, seed=1)     # the arm `identify simulate` simulated
    with open(j('cobot7_identified_joint_dynamics.yaml'), encoding='utf-8') as stream:
        overrides = read_joint_dynamics_yaml(stream.read())
    identified = RobotModel.from_urdf_file(j('cobot7_identified.urdf')).with_joint_dynamics(
        **overrides)
    q0 = np.array([0.0, -0.5, 0.3, -2.0, 0.2, 1.6, 0.5])
    fig, ax = plt.subplots(figsize=(7, 3.2))
    for label, comp in (('nominal URDF', nominal), ('identified URDF', identified)):
        result = simulate(true, q0, duration=5.0, dt=1e-3, record_every=10,
                          controller=lambda tt, qq, vv, c=comp: c.gravity_torques(qq))
        drift = np.max(np.abs(result.q - q0), axis=1)
        ax.semilogy(result.t, np.maximum(drift, 1e-9), label='%s (%.2g rad after 5 s)' % (
            label, drift[-1]))
        print('%s: largest joint drift after 5 s: %.3g rad' % (label, drift[-1]))
    ax.axhline(1e-3, color='k', lw=0.6, ls='--')
    ax.set_xlabel('time [s]')
    ax.set_ylabel('largest joint drift [rad]')
    ax.legend(fontsize=8)
    ax.set_title('gravity compensation on the simulated true arm', fontsize=9)
    fig.tight_layout()
    fig.savefig(os.path.join(img, 'identification_hold.png'), dpi=90)
    plt.close(fig)
    print('plots in %s, files in %s' % (img, work))


if __name__ == '__main__':
    main()
