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
What the viewer draws, as numbers: link poses, torque arrows, wrench and payload markers.

A :class:`RobotScene` pairs a :class:`~manip_dynamics.robot_model.RobotModel` (the
kinematics, through its public ``link_transform``) with the URDF's visual shapes
(:mod:`manip_dynamics.viewer.urdf_visuals`). Everything here is plain numpy, with no
browser and no ROS, so it is tested directly; :mod:`manip_dynamics.viewer.server` turns it
into a viser scene.

Frames: every pose is ``T_root_<x>`` (4, 4), in the model's root (base) frame, metres.
Torque arrows follow the right-hand rule: a joint torque ``tau_i`` [N m] is drawn along the
joint's axis ``z_i`` (world frame) from ``a_i = p_i + d sign(tau_i) z_i`` to
``a_i + s tau_i z_i``, ``p_i`` being the joint origin and ``d`` a small offset that clears
the joint's housing,
with one scale ``s`` [m / N m] per scene (the largest effort limit is half the robot's
reach); a prismatic joint's force [N] the same way with ``s_f``.
"""

from collections.abc import Mapping
import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from manip_dynamics.robot_model import RobotModel
from manip_dynamics.viewer.urdf_visuals import parse_visuals, UrdfVisuals, Visual

FloatArray = NDArray[np.float64]

#: Length of the arrow of a torque equal to the largest finite effort limit, as a share
#: of the robot's reach (:meth:`RobotScene.reach`).
ARROW_LENGTH_AT_LIMIT = 0.5
#: Distance from the joint origin to the tail of a torque arrow, as a share of the reach:
#: clears the joint's housing, so that small torques stay visible.
ARROW_OFFSET = 0.07
#: Effort limit assumed when the URDF gives none [N m or N].
DEFAULT_EFFORT_LIMIT = 100.0
#: Length of the arrow of a 10 N force in the wrench marker [m].
FORCE_ARROW_PER_10N = 0.1
#: Density of the sphere that stands for a payload (aluminium) [kg/m^3].
PAYLOAD_DENSITY = 2700.0


def payload_radius(mass: float) -> float:
    """
    Return the radius of the sphere drawn for a payload: a solid aluminium ball of its mass.

    ``r = (3 m / (4 pi rho))^(1/3)`` with ``rho`` = :data:`PAYLOAD_DENSITY`, at least 1 cm.

    :param mass: Payload mass [kg], >= 0.
    :return: Radius [m].
    """
    return max(0.01, (3.0 * max(mass, 0.0) / (4.0 * math.pi * PAYLOAD_DENSITY)) ** (1.0 / 3.0))


class RobotScene:
    """
    A robot ready to draw: its model, its visual shapes and the scales of the markers.

    :ivar model: The dynamics model (kinematics, gravity torques, payloads).
    :ivar urdf: Visual shapes, colours and joint axes from the URDF.
    :ivar visuals: The shapes that can be drawn: on links of the model, meshes resolved.
    :ivar notes: One line per shape that is not drawn (unresolved mesh, link not modelled).
    :ivar torque_scale: Arrow length per unit torque [m / N m] (revolute joints).
    :ivar force_scale: Arrow length per unit force [m / N] (prismatic joints).
    """

    def __init__(self, model: RobotModel, urdf: UrdfVisuals) -> None:
        """
        Pair a model with the visuals of the same URDF.

        :param model: The dynamics model built from the URDF.
        :param urdf: The URDF's visuals (:func:`parse_visuals`).
        """
        self.model = model
        self.urdf = urdf
        links = set(model.link_names)
        notes = list(urdf.notes)
        visuals = []
        for visual in urdf.visuals:
            if visual.link not in links:
                notes.append('link %r is not part of the model (root %r, tip %r): its visual '
                             '%r is not drawn' % (visual.link, model.root_link, model.tip_link,
                                                  visual.name))
            elif visual.kind != 'mesh' or visual.mesh_path is not None:
                visuals.append(visual)
        self.visuals: tuple[Visual, ...] = tuple(visuals)
        self.notes: tuple[str, ...] = tuple(notes)
        self.drawn_links: tuple[str, ...] = tuple(
            link for link in model.link_names if any(v.link == link for v in self.visuals))
        limits = np.asarray(model.effort_limits, dtype=np.float64)
        kinds = model.joint_types
        revolute = [abs(lim) for lim, k in zip(limits, kinds)
                    if k != 'prismatic' and math.isfinite(lim) and lim > 0.0]
        prismatic = [abs(lim) for lim, k in zip(limits, kinds)
                     if k == 'prismatic' and math.isfinite(lim) and lim > 0.0]
        length = ARROW_LENGTH_AT_LIMIT * self.reach()
        self.arrow_offset = ARROW_OFFSET * self.reach()
        self.torque_scale = length / (max(revolute) if revolute else DEFAULT_EFFORT_LIMIT)
        self.force_scale = length / (max(prismatic) if prismatic else DEFAULT_EFFORT_LIMIT)
        missing = [name for name in model.joint_names if name not in urdf.joints]
        if missing:
            raise ValueError('joints %s of the model are not in the URDF given for its '
                             'visuals' % missing)

    @classmethod
    def from_urdf(cls, xml: str, *, model: RobotModel | None = None,
                  search_paths: tuple[str, ...] = (), base_dir: str | None = None,
                  root_link: str | None = None, tip_link: str | None = None) -> 'RobotScene':
        """
        Build the scene of a URDF (and its model, unless one is given).

        :param xml: URDF text.
        :param model: A model already built from ``xml`` (e.g. with payloads); default: a
            new ``RobotModel.from_urdf_string(xml, root_link=..., tip_link=...)``.
        :param search_paths: Folders for mesh files (see
            :func:`~manip_dynamics.viewer.urdf_visuals.resolve_mesh`).
        :param base_dir: Folder of the URDF file, for relative mesh names.
        :param root_link: Base link of a new model.
        :param tip_link: Chain tip of a new model.
        :return: The scene.
        :raises ValueError: The URDF does not load (URDFError) or does not match the model.
        """
        if model is None:
            model = RobotModel.from_urdf_string(xml, root_link=root_link, tip_link=tip_link)
        return cls(model, parse_visuals(xml, search_paths=search_paths, base_dir=base_dir))

    # ------------------------------------------------------------------ poses
    def link_poses(self, q: ArrayLike) -> dict[str, FloatArray]:
        """
        Return the pose of every link that has something drawn on it.

        :param q: Joint positions, model order, shape (n,) [rad | m].
        :return: link -> ``T_root_link``, shape (4, 4).
        :raises ValueError: Wrong shape or non-finite ``q``.
        """
        return {link: self.model.link_transform(q, link) for link in self.drawn_links}

    def joint_frames(self, q: ArrayLike) -> tuple[FloatArray, FloatArray]:
        """
        Return where each joint of the model is and which way its axis points.

        The joint frame is its child link's frame (URDF convention).

        :param q: Joint positions, model order, shape (n,).
        :return: ``(origins, axes)``, each shape (n, 3): joint origins [m] and unit axes in
            the root frame.
        """
        origins = np.empty((self.model.dof, 3))
        axes = np.empty((self.model.dof, 3))
        for i, name in enumerate(self.model.joint_names):
            joint = self.urdf.joints[name]
            pose = self.model.link_transform(q, joint.child)
            origins[i] = pose[:3, 3]
            axes[i] = pose[:3, :3] @ joint.axis
        return origins, axes

    def torque_arrows(self, q: ArrayLike, tau: ArrayLike, lateral: float = 0.0) -> FloatArray:
        """
        Return one arrow per joint for a torque vector (right-hand rule about the axis).

        :param q: Joint positions, model order, shape (n,).
        :param tau: Joint torques [N m] (forces [N] on prismatic joints), shape (n,).
        :param lateral: Shift of every arrow sideways [m], perpendicular to its axis (along
            ``axis x z_root``, or the root x axis for a vertical joint axis), so that a second
            set of arrows (e.g. external torques) runs beside the first.
        :return: Start and end points, shape (n, 2, 3) [m], root frame; a zero torque gives
            a zero-length arrow at the joint origin.
        :raises ValueError: ``tau`` has the wrong shape or is not finite.
        """
        tau = np.asarray(tau, dtype=np.float64)
        if tau.shape != (self.model.dof,) or not np.all(np.isfinite(tau)):
            raise ValueError('torques must be %d finite numbers, got shape %s'
                             % (self.model.dof, tau.shape))
        origins, axes = self.joint_frames(q)
        scale = np.array([self.force_scale if k == 'prismatic' else self.torque_scale
                          for k in self.model.joint_types])
        tails = origins + (self.arrow_offset * np.sign(tau))[:, None] * axes
        if lateral:
            side = np.cross(axes, [0.0, 0.0, 1.0])
            norms = np.linalg.norm(side, axis=1)
            side[norms < 1e-9] = [1.0, 0.0, 0.0]
            norms[norms < 1e-9] = 1.0
            tails = tails + lateral * side / norms[:, None]
        return np.stack([tails, tails + (scale * tau)[:, None] * axes], axis=1)

    def force_arrow(self, q: ArrayLike, link: str, force: ArrayLike,
                    frame: str | None = None) -> FloatArray:
        """
        Return the arrow of a force acting at a link's origin.

        :param q: Joint positions, model order, shape (n,).
        :param link: Link whose origin is the point of application.
        :param force: Force [N], shape (3,), in the axes of ``frame``.
        :param frame: A link of the model whose axes ``force`` is expressed in; None or the
            root link: root axes.
        :return: Start and end points, shape (1, 2, 3) [m], root frame, length
            :data:`FORCE_ARROW_PER_10N` per 10 N.
        """
        force = np.asarray(force, dtype=np.float64).reshape(3)
        start = self.model.link_transform(q, link)[:3, 3]
        if frame and frame != self.model.root_link:
            force = self.model.link_transform(q, frame)[:3, :3] @ force
        end = start + force * (FORCE_ARROW_PER_10N / 10.0)
        return np.array([[start, end]])

    def payload_markers(self, q: ArrayLike) -> list[tuple[str, float, FloatArray, float]]:
        """
        Return the payloads attached to the model as spheres to draw.

        :param q: Joint positions, model order, shape (n,).
        :return: ``(link, mass [kg], centre [m] in the root frame, radius [m])`` per payload.
        """
        out = []
        for link, (mass, com, _) in sorted(self.model.payloads.items()):
            pose = self.model.link_transform(q, link)
            centre = pose[:3, :3] @ np.asarray(com, dtype=np.float64) + pose[:3, 3]
            out.append((link, float(mass), centre, payload_radius(float(mass))))
        return out

    def reach(self) -> float:
        """Return a length scale of the robot [m]: the farthest drawn link origin at q = 0."""
        q0 = np.zeros(self.model.dof)
        points = [p[:3, 3] for p in self.link_poses(q0).values()] or [np.zeros(3)]
        return max(0.3, float(max(np.linalg.norm(p) for p in points)))

    def ordered(self, names: list[str] | tuple[str, ...], values: ArrayLike) -> FloatArray:
        """
        Return values keyed by joint name in model order (extra names ignored).

        :param names: Joint names of the values.
        :param values: One value per name.
        :return: Shape (n,), model order.
        :raises ValueError: A model joint is missing, lengths differ, or a value is not finite.
        """
        return self.model.to_model_order(list(names), list(values), allow_extra=True)


def colour_bytes(rgba: tuple[float, ...] | Mapping) -> tuple[int, int, int]:
    """
    Convert an RGBA colour in [0, 1] to 8-bit RGB.

    :param rgba: ``(r, g, b, a)`` or ``(r, g, b)``, each in [0, 1].
    :return: ``(r, g, b)``, each in 0..255.
    """
    return tuple(int(round(255.0 * min(1.0, max(0.0, float(c))))) for c in list(rgba)[:3])


__all__ = ['RobotScene', 'colour_bytes', 'parse_visuals', 'payload_radius']
