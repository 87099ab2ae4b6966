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
"The arm is not the model": MuJoCo arms that differ from their description, and scenes.

:func:`arm_variant` writes, for any description MuJoCo compiles, an MJCF whose moving links
have other masses, centres of mass and inertias than the description says, more viscous and
dry friction, and rotor inertias the description does not state, each drawn from a seeded
generator: the arm a controller built from the description meets when the description is
wrong, as a real one always is a little. :func:`add_boxes` puts objects the arm can touch
(a table, a box in its path) into the same model: a contact is then a collision in the
engine, not a scripted force. :class:`~manip_dynamics.simulation.mujoco_arm.MujocoArm` runs
the result.

Each relative error is drawn with a magnitude uniform in ``[low, high]`` and a random sign,
per parameter:

* mass: ``m (1 + e)``;
* centre of mass: moved by ``e`` times its distance from the link origin (at least
  ``COM_FLOOR``), in a random direction;
* inertia about the centre of mass: each principal moment times ``(1 + e)``, principal axes
  kept; a draw that breaks the triangle inequality (``I1 + I2 >= I3``) is drawn again;
* friction: viscous ``damping`` and dry ``frictionloss`` times ``friction_factor``, plus
  ``friction_of_limit`` times the joint's effort limit of dry friction;
* rotor inertia (``armature``): the description's times ``armature_factor``, plus
  ``armature`` [kg m^2 or kg] per joint.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from manip_dynamics.errors import InputError
from manip_dynamics.simulation.mujoco_arm import (
    engine_spec, import_mujoco, SCENE_CONAFFINITY, SCENE_CONTYPE)

#: Smallest distance [m] a centre of mass is moved per unit of relative error.
COM_FLOOR = 0.01
#: Redraws of one inertia before the draw is called impossible.
_INERTIA_TRIES = 100


def _error_range(value: Any, what: str) -> tuple[float, float]:
    """Return a relative error range ``(low, high)`` from a number or a pair."""
    try:
        low, high = (float(value), float(value)) if np.isscalar(value) else (
            float(value[0]), float(value[1]))
    except (TypeError, ValueError, IndexError):
        raise InputError('%s must be a number or a (low, high) pair, got %r' % (
            what, value)) from None
    if not (np.isfinite(low) and np.isfinite(high) and 0.0 <= low <= high < 1.0):
        raise InputError('%s must satisfy 0 <= low <= high < 1, got (%r, %r)' % (
            what, low, high))
    return low, high


@dataclass(frozen=True)
class ArmErrors:
    """How far the engine's arm is from its description (module docstring)."""

    #: Relative mass error magnitude, a number or (low, high).
    mass: float | tuple[float, float] = (0.1, 0.3)
    #: Relative centre-of-mass error magnitude.
    com: float | tuple[float, float] = (0.1, 0.3)
    #: Relative error of each principal moment of inertia.
    inertia: float | tuple[float, float] = (0.1, 0.3)
    #: Factor on the viscous damping and the dry friction (> 0).
    friction_factor: float = 2.0
    #: Factor on the description's rotor inertia (>= 0).
    armature_factor: float = 2.0
    #: Rotor inertia added per joint [kg m^2 or kg]: one number or joint name -> value.
    armature: float | Mapping[str, float] = 0.0
    #: Dry friction added per joint, as a fraction of its effort limit (a description
    #: that states no friction describes no real arm).
    friction_of_limit: float = 0.0
    #: Seed of the generator: the same seed, the same arm.
    seed: int = 0


@dataclass(frozen=True)
class Box:
    """A fixed box of the scene: centre [m] in the world and half-sizes [m]."""

    name: str
    center: tuple[float, float, float]
    half_size: tuple[float, float, float]
    rgba: tuple[float, float, float, float] = field(default=(0.6, 0.45, 0.3, 1.0))


def _signed(rng: np.random.Generator, bounds: tuple[float, float]) -> float:
    return float(rng.uniform(*bounds) * rng.choice((-1.0, 1.0)))


def _inertia_matrix(full: Sequence[float]) -> np.ndarray:
    """Return the 3x3 tensor of MuJoCo's ``fullinertia`` (ixx iyy izz ixy ixz iyz)."""
    ixx, iyy, izz, ixy, ixz, iyz = (float(v) for v in full)
    return np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])


def _perturbed_inertia(tensor: np.ndarray, bounds: tuple[float, float],
                       rng: np.random.Generator, body: str) -> np.ndarray:
    moments, axes = np.linalg.eigh(tensor)
    for _ in range(_INERTIA_TRIES):
        scaled = moments * np.array([1.0 + _signed(rng, bounds) for _ in range(3)])
        ordered = np.sort(scaled)
        if ordered[0] > 0.0 and ordered[0] + ordered[1] >= ordered[2]:
            return axes @ np.diag(scaled) @ axes.T
    raise InputError('no inertia of link %r within the error range %s keeps the triangle '
                     'inequality (moments %s)' % (body, bounds, moments.tolist()))


