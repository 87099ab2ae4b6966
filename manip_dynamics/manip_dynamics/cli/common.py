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
What every ``manip-dynamics`` subcommand shares: exit codes, errors, value parsing, model loading.

The bottom of the CLI package: the subcommand modules import from here, never the other way.
"""

import argparse
import ast
from collections.abc import Sequence
import json
import math
import operator
import os
import sys
from typing import NoReturn, TextIO

import numpy as np

from manip_dynamics.cli import formatting as fmt


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


def _joint_table(model, columns: list[tuple[str, np.ndarray, list[str]]]) -> str:
    headers = ['joint'] + [name for name, _, _ in columns]
    rows = []
    for i, joint in enumerate(model.joint_names):
        rows.append([joint] + ['%s %s' % (fmt.num(values[i]), units[i])
                               for _, values, units in columns])
    return fmt.table(headers, rows, numeric_from=1)


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
