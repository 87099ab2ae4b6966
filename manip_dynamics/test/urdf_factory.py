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
URDF strings for the tests: random kinematic trees and the textbook 2R arms.

Random trees mix revolute, continuous, prismatic and fixed joints with random (not
necessarily normalised) axes, joint origins with rpy, inertial origins with rpy and
physically valid inertias (a box's principal moments, rotated).  Leaf links always carry
mass so that every joint moves some inertia (M positive definite).
"""

import math
import os
import sys

import numpy as np

#: Joint types drawn for random trees and their weights.
JOINT_KINDS = ('revolute', 'continuous', 'prismatic', 'fixed')
JOINT_WEIGHTS = (0.45, 0.15, 0.25, 0.15)


def _fmt(values) -> str:
    return ' '.join(repr(float(v)) for v in values)


def _rotation_rpy(r: float, p: float, y: float) -> np.ndarray:
    """Return the URDF rotation Rz(y) Ry(p) Rx(r)."""
    cr, sr, cp, sp, cy, sy = (math.cos(r), math.sin(r), math.cos(p), math.sin(p),
                              math.cos(y), math.sin(y))
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


def random_inertia(rng: np.random.Generator, mass: float) -> np.ndarray:
    """
    Return a physically valid rotational inertia about the centre of mass [kg m^2].

    The principal moments are those of a solid box with random sides, so they satisfy the
    triangle inequality; the tensor is rotated by a random rotation.

    :param rng: Random generator.
    :param mass: Body mass [kg].
    :return: (3, 3) symmetric positive definite matrix.
    """
    a, b, c = rng.uniform(0.02, 0.4, 3)
    principal = mass / 12.0 * np.array([b * b + c * c, a * a + c * c, a * a + b * b])
    rot = _rotation_rpy(*rng.uniform(-math.pi, math.pi, 3))
    return rot @ np.diag(principal) @ rot.T


def inertial_xml(mass: float, xyz, rpy, inertia: np.ndarray) -> str:
    """Return an ``<inertial>`` element; ``inertia`` is expressed in the rpy-rotated axes."""
    i = inertia
    return ('<inertial><origin xyz="%s" rpy="%s"/><mass value="%r"/>'
            '<inertia ixx="%r" ixy="%r" ixz="%r" iyy="%r" iyz="%r" izz="%r"/></inertial>'
            % (_fmt(xyz), _fmt(rpy), float(mass), float(i[0, 0]), float(i[0, 1]),
               float(i[0, 2]), float(i[1, 1]), float(i[1, 2]), float(i[2, 2])))


def random_tree_urdf(seed: int, n_links: int = 6, *, branching: float = 0.35,
                     kinds=JOINT_KINDS, weights=JOINT_WEIGHTS,
                     massless_probability: float = 0.15, name: str = 'random_tree') -> str:
    """
    Return the URDF of a random kinematic tree with ``n_links`` links below the root.

    :param seed: Seed of the random generator (same seed, same URDF).
    :param n_links: Number of links besides the root.
    :param branching: Probability that a link attaches to a random earlier link instead of
        the last one (0 gives a chain).
    :param kinds: Joint types to draw from.
    :param weights: Their probabilities.
    :param massless_probability: Probability that a non-leaf link has no ``<inertial>``.
    :param name: Robot name; links are ``<name>_link<i>``, joints ``<name>_joint<i>``.
    :return: URDF text; the first joint is never fixed, so the model has >= 1 DoF.
    """
    rng = np.random.default_rng(seed)
    w = np.array(weights, dtype=float)
    w /= w.sum()
    parents = []
    for i in range(1, n_links + 1):
        if i == 1 or rng.random() >= branching:
            parents.append(i - 1)
        else:
            parents.append(int(rng.integers(0, i)))
    has_child = set(parents)
    parts = ['<?xml version="1.0"?>', '<robot name="%s">' % name,
             '<link name="%s_link0"/>' % name]
    for i in range(1, n_links + 1):
        kind = str(rng.choice(kinds, p=w))
        if i == 1 and kind == 'fixed':
            kind = 'revolute'
        axis = rng.normal(size=3)
        axis *= rng.uniform(0.5, 2.0) / np.linalg.norm(axis)  # not normalised on purpose
        xyz = rng.uniform(-0.4, 0.4, 3)
        rpy = rng.uniform(-math.pi, math.pi, 3)
        joint = ['<joint name="%s_joint%d" type="%s">' % (name, i, kind),
                 '<parent link="%s_link%d"/>' % (name, parents[i - 1]),
                 '<child link="%s_link%d"/>' % (name, i),
                 '<origin xyz="%s" rpy="%s"/>' % (_fmt(xyz), _fmt(rpy))]
        if kind != 'fixed':
            joint.append('<axis xyz="%s"/>' % _fmt(axis))
        if kind == 'revolute':
            joint.append('<limit lower="-2.5" upper="2.5" effort="50" velocity="3"/>')
        elif kind == 'prismatic':
            joint.append('<limit lower="-0.5" upper="0.5" effort="100" velocity="1"/>')
        joint.append('</joint>')
        parts.extend(joint)
        if i in has_child and rng.random() < massless_probability:
            parts.append('<link name="%s_link%d"/>' % (name, i))
        else:
            mass = float(rng.uniform(0.2, 3.0))
            parts.append('<link name="%s_link%d">%s</link>' % (
                name, i, inertial_xml(mass, rng.uniform(-0.2, 0.2, 3),
                                      rng.uniform(-math.pi, math.pi, 3),
                                      random_inertia(rng, mass))))
    parts.append('</robot>')
    return '\n'.join(parts)


def random_chain_urdf(seed: int, n_links: int) -> str:
    """Return a random serial chain of revolute joints (benchmarks: cost against DoF)."""
    return random_tree_urdf(seed, n_links, branching=0.0, kinds=('revolute',), weights=(1.0,),
                            massless_probability=0.0, name='chain')


def _link(name: str, inertial: str = '') -> str:
    return '<link name="%s">%s</link>' % (name, inertial)


def _joint(name: str, kind: str, parent: str, child: str, xyz=(0, 0, 0), axis=(0, 0, 1),
           extra: str = '') -> str:
    axis_xml = '' if kind == 'fixed' else '<axis xyz="%s"/>' % _fmt(axis)
    limit = ('<limit lower="-3.2" upper="3.2" effort="100" velocity="5"/>'
             if kind in ('revolute', 'prismatic') else '')
    return ('<joint name="%s" type="%s"><parent link="%s"/><child link="%s"/>'
            '<origin xyz="%s" rpy="0 0 0"/>%s%s%s</joint>'
            % (name, kind, parent, child, _fmt(xyz), axis_xml, limit, extra))


def _point(mass: float, xyz) -> str:
    return inertial_xml(mass, xyz, (0, 0, 0), np.zeros((3, 3)))


def craig_2r_urdf(l1: float, l2: float, m1: float, m2: float) -> str:
    """
    Return Craig's sec. 6.7 planar 2R arm: point masses m1, m2 at the distal link ends.

    Joints ``joint1``, ``joint2`` about +z; links ``link1``, ``link2``; the fixed ``tool``
    frame sits at the tip (x = l2 of link 2) with link 2's orientation (Craig's frame 3).
    """
    return '\n'.join([
        '<?xml version="1.0"?>', '<robot name="craig_2r">', _link('base'),
        _joint('joint1', 'revolute', 'base', 'link1'),
        _link('link1', _point(m1, (l1, 0, 0))),
        _joint('joint2', 'revolute', 'link1', 'link2', xyz=(l1, 0, 0)),
        _link('link2', _point(m2, (l2, 0, 0))),
        _joint('tool_joint', 'fixed', 'link2', 'tool', xyz=(l2, 0, 0)),
        _link('tool'), '</robot>'])


def craig_m(l1: float, l2: float, m1: float, m2: float, q) -> np.ndarray:
    """Return Craig eq. 6.60, M(q) of the sec. 6.7 2R arm (typed from the book), (2, 2)."""
    c2 = math.cos(q[1])
    m11 = l2 ** 2 * m2 + 2 * l1 * l2 * m2 * c2 + l1 ** 2 * (m1 + m2)
    m12 = l2 ** 2 * m2 + l1 * l2 * m2 * c2
    return np.array([[m11, m12], [m12, l2 ** 2 * m2]])


def craig_v(l1: float, l2: float, m1: float, m2: float, q, qd) -> np.ndarray:
    """Return Craig eq. 6.61, V(q, qd) of the sec. 6.7 2R arm [N m], (2,)."""
    s2 = math.sin(q[1])
    return np.array([-m2 * l1 * l2 * s2 * qd[1] ** 2 - 2 * m2 * l1 * l2 * s2 * qd[0] * qd[1],
                     m2 * l1 * l2 * s2 * qd[0] ** 2])


def craig_g(l1: float, l2: float, m1: float, m2: float, q, g: float = 9.81) -> np.ndarray:
    """Return Craig eq. 6.62, G(q) of the sec. 6.7 2R arm, gravity g along -y [N m], (2,)."""
    c1, c12 = math.cos(q[0]), math.cos(q[0] + q[1])
    return np.array([m2 * l2 * g * c12 + (m1 + m2) * l1 * g * c1, m2 * l2 * g * c12])


def rods_2r_urdf(l1: float, l2: float, m1: float, m2: float, radius: float = 0.01) -> str:
    """
    Return a planar 2R arm of uniform solid rods (Lumelsky sec. 2, eq. 2.12-2.14).

    Each rod lies along its link's x axis, centre of mass at l_i / 2, with the solid
    cylinder's moments ``ixx = m r^2 / 2`` and ``iyy = izz = m (3 r^2 + l^2) / 12``.
    The fixed ``tool`` frame is at the tip of link 2 with link 2's orientation.
    """
    def rod(m, length):
        izz = m * (3 * radius ** 2 + length ** 2) / 12.0
        return inertial_xml(m, (length / 2, 0, 0), (0, 0, 0),
                            np.diag([m * radius ** 2 / 2, izz, izz]))

    return '\n'.join([
        '<?xml version="1.0"?>', '<robot name="rods_2r">', _link('base'),
        _joint('joint1', 'revolute', 'base', 'link1'), _link('link1', rod(m1, l1)),
        _joint('joint2', 'revolute', 'link1', 'link2', xyz=(l1, 0, 0)),
        _link('link2', rod(m2, l2)),
        _joint('tool_joint', 'fixed', 'link2', 'tool', xyz=(l2, 0, 0)),
        _link('tool'), '</robot>'])


def vertical_prismatic_urdf(mass: float) -> str:
    """Return one prismatic joint ``lift`` along +z carrying a point mass ``mass``."""
    return '\n'.join([
        '<?xml version="1.0"?>', '<robot name="lift">', _link('base'),
        _joint('lift', 'prismatic', 'base', 'carriage', xyz=(0.1, 0.2, 0.3)),
        _link('carriage', _point(mass, (0.05, -0.02, 0.1))), '</robot>'])


def polar_rp_urdf(m1: float, l1: float, i1: float, m2: float, i2: float) -> str:
    """
    Return a revolute-prismatic (polar) arm in the x-y plane (Craig example 6.5 style).

    ``theta`` turns about +z; ``radial`` slides along link 1's x axis, q2 = the distance of
    link 2's origin from the z axis.  Link 1: mass m1 at x = l1, izz = i1 about its centre
    of mass; link 2: mass m2 at its origin, izz = i2.
    """
    small = 1e-3  # keeps ixx, iyy valid; they never enter planar motion about z
    return '\n'.join([
        '<?xml version="1.0"?>', '<robot name="polar">', _link('base'),
        _joint('theta', 'revolute', 'base', 'link1'),
        _link('link1', inertial_xml(m1, (l1, 0, 0), (0, 0, 0),
                                    np.diag([small, i1 + small, i1]))),
        _joint('radial', 'prismatic', 'link1', 'link2', axis=(1, 0, 0)),
        _link('link2', inertial_xml(m2, (0, 0, 0), (0, 0, 0),
                                    np.diag([small, i2 + small, i2]))),
        '</robot>'])


def example_robot_data_dir() -> str | None:
    """
    Return the ``robots`` folder of an installed example-robot-data, or None.

    example-robot-data >= 6 ships only data (under ``cmeel.prefix/share``); older versions
    ship the ``example_robot_data`` Python module.  Both are looked for, and so is
    ``$EXAMPLE_ROBOT_DATA_DIR``.
    """
    env = os.environ.get('EXAMPLE_ROBOT_DATA_DIR')
    candidates = [env] if env else []
    try:
        import example_robot_data  # noqa: F401
        getter = getattr(example_robot_data, 'getModelPath', None)
        if getter is not None:
            found = getter('panda_description/urdf/panda.urdf')
            candidates += [found, os.path.join(found, 'robots')]
    except Exception:  # noqa: B902 - any failure means: not available this way
        pass
    for entry in sys.path:
        candidates.append(os.path.join(entry, 'cmeel.prefix', 'share', 'example-robot-data',
                                       'robots'))
    for path in candidates:
        if path and os.path.isfile(os.path.join(path, 'panda_description', 'urdf',
                                                'panda.urdf')):
            return path
    return None


def example_robot_urdf(robot: str) -> str | None:
    """Return the URDF path of ``'panda'`` or ``'ur5'`` from example-robot-data, or None."""
    base = example_robot_data_dir()
    if base is None:
        return None
    rel = {'panda': 'panda_description/urdf/panda.urdf',
           'ur5': 'ur_description/urdf/ur5_robot.urdf'}[robot]
    path = os.path.join(base, rel)
    return path if os.path.isfile(path) else None
