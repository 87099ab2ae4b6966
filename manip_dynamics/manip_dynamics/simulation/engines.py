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
Which physics moves the simulated arm: the suite's :class:`Simulator` or :class:`MujocoArm`.

Both have one interface (step, hold, reset, state, pushes), so the driver and simulator_node
do not know which one runs. ``'suite'`` integrates the description itself; ``'mujoco'``
integrates a MuJoCo model of the arm, which may differ from the description
(:mod:`.arm_variants`).
"""

from collections.abc import Callable
from dataclasses import dataclass
import os

from numpy.typing import ArrayLike

from manip_dynamics.errors import InputError
from manip_dynamics.simulation.mujoco_arm import EFFORT_STATES, import_mujoco, MujocoArm
from manip_dynamics.simulation.simulator import Simulator

#: The engines simulator_node can run.
ENGINES = ('suite', 'mujoco')


@dataclass(frozen=True)
class EngineSettings:
    """How to build the simulated arm (simulator_node's parameters of the same names)."""

    engine: str = 'suite'
    #: engine 'mujoco': MJCF or URDF file; '' = the description compiled by MuJoCo.
    mujoco_model: str = ''
    integrator: str = 'semi_implicit_euler'
    simulate_friction: bool = True
    limits: str = 'spring'
    clamp_effort: bool = True
    effort_state: str = 'applied'

    def check(self) -> None:
        """
        Refuse settings that cannot work, before any model is there.

        :raises InputError: An unknown engine or effort state, ``link_torque`` without
            MuJoCo, a ``mujoco_model`` that is not a readable file, MuJoCo not installed.
        """
        if self.engine not in ENGINES:
            raise InputError('engine must be one of %s, got %r' % (list(ENGINES), self.engine))
        if self.effort_state not in EFFORT_STATES:
            raise InputError('effort_state must be one of %s, got %r' % (
                list(EFFORT_STATES), self.effort_state))
        if self.engine == 'suite':
            if self.effort_state != 'applied':
                raise InputError("effort_state %r needs engine 'mujoco' (the suite's "
                                 'simulator reports the applied torque)' % self.effort_state)
            return
        import_mujoco()
        if self.mujoco_model and not os.path.isfile(self.mujoco_model):
            raise InputError('mujoco_model %r is not a file' % self.mujoco_model)


def simulated_arm(model, description: str, q0: ArrayLike, dt: float,
                  settings: EngineSettings,
                  on_touch: Callable[[float], object] | None = None) -> Simulator | MujocoArm:
    """
    Return the simulated arm for ``model`` at ``q0``, t = 0, kernels warm.

    :param model: The :class:`~manip_dynamics.RobotModel` of the description.
    :param description: The description's URDF text (MuJoCo compiles it when
        ``settings.mujoco_model`` is empty).
    :param q0: Start pose [rad or m], model order, shape (n,).
    :param dt: Step [s].
    :param settings: The engine and its options.
    :param on_touch: MuJoCo: called with the simulated time [s] the arm meets the scene
        (:class:`MujocoArm`); the suite's simulator has no scene.
    :raises InputError: What :class:`Simulator` or :class:`MujocoArm` refuse.
    """
    settings.check()
    if settings.engine == 'mujoco':
        return MujocoArm(model, settings.mujoco_model or description, q0, dt=dt,
                         clamp_effort=settings.clamp_effort,
                         effort_state=settings.effort_state, on_touch=on_touch)
    sim = Simulator(model, q0, dt=dt, integrator=settings.integrator,
                    include_friction=settings.simulate_friction, limits=settings.limits,
                    clamp_effort=settings.clamp_effort)
    sim.warm_up()
    return sim
