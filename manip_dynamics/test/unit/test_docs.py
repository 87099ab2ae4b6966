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
Execute every code sample of docs/*.md and README.md.

The convention (write documentation to it):

* A fenced block is one test, named ``<file>:<line>``.
* ```` ```python ```` blocks run in a fresh subprocess (cwd: a temporary folder, the package
  sources on PYTHONPATH, matplotlib on Agg) and must exit 0.
* ```` ```bash ```` / ```` ```sh ```` / ```` ```console ```` blocks: every command line that
  starts with ``manip-dynamics`` (in console blocks: ``$ manip-dynamics``; other console lines
  are output) is run as ``python -m manip_dynamics.cli`` and must exit 0, or the code given
  by a trailing ``# exit N`` comment.  Every other command (``make``, ``ros2``,
  ``colcon``, ``source``, ...) is not executed here: it needs a built workspace, an
  apt-installed ROS or a running graph.  bash blocks are still checked with ``bash -n``.
* ```` ```yaml ```` blocks must parse with ``yaml.safe_load``.
* An HTML comment on the line(s) before a block changes that:
  ``<!-- requires: ros-graph -->``: the block needs running ROS nodes; a python block is only
  compiled with ``compile()``; ``<!-- not-executed: REASON -->``: the block is only checked
  for syntax (python ``compile``, bash ``bash -n``), for the reason given.
* Blocks in other languages (``text``, ``xml``, none) are prose and are not checked.

Blocks in files of other owners that are not runnable and not tagged are listed in
``UNTAGGED_NOT_RUNNABLE`` with the reason; they are compiled-only (and the owner is told to
add the tag).
"""

from dataclasses import dataclass
import os
from pathlib import Path
import re
import shlex
import subprocess
import sys

import pytest

from manip_dynamics.ros.runtime.discovery import loopback_environment

PACKAGE_ROOT = Path(__file__).resolve().parents[2]
REPO_ROOT = PACKAGE_ROOT.parent
DOC_FILES = sorted((REPO_ROOT / 'docs').glob('*.md')) + [REPO_ROOT / 'README.md']
TIMEOUT = 300

FENCE = re.compile(r'^```(\w*)[^\n]*\n(.*?)^```[ \t]*$', re.S | re.M)
TAG = re.compile(r'<!--\s*(requires:\s*ros-graph|not-executed:[^>]*?)\s*-->\s*$')
EXIT = re.compile(r'\s+#\s*exit\s+(\d+)\s*$')


@dataclass
class Block:
    """One fenced code block of a document."""

    path: Path
    line: int
    language: str
    code: str
    tag: str | None

    @property
    def test_id(self) -> str:
        return '%s:%d' % (self.path.name, self.line)


def collect_blocks() -> list[Block]:
    """Return every fenced block with a language worth checking."""
    blocks = []
    for path in DOC_FILES:
        if not path.is_file():
            continue
        text = path.read_text(encoding='utf-8')
        for match in FENCE.finditer(text):
            language = match.group(1).lower()
            if language not in ('python', 'bash', 'sh', 'console', 'yaml'):
                continue
            line = text.count('\n', 0, match.start()) + 1
            before = text[:match.start()].rstrip('\n').splitlines()
            tag = None
            if before:
                found = TAG.search(before[-1])
                tag = found.group(1) if found else None
            blocks.append(Block(path, line, language, match.group(2), tag))
    return blocks


BLOCKS = collect_blocks()


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env['PYTHONPATH'] = str(PACKAGE_ROOT) + os.pathsep + env.get('PYTHONPATH', '')
    env['MPLBACKEND'] = 'Agg'
    env.update(loopback_environment(env))
    if 'ROS_LOCALHOST_ONLY' not in loopback_environment(env):
        env.pop('ROS_LOCALHOST_ONLY', None)
    return env


def shell_commands(block: Block) -> list[str]:
    """Return the logical command lines of a shell block (continuations joined)."""
    lines = block.code.splitlines()
    if block.language == 'console':
        lines = [ln[2:] for ln in lines if ln.startswith('$ ')]
    commands, current = [], ''
    for ln in lines:
        if ln.rstrip().endswith('\\'):
            current += ln.rstrip()[:-1] + ' '
            continue
        current += ln
        if current.strip() and not current.strip().startswith('#'):
            commands.append(current.strip())
        current = ''
    return commands


def test_docs_have_blocks():
    names = {b.path.name for b in BLOCKS}
    for doc in ('CLI.md', 'QUICKSTART.md', 'TUTORIAL_REAL_ARM.md', 'PLANNER_SERVICES.md',
                'THEORY.md'):
        assert doc in names, 'docs/%s has no checked code block' % doc


def test_readme_links_every_doc():
    readme = (REPO_ROOT / 'README.md').read_text(encoding='utf-8')
    missing = [p.name for p in (REPO_ROOT / 'docs').glob('*.md')
               if 'docs/%s' % p.name not in readme]
    assert not missing, 'README.md does not link %s' % missing


@pytest.mark.parametrize('block', BLOCKS, ids=[b.test_id for b in BLOCKS])
def test_code_block(block: Block, tmp_path):
    if block.language == 'yaml':
        yaml = pytest.importorskip('yaml', reason='PyYAML not installed')
        assert yaml.safe_load(block.code) is not None
        return
    if block.language == 'python':
        if block.tag:
            compile(block.code, block.test_id, 'exec')
            return
        script = tmp_path / 'sample.py'
        script.write_text(block.code)
        proc = subprocess.run([sys.executable, str(script)], cwd=str(tmp_path), env=_env(),
                              capture_output=True, text=True, timeout=TIMEOUT)
        assert proc.returncode == 0, '%s failed:\n%s\n%s' % (
            block.test_id, proc.stdout, proc.stderr)
        return
    # shell blocks
    if block.language in ('bash', 'sh'):
        proc = subprocess.run(['bash', '-n'], input=block.code, capture_output=True,
                              text=True, timeout=30)
        assert proc.returncode == 0, 'bash syntax error in %s: %s' % (block.test_id,
                                                                      proc.stderr)
    commands = shell_commands(block)
    if block.tag:
        assert commands or block.code.strip(), 'empty block %s' % block.test_id
        return
    ran = 0
    for command in commands:
        expected = 0
        found = EXIT.search(command)
        if found:
            expected = int(found.group(1))
            command = command[:found.start()]
        command = command.split(' #', 1)[0].strip() if not command.startswith('#') else ''
        words = shlex.split(command)
        if not words or words[0] != 'manip-dynamics':
            continue  # make, ros2, colcon, source: not executed here (see the docstring)
        proc = subprocess.run([sys.executable, '-m', 'manip_dynamics.cli', *words[1:]],
                              cwd=str(tmp_path), env=_env(), capture_output=True, text=True,
                              timeout=TIMEOUT)
        assert proc.returncode == expected, '%s: %r exited %d (expected %d)\n%s\n%s' % (
            block.test_id, command, proc.returncode, expected, proc.stdout, proc.stderr)
        ran += 1
    if not ran:
        pytest.skip('no manip-dynamics command; other commands (%s) need a built workspace '
                    'or ROS and are not executed' % ', '.join(
                        sorted({c.split()[0] for c in commands})) or 'none')


# ---------------------------------------------------------------------- ros2 command lines
# Every `ros2 ...` line of README.md and docs/ is checked as a ROS user's shell would read it
# (the ros2 CLI itself is not on PyPI, so the lines are not run here): known verb, existing
# launch file and declared launch arguments, existing executables, --ros-args rules with a
# name and a value, files that exist relative to the repository root (where the docs say
# to run them), service types that exist and request YAML that parses, and never an empty
# value (`urdf:=''` is rejected by ros2 launch) or a command substitution in a parameter.
INLINE_ROS2 = re.compile(r'`(ros2 [^`]+)`')
LAUNCH_ARGUMENT = re.compile(r"DeclareLaunchArgument\(\s*'(\w+)'")
CONSOLE_SCRIPT = re.compile(r"'([\w-]+) = manip_dynamics\.")
EXTERNAL_EXECUTABLES = {('controller_manager', 'spawner'), ('robot_state_publisher',
                                                            'robot_state_publisher')}
STD_SERVICES = {'std_srvs/srv/Trigger', 'std_srvs/srv/SetBool', 'std_srvs/srv/Empty'}
READ_ONLY_VERBS = {('topic', 'echo'), ('topic', 'list'), ('topic', 'hz'), ('service', 'list'),
                   ('node', 'list'), ('param', 'get'), ('param', 'list'),
                   ('param', 'describe'), ('interface', 'show'), ('pkg', 'prefix')}
#: Default node name -> executable, of the nodes with a parameter table (``ros2 param set``).
TUNABLE_NODES = {'gravity_compensation': 'gravity_compensation_node',
                 'external_torque_observer': 'external_torque_observer',
                 'feedforward_filter': 'feedforward_filter',
                 'trajectory_controller': 'trajectory_controller'}
#: ros2controlcli's verbs (ros2_control's CLI, with every apt ros2_control).
CONTROL_VERBS = {('control', 'list_controllers'), ('control', 'list_hardware_interfaces'),
                 ('control', 'switch_controllers')}


def ros2_commands() -> list[tuple[str, str]]:
    """Return ``(where, command line)`` of every ros2 command of the docs."""
    found = []
    for block in BLOCKS:
        if block.language in ('bash', 'sh', 'console'):
            for command in shell_commands(block):
                if command.startswith('ros2 '):
                    found.append((block.test_id, command))
    for path in DOC_FILES:
        text = path.read_text(encoding='utf-8')
        prose = FENCE.sub('', text)
        for match in INLINE_ROS2.finditer(prose):
            command = ' '.join(match.group(1).split())
            if '[' in command or '<' in command or len(command.split()) < 3:
                continue  # a synopsis (`ros2 launch ... [rviz:=true]`) or the tool's name
            found.append(('%s (inline)' % path.name, command))
    return found


ROS2_COMMANDS = ros2_commands()


def _setup_executables() -> set[str]:
    return set(CONSOLE_SCRIPT.findall((PACKAGE_ROOT / 'setup.py').read_text()))


def _check_ros_args(words: list[str]) -> list[str]:
    errors = []
    k = 0
    while k < len(words):
        flag = words[k]
        value = words[k + 1] if k + 1 < len(words) else None
        if flag in ('-p', '--param', '-r', '--remap'):
            if value is None or not re.fullmatch(r'[\w./~-]+:=\S.*', value):
                errors.append('%s needs name:=value, got %r' % (flag, value))
            elif '$(' in value:
                errors.append('%s %s: a command substitution in a parameter (a URDF does '
                              'not survive a -p rule: use a parameter file)' % (flag, value))
        elif flag == '--params-file':
            if value is None or not (REPO_ROOT / value).is_file():
                errors.append('--params-file %s: no such file relative to the repository '
                              'root' % value)
        elif flag == '--log-level':
            pass
        else:
            errors.append('unknown --ros-args flag %r' % flag)
            k += 1
            continue
        k += 2
    return errors


def check_ros2_command(command: str) -> list[str]:
    """Return what is wrong with one documented ros2 command line (empty when fine)."""
    try:
        words = shlex.split(command, comments=True)
    except ValueError as error:
        return ['not valid shell: %s' % error]
    if len(words) < 2:
        return ['no verb']
    errors = []
    if any(w.endswith(':=') or w.endswith(":=''") or w.endswith(':=""') for w in words):
        errors.append('an empty value (ros2 launch rejects `name:=`)')
    verb = words[1]
    if verb == 'launch':
        if len(words) < 4 or words[2] != 'manip_dynamics':
            return errors + ['expected ros2 launch manip_dynamics <file>']
        launch_file = PACKAGE_ROOT / 'launch' / words[3]
        if not launch_file.is_file():
            return errors + ['no launch file %s' % words[3]]
        declared = set(LAUNCH_ARGUMENT.findall(launch_file.read_text()))
        for argument in words[4:]:
            name, sep, value = argument.partition(':=')
            if not sep:
                errors.append('launch argument %r is not name:=value' % argument)
            elif name not in declared:
                errors.append('%s declares no argument %r (it has %s)' % (
                    words[3], name, sorted(declared)))
            elif not value:
                errors.append('argument %s is empty' % name)
    elif verb == 'run':
        if len(words) < 4:
            return errors + ['expected ros2 run <package> <executable>']
        package, executable = words[2], words[3]
        if package == 'manip_dynamics':
            if executable not in _setup_executables():
                errors.append('manip_dynamics has no executable %r' % executable)
        elif (package, executable) not in EXTERNAL_EXECUTABLES:
            errors.append('unknown executable %s %s' % (package, executable))
        rest = words[4:]
        if '--ros-args' in rest:  # program arguments before it, ROS arguments after it
            errors += _check_ros_args(rest[rest.index('--ros-args') + 1:])
        elif package == 'manip_dynamics' and executable != 'manip-dynamics' and rest:
            errors.append('node arguments must follow --ros-args, got %r' % rest[0])
    elif verb == 'service' and len(words) > 2 and words[2] == 'call':
        if len(words) < 5:
            return errors + ['expected ros2 service call <name> <type> <request>']
        name, srv_type, request = words[3], words[4], words[5] if len(words) > 5 else '{}'
        if not name.startswith('/'):
            errors.append('service name %r is not absolute' % name)
        package, _, type_name = srv_type.partition('/srv/')
        if package == 'manip_dynamics_interfaces':
            if not (REPO_ROOT / package / 'srv' / (type_name + '.srv')).is_file():
                errors.append('no service type %s' % srv_type)
        elif srv_type not in STD_SERVICES:
            errors.append('unknown service type %s' % srv_type)
        yaml = pytest.importorskip('yaml', reason='PyYAML not installed')
        try:
            if not isinstance(yaml.safe_load(request), dict):
                errors.append('the request is not a YAML mapping: %r' % request)
        except yaml.YAMLError as error:
            errors.append('the request is not YAML: %s' % error)
    elif tuple(words[1:3]) == ('param', 'set'):
        # only a tunable parameter of a node with a table can be set on the running node
        from manip_dynamics.ros.parameters import node_parameters, TABLES
        if len(words) != 6:
            return errors + ['expected ros2 param set <node> <name> <value>']
        node = TUNABLE_NODES.get(words[3].strip('/'))
        if node not in TABLES:
            return errors + ['%s has no parameter table' % words[3]]
        table = {param.name: param for param in node_parameters(node)}
        if words[4] not in table or not table[words[4]].tunable:
            errors.append('%s: %s is not a tunable parameter' % (words[3], words[4]))
    elif tuple(words[1:3]) not in READ_ONLY_VERBS | CONTROL_VERBS:
        errors.append('unknown ros2 verb %s' % ' '.join(words[1:3]))
    return errors


def test_docs_have_ros2_commands():
    assert len(ROS2_COMMANDS) >= 10, ROS2_COMMANDS


@pytest.mark.parametrize('where, command', ROS2_COMMANDS,
                         ids=['%s: %s' % (w, c[:60]) for w, c in ROS2_COMMANDS])
def test_ros2_command_line(where, command):
    errors = check_ros2_command(command)
    assert not errors, '%s: %r: %s' % (where, command, '; '.join(errors))


@pytest.mark.parametrize('command, problem', [
    ("ros2 launch manip_dynamics dynamics.launch.py urdf:=''", 'empty value'),
    ('ros2 launch manip_dynamics sim.launch.py gui:=false', 'declares no argument'),
    ('ros2 launch manip_dynamics nothing.launch.py', 'no launch file'),
    ('ros2 run manip_dynamics simulator_node --ros-args --params-file config/simulator.yaml '
     '-p robot_description:="$(cat manip_dynamics/urdf/cobot7.urdf)"', 'no such file'),
    ('ros2 run manip_dynamics simulator_node --ros-args -p robot_description:="$(cat x)"',
     'command substitution'),
    ('ros2 run manip_dynamics simulator_node --ros-args -p rate', 'name:=value'),
    ('ros2 service call /x manip_dynamics_interfaces/srv/Nothing "{}"', 'no service type'),
    ('ros2 service call /x std_srvs/srv/Trigger "{a: [}"', 'not YAML'),
])
def test_ros2_command_checker_rejects(command, problem):
    """The checker finds the defects a review once reported (the checker's own test)."""
    assert any(problem in error for error in check_ros2_command(command)), (
        check_ros2_command(command))
