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
The visual side of a URDF: per-link ``<visual>`` shapes, their colours, the joint axes.

The dynamics model lumps links joined by fixed joints into one body and keeps no geometry,
so the viewer reads what it draws from the URDF text itself (``xml.etree``): every
``<visual>`` of every link with its origin (link frame), its geometry (box, cylinder,
sphere or mesh) and its RGBA colour (inline ``<material><color>`` or a material declared at
the top level), and every joint's child link and axis. Mesh file names are resolved to
files here too: ``package://pkg/path`` through the ament index when it is importable, then
through a list of search folders; ``file://`` and plain paths as they are, relative ones
against the URDF's folder. A mesh that does not resolve is kept with a note saying why, so
the caller can report it and draw the rest.
"""

from dataclasses import dataclass, field
import os
import xml.etree.ElementTree as ElementTree

import numpy as np
from numpy.typing import NDArray

from manip_dynamics.errors import URDFError
from manip_dynamics.model.urdf_loader import read_robot_element
from manip_dynamics.spatial import make_transform, rpy_to_matrix

FloatArray = NDArray[np.float64]

#: Colour of a visual with no material, or a named material the URDF never defines [0-1].
DEFAULT_RGBA = (0.7, 0.7, 0.72, 1.0)

#: Geometry kinds a :class:`Visual` can have.
GEOMETRY_KINDS = ('box', 'cylinder', 'sphere', 'mesh')


@dataclass(frozen=True)
class Visual:
    """
    One ``<visual>`` element of a link.

    :ivar link: Name of the link it belongs to.
    :ivar name: The element's ``name`` attribute, or ``<link>_visual<i>``.
    :ivar kind: One of :data:`GEOMETRY_KINDS`.
    :ivar T_link_visual: Pose of the shape in the link frame, shape (4, 4) [m].
    :ivar size: box: ``(x, y, z)`` edge lengths; cylinder: ``(radius, length)`` (axis z);
        sphere: ``(radius,)``; mesh: the ``scale`` attribute ``(sx, sy, sz)`` [m].
    :ivar rgba: Colour, each channel in [0, 1].
    :ivar mesh_uri: The mesh ``filename`` as written in the URDF ('' for primitives).
    :ivar mesh_path: The file it resolved to, or None.
    :ivar note: Why the mesh did not resolve ('' when it did, or for primitives).
    """

    link: str
    name: str
    kind: str
    T_link_visual: FloatArray
    size: tuple[float, ...]
    rgba: tuple[float, float, float, float]
    mesh_uri: str = ''
    mesh_path: str | None = None
    note: str = ''


@dataclass(frozen=True)
class JointAxis:
    """
    Where a joint acts: its child link and its axis (the joint frame is the child's frame).

    :ivar name: Joint name.
    :ivar kind: URDF joint type ('revolute', 'continuous', 'prismatic', 'fixed', ...).
    :ivar parent: Parent link.
    :ivar child: Child link (its frame is the joint frame).
    :ivar axis: Unit axis in the joint (child link) frame, shape (3,).
    """

    name: str
    kind: str
    parent: str
    child: str
    axis: FloatArray


@dataclass(frozen=True)
class UrdfVisuals:
    """
    Everything the viewer draws that the dynamics model does not keep.

    :ivar robot_name: The ``<robot name>``.
    :ivar visuals: Every visual shape, document order.
    :ivar joints: Every joint by name.
    :ivar notes: One line per mesh that did not resolve or shape that was skipped.
    """

    robot_name: str
    visuals: tuple[Visual, ...]
    joints: dict[str, JointAxis]
    notes: tuple[str, ...] = field(default=())


def _floats(text: str | None, count: int, default: tuple[float, ...] | None, what: str
            ) -> tuple[float, ...]:
    """Parse ``count`` finite numbers; when absent return ``default`` (None: required)."""
    if text is None or not text.strip():
        if default is None:
            raise URDFError('%s is missing' % what)
        return default
    try:
        values = tuple(float(v) for v in text.split())
    except ValueError:
        raise URDFError('%s: %r is not %d numbers' % (what, text, count)) from None
    if len(values) != count or not all(np.isfinite(values)):
        raise URDFError('%s: %r must be %d finite numbers' % (what, text, count))
    return values


def _origin(element: ElementTree.Element | None, what: str) -> FloatArray:
    """Return the transform of an ``<origin xyz rpy>`` child (identity when absent)."""
    if element is None:
        return np.eye(4)
    xyz = _floats(element.get('xyz'), 3, (0.0, 0.0, 0.0), what + ' origin xyz')
    rpy = _floats(element.get('rpy'), 3, (0.0, 0.0, 0.0), what + ' origin rpy')
    return make_transform(rpy_to_matrix(rpy), xyz)


def _rgba(material: ElementTree.Element | None, named: dict[str, tuple[float, ...]],
          what: str) -> tuple[float, float, float, float]:
    """Return a visual's colour: inline ``<color>``, else the named material, else default."""
    if material is None:
        return DEFAULT_RGBA
    color = material.find('color')
    if color is not None:
        rgba = _floats(color.get('rgba'), 4, DEFAULT_RGBA, what + ' material color')
        return tuple(min(1.0, max(0.0, c)) for c in rgba)
    return named.get(material.get('name', ''), DEFAULT_RGBA)


def resolve_mesh(uri: str, search_paths: tuple[str, ...] = (), base_dir: str | None = None
                 ) -> tuple[str | None, str]:
    """
    Find the file a URDF mesh ``filename`` names.

    ``package://<pkg>/<rel>``: ``<share of pkg>/<rel>`` from the ament index (when
    ``ament_index_python`` is importable and knows the package), then ``<dir>/<pkg>/<rel>``
    and ``<dir>/<rel>`` for each search folder. ``file://<abs>`` and absolute paths: as they
    are. Relative paths: against ``base_dir`` (the URDF's folder), then the search folders.

    :param uri: The ``filename`` attribute.
    :param search_paths: Folders to look in, in order.
    :param base_dir: Folder of the URDF file, if it came from a file.
    :return: ``(path, '')`` when found, ``(None, reason)`` otherwise.
    """
    tried: list[str] = []
    if uri.startswith('package://'):
        package, _, rel = uri[len('package://'):].partition('/')
        if not package or not rel:
            return None, 'malformed package:// URI %r' % uri
        try:
            from ament_index_python.packages import get_package_share_directory
            share = get_package_share_directory(package)
            tried.append(os.path.join(share, rel))
        except ImportError:
            pass
        except Exception:  # noqa: B902 - PackageNotFoundError and friends: not indexed
            pass
        for folder in search_paths:
            tried += [os.path.join(folder, package, rel), os.path.join(folder, rel)]
        where = 'package %r is not in the ament index' % package
    elif uri.startswith('file://'):
        tried.append(uri[len('file://'):])
        where = 'no such file'
    elif '://' in uri:
        return None, 'unsupported URI scheme in %r (only package:// and file://)' % uri
    elif os.path.isabs(uri):
        tried.append(uri)
        where = 'no such file'
    else:
        if base_dir:
            tried.append(os.path.join(base_dir, uri))
        tried += [os.path.join(folder, uri) for folder in search_paths]
        where = 'relative path'
    for path in tried:
        if os.path.isfile(path):
            return os.path.abspath(path), ''
    if not search_paths and uri.startswith('package://'):
        where += ' and no search path is set'
    return None, '%s; tried %s' % (where, ', '.join(tried) if tried else 'nothing')


def parse_visuals(xml: str, *, search_paths: tuple[str, ...] = (),
                  base_dir: str | None = None) -> UrdfVisuals:
    """
    Read the visual shapes, colours and joint axes of a URDF.

    :param xml: URDF text (already expanded if it came from xacro).
    :param search_paths: Folders for ``package://`` and relative mesh names
        (see :func:`resolve_mesh`).
    :param base_dir: Folder of the URDF file, for relative mesh names.
    :return: The visuals; unresolved meshes keep ``mesh_path=None`` and a note.
    :raises URDFError: Not XML, not a ``<robot>``, or a malformed number or geometry.
    """
    root = read_robot_element(xml)
    named: dict[str, tuple[float, ...]] = {}
    for material in root.findall('material'):
        color = material.find('color')
        if material.get('name') and color is not None:
            named[material.get('name')] = _rgba(material, {}, 'material %r'
                                                % material.get('name'))
    visuals: list[Visual] = []
    notes: list[str] = []
    for link in root.findall('link'):
        link_name = link.get('name', '')
        for i, visual in enumerate(link.findall('visual')):
            what = 'link %r visual %d' % (link_name, i)
            name = visual.get('name') or '%s_visual%d' % (link_name, i)
            origin = _origin(visual.find('origin'), what)
            rgba = _rgba(visual.find('material'), named, what)
            geometry = visual.find('geometry')
            shape = None if geometry is None else next(iter(geometry), None)
            if shape is None:
                notes.append('%s has no geometry: skipped' % what)
                continue
            if shape.tag == 'box':
                size = _floats(shape.get('size'), 3, None, what + ' box size')
            elif shape.tag == 'cylinder':
                size = (_floats(shape.get('radius'), 1, None, what + ' cylinder radius')
                        + _floats(shape.get('length'), 1, None, what + ' cylinder length'))
            elif shape.tag == 'sphere':
                size = _floats(shape.get('radius'), 1, None, what + ' sphere radius')
            elif shape.tag == 'mesh':
                uri = shape.get('filename', '')
                scale = _floats(shape.get('scale'), 3, (1.0, 1.0, 1.0), what + ' mesh scale')
                path, note = resolve_mesh(uri, search_paths, base_dir)
                if path is None:
                    note = 'mesh %r of link %r not drawn: %s' % (uri, link_name, note)
                    notes.append(note)
                visuals.append(Visual(link_name, name, 'mesh', origin, scale, rgba, uri,
                                      path, note))
                continue
            else:
                notes.append('%s: geometry <%s> is not drawn' % (what, shape.tag))
                continue
            if min(size) < 0.0:
                raise URDFError('%s: <%s> has a negative size %s' % (what, shape.tag, size))
            visuals.append(Visual(link_name, name, shape.tag, origin, size, rgba))
    joints: dict[str, JointAxis] = {}
    for joint in root.findall('joint'):
        name = joint.get('name', '')
        parent = joint.find('parent')
        child = joint.find('child')
        if parent is None or child is None:
            raise URDFError('joint %r lacks <parent> or <child>' % name)
        axis = np.array(_floats(None if joint.find('axis') is None
                                else joint.find('axis').get('xyz'), 3, (1.0, 0.0, 0.0),
                                'joint %r axis' % name))
        norm = float(np.linalg.norm(axis))
        axis = axis / norm if norm > 0.0 else np.array([1.0, 0.0, 0.0])
        joints[name] = JointAxis(name, joint.get('type', ''), parent.get('link', ''),
                                 child.get('link', ''), axis)
    return UrdfVisuals(root.get('name', ''), tuple(visuals), joints, tuple(notes))
