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
Write identified parameters back: the same URDF text with new ``<inertial>`` elements.

Only the ``<inertial>`` element of each joint's child link (and, when friction was fitted,
each joint's ``<dynamics>`` element) is replaced; every other byte of the file (comments,
formatting, visuals, ``<ros2_control>``, ...) is kept.  The text is edited by position
(comments masked), not re-serialised, so a diff shows exactly what changed.  Rotor
inertias (armature) have no URDF element: :func:`joint_dynamics_yaml` writes them, with
the friction, as a ROS parameter file the nodes accept (``joint_dynamics.*`` parameters).
"""

import re

import numpy as np
from numpy.typing import NDArray

from manip_dynamics.errors import InputError
from manip_dynamics.identification.regressor import body_from_parameters, body_parameters

FloatArray = NDArray[np.float64]

_COMMENT = re.compile(r'<!--.*?-->', re.S)


def _masked(text: str) -> str:
    """Return ``text`` with every XML comment blanked (same length)."""
    return _COMMENT.sub(lambda m: ' ' * len(m.group(0)), text)


def _element_span(masked: str, tag: str, name: str) -> tuple[int, int, bool]:
    """Return ``(start, end, self_closing)`` of ``<tag name="name" ...>...</tag>``."""
    pattern = re.compile(r'<%s\b[^>]*?\bname\s*=\s*(["\'])%s\1[^>]*?(/?)>' % (
        tag, re.escape(name)), re.S)
    match = pattern.search(masked)
    if match is None:
        raise InputError('the URDF text has no <%s name="%s">' % (tag, name))
    if match.group(2) == '/':
        return match.start(), match.end(), True
    close = masked.find('</%s>' % tag, match.end())
    if close < 0:
        raise InputError('<%s name="%s"> is not closed' % (tag, name))
    return match.start(), close + len('</%s>' % tag), False


def _indent_of(text: str, position: int) -> str:
    line_start = text.rfind('\n', 0, position) + 1
    head = text[line_start:position]
    return head if not head.strip() else ''


def _fmt(value: float) -> str:
    text = '%.9g' % value
    return '0' if text in ('-0', '0') else text


def inertial_xml(mass: float, com: FloatArray, inertia_com: FloatArray, indent: str,
                 step: str = '  ') -> str:
    """Return an ``<inertial>`` element (origin at the centre of mass, link axes)."""
    i = inertia_com
    inner = indent + step
    return ('<inertial>\n'
            '%s<origin xyz="%s %s %s" rpy="0 0 0"/>\n'
            '%s<mass value="%s"/>\n'
            '%s<inertia ixx="%s" ixy="%s" ixz="%s" iyy="%s" iyz="%s" izz="%s"/>\n'
            '%s</inertial>' % (inner, _fmt(com[0]), _fmt(com[1]), _fmt(com[2]),
                               inner, _fmt(mass),
                               inner, _fmt(i[0, 0]), _fmt(i[0, 1]), _fmt(i[0, 2]),
                               _fmt(i[1, 1]), _fmt(i[1, 2]), _fmt(i[2, 2]), indent))


def replace_inertial(text: str, link: str, mass: float, com: FloatArray,
                     inertia_com: FloatArray) -> str:
    """
    Return ``text`` with the ``<inertial>`` of ``link`` replaced (or added).

    :param text: URDF text.
    :param link: Link name.
    :param mass: Mass [kg]; ``com`` [m] and ``inertia_com`` [kg m^2] in the link frame.
    :return: The new text; nothing outside that link's ``<inertial>`` changes (a link
        written ``<link name="x"/>`` is opened to hold the new element).
    """
    masked = _masked(text)
    start, end, self_closing = _element_span(masked, 'link', link)
    indent = _indent_of(text, start)
    if self_closing:
        head = text[start:end]
        opened = head[:-2].rstrip() + '>'
        body = inertial_xml(mass, com, inertia_com, indent + '  ')
        return (text[:start] + opened + '\n' + indent + '  ' + body + '\n' + indent
                + '</link>' + text[end:])
    inner = masked[start:end]
    match = re.search(r'<inertial\b[^>]*?(/?)>', inner)
    if match is None:
        open_end = start + inner.find('>') + 1
        body = inertial_xml(mass, com, inertia_com, indent + '  ')
        return text[:open_end] + '\n' + indent + '  ' + body + text[open_end:]
    i_start = start + match.start()
    if match.group(1) == '/':
        i_end = start + match.end()
    else:
        close = inner.find('</inertial>', match.end())
        if close < 0:
            raise InputError('<inertial> of link %r is not closed' % link)
        i_end = start + close + len('</inertial>')
    own_indent = _indent_of(text, i_start)
    child = re.search(r'\n([ \t]*)<', text[i_start:i_end])
    step = '  '
    if child is not None and child.group(1).startswith(own_indent) and \
            len(child.group(1)) > len(own_indent):
        step = child.group(1)[len(own_indent):]
    return (text[:i_start] + inertial_xml(mass, com, inertia_com, own_indent, step)
            + text[i_end:])


def replace_dynamics(text: str, joint: str, damping: float, friction: float) -> str:
    """Return ``text`` with the joint's ``<dynamics>`` set (added before ``</joint>``)."""
    masked = _masked(text)
    start, end, self_closing = _element_span(masked, 'joint', joint)
    if self_closing:
        raise InputError('joint %r has no body to hold <dynamics>' % joint)
    element = '<dynamics damping="%s" friction="%s"/>' % (_fmt(damping), _fmt(friction))
    inner = masked[start:end]
    match = re.search(r'<dynamics\b[^>]*?(/?)>', inner)
    if match is None:
        close = start + inner.rfind('</joint>')
        indent = _indent_of(text, start)
        return text[:close].rstrip(' \t') + '  ' + indent + element + '\n' + indent + \
            text[close:]
    d_start = start + match.start()
    if match.group(1) == '/':
        d_end = start + match.end()
    else:
        close = inner.find('</dynamics>', match.end())
        d_end = start + close + len('</dynamics>')
    return text[:d_start] + element + text[d_end:]


