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
Style check with flake8 and the plugins ament_flake8 uses, configured by setup.cfg.

Runs the PyPI flake8 (no ament_flake8 needed) over every Python file of the package.
"""

import importlib.util
import os
import subprocess
import sys

import pytest

PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.linter
def test_flake8() -> None:
    """Check every Python file of the package against the ROS flake8 rules."""
    if importlib.util.find_spec('flake8') is None:
        pytest.skip('flake8 not installed')
    result = subprocess.run(
        [sys.executable, '-m', 'flake8', '--config', os.path.join(PACKAGE_ROOT, 'setup.cfg'),
         '.'],
        cwd=PACKAGE_ROOT, capture_output=True, text=True, timeout=600, check=False)
    report = (result.stdout + result.stderr).strip()
    assert result.returncode == 0, 'flake8 found style errors:\n' + report
