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

"""manip_dynamics.identification.excitation: the excitation trajectory's documents."""


def test_excitation_times_never_go_back_at_a_second_boundary():
    from manip_dynamics.identification.excitation import _duration
    for seconds in (2.9999999999, 0.99999999995, 5.0, 1.25):
        d = _duration(seconds)
        assert 0 <= d['nanosec'] < 1_000_000_000
        assert abs(d['sec'] + 1e-9 * d['nanosec'] - seconds) <= 1e-9
