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

"""Text output of ``manip-dynamics``: aligned tables, matrices, JSON conversion, CSV."""

from collections.abc import Sequence
import csv
import math

import numpy as np


def num(value: float, spec: str = '%.6g') -> str:
    """Format a number; tiny round-off (|x| < 1e-12) prints as 0, infinities as inf."""
    value = float(value)
    if math.isnan(value):
        return 'nan'
    if math.isinf(value):
        return 'inf' if value > 0 else '-inf'
    if abs(value) < 1e-12:
        value = 0.0
    return spec % value


def vector(values: Sequence[float], spec: str = '%.6g') -> str:
    """Format a vector as ``(a, b, c)``."""
    return '(%s)' % ', '.join(num(v, spec) for v in values)


def table(headers: Sequence[str], rows: Sequence[Sequence[object]], *, indent: int = 0,
          numeric_from: int | None = None) -> str:
    """
    Return an aligned plain-text table, one line per row, header underlined.

    :param headers: Column titles (put units in them or in the cells).
    :param rows: Cells, converted with ``str``.
    :param indent: Spaces before every line.
    :param numeric_from: Columns from this index on are right-aligned.
    """
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    pad = ' ' * indent
    lines = []
    for k, row in enumerate(cells):
        parts = []
        for i, cell in enumerate(row):
            right = numeric_from is not None and i >= numeric_from and k > 0
            parts.append(cell.rjust(widths[i]) if right else cell.ljust(widths[i]))
        lines.append(pad + '  '.join(parts).rstrip())
        if k == 0:
            lines.append(pad + '  '.join('-' * w for w in widths))
    return '\n'.join(lines) + '\n'


def matrix(values: np.ndarray, col_labels: Sequence[str],
           row_labels: Sequence[str] | None = None) -> str:
    """Return a labelled matrix as an aligned table (columns numbered when labels are long)."""
    values = np.asarray(values)
    rows_l = list(row_labels if row_labels is not None else col_labels)
    short = [str(i + 1) if len(label) > 12 else label for i, label in enumerate(col_labels)]
    rows = [[rows_l[i]] + [num(v, '%.5g') for v in values[i]] for i in range(values.shape[0])]
    text = table([''] + short, rows, numeric_from=1)
    if short != list(col_labels):
        text += 'columns: %s\n' % ', '.join('%s = %s' % (s, c) for s, c in zip(short, col_labels))
    return text


def jsonable(value: object) -> object:
    """Convert numpy arrays and scalars to lists and floats; inf becomes None (null)."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        return value if math.isfinite(value) else None
    return value


def tree_lines(robot: object, root: str) -> list[str]:
    """
    Return the kinematic tree below ``root`` as indented lines.

    :param robot: A ``urdf_parser_py`` Robot.
    :param root: Link to start from.
    """
    children: dict[str, list[object]] = {}
    for joint in robot.joints:
        children.setdefault(joint.parent, []).append(joint)
    lines = [root]
    # Depth-first with an explicit stack (no recursion: any depth of tree).
    stack = [(joint, '', k == len(children.get(root, [])) - 1)
             for k, joint in enumerate(children.get(root, []))][::-1]
    while stack:
        joint, prefix, last = stack.pop()
        lines.append('%s%s-[%s %s]--> %s' % (
            prefix, '`-' if last else '|-', joint.type, joint.name, joint.child))
        kids = children.get(joint.child, [])
        inner = prefix + ('   ' if last else '|  ')
        stack.extend((kid, inner, k == len(kids) - 1) for k, kid in reversed(list(
            enumerate(kids))))
    return lines


def write_csv(path: str, result: object, joint_names: Sequence[str]) -> None:
    """
    Write a simulation result as CSV: t, q_*, qd_*, tau_*, kinetic, potential, energy.

    :param path: Output file.
    :param result: A SimulationResult (``t q qd tau kinetic potential energy``).
    :param joint_names: Joint names for the column titles, model order.
    """
    header = (['t'] + ['q_' + j for j in joint_names] + ['qd_' + j for j in joint_names]
              + ['tau_' + j for j in joint_names] + ['kinetic', 'potential', 'energy'])
    data = np.column_stack([np.asarray(result.t), np.asarray(result.q),
                            np.asarray(result.qd), np.asarray(result.tau),
                            np.asarray(result.kinetic), np.asarray(result.potential),
                            np.asarray(result.energy)])
    with open(path, 'w', newline='', encoding='utf-8') as stream:
        writer = csv.writer(stream)
        writer.writerow(header)
        for row in data:
            writer.writerow(['%.9g' % v for v in row])
