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
manip_dynamics.demo.run_demo.story_failures: the checks scripts/demo_runs.sh applies to each
run of the story (docs/SIMULATOR.md's, and no joint above its velocity limit).
"""

import pytest

from manip_dynamics.demo.run_demo import (
    latency_summary, parse_args, story_failures, story_latencies)


def test_story_function_finds_each_kind_of_trouble():
    good = ('pushes 4, flagged 4 (latency p50 16 ms, max 16 ms) | rejected samples 0 | back '
            'within 5 mrad of the hold pose 2/2 (worst 0.21 s) | resumed 2/2 | false contacts '
            '0 | zero-torque samples 0 | overspeed samples 0 | trouble log lines 0')
    assert story_failures(good) == []
    for old, new in (('flagged 4', 'flagged 3'), ('rejected samples 0', 'rejected samples 2'),
                     ('pose 2/2', 'pose 1/2'), ('resumed 2/2', 'resumed 0/2'),
                     ('false contacts 0', 'false contacts 1'),
                     ('zero-torque samples 0', 'zero-torque samples 5'),
                     ('overspeed samples 0', 'overspeed samples 1')):
        assert len(story_failures(good.replace(old, new))) == 1, new
    assert story_failures('run_demo: stopping') != []


def test_latencies_pooled_over_runs_nearest_rank():
    line = 'pushes 4, flagged 4 (latency p50 16 ms, max 40 ms, each %s ms; down p50 92 ms'
    lines = [line % ' '.join(str(v) for v in range(k, k + 10)) for k in (1, 11)]
    assert story_latencies(lines[0]) == [float(v) for v in range(1, 11)]
    # 1 ... 20 ms: nearest rank p50 = 10th value, p95 = 19th value
    assert latency_summary(lines) == ('20 pushes flagged: latency p50 10 ms, p95 19 ms, '
                                      'max 20 ms')
    assert story_latencies('pushes 0, flagged 0 (latency p50 - ms, max - ms, each - ms;') == []
    assert latency_summary([]) == 'no push flagged'


def test_the_story_runs_on_either_arm():
    assert parse_args([]).hardware == 'simulator'
    args = parse_args(['--hardware', 'mujoco', '--mujoco-model', 'arm.xml'])
    assert (args.hardware, args.mujoco_model) == ('mujoco', 'arm.xml')
    with pytest.raises(SystemExit):
        parse_args(['--hardware', 'gazebo'])
