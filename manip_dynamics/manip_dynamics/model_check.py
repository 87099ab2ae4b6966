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
:func:`check_urdf_string` reads the URDF itself (with urdf_parser_py, like the loader) so it
can report every defect at once instead of stopping at the first one as the loader does,
and returns a list of :class:`Finding`.  Severities:

* ``error``: the model is wrong or unusable: negative or non-finite mass, inertia that is
  not positive semi-definite or violates the triangle inequality of the principal moments
  (Craig sec. 6.3), a joint that moves no mass (M(q) singular), an effort limit of zero,
  floating/planar joints, zero joint axes, the loader refusing the file.
* ``warning``: probably wrong: a link with visual/collision geometry but no ``<inertial>``,
  a moving link of zero mass, a centre of mass far outside the link's geometry, a principal
  moment too large for the geometry (often a unit mistake, e.g. g mm^2), an actuated joint
  without an effort limit.
* ``info``: worth knowing: point masses (zero inertia), mimic joints (independent DoF here),
  links whose geometry is a mesh (the geometry checks are skipped: meshes are never opened).

The six URDF inertia values describe a symmetric tensor by construction, so symmetry
cannot fail for a URDF; it is checked for inertias given as matrices (payloads).
"""

from collections.abc import Callable
from dataclasses import dataclass
import math

import numpy as np
from numpy.typing import NDArray

from manip_dynamics.errors import ManipDynamicsError, URDFError
from manip_dynamics.model import load_urdf_string
from manip_dynamics.model.urdf_loader import parse_urdf
from manip_dynamics.spatial import inertia_from_urdf, make_transform, rpy_to_matrix

FloatArray = NDArray[np.float64]

SEVERITIES = ('error', 'warning', 'info')
_MOVING = ('revolute', 'continuous', 'prismatic')

#: A centre of mass farther than this fraction of the geometry's bounding-box diagonal
#: (and at least ``COM_MARGIN_MIN`` metres) outside the box is reported.
COM_MARGIN_FRACTION = 0.25
COM_MARGIN_MIN = 0.02


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


def _primitive_half_extents(geometry: object) -> FloatArray | None:
    """Return the half extents of a primitive's own bounding box, or None for a mesh."""
    name = type(geometry).__name__
    if name == 'Box':
        return 0.5 * np.abs(np.array(geometry.size, dtype=np.float64))
    if name == 'Cylinder':
        r = abs(float(geometry.radius))
        return np.array([r, r, 0.5 * abs(float(geometry.length))])
    if name == 'Sphere':
        return np.full(3, abs(float(geometry.radius)))
    return None


def geometry_bounds(link: object) -> tuple[FloatArray, FloatArray, bool] | None:
    """
    Return the axis-aligned bounding box of a link's primitive geometry, in the link frame.

    Uses every ``<visual>`` and ``<collision>`` box, cylinder and sphere (meshes are never
    opened).

    :param link: A ``urdf_parser_py`` link.
    :return: ``(lower (3,), upper (3,), has_mesh)`` [m], or None when the link has no
        primitive geometry.
    """
    lower = np.full(3, np.inf)
    upper = np.full(3, -np.inf)
    has_mesh = False
    found = False
    for element in list(link.visuals or []) + list(link.collisions or []):
        if element.geometry is None:
            continue
        half = _primitive_half_extents(element.geometry)
        if half is None:
            has_mesh = True
            continue
        if not np.all(np.isfinite(half)):
            continue
        pose = _pose(element.origin)
        # Bounding box of the rotated box: |R| half + centre.
        extent = np.abs(pose[:3, :3]) @ half
        lower = np.minimum(lower, pose[:3, 3] - extent)
        upper = np.maximum(upper, pose[:3, 3] + extent)
        found = True
    if not found:
        return None
    return lower, upper, has_mesh


def _has_geometry(link: object) -> bool:
    return any(e.geometry is not None
               for e in list(link.visuals or []) + list(link.collisions or []))


def _check_inertia(name: str, mass: float, values: list[float | None],
                   add: Callable[[str, str, str, str], None]) -> FloatArray | None:
    """Check a link's inertia values; return the tensor when it is physical."""
    if any(v is None for v in values):
        values = [0.0 if v is None else v for v in values]
    if not all(math.isfinite(v) for v in values):
        add('error', 'link', name, 'inertia has NaN, inf or non-numeric entries')
        return None
    tensor = inertia_from_urdf(*values)
    moments = np.linalg.eigvalsh(tensor)
    scale = max(float(np.max(np.abs(moments))), 1e-12)
    tol = 1e-9 * scale
    text = ', '.join('%.6g' % m for m in moments)
    if scale <= 1e-12:
        if mass > 0.0:
            add('info', 'link', name, 'point mass: all inertia values are zero')
        return tensor
    if moments[0] < -tol:
        add('error', 'link', name, 'inertia tensor is not positive definite (principal moments '
            '%s kg m^2); check the signs of ixy, ixz, iyz (URDF uses the tensor, not the '
            'products of inertia with a minus sign)' % text)
        return None
    if moments[0] + moments[1] < moments[2] - tol:
        add('error', 'link', name, 'principal moments %s kg m^2 violate the triangle '
            'inequality I1 + I2 >= I3: no rigid body has this inertia' % text)
        return None
    if moments[0] <= tol:
        add('warning', 'link', name, 'inertia tensor is singular (principal moments %s kg '
            'm^2): only an infinitely thin rod has that' % text)
    if mass == 0.0:
        add('warning', 'link', name, 'inertia without mass: moments %s kg m^2 with mass 0'
            % text)
    return tensor


