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

What is modelled and how (see docs/THEORY.md and docs/PYTHON_API.md):

* the loader accepts what urdfdom (robot_state_publisher, MoveIt, Pinocchio) accepts.  It
  reads the XML with :mod:`xml.etree.ElementTree`, keeps only what the dynamics use (links
  with their ``<inertial>``, joints with origin, parent, child, axis, limit, dynamics and
  mimic, and only the attributes of those) and hands that to urdf_parser_py.  Everything
  else is ignored whatever its shape: ``<transmission>`` in any format, ``<gazebo>``,
  ``<ros2_control>``, ``<sensor>``, materials and textures, visuals, collisions, unknown
  elements and attributes.  Meshes are never opened;
* revolute, continuous and prismatic joints are degrees of freedom; fixed joints merge the
  child's inertia into the moving body and keep the child's frame for wrenches, Jacobians and
  tip selection; floating and planar joints are rejected on the modelled tree (fixed-base
  manipulators only);
* mimic joints are independent degrees of freedom (the ``<mimic>`` tag is recorded only);
* links without ``<inertial>`` are massless;
* ``root_link`` makes that link the fixed base: everything above it and everything rigidly
  attached to it carries no dynamics;
* ``tip_link`` selects the chain root -> tip as KDL does; every actuated joint off that chain
  (a finger hanging off the wrist, a tool beyond the tip) is *locked* at position 0 and its
  bodies are lumped into the chain body they hang from, so their weight still counts.

