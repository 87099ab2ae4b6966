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
The ``manip-dynamics`` command-line tool: the dynamics library at a shell prompt.

Runs without ROS.  Every subcommand takes a URDF file, a xacro file or the name of a bundled
robot, and prints an aligned table with units or, with ``--json``, one JSON document.
Exit codes: 0 success, 1 ``check`` found an error, 2 bad usage or bad input (one line on
stderr, ``manip-dynamics: error: ...``), 3 an unexpected internal error, 130 interrupted.
Tracebacks are printed only with ``--debug``.  See docs/CLI.md.

Layout (docs/ARCHITECTURE.md): :mod:`.common` (exit codes, errors, value parsing, model
loading) at the bottom; one module per subcommand group above it (:mod:`.dynamics`,
:mod:`.simulate`, :mod:`.tools`, :mod:`.view`, :mod:`.identify`, with :mod:`.formatting` and
:mod:`.plots` for output); :mod:`.main` (the parser) on top.
"""

from manip_dynamics.cli.main import build_parser, main

__all__ = ['build_parser', 'main']
