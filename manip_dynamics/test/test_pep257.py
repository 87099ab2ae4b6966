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
Docstring style check with pydocstyle, using the rules of ament_pep257.

ament_pep257 checks every pydocstyle error except D100-D107 (missing docstrings), D203,
D212 and D404; so a multi-line summary goes on the second line (D213) and is in the
imperative mood (D401).
"""

import importlib.util
import os
import subprocess
import sys

import pytest

PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
IGNORED = 'D100,D101,D102,D103,D104,D105,D106,D107,D203,D212,D404'
EXCLUDED_DIRS = {'build', 'install', 'log', '__pycache__', '.pytest_cache', '.hypothesis'}


def _python_files() -> list[str]:
    """
    List the Python files of the package.

    :return: Paths relative to the package root, sorted.
    """
    found = []
    for folder, dirs, files in os.walk(PACKAGE_ROOT):
        dirs[:] = sorted(d for d in dirs if d not in EXCLUDED_DIRS and not d.startswith('.')
                         and not d.endswith('.egg-info'))
        found.extend(os.path.relpath(os.path.join(folder, name), PACKAGE_ROOT)
                     for name in files if name.endswith('.py'))
    return sorted(found)


@pytest.mark.linter
def test_pep257() -> None:
    """Check the docstrings of every Python file of the package."""
    if importlib.util.find_spec('pydocstyle') is None:
        pytest.skip('pydocstyle not installed')
    files = _python_files()
    assert files, 'no Python files found under ' + PACKAGE_ROOT
    result = subprocess.run(
        [sys.executable, '-m', 'pydocstyle', '--ignore=' + IGNORED, *files],
        cwd=PACKAGE_ROOT, capture_output=True, text=True, timeout=600, check=False)
    report = (result.stdout + result.stderr).strip()
    assert result.returncode == 0, 'pydocstyle found docstring errors:\n' + report
