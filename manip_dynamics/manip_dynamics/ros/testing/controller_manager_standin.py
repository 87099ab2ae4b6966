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
A controller_manager stand-in for tests and CI: test support, not a product.

It has the timing structure of controller_manager's ros2_control_node with
topic_based_ros2_control's TopicBasedSystem, joint_state_broadcaster and a forward effort
controller (JointGroupEffortController), which CI cannot build (docs/ROS2_CONTROL.md names
the real ones and the versions checked by hand). One update loop at ``update_rate`` on the
steady clock does, every cycle, what controller_manager's ``read() / update() / write()``
does:

* **read**: the newest sample the hardware (the simulator, on ``hardware_states_topic``)
  published; none new since the last cycle: the old one again (TopicBasedSystem keeps the
  last message it received);
* **update**: joint_state_broadcaster publishes it on ``joint_states_topic`` stamped with
  the *update time* (this node's clock: ``use_sim_time`` makes it the simulator's /clock;
  never before the sample's own stamp, which /clock may lag), not the time the sample was
  taken, with position, velocity and the hardware's effort state; the effort controller's
  command interfaces take the newest message on ``commands_topic`` (zeros until one came);
* **write**: that command goes to the hardware as sensor_msgs/JointState efforts on
  ``hardware_commands_topic``.

So a command acts at the next update at the earliest, a state is seen an update after it
was taken, and duplicates appear whenever the hardware is slower than the loop, as behind
the real controller_manager. ``jitter`` varies each period uniformly by up to that fraction,
``skip_probability`` skips whole cycles (no read, no publish, no write), and ``busy_core``
starts a busy loop pinned to that core for the node's lifetime (a loaded machine).

With ``cosimulation`` the hardware is a simulator in lockstep (the simulator node's
``lockstep``, ``publish_rate`` equal to ``update_rate``), as a hardware interface that
wraps a simulator runs it (gz_ros2_control, mujoco_ros2_control): each update's read waits
for the sample that answers the previous write (up to ``cosimulation_timeout`` of wall
time; none by then: the update is late, nothing is published and the held command is
written again), and the update time is that sample's own (simulated) stamp. Every read is
then a new sample taken one period after the last, as on a real arm whose driver samples
it in the update: what DDS latency and the machine's load still change is when a
controller's command arrives, so whether it acts one update after the state it answers or
later; jitter changes the wall-clock pacing only. A skipped cycle there is one the hardware
ran through on the held command unobserved: its sample is read but not published, so the
next /joint_states comes two periods later.
"""

import os
import random
import subprocess
import sys
import threading
import time

import numpy as np
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from manip_dynamics.ros.runtime.node_runtime import GuardedNode, run_node
from manip_dynamics.ros.runtime.robot_description import (
    param_bool, param_float, param_string, param_strings, report_startup_error, STARTUP_ERRORS,
    StartupError)

#: Default node name.
NODE_NAME = 'controller_manager_standin'


class ControllerManagerStandin(GuardedNode):
    """The update loop of controller_manager + TopicBasedSystem (module docstring)."""

    def __init__(self, **kwargs) -> None:
        super().__init__(NODE_NAME, **kwargs)
        self.update_rate = param_float(self, 'update_rate', 250.0,
                                       'controller_manager update rate [Hz]', low=1.0,
                                       high=10000.0)
        self.jitter = param_float(self, 'jitter', 0.0, 'Each period varies uniformly by up '
                                  'to this fraction of it', low=0.0, high=0.9)
        self.skip_probability = param_float(self, 'skip_probability', 0.0, 'Probability '
                                            'that a cycle is skipped', low=0.0, high=0.5)
        self.seed = int(param_float(self, 'seed', 0.0, 'Seed of the jitter and the skips',
                                    low=0.0, high=2.0 ** 31))
        self.busy_core = int(param_float(self, 'busy_core', -1.0, 'Core a busy loop is '
                                         'pinned to while the node runs; -1: none',
                                         low=-1.0, high=1024.0))
        self.cosimulation = param_bool(self, 'cosimulation', False, 'The hardware is a '
                                       'simulator in lockstep: each read waits for the '
                                       'answer to the previous write, stamps are its own')
        self.cosimulation_timeout = param_float(
            self, 'cosimulation_timeout', 0.25, 'cosimulation: longest wait for the '
            "hardware's answer [s of wall time]", low=0.001, high=10.0)
        self.joints = param_strings(self, 'joints', 'Joints of the effort controller, in '
                                    'the order of its commands')
        if not self.joints:
            raise StartupError("parameter joints must name the controller's joints")
        topics = {}
        for name, default in (('hardware_states_topic', '/sim/joint_states'),
                              ('hardware_commands_topic', '/sim/joint_commands'),
                              ('joint_states_topic', '/joint_states'),
                              ('commands_topic', '/effort_controller/commands')):
            topics[name] = param_string(self, name, default, 'topic')
        self._lock = threading.Condition()
        self._sample: JointState | None = None
        self._fresh = False   # a sample came since the last update
        self._command = np.zeros(len(self.joints))
        self._written = np.zeros(len(self.joints))   # the command the hardware holds
        self.cycles = self.skipped = self.repeated = self.late = 0
        self._last_stamp = 0   # [ns]
        self.create_subscription(JointState, topics['hardware_states_topic'],
                                 self._hardware_state, 10)
        self.create_subscription(Float64MultiArray, topics['commands_topic'],
                                 self._controller_command, 10)
        self._states_pub = self.create_publisher(JointState, topics['joint_states_topic'], 10)
        self._hardware_pub = self.create_publisher(JointState,
                                                   topics['hardware_commands_topic'], 10)
        self._busy = None
        if self.busy_core >= 0:
            self._busy = subprocess.Popen(
                ['taskset', '-c', str(self.busy_core), sys.executable, '-c',
                 'while True: pass'], start_new_session=True)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()
        self.get_logger().info(
            'controller_manager stand-in: %g Hz%s, jitter %g, skip probability %g%s; %s -> '
            '%s, %s -> %s' % (
                self.update_rate, ', co-simulation' if self.cosimulation else '',
                self.jitter, self.skip_probability,
                ', busy loop on core %d' % self.busy_core if self._busy else '',
                topics['hardware_states_topic'], topics['joint_states_topic'],
                topics['commands_topic'], topics['hardware_commands_topic']))

    def _hardware_state(self, msg: JointState) -> None:
        with self._lock:
            self._sample = msg
            self._fresh = True
            self._lock.notify_all()

    def _controller_command(self, msg: Float64MultiArray) -> None:
        values = np.asarray(msg.data, dtype=np.float64)
        if values.shape == (len(self.joints),) and np.all(np.isfinite(values)):
            with self._lock:   # JointGroupEffortController: the newest message wins
                self._command = values

    def _loop(self) -> None:
        """Run the update loop: read, update (publish, take the command), write."""
        rng = random.Random(self.seed)
        period = 1.0 / self.update_rate
        wake = time.monotonic()
        while not self._stop.is_set():
            wake += period * (1.0 + self.jitter * rng.uniform(-1.0, 1.0))
            delay = wake - time.monotonic()
            if delay > 0.0:
                time.sleep(delay)
            else:
                wake = time.monotonic()   # late: no catch-up burst
            skip = rng.random() < self.skip_probability
            if self.cosimulation:
                self._cosimulation_update(skip)
            elif skip:
                self.skipped += 1
            else:
                self._update()

    def _update(self) -> None:
        with self._lock:
            sample, fresh, command = self._sample, self._fresh, self._command.copy()
            self._fresh = False
        self.cycles += 1
        if sample is not None:
            self.repeated += not fresh
            # the update time; with use_sim_time the /clock may lag the sample just read
            # (both come from the simulator, in either order): never before the sample
            # and, as a controller_manager's update times, strictly increasing
            now = self.get_clock().now().nanoseconds
            stamp = max(now, _stamp_ns(sample), self._last_stamp + 1)
            self._broadcast(sample, stamp)
        self._write(command)

    def _cosimulation_update(self, skip: bool) -> None:
        """One update with the hardware in lockstep (module docstring)."""
        deadline = time.monotonic() + self.cosimulation_timeout
        with self._lock:
            while not self._fresh:
                left = deadline - time.monotonic()
                if left <= 0.0:
                    break
                self._lock.wait(left)
            sample, fresh, command = self._sample, self._fresh, self._command.copy()
            self._fresh = False
        if not fresh:
            self.late += sample is not None   # before the first sample: starting
            self._write(self._written)
            return
        stamp = _stamp_ns(sample)
        if stamp <= self._last_stamp:
            # the hardware's clock went back (a simulator reset): its time is the truth
            self.get_logger().info('the hardware time went back from %.3f to %.3f s' % (
                self._last_stamp * 1e-9, stamp * 1e-9))
        self._last_stamp = stamp
        if skip:   # the hardware ran on the held command; nobody read it
            self.skipped += 1
            self._write(self._written)
            return
        self.cycles += 1
        self._broadcast(sample, self._last_stamp)
        self._write(command)

    def _broadcast(self, sample: JointState, stamp: int) -> None:
        """joint_state_broadcaster: publish the sample read, stamped ``stamp`` [ns]."""
        out = JointState(name=list(sample.name), position=list(sample.position),
                         velocity=list(sample.velocity), effort=list(sample.effort))
        out.header.stamp.sec, out.header.stamp.nanosec = divmod(stamp, 1_000_000_000)
        out.header.frame_id = sample.header.frame_id
        self._states_pub.publish(out)

    def _write(self, command: np.ndarray) -> None:
        """write(): the command to the hardware, which holds it until the next write."""
        self._written = command
        self._hardware_pub.publish(JointState(name=list(self.joints),
                                              effort=command.tolist()))

    def shutdown(self) -> None:
        """Stop the update loop and the busy loop."""
        self._stop.set()
        self._thread.join(timeout=2.0)
        if self._busy is not None:
            self._busy.kill()
            self._busy.wait()
        self.get_logger().info(
            'controller_manager stand-in: %d cycles, %d skipped, %d with the old sample '
            'again, %d late (no answer within cosimulation_timeout)'
            % (self.cycles, self.skipped, self.repeated, self.late))


def _stamp_ns(msg: JointState) -> int:
    """Return a message's header stamp [ns]."""
    return msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec


def main(args: list[str] | None = None) -> int:
    """Run the stand-in until SIGINT/SIGTERM."""
    return run_node(NODE_NAME, ControllerManagerStandin, args, STARTUP_ERRORS,
                    report_startup_error, before_destroy=lambda node: node.shutdown(),
                    prepare=False)


if __name__ == '__main__':
    os.environ.setdefault('PYTHONUNBUFFERED', '1')
    sys.exit(main())
