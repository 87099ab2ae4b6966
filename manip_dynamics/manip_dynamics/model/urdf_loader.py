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
Build a :class:`RigidBodyTree` from URDF text.

What is modelled and how (see docs/THEORY.md):

* revolute, continuous and prismatic joints are degrees of freedom; fixed joints merge the
  child's inertia into the moving body and keep the child's frame for wrenches, Jacobians and
  tip selection; floating and planar joints are rejected (fixed-base manipulators only);
* mimic joints are independent degrees of freedom (the ``<mimic>`` tag is recorded only);
* links without ``<inertial>`` are massless; ``<transmission>``, ``<gazebo>``,
  ``<ros2_control>``, ``<sensor>`` and meshes are ignored (meshes are never opened);
* ``root_link`` makes that link the fixed base: everything above it and everything rigidly
  attached to it carries no dynamics;
* ``tip_link`` selects the chain root -> tip as KDL does; every actuated joint off that chain
  (a finger hanging off the wrist, a tool beyond the tip) is *locked* at position 0 and its
  bodies are lumped into the chain body they hang from, so their weight still counts.
"""

import math
import threading

import numpy as np
from urdf_parser_py import urdf as urdf_module
from urdf_parser_py.xml_reflection import core as xml_core

from manip_dynamics.errors import URDFError
from manip_dynamics.model.rigid_body_tree import (
    BodyInertia, combine_inertias, JointInfo, LinkFrame, PRISMATIC, REVOLUTE, RigidBodyTree)
from manip_dynamics.spatial import (
    inertia_from_urdf, inertia_problem, make_transform, rpy_to_matrix)

_MOVING = ('revolute', 'continuous', 'prismatic')
_PARSER_LOCK = threading.Lock()


def load_urdf_file(path: str, *, root_link: str | None = None,
                   tip_link: str | None = None) -> RigidBodyTree:
    """
    Read a URDF file and build its rigid-body tree.

    :param path: Path of a ``.urdf`` file.
    :param root_link: Link used as the fixed base (default: the URDF's root).
    :param tip_link: Last link of the chain to model (default: the whole tree).
    :return: The rigid-body tree.
    :raises URDFError: The file cannot be read or the URDF is not usable.
    """
    try:
        with open(path, 'r', encoding='utf-8') as stream:
            xml = stream.read()
    except OSError as exc:
        raise URDFError('cannot read URDF file %r: %s' % (str(path), exc.strerror)) from None
    return load_urdf_string(xml, root_link=root_link, tip_link=tip_link)


def parse_urdf(xml: str) -> tuple[object, list[str]]:
    """
    Run urdf_parser_py on URDF text, collecting its warnings instead of printing them.

    :param xml: URDF XML text.
    :return: The ``urdf_parser_py`` Robot and the parser's warnings, except those about
        tags real robot descriptions carry (``<ros2_control>``, ``<gazebo>``, ...).
    :raises URDFError: The text is empty or not a parsable URDF.
    """
    if not isinstance(xml, str):
        raise URDFError('URDF must be a string, got %s' % type(xml).__name__)
    if not xml.strip():
        raise URDFError('URDF is empty')
    warnings: list[str] = []
    with _PARSER_LOCK:
        saved = xml_core.on_error
        xml_core.on_error = warnings.append
        try:
            robot = urdf_module.URDF.from_xml_string(xml.encode('utf-8'))
        except Exception as exc:  # noqa: B902 - the parser raises many unrelated types
            raise URDFError('malformed URDF: %s' % (str(exc).strip() or type(exc).__name__)
                            ) from None
        finally:
            xml_core.on_error = saved
    # Unknown tags such as <ros2_control>, <gazebo>, <sensor> are expected in real robot
    # descriptions: keep only the warnings that are not about them.
    ignored = ('ros2_control', 'gazebo', 'sensor', 'transmission', 'plugin')
    kept = [w for w in warnings if not any('"%s"' % tag in w for tag in ignored)]
    return robot, kept


def _finite(value: float | None, what: str) -> float | None:
    if value is None:
        return None
    value = float(value)
    if math.isnan(value) or math.isinf(value):
        raise URDFError('%s is %r: URDF numbers must be finite' % (what, value))
    return value


def _origin_transform(origin: object | None, what: str) -> np.ndarray:
    if origin is None:
        return np.eye(4)
    xyz = [_finite(v, '%s origin xyz' % what) for v in (origin.xyz or (0.0, 0.0, 0.0))]
    rpy = [_finite(v, '%s origin rpy' % what) for v in (origin.rpy or (0.0, 0.0, 0.0))]
    return make_transform(rpy_to_matrix(rpy), xyz)


def _joint_info(joint: object) -> JointInfo:
    name = joint.name
    axis = np.array(joint.axis if joint.axis is not None else (1.0, 0.0, 0.0), dtype=float)
    if axis.shape != (3,) or not np.all(np.isfinite(axis)):
        raise URDFError('joint %r: axis must be three finite numbers' % name)
    norm = float(np.linalg.norm(axis))
    if norm < 1e-12:
        raise URDFError('joint %r: axis is the zero vector' % name)
    axis = axis / norm
    lower, upper = -math.inf, math.inf
    velocity, effort = math.inf, math.inf
    limit = joint.limit
    if limit is not None:
        effort = _finite(limit.effort, 'joint %r limit effort' % name)
        velocity = _finite(limit.velocity, 'joint %r limit velocity' % name)
        if effort is None:
            effort = math.inf
        if velocity is None:
            velocity = math.inf
        if effort < 0.0 or velocity < 0.0:
            raise URDFError('joint %r: negative effort or velocity limit' % name)
        if joint.type != 'continuous':
            lo = _finite(limit.lower, 'joint %r limit lower' % name) or 0.0
            hi = _finite(limit.upper, 'joint %r limit upper' % name) or 0.0
            if lo > hi:
                raise URDFError('joint %r: lower limit %g is above upper limit %g'
                                % (name, lo, hi))
            if lo < hi:
                lower, upper = lo, hi
    damping = friction = 0.0
    if joint.dynamics is not None:
        damping = _finite(joint.dynamics.damping, 'joint %r dynamics damping' % name) or 0.0
        friction = _finite(joint.dynamics.friction, 'joint %r dynamics friction' % name) or 0.0
        if damping < 0.0 or friction < 0.0:
            raise URDFError('joint %r: negative damping or friction' % name)
    return JointInfo(
        name=name, kind=joint.type, parent_link=joint.parent, child_link=joint.child,
        axis=(float(axis[0]), float(axis[1]), float(axis[2])), lower=lower, upper=upper,
        velocity=velocity, effort=effort, damping=damping, friction=friction,
        mimic=joint.mimic.joint if joint.mimic is not None else None)


def _link_inertial(link: object) -> tuple[float, np.ndarray, np.ndarray] | None:
    """Return (mass, com, inertia about com) of a link in its own frame, validated."""
    inertial = link.inertial
    if inertial is None:
        return None
    what = 'link %r' % link.name
    mass = _finite(inertial.mass, '%s mass' % what)
    if mass is None:
        raise URDFError('%s: <inertial> has no <mass>' % what)
    if mass < 0.0:
        raise URDFError('%s: negative mass %g kg' % (what, mass))
    t_link_inertial = _origin_transform(inertial.origin, '%s inertial' % what)
    if inertial.inertia is None:
        i_local = np.zeros((3, 3))
    else:
        values = [_finite(getattr(inertial.inertia, key), '%s inertia %s' % (what, key))
                  for key in ('ixx', 'ixy', 'ixz', 'iyy', 'iyz', 'izz')]
        i_local = inertia_from_urdf(*values)
    problem = inertia_problem(i_local)
    if problem is not None:
        raise URDFError('%s: %s' % (what, problem))
    rot = t_link_inertial[:3, :3]
    return mass, t_link_inertial[:3, 3].copy(), rot @ i_local @ rot.T


def load_urdf_string(xml: str, *, root_link: str | None = None,
                     tip_link: str | None = None) -> RigidBodyTree:
    """
    Build the rigid-body tree of a URDF document.

    Bodies are numbered depth-first from the root, children in document order.

    :param xml: URDF XML text.
    :param root_link: Link used as the fixed base (default: the URDF's root).
    :param tip_link: Last link of the chain to model (default: the whole tree).
    :return: The rigid-body tree.
    :raises URDFError: Malformed XML, unknown link names, floating or planar joints, zero
        joint axes, negative masses, unphysical inertias, non-finite numbers.
    """
    robot, warnings = parse_urdf(xml)
    links = {}
    for link in robot.links:
        if link.name in links:
            raise URDFError('link %r is defined twice' % link.name)
        links[link.name] = link
    if not links:
        raise URDFError('URDF has no <link>')
    joints = {}
    children: dict[str, list[object]] = {name: [] for name in links}
    parent_joint: dict[str, object] = {}
    for joint in robot.joints:
        if joint.name in joints:
            raise URDFError('joint %r is defined twice' % joint.name)
        joints[joint.name] = joint
        for role, link_name in (('parent', joint.parent), ('child', joint.child)):
            if link_name not in links:
                raise URDFError('joint %r: %s link %r is not defined' % (
                    joint.name, role, link_name))
        if joint.child in parent_joint:
            raise URDFError('link %r is the child of two joints (%r and %r)' % (
                joint.child, parent_joint[joint.child].name, joint.name))
        parent_joint[joint.child] = joint
        children[joint.parent].append(joint)
    roots = [name for name in links if name not in parent_joint]
    if len(roots) != 1:
        raise URDFError('URDF must have exactly one root link, found %s'
                        % (sorted(roots) or 'none (the joints form a loop)'))
    if root_link is None:
        root_link = roots[0]
    elif root_link not in links:
        raise URDFError('root_link %r is not a link of the URDF' % root_link)

    chain: set[str] | None = None
    if tip_link is not None:
        if tip_link not in links:
            raise URDFError('tip_link %r is not a link of the URDF' % tip_link)
        chain = set()
        link = tip_link
        while link != root_link:
            if link not in parent_joint:
                raise URDFError('tip_link %r is not below root_link %r' % (tip_link, root_link))
            chain.add(parent_joint[link].name)
            link = parent_joint[link].parent

    builder = _TreeBuilder(links, children, chain)
    builder.visit(root_link, -1, np.eye(4), depth=0)
    if builder.body_count == 0:
        raise URDFError('no actuated joint below link %r (only fixed joints)' % root_link)
    warnings.extend(builder.warnings)
    return builder.finish(robot.name or 'robot', root_link, tip_link, tuple(warnings))


class _TreeBuilder:
    """Depth-first walk of the URDF that numbers bodies and lumps inertia."""

    def __init__(self, links: dict, children: dict, chain: set[str] | None) -> None:
        self.links = links
        self.children = children
        self.chain = chain
        self.joints: list[JointInfo] = []
        self.parent: list[int] = []
        self.axis: list[np.ndarray] = []
        self.r_tree: list[np.ndarray] = []
        self.p_tree: list[np.ndarray] = []
        self.parts: list[list[tuple[float, np.ndarray, np.ndarray]]] = []
        self.frames: dict[str, LinkFrame] = {}
        self.locked: list[str] = []
        self.base_mass = 0.0
        self.warnings: list[str] = []

    @property
    def body_count(self) -> int:
        return len(self.joints)

    def visit(self, link_name: str, body: int, t_body_link: np.ndarray, depth: int) -> None:
        if depth > 2000:
            raise URDFError('kinematic tree is deeper than 2000 links')
        self.frames[link_name] = LinkFrame(link_name, body, t_body_link)
        inertial = _link_inertial(self.links[link_name])
        if inertial is not None:
            mass, com, i_c = inertial
            if body < 0:
                self.base_mass += mass
            else:
                rot = t_body_link[:3, :3]
                self.parts[body].append(
                    (mass, rot @ com + t_body_link[:3, 3], rot @ i_c @ rot.T))
        for joint in self.children[link_name]:
            kind = joint.type
            if kind in ('floating', 'planar'):
                raise URDFError('joint %r is %s: only fixed-base manipulators with revolute, '
                                'continuous, prismatic and fixed joints are supported'
                                % (joint.name, kind))
            if kind not in _MOVING and kind != 'fixed':
                raise URDFError('joint %r has unknown type %r' % (joint.name, kind))
            t_body_joint = t_body_link @ _origin_transform(joint.origin, 'joint %r' % joint.name)
            moving = kind in _MOVING
            if moving:
                info = _joint_info(joint)
                if self.chain is not None and joint.name not in self.chain:
                    self.locked.append(joint.name)
                    moving = False
            if not moving:
                self.visit(joint.child, body, t_body_joint, depth + 1)
                continue
            index = len(self.joints)
            self.joints.append(info)
            self.parent.append(body)
            self.axis.append(np.array(info.axis))
            self.r_tree.append(t_body_joint[:3, :3].copy())
            self.p_tree.append(t_body_joint[:3, 3].copy())
            self.parts.append([])
            self.visit(joint.child, index, np.eye(4), depth + 1)

    def finish(self, name: str, root_link: str, tip_link: str | None,
               warnings: tuple[str, ...]) -> RigidBodyTree:
        n = len(self.joints)
        mass = np.zeros(n)
        com = np.zeros((n, 3))
        inertia = np.zeros((n, 3, 3))
        for i, parts in enumerate(self.parts):
            if parts:
                mass[i], com[i], inertia[i] = combine_inertias(parts)
        kinds = np.array([PRISMATIC if j.kind == 'prismatic' else REVOLUTE for j in self.joints],
                         dtype=np.int64)
        subtree_mass = mass.copy()
        for i in range(n - 1, -1, -1):
            if self.parent[i] >= 0:
                subtree_mass[self.parent[i]] += subtree_mass[i]
        for i, joint in enumerate(self.joints):
            if subtree_mass[i] <= 0.0:
                warnings = warnings + ('joint %r moves no mass: the mass matrix is singular and '
                                       'forward dynamics is undefined' % joint.name,)
        for array in (mass, com, inertia):
            array.setflags(write=False)
        return RigidBodyTree(
            name=name, root_link=root_link, tip_link=tip_link, joints=tuple(self.joints),
            parent=np.array(self.parent, dtype=np.int64), kind=kinds,
            axis=np.array(self.axis, dtype=np.float64).reshape(n, 3),
            R_tree=np.array(self.r_tree, dtype=np.float64).reshape(n, 3, 3),
            p_tree=np.array(self.p_tree, dtype=np.float64).reshape(n, 3),
            inertia=BodyInertia(mass, com, inertia), links=dict(self.frames),
            base_mass=self.base_mass, locked_joints=tuple(self.locked), warnings=warnings)
