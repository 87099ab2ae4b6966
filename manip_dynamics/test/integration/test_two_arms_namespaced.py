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
Two arms in one ROS graph, each in its own namespace, behind the controller_manager stand-in.

cobot7 in ``/arm1`` and puma560 in ``/arm2``, each: simulator_node as the hardware behind the
stand-in (states on ``sim/joint_states``, commands on ``sim/joint_commands``), the stand-in
publishing ``joint_states`` and taking ``effort_controller/commands``, gravity_compensation_node
holding the arm and external_torque_observer; every node started with its default (relative)
names and only ``-r __ns:=/armN``, so the namespace alone separates the two graphs. Checked:
each arm publishes its own joints on its own ``joint_states``; both are held still (within
1 mrad over the hold); a push on one arm's tool is flagged by that arm's observer and by
none of the other's, arm 1 then arm 2. A flag is told apart by its stamp, not by when this
test received it: on a loaded machine the test's own node receives the contact messages up
to seconds late (a fresh-clone run saw arm 1's second rise during its push arrive after arm
2 had been pushed). The stamps are the stand-in's joint-state stamps, the system clock this
test reads too (not the simulator's own time: 1.3 to 1.9 s behind it with a busy core), so a
push's window runs from the request to the answer plus PUSH_WINDOW.
"""

import time

import numpy as np
import pytest
from ros_test_support import (read_log, require_interfaces, require_rclpy, spun_node,
                              STARTUP_TIMEOUT, urdf_text, wait_until)

rclpy = require_rclpy()
require_interfaces()

from arm_watch import ArmWatch, push_in_turn  # noqa: E402, I100

from manip_dynamics import RobotModel  # noqa: E402, I100
from manip_dynamics.demo.scenario import config_parameters  # noqa: E402
from manip_dynamics.ros.runtime.node_process import start_node, stop_node  # noqa: E402

pytestmark = [pytest.mark.rostest, pytest.mark.slow, pytest.mark.realtime]

#: (namespace, bundled arm, the link pushed)
ARMS = (('arm1', 'cobot7', 'tool0'), ('arm2', 'puma560', 'puma560_flange'))
#: Joint-state rate of the stand-in (its update rate) and of the simulator [Hz].
RATE = 250.0
TIMEOUT = 0.5
#: How long both arms are watched at hold [s], and the largest motion allowed there [rad].
HOLD = 8.0
HELD = 1e-3
PUSH_FORCE = 15.0
PUSH_TIME = 0.3
#: A push's flags are stamped within this long after the answer [s]: the push, the arm
#: swinging free after it (only gravity compensation holds it; with a busy core its flag
#: stayed up to 1.4 s after the answer in 1 of 11 runs) and the chain's lag.
PUSH_WINDOW = PUSH_TIME + 3.0


def start_arm(namespace: str, xml: str, joints: list, log_dir) -> dict:
    """Start one arm's processes in ``namespace``; return them by name."""
    ns = ('__ns:=/%s' % namespace,)
    common = {'robot_description': xml}
    procs = {}

    def start(module, name, params, remaps=()):
        procs[name] = start_node(module, name, params, remaps=ns + tuple(remaps),
                                 log_dir=str(log_dir / namespace))
    (log_dir / namespace).mkdir()
    # the hardware: its states to the stand-in only, commands from the stand-in only
    start('simulator_node', 'simulator', {
        **common, 'publish_clock': False, 'lockstep': False, 'controller_commands': False,
        'joint_commands_topic': 'sim/joint_commands', 'brake_release': 'holding_command',
        'publish_rate': RATE, 'command_timeout': TIMEOUT}, ('joint_states:=sim/joint_states',))
    start('testing.controller_manager_standin', 'controller_manager', {
        'update_rate': RATE, 'joints': joints, 'cosimulation': False,
        'jitter': 0.0, 'skip_probability': 0.0})
    start('gravity_compensation_node', 'gravity_compensation', {
        **common, 'ramp_time': 0.0, 'timeout': TIMEOUT})
    start('external_torque_observer', 'external_torque_observer', {
        **common, **config_parameters('external_torque_observer')})
    return procs


def test_two_namespaced_arms_are_held_and_pushed_apart(tmp_path):
    procs = {}
    with spun_node('two_arms_probe') as probe:
        watches = {ns: ArmWatch(probe, ns) for ns, _, _ in ARMS}
        try:
            joints = {}
            for namespace, robot, _ in ARMS:
                xml = urdf_text(robot)
                joints[namespace] = list(RobotModel.from_urdf_string(xml).joint_names)
                for name, proc in start_arm(namespace, xml, joints[namespace],
                                            tmp_path).items():
                    procs[namespace + '/' + name] = proc
            for namespace, _, _ in ARMS:
                simulator = procs[namespace + '/simulator']
                wait_until(lambda: 'brakes released' in read_log(simulator),
                           STARTUP_TIMEOUT, '%s: the compensation never held the arm: %s' % (
                               namespace, read_log(simulator)[-2000:]))
                watch = watches[namespace]
                wait_until(lambda: watch.states and watch.contacts, 30.0,
                           '%s: no joint states or no observer output' % namespace)
                # each namespace carries its own arm: the other's joints never appear
                assert sorted(watch.names) == sorted(joints[namespace]), watch.names
            time.sleep(1.0)   # the brake release settles
            start = time.monotonic()
            time.sleep(HOLD)
            for namespace, _, _ in ARMS:
                qs = watches[namespace].positions_since(start)
                assert len(qs) > HOLD * RATE / 4, '%s: %d states in %g s' % (
                    namespace, len(qs), HOLD)
                drift = np.max(np.ptp(qs, axis=0))
                assert drift <= HELD, '%s moved %.3g rad at hold' % (namespace, drift)
                assert not watches[namespace].flagged_since(start), \
                    '%s flagged a contact at hold' % namespace
            push_in_turn(probe, watches, ARMS, PUSH_FORCE, PUSH_TIME, PUSH_WINDOW)
        finally:
            for proc in procs.values():
                stop_node(proc)
