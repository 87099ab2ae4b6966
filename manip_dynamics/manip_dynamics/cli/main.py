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

"""``manip-dynamics``: the argument parser and ``main`` (see the package docstring)."""

import argparse
from collections.abc import Callable, Sequence
import sys


from manip_dynamics.cli.common import (
    _bundled_names, _Parser, CliError, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_USAGE, PROG)
from manip_dynamics.cli.dynamics import (
    cmd_cartesian, cmd_check, cmd_closed_form, cmd_fd, cmd_gravity, cmd_id, cmd_info, cmd_terms)
from manip_dynamics.cli.simulate import cmd_simulate
from manip_dynamics.cli.tools import cmd_bench, cmd_precompile, cmd_view
from manip_dynamics.errors import ManipDynamicsError


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
    from manip_dynamics.cli import view
    view.add_arguments(p)
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

    from manip_dynamics.cli import identify   # identify excite | fit | validate | simulate
    identify.register(sub, common, _Parser)

    from manip_dynamics.cli import mujoco_arm
    text = ('write a MuJoCo arm (MJCF) whose masses, centres of mass, inertias, friction and '
            'rotor inertia differ from the description, with a table or boxes to touch')
    p = sub.add_parser('mujoco-arm', parents=[common], help=text, description=text,
                       epilog=mujoco_arm.EXAMPLE,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    mujoco_arm.add_arguments(p)
    p.set_defaults(func=mujoco_arm.cmd_mujoco_arm)

    from manip_dynamics.cli import retime
    text = ('near time-optimal trajectory through waypoints within velocity, acceleration '
            'and torque limits (payload and friction included)')
    p = sub.add_parser('retime', parents=[common], help=text, description=text,
                       epilog=retime.RETIME_EXAMPLE,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    retime.add_arguments(p)
    p.set_defaults(func=retime.cmd_retime)
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