def check_robot(robot: object) -> list[Finding]:
    """
    Check a parsed URDF (``urdf_parser_py`` Robot); see the module docstring.

    :param robot: The parsed robot description.
    :return: Findings, errors first, then warnings, then info, in document order.
    """
    findings: list[Finding] = []

    def add(severity: str, kind: str, name: str, message: str) -> None:
        findings.append(Finding(severity, kind, name, message))

    links = {link.name: link for link in robot.links}
    child_joint = {joint.child: joint for joint in robot.joints}
    children: dict[str, list[object]] = {}
    for joint in robot.joints:
        children.setdefault(joint.parent, []).append(joint)
    masses: dict[str, float] = {}

    for link in robot.links:
        name = link.name
        inertial = link.inertial
        joint = child_joint.get(name)
        moving = joint is not None and joint.type in _MOVING
        if inertial is None:
            masses[name] = 0.0
            if _has_geometry(link) and joint is not None:
                add('warning', 'link', name, 'has visual/collision geometry but no <inertial>: '
                    'it is treated as massless')
            continue
        mass = _float(inertial.mass)
        if mass is None:
            add('error', 'link', name, '<inertial> has no <mass>')
            masses[name] = 0.0
            continue
        if not math.isfinite(mass):
            add('error', 'link', name, 'mass is %r: it must be a finite number' % mass)
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
        tensor = _check_inertia(name, mass, values, add)
        if mass <= 0.0:
            continue
        bounds = geometry_bounds(link)
        if bounds is None:
            if _has_geometry(link):
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

    def subtree_mass(link_name: str) -> float:
        total = masses.get(link_name, 0.0)
        for joint in children.get(link_name, []):
            total += subtree_mass(joint.child)
        return total

    for joint in robot.joints:
        name = joint.name
        if joint.type in ('floating', 'planar'):
            add('error', 'joint', name, 'type %r: this suite models fixed-base manipulators '
                'only' % joint.type)
            continue
        if joint.type not in _MOVING:
            continue
        axis = np.array(joint.axis if joint.axis is not None else (1.0, 0.0, 0.0), dtype=float)
        if axis.shape != (3,) or not np.all(np.isfinite(axis)) or np.linalg.norm(axis) < 1e-12:
            add('error', 'joint', name, 'axis %s is not a usable direction' % (joint.axis,))
        if joint.child in links and subtree_mass(joint.child) <= 0.0:
            add('error', 'joint', name, 'moves no mass (link %r and everything below it are '
                'massless): the mass matrix is singular and forward dynamics fails'
                % joint.child)
        limit = joint.limit
        effort = None if limit is None else _float(limit.effort)
        if effort is None:
            add('warning', 'joint', name, 'no effort limit: controllers cannot clamp its torque')
        elif not math.isfinite(effort) or effort < 0.0:
            add('error', 'joint', name, 'effort limit %r is not a finite number >= 0' % effort)
        elif effort == 0.0:
            add('error', 'joint', name, 'effort limit is 0: gravity compensation clamped to it '
                'commands no torque')
        if limit is not None and joint.type != 'continuous':
            lo, hi = _float(limit.lower) or 0.0, _float(limit.upper) or 0.0
            if lo > hi:
                add('error', 'joint', name, 'lower limit %g is above upper limit %g' % (lo, hi))
        if joint.mimic is not None:
            add('info', 'joint', name, 'mimics %r: modelled as an independent degree of freedom'
                % joint.mimic.joint)
    order = {s: i for i, s in enumerate(SEVERITIES)}
    return sorted(findings, key=lambda f: order[f.severity])


def check_urdf_string(xml: str, *, root_link: str | None = None,
                      tip_link: str | None = None) -> list[Finding]:
    """
    Check the inertial data, joints and limits of a URDF document.

    Also loads it as the dynamics library would (with ``root_link``/``tip_link``), so
    everything the loader refuses is reported as an error too.

    :param xml: URDF XML text.
    :param root_link: Base link to load the model with (default: the URDF root).
    :param tip_link: Chain tip to load the model with (default: the whole tree).
    :return: Findings, errors first; an empty list means nothing to report.
    :raises URDFError: The text is not a URDF at all (malformed XML, empty).
    """
    robot, parser_warnings = parse_urdf(xml)
    findings = check_robot(robot)
    name = robot.name or 'robot'
    for text in parser_warnings:
        findings.append(Finding('warning', 'robot', name, 'URDF parser: %s' % text.strip()))
    try:
        load_urdf_string(xml, root_link=root_link, tip_link=tip_link)
    except ManipDynamicsError as exc:
        message = str(exc)
        if not any(f.severity == 'error' and f.name in message for f in findings):
            findings.insert(0, Finding('error', 'robot', name, 'the dynamics loader refuses '
                                       'the URDF: %s' % message))
    return findings


def check_urdf_file(path: str, *, root_link: str | None = None,
                    tip_link: str | None = None) -> list[Finding]:
    """
    Check a URDF file; see :func:`check_urdf_string`.

    :param path: Path of a ``.urdf`` file (expand xacro files first).
    :raises URDFError: The file cannot be read or is not a URDF.
    """
    try:
        with open(path, 'r', encoding='utf-8') as stream:
            xml = stream.read()
    except OSError as exc:
        raise URDFError('cannot read URDF file %r: %s' % (str(path), exc.strerror)) from None
    return check_urdf_string(xml, root_link=root_link, tip_link=tip_link)


def has_errors(findings: list[Finding]) -> bool:
    """Return whether any finding is an error."""
    return any(f.severity == 'error' for f in findings)
