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
The immutable rigid-body tree that every algorithm reads.

One moving body per actuated joint: body ``i`` is moved by joint ``i`` and carries the
inertia of its URDF link plus every link attached to it by fixed (or locked) joints.
Body frames are the URDF frames of the joints' child links.  Parents precede children
(``parent[i] < i``), so one forward loop is an outward pass and one backward loop an
inward pass (Craig sec. 6.5; Featherstone's parent-array convention).
"""

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

REVOLUTE = 0
PRISMATIC = 1


@dataclass(frozen=True)
class JointInfo:
    """
    One actuated joint as the URDF describes it.

    ``kind`` is 'revolute', 'continuous' or 'prismatic'.  Limits are in SI units;
    ``lower``/``upper`` are -inf/+inf for continuous joints (and revolute joints whose URDF
    limits are both zero), ``velocity``/``effort`` are +inf when the URDF has no
    ``<limit>``.  ``damping`` [N m s/rad] and ``friction`` [N m] come from ``<dynamics>``.
    """

    name: str
    kind: str
    parent_link: str
    child_link: str
    axis: tuple[float, float, float]
    lower: float
    upper: float
    velocity: float
    effort: float
    damping: float
    friction: float
    mimic: str | None = None


@dataclass(frozen=True)
class LinkFrame:
    """
    Where a URDF link sits in the tree.

    ``body`` is the index of the moving body that carries the link (-1: rigidly attached
    to the fixed root).  ``T_body_link`` (4, 4) is the fixed transform body <- link.
    """

    name: str
    body: int
    T_body_link: FloatArray


@dataclass(frozen=True)
class BodyInertia:
    """
    Inertial parameters of every moving body, in body frames.

    ``mass`` [kg] shape (n,), ``com`` [m] shape (n, 3), ``inertia`` about the centre of
    mass in body axes [kg m^2] shape (n, 3, 3).
    """

    mass: FloatArray
    com: FloatArray
    inertia: FloatArray


def combine_inertias(parts: list[tuple[float, FloatArray, FloatArray]]
                     ) -> tuple[float, FloatArray, FloatArray]:
    """
    Lump rigidly attached point/rigid masses into one body.

    :param parts: ``(mass [kg], com (3,) [m], inertia about com (3, 3) [kg m^2])`` all in
        the same frame.
    :return: Total mass, combined centre of mass and inertia about it, same frame.
    """
    total = float(sum(m for m, _, _ in parts))
    if total <= 0.0:
        inertia = np.zeros((3, 3))
        for _, _, i_c in parts:
            inertia = inertia + i_c
        return 0.0, np.zeros(3), inertia
    com = sum(m * np.asarray(c) for m, c, _ in parts) / total
    inertia = np.zeros((3, 3))
    for m, c, i_c in parts:
        d = np.asarray(c) - com
        inertia = inertia + i_c + m * (np.dot(d, d) * np.eye(3) - np.outer(d, d))
    return total, com, inertia


def massless_subtree_joints(parent: IntArray, mass: FloatArray) -> tuple[int, ...]:
    """
    Return the joints whose subtree (the body they move and every body below) has no mass.

    Such a joint moves nothing that has mass, so (unless rotational inertia alone makes up
    for it) its row and column of the mass matrix vanish: M(q) is singular and forward
    dynamics is undefined.  One backward pass over the parent array (parents precede
    children), no recursion.

    :param parent: Parent body of each body, -1 for the root, shape (n,).
    :param mass: Mass of each body [kg] (payloads included if any), shape (n,).
    :return: Indices of those joints, ascending.
    """
    subtree = np.array(mass, dtype=np.float64, copy=True)
    for i in range(len(subtree) - 1, -1, -1):
        if parent[i] >= 0:
            subtree[parent[i]] += subtree[i]
    return tuple(int(i) for i in np.flatnonzero(subtree <= 0.0))


def massless_joints_reason(parent: IntArray, mass: FloatArray,
                           joint_names: tuple[str, ...]) -> str:
    """
    Say which joints move no mass and what to do, or return '' when every joint moves some.

    :param parent: Parent body of each body, shape (n,).
    :param mass: Mass of each body [kg], payloads included, shape (n,).
    :param joint_names: Joint names, model order.
    """
    massless = massless_subtree_joints(parent, mass)
    if not massless:
        return ''
    return ('joint(s) %s move no mass (their subtrees are massless); give a link below them an '
            '<inertial> or a payload, or leave them out of the model (tip_link)'
            % ', '.join(repr(joint_names[i]) for i in massless))


def singular_mass_matrix_message(parent: IntArray, mass: FloatArray,
                                 joint_names: tuple[str, ...], state: int) -> str:
    """
    Explain why forward dynamics found M(q) not positive definite (its Cholesky step failed).

    :param parent: Parent body of each body, shape (n,).
    :param mass: Mass of each body [kg], payloads included, shape (n,).
    :param joint_names: Joint names, model order.
    :param state: Index of the state in the batch (0 for a single state).
    :return: The message, naming the joints whose subtree has no mass when there are any.
    """
    massless = massless_joints_reason(parent, mass, joint_names)
    if massless:
        return ('forward dynamics is undefined: the mass matrix is singular in state %d because '
                '%s' % (state, massless))
    return ('forward dynamics is undefined: the mass matrix is not positive definite in state '
            '%d (an inertia that is not physical, see model.warnings, or a joint that moves '
            'only a point mass on its own axis)' % state)


def massless_joint_warning(child_link: str) -> str:
    """Describe a joint that moves no mass (shared by the loader and ``check``)."""
    return ('moves no mass (link %r and everything below it are massless): the mass matrix is '
            'singular and forward dynamics fails; give a link below it an <inertial>, or '
            'leave the joint out of the model (tip_link)' % child_link)


@dataclass(frozen=True)
class RigidBodyTree:
    """
    Topology, joint geometry and URDF inertia of a fixed-base manipulator.

    Arrays are indexed by body = joint index, shape (n, ...):

    * ``parent`` (n,): parent body index, -1 for bodies attached to the root.
    * ``kind`` (n,): ``REVOLUTE`` (0, also continuous) or ``PRISMATIC`` (1).
    * ``axis`` (n, 3): unit joint axis in the body (child link) frame.
    * ``R_tree`` (n, 3, 3), ``p_tree`` (n, 3): pose of the joint frame at zero joint
      position in the parent body frame (parent <- joint).
    * ``inertia``: the URDF's inertia lumped per body (payloads not included).
    * ``warnings``: what is physically suspect but computable, one sentence each (inertias
      that are not physical, joints that move no mass); ``strict=True`` on the loaders
      refuses a URDF that has any.
    """

    name: str
    root_link: str
    tip_link: str | None
    joints: tuple[JointInfo, ...]
    parent: IntArray
    kind: IntArray
    axis: FloatArray
    R_tree: FloatArray
    p_tree: FloatArray
    inertia: BodyInertia
    links: dict[str, LinkFrame]
    base_mass: float
    locked_joints: tuple[str, ...] = ()
    warnings: tuple[str, ...] = field(default=())

    @property
    def dof(self) -> int:
        """Return the number of actuated joints."""
        return len(self.joints)
