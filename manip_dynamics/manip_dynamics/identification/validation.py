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
Validation: torque error of models on a (held-out) recording, as numbers and a plot.

For every model the predicted torque ``ID(q, qd, qdd) + F(qd)`` (rigid body, friction and
the model's armature) at the filtered samples is compared with the measured efforts at the
same instants (unfiltered: the error includes the sensor noise, which is its floor).
"""

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from manip_dynamics.identification.data import Samples

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class TorqueReport:
    """``t`` (K,), ``measured`` (K, n), ``predicted`` name -> (K, n), ``rms`` name -> (n,)."""

    t: FloatArray
    measured: FloatArray
    predicted: dict[str, FloatArray]
    rms: dict[str, FloatArray]


def torque_report(models: dict, samples: Samples) -> TorqueReport:
    """
    Return the per-joint RMS torque error of each model on the samples.

    :param models: Label -> :class:`~manip_dynamics.RobotModel`.
    :param samples: From :func:`manip_dynamics.identification.data.prepare`.
    """
    measured = (samples.full[3][samples.index] if samples.full is not None
                else samples.tau)
    predicted = {}
    rms = {}
    for label, model in models.items():
        tau = model.inverse_dynamics(samples.q, samples.qd, samples.qdd,
                                     include_friction=True, include_armature=True)
        predicted[label] = tau
        rms[label] = np.sqrt(np.mean((tau - measured) ** 2, axis=0))
    return TorqueReport(samples.t, measured, predicted, rms)


def write_plot(path: str, report: TorqueReport, joint_names) -> None:
    """Write a PNG: measured and predicted torque per joint, RMS errors in the titles."""
    import matplotlib
    matplotlib.use('Agg')
    from matplotlib import pyplot as plt

    n = report.measured.shape[1]
    fig, axes = plt.subplots(n, 1, figsize=(9, 1.7 * n + 0.8), sharex=True)
    axes = np.atleast_1d(axes)
    t = report.t - report.t[0]
    for j in range(n):
        ax = axes[j]
        ax.plot(t, report.measured[:, j], color='0.6', lw=1.5, label='measured')
        for label, tau in report.predicted.items():
            ax.plot(t, tau[:, j], lw=0.9, label='%s (RMS %.3g)' % (label, report.rms[label][j]))
        ax.set_ylabel('%s\n[N m]' % joint_names[j], fontsize=7)
        ax.legend(fontsize=6, loc='upper right')
        ax.tick_params(labelsize=7)
    axes[-1].set_xlabel('time [s]')
    fig.suptitle('joint torques: measured and predicted', fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
