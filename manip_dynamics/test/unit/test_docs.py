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
    env['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    env['ROS_LOCALHOST_ONLY'] = '1'
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
