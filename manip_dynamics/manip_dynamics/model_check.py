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
Check the inertial and limit data of a URDF before trusting it (``manip-dynamics check``).

Wrong inertial data is the most common reason gravity compensation fails on a real arm.
:func:`check_urdf_string` reads the URDF itself (the loader's parser for links and joints,
:mod:`xml.etree.ElementTree` for the visual and collision geometry) so it can report every
defect at once instead of stopping at the first one as the loader does, and returns a list
of :class:`Finding`.  The rule is the loader's: physically suspect is a warning, impossible
is an error.  Severities:

* ``error``: the model is impossible or unusable: negative or non-finite mass, non-finite
  numbers, floating/planar joints, zero joint axes, an effort limit of zero, lower limit
  above upper, anything else the loader refuses.
* ``warning``: physically suspect, loaded as written (``--strict`` fails on these): inertia
  that is not positive semi-definite or violates the triangle inequality of the principal
  moments (Craig sec. 6.3), with a suggested correction and, for links bolted to the root,
  the note that they cannot affect the dynamics; a joint that moves no mass (M(q)
  singular); a ``<mimic>`` naming no joint; a link with visual/collision geometry but no
  ``<inertial>``; a moving link of zero mass; a singular inertia; a centre of mass far
  outside the link's geometry; a principal moment too large for the geometry (often a unit
  mistake, e.g. g mm^2).
* ``info``: worth knowing, never a failure: point masses (zero inertia), mimic joints
  (independent DoF here), links whose geometry is a mesh (the geometry checks are skipped:
  meshes are never opened), actuated joints without an effort limit, defects of links
  outside the model (above ``root_link``), messages of the URDF parser.

