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
The story ``make run`` tells (demo/run_demo.py): hold, push, detect, move, no false contact.

trajectory_controller (the suite's computed-torque node) is the arm's controller; the demo
has no control law of its own, it only tells the story and records it:

* **hold**: trajectory_controller holds the start pose;
* **push**: at ``PUSH_AT`` s of every cycle, ``~/apply_wrench`` on the simulator: 15 N along
  the root's y axis on the tool link for 1 s; external_torque_observer's estimate follows and
  its contact flag rises, although /joint_states' effort never shows the push;
* **move**: at ``MOVE_AT`` s, a JointTrajectory out and back sent to trajectory_controller's
  ``~/joint_trajectory``; ``MOVE_PUSH_AT`` s into the move a second push hits the arm: the
  observer flags the contact, the controller stops the trajectory and holds, and
  ``RESUME_AFTER`` s after the push ends the demo calls ``~/resume`` and the move
  completes. The plot shows the controller's tracking error.

The cycle repeats every ``PERIOD`` s of simulated time (a simulator reset starts it again).
:meth:`DemoScenario.status` is appended to the status line and :meth:`DemoScenario.plot`
draws the applied and estimated force and the contact flag under the joint positions.
"""

import math
import os
import threading
from typing import Any

import numpy as np

#: The cycle [s of simulated time]: hold, push, move (stopped by the second push), resume.
PERIOD = 11.0
MOVE_PUSH_AT = 0.7      # [s] into the move: the second push
RESUME_AFTER = 0.6      # [s] after that push ends: ~/resume
#: After a push at hold the arm must be back within HOLD_TOLERANCE of its hold pose within
#: HOLD_RETURN s of the push's end [rad, s].
HOLD_TOLERANCE = 0.005
HOLD_RETURN = 1.0
#: A contact flag raised later than this after a push's end is a false contact [s]; one
#: raised by the push stays the same detection until it goes down (its release is reported).
RAISE_AFTER = 0.2
PUSH_AT = 2.0
PUSH_FORCE = 15.0       # [N] along the root frame's y axis
PUSH_DURATION = 1.0     # [s]
MOVE_AT = 4.5
MOVE_LEG = 1.5          # [s] out, then back
MOVE_BY = np.array([0.6, 0.3, -0.4, 0.5, 0.6, -0.4, 0.8])  # [rad] (first joints of the arm)


def config_parameters(node: str) -> dict[str, Any]:
    """
    Return the parameters of ``node`` in its production file, config/<node>.yaml.

    ``node``: trajectory_controller or external_torque_observer; the launch files give those
    nodes the same files. Read from the source tree beside this package, else from the
    package's share directory (an install).
    """
    import yaml
    name = '%s.yaml' % node
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    path = os.path.join(here, 'config', name)
    if not os.path.isfile(path):
        from ament_index_python.packages import get_package_share_directory
        path = os.path.join(get_package_share_directory('manip_dynamics'), 'config', name)
    with open(path, encoding='utf-8') as stream:
        return dict(yaml.safe_load(stream)['/**']['ros__parameters'])


def first_within(stamps: list[float], times: list[float], window: float = 1.0) -> list[float]:
    """
    Return the delay [s] from each time to the first stamp within ``window`` after it.

    Times with no stamp in their window are left out.

    :param stamps: Stamps [s], any order.
    :param times: Reference times [s].
    :param window: How long after each time a stamp counts [s].
    """
    stamps = np.asarray(stamps, dtype=np.float64)
    delays = []
    for start in times:
        after = stamps[(stamps >= start) & (stamps < start + window)]
        if after.size:
            delays.append(float(after.min() - start))
    return delays


def quintic(t: float, duration: float) -> tuple[float, float, float]:
    """Return s, ds/dt, d2s/dt2 of the rest-to-rest quintic 10 x^3 - 15 x^4 + 6 x^5."""
    x = min(max(t / duration, 0.0), 1.0)
    return (10 * x ** 3 - 15 * x ** 4 + 6 * x ** 5,
            (30 * x ** 2 - 60 * x ** 3 + 30 * x ** 4) / duration,
            (60 * x - 180 * x ** 2 + 120 * x ** 3) / duration ** 2)


class DemoScenario:
    """Controller, pusher and recorder of the demo (see the module docstring)."""

    def __init__(self, model: Any) -> None:
        """
        Create the demo's node (spun on a thread of its own), topics and service clients.

        The first joint state gives the pose to hold (the simulator's start pose). The
        controller has its own executor so that it never waits behind the recording of
        other topics.

        :param model: The RobotModel of the simulated arm.
        """
        import rclpy
        from rclpy.executors import SingleThreadedExecutor
        from geometry_msgs.msg import WrenchStamped
        from sensor_msgs.msg import JointState
        from manip_dynamics.ros.runtime.qos import CONTACT_QOS, JOINT_STATES_QOS
        from manip_dynamics_interfaces.msg import Contact
        from manip_dynamics_interfaces.srv import ApplyWrench
        from std_srvs.srv import Trigger
        from trajectory_msgs.msg import JointTrajectory

        self.model = model
        self.node = node = rclpy.create_node('run_demo_scenario')
        self.executor = SingleThreadedExecutor()
        self.executor.add_node(node)
        self.tool = model.tip_link or model.link_names[-1]
        self.q_home: np.ndarray | None = None
        n = model.dof
        self.move_by = np.resize(MOVE_BY, n)
        self.lock = threading.Lock()
        self.t_last = -math.inf
        self.t_estimate = -math.inf
        self.cycle_start = 0.0
        self.pushed = False
        self.push_window: list[tuple[float, float]] = []
        self.contact = False
        self.strongest = ''
        self.estimate = np.zeros(6)
        self.samples: list[tuple[float, float, float, bool]] = []  # t, applied, estimated, c
        self.t_contact = -math.inf
        # no push before run_demo's start-up reset (start_story): when the controller's
        # first answers came late, the push of a story that the reset then cut short left
        # its contact flag in the new story
        self.story_started = False
        self.t_story = -math.inf   # contact flags count from this simulated time [s]
        self._ApplyWrench = ApplyWrench
        self.period = PERIOD
        # how long the moves last in each cycle [s] (the plot's shaded band): out and back,
        # and with trajectory_controller the pushed move's stop and resume
        self.move_band = 2 * MOVE_LEG + PUSH_DURATION + RESUME_AFTER
        self.moved = False
        self.move_pushed = False
        self.resume_at: float | None = None
        self.errors: list[tuple[float, float]] = []   # t, max |q_d - q| of the controller
        self.contact_stamps: list[float] = []   # stamps of contact messages with the flag
        self.contact_rises: list[float] = []    # stamps where the flag went up
        # (stamp, largest normalized residual) of every contact message of the story
        self.residuals: list[tuple[float, float]] = []
        self.contact_falls: list[float] = []    # stamps where the flag went down
        self.resumes = 0
        self.resume_attempts = 0
        # pushes at hold: [push end, time back within HOLD_TOLERANCE (None: not yet)]
        self.hold_returns: list[list] = []
        self.q_last: np.ndarray | None = None
        self._JointTrajectory = JointTrajectory
        self._Trigger = Trigger
        self.trajectory_pub = node.create_publisher(
            JointTrajectory, '/trajectory_controller/joint_trajectory', 10)
        self.resume_client = node.create_client(Trigger, '/trajectory_controller/resume')
        node.create_subscription(JointState, '/trajectory_controller/tracking_error',
                                 self.tracking_error_callback, 50)
        node.create_subscription(JointState, '/joint_states', self.joint_states_callback,
                                 JOINT_STATES_QOS)
        node.create_subscription(Contact, '/external_torque_observer/contact',
                                 self.contact_callback, CONTACT_QOS)
        node.create_subscription(WrenchStamped, '/external_torque_observer/external_wrench',
                                 self.wrench_callback, 50)
        self.push_client = node.create_client(ApplyWrench, '/simulator/apply_wrench')
        self.thread = threading.Thread(target=self.executor.spin, daemon=True)
        self.thread.start()

    def shutdown(self) -> None:
        """Stop the executor and destroy the node."""
        self.executor.shutdown()
        self.node.destroy_node()

    # ------------------------------------------------------------------ set-up
    def _reference(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Return q, qd, qdd of the move at ``t`` s after its start (out, then back)."""
        if t < MOVE_LEG:
            s, ds, dds = quintic(t, MOVE_LEG)
        else:
            s, ds, dds = quintic(t - MOVE_LEG, MOVE_LEG)
            s, ds, dds = 1.0 - s, -ds, -dds
        return self.q_home + self.move_by * s, self.move_by * ds, self.move_by * dds

    def start_story(self, t_from: float = -math.inf) -> None:
        """
        Allow the pushes: the simulator was reset with the controller engaged.

        :param t_from: Simulated time from which contact flags count [s]: the observer was
            restarted after the start-up reset (whose braked first step is an external
            torque to it); flags of samples before its restart had settled are not the
            story's.
        """
        with self.lock:
            self.t_story = t_from   # the story starts now: flags count from here
        self.story_started = True

    def contact_callback(self, msg) -> None:
        """
        Record the observer's contact flag: every flagged stamp, and where it rose and fell.

        The flag and its time come from the same message: pairing the flag with the time of
        a wrench message (another topic, processed in any order) counted a flag raised by
        the push before a simulator reset as false contacts after the reset.
        """
        t = msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec
        with self.lock:
            if t < self.t_contact - 1e-9:  # the simulator was reset: a new story
                self.contact_stamps.clear()
                self.contact_rises.clear()
                self.contact_falls.clear()
                self.residuals.clear()
            self.t_contact = t
            rose = bool(msg.contact) and not self.contact
            if self.story_started and t >= self.t_story:
                if msg.contact:
                    # every flagged stamp: a push's detection is the first one after its
                    # start, whenever the simulator's answer with the push's times arrives
                    self.contact_stamps.append(t)
                self.residuals.append((t, float(msg.strongest_normalized_residual)))
                if rose:
                    self.contact_rises.append(t)
                elif self.contact and not msg.contact:
                    self.contact_falls.append(t)
            self.contact = bool(msg.contact)
            self.strongest = msg.strongest_joint

    def wrench_callback(self, msg) -> None:
        """Record the observer's wrench estimate with the force that was applied then."""
        f, m = msg.wrench.force, msg.wrench.torque
        t = msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec
        with self.lock:
            self.estimate = np.array([f.x, f.y, f.z, m.x, m.y, m.z])
            self.t_estimate = t
            applied = self.applied_force(t)
            if not self.samples or t < self.samples[-1][0] - 1e-9 or \
                    t - self.samples[-1][0] >= 0.01 - 1e-9:
                if self.samples and t < self.samples[-1][0] - 1e-9:
                    self.samples.clear()  # the simulator was reset: a new story
                self.samples.append((t, applied, float(f.y), self.contact))

    def tracking_error_callback(self, msg) -> None:
        """Record the controller's largest tracking error per joint state."""
        t = msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec
        e = float(np.max(np.abs(msg.position))) if len(msg.position) else 0.0
        with self.lock:
            if self.errors and t < self.errors[-1][0] - 1e-9:
                self.errors.clear()  # the simulator was reset: a new story
            if not self.errors or t - self.errors[-1][0] >= 0.01 - 1e-9:
                self.errors.append((t, e))

    def _send_move(self) -> None:
        """Send the out-and-back move to trajectory_controller (timed points at 50 Hz)."""
        from trajectory_msgs.msg import JointTrajectoryPoint

        from manip_dynamics.ros.runtime.conversions import time_msg
        msg = self._JointTrajectory(joint_names=list(self.model.joint_names))
        for t in np.arange(0.0, 2 * MOVE_LEG + 1e-9, 0.02):
            q, qd, qdd = self._reference(float(t))
            point = JointTrajectoryPoint(positions=q.tolist(), velocities=qd.tolist(),
                                         accelerations=qdd.tolist())
            stamp = time_msg(float(t))
            point.time_from_start.sec, point.time_from_start.nanosec = stamp.sec, stamp.nanosec
            msg.points.append(point)
        self.trajectory_pub.publish(msg)

    def _resume(self) -> None:
        """Ask trajectory_controller to continue the move (answered asynchronously)."""
        with self.lock:
            self.resume_attempts += 1
        if self.resume_client.service_is_ready():
            future = self.resume_client.call_async(self._Trigger.Request())

            def done(fut) -> None:
                answer = fut.result()
                if answer is not None and answer.success and \
                        answer.message.startswith('resumed'):
                    with self.lock:
                        self.resumes += 1
            future.add_done_callback(done)

    def _story_with_controller(self, t: float, phase: float) -> None:
        """Run the story's events when trajectory_controller commands the arm."""
        if phase < PUSH_AT:
            self.moved = self.move_pushed = False
        if not self.story_started:
            return
        if phase >= MOVE_AT and not self.moved:
            self.moved = True
            self._send_move()
        if phase >= MOVE_AT + MOVE_PUSH_AT and self.moved and not self.move_pushed:
            self.move_pushed = True
            self._push()
            self.resume_at = t + PUSH_DURATION + RESUME_AFTER
        if self.resume_at is not None and t >= self.resume_at:
            self.resume_at = None
            self._resume()

    def applied_force(self, t: float) -> float:
        """Return the push force along y [N] at simulated time ``t`` (0 outside a push)."""
        return PUSH_FORCE if any(a <= t < b for a, b in self.push_window) else 0.0

    def joint_states_callback(self, msg) -> None:
        """Follow the story on one joint state: the cycle's phase, pushes, move, resume."""
        model = self.model
        try:
            q = model.to_model_order(msg.name, msg.position, allow_extra=True)
        except ValueError:
            return
        t = msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec
        if t < self.t_last - 1e-6:  # the simulator was reset: start the story again
            with self.lock:
                self.cycle_start = t
                self.push_window.clear()
                self.samples.clear()
                self.hold_returns.clear()
                self.contact_stamps.clear()
                self.contact_rises.clear()
                self.contact_falls.clear()
            self.pushed = False
        self.t_last = t
        if self.q_home is None:
            self.q_home = q.copy()
        phase = (t - self.cycle_start) % self.period
        if phase < PUSH_AT:
            self.pushed = False
        elif not self.pushed and self.story_started:
            self.pushed = True
            self._push(at_hold=True)
        self._story_with_controller(t, phase)
        self._watch_hold_return(t, q)
        if phase < PUSH_AT:
            self.q_last = q   # the pose the arm holds before the push at hold

    def _watch_hold_return(self, t: float, q: np.ndarray) -> None:
        """
        After a push at hold: note when the arm is back near the pose it held (and stays).

        Back: within HOLD_TOLERANCE of the pose held before the push, until HOLD_RETURN s after
        the push's end.
        """
        with self.lock:
            if not self.hold_returns:
                return
            entry = self.hold_returns[-1]
            end, hold = entry[0], entry[2]
            if t < end or t > end + HOLD_RETURN:
                return
            off = float(np.max(np.abs(q - hold)))
            if off > HOLD_TOLERANCE:
                entry[1] = None
            elif entry[1] is None:
                entry[1] = t

    def _push(self, at_hold: bool = False) -> None:
        """Ask the simulator for the push (answered asynchronously)."""
        if not self.push_client.service_is_ready():
            return
        request = self._ApplyWrench.Request(link=self.tool, frame='world',
                                            duration=PUSH_DURATION)
        request.wrench.force.y = PUSH_FORCE
        future = self.push_client.call_async(request)

        def done(fut) -> None:
            answer = fut.result()
            if answer is not None and answer.success:
                with self.lock:
                    self.push_window.append((answer.start_time, answer.end_time))
                    if at_hold and self.q_last is not None:
                        # [push end, back within HOLD_TOLERANCE at, the pose held before]
                        self.hold_returns.append([answer.end_time, None, self.q_last])
        future.add_done_callback(done)

    # ------------------------------------------------------------------ display
    def detections(self, pushes: list[tuple[float, float]]) -> list[float]:
        """Return, per push flagged within 1 s of its start, the delay of the flag [s]."""
        return first_within(self.contact_stamps, [start for start, _ in pushes])

    def false_contact_count(self) -> int:
        """
        Return the contact flags raised with no push (call with ``self.lock`` held).

        A flag raised during a push, or within :data:`RAISE_AFTER` of its end, is that
        push's detection (however long it stays up); any other rise is false. Judged from
        all push windows known now, so that a push whose times arrived late is no false one.
        """
        return sum(1 for t in self.contact_rises if not any(
            a <= t < b + RAISE_AFTER for a, b in self.push_window))

    def figures(self, t_end: float) -> dict[str, Any]:
        """
        Return the story's figures up to simulated time ``t_end`` (docs/SIMULATOR.md's checks).

        ``pushes``: pushes that ended before ``t_end`` - 0.3 s; ``flagged``: how many raised
        the contact flag; ``latency_ms``: each detection's delay; ``hold_returns``: for
        each push at hold whose return window closed, the time back within
        :data:`HOLD_TOLERANCE` after its end [s] (None: not back within
        :data:`HOLD_RETURN`); ``resumes`` and ``resume_attempts``; ``false_contacts``
        (:meth:`false_contact_count`); ``release_ms`` (:meth:`releases`);
        ``moving_residual`` (:meth:`moving_residual`).
        """
        with self.lock:
            pushes = [w for w in self.push_window if w[1] <= t_end - 0.3]
            returns = [None if back is None or back - end > HOLD_RETURN else back - end
                       for end, back, _ in self.hold_returns if end + HOLD_RETURN <= t_end]
            latency = self.detections(pushes)
            return {'pushes': len(pushes), 'flagged': len(latency),
                    'latency_ms': [1e3 * d for d in latency],
                    'hold_returns': returns, 'resumes': self.resumes,
                    'resume_attempts': self.resume_attempts,
                    'false_contacts': self.false_contact_count(),
                    'release_ms': self.releases(pushes),
                    'moving_residual': self.moving_residual(t_end)}

    def moving_residual(self, t_end: float) -> float | None:
        """
        Return the largest normalized residual while the arm moved undisturbed, or None.

        Samples within a move's band of each cycle (as the plot shades it) before
        ``t_end``, except from a push's start to 1 s after its end (call with ``self.lock``
        held). The contact flag rises at 1.0: how close the moves come to a false contact.
        """
        values = [r for t, r in self.residuals if t <= t_end
                  and MOVE_AT <= (t - self.cycle_start) % self.period < MOVE_AT + self.move_band
                  and not any(a <= t < b + 1.0 for a, b in self.push_window)]
        return max(values) if values else None

    def releases(self, pushes: list[tuple[float, float]]) -> list[float]:
        """Return, per push whose flag went down within 1 s of its end, that delay [ms]."""
        return [1e3 * d for d in first_within(self.contact_falls, [end for _, end in pushes])]

    def status(self) -> str:
        """Return the scenario's part of the status line."""
        with self.lock:
            t = self.t_estimate  # applied and estimated at the same simulated time
            applied = self.applied_force(t)
            estimate = self.estimate
            false_contacts = self.false_contact_count()
            error = self.errors[-1][1] if self.errors else 0.0
        phase = (t - self.cycle_start) % self.period if math.isfinite(t) else 0.0
        moving = MOVE_AT <= phase < MOVE_AT + self.move_band
        what = 'push' if applied else 'move' if moving else 'hold'
        line = ' | %s | F_y applied %4.1f N, estimated %5.1f N | contact %s | false %d' % (
            what, applied, estimate[1],
            ('YES (%s)' % self.strongest) if self.contact else 'no ', false_contacts)
        line += ' | tracking error %5.1f mrad | resumed %d/%d' % (
            1e3 * error, self.resumes, self.resume_attempts)
        return line

    def plot(self, ax) -> None:
        """Draw the applied and estimated force and the contact flag on ``ax``."""
        with self.lock:
            samples = list(self.samples)
        if not samples:
            ax.set_title('no observer output recorded', fontsize='small')
            return
        t = np.array([s[0] for s in samples])
        ax.plot(t, [s[1] for s in samples], color='k', label='applied push F_y')
        ax.plot(t, [s[2] for s in samples], color='tab:red',
                label='external_torque_observer estimate F_y')
        contact = np.array([s[3] for s in samples])
        if np.any(contact):
            ax.fill_between(t, 0.0, 1.0, where=contact, color='tab:orange', alpha=0.25,
                            transform=ax.get_xaxis_transform(), label='contact flag')
        for start in np.arange(self.cycle_start + MOVE_AT, t[-1], self.period):
            ax.axvspan(start, start + self.move_band, color='tab:blue', alpha=0.08)
        ax.set_ylabel('force on %s [N]' % self.tool)
        with self.lock:
            errors = list(self.errors)
            detections = self.detections(list(self.push_window))
            false_contacts = self.false_contact_count()
        if errors:
            twin = ax.twinx()
            te = np.array(errors)
            twin.plot(te[:, 0], 1e3 * te[:, 1], color='tab:green', linewidth=0.8,
                      label='trajectory_controller max |q_d - q|')
            twin.set_ylabel('tracking error [mrad]')
            twin.legend(loc='upper left', fontsize='small')
        ax.set_title('blue band: move by trajectory_controller (computed torque), pushed %g '
                     's in: contact %s, hold, ~/resume; %d false contact flags' % (
                         MOVE_PUSH_AT, ('flagged %.0f ms after the push' % (
                             1e3 * np.median(detections))) if detections else
                         'not flagged', false_contacts), fontsize='small')
        ax.legend(loc='upper right', fontsize='small')
