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
``manip-dynamics`` subcommands on one model and one state.

info, check, id, fd, terms, gravity, cartesian and closed-form.
"""

import argparse
import math
import os
from typing import TextIO

import numpy as np

from manip_dynamics.cli import formatting as fmt
from manip_dynamics.cli.common import (
    _emit_json, _joint_table, _parse_wrenches, _position_units, _state_doc, _units, CliError,
    EXIT_CHECK_FAILED, EXIT_OK, load_model, parse_joint_values, PROG, read_description)


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
