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
``manip-dynamics view ROBOT``: the arm in the browser, a slider per joint, g(q) as arrows.

No ROS: the model, the scene and the web server (viser, the ``[viewer]`` extra) run in this
process. Each slider move recomputes the gravity torques ``g(q)`` (Craig eq. 6.60) with the
library and redraws the arm and the arrows; the panel lists ``g_i`` and its share of the
joint's effort limit. Stops on Ctrl-C or after ``--duration`` seconds.
"""

import argparse
import math
import os
import time
from typing import TextIO

import numpy as np


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """
    Add the options of ``view`` to its sub-parser.

    :param parser: The ``view`` sub-parser (it already has the common model options).
    """
    parser.add_argument('--q', metavar='VALUES', help='initial joint positions [rad | m]: '
                        'comma-separated values in joint order, or name=value pairs')
    parser.add_argument('--port', type=int, default=8080,
                        help='TCP port on 127.0.0.1 (default 8080; taken: the next free one)')
    parser.add_argument('--mesh-path', metavar='DIR', action='append',
                        help='folder to look for package:// and relative mesh files in '
                        '(repeatable; the ament index is searched first when present)')
    parser.add_argument('--payload', metavar='LINK=MASS',
                        help='attach a payload [kg] to LINK (drawn as a sphere, included in '
                        'g(q))')
    parser.add_argument('--payload-com', metavar='X,Y,Z', default='0,0,0',
                        help='payload centre of mass in the link frame [m] (default 0,0,0)')
    parser.add_argument('--duration', type=float, metavar='SECONDS',
                        help='stop after this many seconds (default: until Ctrl-C)')


def gravity_rows(model: object, q: np.ndarray, g: np.ndarray) -> list[tuple[str, str]]:
    """
    Return the panel's rows for a configuration: g_i per joint and its share of the limit.

    :param model: The RobotModel.
    :param q: Joint positions, model order, shape (n,).
    :param g: Gravity torques at ``q``, shape (n,) [N m | N].
    :return: ``(label, value)`` pairs.
    """
    limits = model.effort_limits
    rows = []
    for name, kind, value, limit in zip(model.joint_names, model.joint_types, g, limits):
        unit = 'N' if kind == 'prismatic' else 'N m'
        share = (' (%3.0f %%)' % (100.0 * abs(value) / limit)
                 if math.isfinite(limit) and limit > 0.0 else '')
        rows.append(('g %s' % name, '%+8.2f %s%s' % (value, unit, share)))
    k = int(np.argmax(np.abs(g))) if len(g) else 0
    rows.append(('max abs(g)', '%.2f (%s)' % (abs(g[k]), model.joint_names[k]) if len(g)
                 else '-'))
    rows.append(('total mass', '%.3f kg' % model.total_mass))
    return rows


def run(args: argparse.Namespace, out: TextIO) -> int:
    """
    Serve the view until Ctrl-C or ``--duration``.

    :param args: Parsed options (common model options plus :func:`add_arguments`).
    :param out: Where the URL and messages go.
    :return: Exit code 0.
    :raises CliError: Bad options, viser missing, unusable URDF.
    """
    from manip_dynamics.cli.common import (
        CliError, load_model, parse_joint_values, parse_number, parse_vector, read_description)
    from manip_dynamics.viewer.scene import RobotScene
    from manip_dynamics.viewer.urdf_visuals import parse_visuals
    if not 0 <= args.port <= 65535:
        raise CliError('--port must be in 0..65535, got %d' % args.port)
    if args.duration is not None and not (math.isfinite(args.duration) and args.duration > 0):
        raise CliError('--duration must be > 0 seconds')
    from manip_dynamics.viewer.server import ArmView, viser_missing
    missing = viser_missing()
    if missing:
        raise CliError(missing)
    model = load_model(args)
    xml, path = read_description(args.urdf, args.xacro_arg or ())
    if args.payload:
        link, sep, mass = args.payload.partition('=')
        if not sep or not link.strip():
            raise CliError('--payload %r must look like LINK=MASS' % args.payload)
        model.set_payload(link.strip(), parse_number(mass, '--payload mass'),
                          parse_vector(args.payload_com, 3, '--payload-com'))
    base_dir = os.path.dirname(os.path.abspath(path)) if os.path.exists(path) else None
    scene = RobotScene(model, parse_visuals(xml, search_paths=tuple(args.mesh_path or ()),
                                            base_dir=base_dir))
    q0 = parse_joint_values(args.q, model.joint_names, '--q')
    # 127.0.0.1 only: the page is for this machine's browser
    view = ArmView(host='127.0.0.1', port=args.port, title='%s (manip-dynamics view)'
                   % model.name)
    try:
        for note in view.show(scene, q0):
            out.write('view: %s\n' % note)

        def moved(q: np.ndarray) -> None:
            g = model.gravity_torques(q)
            view.update(q, gravity=g)
            view.set_status(gravity_rows(model, q, g), title='%s: gravity torques g(q)'
                            % model.name)
        view.add_joint_sliders(moved, q0)
        out.write('view: %s (%d joints) at %s  (Ctrl-C to stop)\n'
                  % (model.name, model.dof, view.url))
        out.flush()
        end = None if args.duration is None else time.monotonic() + args.duration
        try:
            while end is None or time.monotonic() < end:
                time.sleep(0.2)
        except KeyboardInterrupt:
            out.write('view: stopped\n')
    finally:
        view.close()
    return 0
