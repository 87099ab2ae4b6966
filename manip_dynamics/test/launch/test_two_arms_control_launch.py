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
Two arms through two ``ros2 launch manip_dynamics control.launch.py``, one namespace each.

cobot7 with ``namespace:=arm1`` and puma560 with ``namespace:=arm2``, every other argument
the launch's default but RViz and robot_state_publisher (no display here): each launch runs
its own real controller_manager, topic-based hardware, simulator, gravity compensation,
feedforward filter and observer. Checked, as the stand-in test
(test/integration/test_two_arms_namespaced.py) checks it in CI: each namespace carries its
own joints only; both arms held still over ``HOLD`` s (within 1 mrad, and no protective stop
in either log: braked joints do not move either, so "held" alone would say nothing); a push
on one arm's tool flagged by that arm's observer and by none of the other's, arm 1 then
arm 2, flags told apart by their stamps (controller_manager's system clock, which this test
reads too). A plain pytest module: it skips with the reason where ``ros2 launch`` or the
ros2_control packages are missing (CI: none of them is on PyPI).
"""

import os

from launch_support import (CHAIN_ARGUMENTS, CHAIN_STARTUP, launched_control, log_text,
                            ros2_control_missing, ros2_launch_missing, wait_for_bringup)
import numpy as np
import pytest
from ros_test_support import spun_node, wait_until

pytestmark = [pytest.mark.rostest, pytest.mark.slow, pytest.mark.launch_test,
              pytest.mark.realtime]

REASON = ros2_launch_missing() or ros2_control_missing()
if REASON:
    pytest.skip(REASON, allow_module_level=True)

import time  # noqa: E402, I100

from arm_watch import ArmWatch, push_in_turn  # noqa: E402, I100

from manip_dynamics import RobotModel  # noqa: E402, I100
from manip_dynamics.bundled import urdf_path  # noqa: E402

#: (namespace, bundled arm, the link pushed)
ARMS = (('arm1', 'cobot7', 'tool0'), ('arm2', 'puma560', 'puma560_flange'))
#: Launch arguments added to both launches (MANIP_DYNAMICS_TWO_ARMS_ARGUMENTS, space
#: separated; none by default: the launch's defaults).
EXTRA = tuple(os.environ.get('MANIP_DYNAMICS_TWO_ARMS_ARGUMENTS', '').split())
#: How long both arms are watched at hold [s] (MANIP_DYNAMICS_TWO_ARMS_HOLD overrides it for
#: a shorter look), and the largest motion allowed there [rad].
HOLD = float(os.environ.get('MANIP_DYNAMICS_TWO_ARMS_HOLD', '60'))
HELD = 1e-3
PUSH_FORCE = 15.0
PUSH_TIME = 0.3
#: A push's flags are stamped within this long after the service's answer [s] (the push and
#: the arm swinging under the compensation after it, as in the stand-in test).
PUSH_WINDOW = PUSH_TIME + 3.0
#: Log lines that mean a simulator's brakes took its arm, or a node stopped commanding it.
TROUBLE = ('protective stop', 's old (timeout', 'stopped gravity compensation')


@pytest.fixture()
def two_launches(tmp_path):
    """Both launches, each with its log; stopped (SIGINT) at the end."""
    launches = []
    generators = []
    try:
        for namespace, robot, _ in ARMS:
            generator = launched_control(str(tmp_path / ('%s.log' % namespace)), (
                *CHAIN_ARGUMENTS, *EXTRA, 'namespace:=%s' % namespace, 'robot:=%s' % robot))
            launches.append(next(generator))
            generators.append(generator)
        yield dict(zip((ns for ns, _, _ in ARMS), launches))
    finally:
        for generator in reversed(generators):
            generator.close()


def test_two_namespaced_launches_hold_and_flag_only_the_pushed_arm(two_launches):
    with spun_node('two_launches_probe') as probe:
        watches = {ns: ArmWatch(probe, ns) for ns, _, _ in ARMS}
        for namespace, robot, _ in ARMS:
            proc, log = two_launches[namespace]
            wait_for_bringup(probe, proc, log, CHAIN_STARTUP, namespace=namespace)
            watch = watches[namespace]
            wait_until(lambda: watch.states and watch.contacts, 30.0,
                       '%s: no joint states or no observer output' % namespace)
            with open(urdf_path(robot), encoding='utf-8') as stream:
                joints = RobotModel.from_urdf_string(stream.read()).joint_names
            assert sorted(watch.names) == sorted(joints), (namespace, watch.names)
        time.sleep(2.0)   # the brake release and the switch settle
        seen = {ns: len(log_text(two_launches[ns][1])) for ns, _, _ in ARMS}
        start = time.monotonic()
        time.sleep(HOLD)
        for namespace, _, _ in ARMS:
            qs = watches[namespace].positions_since(start)
            assert len(qs) > HOLD * 50, '%s: %d states in %g s' % (namespace, len(qs), HOLD)
            drift = float(np.max(np.ptp(qs, axis=0)))
            print('%s: largest motion at hold %.4f mrad over %d states' % (
                namespace, drift * 1e3, len(qs)))
            assert drift <= HELD, '%s moved %.3g rad at hold' % (namespace, drift)
            assert not watches[namespace].flagged_since(start), \
                '%s flagged a contact at hold' % namespace
            trouble = [line for line in log_text(two_launches[namespace][1])[
                seen[namespace]:].splitlines() if any(word in line for word in TROUBLE)]
            assert not trouble, '%s at hold: %s' % (namespace, trouble[:5])
        push_in_turn(probe, watches, ARMS, PUSH_FORCE, PUSH_TIME, PUSH_WINDOW)