def link_parameters(model, urdf_text: str) -> tuple[FloatArray, FloatArray]:
    """
    Split every body's parameters into its joint's child link and the rest.

    :param model: The model loaded from ``urdf_text``.
    :param urdf_text: Its URDF.
    :return: ``(own, fixed)``, each (n, 10): the child link's own ``<inertial>`` in its
        frame (the body frame) and what the links attached by fixed joints add.
    """
    from manip_dynamics.model.urdf_loader import _link_inertial, parse_urdf

    robot, _ = parse_urdf(urdf_text)
    links = {link.name: link for link in robot.links}
    inertia = model.tree.inertia
    n = model.dof
    own = np.zeros((n, 10))
    total = np.zeros((n, 10))
    for k, joint in enumerate(model.tree.joints):
        total[k] = body_parameters(inertia.mass[k], inertia.com[k], inertia.inertia[k])
        found = _link_inertial(links[joint.child_link])
        if found is not None:
            own[k] = body_parameters(*found)
    return own, total - own


def write_identified_urdf(urdf_text: str, model, link_params: FloatArray, *,
                          friction: FloatArray | None = None) -> str:
    """
    Return the URDF text with each joint's child link's ``<inertial>`` replaced.

    :param urdf_text: The original URDF text (the model's).
    :param model: The model loaded from it (joint order, child links).
    :param link_params: (n, 10) parameters of each child link, link frame (see
        :class:`~manip_dynamics.identification.estimation.ConsistentResult`).
    :param friction: (n, 2) viscous and Coulomb coefficients to write into ``<dynamics>``;
        None keeps the joints as they are.
    :return: The new URDF text.
    """
    text = urdf_text
    params = np.asarray(link_params, dtype=np.float64).reshape(model.dof, 10)
    for k, joint in enumerate(model.tree.joints):
        mass, com, i_c = body_from_parameters(params[k])
        i_c = 0.5 * (i_c + i_c.T)
        text = replace_inertial(text, joint.child_link, mass, com, i_c)
        if friction is not None:
            text = replace_dynamics(text, joint.name, max(0.0, float(friction[k, 0])),
                                    max(0.0, float(friction[k, 1])))
    return text


def joint_dynamics_yaml(model, *, damping: FloatArray | None = None,
                        friction: FloatArray | None = None,
                        armature: FloatArray | None = None, comment: str = '') -> str:
    """
    Return a ROS parameter file with per-joint friction and rotor inertia overrides.

    Layout (every node of the suite reads it: ``--params-file``)::

        /**:
          ros__parameters:
            joint_dynamics:
              joint_names: [...]
              damping: [...]     # viscous [N m s/rad]
              friction: [...]    # Coulomb [N m]
              armature: [...]    # reflected rotor inertia [kg m^2]

    :param model: Gives the joint names (model order).
    :param damping: (n,) or None (not written).
    :param friction: (n,) or None.
    :param armature: (n,) or None.
    :param comment: Lines written as a YAML comment at the top.
    """
    import yaml

    block = {'joint_names': list(model.joint_names)}
    for key, values in (('damping', damping), ('friction', friction), ('armature', armature)):
        if values is not None:
            block[key] = [max(0.0, float(v)) for v in values]
    doc = {'/**': {'ros__parameters': {'joint_dynamics': block}}}
    head = ''.join('# %s\n' % line for line in comment.splitlines())
    return head + yaml.safe_dump(doc, default_flow_style=None, sort_keys=False, width=200)


def read_joint_dynamics_yaml(text: str) -> dict[str, dict[str, float]]:
    """
    Return ``{'damping': {joint: value}, 'friction': ..., 'armature': ...}`` of such a file.

    Accepts the ``/**`` (or any node name) ``ros__parameters`` nesting or a bare
    ``joint_dynamics`` mapping.  Feed the result to :meth:`RobotModel.with_joint_dynamics`.

    :raises InputError: No ``joint_dynamics`` block, or lists of different lengths.
    """
    import yaml

    doc = yaml.safe_load(text) or {}
    block = None
    if isinstance(doc, dict) and 'joint_dynamics' in doc:
        block = doc['joint_dynamics']
    elif isinstance(doc, dict):
        for value in doc.values():
            if isinstance(value, dict) and isinstance(value.get('ros__parameters'), dict) \
                    and 'joint_dynamics' in value['ros__parameters']:
                block = value['ros__parameters']['joint_dynamics']
                break
    if not isinstance(block, dict) or 'joint_names' not in block:
        raise InputError('no joint_dynamics block with joint_names in the YAML')
    names = list(block['joint_names'])
    out = {}
    for key in ('damping', 'friction', 'armature'):
        if key in block:
            values = list(block[key])
            if len(values) != len(names):
                raise InputError('joint_dynamics.%s has %d values for %d joint_names' % (
                    key, len(values), len(names)))
            out[key] = {name: float(v) for name, v in zip(names, values)}
    return out
