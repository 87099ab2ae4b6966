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
Check that every Python file of the package starts with the project's Apache-2.0 header.

The expected text is the one in docs/LICENSE_HEADER.txt: a copyright line naming the
manip_dynamics Authors, then the standard Apache License 2.0 notice.
"""

import os
import re

import pytest

PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXCLUDED_DIRS = {'build', 'install', 'log', '__pycache__', '.pytest_cache', '.hypothesis'}
COPYRIGHT_LINE = re.compile(r'^# Copyright (\d{4})(-\d{4})? The manip_dynamics Authors$')
LICENSE_LINES = [
    '#',
    '# Licensed under the Apache License, Version 2.0 (the "License");',
    '# you may not use this file except in compliance with the License.',
    '# You may obtain a copy of the License at',
    '#',
    '#     http://www.apache.org/licenses/LICENSE-2.0',
    '#',
    '# Unless required by applicable law or agreed to in writing, software',
    '# distributed under the License is distributed on an "AS IS" BASIS,',
    '# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.',
    '# See the License for the specific language governing permissions and',
    '# limitations under the License.',
]


def _python_files() -> list[str]:
    """
    List the Python files of the package.

    :return: Absolute paths, sorted.
    """
    found = []
    for folder, dirs, files in os.walk(PACKAGE_ROOT):
        dirs[:] = sorted(d for d in dirs if d not in EXCLUDED_DIRS and not d.startswith('.')
                         and not d.endswith('.egg-info'))
        found.extend(os.path.join(folder, name) for name in files if name.endswith('.py'))
    return sorted(found)


def header_problem(text: str) -> str | None:
    """
    Describe what is wrong with the licence header of a file's text.

    A leading shebang line and a coding line are allowed before the header.

    :param text: The whole content of a Python file.
    :return: None when the header is right, otherwise a one-line description.
    """
    lines = text.splitlines()
    while lines and (lines[0].startswith('#!') or re.match(r'^# .*coding[:=]', lines[0])):
        lines.pop(0)
    if not lines or not COPYRIGHT_LINE.match(lines[0]):
        return 'first line is not "# Copyright <year> The manip_dynamics Authors"'
    for offset, expected in enumerate(LICENSE_LINES, start=1):
        actual = lines[offset] if offset < len(lines) else '<end of file>'
        if actual.rstrip() != expected:
            return 'header line %d is %r, expected %r' % (offset + 1, actual, expected)
    return None


def test_header_problem_detects_missing_and_altered_headers() -> None:
    """Check the checker itself on a good header, a missing one and an altered one."""
    good = '\n'.join(['# Copyright 2026 The manip_dynamics Authors'] + LICENSE_LINES) + '\n'
    assert header_problem(good) is None
    assert header_problem('#!/usr/bin/env python3\n' + good) is None
    assert header_problem('"""No header."""\n') is not None
    assert header_problem(good.replace('Version 2.0', 'Version 3.0')) is not None
    assert header_problem(good.replace('manip_dynamics Authors', 'Someone Else')) is not None


@pytest.mark.linter
def test_copyright() -> None:
    """Check the header of every non-empty Python file of the package."""
    files = _python_files()
    assert files, 'no Python files found under ' + PACKAGE_ROOT
    problems = []
    for path in files:
        with open(path, encoding='utf-8') as stream:
            text = stream.read()
        if not text.strip():
            continue  # an empty __init__.py carries no code, hence no licence header
        problem = header_problem(text)
        if problem is not None:
            problems.append('%s: %s' % (os.path.relpath(path, PACKAGE_ROOT), problem))
    assert not problems, 'files without the Apache-2.0 header:\n' + '\n'.join(problems)