The six URDF inertia values describe a symmetric tensor by construction, so symmetry
cannot fail for a URDF; it is checked for inertias given as matrices (payloads).
"""

from collections.abc import Callable
from dataclasses import dataclass
import math
import xml.etree.ElementTree as ElementTree

import numpy as np
from numpy.typing import NDArray

from manip_dynamics.errors import URDFError
from manip_dynamics.model import load_urdf_string, RigidBodyTree
from manip_dynamics.model.rigid_body_tree import massless_joint_warning
from manip_dynamics.model.urdf_loader import (
    dangling_mimic_warning, inertia_warning, links_above_actuated_joints,
    MOVING_JOINT_TYPES, parse_urdf, read_robot_element, read_urdf_file)
from manip_dynamics.spatial import (
    inertia_defect, INERTIA_FLOOR, inertia_from_urdf, INERTIA_TOLERANCE, make_transform,
    rpy_to_matrix)

FloatArray = NDArray[np.float64]

SEVERITIES = ('error', 'warning', 'info')

#: A centre of mass farther than this fraction of the geometry's bounding-box diagonal
#: (and at least ``COM_MARGIN_MIN`` metres) outside the box is reported.
COM_MARGIN_FRACTION = 0.25
COM_MARGIN_MIN = 0.02

#: One visual or collision shape of a link: ``(half extents (3,) [m] of the shape's own
#: bounding box, or None for a mesh or an unknown shape; pose (4, 4) in the link frame)``.
Shape = tuple[FloatArray | None, FloatArray]


@dataclass(frozen=True)
class Finding:
    """
    One result of :func:`check_urdf_string`.

    ``severity`` is ``'error'``, ``'warning'`` or ``'info'``; ``kind`` is ``'link'``,
    ``'joint'`` or ``'robot'``; ``name`` is the link or joint name (the robot name for
    ``'robot'``); ``message`` says what is wrong and, where possible, what to do.
    """

    severity: str
    kind: str
    name: str
    message: str

    def __str__(self) -> str:
        """Return ``"error: link 'x': message"``."""
        return '%s: %s %r: %s' % (self.severity, self.kind, self.name, self.message)

    def as_dict(self) -> dict[str, str]:
        """Return the finding as a JSON-friendly dict."""
        return {'severity': self.severity, 'kind': self.kind, 'name': self.name,
                'message': self.message}


def _float(value: object) -> float | None:
    if value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def _pose(origin: object | None) -> FloatArray:
    if origin is None:
        return np.eye(4)
    xyz = [float(v) for v in (origin.xyz or (0.0, 0.0, 0.0))]
    rpy = [float(v) for v in (origin.rpy or (0.0, 0.0, 0.0))]
    return make_transform(rpy_to_matrix(rpy), xyz)


def _numbers(text: str | None, count: int) -> FloatArray | None:
    """Return ``count`` finite numbers parsed from an attribute, or None."""
    if text is None:
        return None
    try:
        values = np.array([float(v) for v in text.split()], dtype=np.float64)
    except ValueError:
        return None
    if values.shape != (count,) or not np.all(np.isfinite(values)):
        return None
    return values


def _shape(element: ElementTree.Element) -> Shape | None:
    """Return the shape of a ``<visual>`` or ``<collision>``; None when unreadable."""
    pose = None
    geometry = None
    for child in element:
        if child.tag == 'origin' and pose is None:
            xyz = _numbers(child.get('xyz', '0 0 0'), 3)
            rpy = _numbers(child.get('rpy', '0 0 0'), 3)
            if xyz is None or rpy is None:
                return None
            pose = make_transform(rpy_to_matrix(rpy), xyz)
        elif child.tag == 'geometry' and geometry is None:
            geometry = child
    if geometry is None:
        return None
    pose = np.eye(4) if pose is None else pose
    for shape in geometry:
        if shape.tag == 'box':
            size = _numbers(shape.get('size'), 3)
            return None if size is None else (0.5 * np.abs(size), pose)
        if shape.tag == 'cylinder':
            r, length = _numbers(shape.get('radius'), 1), _numbers(shape.get('length'), 1)
            if r is None or length is None:
                return None
            return np.array([abs(r[0]), abs(r[0]), 0.5 * abs(length[0])]), pose
        if shape.tag == 'sphere':
            r = _numbers(shape.get('radius'), 1)
            return None if r is None else (np.full(3, abs(r[0])), pose)
        if isinstance(shape.tag, str):
            return None, pose  # a mesh, or a shape urdfdom does not know
    return None


def link_shapes(xml: str | bytes) -> dict[str, list[Shape]]:
    """
    Return the visual and collision shapes of every link of a URDF.

    Read with :mod:`xml.etree.ElementTree`, tolerantly: an unreadable shape is skipped.

    :param xml: URDF XML text.
    :return: Link name -> its shapes (see :data:`Shape`); links without any are absent.
    """
    try:
        root = read_robot_element(xml)
    except URDFError:
        return {}
    shapes: dict[str, list[Shape]] = {}
    for link in root:
        if link.tag != 'link':
            continue
        name = link.get('name')
        for element in link:
            if element.tag in ('visual', 'collision') and name is not None:
                shape = _shape(element)
                if shape is not None:
                    shapes.setdefault(name, []).append(shape)
    return shapes


def geometry_bounds(shapes: list[Shape]) -> tuple[FloatArray, FloatArray, bool] | None:
    """
    Return the axis-aligned bounding box of a link's primitive geometry, in the link frame.

    Uses every box, cylinder and sphere (meshes are never opened).

    :param shapes: The link's shapes from :func:`link_shapes`.
    :return: ``(lower (3,), upper (3,), has_mesh)`` [m], or None when the link has no
        primitive geometry.
    """
    lower = np.full(3, np.inf)
    upper = np.full(3, -np.inf)
    has_mesh = False
    found = False
    for half, pose in shapes:
        if half is None:
            has_mesh = True
            continue
        # Bounding box of the rotated box: |R| half + centre.
        extent = np.abs(pose[:3, :3]) @ half
        lower = np.minimum(lower, pose[:3, 3] - extent)
        upper = np.maximum(upper, pose[:3, 3] + extent)
        found = True
    if not found:
        return None
    return lower, upper, has_mesh


def _check_inertia(name: str, mass: float, values: list[float | None],
                   add: Callable[[str, str, str, str], None],
                   context: Callable[[], dict]) -> FloatArray | None:
    """Check a link's inertia values; return the tensor when it is physical."""
    if any(v is None for v in values):
        values = [0.0 if v is None else v for v in values]
    if not all(math.isfinite(v) for v in values):
        add('error', 'link', name, 'inertia has NaN, inf or non-numeric entries')
        return None
    tensor = inertia_from_urdf(*values)
    moments = np.linalg.eigvalsh(tensor)
    tol = max(INERTIA_TOLERANCE * float(np.max(np.abs(moments))), INERTIA_FLOOR)
    text = ', '.join('%.6g' % m for m in moments)
    defect = inertia_defect(tensor)
    if defect is not None:
        where = context()
        if where.pop('outside', False):
            add('info', 'link', name, inertia_warning(defect) + '; the link is outside the '
                'model (above its root link), so this does not count')
        else:
            add('warning', 'link', name, inertia_warning(defect, **where))
        return None
    if float(np.max(np.abs(moments))) <= tol:
        if mass > 0.0:
            add('info', 'link', name, 'point mass: all inertia values are zero')
        return tensor
    if moments[0] <= tol:
        add('warning', 'link', name, 'inertia tensor is singular (principal moments %s kg '
            'm^2): only an infinitely thin rod has that' % text)
    if mass == 0.0:
        add('warning', 'link', name, 'inertia without mass: moments %s kg m^2 with mass 0'
            % text)
    return tensor


