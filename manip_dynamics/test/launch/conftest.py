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
Skip the launch_testing modules of this folder where pytest runs without that plugin.

A module with ``generate_test_description()`` is a launch_testing test: only the
launch_testing pytest plugin (or the ``launch_test`` command) starts its launch before its
test cases. The plugin of Jazzy's launch_testing cannot be loaded by pytest 9
(``PluginValidationError ... pytest_pycollect_makemodule``, upstream ros2/launch#979), so
``scripts/test.sh`` switches it off there (``-p no:launch_testing``); the cases would
otherwise run without their launch. They are skipped then, with the way to run them.
Plain pytest modules here (test_launch_processes.py) are not affected.
"""

import pytest

HOW = ('launch_testing test: run it with `launch_test <file>` or with pytest < 9, where the '
       'launch_testing pytest plugin loads (scripts/test_launch.sh does the first)')


def pytest_collection_modifyitems(config, items):
    """Mark the items of launch_testing modules skipped when the plugin is not active."""
    if config.pluginmanager.hasplugin('launch_testing'):
        return
    for item in items:
        module = getattr(item, 'module', None)
        if module is not None and hasattr(module, 'generate_test_description'):
            item.add_marker(pytest.mark.skip(reason=HOW))


@pytest.fixture()
def chain_launched(tmp_path):
    """``ros2 launch manip_dynamics control.launch.py`` as the chain's launch tests run it."""
    from launch_support import CHAIN_ARGUMENTS, launched_control
    yield from launched_control(str(tmp_path / 'launch.log'), CHAIN_ARGUMENTS)
