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
A physical arm nobody here wrote: a MuJoCo model stepped behind the :class:`Simulator` API.

:class:`MujocoArm` has the public interface of :class:`~manip_dynamics.simulation.Simulator`
(``step``, ``hold``, ``reset``, ``q``, ``qd``, ``t``, ``set_external_wrenches``, ...), so
:class:`~manip_dynamics.simulation.ArmDriver` and simulator_node run it unchanged; but the
motion comes from MuJoCo (soft-constraint contacts, joint armature, viscous damping and dry
``frictionloss``, the ``implicitfast`` integrator), integrating an arm that may differ from
the description the rest of the suite is given (:mod:`.arm_variants`).

* **Joints.** The engine's joints are found by name: every joint of the description must be
  a 1-DoF hinge (revolute, continuous) or slide (prismatic) joint of the engine model, and
  every engine joint a joint of the description; states and torques are in the
  description's order whatever the engine's.
* **Torque in.** The commanded effort, clamped to the description's effort limits, enters
  as a generalized force on the joint (``qfrc_applied``): an ideal torque source, as
  ros2_control's effort interface assumes.
* **Effort out** (:attr:`joint_effort`): ``'applied'`` (default) is that motor torque, what
  an effort-controlled drive reports from its current and what mujoco_ros2_control's effort
  state is; the suite's simulator reports the same, and the suite's gravity compensation and
  observer model the friction themselves. ``'link_torque'`` is what a link-side joint torque
  sensor (Franka, KUKA iiwa) measures: the motor torque less what the drive's rotor inertia,
  viscous damping and dry friction take, ``qfrc_applied + qfrc_passive -
  armature qacc + f_frictionloss`` (the frictionloss rows of MuJoCo's constraint force).
* **Pushes.** A wrench on a link (its frame, about its origin, as
  :meth:`Simulator.set_external_wrenches`) acts on the engine body that carries the link's
  joint, turned into world axes at the body's centre of mass (``xfrc_applied``) at every
  step from the pose MuJoCo computed at the start of the previous one: a follower load, one
  step (1 ms at 1 kHz) late in its direction. The engine's body frames are taken to be the
  description's link frames, as they are for a URDF compiled by MuJoCo and for the arms
  :mod:`.arm_variants` writes.
* **Time.** One step is ``dt`` (the engine's timestep is set to it); ``t = steps * dt``.
"""

from collections.abc import Callable, Mapping
import os
import threading
from typing import Any
from xml.etree import ElementTree

import numpy as np
from numpy.typing import ArrayLike, NDArray

from manip_dynamics.errors import InputError, URDFError
from manip_dynamics.inputs import float_array
from manip_dynamics.model.urdf_loader import read_robot_element
from manip_dynamics.safety.ranges import check_range
from manip_dynamics.simulation.simulator import DT_RANGE

FloatArray = NDArray[np.float64]

#: What ``joint_effort`` reports (see the module docstring).
EFFORT_STATES = ('applied', 'link_torque')
#: Collision bits: the arm's geoms collide with the scene's, neither with their own kind
#: (MuJoCo collides two geoms when ``contype1 & conaffinity2 or contype2 & conaffinity1``);
#: the suite models no self-collision either.
ARM_CONTYPE, ARM_CONAFFINITY = 2, 1
SCENE_CONTYPE, SCENE_CONAFFINITY = 1, 2
#: Impedance of MuJoCo's dry-friction constraint on a compiled URDF's joints (``solimp``:
#: dmin, dmax, width, midpoint, power). The default dmin 0.9 lets a joint creep under any
#: torque below its friction level, at a speed that grows with (1 - d) / d: cobot7 held by
#: gravity torques 0.08 N m off (joint 6, dry friction 0.3 N m) crept 6.2 mrad in 10 s;
#: with 0.99, 0.58 mrad; a real joint's stiction holds.
FRICTION_SOLIMP = [0.99, 0.99, 0.001, 0.5, 2.0]
#: Description joint types and the engine joint type each must be.
_HINGE_TYPES = ('revolute', 'continuous')
_SLIDE_TYPES = ('prismatic',)


def import_mujoco() -> Any:
    """
    Return the ``mujoco`` module, or raise a clear error where it is not installed.

    :raises InputError: MuJoCo is not importable (names the package to install).
    """
    try:
        import mujoco
    except ImportError as error:   # pragma: no cover - depends on the machine
        raise InputError('the MuJoCo engine is not installed (pip install mujoco-core, or '
                         'mujoco): %s' % error) from None
    return mujoco


def engine_spec(source: str, *, armature: ArrayLike | None = None,
                joint_names: tuple[str, ...] = ()) -> Any:
    """
    Return a MuJoCo model specification (``mujoco.MjSpec``) from an MJCF or a URDF.

    A URDF is compiled by MuJoCo itself, without its ``<visual>`` shapes and without the
    ``<collision>`` meshes MuJoCo cannot open (``package://`` paths; a relative path is read
    from the URDF's folder): its ``<dynamics damping friction>`` become the
    joints' ``damping`` and ``frictionloss``, its geometries collide with scene objects but
    not with each other (:data:`ARM_CONTYPE`), its dry friction sticks
    (:data:`FRICTION_SOLIMP`), its integrator is ``implicitfast``; rotor
    inertias, which URDF cannot state, come from ``armature`` (e.g. the suite's
    joint_dynamics file). An MJCF is taken as written.

    :param source: A file path (``.urdf``, ``.xml``, ``.mjcf``) or the XML text itself.
    :param armature: Rotor inertias [kg m^2 or kg] for the joints ``joint_names``, in that
        order, applied to a URDF only; None = none.
    :param joint_names: The joints ``armature`` is given for.
    :return: The specification, not compiled yet.
    :raises InputError: Unreadable file, XML MuJoCo refuses (its message), bad armature.
    """
    mujoco = import_mujoco()
    text = source
    if '<' not in source:
        try:
            with open(source, encoding='utf-8') as stream:
                text = stream.read()
        except OSError as error:
            raise InputError('cannot read the MuJoCo model %r: %s' % (source, error)) from None
    try:
        robot = read_robot_element(text)   # the suite's one parse of a description
    except URDFError:
        robot = None   # an MJCF, or text MuJoCo refuses below with its own message
    is_urdf = robot is not None
    folder = os.path.dirname(os.path.abspath(source)) if '<' not in source else os.getcwd()
    try:
        if robot is not None:
            # the engine reads no package:// paths: shapes of meshes it cannot open go
            spec = mujoco.MjSpec.from_string(_without_unreadable_meshes(robot, folder))
        elif '<' not in source:
            spec = mujoco.MjSpec.from_file(os.path.abspath(source))
        else:
            spec = mujoco.MjSpec.from_string(text)
    except Exception as error:   # MuJoCo raises ValueError and its own types
        raise InputError('MuJoCo cannot load the model: %s' % str(error).strip()) from None
    if is_urdf:
        spec.option.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
        for geom in spec.geoms:   # the arm touches the scene, not itself
            geom.contype, geom.conaffinity = ARM_CONTYPE, ARM_CONAFFINITY
        for joint in spec.joints:
            joint.solimp_friction = FRICTION_SOLIMP
        if armature is not None:
            values = float_array(armature, 'armature')
            if values.shape != (len(joint_names),) or np.any(values < 0.0) or not np.all(
                    np.isfinite(values)):
                raise InputError('armature must be %d finite values >= 0, got %s' % (
                    len(joint_names), values.tolist()))
            by_name = {joint.name: joint for joint in spec.joints}
            for name, value in zip(joint_names, values):
                if name in by_name:
                    by_name[name].armature = float(value)
    return spec


def _without_unreadable_meshes(robot: ElementTree.Element, folder: str) -> str:
    """Return URDF text without visuals and with only the collision meshes that exist."""
    for link in robot.iter('link'):
        for visual in link.findall('visual'):
            link.remove(visual)
        for collision in link.findall('collision'):
            mesh = collision.find('geometry/mesh')
            if mesh is None:
                continue
            path = os.path.join(folder, mesh.get('filename', ''))
            if os.path.isfile(path):
                mesh.set('filename', os.path.abspath(path))
            else:
                link.remove(collision)
    return ElementTree.tostring(robot, encoding='unicode')


class MujocoArm:
    """
    A MuJoCo model stepped as :class:`~manip_dynamics.simulation.Simulator` is stepped.

    Example::

        arm = MujocoArm(model, 'cobot7_true.xml', q0, dt=1e-3)
        arm.step(model.gravity_torques(arm.q))
        arm.q, arm.qd, arm.t, arm.joint_effort
    """

    def __init__(self, model, source: Any, q0: ArrayLike, qd0: ArrayLike | None = None, *,
                 dt: float = 1e-3, clamp_effort: bool = True,
                 effort_state: str = 'applied',
                 on_touch: Callable[[float], object] | None = None) -> None:
        """
        Load the engine model and put it at ``q0`` at t = 0.

        :param model: The :class:`~manip_dynamics.RobotModel` of the description the other
            nodes are given: joint names, order, effort limits and link frames come from it.
        :param source: The engine model: an MJCF or URDF path or text (:func:`engine_spec`,
            with the model's armature for a URDF), or a ``mujoco.MjSpec``.
        :param q0: Initial joint positions [rad or m], model order, shape (n,).
        :param qd0: Initial joint velocities, shape (n,); default zeros.
        :param dt: Step [s], in (0, 0.1]; the engine's timestep is set to it.
        :param clamp_effort: Clamp commanded torques to ``model.effort_limits``.
        :param effort_state: 'applied' or 'link_torque' (:attr:`joint_effort`).
        :param on_touch: Called with the simulated time [s] of each step at which the arm
            meets the scene after a step without contact (from the stepping thread, after
            the step call's work is done).
        :raises InputError: MuJoCo missing, a model it refuses, joints that do not match the
            description (names, types, extra engine joints), a bad state or step.
        """
        mujoco = import_mujoco()
        self._mj = mujoco
        dt = check_range('dt', dt, DT_RANGE, 's')   # the Simulator's valid steps
        if effort_state not in EFFORT_STATES:
            raise InputError('effort_state must be one of %s, got %r' % (
                list(EFFORT_STATES), effort_state))
        spec = source if isinstance(source, mujoco.MjSpec) else engine_spec(
            source, armature=model.armature, joint_names=model.joint_names)
        spec.option.timestep = float(dt)
        try:
            self._m = spec.compile()
        except Exception as error:
            raise InputError('MuJoCo cannot compile the model: %s' % str(error).strip()) \
                from None
        self._d = mujoco.MjData(self._m)
        self._model = model
        self._n = model.dof
        self._dt = float(dt)
        self._clamp = bool(clamp_effort)
        self._effort_state = effort_state
        self._effort = np.ascontiguousarray(model.effort_limits, dtype=np.float64)
        self._qadr, self._vadr, self._bodies = self._joint_map(model)
        self._armature = self._m.dof_armature[self._vadr].copy()
        self._friction_rows = mujoco.mjtConstraint.mjCNSTR_FRICTION_DOF
        self._bad_qacc = int(mujoco.mjtWarning.mjWARN_BADQACC)
        self._lock = threading.Lock()
        self._q0 = self._state(q0, 'q0')
        self._qd0 = np.zeros(self._n) if qd0 is None else self._state(qd0, 'qd0')
        self._applied = np.zeros(self._n)
        self._fext = np.zeros((self._n, 6))   # body-frame wrenches about the body origin
        self._pushing = False
        self._steps = 0
        self._on_touch = on_touch
        self._touching = False
        self._put(self._q0, self._qd0)

    # ------------------------------------------------------------------ set-up
    def _joint_map(self, model) -> tuple[NDArray[np.int64], NDArray[np.int64],
                                         NDArray[np.int64]]:
        """Return the engine's qpos, dof and body indices in the description's joint order."""
        mujoco, m = self._mj, self._m
        engine = {mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j): j for j in range(m.njnt)}
        missing = [name for name in model.joint_names if name not in engine]
        extra = sorted(name or '(unnamed)' for name in engine if name not in model.joint_names)
        if missing or extra:
            raise InputError(
                "the MuJoCo model does not have the description's joints: missing %s, not in "
                'the description %s (the engine joints are %s)' % (
                    missing, extra, sorted(str(name) for name in engine)))
        qadr, vadr, bodies = [], [], []
        for name, kind in zip(model.joint_names, model.joint_types):
            j = engine[name]
            jtype = int(m.jnt_type[j])
            want = (mujoco.mjtJoint.mjJNT_HINGE if kind in _HINGE_TYPES else
                    mujoco.mjtJoint.mjJNT_SLIDE if kind in _SLIDE_TYPES else None)
            if want is None or jtype != int(want):
                raise InputError('joint %r is %s in the description but %s in the MuJoCo '
                                 'model' % (name, kind, mujoco.mjtJoint(jtype).name))
            qadr.append(int(m.jnt_qposadr[j]))
            vadr.append(int(m.jnt_dofadr[j]))
            bodies.append(int(m.jnt_bodyid[j]))
        return (np.array(qadr, dtype=np.int64), np.array(vadr, dtype=np.int64),
                np.array(bodies, dtype=np.int64))

    def _state(self, value: ArrayLike, what: str) -> FloatArray:
        return self._model.to_model_order((), value, what=what).copy()

    def _put(self, q: FloatArray, qd: FloatArray) -> None:
        """Set the engine state (lock held or not yet shared) and recompute its kinematics."""
        mj, d = self._mj, self._d
        mj.mj_resetData(self._m, d)
        d.qpos[self._qadr] = q
        d.qvel[self._vadr] = qd
        mj.mj_forward(self._m, d)

    # ------------------------------------------------------------------ stepping
    def _applied_torque(self, tau: ArrayLike, what: str = 'tau') -> FloatArray:
        tau = float_array(tau, what)
        if tau.shape != (self._n,):
            raise InputError('%s must have shape (%d,) for joints %s, got %s' % (
                what, self._n, list(self._model.joint_names), tau.shape))
        if not np.all(np.isfinite(tau)):
            bad = int(np.argmax(~np.isfinite(tau)))
            raise InputError('%s of joint %r is %r' % (
                what, self._model.joint_names[bad], float(tau[bad])))
        return np.clip(tau, -self._effort, self._effort) if self._clamp else tau.copy()

    def _push_forces(self) -> None:
        """Write the follower-load pushes into ``xfrc_applied`` from the current poses."""
        d = self._d
        d.xfrc_applied[:] = 0.0
        for k in np.flatnonzero(np.any(self._fext != 0.0, axis=1)):
            body = self._bodies[k]
            rotation = d.xmat[body].reshape(3, 3)
            force = rotation @ self._fext[k, :3]
            lever = d.xpos[body] - d.xipos[body]   # origin about the centre of mass
            torque = rotation @ self._fext[k, 3:] + np.cross(lever, force)
            d.xfrc_applied[body, :3] += force
            d.xfrc_applied[body, 3:] += torque

    def step(self, tau: ArrayLike, steps: int = 1) -> None:
        """
        Advance ``steps * dt`` with a constant commanded torque (zero-order hold).

        :param tau: Commanded joint torques [N m or N], shape (n,), model order; clamped to
            ``model.effort_limits`` when ``clamp_effort``.
        :param steps: Number of steps (>= 1).
        :raises InputError: Wrong length, NaN/inf, bad ``steps``, or MuJoCo's own
            divergence warning (the state goes back to where the call began).
        """
        if not (isinstance(steps, (int, np.integer)) and steps >= 1):
            raise InputError('steps must be an integer >= 1, got %r' % (steps,))
        applied = self._applied_torque(tau)
        mj, m, d = self._mj, self._m, self._d
        with self._lock:
            q, qd = d.qpos.copy(), d.qvel.copy()
            warnings = int(d.warning[self._bad_qacc].number)
            d.qfrc_applied[:] = 0.0
            d.qfrc_applied[self._vadr] = applied
            touches = []
            for k in range(int(steps)):
                if self._pushing:
                    self._push_forces()
                mj.mj_step(m, d)
                if (d.ncon > 0) != self._touching:   # contacts of the step's start state
                    self._touching = not self._touching
                    if self._touching:
                        touches.append((self._steps + k) * self._dt)
            if int(d.warning[self._bad_qacc].number) != warnings or not np.all(
                    np.isfinite(d.qpos)):
                t = self._steps * self._dt
                d.qpos[:] = q
                d.qvel[:] = qd
                mj.mj_forward(m, d)
                raise InputError('MuJoCo diverged after t = %.6g s (bad accelerations); state '
                                 'kept where the call began (reduce dt or check the '
                                 'torques)' % t)
            self._applied[:] = applied
            self._steps += int(steps)
        if self._on_touch is not None:
            for t in touches:
                self._on_touch(t)

    def hold(self, steps: int = 0) -> None:
        """
        Brake the arm where it is: velocities zero, no torque applied, time goes on.

        :param steps: Steps of simulated time that pass with the arm held (>= 0).
        :raises InputError: A negative or non-integer ``steps``.
        """
        if not (isinstance(steps, (int, np.integer)) and steps >= 0):
            raise InputError('steps must be an integer >= 0, got %r' % (steps,))
        with self._lock:
            self._d.qvel[:] = 0.0
            self._d.qacc_warmstart[:] = 0.0
            self._applied[:] = 0.0
            self._mj.mj_forward(self._m, self._d)
            self._steps += int(steps)

    def reset(self, q0: ArrayLike | None = None, qd0: ArrayLike | None = None) -> None:
        """
        Go back to t = 0, at the initial state or the given one; pushes removed.

        :param q0: New joint positions (n,); default: the constructor's ``q0``.
        :param qd0: New joint velocities (n,); default: the constructor's ``qd0``.
        :raises InputError: Bad state.
        """
        q = self._q0 if q0 is None else self._state(q0, 'q0')
        qd = self._qd0 if qd0 is None else self._state(qd0, 'qd0')
        with self._lock:
            self._fext[:] = 0.0
            self._pushing = False
            self._touching = False
            self._applied[:] = 0.0
            self._steps = 0
            self._put(q, qd)

    def warm_up(self) -> None:
        """Do nothing: MuJoCo has no kernels to compile (the Simulator API's call)."""

    # ------------------------------------------------------------------ state
    @property
    def model(self):
        """Return the :class:`~manip_dynamics.RobotModel` of the description."""
        return self._model

    @property
    def engine(self) -> tuple[Any, Any]:
        """Return MuJoCo's ``(MjModel, MjData)`` (read them; step through this class)."""
        return self._m, self._d

    @property
    def dt(self) -> float:
        """Return the step [s]."""
        return self._dt

    @property
    def clamp_effort(self) -> bool:
        """Return whether commanded torques are clamped to ``model.effort_limits``."""
        return self._clamp

    @property
    def t(self) -> float:
        """Return the simulated time [s], steps times dt."""
        return self._steps * self._dt

    @property
    def steps(self) -> int:
        """Return the steps taken since the start or the last :meth:`reset`."""
        return self._steps

    @property
    def q(self) -> FloatArray:
        """Return the joint positions [rad or m], model order, shape (n,)."""
        with self._lock:
            return self._d.qpos[self._qadr].copy()

    @property
    def qd(self) -> FloatArray:
        """Return the joint velocities [rad/s or m/s], model order, shape (n,)."""
        with self._lock:
            return self._d.qvel[self._vadr].copy()

    def state(self) -> tuple[float, FloatArray, FloatArray]:
        """Return ``(t, q, qd)`` read consistently."""
        with self._lock:
            return (self._steps * self._dt, self._d.qpos[self._qadr].copy(),
                    self._d.qvel[self._vadr].copy())

    @property
    def applied_effort(self) -> FloatArray:
        """Return the motor torque of the last step [N m or N], shape (n,) (clamped)."""
        with self._lock:
            return self._applied.copy()

    @property
    def joint_effort(self) -> FloatArray:
        """
        Return the effort a joint state reports [N m or N], model order, shape (n,).

        ``'applied'``: :attr:`applied_effort`. ``'link_torque'``: the torque a link-side
        joint torque sensor measures in the last step, ``applied + damping force -
        armature qacc + dry friction force`` (MuJoCo's ``qfrc_passive``, ``dof_armature``,
        ``qacc`` and the ``frictionloss`` rows of ``efc_force``).
        """
        with self._lock:
            if self._effort_state == 'applied':
                return self._applied.copy()
            d = self._d
            friction = np.zeros(self._m.nv)
            rows = np.flatnonzero(d.efc_type[:d.nefc] == self._friction_rows)
            np.add.at(friction, d.efc_id[rows], d.efc_force[rows])
            v = self._vadr
            return (self._applied + d.qfrc_passive[v] - self._armature * d.qacc[v]
                    + friction[v])

    def contact_count(self) -> int:
        """Return how many contacts the engine found in the last step (scene objects)."""
        with self._lock:
            return int(self._d.ncon)

    def kinetic_energy(self) -> float:
        """Return the engine's kinetic energy [J] (rotor inertia included)."""
        with self._lock:
            self._mj.mj_energyVel(self._m, self._d)
            return float(self._d.energy[1])

    def potential_energy(self) -> float:
        """Return the engine's gravitational potential energy [J] (its own zero)."""
        with self._lock:
            self._mj.mj_energyPos(self._m, self._d)
            return float(self._d.energy[0])

    def total_energy(self) -> float:
        """Return kinetic + potential energy [J] of the engine's arm."""
        return self.kinetic_energy() + self.potential_energy()

    # ------------------------------------------------------------------ pushes
    def set_external_wrenches(self, external_wrenches: Mapping[str, ArrayLike] | None) -> None:
        """
        Set the wrenches the environment applies to links from the next step on.

        :param external_wrenches: Link name -> ``[fx, fy, fz, tx, ty, tz]`` [N, N m] in the
            link frame, about the link origin (as :meth:`Simulator.set_external_wrenches`);
            None or ``{}`` removes them.
        :raises InputError: Unknown link, wrong shape, NaN/inf (nothing changes then).
        """
        body = self._model.body_wrenches(external_wrenches or None)[0]
        with self._lock:
            self._fext[:] = body
            self._pushing = bool(np.any(body != 0.0))
            if not self._pushing:
                self._d.xfrc_applied[:] = 0.0

    @property
    def external_wrenches_active(self) -> bool:
        """Return whether a non-zero external wrench acts on the arm."""
        with self._lock:
            return self._pushing
