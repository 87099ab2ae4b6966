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
The ``external_torque_observer`` node: external joint torques, contact and contact wrench.

Every ``/joint_states`` message goes through the library's generalised-momentum observer
(:class:`manip_dynamics.observers.MomentumObserver`), those queued while the node was busy
included, oldest first; for the newest of each such batch (in one that goes on, every
``BATCH_PUBLISH_PERIOD`` of the stamps) and where the contact flag changes (each rise and
fall also logged with its stamp) it publishes:

* ``~/contact`` (manip_dynamics_interfaces/Contact): per-joint flags after thresholds with
  hysteresis, the joint with the largest normalised residual, and the overall flag;
* ``~/external_torques`` (sensor_msgs/JointState, ``effort`` = r, model order);
* ``~/external_wrench`` (geometry_msgs/WrenchStamped): the wrench at ``wrench_link``'s
  origin that explains r, through a damped pseudo-inverse of J^T
  (:func:`manip_dynamics.observers.estimate_wrench`), in ``wrench_frame``'s axes.

``effort_source``: the applied torque from ``joint_states`` (its ``effort``: torque-sensing
arms, the simulator) or ``commands`` (the latest Float64MultiArray on ``commands_topic``,
``command_joints`` order, paired by reception time). A message that cannot be used, and a
coast after a gap (``stall_gap``: nothing estimated), give a throttled warning; a stamp that
goes back (a simulator reset), a new payload or model restart the observer. See
docs/ROS_API.md and docs/CONTACT_DETECTION.md.
"""

import math
import sys
import time
from typing import Any, NamedTuple

from geometry_msgs.msg import WrenchStamped
import numpy as np
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import Trigger

from manip_dynamics.errors import InputError
from manip_dynamics.observers import (
    ContactDetector, GatedObserver, link_wrench, MomentumObserver, wrench_frames)
from manip_dynamics.observers.command_history import CommandHistory, CommandUnavailable
from manip_dynamics.robot_model import RobotModel
from manip_dynamics.ros.parameters.external_torque_observer import PARAMETERS
from manip_dynamics.ros.runtime.conversions import (
    command_to_model_order, contact_message, joint_state_message, stamp_seconds, wrench_stamped)
from manip_dynamics.ros.runtime.glitch_parameters import gate_parameters
from manip_dynamics.ros.runtime.guarded_node import GuardedNode
from manip_dynamics.ros.runtime.joint_state_reader import JointStateReader
from manip_dynamics.ros.runtime.listeners import ListenerCheck
from manip_dynamics.ros.runtime.node_runtime import (
    guarded, KindThrottle, LostMessages, received_ns, run_node, with_message_info)
from manip_dynamics.ros.runtime.output_pacing import BatchPacing
from manip_dynamics.ros.runtime.parameter_spec import declare_parameters, per_joint_values
from manip_dynamics.ros.runtime.payloads import apply_payload_request, Payloads, reapply_payloads
from manip_dynamics.ros.runtime.qos import COMMANDS_QOS, CONTACT_QOS
from manip_dynamics.ros.runtime.robot_description import (
    model_builder, NO_MODEL_MESSAGE, RobotDescriptionSource)
from manip_dynamics.ros.runtime.startup import report_startup_error, STARTUP_ERRORS, StartupError
from manip_dynamics_interfaces.msg import Contact
from manip_dynamics_interfaces.srv import SetPayload

#: Default node name (also the executable's name).
NODE_NAME = 'external_torque_observer'

#: Seconds between two warnings of the same kind.
WARN_PERIOD = 2.0
#: Within a batch that goes on, the outputs are published once per this much of the samples'
#: time [s]; a batch spanning BEHIND_SPAN of it is reported (throttled): the node is behind.
BATCH_PUBLISH_PERIOD, BEHIND_SPAN = 0.02, 0.1


class _Output(NamedTuple):
    """What one observed sample publishes."""

    plan: '_Plan'
    stamp: Any
    q: np.ndarray
    r: np.ndarray
    state: Any


class _Plan(NamedTuple):
    """Everything the per-message computation reads for one model; swapped as a whole."""

    model: RobotModel
    observer: MomentumObserver
    gated: GatedObserver
    detector: ContactDetector
    wrench_link: str
    wrench_frame: str


class ExternalTorqueObserverNode(GuardedNode):
    """Estimate external torques, contact and contact wrench from joint states."""

    def __init__(self, **kwargs: Any) -> None:
        """
        Declare and check the parameters, then create the model source and interfaces.

        :param kwargs: Passed to :class:`rclpy.node.Node`.
        :raises StartupError: A bad parameter, or a robot_description parameter that does not
            load or does not fit the parameters.
        """
        super().__init__(NODE_NAME, **kwargs)
        values = declare_parameters(self, PARAMETERS, on_change=self._tuned)
        urdf, build = model_builder(values)
        self.joint_states_topic = values.joint_states_topic
        self.effort_source = values.effort_source
        self.commands_topic = values.commands_topic
        self.command_joints = values.command_joints or []
        self.gain, self.gains = values.gain, values.gains or []
        self.threshold, self.thresholds = values.threshold, values.thresholds or []
        self.hysteresis = values.hysteresis
        self.observer_options = {   # MomentumObserver's (stall_gap 0: never coast)
            'include_friction': values.subtract_friction, 'max_step': values.max_step,
            'stall_gap': values.stall_gap or math.inf, 'stiction': values.stiction,
            'rest_speed': values.rest_speed}
        self.wrench_link, self.wrench_frame = values.wrench_link, values.wrench_frame
        self.queue_depth = values.queue_depth
        self.wrench_damping = values.wrench_damping
        self.gate_parameters = gate_parameters(values, values.max_step)
        if not self.joint_states_topic:
            raise StartupError('parameter joint_states_topic must not be empty')
        if values.stiction and not values.subtract_friction:
            raise StartupError('parameter stiction needs subtract_friction')
        if self.effort_source == 'commands' and not self.commands_topic:
            raise StartupError('parameter commands_topic must not be empty')

        self._payloads: Payloads = {}
        self._plan: _Plan | None = None
        # efforts in model order by reception time [ns, the DDS reception stamp]
        self._commands = CommandHistory(values.command_max_age, values.command_delay)
        self._reader = JointStateReader()
        self._throttle = KindThrottle(self.get_logger(), WARN_PERIOD)
        self.rejected = 0
        self.contact_pub = self.create_publisher(Contact, '~/contact', CONTACT_QOS)
        self.torques_pub = self.create_publisher(JointState, '~/external_torques', 10)
        self.wrench_pub = self.create_publisher(WrenchStamped, '~/external_wrench', 10)
        self._torques_listened = ListenerCheck(self.torques_pub)   # built only while listened
        self._wrench_listened = ListenerCheck(self.wrench_pub)
        self.source = RobotDescriptionSource(self, urdf, build, on_model=self._prepare)
        # per-sample inputs on their own thread; commands before joint states (by reception)
        self._lane = self.create_lane('samples')
        self._lane.after_batch(guarded(self, self._batch_done))
        self._newest: _Output | None = None
        self._pacing = BatchPacing(BATCH_PUBLISH_PERIOD, BEHIND_SPAN)
        self.commands_sub = None
        if self.effort_source == 'commands':
            self.commands_sub = self.create_subscription(
                Float64MultiArray, self.commands_topic, with_message_info(self.commands_callback),
                COMMANDS_QOS, callback_group=self._lane.group)
        self._lost = LostMessages()   # a gap that lost messages explain is no stall
        # best effort matches reliable and best-effort publishers alike
        self.joint_states_sub = self.create_subscription(
            JointState, self.joint_states_topic, with_message_info(self.joint_states_callback),
            QoSProfile(depth=self.queue_depth, reliability=ReliabilityPolicy.BEST_EFFORT),
            callback_group=self._lane.group)
        self.create_service(SetPayload, '~/set_payload', self.set_payload_callback)
        self.create_service(Trigger, '~/reset', self.reset_callback)
        self.get_logger().info(
            'observing %s with efforts from %s: gain %s 1/s, threshold %s, hysteresis %g' % (
                self.joint_states_topic,
                self.joint_states_topic if self.effort_source == 'joint_states'
                else self.commands_topic, self.gains or self.gain,
                self.thresholds or self.threshold, self.hysteresis))

    def _tuned(self, name: str, value: Any) -> None:
        """
        Retune the running detector to a threshold, thresholds or hysteresis just set.

        :raises ValueError: thresholds of the wrong length for the model (the set is refused).
        """
        settings = {'threshold': self.threshold, 'thresholds': self.thresholds,
                    'hysteresis': self.hysteresis}
        settings[name] = (value or []) if name == 'thresholds' else value   # unset: []
        plan = self._plan
        if plan is not None:   # raises before anything changed
            thresholds = per_joint_values(settings['thresholds'], settings['threshold'],
                                          plan.model, 'thresholds')
            plan.detector.retune(thresholds, settings['hysteresis'])
        self.threshold, self.thresholds, self.hysteresis = (
            settings['threshold'], settings['thresholds'], settings['hysteresis'])
        self.get_logger().info('%s set to %s' % (name, value))

    # ------------------------------------------------------------------ model
    def _prepare(self, model: RobotModel) -> None:
        """
        Vet a new model against the parameters and install the observer for it.

        :raises ValueError: Gains or thresholds of the wrong length, unknown link or frame,
            command joints the model lacks (the model is then rejected).
        """
        gains = per_joint_values(self.gains, self.gain, model, 'gains')
        thresholds = per_joint_values(self.thresholds, self.threshold, model, 'thresholds')
        try:
            link, frame = wrench_frames(model, self.wrench_link, self.wrench_frame)
        except InputError as error:
            raise StartupError('parameters wrench_link, wrench_frame: %s' % error) from None
        if self.effort_source == 'commands':
            for name in self.command_joints:
                model.joint_index(name)
        reapply_payloads(model, self._payloads, self.get_logger())
        observer = MomentumObserver(model, gains, **self.observer_options)
        detector = ContactDetector(thresholds, self.hysteresis)
        gated = GatedObserver(observer, self.gate_parameters.gate(model), model.effort_limits)
        self._plan = _Plan(model, observer, gated, detector, link, frame)
        self.get_logger().info('observer for %r: gains %s 1/s, thresholds %s; wrench at %r in '
                               'the axes of %r' % (model.name, gains.tolist(),
                                                   thresholds.tolist(), link, frame))

    # ------------------------------------------------------------------ input
    def _reject(self, kind: str, text: str) -> None:
        """Count an unusable message and warn, at most once per WARN_PERIOD per kind."""
        self.rejected += 1
        self._throttle.warning('ignoring %s (%d ignored so far): %s' % (
            'a command' if kind.startswith('command') else 'joint_states', self.rejected,
            text), kind=kind)

    def commands_callback(self, msg: Float64MultiArray, info: Any) -> None:
        """Keep the good effort commands with their reception time (effort_source commands)."""
        plan = self._plan
        if plan is None:
            return
        try:
            names = self.command_joints or list(plan.model.joint_names)
            tau = command_to_model_order(plan.model, names, msg.data)
        except ValueError as error:
            self._reject('command', '%s: %s' % (self.commands_topic, error))
            return
        self._commands.add(received_ns(info), tau)

    def _efforts(self, model: RobotModel, msg: JointState,
                 received: int) -> np.ndarray | None:
        """Return the applied torques in model order, or None after a warning."""
        if self.effort_source == 'commands':
            try:
                return self._commands.at(received, self.commands_topic)
            except CommandUnavailable as error:
                self._reject(error.kind, str(error))
                return None
        if len(msg.effort) == 0:
            self._reject('no effort', 'the message has no effort values; set effort_source '
                         'to commands for an arm that reports no torque')
            return None
        try:
            return self._reader.field(msg.effort, 'effort')
        except ValueError as error:
            self._reject('effort', str(error))
            return None

    def joint_states_callback(self, msg: JointState, info: Any) -> None:
        """Run the observer on one joint_states message and publish its outputs."""
        lost, plan = self._lost.since_last(info), self._plan
        if plan is None:
            self._reject('no model', NO_MODEL_MESSAGE)
            return
        model = plan.model
        try:
            self._reader.learn(model, msg)
            q = self._reader.field(msg.position, 'position')
            if len(msg.velocity) == 0:
                self._reject('no velocity', 'the message has no velocities')
                return
            qd = self._reader.field(msg.velocity, 'velocity')
        except ValueError as error:
            self._reject('state', str(error))
            return
        tau = self._efforts(model, msg, received_ns(info))
        if tau is None:
            return
        stamp, observer = msg.header.stamp, plan.observer
        t = stamp.sec + 1e-9 * stamp.nanosec
        if t == 0.0:
            self._reject('stamp', 'header.stamp is zero')
            return
        if observer.time is not None and t < observer.time:
            self.get_logger().info('joint_states time went back from %.6f s to %.6f s (a '
                                   'simulator reset?): observer restarted' % (observer.time, t))
            observer.reset()
            plan.detector.reset()
        try:
            r = plan.gated.update(t, time.monotonic(), q, qd, tau, lost)
            if r is None:
                if plan.gated.skipped == 'rejected':
                    # a glitch: the observer restarts at the next good sample
                    plan.detector.reset()
                    self._reject('glitch ' + plan.gated.rejection_kind,
                                 '%s; observer restarted' % plan.gated.rejection)
                elif plan.gated.skipped == 'suspect':
                    self._throttle.warning('joint_states sample held back: %s'
                                           % plan.gated.rejection, kind='suspect')
                return   # nothing published for a sample not fed (duplicates silently)
            if plan.gated.saturated:
                self._throttle.warning('external torque estimate beyond the effort limits: '
                                       'published clipped to them', kind='saturated')
            if observer.coasting:   # a contact that begins now is seen only after the coast
                self._throttle.warning('coasting after a joint_states gap over stall_gap: '
                                       'nothing estimated (stamp %.3f s)' % t, kind='coast')
            state = plan.detector.update(r)
        except InputError as error:
            self._reject('time' if 'sample time' in str(error) else 'observer', str(error))
            return
        self._newest = _Output(plan, stamp, q, r, state)
        pace = self._pacing.sample(t, state.contact, not self._lane.running)
        if pace.changed:
            self.get_logger().info(
                ('contact: strongest joint %s at %.2f of its threshold (stamp %.3f s)' % (
                    model.joint_names[state.strongest], state.ratios[state.strongest], t))
                if state.contact else 'contact ended (stamp %.3f s)' % t)
        if pace.behind:
            self._throttle.warning('behind the joint states: one batch of %d samples spans '
                                   '%.0f ms of their stamps' % (pace.samples, 1e3 * pace.behind),
                                   kind='behind')
        if pace.publish:
            self._publish_newest()

    def _batch_done(self) -> None:
        self._pacing.batch_done()
        self._publish_newest()

    def _publish_newest(self) -> None:
        """Publish the outputs of the newest observed sample (once per batch of samples)."""
        out, self._newest = self._newest, None
        if out is None:
            return
        plan, model, stamp, state = out.plan, out.plan.model, out.stamp, out.state
        names = model.joint_names
        self.contact_pub.publish(contact_message(names, state, stamp))
        self._pacing.published(stamp_seconds(stamp), state.contact)
        if self._torques_listened():
            self.torques_pub.publish(joint_state_message(names, out.r, stamp))
        # the wrench only when someone listens: it is half of the work per message
        if not self._wrench_listened():
            return
        try:
            wrench = link_wrench(model, out.q, out.r, plan.wrench_link, plan.wrench_frame,
                                 self.wrench_damping)
        except InputError as error:
            self._reject('observer', str(error))
            return
        self.wrench_pub.publish(wrench_stamped(wrench, plan.wrench_frame, stamp))

    # ------------------------------------------------------------------ services
    def _restart(self) -> None:
        plan = self._plan
        if plan is not None:
            plan.observer.reset()
            plan.detector.reset()

    def set_payload_callback(self, request: SetPayload.Request,
                             response: SetPayload.Response) -> SetPayload.Response:
        """Attach (mass > 0) or remove (mass = 0) a payload; the observer restarts."""
        plan = self._plan
        if plan is None:
            response.success = False
            response.message = NO_MODEL_MESSAGE
            return response
        try:
            response.message = apply_payload_request(plan.model, self._payloads, request)
        except ValueError as error:
            response.success = False
            response.message = str(error)
            self.get_logger().warning('set_payload: %s' % error)
            return response
        self._restart()
        response.success = True
        self.get_logger().info('set_payload: %s; observer restarted' % response.message)
        return response

    def reset_callback(self, request: Trigger.Request,
                       response: Trigger.Response) -> Trigger.Response:
        """Restart the observer (r = 0 from the next message on) and clear the contacts."""
        response.success = self._plan is not None
        response.message = 'observer restarted' if response.success else NO_MODEL_MESSAGE
        self._restart()
        return response


def main(args: list[str] | None = None) -> int:
    """Run the observer until Ctrl-C, SIGTERM or an external shutdown (exit code 1: bad start)."""
    return run_node(NODE_NAME, ExternalTorqueObserverNode, args, STARTUP_ERRORS,
                    report_startup_error)


if __name__ == '__main__':
    sys.exit(main())
