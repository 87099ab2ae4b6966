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

"""The PNG plot of ``manip-dynamics simulate`` (matplotlib, Agg backend, no display)."""

from collections.abc import Sequence

import numpy as np


def plot_simulation(path: str, result: object, joint_names: Sequence[str],
                    position_units: Sequence[str], title: str = '') -> None:
    """
    Write a 4-panel PNG: joint positions, velocities, torques, and total energy over time.

    :param path: Output PNG file.
    :param result: A SimulationResult (``t q qd tau kinetic potential energy``).
    :param joint_names: Joint names (legend), model order.
    :param position_units: 'rad' or 'm' per joint (axis labels).
    :param title: Figure title.
    """
    import matplotlib
    matplotlib.use('Agg', force=True)
    from matplotlib import pyplot as plt

    t = np.asarray(result.t)
    unit = 'rad' if all(u == 'rad' for u in position_units) else 'rad | m'
    torque = 'N m' if unit == 'rad' else 'N m | N'
    fig, axes = plt.subplots(4, 1, figsize=(9, 11), sharex=True)
    panels = [(result.q, 'position [%s]' % unit), (result.qd, 'velocity [%s/s]' % unit),
              (result.tau, 'applied torque [%s]' % torque)]
    for ax, (values, label) in zip(axes, panels):
        values = np.asarray(values)
        for i, name in enumerate(joint_names):
            ax.plot(t, values[:, i], label=name, linewidth=1.2)
        ax.set_ylabel(label)
        ax.grid(True, alpha=0.3)
    axes[0].legend(loc='upper right', fontsize='small', ncol=max(1, len(joint_names) // 4))
    ax = axes[3]
    ax.plot(t, np.asarray(result.energy), color='k', label='total')
    ax.plot(t, np.asarray(result.kinetic), color='tab:red', linewidth=0.8, label='kinetic')
    ax.plot(t, np.asarray(result.potential), color='tab:blue', linewidth=0.8,
            label='potential')
    ax.set_ylabel('energy [J]')
    ax.set_xlabel('time [s]')
    ax.grid(True, alpha=0.3)
    ax.legend(loc='upper right', fontsize='small')
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100, format='png')
    plt.close(fig)
