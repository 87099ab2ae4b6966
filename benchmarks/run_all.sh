#!/usr/bin/env bash
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

# Run every benchmark and write its section of docs/BENCHMARKS.md.
#   benchmarks/run_all.sh            full runs (a few minutes)
#   benchmarks/run_all.sh --quick    smoke runs
# Each benchmark replaces only its own marked block of docs/BENCHMARKS.md.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${REPO}"
# shellcheck source=scripts/env.sh
source scripts/env.sh

python benchmarks/core_benchmark.py --output docs/BENCHMARKS.md "$@"
python benchmarks/forward_dynamics_methods.py --output docs/BENCHMARKS.md "$@"
python benchmarks/parity_benchmark.py --output docs/BENCHMARKS.md "$@"
python benchmarks/ros_benchmark.py --output docs/BENCHMARKS.md "$@"
python benchmarks/observer_benchmark.py --output docs/BENCHMARKS.md "$@"
python benchmarks/retiming_benchmark.py --output docs/BENCHMARKS.md "$@"
python benchmarks/compile_benchmark.py --node --output docs/BENCHMARKS.md "$@"
python benchmarks/gc_pause_benchmark.py --output docs/BENCHMARKS.md
python benchmarks/mujoco_arm_benchmark.py --output docs/BENCHMARKS.md
