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
The public facade: :class:`RobotModel`, a fixed-base manipulator loaded from a URDF.

Conventions used by every method (see docs/THEORY.md):

* ``n`` is the number of actuated joints (revolute, continuous, prismatic), in the
  order of :attr:`RobotModel.joint_names` (depth-first over the URDF tree, children
  in document order; for a chain also Pinocchio's order).
* Joint positions ``q`` [rad or m], velocities ``qd`` [rad/s or m/s], accelerations
  ``qdd`` [rad/s^2 or m/s^2], torques/forces ``tau`` [N m or N].
* Every state argument is either one state, shape ``(n,)``, or a batch, shape
  ``(N, n)``; results match (``(N, n, n)`` for matrices).  A batch equals a loop of
  single calls.
* The root link's frame is the world frame; ``gravity`` is the gravity acceleration
  vector expressed in it [m/s^2].
* Wrenches are 6-vectors ``[fx, fy, fz, tx, ty, tz]`` [N, N m] that the environment
  applies to a link, expressed in that link's frame, about that link's origin.
* Jacobians map ``qd`` to the twist ``[vx, vy, vz, wx, wy, wz]`` of a link's origin
  (linear first, matching the wrench layout), so that ``tau = J^T w``.
* Results are rigid-body only unless ``include_friction`` / ``include_armature``
  is set: exactly what Pinocchio's ``rnea``, ``crba``, ``computeGeneralizedGravity``
  and ``aba`` return.
"""

from collections.abc import Mapping
import math
import threading
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from manip_dynamics import robot_model_calls as _calls
from manip_dynamics.algorithms import kernels as _ops
from manip_dynamics.algorithms.cartesian import CartesianDynamics
from manip_dynamics.errors import InputError
from manip_dynamics.model import load_urdf_file, load_urdf_string, RigidBodyTree
from manip_dynamics.model.rigid_body_tree import BodyInertia
from manip_dynamics.robot_model_calls import ABA_MIN_DOF, vector as _vector

__all__ = ['ABA_MIN_DOF', 'CartesianDynamics', 'RobotModel']

FloatArray = NDArray[np.float64]


class PackedModel(NamedTuple):
    """The model as the compiled kernels read it (:attr:`RobotModel.packed`)."""

    ints: NDArray[np.int64]   # (2 n,): parent, then joint kind
    flat: FloatArray          # (38 n,): axes, placements, inertias, armature


class RobotModel:
    """
    Dynamics of a fixed-base manipulator described by a URDF.

    Build it with :meth:`from_urdf_file` or :meth:`from_urdf_string`.  The model is
    immutable except for the payload calls (:meth:`set_payload`, :meth:`remove_payload`),
    and safe to call from several threads at once: every call allocates its own scratch
    memory and reads the model's arrays through one reference that payload calls swap
    atomically.
    """

    def __init__(self, tree: RigidBodyTree, *, gravity: ArrayLike = (0.0, 0.0, -9.81),
                 damping: ArrayLike | None = None, friction: ArrayLike | None = None,
                 armature: ArrayLike | None = None, friction_velocity: float = 0.01) -> None:
        """
        Wrap a rigid-body tree; prefer the ``from_urdf_*`` constructors.

        :param tree: The model description from :mod:`manip_dynamics.model`.
        :param gravity: Gravity acceleration in the root frame [m/s^2], shape (3,).
        :param damping: Viscous friction per joint [N m s/rad], (n,); default: URDF.
        :param friction: Coulomb friction per joint [N m], (n,); default: URDF.
        :param armature: Rotor inertia reflected to each joint [kg m^2], (n,); default 0.
        :param friction_velocity: Width of the smooth sign of Coulomb friction [rad/s].
        """
        n = tree.dof
        self._tree = tree
        self._n = n
        self._gravity = _vector(gravity, 3, 'gravity')
        self._base_acc = -self._gravity
        self._joint_names = tuple(j.name for j in tree.joints)
        self._index = {name: i for i, name in enumerate(self._joint_names)}
        self._damping = (np.array([j.damping for j in tree.joints]) if damping is None
                         else _vector(damping, n, 'damping'))
        self._coulomb = (np.array([j.friction for j in tree.joints]) if friction is None
                         else _vector(friction, n, 'friction'))
        self._armature = np.zeros(n) if armature is None else _vector(armature, n, 'armature')
        for what, values in (('damping', self._damping), ('friction', self._coulomb),
                             ('armature', self._armature)):
            if np.any(values < 0.0):
                raise InputError('%s must be >= 0, got %s for joint %r' % (
                    what, values.min(), self._joint_names[int(np.argmin(values))]))
        if not (math.isfinite(friction_velocity) and friction_velocity > 0.0):
            raise InputError('friction_velocity must be > 0, got %s' % friction_velocity)
        self._friction_velocity = float(friction_velocity)
        self._zero_n = np.zeros(n)
        self._zero_3 = np.zeros(3)
        self._shape = (n,)
        self._no_wrench = np.zeros((1, n, 6))
        self._lock = threading.Lock()
        self._order_cache: dict[tuple, NDArray[np.int64]] = {}
        self._payloads: dict[str, tuple[float, FloatArray, FloatArray]] = {}
        # link -> (body, T_body_link C-contiguous (4, 4)) for the kinematics kernels
        self._frames = {name: (int(f.body), np.ascontiguousarray(f.T_body_link,
                                                                 dtype=np.float64))
                        for name, f in tree.links.items()}
        self._ints = np.empty(0, dtype=np.int64)
        self._flat = np.empty(0)
        self._fd_method = _ops.FD_ABA if n >= ABA_MIN_DOF else _ops.FD_CHOLESKY
        self._arrays = _calls._build_arrays(self)

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_urdf_file(cls, path: str, *, root_link: str | None = None,
                       tip_link: str | None = None,
                       gravity: ArrayLike = (0.0, 0.0, -9.81),
                       strict: bool = False) -> 'RobotModel':
        """
        Load a model from a URDF file.

        :param path: URDF file path.
        :param root_link: Fixed base link (default: the URDF root).
        :param tip_link: Model only the chain root -> tip, KDL style; joints off the
            chain are locked at 0 and their bodies lumped into the chain (default: the
            whole tree).
        :param gravity: Gravity acceleration in the root link frame [m/s^2], shape (3,).
        :param strict: Refuse physically suspect data (suspect inertias, joints that move no
            mass) instead of loading it and listing it in :attr:`warnings`.
        :return: The model.
        :raises URDFError: Unreadable file or unusable URDF (message names the element);
            with ``strict``, any warning.
        """
        tree = load_urdf_file(path, root_link=root_link, tip_link=tip_link, strict=strict)
        return cls(tree, gravity=gravity)

    @classmethod
    def from_urdf_string(cls, xml: str, *, root_link: str | None = None,
                         tip_link: str | None = None,
                         gravity: ArrayLike = (0.0, 0.0, -9.81),
                         strict: bool = False) -> 'RobotModel':
        """
        Load a model from URDF text; arguments as :meth:`from_urdf_file`.

        :return: The model.
        :raises URDFError: Malformed or unusable URDF (message names the element); with
            ``strict``, any warning.
        """
        tree = load_urdf_string(xml, root_link=root_link, tip_link=tip_link, strict=strict)
        return cls(tree, gravity=gravity)

    def with_joint_dynamics(self, *, damping: Mapping[str, float] | None = None,
                            friction: Mapping[str, float] | None = None,
                            armature: Mapping[str, float] | None = None,
                            friction_velocity: float | None = None) -> 'RobotModel':
        """
        Return a copy with per-joint friction or rotor-inertia overrides.

        Rotor (armature) inertia is the motor inertia reflected through the gearing,
        ``N^2 I_motor`` (Craig exercise 6.11); it adds to M's diagonal when
        ``include_armature`` is set.  Payloads are copied; this model is unchanged.

        :param damping: Joint name -> viscous coefficient [N m s/rad or N s/m].
        :param friction: Joint name -> Coulomb level [N m or N].
        :param armature: Joint name -> reflected rotor inertia [kg m^2 or kg].
        :param friction_velocity: Width of the smooth Coulomb sign [rad/s].
        :return: A new model.
        :raises InputError: Unknown joint name or negative value.
        """
        values = {'damping': self._damping.copy(), 'friction': self._coulomb.copy(),
                  'armature': self._armature.copy()}
        for what, override in (('damping', damping), ('friction', friction),
                               ('armature', armature)):
            for name, value in (override or {}).items():
                index = self.joint_index(name)
                try:
                    number = float(value)
                except (TypeError, ValueError):
                    raise InputError('%s of joint %r must be a number, got %r' % (
                        what, name, value)) from None
                if not math.isfinite(number) or number < 0.0:
                    raise InputError('%s of joint %r must be finite and >= 0, got %r' % (
                        what, name, value))
                values[what][index] = number
        model = type(self)(self._tree, gravity=self._gravity, damping=values['damping'],
                           friction=values['friction'], armature=values['armature'],
                           friction_velocity=(self._friction_velocity if friction_velocity
                                              is None else friction_velocity))
        for link, (mass, com, inertia) in self._payloads.items():
            model._payloads[link] = (mass, com, inertia)
        model._arrays = _calls._build_arrays(model)
        return model

    # ------------------------------------------------------------------ description
    @property
    def tree(self) -> RigidBodyTree:
        """Return the rigid-body tree loaded from the URDF (no payloads)."""
        return self._tree

    @property
    def name(self) -> str:
        """Return the URDF robot name."""
        return self._tree.name

    @property
    def dof(self) -> int:
        """Return the number of actuated joints n."""
        return self._n

    @property
    def joint_names(self) -> tuple[str, ...]:
        """Return the actuated joint names in model order."""
        return self._joint_names

    @property
    def joint_types(self) -> tuple[str, ...]:
        """Return 'revolute', 'continuous' or 'prismatic' per joint, model order."""
        return tuple(j.kind for j in self._tree.joints)

    @property
    def link_names(self) -> tuple[str, ...]:
        """Return every link of the model (root, moving and fixed-attached links)."""
        return tuple(self._tree.links)

    @property
    def root_link(self) -> str:
        """Return the fixed base link."""
        return self._tree.root_link

    @property
    def tip_link(self) -> str | None:
        """Return the chain tip given at load time, if any."""
        return self._tree.tip_link

    @property
    def gravity(self) -> FloatArray:
        """Return the gravity acceleration in the root frame [m/s^2], shape (3,)."""
        return self._gravity.copy()

    @property
    def position_lower(self) -> FloatArray:
        """Return lower position limits [rad or m], (n,); -inf when unlimited."""
        return _calls._joint_array(self, 'lower')

    @property
    def position_upper(self) -> FloatArray:
        """Return upper position limits [rad or m], (n,); +inf when unlimited."""
        return _calls._joint_array(self, 'upper')

    @property
    def velocity_limits(self) -> FloatArray:
        """Return velocity limits [rad/s or m/s], (n,); +inf when the URDF has none."""
        return _calls._joint_array(self, 'velocity')

    @property
    def effort_limits(self) -> FloatArray:
        """Return effort limits [N m or N], (n,); +inf when the URDF has none."""
        return _calls._joint_array(self, 'effort')

    @property
    def damping(self) -> FloatArray:
        """Return viscous friction coefficients [N m s/rad], (n,)."""
        return self._damping.copy()

    @property
    def coulomb_friction(self) -> FloatArray:
        """Return Coulomb friction levels [N m], (n,)."""
        return self._coulomb.copy()

    @property
    def armature(self) -> FloatArray:
        """Return reflected rotor inertias [kg m^2], (n,)."""
        return self._armature.copy()

    @property
    def friction_velocity(self) -> float:
        """Return the width of the smooth Coulomb sign [rad/s]."""
        return self._friction_velocity

    @property
    def total_mass(self) -> float:
        """Return the mass of all moving bodies including payloads [kg]."""
        return float(np.sum(self._arrays.mass))

    @property
    def packed(self) -> PackedModel:
        """
        Return the arrays the compiled kernels read: the tree and its inertias, packed.

        The layout of :mod:`manip_dynamics.algorithms.packed` (payloads and armature
        included), for layer-3 packages that run kernels of their own on the model
        (simulation's integrator, identification's regressor). A payload change replaces
        them: take them once per kernel call, never change them.
        """
        return PackedModel(self._ints, self._flat)

    @property
    def body_inertia(self) -> BodyInertia:
        """
        Return the current inertial parameters of every moving body, payloads included.

        ``mass`` (n,) [kg], ``com`` (n, 3) [m] and ``inertia`` about the centre of mass
        (n, 3, 3) [kg m^2], in body (joint child link) frames; read-only copies.
        """
        a = self._arrays
        return BodyInertia(a.mass.copy(), a.com.copy(), a.inertia.copy())

    @property
    def warnings(self) -> tuple[str, ...]:
        """Return what the loader found suspicious but usable."""
        return self._tree.warnings

    # ------------------------------------------------------------------ payloads
    @property
    def payloads(self) -> dict[str, tuple[float, FloatArray, FloatArray]]:
        """Return attached payloads: link -> (mass [kg], com (3,), inertia (3, 3))."""
        return dict(self._payloads)

    # ------------------------------------------------------------------ the calls
    # Each public method below is a function of manip_dynamics.robot_model_calls bound here
    # (its docstring is the method's): argument checks and kernel calls live there, the
    # algorithms in manip_dynamics.algorithms and manip_dynamics.identification.

    # ------------------------------------------------------------------ names and payloads
    joint_index = _calls.joint_index
    to_model_order = _calls.to_model_order
    set_payload = _calls.set_payload
    remove_payload = _calls.remove_payload

    # ------------------------------------------------------------------ for the library
    # what the layer-3 packages (simulation, identification, symbolic) need beyond the
    # dynamics: links on bodies, state batches, wrench inputs, errors; and `packed`, above
    link_frame = _calls.link_frame
    state_batch = _calls.state_batch
    state_error = _calls.state_error
    body_wrenches = _calls.body_wrenches

    # ------------------------------------------------------------------ dynamics (Craig ch. 6)
    inverse_dynamics = _calls.inverse_dynamics
    gravity_torques = _calls.gravity_torques
    coriolis_torques = _calls.coriolis_torques
    nonlinear_effects = _calls.nonlinear_effects
    path_terms = _calls.path_terms
    mass_matrix = _calls.mass_matrix
    coriolis_matrix = _calls.coriolis_matrix
    friction_torques = _calls.friction_torques
    forward_dynamics = _calls.forward_dynamics
    kinetic_energy = _calls.kinetic_energy
    potential_energy = _calls.potential_energy

    # ------------------------------------------------------------------ kinematics, Cartesian
    link_transform = _calls.link_transform
    jacobian = _calls.jacobian
    jacobian_dot_qd = _calls.jacobian_dot_qd
    cartesian_dynamics = _calls.cartesian_dynamics

    # ------------------------------------------------------------------ identification
    regressor = _calls.regressor
    inertial_parameters = _calls.inertial_parameters
    base_parameters = _calls.base_parameters
