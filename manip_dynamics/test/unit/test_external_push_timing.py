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
simulator_node's timed pushes last their whole duration, whenever the call comes.

The service reads the step count while the simulation thread may be in a chunk of steps
(catching up, up to a quarter of a second of simulated time). A push dated from that count
lost what the chunk ran: by hand, 0.2 of a 0.3 s push, and the observer then had only 0.1 s
of it. Driven here without a ROS graph: a stand-in node object, the real
:class:`ExternalPushes`, and the simulator's side of it counted step by step.
"""

from types import SimpleNamespace

import numpy as np
import pytest
from ros_test_support import require_interfaces, require_rclpy, urdf_text

require_rclpy()
srv = require_interfaces()

from manip_dynamics import RobotModel  # noqa: E402
from manip_dynamics.ros.runtime.external_push import ExternalPushes  # noqa: E402

RATE = 1000.0


class _Node:
    """What ExternalPushes asks of a node: its service callback is kept, nothing else."""

    def __init__(self) -> None:
        self.service = None

    def create_service(self, _type, _name, callback):
        self.service = callback

    def create_subscription(self, *_args):
        return None

    def create_publisher(self, *_args):
        return SimpleNamespace(publish=lambda _msg: None)

    def get_logger(self):
        return SimpleNamespace(info=lambda _text: None, warning=lambda _text: None)

    def get_clock(self):
        return SimpleNamespace(now=lambda: SimpleNamespace(nanoseconds=0))


class _Sim:
    """The simulator's side: its model, pose and the wrenches put on it."""

    def __init__(self, model: RobotModel) -> None:
        self.model = model
        self.q = np.zeros(model.dof)
        self.wrenches = None

    def set_external_wrenches(self, wrenches) -> None:
        self.wrenches = wrenches


def _pushed_steps(taken_at: int, chunk_running_to: int, duration: float) -> list[int]:
    """Return the steps with a wrench on: the call at ``taken_at``, the next chunk's start."""
    model = RobotModel.from_urdf_string(urdf_text('cobot7'))
    sim = _Sim(model)
    state = {'steps': taken_at}
    node = _Node()
    pushes = ExternalPushes(node, lambda: (model, sim, state['steps']), RATE)
    request = srv.ApplyWrench.Request(link='cobot7_link7', frame='world', duration=duration)
    request.wrench.force.x = 15.0
    answer = node.service(request, srv.ApplyWrench.Response())
    assert answer.success, answer.message
    pushed = []
    steps = chunk_running_to   # the chunk in flight when the call came has run to here
    while steps < chunk_running_to + 2 * int(duration * RATE):
        chunk = pushes.before_steps(sim, steps, 50)
        if sim.wrenches:
            pushed.extend(range(steps, steps + chunk))
        steps += chunk
    return pushed


@pytest.mark.parametrize('in_flight', [0, 1, 200, 299, 400])
def test_a_push_lasts_its_duration_from_the_next_step(in_flight):
    """0.3 s = 300 steps, contiguous, from the first step run after the call."""
    pushed = _pushed_steps(1000, 1000 + in_flight, 0.3)
    assert len(pushed) == 300, (in_flight, len(pushed))
    assert pushed[0] == 1000 + in_flight
    assert pushed == list(range(pushed[0], pushed[0] + 300))
