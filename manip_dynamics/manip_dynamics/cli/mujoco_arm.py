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

"""``manip-dynamics mujoco-arm``: write a MuJoCo arm that is not its description."""

import argparse
import os
from typing import TextIO

import numpy as np

from manip_dynamics.cli import common
from manip_dynamics.cli.common import CliError

EXAMPLE = ('example:\n  manip-dynamics mujoco-arm cobot7 --seed 3 --armature 0.1 '
           '--table 0.2 -o cobot7_true.xml\n'
           '  ros2 launch manip_dynamics sim.launch.py hardware:=mujoco '
           'mujoco_model:=$PWD/cobot7_true.xml')


def _error_range(text: str, option: str) -> tuple[float, float]:
    low, sep, high = text.partition(':')
    first = common.parse_number(low, option)
    return (first, common.parse_number(high, option) if sep else first)


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add the options of ``mujoco-arm`` to its parser."""
    p.add_argument('--mass', default='0.1:0.3', metavar='LOW[:HIGH]',
                   help='relative mass error magnitude per link, random sign (0.1:0.3)')
    p.add_argument('--com', default='0.1:0.3', metavar='LOW[:HIGH]',
                   help='centre of mass moved by this times its distance from the link '
                   'origin (at least 1 cm), random direction (0.1:0.3)')
    p.add_argument('--inertia', default='0.1:0.3', metavar='LOW[:HIGH]',
                   help='relative error of each principal moment, random sign (0.1:0.3)')
    p.add_argument('--friction-factor', type=float, default=2.0,
                   help='factor on the viscous damping and dry friction (2)')
    p.add_argument('--friction-of-limit', type=float, default=0.0, metavar='FRACTION',
                   help='dry friction added to every joint, as a fraction of its effort limit '
                   '(0; e.g. 0.02 for a description that states none)')
    p.add_argument('--armature-factor', type=float, default=2.0,
                   help="factor on the description's rotor inertia (2)")
    p.add_argument('--armature', default='0', metavar='KG_M2',
                   help='rotor inertia added to every joint [kg m^2 or kg] (0)')
    p.add_argument('--seed', type=int, default=0, help='random seed: same seed, same arm (0)')
    p.add_argument('--table', metavar='TOP[,X,Y]',
                   help='a table whose top is at height TOP [m], centred at X,Y (0.5,0)')
    p.add_argument('--box', action='append', metavar='X,Y,Z,HX,HY,HZ',
                   help='a fixed box: centre and half-sizes [m] (repeatable)')
    p.add_argument('--no-motors', action='store_true',
                   help='no motor actuator per joint (they are there for mujoco_ros2_control)')
    p.add_argument('-o', '--output', metavar='FILE', help='MJCF file to write (default: '
                   'print it)')


def _boxes(args: argparse.Namespace) -> list:
    from manip_dynamics.simulation.arm_variants import Box, table
    boxes = []
    if args.table:
        values = [common.parse_number(v, '--table') for v in args.table.split(',')]
        if len(values) not in (1, 3):
            raise CliError('--table takes TOP or TOP,X,Y, got %r' % args.table)
        boxes.append(table(values[0], *([tuple(values[1:])] if len(values) == 3 else [])))
    for k, text in enumerate(args.box or ()):
        values = common.parse_vector(text, 6, '--box')
        boxes.append(Box('box%d' % (k + 1), tuple(values[:3]), tuple(values[3:])))
    return boxes


def cmd_mujoco_arm(args: argparse.Namespace, out: TextIO) -> int:
    """Write the MJCF of the variant and print how its links differ from the description."""
    from manip_dynamics.simulation.arm_variants import arm_variant, ArmErrors
    from manip_dynamics.simulation.mujoco_arm import import_mujoco
    model = common.load_model(args)   # the description must load as the suite loads it
    xml, path = common.read_description(args.urdf, args.xacro_arg or ())
    source = path if path.endswith('.urdf') and os.path.isfile(path) else xml
    errors = ArmErrors(
        mass=_error_range(args.mass, '--mass'), com=_error_range(args.com, '--com'),
        inertia=_error_range(args.inertia, '--inertia'),
        friction_factor=args.friction_factor, armature_factor=args.armature_factor,
        friction_of_limit=args.friction_of_limit,
        armature=common.parse_number(args.armature, '--armature'), seed=args.seed)
    variant = arm_variant(source, errors, boxes=_boxes(args), motors=not args.no_motors)
    if not args.output:
        out.write(variant)
        return 0
    with open(args.output, 'w', encoding='utf-8') as stream:
        stream.write(variant)
    mujoco = import_mujoco()
    true = mujoco.MjModel.from_xml_string(variant)
    out.write('%s: %s as MuJoCo runs it, seed %d (the suite keeps the description)\n' % (
        args.output, model.name, args.seed))
    for name in model.joint_names:
        joint = mujoco.mj_name2id(true, mujoco.mjtObj.mjOBJ_JOINT, name)
        body, dof = int(true.jnt_bodyid[joint]), int(true.jnt_dofadr[joint])
        out.write('  %-28s mass %8.4f kg  damping %7.4f  frictionloss %7.4f  armature %7.4f\n'
                  % (name, float(true.body_mass[body]), float(true.dof_damping[dof]),
                     float(true.dof_frictionloss[dof]), float(true.dof_armature[dof])))
    out.write('  total mass %.4f kg (described %.4f kg)\n' % (
        float(np.sum(true.body_mass)), model.total_mass))
    return 0