Physically suspect is a warning, impossible is an error.  An inertia whose principal moments
are negative or violate the triangle inequality, and a joint that moves no mass, are loaded
as written and listed in the tree's ``warnings``, and so is a ``<mimic>`` naming a joint that
does not exist (urdfdom loads it); ``strict=True`` refuses them.  Negative or non-finite
masses, non-finite numbers, zero joint axes, loops, duplicate names, floating or planar
joints, and a tree without any actuated joint are errors.  Every walk over the tree is
iterative: depth is limited by memory only.
"""

import math
import os
import re
import threading
import xml.etree.ElementTree as ElementTree

import numpy as np
from urdf_parser_py import urdf as urdf_module
from urdf_parser_py.xml_reflection import core as xml_core

from manip_dynamics.errors import URDFError
from manip_dynamics.model.rigid_body_tree import (
    BodyInertia, combine_inertias, JointInfo, LinkFrame, massless_joint_warning,
    massless_subtree_joints, PRISMATIC, REVOLUTE, RigidBodyTree)
from manip_dynamics.spatial import (
    inertia_defect, inertia_from_urdf, InertiaDefect, make_transform, rpy_to_matrix)

#: URDF joint types that move (one degree of freedom each); the others are fixed or not
#: read by the dynamics.
MOVING_JOINT_TYPES = ('revolute', 'continuous', 'prismatic')
_PARSER_LOCK = threading.Lock()

#: What the dynamics read from a URDF: element -> (attributes kept, child elements kept).
#: Everything else is dropped before urdf_parser_py sees the document; of each kept child
#: only the first is kept, as urdfdom reads only the first.
_KEPT = {
    'robot': (('name',), ('link', 'joint')),
    'link': (('name',), ('inertial',)),
    'inertial': ((), ('origin', 'mass', 'inertia')),
    'origin': (('xyz', 'rpy'), ()),
    'mass': (('value',), ()),
    'inertia': (('ixx', 'ixy', 'ixz', 'iyy', 'iyz', 'izz'), ()),
    'joint': (('name', 'type'), ('origin', 'parent', 'child', 'axis', 'limit', 'dynamics',
                                 'mimic')),
    'parent': (('link',), ()),
    'child': (('link',), ()),
    'axis': (('xyz',), ()),
    'limit': (('lower', 'upper', 'effort', 'velocity'), ()),
    'dynamics': (('damping', 'friction'), ()),
    'mimic': (('joint', 'multiplier', 'offset'), ()),
}

#: Children of ``<robot>`` and ``<link>`` that may appear many times (all kept).
_REPEATED = ('link', 'joint')


def read_urdf_file(path: str) -> str:
    """
    Return the text of a URDF file.

    :param path: Path of the file (UTF-8, a byte-order mark is allowed, or the encoding its
        XML declaration names).
    :return: Its text.
    :raises URDFError: The file cannot be read, or is not text in that encoding (a binary
        file).
    """
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise URDFError('URDF file path must be a string or a path, got %s'
                        % type(path).__name__)
    try:
        with open(path, 'rb') as stream:
            data = stream.read()
    except OSError as exc:
        raise URDFError('cannot read URDF file %r: %s' % (str(path), exc.strerror)) from None
    declared = re.match(rb'<\?xml[^>]*encoding=["\']([A-Za-z0-9._-]+)["\']', data)
    encoding = declared.group(1).decode('ascii') if declared else 'utf-8-sig'
    try:
        return data.decode('utf-8-sig' if encoding.lower() in ('utf-8', 'utf8') else encoding)
    except UnicodeDecodeError as exc:
        raise URDFError('URDF file %r is not %s text (byte %d): is it a binary file, e.g. a '
                        'mesh or a compressed archive?' % (str(path), encoding.upper().replace(
                            '-SIG', ''), exc.start)) from None
    except LookupError:
        raise URDFError('URDF file %r declares the unknown encoding %r' % (
            str(path), encoding)) from None


def load_urdf_file(path: str, *, root_link: str | None = None, tip_link: str | None = None,
                   strict: bool = False) -> RigidBodyTree:
    """
    Read a URDF file and build its rigid-body tree; see :func:`load_urdf_string`.

    :param path: Path of a ``.urdf`` file (UTF-8 text).
    :param root_link: Link used as the fixed base (default: the URDF's root).
    :param tip_link: Last link of the chain to model (default: the whole tree).
    :param strict: Refuse physically suspect data instead of listing it in ``warnings``.
    :return: The rigid-body tree.
    :raises URDFError: The file cannot be read, is not text, or the URDF is not usable.
    """
    return load_urdf_string(read_urdf_file(path), root_link=root_link, tip_link=tip_link,
                            strict=strict)


#: Numeric attributes of the kept elements: element -> attribute -> how many numbers.
_NUMBERS = {
    'origin': {'xyz': 3, 'rpy': 3},
    'mass': {'value': 1},
    'inertia': dict.fromkeys(('ixx', 'ixy', 'ixz', 'iyy', 'iyz', 'izz'), 1),
    'axis': {'xyz': 3},
    'limit': dict.fromkeys(('lower', 'upper', 'effort', 'velocity'), 1),
    'dynamics': {'damping': 1, 'friction': 1},
    'mimic': {'multiplier': 1, 'offset': 1},
}


def _check_numbers(robot: ElementTree.Element) -> None:
    """
    Refuse a numeric attribute that is not the right count of numbers, naming its owner.

    urdf_parser_py's own message names neither the link nor the joint; this one does, e.g.
    ``link 'arm': <inertial><mass value="abc">: not a number``.

    :param robot: The ``<robot>`` element as :func:`_dynamics_only` returns it.
    :raises URDFError: The first bad attribute, with its link or joint.
    """
    for owner in robot:
        label = '%s %r' % (owner.tag, owner.get('name'))
        stack = [(owner, '')]
        while stack:
            element, path = stack.pop()
            for child in element:
                where = '%s<%s>' % (path, child.tag)
                for key, count in _NUMBERS.get(child.tag, {}).items():
                    text = child.get(key)
                    if text is None:
                        continue
                    words = text.split()
                    try:
                        values = [float(word) for word in words]
                    except ValueError:
                        values = None
                    if values is None or len(values) != count:
                        hint = (' (an unexpanded xacro expression: run xacro first)'
                                if '${' in text or '$(' in text else '')
                        raise URDFError('%s: %s %s="%s" must be %s%s' % (
                            label, where, key, text, 'a number' if count == 1 else
                            '%d numbers separated by spaces' % count, hint))
                stack.append((child, where))


_PREFIXED_NAME = re.compile(r'</?([A-Za-z_][\w.-]*):[A-Za-z_]|\s([A-Za-z_][\w.-]*):[\w.-]+\s*=')
_DECLARED_PREFIX = re.compile(r'xmlns:([A-Za-z_][\w.-]*)\s*=')


def _parse_xml(xml: str | bytes, messages: list[str]) -> ElementTree.Element:
    """
    Parse XML text; declare namespace prefixes a xacro left undeclared, as urdfdom ignores them.

    urdfdom (TinyXML) does not know namespaces: ``<xacro:property>`` is an element it does
    not read. An XML parser refuses a prefix without ``xmlns:`` declaration ("unbound
    prefix"); such prefixes are declared here (an ``urn:`` of no meaning), so the elements
    land in another namespace and are ignored like every element the dynamics do not read.

    :param messages: Receives one note naming the prefixes declared.
    :raises ElementTree.ParseError: XML that does not parse for another reason.
    """
    try:
        return ElementTree.fromstring(xml)
    except ElementTree.ParseError as exc:
        if 'unbound prefix' not in str(exc):
            raise
    text = xml.decode('utf-8', errors='replace') if isinstance(xml, bytes) else xml
    declared = set(_DECLARED_PREFIX.findall(text)) | {'xml', 'xmlns'}
    used = {a or b for a, b in _PREFIXED_NAME.findall(text)} - declared
    start = re.search(r'<robot\b', text)
    if not used or start is None:
        return ElementTree.fromstring(xml)  # raises the parser's own error again
    declarations = ''.join(' xmlns:%s="urn:manip-dynamics:undeclared:%s"' % (p, p)
                           for p in sorted(used))
    fixed = text[:start.end()] + declarations + text[start.end():]
    root = ElementTree.fromstring(fixed.encode('utf-8') if isinstance(xml, bytes) else fixed)
    messages.append('namespace prefixes %s are used but never declared (xacro leftovers?): '
                    'their elements and attributes are ignored, as urdfdom ignores them'
                    % sorted(used))
    return root


def read_robot_element(xml: object, messages: list[str] | None = None) -> ElementTree.Element:
    """
    Parse URDF text into its ``<robot>`` element: the one XML parse of a description.

    Every reader of a robot description (the dynamics model, the viewer's visuals, the
    ros2_control set-up, the model check) starts here, so a text reads the same way
    everywhere and is refused with the same message. As urdfdom, which knows no XML
    namespaces: a default namespace on ``<robot>`` is dropped from every tag, and prefixes a
    xacro left undeclared are declared (their elements land in another namespace and are
    ignored, as every element a reader does not know).

    :param xml: URDF text (str, or UTF-8 / declared-encoding bytes).
    :param messages: Receives a note naming undeclared prefixes that were declared.
    :return: The root element, tag ``robot``.
    :raises URDFError: Not text, empty, malformed XML or a root other than ``<robot>``.
    """
    if isinstance(xml, (bytes, bytearray)):
        xml = bytes(xml)  # decoded by the XML parser, as its declaration says
    elif not isinstance(xml, str):
        raise URDFError('URDF must be a string, got %s' % type(xml).__name__)
    if not xml.strip():
        raise URDFError('URDF is empty')
    try:
        # A str is parsed as the text it is, whatever encoding its declaration names.
        root = _parse_xml(xml, [] if messages is None else messages)
    except ElementTree.ParseError as exc:
        raise URDFError('malformed URDF: the XML does not parse: %s' % exc) from None
    except (ValueError, LookupError) as exc:  # e.g. an unknown declared encoding
        raise URDFError('malformed URDF: %s' % exc) from None
    if isinstance(root.tag, str) and root.tag.startswith('{'):
        namespace = root.tag[:root.tag.index('}') + 1]
        for element in root.iter():
            if isinstance(element.tag, str) and element.tag.startswith(namespace):
                element.tag = element.tag[len(namespace):]
    if root.tag != 'robot':
        raise URDFError('malformed URDF: the root element is <%s>, not <robot>'
                        % str(root.tag).rsplit('}', 1)[-1])
    return root


def _default_axes(robot: ElementTree.Element, messages: list[str]) -> None:
    """
    Give an ``<axis>`` without ``xyz`` the URDF default ``1 0 0`` (noted in ``messages``).

    urdfdom loads such a joint; urdf_parser_py fails on it with an internal error.
    """
    for joint in robot.iter('joint'):
        axis = joint.find('axis')
        if axis is not None and axis.get('xyz') is None:
            axis.set('xyz', '1 0 0')
            messages.append('joint %r: <axis> without xyz: loaded with the URDF default axis '
                            '1 0 0' % joint.get('name'))


#: Default bounds of :func:`precheck_urdf`: 10 MB of text, 1,000 links (the largest robot
#: description in example-robot-data has 121 links and 400 kB).
DEFAULT_MAX_BYTES = 10_000_000
DEFAULT_MAX_LINKS = 1000


def precheck_urdf(xml: object, *, max_bytes: int = DEFAULT_MAX_BYTES,
                  max_links: int = DEFAULT_MAX_LINKS) -> int:
    """
    Check a description's size, parse and link count before anything expensive is built.

    Costs a plain XML parse (milliseconds for a real arm); building and warming up a model
    of 10,000 links took 18 s and 1.9 GB, which a node must not start on a whim.

    :param xml: URDF text (str or bytes).
    :param max_bytes: Largest accepted text [bytes, UTF-8].
    :param max_links: Largest accepted number of ``<link>`` elements.
    :return: The number of links.
    :raises URDFError: Not text, too large, malformed XML, not ``<robot>``, or too many
        links (the message gives the count and the bound).
    """
    if isinstance(xml, str):
        size = len(xml.encode('utf-8', errors='replace'))
    elif isinstance(xml, (bytes, bytearray)):
        size = len(xml)
    else:
        raise URDFError('URDF must be a string, got %s' % type(xml).__name__)
    if size > max_bytes:
        raise URDFError('the robot description has %d bytes, more than the %d accepted '
                        '(raise the bound if this robot is really that large)'
                        % (size, max_bytes))
    links = sum(1 for child in read_robot_element(xml) if child.tag == 'link')
    if links > max_links:
        raise URDFError('the robot description has %d links, more than the %d accepted '
                        '(raise the bound if this robot is really that large)'
                        % (links, max_links))
    return links


def _dynamics_only(root: ElementTree.Element) -> ElementTree.Element:
    """
    Return a copy of a ``<robot>`` element with only the elements the dynamics read.

    Iterative (an explicit stack): depth and size are limited by memory only.
    """
    out = ElementTree.Element('robot')
    stack = [(root, out, 'robot')]
    while stack:
        source, target, tag = stack.pop()
        attributes, children = _KEPT[tag]
        for key in attributes:
            if key in source.attrib:
                target.set(key, source.attrib[key])
        seen: set[str] = set()
        for child in source:
            name = child.tag   # a comment's is a function, another namespace's '{...}x'
            if name not in children or (name in seen and name not in _REPEATED):
                continue
            seen.add(name)
            copy = ElementTree.SubElement(target, name)
            stack.append((child, copy, name))
    return out


def parse_urdf(xml: str | bytes, physics: list[str] | None = None) -> tuple[object, list[str]]:
    """
    Parse the parts of URDF text that the dynamics use, as urdfdom would accept them.

    The XML is read with :mod:`xml.etree.ElementTree`; every element and attribute the
    dynamics never use is dropped (see the module docstring) and the rest is parsed by
    urdf_parser_py, whose messages are collected instead of printed.

    :param xml: URDF XML text (str, or UTF-8 / declared-encoding bytes).
    :param physics: Receives what was read differently from the text in a way that matters
        for the dynamics (an ``<axis>`` without ``xyz`` taken as ``1 0 0``): warnings.
    :return: The ``urdf_parser_py`` Robot (links with ``inertial`` only, joints) and the
        remaining messages (undeclared namespace prefixes, the parser's own; never about
        physics).
    :raises URDFError: Empty text, malformed XML, a root element other than ``<robot>``,
        a ``<robot>`` without a name, or a link or joint urdfdom would refuse too (e.g. a
        ``<limit>`` without ``effort``).
    """
    messages: list[str] = []
    root = read_robot_element(xml, messages)
    if not root.get('name'):
        raise URDFError('malformed URDF: <robot> has no name attribute (urdfdom refuses '
                        'such a file too)')
    kept = _dynamics_only(root)
    _check_numbers(kept)
    _default_axes(kept, messages if physics is None else physics)
    stripped = ElementTree.tostring(kept, encoding='utf-8')
    parser_messages: list[str] = []
    with _PARSER_LOCK:
        saved = xml_core.on_error
        xml_core.on_error = parser_messages.append
        try:
            robot = urdf_module.URDF.from_xml_string(stripped)
        except Exception as exc:  # noqa: B902 - the parser raises many unrelated types
            text = ' '.join(str(exc).split()) or type(exc).__name__
            raise URDFError('malformed URDF: %s' % text) from None
        finally:
            xml_core.on_error = saved
    return robot, messages + [' '.join(m.split()) for m in parser_messages]


def _finite(value: float | None, what: str) -> float | None:
    if value is None:
        return None
    value = float(value)
    if math.isnan(value) or math.isinf(value):
        raise URDFError('%s is %s: URDF numbers must be finite' % (what, value))
    return value


def _origin_transform(origin: object | None, what: str) -> np.ndarray:
    if origin is None:
        return np.eye(4)
    xyz = [_finite(v, '%s origin xyz' % what) for v in (origin.xyz or (0.0, 0.0, 0.0))]
    rpy = [_finite(v, '%s origin rpy' % what) for v in (origin.rpy or (0.0, 0.0, 0.0))]
    if len(xyz) != 3 or len(rpy) != 3:
        raise URDFError('%s origin: xyz and rpy must be three numbers each' % what)
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
            # lower == upper is a joint that cannot move within its limits (urdfdom reads
            # it so); lower > upper limits nothing: loaded without position limits.
            # joint_limit_warnings says which at load time.
            if lo <= hi:
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


def joint_limit_warnings(info: JointInfo, joint: object) -> list[str]:
    """
    Describe what is missing or odd in a moving joint's ``<limit>`` (load-time warnings).

    urdfdom refuses a revolute or prismatic joint without ``<limit>``; this loader loads it
    (a warning, an error with ``strict``), with no effort, velocity or position limit, so a
    node that sends efforts to an arm refuses it unless the user gives the limits.

    :param info: The joint as loaded.
    :param joint: The urdf_parser_py joint (for the ``<limit>`` element as written).
    :return: Zero or more warning texts.
    """
    out = []
    if info.kind in ('revolute', 'prismatic') and joint.limit is None:
        out.append('%s joint without <limit> (urdfdom refuses it): loaded with no effort, '
                   'velocity or position limit; nodes that send efforts to an arm refuse it '
                   'unless the effort limits are given' % info.kind)
    elif (info.kind != 'continuous' and joint.limit is not None and joint.limit.lower is not None
          and joint.limit.upper is not None and joint.limit.lower > joint.limit.upper):
        out.append('lower limit %g is above upper limit %g (urdfdom loads it so): loaded '
                   'without position limits' % (joint.limit.lower, joint.limit.upper))
    elif info.kind != 'continuous' and joint.limit is not None and info.lower == info.upper:
        out.append('lower and upper limits are both %g: the joint cannot move within its '
                   'limits (if they were left out, they default to 0; give both)' % info.lower)
    return out


def link_inertial(link: object) -> tuple[float, np.ndarray, np.ndarray,
                                         InertiaDefect | None] | None:
    """
    Return a link's inertial data in its own frame, and what is suspect about its inertia.

    :param link: A link from :func:`parse_urdf`.
    :return: ``(mass [kg], com (3,) [m], inertia about the com (3, 3) [kg m^2], defect)``
        with ``defect`` None for a physical inertia (:func:`inertia_defect`, checked in the
        ``<inertial>`` frame); None when the link has no ``<inertial>``.
    :raises URDFError: No ``<mass>``, a negative mass, a non-finite number.
    """
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
    rot = t_link_inertial[:3, :3]
    return mass, t_link_inertial[:3, 3].copy(), rot @ i_local @ rot.T, inertia_defect(i_local)


def _link_inertial(link: object) -> tuple[float, np.ndarray, np.ndarray] | None:
    """Return ``(mass, com, inertia about the com)`` of :func:`link_inertial`, or None."""
    found = link_inertial(link)
    return None if found is None else found[:3]


def inertia_warning(defect: InertiaDefect, *, bolted_to: str | None = None,
                    moved_by: str | None = None, below: tuple[str, ...] = ()) -> str:
    """
    Describe a link's suspect inertia (shared by the loader's warnings and ``check``).

    :param defect: What is wrong (:func:`manip_dynamics.spatial.inertia_defect`).
    :param bolted_to: The root link, when the link is attached to it by fixed joints only:
        its inertia then cannot affect fixed-base dynamics, and the text says so.
    :param moved_by: The joint that moves the link, when it is part of a moving body.
    :param below: Links one joint below it, suggested as a ``root_link`` that leaves it out.
    :return: The defect with its numbers, where the link is, and a suggested correction;
        the caller prefixes the link name.
    """
    text = '%s; loaded as written' % defect.describe()
    if bolted_to is not None:
        text += (' (it is bolted to the root link %r by fixed joints, so it cannot affect the '
                 'fixed-base dynamics)' % bolted_to)
    elif moved_by is not None:
        text += ' (it moves with joint %r)' % moved_by
    text += '. Suggested <inertia> with the same principal axes: %s' % defect.suggestion()
    if below and bolted_to is None:
        text += ('; or leave it out of the model with root_link=%s'
                 % ' or '.join(repr(b) for b in below[:3]))
    return text


def dangling_mimic_warning(mimicked: str) -> str:
    """Describe a ``<mimic>`` naming a joint that does not exist (the caller names the joint)."""
    return ('mimics joint %r, which is not defined: the <mimic> cannot be what the author '
            'meant (here mimic joints are independent degrees of freedom, so no number '
            'changes)' % mimicked)


def load_urdf_string(xml: str, *, root_link: str | None = None,
                     tip_link: str | None = None, strict: bool = False) -> RigidBodyTree:
    """
    Build the rigid-body tree of a URDF document.

    Bodies are numbered depth-first from the root, children in document order.  Physically
    suspect data (an inertia that is not positive semi-definite or violates the triangle
    inequality of its principal moments, a joint that moves no mass) is loaded as written
    and described in the tree's ``warnings``; with ``strict=True`` it is refused instead.
    Only physics counts for ``strict``: elements and attributes the dynamics do not read are
    ignored in both modes.

    :param xml: URDF XML text.
    :param root_link: Link used as the fixed base (default: the URDF's root).
    :param tip_link: Last link of the chain to model (default: the whole tree).
    :param strict: Raise :class:`URDFError` listing every warning instead of loading.
    :return: The rigid-body tree.
    :raises URDFError: Malformed XML, duplicate or unknown link and joint names, loops,
        floating or planar joints in the model, zero joint axes, negative masses,
        non-finite numbers, no actuated joint below ``root_link``; with ``strict``, any
        warning.
    """
    physics: list[str] = []
    robot, _ = parse_urdf(xml, physics)
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
    _check_connected(roots[0], links, children, parent_joint)
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

    builder = _TreeBuilder(links, children, chain, root_link,
                           links_above_actuated_joints(children))
    builder.warnings.extend(physics)
    builder.walk()
    for info in builder.joints:
        if info.mimic is not None and info.mimic not in joints:
            # urdfdom loads this (a public description has it): a warning, not an error.
            builder.warnings.append('joint %r: %s' % (info.name, dangling_mimic_warning(
                info.mimic)))
    if builder.body_count == 0:
        raise URDFError(
            'no actuated joint below link %r: every joint there is fixed, so the model would '
            'have 0 degrees of freedom and nothing to compute (manip_dynamics models '
            'fixed-base manipulators with at least one revolute, continuous or prismatic '
            'joint; a floating base is not modelled)' % root_link)
    tree = builder.finish(robot.name or 'robot', root_link, tip_link)
    if strict and tree.warnings:
        raise URDFError('strict mode refuses this URDF, %d physically suspect item(s) (without '
                        'strict it loads as written and lists them in model.warnings): %s'
                        % (len(tree.warnings), ' | '.join(
                            w.replace('; loaded as written', '') for w in tree.warnings)))
    return tree


def links_above_actuated_joints(children: dict[str, list[object]]) -> set[str]:
    """
    Return the links that have at least one revolute, continuous or prismatic joint below.

    Those are the links that can serve as ``root_link``.  Iterative (any depth).

    :param children: Link name -> the joints whose parent it is (every link a key).
    :return: The link names.
    """
    order: list[str] = []
    stack = list(children)
    seen: set[str] = set()
    while stack:
        link = stack.pop()
        if link in seen:
            continue
        seen.add(link)
        order.append(link)
        stack.extend(joint.child for joint in children.get(link, []) if joint.child not in seen)
    found: set[str] = set()
    for link in reversed(order):  # children before parents (a loop is refused elsewhere)
        if any(joint.type in MOVING_JOINT_TYPES or joint.child in found
               for joint in children.get(link, [])):
            found.add(link)
    return found


def _check_connected(root: str, links: dict, children: dict, parent_joint: dict) -> None:
    """Raise URDFError when some links cannot be reached from the root (a detached loop)."""
    reached = {root}
    stack = [root]
    while stack:
        for joint in children[stack.pop()]:
            reached.add(joint.child)
            stack.append(joint.child)
    if len(reached) == len(links):
        return
    start = next(name for name in links if name not in reached)
    loop = [start]
    link = parent_joint[start].parent
    while link not in loop:
        loop.append(link)
        link = parent_joint[link].parent
    loop = loop[loop.index(link):] + [link]
    loop.reverse()
    raise URDFError('links %s are not connected to the root link %r: the joints form a loop '
                    '(%s), which a URDF tree cannot have'
                    % (', '.join(repr(n) for n in sorted(set(links) - reached)[:10]), root,
                       ' -> '.join(loop)))


class _TreeBuilder:
    """Depth-first walk of the URDF (an explicit stack) that numbers bodies, lumps inertia."""

    def __init__(self, links: dict, children: dict, chain: set[str] | None,
                 root_link: str, can_be_root: set[str]) -> None:
        self.links = links
        self.can_be_root = can_be_root
        self.children = children
        self.chain = chain
        self.root_link = root_link
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

    def walk(self) -> None:
        """Visit every link below the root link in pre-order, children in document order."""
        self._add_link(self.root_link, -1, np.eye(4))
        stack = [(joint, -1, np.eye(4)) for joint in reversed(self.children[self.root_link])]
        while stack:
            joint, body, t_body_link = stack.pop()
            kind = joint.type
            moving = kind in MOVING_JOINT_TYPES
            on_chain = self.chain is None or joint.name in self.chain
            if kind in ('floating', 'planar') and on_chain:
                raise URDFError(
                    'joint %r is %s: manip_dynamics models fixed-base manipulators only, with '
                    'revolute, continuous, prismatic and fixed joints; choose a root_link '
                    'below it (its child link %r) to model what hangs from it'
                    % (joint.name, kind, joint.child))
            if not moving and kind not in ('fixed', 'floating', 'planar'):
                raise URDFError('joint %r has unknown type %r' % (joint.name, kind))
            t_body_joint = t_body_link @ _origin_transform(joint.origin, 'joint %r' % joint.name)
            if moving:
                info = _joint_info(joint)
                if on_chain:
                    self.warnings.extend('joint %r: %s' % (joint.name, text)
                                         for text in joint_limit_warnings(info, joint))
                if not on_chain:
                    self.locked.append(joint.name)
                    moving = False
            elif kind != 'fixed':
                self.locked.append(joint.name)  # off the tip chain: locked at identity
            if moving:
                self.parent.append(body)
                body = len(self.joints)
                self.joints.append(info)
                self.axis.append(np.array(info.axis))
                self.r_tree.append(t_body_joint[:3, :3].copy())
                self.p_tree.append(t_body_joint[:3, 3].copy())
                self.parts.append([])
                t_body_joint = np.eye(4)
            self._add_link(joint.child, body, t_body_joint)
            for child in reversed(self.children[joint.child]):
                stack.append((child, body, t_body_joint))

    def _add_link(self, link_name: str, body: int, t_body_link: np.ndarray) -> None:
        self.frames[link_name] = LinkFrame(link_name, body, t_body_link)
        link = self.links[link_name]
        inertial = link_inertial(link)
        if inertial is None:
            return
        mass, com, i_c, defect = inertial
        if defect is not None:
            below = tuple(j.child for j in self.children[link_name]
                          if j.child in self.can_be_root)
            if body < 0:
                text = inertia_warning(defect, bolted_to=self.root_link)
            else:
                text = inertia_warning(defect, moved_by=self.joints[body].name, below=below)
            self.warnings.append('link %r: %s' % (link_name, text))
        if body < 0:
            self.base_mass += mass
        else:
            rot = t_body_link[:3, :3]
            self.parts[body].append((mass, rot @ com + t_body_link[:3, 3], rot @ i_c @ rot.T))

    def finish(self, name: str, root_link: str, tip_link: str | None) -> RigidBodyTree:
        n = len(self.joints)
        mass = np.zeros(n)
        com = np.zeros((n, 3))
        inertia = np.zeros((n, 3, 3))
        for i, parts in enumerate(self.parts):
            if parts:
                mass[i], com[i], inertia[i] = combine_inertias(parts)
        kinds = np.array([PRISMATIC if j.kind == 'prismatic' else REVOLUTE for j in self.joints],
                         dtype=np.int64)
        parent = np.array(self.parent, dtype=np.int64)
        warnings = list(self.warnings)
        for i in massless_subtree_joints(parent, mass):
            warnings.append('joint %r: %s' % (self.joints[i].name, massless_joint_warning(
                self.joints[i].child_link)))
        for array in (mass, com, inertia):
            array.setflags(write=False)
        return RigidBodyTree(
            name=name, root_link=root_link, tip_link=tip_link, joints=tuple(self.joints),
            parent=parent, kind=kinds,
            axis=np.array(self.axis, dtype=np.float64).reshape(n, 3),
            R_tree=np.array(self.r_tree, dtype=np.float64).reshape(n, 3, 3),
            p_tree=np.array(self.p_tree, dtype=np.float64).reshape(n, 3),
            inertia=BodyInertia(mass, com, inertia), links=dict(self.frames),
            base_mass=self.base_mass, locked_joints=tuple(self.locked),
            warnings=tuple(warnings))
