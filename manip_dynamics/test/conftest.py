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
Pytest configuration shared by every test of manip_dynamics.

Keeps ROS traffic on this machine and on a test-own DDS domain, and makes the package
sources importable when the tests run from a source checkout.
"""

import os
import sys
import tempfile

import pytest

# Test the sources next to this folder, not a stale installed copy.
PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if PACKAGE_ROOT not in sys.path:
    sys.path.insert(0, PACKAGE_ROOT)

# Loopback-only discovery (Jazzy and newer: the discovery range alone; Humble:
# ROS_LOCALHOST_ONLY) and a domain of our own, so tests neither send packets out of the
# machine nor see other ROS graphs. Set before any test module imports rclpy.
# MANIP_DYNAMICS_TEST_DOMAIN_ID overrides the domain, e.g. to run two test sessions side by
# side. Under pytest-xdist (scripts/test.sh runs the tests that are not `realtime` in one
# worker per core) each worker takes the next domain of its own, so two workers' nodes of the same
# name never meet.
from manip_dynamics.ros.runtime.discovery import apply_loopback_environment  # noqa: E402


def _test_domain() -> str:
    base = int(os.environ.get('MANIP_DYNAMICS_TEST_DOMAIN_ID', '87'))
    worker = os.environ.get('PYTEST_XDIST_WORKER', '')
    if not worker.startswith('gw'):
        return str(base)
    index = int(worker[2:]) + 1
    # 101 is the largest domain whose ports fit Linux's default range
    return str(base + index if base + index <= 101 else base - index)


apply_loopback_environment()
os.environ['ROS_DOMAIN_ID'] = _test_domain()


@pytest.fixture(scope='session', autouse=True)
def _temporary_files_under_pytest_basetemp(tmp_path_factory):
    """
    Make the temporary folders of this session (node logs and parameter files) pytest's.

    ``start_node`` and the tests put each node's log in a new temporary folder; under
    pytest's base folder those are kept for the last three sessions and then removed,
    instead of piling up in /tmp.
    """
    folder = str(tmp_path_factory.mktemp('tmp'))
    previous = tempfile.tempdir
    tempfile.tempdir = folder
    yield folder
    tempfile.tempdir = previous


@pytest.fixture(scope='session')
def cobot7_xml() -> str:
    """Return the bundled cobot7's URDF text (read once per session)."""
    from ros_test_support import urdf_text
    return urdf_text('cobot7')
