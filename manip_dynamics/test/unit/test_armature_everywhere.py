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
One model of the rotor inertia (armature) everywhere.

cobot7 with 0.2 kg m^2 of armature on every joint follows a fast move under the computed-
torque controller, in the simulator, with their defaults; the momentum observer with its
default watches. Undisturbed, the residual stays flat; an observer without the armature
reports -I_a qdd as an external torque (the defect: the simulator and the observer had it
off by default while the controller used it).
"""

import numpy as np
import pytest

from manip_dynamics import RobotModel
from manip_dynamics.bundled import urdf_path
from manip_dynamics.control import ComputedTorqueController, TimedPoints
from manip_dynamics.observers import MomentumObserver
from manip_dynamics.ros.launch_support.ros2_control_setup import default_initial_positions
from manip_dynamics.simulation import Simulator

ARMATURE = 0.2   # [kg m^2] per joint: a geared motor's rotor inertia times the ratio squared


@pytest.fixture(scope='module')
def arm():
    with open(urdf_path('cobot7')) as stream:
        xml = stream.read()
    rigid = RobotModel.from_urdf_string(xml)
    model = rigid.with_joint_dynamics(armature=dict.fromkeys(rigid.joint_names, ARMATURE))
    return model, default_initial_positions(rigid, xml)


def run(model, q0, observers):
    """A 1 s move of every joint by 0.5 rad and back, sampled at 1 kHz; residual maxima."""
    times = np.array([0.0, 0.5, 1.0])
    points = np.array([q0, q0 + 0.5, q0])
    moves = TimedPoints(times, points, np.zeros_like(points), np.zeros_like(points))
    sim = Simulator(model, q0, dt=0.001)
    controller = ComputedTorqueController(model, 400.0, 40.0)
    controller.set_trajectory(moves, 0.0, q0)
    worst = np.zeros(len(observers))
    peak_qdd = 0.0
    for k in range(1200):
        t = 0.001 * k
        tau = controller.update(t, sim.q, sim.qd).tau
        qd_before = sim.qd.copy()
        sim.step(tau)
        peak_qdd = max(peak_qdd, float(np.max(np.abs(sim.qd - qd_before))) / 0.001)
        for i, observer in enumerate(observers):
            r = observer.update(sim.t, sim.q, sim.qd, tau)
            if k > 50:   # the observer's start-up transient (1/K = 20 ms)
                worst[i] = max(worst[i], float(np.max(np.abs(r))))
    return worst, peak_qdd


def test_an_arm_with_armature_moving_undisturbed_shows_no_external_torque(arm):
    model, q0 = arm
    (default, without), peak_qdd = run(model, q0, [
        MomentumObserver(model, 50.0),
        MomentumObserver(model, 50.0, include_armature=False)])
    # the move is fast enough that the rotors' torque I_a qdd matters ...
    assert ARMATURE * peak_qdd > 2.0
    # ... the observer without them reports it as an external torque, with them it is flat
    assert without > 1.0
    assert default < 0.1 * without and default < 0.2, (default, without)


def test_the_simulator_uses_the_armature_by_default(arm):
    model, q0 = arm
    sim = Simulator(model, q0, dt=0.001, include_friction=False, limits='none')
    qdd = np.full(model.dof, 3.0)
    tau = model.inverse_dynamics(q0, np.zeros(model.dof), qdd, include_armature=True)
    sim.step(tau)
    # one step from rest: the simulator's acceleration is the armature model's
    np.testing.assert_allclose(sim.qd / 0.001, qdd, rtol=1e-6, atol=1e-6)
