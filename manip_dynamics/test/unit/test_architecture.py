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
The layer order of docs/ARCHITECTURE.md holds: imports run one way, and no import cycles.

Every module of the package is imported (ROS ones where rclpy is there), and every import
statement of every module, lazy ones inside functions included, is checked: a module imports
only its own layer or the layers below, and the module graph has no cycle.
"""

import ast
import importlib
import pathlib
import re

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parents[2] / 'manip_dynamics'
DOC = pathlib.Path(__file__).resolve().parents[3] / 'docs' / 'ARCHITECTURE.md'

#: The layers, bottom first (docs/ARCHITECTURE.md); a module belongs to the first entry that
#: is its name or a package above it.
LAYERS = [
    ['manip_dynamics', '_numba_cache', 'errors', 'inputs', 'small_arrays', 'batching', 'bundled',
     'spatial'],
    ['model', 'model_check'],
    ['algorithms', 'safety'],
    ['simulation', 'identification', 'observers', 'control', 'symbolic', 'planning'],
    ['robot_model_calls', 'robot_model'],
    ['precompile', 'viewer'],
    ['cli', 'ros'],
    ['demo'],
]


def module_name(path: pathlib.Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix('')
    parts = list(rel.parts)
    if parts[-1] == '__init__':
        parts.pop()
    return '.'.join(parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob('*.py'))
           if '__pycache__' not in p.parts}


def layer_of(module: str) -> int:
    parts = module.split('.')
    top = parts[1] if len(parts) > 1 else 'manip_dynamics'
    for index, names in enumerate(LAYERS):
        if top in names:
            return index
    raise AssertionError('module %s is in no layer of docs/ARCHITECTURE.md: add it there and '
                         'to LAYERS' % module)


def imported_modules(path: pathlib.Path) -> set[str]:
    """Return the package modules a file imports (every statement, lazy ones too)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding='utf-8'))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.split('.')[0] != 'manip_dynamics':
                continue
            for alias in node.names:
                candidate = '%s.%s' % (node.module, alias.name)
                found.add(candidate if candidate in MODULES else node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split('.')[0] == 'manip_dynamics')
    return {m for m in found if m in MODULES}


GRAPH = {name: imported_modules(path) - {name} for name, path in MODULES.items()}


def test_every_module_is_in_a_layer_and_the_doc_names_every_layer():
    text = DOC.read_text(encoding='utf-8')
    for name in MODULES:
        layer_of(name)
    for names in LAYERS:
        for top in names:
            assert '`%s' % top in text, '%s is missing from docs/ARCHITECTURE.md' % top


@pytest.mark.parametrize('module', sorted(MODULES))
def test_no_module_imports_a_layer_above_its_own(module):
    own = layer_of(module)
    above = sorted(m for m in GRAPH[module] if layer_of(m) > own)
    assert not above, '%s (layer %d) imports %s' % (
        module, own, ', '.join('%s (layer %d)' % (m, layer_of(m)) for m in above))


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of ``graph`` larger than one node."""
    index, low, stack, on_stack, cycles = {}, {}, [], set(), []
    counter = [0]

    def visit(node: str) -> None:
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for succ in graph[node]:
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))
    for node in sorted(graph):
        if node not in index:
            visit(node)
    return cycles


def test_no_import_cycle():
    """The module graph (function-local imports included) has no cycle."""
    cycles = _cycles(GRAPH)
    # a package's __init__ re-exporting its own modules is not a cycle with them
    cycles = [c for c in cycles if not all(m.startswith(c[0] + '.') or m == c[0] for m in c)]
    assert not cycles, 'import cycles: %s' % cycles


def _folder(module: str) -> str:
    """Return the package folder (or top-level module) ``manip_dynamics.<folder>...`` is in."""
    parts = module.split('.')
    return parts[1] if len(parts) > 1 else parts[0]


def _folder_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """Return the imports between folders: one arrow per pair, own-folder imports left out."""
    folders: dict[str, set[str]] = {}
    for module, imported in graph.items():
        folders.setdefault(_folder(module), set()).update(
            _folder(m) for m in imported if _folder(m) != _folder(module))
    for targets in list(folders.values()):
        for target in targets:
            folders.setdefault(target, set())
    return folders


def test_folders_import_each_other_in_one_direction():
    """No two folders import each other, directly or around a ring (e.g. control, planning)."""
    cycles = _cycles(_folder_graph(GRAPH))
    assert not cycles, 'folders importing each other: %s' % cycles


def test_the_folder_rule_catches_two_folders_importing_each_other():
    """The checker itself: control -> planning and planning -> control is a cycle."""
    graph = {'manip_dynamics.control.a': {'manip_dynamics.planning.b'},
             'manip_dynamics.planning.b': {'manip_dynamics.control.c'},
             'manip_dynamics.control.c': set()}
    assert _cycles(_folder_graph(graph)) == [['control', 'planning']]


def test_the_rule_catches_an_upward_import():
    """The checker itself: a layer-3 module importing the facade is reported."""
    assert layer_of('manip_dynamics.identification.regressor') < layer_of(
        'manip_dynamics.robot_model')
    assert layer_of('manip_dynamics.cli.main') > layer_of('manip_dynamics.precompile')


@pytest.mark.parametrize('module', sorted(MODULES))
def test_every_module_imports(module):
    if layer_of(module) >= layer_of('manip_dynamics.ros') and re.match(
            r'manip_dynamics\.(ros|demo)\b', module):
        pytest.importorskip('rclpy', reason='rclpy not installed: ROS modules not imported')
    if module.endswith('__main__'):
        pytest.skip('%s runs its program when imported' % module)
    importlib.import_module(module)


def test_precompile_steps_come_from_the_kernel_modules():
    """A new kernel needs no edit in precompile.py: the steps are the modules' own lists."""
    from manip_dynamics import precompile
    declared = []
    for name, path in MODULES.items():
        if re.search(r'^PRECOMPILE_STEPS = ', path.read_text(encoding='utf-8'), re.M):
            declared.extend(label for label, _ in importlib.import_module(name).PRECOMPILE_STEPS)
    labels = [label for label, _ in precompile.steps()]
    assert set(labels) == set(declared) | {precompile.LAST_STEP}
    assert labels[-1] == precompile.LAST_STEP


#: A node file's lines at most (docs/ARCHITECTURE.md, *A new node*).
NODE_LINES, SIMULATOR_NODE_LINES = 400, 300


def test_nodes_stay_thin():
    sizes = {path.name: len(path.read_text(encoding='utf-8').splitlines())
             for path in (PACKAGE / 'ros' / 'nodes').glob('*.py') if path.name != '__init__.py'}
    assert sizes and max(sizes.values()) <= NODE_LINES, sizes
    assert sizes['simulator_node.py'] <= SIMULATOR_NODE_LINES, sizes