def _link_context(tree: RigidBodyTree | None, children: dict[str, list[object]]
                  ) -> Callable[[str], dict]:
    """Return link -> keyword arguments of :func:`inertia_warning` (where the link is)."""
    can_be_root = links_above_actuated_joints(children) if tree is not None else set()

    def context(name: str) -> dict:
        if tree is None:
            return {}
        frame = tree.links.get(name)
        if frame is None:
            return {'outside': True}
        if frame.body < 0:
            return {'bolted_to': tree.root_link}
        return {'moved_by': tree.joints[frame.body].name,
                'below': tuple(j.child for j in children.get(name, [])
                               if j.child in can_be_root)}
    return context


def check_robot(robot: object, tree: RigidBodyTree | None = None,
                shapes: dict[str, list[Shape]] | None = None) -> list[Finding]:
    """
    Check a parsed URDF (from :func:`parse_urdf`); see the module docstring.

    :param robot: The parsed robot description.
    :param tree: The loaded model, when the loader accepts the URDF: says which links are
        bolted to the root, which joint moves each link, and which are outside the model.
    :param shapes: Visual and collision shapes per link (:func:`link_shapes`).
    :return: Findings, errors first, then warnings, then info, in document order.
    """
    findings: list[Finding] = []
    shapes = shapes or {}

    def add(severity: str, kind: str, name: str, message: str) -> None:
        findings.append(Finding(severity, kind, name, message))

    links = {link.name: link for link in robot.links}
    joint_names = {joint.name for joint in robot.joints}
    child_joint = {joint.child: joint for joint in robot.joints}
    children: dict[str, list[object]] = {}
    for joint in robot.joints:
        children.setdefault(joint.parent, []).append(joint)
    masses: dict[str, float] = {}
    context = _link_context(tree, children)

    for link in robot.links:
        name = link.name
        inertial = link.inertial
        joint = child_joint.get(name)
        moving = joint is not None and joint.type in MOVING_JOINT_TYPES
        if inertial is None:
            masses[name] = 0.0
            if name in shapes and joint is not None:
                add('warning', 'link', name, 'has visual/collision geometry but no <inertial>: '
                    'it is treated as massless')
            continue
        mass = _float(inertial.mass)
        if mass is None:
            add('error', 'link', name, '<inertial> has no <mass>')
            masses[name] = 0.0
            continue
        if not math.isfinite(mass):
            add('error', 'link', name, 'mass is %s: it must be a finite number' % mass)
            masses[name] = 0.0
            continue
        if mass < 0.0:
            add('error', 'link', name, 'negative mass %g kg' % mass)
            masses[name] = 0.0
            continue
        masses[name] = mass
        if mass == 0.0 and moving:
            add('warning', 'link', name, 'zero mass on a moving link (joint %r): is the '
                '<mass> missing a value?' % joint.name)
        inertia = inertial.inertia
        values = ([None] * 6 if inertia is None else
                  [_float(getattr(inertia, k)) for k in ('ixx', 'ixy', 'ixz', 'iyy', 'iyz',
                                                         'izz')])
        if inertia is None and mass > 0.0:
            add('warning', 'link', name, '<inertial> has no <inertia>: treated as a point mass')
        try:
            t_inertial = _pose(inertial.origin)
        except (TypeError, ValueError):
            add('error', 'link', name, '<inertial> <origin> is not numeric')
            continue
        if not np.all(np.isfinite(t_inertial)):
            add('error', 'link', name, '<inertial> <origin> has NaN or inf')
            continue
        tensor = _check_inertia(name, mass, values, add, lambda: context(name))
        if mass <= 0.0:
            continue
        bounds = geometry_bounds(shapes.get(name, []))
        if bounds is None:
            if name in shapes:
                add('info', 'link', name, 'geometry is a mesh: centre of mass and inertia not '
                    'compared with the geometry (meshes are never opened)')
            continue
        lower, upper, has_mesh = bounds
        if has_mesh:
            continue  # the primitives may cover only part of the link
        com = t_inertial[:3, 3]
        diagonal = float(np.linalg.norm(upper - lower))
        outside = float(np.linalg.norm(np.maximum(lower - com, 0.0)
                                       + np.maximum(com - upper, 0.0)))
        margin = max(COM_MARGIN_MIN, COM_MARGIN_FRACTION * diagonal)
        if outside > margin:
            add('warning', 'link', name, 'centre of mass (%s) m is %.3g m outside the link '
                'geometry (box %s .. %s m): wrong <inertial> <origin>?' % (
                    ', '.join('%.4g' % c for c in com), outside,
                    ', '.join('%.3g' % v for v in lower),
                    ', '.join('%.3g' % v for v in upper)))
        elif tensor is not None:
            # Every point of the body lies in the box: a moment about the centre of mass
            # cannot exceed m d^2, d the box diagonal (plus the distance outside).
            reach = diagonal + outside
            largest = float(np.max(np.linalg.eigvalsh(tensor)))
            if reach > 0.0 and largest > mass * reach * reach:
                add('warning', 'link', name, 'largest principal moment %.4g kg m^2 is more '
                    'than mass x (geometry size)^2 = %.4g kg m^2 allows: wrong units?' % (
                        largest, mass * reach * reach))

    subtree_mass = _subtree_masses(robot, masses, children)
    for joint in robot.joints:
        name = joint.name
        if joint.type in ('floating', 'planar'):
            add('error', 'joint', name, 'type %r: this suite models fixed-base manipulators '
                'only; choose a root_link below it' % joint.type)
            continue
        if joint.type not in MOVING_JOINT_TYPES:
            continue
        axis = np.array(joint.axis if joint.axis is not None else (1.0, 0.0, 0.0), dtype=float)
        if axis.shape != (3,) or not np.all(np.isfinite(axis)) or np.linalg.norm(axis) < 1e-12:
            add('error', 'joint', name, 'axis %s is not a usable direction'
                % ' '.join('%g' % v for v in np.ravel(axis)))
        if joint.child in links and subtree_mass.get(joint.child, 0.0) <= 0.0:
            add('warning', 'joint', name, massless_joint_warning(joint.child))
        limit = joint.limit
        effort = None if limit is None else _float(limit.effort)
        if effort is None:
            add('info', 'joint', name, 'no effort limit: controllers cannot clamp its torque')
        elif not math.isfinite(effort) or effort < 0.0:
            add('error', 'joint', name, 'effort limit %s is not a finite number >= 0' % effort)
        elif effort == 0.0:
            add('error', 'joint', name, 'effort limit is 0: gravity compensation clamped to it '
                'commands no torque')
        if limit is not None and joint.type != 'continuous':
            lo, hi = _float(limit.lower) or 0.0, _float(limit.upper) or 0.0
            if lo > hi:
                add('error', 'joint', name, 'lower limit %g is above upper limit %g' % (lo, hi))
        if joint.mimic is not None:
            if joint.mimic.joint in joint_names:
                add('info', 'joint', name, 'mimics %r: modelled as an independent degree of '
                    'freedom' % joint.mimic.joint)
            else:
                add('warning', 'joint', name, dangling_mimic_warning(joint.mimic.joint))
    order = {s: i for i, s in enumerate(SEVERITIES)}
    return sorted(findings, key=lambda f: order[f.severity])


