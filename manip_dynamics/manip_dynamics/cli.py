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
The ``manip-dynamics`` command-line tool: the dynamics library at a shell prompt.

Runs without ROS.  Every subcommand takes a URDF file, a xacro file or the name of a bundled
robot, and prints an aligned table with units or, with ``--json``, one JSON document.
Exit codes: 0 success, 1 ``check`` found an error, 2 bad usage or bad input (one line on
stderr, ``manip-dynamics: error: ...``), 3 an unexpected internal error, 130 interrupted.
Tracebacks are printed only with ``--debug``.  See docs/CLI.md.
"""

import argparse
import ast
from collections.abc import Callable, Sequence
import json
import math
import operator
import os
import statistics
import sys
import time
from typing import NoReturn, TextIO

import numpy as np

from manip_dynamics import cli_format as fmt
from manip_dynamics.errors import ManipDynamicsError

PROG = 'manip-dynamics'
EXIT_OK = 0
EXIT_CHECK_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3
EXIT_INTERRUPTED = 130


class CliError(Exception):
    """A user mistake: reported as one line on stderr with exit code 2."""


class _Parser(argparse.ArgumentParser):
    """ArgumentParser whose errors are one line, ``manip-dynamics: error: ...``, exit 2."""

    def error(self, message: str) -> NoReturn:
        """Print a one-line usage error and exit with code 2."""
        hint = self.prog if self.prog != PROG else PROG
        sys.stderr.write('%s: error: %s (see %s --help)\n' % (PROG, message, hint))
        sys.exit(EXIT_USAGE)


# ---------------------------------------------------------------------- value parsing
_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.Div: operator.truediv, ast.Pow: operator.pow}
_UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos}


def _eval_node(node: ast.AST) -> float:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) \
            and not isinstance(node.value, bool):
        return float(node.value)
    if isinstance(node, ast.Name) and node.id == 'pi':
        return math.pi
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return _BINARY[type(node.op)](_eval_node(node.left), _eval_node(node.right))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_eval_node(node.operand))
    raise ValueError('not a number')


def parse_number(text: str, what: str) -> float:
    """
    Parse one finite number: ``0.3``, ``-1e-2``, or arithmetic with ``pi`` (``pi/2``).

    :param text: The text from the command line.
    :param what: Label for the error message, e.g. ``"--q value of joint 'j1'"``.
    :return: The number.
    :raises CliError: Not a finite number.
    """
    text = text.strip()
    try:
        value = float(text)
    except ValueError:
        try:
            value = _eval_node(ast.parse(text, mode='eval').body)
        except (ValueError, SyntaxError, ZeroDivisionError, OverflowError, TypeError):
            raise CliError('%s: %r is not a number' % (what, text)) from None
    if not math.isfinite(value):
        raise CliError('%s is %r: it must be finite' % (what, text))
    return value


def parse_vector(text: str, length: int, what: str) -> np.ndarray:
    """
    Parse ``length`` comma-separated numbers.

    :raises CliError: Wrong count or not numbers.
    """
    parts = text.split(',')
    if len(parts) != length or any(not p.strip() for p in parts):
        raise CliError('%s needs %d comma-separated numbers, got %r' % (what, length, text))
    return np.array([parse_number(p, '%s element %d' % (what, i + 1))
                     for i, p in enumerate(parts)])


def parse_joint_values(text: str | None, joint_names: Sequence[str], option: str
                       ) -> np.ndarray:
    """
    Parse a joint-space vector: ``v1,v2,...`` (all joints, model order) or ``name=v,...``.

    In the named form, joints that are not named are 0 and unknown or repeated names are
    errors; the two forms cannot be mixed.  ``None`` or an empty string gives zeros.

    :param text: The option's value.
    :param joint_names: The model's joint names, model order.
    :param option: The option, for error messages (``--q``).
    :return: Values in model order, shape (n,).
    :raises CliError: Wrong count, unknown joint, not a number.
    """
    n = len(joint_names)
    out = np.zeros(n)
    if text is None or not text.strip():
        return out
    parts = [p.strip() for p in text.split(',')]
    named = ['=' in p for p in parts]
    if any(named) and not all(named):
        raise CliError('%s mixes name=value and plain values: use one form' % option)
    if all(named):
        index = {name: i for i, name in enumerate(joint_names)}
        seen = set()
        for part in parts:
            name, _, value = part.partition('=')
            name = name.strip()
            if name not in index:
                raise CliError('%s: unknown joint %r; the model has %s' % (
                    option, name, ', '.join(joint_names)))
            if name in seen:
                raise CliError('%s: joint %r given twice' % (option, name))
            seen.add(name)
            out[index[name]] = parse_number(value, '%s value of joint %r' % (option, name))
        return out
    if len(parts) != n:
        raise CliError('%s has %d values but the model has %d joints (%s); give all of them '
                       'or use name=value' % (option, len(parts), n, ', '.join(joint_names)))
    for i, part in enumerate(parts):
        out[i] = parse_number(part, '%s value of joint %r' % (option, joint_names[i]))
    return out


# ---------------------------------------------------------------------- model loading
def read_description(source: str, xacro_args: Sequence[str] = ()) -> tuple[str, str]:
    """
    Return ``(urdf_xml, label)`` for a URDF path, a xacro path or a bundled robot name.

    :param source: ``robot.urdf``, ``robot.urdf.xacro`` / ``robot.xacro``, or a bundled
        robot name such as ``cobot7``.
    :param xacro_args: ``name:=value`` mappings for xacro.
    :raises CliError: Missing file, xacro not installed, xacro failure.
    :raises URDFError: The file cannot be read or is not UTF-8 text (a binary file).
    """
    path = source
    if not os.path.exists(path):
        from manip_dynamics import bundled
        stem = source[:-5] if source.endswith('.urdf') else source
        if os.sep not in source and stem in _bundled_names():
            path = bundled.urdf_path(stem)
        else:
            raise CliError('no such file: %r (bundled robots: %s)' % (
                source, ', '.join(_bundled_names())))
    if os.path.isdir(path):
        raise CliError('%r is a folder, not a URDF file' % source)
    if path.endswith('.xacro'):
        return _expand_xacro(path, xacro_args), path
    if xacro_args:
        raise CliError('--xacro-arg given but %r is not a .xacro file' % source)
    from manip_dynamics.model.urdf_loader import read_urdf_file
    return read_urdf_file(path), path  # URDFError for unreadable or binary files


def _bundled_names() -> list[str]:
    from manip_dynamics import bundled
    try:
        return bundled.bundled_robots()
    except ValueError:
        return []


def _expand_xacro(path: str, xacro_args: Sequence[str]) -> str:
    try:
        import xacro
    except ImportError:
        raise CliError('%r is a xacro file but the xacro Python package is not installed: '
                       'pip install xacro, or expand it first with '
                       '"xacro %s > robot.urdf"' % (path, path)) from None
    mappings = {}
    for item in xacro_args:
        name, sep, value = item.partition(':=')
        if not sep or not name:
            raise CliError('--xacro-arg %r must look like name:=value' % item)
        mappings[name] = value
    try:
        return xacro.process_file(path, mappings=mappings).toxml()
    except Exception as exc:  # noqa: B902 - xacro raises many types for bad input
        text = ' '.join(str(exc).split()) or type(exc).__name__
        raise CliError('xacro failed on %r: %s' % (path, text)) from None


def load_model(args: argparse.Namespace):
    """Build the RobotModel the common options describe."""
    from manip_dynamics import RobotModel
    xml, _ = read_description(args.urdf, args.xacro_arg or ())
    gravity = (0.0, 0.0, -9.81) if args.gravity is None else parse_vector(
        args.gravity, 3, '--gravity')
    return RobotModel.from_urdf_string(xml, root_link=args.root_link, tip_link=args.tip_link,
                                       gravity=gravity, strict=args.strict)


# ---------------------------------------------------------------------- helpers
def _units(model) -> list[str]:
    return ['N' if kind == 'prismatic' else 'N m' for kind in model.joint_types]


def _position_units(model) -> list[str]:
    return ['m' if kind == 'prismatic' else 'rad' for kind in model.joint_types]


def _emit_json(out: TextIO, document: dict) -> None:
    out.write(json.dumps(fmt.jsonable(document), indent=2, allow_nan=False) + '\n')


def _parse_wrenches(items: Sequence[str] | None) -> dict[str, np.ndarray]:
    wrenches: dict[str, np.ndarray] = {}
    for item in items or ():
        link, sep, values = item.partition('=')
        if not sep or not link.strip():
            raise CliError('--wrench %r must look like LINK=fx,fy,fz,tx,ty,tz' % item)
        link = link.strip()
        vec = parse_vector(values, 6, '--wrench on link %r' % link)
        wrenches[link] = wrenches.get(link, np.zeros(6)) + vec
    return wrenches


def _state_doc(model, **arrays: np.ndarray) -> dict:
    doc = {'robot': model.name, 'root_link': model.root_link, 'tip_link': model.tip_link,
           'gravity': model.gravity, 'joint_names': list(model.joint_names)}
    doc.update(arrays)
    return doc


# ---------------------------------------------------------------------- subcommands
def cmd_info(args: argparse.Namespace, out: TextIO) -> int:
    """Print the kinematic tree, joints, bodies, total mass and warnings."""
    from manip_dynamics.model_check import check_urdf_string
    from manip_dynamics.model.urdf_loader import parse_urdf
    model = load_model(args)
    xml, _ = read_description(args.urdf, args.xacro_arg or ())
    robot, _ = parse_urdf(xml)
    tree = model.tree
    findings = [str(f) for f in check_urdf_string(xml, root_link=args.root_link,
                                                  tip_link=args.tip_link)
                if f.severity in ('error', 'warning')]
    # check reports the loader's warnings with the same text: list each once
    warnings = findings + [w for w in model.warnings
                           if not any(f.endswith(w) for f in findings)]
    if tree.locked_joints:
        warnings.append('joints locked at 0 (off the root -> tip chain): %s'
                        % ', '.join(tree.locked_joints))
    joints = []
    for i, j in enumerate(tree.joints):
        joints.append({'index': i, 'name': j.name, 'type': j.kind, 'parent': j.parent_link,
                       'child': j.child_link, 'axis': list(j.axis), 'lower': j.lower,
                       'upper': j.upper, 'velocity': j.velocity, 'effort': j.effort,
                       'damping': j.damping, 'friction': j.friction, 'mimic': j.mimic})
    bodies = []
    for i, j in enumerate(tree.joints):
        attached = sorted(name for name, frame in tree.links.items()
                          if frame.body == i and name != j.child_link)
        bodies.append({'joint': j.name, 'link': j.child_link, 'attached_links': attached,
                       'mass': float(tree.inertia.mass[i]), 'com': tree.inertia.com[i]})
    if args.json:
        _emit_json(out, {'robot': model.name, 'root_link': model.root_link,
                         'tip_link': model.tip_link, 'dof': model.dof,
                         'total_mass': model.total_mass, 'base_mass': tree.base_mass,
                         'gravity': model.gravity, 'joints': joints, 'bodies': bodies,
                         'links': list(model.link_names), 'warnings': warnings})
        return EXIT_OK
    out.write('robot %s: %d DoF, root %s%s, total moving mass %.4g kg\n' % (
        model.name, model.dof, model.root_link,
        '' if model.tip_link is None else ', tip %s' % model.tip_link, model.total_mass))
    out.write('gravity %s m/s^2 (root frame)\n\n' % fmt.vector(model.gravity))
    out.write('kinematic tree:\n')
    for line in fmt.tree_lines(robot, model.root_link):
        out.write('  %s\n' % line)
    out.write('\njoints:\n')
    rows = []
    for j, pu in zip(joints, _position_units(model)):
        eu = 'N' if j['type'] == 'prismatic' else 'N m'
        vu = 'm/s' if j['type'] == 'prismatic' else 'rad/s'
        rows.append([j['index'], j['name'], j['type'], fmt.vector(j['axis'], '%.3g'),
                     '%s %s' % (fmt.num(j['lower']), pu), '%s %s' % (fmt.num(j['upper']), pu),
                     '%s %s' % (fmt.num(j['velocity']), vu),
                     '%s %s' % (fmt.num(j['effort']), eu),
                     fmt.num(j['damping']), fmt.num(j['friction']), j['mimic'] or ''])
    out.write(fmt.table(['#', 'joint', 'type', 'axis', 'lower', 'upper', 'velocity',
                         'effort', 'damping', 'friction', 'mimic'], rows, indent=2))
    out.write('\nbodies (inertia of each moving body, fixed-attached links lumped in; '
              'com in the body frame):\n')
    rows = [[b['joint'], b['link'], '%.4g' % b['mass'], fmt.vector(b['com'], '%.4g'),
             ', '.join(b['attached_links'])] for b in bodies]
    out.write(fmt.table(['joint', 'body (link)', 'mass [kg]', 'com [m]', 'attached links'],
                        rows, indent=2))
    out.write('\ntotal moving mass: %.6g kg (base, not moving: %.6g kg)\n' % (
        model.total_mass, tree.base_mass))
    if warnings:
        out.write('\nwarnings (run "%s check" for details):\n' % PROG)
        for text in warnings:
            out.write('  - %s\n' % text)
    else:
        out.write('\nno warnings\n')
    return EXIT_OK


def cmd_check(args: argparse.Namespace, out: TextIO) -> int:
    """Check inertial data and limits; exit 1 when an error is found."""
    from manip_dynamics.errors import URDFError
    from manip_dynamics.model_check import check_urdf_string, fails_strict, Finding, has_errors
    xml, label = read_description(args.urdf, args.xacro_arg or ())
    try:
        findings = check_urdf_string(xml, root_link=args.root_link, tip_link=args.tip_link)
    except URDFError as exc:
        findings = [Finding('error', 'robot', os.path.basename(label), str(exc))]
    # --strict fails on physics only: parser notes and the like are 'info', never a failure
    failed = fails_strict(findings) if args.strict else has_errors(findings)
    counts = {s: sum(1 for f in findings if f.severity == s)
              for s in ('error', 'warning', 'info')}
    if args.json:
        _emit_json(out, {'file': label, 'ok': not failed, 'counts': counts,
                         'findings': [f.as_dict() for f in findings]})
        return EXIT_CHECK_FAILED if failed else EXIT_OK
    shown = [f for f in findings if args.verbose or f.severity != 'info']
    if shown:
        rows = [[f.severity, f.kind, f.name, f.message] for f in shown]
        out.write(fmt.table(['severity', 'kind', 'name', 'message'], rows))
    out.write('%s: %d error(s), %d warning(s), %d note(s)%s -> %s\n' % (
        label, counts['error'], counts['warning'], counts['info'],
        '' if args.verbose or not counts['info'] else ' (notes shown with --verbose)',
        'FAILED' if failed else 'OK'))
    return EXIT_CHECK_FAILED if failed else EXIT_OK


def _joint_table(model, columns: list[tuple[str, np.ndarray, list[str]]]) -> str:
    headers = ['joint'] + [name for name, _, _ in columns]
    rows = []
    for i, joint in enumerate(model.joint_names):
        rows.append([joint] + ['%s %s' % (fmt.num(values[i]), units[i])
                               for _, values, units in columns])
    return fmt.table(headers, rows, numeric_from=1)


def cmd_id(args: argparse.Namespace, out: TextIO) -> int:
    """Inverse dynamics: tau = M qdd + C qd + g - sum J^T w (+ friction)."""
    model = load_model(args)
    names = model.joint_names
    q = parse_joint_values(args.q, names, '--q')
    qd = parse_joint_values(args.qd, names, '--qd')
    qdd = parse_joint_values(args.qdd, names, '--qdd')
    wrenches = _parse_wrenches(args.wrench)
    tau = model.inverse_dynamics(q, qd, qdd, external_wrenches=wrenches or None,
                                 include_friction=args.include_friction,
                                 include_armature=args.include_armature)
    if args.json:
        _emit_json(out, _state_doc(model, q=q, qd=qd, qdd=qdd, tau=tau,
                                   external_wrenches=wrenches,
                                   include_friction=args.include_friction))
        return EXIT_OK
    pu = _position_units(model)
    out.write(_joint_table(model, [
        ('q', q, pu), ('qd', qd, [u + '/s' for u in pu]),
        ('qdd', qdd, [u + '/s^2' for u in pu]), ('tau', tau, _units(model))]))
    return EXIT_OK


def cmd_fd(args: argparse.Namespace, out: TextIO) -> int:
    """Forward dynamics: qdd = M^-1 (tau - C qd - g + sum J^T w - friction)."""
    model = load_model(args)
    names = model.joint_names
    q = parse_joint_values(args.q, names, '--q')
    qd = parse_joint_values(args.qd, names, '--qd')
    tau = parse_joint_values(args.tau, names, '--tau')
    wrenches = _parse_wrenches(args.wrench)
    qdd = model.forward_dynamics(q, qd, tau, external_wrenches=wrenches or None,
                                 include_friction=args.include_friction,
                                 include_armature=args.include_armature)
    if args.json:
        _emit_json(out, _state_doc(model, q=q, qd=qd, tau=tau, qdd=qdd,
                                   external_wrenches=wrenches,
                                   include_friction=args.include_friction))
        return EXIT_OK
    pu = _position_units(model)
    out.write(_joint_table(model, [
        ('q', q, pu), ('qd', qd, [u + '/s' for u in pu]), ('tau', tau, _units(model)),
        ('qdd', qdd, [u + '/s^2' for u in pu])]))
    return EXIT_OK


def cmd_terms(args: argparse.Namespace, out: TextIO) -> int:
    """Print M(q), C(q, qd), C qd and g(q)."""
    model = load_model(args)
    names = model.joint_names
    q = parse_joint_values(args.q, names, '--q')
    qd = parse_joint_values(args.qd, names, '--qd')
    mass = model.mass_matrix(q, include_armature=args.include_armature)
    cor = model.coriolis_matrix(q, qd)
    cqd = model.coriolis_torques(q, qd)
    grav = model.gravity_torques(q)
    if args.json:
        _emit_json(out, _state_doc(model, q=q, qd=qd, M=mass, C=cor, C_qd=cqd, g=grav))
        return EXIT_OK
    out.write('M(q) mass matrix [kg m^2 | kg m | kg], rows and columns in joint order:\n')
    out.write(fmt.matrix(mass, names))
    out.write('\nC(q, qd) Coriolis matrix [kg m^2/s ...]:\n')
    out.write(fmt.matrix(cor, names))
    out.write('\n')
    out.write(_joint_table(model, [('q', q, _position_units(model)),
                                   ('qd', qd, [u + '/s' for u in _position_units(model)]),
                                   ('C qd', cqd, _units(model)),
                                   ('g', grav, _units(model))]))
    return EXIT_OK


def cmd_gravity(args: argparse.Namespace, out: TextIO) -> int:
    """Print g(q) and its share of each effort limit."""
    model = load_model(args)
    q = parse_joint_values(args.q, model.joint_names, '--q')
    grav = model.gravity_torques(q)
    limits = model.effort_limits
    with np.errstate(divide='ignore', invalid='ignore'):
        share = np.where(np.isfinite(limits) & (limits > 0), 100.0 * np.abs(grav) / limits,
                         np.nan)
    if args.json:
        _emit_json(out, _state_doc(model, q=q, g=grav, effort_limits=limits,
                                   percent_of_limit=share))
        return EXIT_OK
    units = _units(model)
    rows = []
    for i, joint in enumerate(model.joint_names):
        rows.append([joint, '%s %s' % (fmt.num(q[i]), _position_units(model)[i]),
                     '%s %s' % (fmt.num(grav[i]), units[i]),
                     '%s %s' % (fmt.num(limits[i]), units[i]),
                     '-' if math.isnan(share[i]) else '%.1f %%' % share[i]])
    out.write(fmt.table(['joint', 'q', 'g(q)', 'effort limit', '|g| / limit'], rows,
                        numeric_from=1))
    return EXIT_OK


def cmd_cartesian(args: argparse.Namespace, out: TextIO) -> int:
    """Print the Cartesian (operational-space) dynamics of one link."""
    model = load_model(args)
    names = model.joint_names
    q = parse_joint_values(args.q, names, '--q')
    qd = parse_joint_values(args.qd, names, '--qd')
    directions = None if args.directions is None else [
        d.strip() for d in args.directions.split(',') if d.strip()]
    cart = model.cartesian_dynamics(q, qd, args.link, frame=args.frame, directions=directions)
    pose = model.link_transform(q, args.link)
    if args.json:
        _emit_json(out, _state_doc(
            model, q=q, qd=qd, link=cart.link, frame=cart.frame,
            directions=list(cart.directions), pose=pose, jacobian=cart.jacobian,
            mass_matrix=cart.mass_matrix, velocity_term=cart.velocity_term,
            gravity_term=cart.gravity_term, near_singular=cart.near_singular,
            min_singular_value=cart.min_singular_value))
        return EXIT_OK
    dirs = list(cart.directions)
    out.write('link %s, %s axes, reference point: the link origin\n' % (
        cart.link, 'root (world)' if cart.frame == 'world' else 'link'))
    out.write('position %s m (root frame)\n' % fmt.vector(pose[:3, 3]))
    out.write('smallest singular value of J: %.4g%s\n\n' % (
        cart.min_singular_value, '  NEAR SINGULAR: damped inverse used' if cart.near_singular
        else ''))
    out.write('Jacobian J [m/s or rad/s per joint rate], rows %s:\n' % ' '.join(dirs))
    out.write(fmt.matrix(cart.jacobian, list(names), row_labels=dirs))
    out.write('\nLambda(q) Cartesian mass matrix [kg | kg m | kg m^2]:\n')
    out.write(fmt.matrix(cart.mass_matrix, dirs))
    units = ['N' if d in ('x', 'y', 'z') else 'N m' for d in dirs]
    rows = [[d, '%s %s' % (fmt.num(cart.velocity_term[i]), units[i]),
             '%s %s' % (fmt.num(cart.gravity_term[i]), units[i])] for i, d in enumerate(dirs)]
    out.write('\n')
    out.write(fmt.table(['direction', 'mu (velocity)', 'p (gravity)'], rows, numeric_from=1))
    return EXIT_OK


def _make_controller(args: argparse.Namespace, model, q0: np.ndarray
                     ) -> Callable[[float, np.ndarray, np.ndarray], np.ndarray] | None:
    if args.controller == 'none':
        return None
    if args.controller == 'gravity-comp':
        def gravity_comp(t: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
            return model.gravity_torques(q)
        return gravity_comp
    target = q0 if args.target is None else parse_joint_values(
        args.target, model.joint_names, '--target')
    kp, kd = args.kp, args.kd

    def pd(t: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        return model.gravity_torques(q) + kp * (target - q) - kd * qd
    return pd


class ProgressBar:
    """A plain-text progress bar on a stream: ``simulate [#####     ]  50%``."""

    def __init__(self, stream: TextIO, label: str, width: int = 30) -> None:
        """Write nothing yet; ``stream`` is usually stderr."""
        self._stream = stream
        self._label = label
        self._width = width
        self._last = -1
        self._tty = hasattr(stream, 'isatty') and stream.isatty()

    def __call__(self, fraction: float) -> None:
        """Show ``fraction`` (0 to 1); redraw only when the whole percent changes."""
        percent = int(max(0.0, min(1.0, float(fraction))) * 100.0)
        if percent == self._last or (not self._tty and percent % 10 and percent != 100):
            return
        self._last = percent
        filled = percent * self._width // 100
        bar = '#' * filled + ' ' * (self._width - filled)
        line = '%s [%s] %3d%%' % (self._label, bar, percent)
        self._stream.write('\r' + line if self._tty else line + '\n')
        self._stream.flush()

    def close(self) -> None:
        """End the bar's line."""
        if self._tty and self._last >= 0:
            self._stream.write('\n')
            self._stream.flush()


def cmd_simulate(args: argparse.Namespace, out: TextIO) -> int:
    """Simulate the arm offline; summary table, optional PNG plot and CSV."""
    try:
        from manip_dynamics.simulation import simulate
    except ImportError as exc:
        raise CliError('the simulation module is not available: %s' % exc) from None
    model = load_model(args)
    names = model.joint_names
    q0 = parse_joint_values(args.q0, names, '--q0')
    qd0 = parse_joint_values(args.qd0, names, '--qd0')
    if not args.duration > 0.0 or not math.isfinite(args.duration):
        raise CliError('--duration must be a positive number of seconds, got %r'
                       % args.duration)
    if not args.dt > 0.0 or not math.isfinite(args.dt):
        raise CliError('--dt must be a positive number of seconds, got %r' % args.dt)
    for path in (args.plot, args.csv):
        if path:
            folder = os.path.dirname(os.path.abspath(path))
            if not os.path.isdir(folder):
                raise CliError('cannot write %r: folder %r does not exist' % (path, folder))
    if args.plot:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise CliError('--plot needs matplotlib: pip install matplotlib') from None
    controller = _make_controller(args, model, q0)
    bar = None if args.quiet else ProgressBar(sys.stderr, 'simulate')
    started = time.perf_counter()
    try:
        result = simulate(model, q0, qd0, duration=args.duration, dt=args.dt,
                          integrator=args.integrator, controller=controller,
                          include_friction=not args.no_friction, limits=args.limits,
                          clamp_effort=not args.no_clamp, record_every=args.record_every,
                          progress=bar)
    finally:
        if bar is not None:
            bar.close()
    wall = time.perf_counter() - started
    written = []
    if args.csv:
        fmt.write_csv(args.csv, result, names)
        written.append(args.csv)
    if args.plot:
        from manip_dynamics import cli_plot
        cli_plot.plot_simulation(args.plot, result, names, _position_units(model),
                                 title='%s: %s, controller %s, %s' % (
                                     model.name, args.integrator, args.controller,
                                     'friction' if not args.no_friction else 'no friction'))
        written.append(args.plot)
    drift = np.max(np.abs(result.q - q0), axis=0)
    energy = np.asarray(result.energy)
    summary = {
        'robot': model.name, 'joint_names': list(names), 'duration': args.duration,
        'dt': args.dt, 'integrator': args.integrator, 'controller': args.controller,
        'include_friction': not args.no_friction, 'samples': int(len(result.t)),
        'wall_time': wall, 'real_time_factor': args.duration / wall if wall > 0 else None,
        'q0': q0, 'q_final': result.q[-1], 'qd_final': result.qd[-1],
        'max_drift': drift, 'max_abs_tau': np.max(np.abs(result.tau), axis=0),
        'energy_initial': float(energy[0]), 'energy_final': float(energy[-1]),
        'energy_max_deviation': float(np.max(np.abs(energy - energy[0]))),
        'files': written}
    if args.json:
        _emit_json(out, summary)
        return EXIT_OK
    out.write('%s: %.4g s simulated in %.3g s wall (%.3g x real time), %s, dt %g s, '
              'controller %s, %s\n' % (
                  model.name, args.duration, wall, summary['real_time_factor'] or 0.0,
                  args.integrator, args.dt, args.controller,
                  'friction on' if not args.no_friction else 'friction off'))
    pu = _position_units(model)
    out.write(_joint_table(model, [('q0', q0, pu), ('q final', result.q[-1], pu),
                                   ('max |q - q0|', drift, pu),
                                   ('max |tau|', summary['max_abs_tau'], _units(model))]))
    out.write('total energy: %.6g J at start, %.6g J at end, largest deviation %.3g J\n' % (
        summary['energy_initial'], summary['energy_final'], summary['energy_max_deviation']))
    for path in written:
        out.write('wrote %s\n' % path)
    return EXIT_OK


def cmd_closed_form(args: argparse.Namespace, out: TextIO) -> int:
    """Print the symbolic Lagrangian equations (LaTeX or Python), at most 3 DoF."""
    try:
        from manip_dynamics.symbolic import closed_form
    except ImportError as exc:
        raise CliError('the symbolic module is not available: %s (pip install sympy)'
                       % exc) from None
    model = load_model(args)
    form = closed_form(model, simplify=not args.no_simplify)
    text = form.to_python() if args.python else form.to_latex()
    if args.json:
        _emit_json(out, {'robot': model.name, 'joint_names': list(model.joint_names),
                         'format': 'python' if args.python else 'latex', 'text': text})
        return EXIT_OK
    out.write(text if text.endswith('\n') else text + '\n')
    return EXIT_OK


def _time_calls(func: Callable[[], object], repeat: int) -> list[float]:
    samples = []
    clock = time.perf_counter_ns
    for _ in range(repeat):
        start = clock()
        func()
        samples.append((clock() - start) * 1e-3)
    return samples


def cmd_bench(args: argparse.Namespace, out: TextIO) -> int:
    """Time ID, M, FD (and g, C) on this machine: median of repeated single calls."""
    import platform
    if args.repeat < 1:
        raise CliError('--repeat must be at least 1, got %d' % args.repeat)
    if args.batch < 0:
        raise CliError('--batch must be >= 0, got %d' % args.batch)
    model = load_model(args)
    n = model.dof
    rng = np.random.default_rng(args.seed)
    lo = np.where(np.isfinite(model.position_lower), model.position_lower, -math.pi)
    hi = np.where(np.isfinite(model.position_upper), model.position_upper, math.pi)
    q = rng.uniform(lo, hi)
    qd = rng.uniform(-1.0, 1.0, n)
    qdd = rng.uniform(-1.0, 1.0, n)
    start = time.perf_counter_ns()
    tau = model.inverse_dynamics(q, qd, qdd)
    first_id = (time.perf_counter_ns() - start) * 1e-3
    calls = [
        ('inverse_dynamics', lambda: model.inverse_dynamics(q, qd, qdd)),
        ('mass_matrix', lambda: model.mass_matrix(q)),
        ('forward_dynamics', lambda: model.forward_dynamics(q, qd, tau)),
        ('gravity_torques', lambda: model.gravity_torques(q)),
        ('coriolis_matrix', lambda: model.coriolis_matrix(q, qd)),
    ]
    results = []
    for name, func in calls:
        # The first call of this process pays for loading (or compiling) its kernels.
        first = first_id if name == 'inverse_dynamics' else _time_calls(func, 1)[0]
        for _ in range(min(args.repeat, 50)):
            func()  # warm-up
        samples = _time_calls(func, args.repeat)
        row = {'function': name, 'first_call_us': first,
               'median_us': statistics.median(samples),
               'p90_us': float(np.percentile(samples, 90)), 'min_us': min(samples),
               'repeat': args.repeat}
        results.append(row)
    if args.batch:
        qb = rng.uniform(lo, hi, (args.batch, n))
        qdb = rng.uniform(-1.0, 1.0, (args.batch, n))
        qddb = rng.uniform(-1.0, 1.0, (args.batch, n))
        model.inverse_dynamics(qb[:2], qdb[:2], qddb[:2])
        samples = _time_calls(lambda: model.inverse_dynamics(qb, qdb, qddb), 5)
        for row in results:
            if row['function'] == 'inverse_dynamics':
                row['batch_per_state_us'] = statistics.median(samples) / args.batch
    machine = {'python': platform.python_version(), 'machine': platform.machine(),
               'processor': platform.processor() or platform.machine(),
               'numpy': np.__version__}
    try:
        import numba
        machine['numba'] = numba.__version__
    except ImportError:
        pass
    if args.json:
        _emit_json(out, {'robot': model.name, 'dof': n, 'machine': machine,
                         'batch': args.batch, 'results': results})
        return EXIT_OK
    out.write('%s (%d DoF) on %s, Python %s, numpy %s%s; median of %d calls\n' % (
        model.name, n, machine['processor'], machine['python'], machine['numpy'],
        ', numba %s' % machine['numba'] if 'numba' in machine else '', args.repeat))
    rows = []
    for row in results:
        rows.append([row['function'], '%.2f' % row['median_us'], '%.2f' % row['p90_us'],
                     '%.2f' % row['min_us'], '%.1f' % (row['first_call_us'] / 1000.0),
                     '%.2f' % row['batch_per_state_us'] if 'batch_per_state_us' in row
                     else '-'])
    out.write(fmt.table(['call', 'median [us]', 'p90 [us]', 'min [us]', 'first call [ms]',
                         'batch [us/state]'], rows, numeric_from=1))
    out.write('first call: the first call in this process, including loading the compiled '
              'kernels from the numba cache (or compiling them, about 15 s, on a fresh '
              'install)\n')
    return EXIT_OK


def cmd_view(args: argparse.Namespace, out: TextIO) -> int:
    """Serve a 3D view of the arm with joint sliders (see manip_dynamics.cli_view)."""
    from manip_dynamics import cli_view
    return cli_view.run(args, out)


def cmd_precompile(args: argparse.Namespace, out: TextIO) -> int:
    """Compile the numba kernels into the disk cache (see manip_dynamics.precompile)."""
    from manip_dynamics import precompile
    return precompile.run(args, out)


# ---------------------------------------------------------------------- parser
_EXAMPLES = {
    'info': 'example:\n  manip-dynamics info cobot7\n  manip-dynamics info my_arm.urdf.xacro '
            '--json',
    'check': 'example:\n  manip-dynamics check my_arm.urdf\n'
             'exit code 0: no error (physically suspect data is a warning, allowed unless '
             '--strict), 1: errors found',
    'id': 'example:\n  manip-dynamics id cobot7 --q cobot7_joint2=0.5,cobot7_joint4=-1.5 '
          '--qdd 0.1,0,0,0,0,0,0',
    'fd': 'example:\n  manip-dynamics fd planar_2r --gravity 0,-9.81,0 --q 0.3,0.2 --tau 10,2',
    'terms': 'example:\n  manip-dynamics terms planar_2r --gravity 0,-9.81,0 --q 0.3,0.2 '
             '--qd 1,-1',
    'gravity': 'example:\n  manip-dynamics gravity cobot7 --q 0,-0.785,0,-2.356,0,1.571,0.785',
    'cartesian': 'example:\n  manip-dynamics cartesian planar_2r tool --gravity 0,-9.81,0 '
                 '--q 0.3,1.2 --directions x,y',
    'simulate': 'example:\n  manip-dynamics simulate cobot7 --duration 2 '
                '--q0 cobot7_joint2=0.5 --controller gravity-comp --plot sim.png',
    'closed-form': 'example:\n  manip-dynamics closed-form planar_2r --gravity 0,-9.81,0 '
                   '--python',
    'bench': 'example:\n  manip-dynamics bench cobot7 --repeat 2000',
    'view': 'example:\n  manip-dynamics view cobot7            (then open the printed URL)\n'
            '  manip-dynamics view my_arm.urdf --mesh-path ~/ws/src --port 8090',
}

_STATE_HELP = ('comma-separated values in joint order, or name=value pairs (joints not named '
               'are 0); numbers may use pi, e.g. pi/2')


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of ``manip-dynamics``."""
    common = _Parser(add_help=False)
    group = common.add_argument_group('model options')
    group.add_argument('urdf', metavar='URDF',
                       help='URDF file, xacro file (.xacro) or bundled robot name (%s)'
                       % ', '.join(_bundled_names()))
    group.add_argument('--root-link', metavar='LINK', help='base link (default: URDF root)')
    group.add_argument('--tip-link', metavar='LINK',
                       help='model only the chain root -> LINK; joints off it are locked at 0')
    group.add_argument('--gravity', metavar='GX,GY,GZ',
                       help='gravity acceleration in the root frame [m/s^2] (default 0,0,-9.81)')
    group.add_argument('--xacro-arg', metavar='NAME:=VALUE', action='append',
                       help='xacro argument (repeatable)')
    group.add_argument('--strict', action='store_true',
                       help='refuse physically suspect data (inertias that no rigid body '
                       'has, joints that move no mass) instead of warning; check: fail on '
                       'warnings')
    group.add_argument('--json', action='store_true', help='print one JSON document')
    group.add_argument('--debug', action='store_true',
                       help='show Python warnings and tracebacks')

    parser = _Parser(
        prog=PROG, formatter_class=argparse.RawDescriptionHelpFormatter,
        description='Dynamics of a manipulator from its URDF, at the shell prompt (no ROS '
        'needed).',
        epilog='examples:\n  manip-dynamics info cobot7\n  manip-dynamics check my_arm.urdf\n'
        '  manip-dynamics gravity cobot7 --q cobot7_joint2=0.5\n'
        '  manip-dynamics <command> --help\n\n'
        'exit codes: 0 ok, 1 check found errors, 2 bad usage or input, 3 internal error')
    parser.add_argument('--version', action='version', version='%(prog)s ' + _version())
    sub = parser.add_subparsers(dest='command', metavar='COMMAND', parser_class=_Parser)
    sub.required = True

    def add(name: str, func: Callable, helptext: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, parents=[common], help=helptext, description=helptext,
                           epilog=_EXAMPLES[name],
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        p.set_defaults(func=func)
        return p

    add('info', cmd_info, 'kinematic tree, joints and limits, body masses and centres of '
        'mass, total mass, warnings')
    p = add('check', cmd_check, 'validate inertial data and limits (exit 1 on errors), '
            'list physically suspect data with suggested corrections')
    p.add_argument('--verbose', action='store_true', help='also show notes (info)')

    def state(p: argparse.ArgumentParser, *names: str) -> None:
        units = {'q': '[rad | m]', 'qd': '[rad/s | m/s]', 'qdd': '[rad/s^2 | m/s^2]',
                 'tau': '[N m | N]'}
        for name in names:
            p.add_argument('--' + name, metavar='VALUES', help='joint %s %s: %s' % (
                {'q': 'positions', 'qd': 'velocities', 'qdd': 'accelerations',
                 'tau': 'torques'}[name], units[name], _STATE_HELP))

    def wrench(p: argparse.ArgumentParser) -> None:
        p.add_argument('--wrench', metavar='LINK=FX,FY,FZ,TX,TY,TZ', action='append',
                       help='wrench the environment applies to LINK [N, N m], link frame, '
                       'about the link origin (repeatable)')
        p.add_argument('--include-friction', action='store_true',
                       help='add URDF viscous + Coulomb joint friction')
        p.add_argument('--include-armature', action='store_true',
                       help='add rotor inertia (zero unless set through the library)')

    p = add('id', cmd_id, 'inverse dynamics: torques for a given q, qd, qdd')
    state(p, 'q', 'qd', 'qdd')
    wrench(p)
    p = add('fd', cmd_fd, 'forward dynamics: accelerations for a given q, qd, tau')
    state(p, 'q', 'qd', 'tau')
    wrench(p)
    p = add('terms', cmd_terms, 'mass matrix M, Coriolis matrix C, C qd and gravity g')
    state(p, 'q', 'qd')
    p.add_argument('--include-armature', action='store_true', help='add rotor inertia to M')
    p = add('gravity', cmd_gravity, 'gravity torques g(q) and their share of the effort limits')
    state(p, 'q')
    p = add('cartesian', cmd_cartesian, 'Cartesian (operational-space) dynamics of LINK: '
            'J, Lambda, mu, p')
    p.add_argument('link', metavar='LINK', help='link whose origin is the task point')
    state(p, 'q', 'qd')
    p.add_argument('--frame', choices=('world', 'link'), default='world',
                   help='axes of the task directions (default world = root frame)')
    p.add_argument('--directions', metavar='DIRS',
                   help='task directions, e.g. x,y (default x,y,z,rx,ry,rz)')

    p = add('simulate', cmd_simulate, 'simulate the arm offline, with a plot and CSV')
    p.add_argument('--duration', type=float, required=True, metavar='SECONDS',
                   help='simulated time [s]')
    p.add_argument('--q0', metavar='VALUES', help='initial positions: ' + _STATE_HELP)
    p.add_argument('--qd0', metavar='VALUES', help='initial velocities: ' + _STATE_HELP)
    p.add_argument('--controller', choices=('none', 'gravity-comp', 'pd'), default='none',
                   help='none: zero torque; gravity-comp: tau = g(q); pd: tau = g(q) + '
                   'kp (target - q) - kd qd (default none)')
    p.add_argument('--target', metavar='VALUES', help='pd target (default: q0)')
    p.add_argument('--kp', type=float, default=100.0, help='pd stiffness [N m/rad] (100)')
    p.add_argument('--kd', type=float, default=20.0, help='pd damping [N m s/rad] (20)')
    p.add_argument('--integrator', choices=('semi_implicit_euler', 'rk4', 'adaptive'),
                   default='semi_implicit_euler', help='(default semi_implicit_euler)')
    p.add_argument('--dt', type=float, default=1e-3, metavar='SECONDS',
                   help='step [s] (default 0.001)')
    p.add_argument('--limits', choices=('spring', 'hard', 'none'), default='spring',
                   help='joint position limits (default spring)')
    p.add_argument('--no-friction', action='store_true', help='simulate without friction')
    p.add_argument('--no-clamp', action='store_true',
                   help='do not clamp torques to the effort limits')
    p.add_argument('--record-every', type=int, default=1, metavar='K',
                   help='record every K-th step (default 1)')
    p.add_argument('--plot', metavar='PNG', help='write a plot: q, qd, tau, total energy')
    p.add_argument('--csv', metavar='CSV', help='write the recorded run as CSV')
    p.add_argument('--quiet', action='store_true', help='no progress bar')

    p = add('closed-form', cmd_closed_form, 'symbolic Lagrangian equations of motion (at most '
            '3 DoF; needs sympy)')
    form = p.add_mutually_exclusive_group()
    form.add_argument('--latex', action='store_true', help='LaTeX (default)')
    form.add_argument('--python', action='store_true', help='a Python function')
    p.add_argument('--no-simplify', action='store_true', help='skip sympy simplification')

    p = add('view', cmd_view, 'the arm in the browser: a slider per joint, g(q) as arrows '
            '(needs viser, no ROS)')
    from manip_dynamics import cli_view
    cli_view.add_arguments(p)
    p = add('bench', cmd_bench, 'time inverse dynamics, mass matrix and forward dynamics')
    p.add_argument('--repeat', type=int, default=2000, help='timed calls per function (2000)')
    p.add_argument('--batch', type=int, default=1000,
                   help='also time one batch of this many states for ID (0: skip)')
    p.add_argument('--seed', type=int, default=0, help='random state seed (0)')

    text = ('compile every dynamics kernel into the disk cache (once after an install; '
            'make build does it)')
    p = sub.add_parser('precompile', help=text, description=text)
    from manip_dynamics import precompile
    precompile.add_arguments(p)
    p.set_defaults(func=cmd_precompile)

    from manip_dynamics import cli_identify   # identify excite | fit | validate | simulate
    cli_identify.register(sub, common, _Parser)
    return parser


def _version() -> str:
    try:
        from manip_dynamics import __version__
        return __version__
    except ImportError:
        return 'unknown'


def main(argv: Sequence[str] | None = None) -> int:
    """
    Run ``manip-dynamics`` with ``argv`` (default ``sys.argv[1:]``).

    :return: The exit code (0 ok, 1 check failed, 2 usage or input error, 3 internal error).
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = '--debug' in argv
    if not debug:
        import warnings
        warnings.simplefilter('ignore')
    try:
        args = build_parser().parse_args(argv)
        return args.func(args, sys.stdout)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    except KeyboardInterrupt:
        if debug:
            raise
        sys.stderr.write('%s: interrupted\n' % PROG)
        return EXIT_INTERRUPTED
    except (CliError, ManipDynamicsError) as exc:
        # The library's InputError and URDFError name the offending joint, link or element.
        if debug:
            raise
        sys.stderr.write('%s: error: %s\n' % (PROG, _one_line(exc)))
        return EXIT_USAGE
    except OSError as exc:
        if debug:
            raise
        sys.stderr.write('%s: error: %s\n' % (PROG, _one_line(exc)))
        return EXIT_USAGE
    except Exception as exc:  # noqa: B902 - last resort: no traceback without --debug
        if debug:
            raise
        sys.stderr.write('%s: internal error: %s: %s (run with --debug for the traceback)\n'
                         % (PROG, type(exc).__name__, _one_line(exc)))
        return EXIT_INTERNAL


def _one_line(exc: BaseException) -> str:
    return ' '.join(str(exc).split()) or type(exc).__name__


if __name__ == '__main__':
    sys.exit(main())
