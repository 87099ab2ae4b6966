#!/usr/bin/env python3
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
The observer on an arm that is not its model, moving undisturbed: false contacts per model.

Takes the folder ``scripts/identify_mujoco_arm.py`` wrote (the true MuJoCo arm, the
identified URDF and joint_dynamics file) and, for the description and for the identified
model in turn: simulator_node (``engine: mujoco``, lockstep, /clock) as the arm,
trajectory_controller and external_torque_observer (their config/ files, the story's
parameters, and the observer's ``stiction`` as the launch files set it on MuJoCo) with that
model, and ``--moves`` plans of 2 s each to seeded targets within 0.3 rad of the start pose.
Nothing touches the arm, so every contact flag is a false one; after one, ``~/resume`` lets
the next plan run. Prints, per model, the moves with a false
contact (the flag up at any of their samples) and the largest normalised residual while
moving (1 = the threshold). Usage::

    python scripts/mujoco_moves.py --run out/identify_mujoco [--moves 20] [--seed 0]
        [--stiction true|false]
"""

import argparse
import os
import sys
import threading
import time

from identify_mujoco_arm import read_run   # beside this script
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), 'manip_dynamics'))

from manip_dynamics import RobotModel  # noqa: E402
from manip_dynamics.demo.scenario import config_parameters  # noqa: E402
from manip_dynamics.ros.runtime.discovery import apply_loopback_environment  # noqa: E402
from manip_dynamics.ros.runtime.node_process import (  # noqa: E402
    start_node, stop_node, wait_for_log)

MOVE_TIME = 2.0
SETTLE = 0.5


def stamp(msg) -> float:
    """Return a header stamp [s]."""
    return msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec


def run(label: str, xml: str, dynamics: dict, true_arm: str, start: np.ndarray,
        targets: list[np.ndarray], stiction: bool) -> dict:
    """Run the moves with one model (the observer's ``stiction`` given); return its figures."""
    import rclpy
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState
    from std_srvs.srv import Trigger
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    from manip_dynamics.ros.runtime.qos import CONTACT_QOS
    from manip_dynamics_interfaces.msg import Contact

    model = RobotModel.from_urdf_string(xml)
    common = {'robot_description': xml, **dynamics}
    procs = {}
    rclpy.init(args=[])
    node = rclpy.create_node('moves_' + label)
    lock = threading.Lock()
    states: list = []
    contacts: list = []
    node.create_subscription(JointState, '/joint_states',
                             lambda m: states.append((stamp(m), np.array(m.position))), 100)
    node.create_subscription(Contact, '/external_torque_observer/contact', lambda m: (
        lock.acquire(), contacts.append((stamp(m), bool(m.contact),
                                         float(m.strongest_normalized_residual))),
        lock.release()), CONTACT_QOS)
    plan = node.create_publisher(JointTrajectory, '/trajectory_controller/joint_trajectory',
                                 QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE))
    resume = node.create_client(Trigger, '/trajectory_controller/resume')
    spinner = threading.Thread(target=rclpy.spin, args=(node,), daemon=True)
    spinner.start()
    try:
        procs['observer'] = start_node('external_torque_observer', 'external_torque_observer',
                                       {**config_parameters('external_torque_observer'),
                                        **common, 'stiction': stiction})
        wait_for_log(procs['observer'], 'observer for', 120.0)
        procs['controller'] = start_node('trajectory_controller', 'trajectory_controller', {
            **config_parameters('trajectory_controller'), **common, 'timeout': 0.5})
        wait_for_log(procs['controller'], 'controlling joints', 120.0)
        procs['simulator'] = start_node('simulator_node', 'simulator', {
            'robot_description': xml, 'engine': 'mujoco', 'mujoco_model': true_arm,
            'lockstep': True, 'publish_clock': True, 'command_timeout': 0.5,
            'initial_positions': [float(v) for v in start]})
        wait_for_log(procs['simulator'], 'brakes released', 60.0)
        while plan.get_subscription_count() == 0:
            time.sleep(0.05)
        time.sleep(1.0)
        windows, current = [], start
        for target in targets:
            now = states[-1][0]
            msg = JointTrajectory(joint_names=list(model.joint_names))
            for seconds, q in ((0.0, current), (MOVE_TIME, target)):
                point = JointTrajectoryPoint(positions=[float(v) for v in q],
                                             velocities=[0.0] * model.dof)
                point.time_from_start.sec = int(seconds)
                msg.points.append(point)
            plan.publish(msg)
            deadline = time.monotonic() + 60.0
            while states[-1][0] < now + MOVE_TIME + SETTLE and time.monotonic() < deadline:
                time.sleep(0.02)
            windows.append((now, now + MOVE_TIME + SETTLE))
            with lock:
                flagged = any(f for t, f, _ in contacts if now <= t)
            if flagged:
                future = resume.call_async(Trigger.Request())
                while not future.done() and time.monotonic() < deadline:
                    time.sleep(0.02)
            current = states[-1][1]
    finally:
        for proc in procs.values():
            stop_node(proc)
        node.destroy_node()
        rclpy.try_shutdown()
    with lock:
        seen = list(contacts)
    flagged = [t for t, f, _ in seen if f]
    moving = [(t, r) for t, _, r in seen if any(a <= t <= b for a, b in windows)]
    return {'model': label, 'moves': len(targets),
            # a move with the flag up at any sample of it (raised then, or still up)
            'moves_with_a_false_contact': sum(any(a <= t <= b for t in flagged)
                                              for a, b in windows),
            'largest_residual_moving': round(max(r for _, r in moving), 3) if moving else None}


def main(argv: list[str] | None = None) -> int:
    """Run both models; print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[1])
    parser.add_argument('--run', required=True, help='folder identify_mujoco_arm.py wrote')
    parser.add_argument('--moves', type=int, default=20, help='plans per model (20)')
    parser.add_argument('--seed', type=int, default=0, help='seed of the targets (0)')
    parser.add_argument('--stiction', choices=('true', 'false'), default='true',
                        help="the observer's stiction (true: as the launch files run it on "
                             'MuJoCo, whose dry friction sticks)')
    args = parser.parse_args(argv)
    apply_loopback_environment()
    found = read_run(args.run)
    start, described, identified = found['start'], found['described'], found['identified']
    model = RobotModel.from_urdf_string(described)
    rng = np.random.default_rng(args.seed)
    lower = model.position_lower + 0.05
    upper = model.position_upper - 0.05
    targets = [np.clip(start + rng.uniform(-0.3, 0.3, model.dof), lower, upper)
               for _ in range(args.moves)]
    for label, xml, extra in (('described', described, {}),
                              ('identified', identified, found['dynamics'])):
        print(run(label, xml, extra, found['true_arm'], start, targets,
                  args.stiction == 'true'), flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