def arm_variant(source: str, errors: ArmErrors = ArmErrors(), *,
                boxes: Sequence[Box] = (), motors: bool = True) -> str:
    """
    Return the MJCF of an arm that differs from its description by ``errors``.

    :param source: The description: a URDF or MJCF path or text (:func:`engine_spec`).
    :param errors: The errors to draw (:class:`ArmErrors`; seeded).
    :param boxes: Scene objects to add (:func:`add_boxes`).
    :param motors: Add a motor actuator per joint, named as the joint, its control range
        the effort limit: what mujoco_ros2_control's effort command interface drives (its
        effort state is the actuator force). :class:`MujocoArm` applies torques directly
        and leaves them at zero.
    :return: MJCF text (MuJoCo's own writer); its moving bodies carry the description's
        link frames and joint names.
    :raises InputError: A model MuJoCo refuses, bad error ranges or factors, an armature
        for an unknown joint, an inertia no draw can keep physical.
    """
    ranges = [_error_range(errors.mass, 'mass'), _error_range(errors.com, 'com'),
              _error_range(errors.inertia, 'inertia')]
    for value, what, low in ((errors.friction_factor, 'friction_factor', 0.0),
                             (errors.armature_factor, 'armature_factor', 0.0),
                             (errors.friction_of_limit, 'friction_of_limit', 0.0)):
        if not (np.isfinite(value) and value >= low):
            raise InputError('%s must be finite and >= %g, got %r' % (what, low, value))
    spec = engine_spec(source)
    rng = np.random.default_rng(errors.seed)
    joints = {joint.name: joint for joint in spec.joints}
    extra = errors.armature if isinstance(errors.armature, Mapping) else {
        name: errors.armature for name in joints}
    unknown = sorted(set(extra) - set(joints))
    if unknown:
        raise InputError('armature given for joints %s the model does not have (it has %s)'
                         % (unknown, sorted(joints)))
    for body in spec.bodies:
        if not body.joints or body.mass <= 0.0:
            continue
        mass_bounds, com_bounds, inertia_bounds = ranges
        body.mass = body.mass * (1.0 + _signed(rng, mass_bounds))
        com = np.array(body.ipos, dtype=float)
        direction = rng.normal(size=3)
        direction /= np.linalg.norm(direction)
        body.ipos = com + direction * abs(_signed(rng, com_bounds)) * max(
            float(np.linalg.norm(com)), COM_FLOOR)
        tensor = _perturbed_inertia(_inertia_matrix(body.fullinertia), inertia_bounds, rng,
                                    body.name)
        body.fullinertia = [tensor[0, 0], tensor[1, 1], tensor[2, 2], tensor[0, 1],
                            tensor[0, 2], tensor[1, 2]]
        body.explicitinertial = True
    for name, joint in joints.items():
        joint.damping = np.asarray(joint.damping, dtype=float) * errors.friction_factor
        joint.frictionloss = (joint.frictionloss * errors.friction_factor
                              + errors.friction_of_limit * max(0.0, joint.actfrcrange[1]))
        added = float(extra.get(name, 0.0))
        if not (np.isfinite(added) and added >= 0.0):
            raise InputError('armature of joint %r must be finite and >= 0, got %r' % (
                name, added))
        joint.armature = joint.armature * errors.armature_factor + added
    if motors:
        mujoco = import_mujoco()
        for name, joint in joints.items():
            actuator = spec.add_actuator(name=name, target=name,
                                         trntype=mujoco.mjtTrn.mjTRN_JOINT)
            actuator.set_to_motor()
            low, high = joint.actfrcrange
            if high > low:
                actuator.ctrlrange = [low, high]
                actuator.ctrllimited = mujoco.mjtLimited.mjLIMITED_TRUE
    add_boxes(spec, boxes)
    try:
        spec.compile()
    except Exception as error:
        raise InputError('MuJoCo cannot compile the variant: %s' % str(error).strip()) \
            from None
    return spec.to_xml()


def add_boxes(spec: Any, boxes: Sequence[Box]) -> None:
    """
    Add fixed boxes the arm collides with (not each other) to a model specification.

    :param spec: A ``mujoco.MjSpec`` (e.g. from :func:`engine_spec`).
    :param boxes: The boxes: world-frame centres and half-sizes [m], each > 0.
    :raises InputError: A non-finite centre or a half-size that is not > 0.
    """
    mujoco = import_mujoco()
    for box in boxes:
        center = np.asarray(box.center, dtype=float)
        half = np.asarray(box.half_size, dtype=float)
        if center.shape != (3,) or half.shape != (3,) or not (
                np.all(np.isfinite(center)) and np.all(half > 0.0)):
            raise InputError('box %r needs a finite centre and 3 half-sizes > 0, got %s, %s'
                             % (box.name, box.center, box.half_size))
        spec.worldbody.add_geom(name=box.name, type=mujoco.mjtGeom.mjGEOM_BOX,
                                pos=center, size=half, rgba=list(box.rgba),
                                contype=SCENE_CONTYPE, conaffinity=SCENE_CONAFFINITY)


def table(top: float, center_xy: tuple[float, float] = (0.5, 0.0),
          half_xy: tuple[float, float] = (0.3, 0.4), thickness: float = 0.04) -> Box:
    """
    Return a table whose top is at height ``top`` [m] (world z), centred at ``center_xy``.

    :param top: Height of the table top [m].
    :param center_xy: Centre of the top in world x, y [m].
    :param half_xy: Half-lengths of the top in x, y [m].
    :param thickness: Thickness of the top [m].
    """
    return Box('table', (center_xy[0], center_xy[1], top - thickness / 2.0),
               (half_xy[0], half_xy[1], thickness / 2.0))