def _subtree_masses(robot: object, masses: dict[str, float],
                    children: dict[str, list[object]]) -> dict[str, float]:
    """Return link -> mass of the link and everything below it (iterative, any depth)."""
    order: list[str] = []
    parents = {joint.child for joint in robot.joints}
    stack = [link.name for link in robot.links if link.name not in parents]
    seen: set[str] = set()
    while stack:
        link = stack.pop()
        if link in seen:
            continue  # a loop: the loader reports it
        seen.add(link)
        order.append(link)
        stack.extend(joint.child for joint in children.get(link, []))
    totals = {name: masses.get(name, 0.0) for name in order}
    for link in reversed(order):
        for joint in children.get(link, []):
            if joint.child in totals and joint.child != link:
                totals[link] += totals[joint.child]
    return totals


def check_urdf_string(xml: str, *, root_link: str | None = None,
                      tip_link: str | None = None) -> list[Finding]:
    """
    Check the inertial data, joints and limits of a URDF document.

    Also loads it as the dynamics library would (with ``root_link``/``tip_link``, not
    strict), so everything the loader refuses is reported as an error too, and each
    warning says where the link sits in that model.

    :param xml: URDF XML text.
    :param root_link: Base link to load the model with (default: the URDF root).
    :param tip_link: Chain tip to load the model with (default: the whole tree).
    :return: Findings, errors first; an empty list means nothing to report.
    :raises URDFError: The text is not a URDF at all (malformed XML, empty).
    """
    robot, parser_messages = parse_urdf(xml)
    name = robot.name or 'robot'
    tree = None
    refusal = None
    try:
        tree = load_urdf_string(xml, root_link=root_link, tip_link=tip_link)
    except URDFError as exc:
        refusal = str(exc)
    findings = check_robot(robot, tree, link_shapes(xml))
    for text in parser_messages:
        findings.append(Finding('info', 'robot', name, 'URDF parser: %s' % text))
    if refusal is not None and not any(f.severity == 'error' and f.name in refusal
                                       for f in findings):
        findings.insert(0, Finding('error', 'robot', name, 'the dynamics loader refuses '
                                   'the URDF: %s' % refusal))
    return findings


def check_urdf_file(path: str, *, root_link: str | None = None,
                    tip_link: str | None = None) -> list[Finding]:
    """
    Check a URDF file; see :func:`check_urdf_string`.

    :param path: Path of a ``.urdf`` file (expand xacro files first).
    :raises URDFError: The file cannot be read, is not text, or is not a URDF.
    """
    return check_urdf_string(read_urdf_file(path), root_link=root_link, tip_link=tip_link)


def has_errors(findings: list[Finding]) -> bool:
    """Return whether any finding is an error."""
    return any(f.severity == 'error' for f in findings)


def fails_strict(findings: list[Finding]) -> bool:
    """Return whether ``check --strict`` fails: an error, or a physically suspect warning."""
    return any(f.severity in ('error', 'warning') for f in findings)
