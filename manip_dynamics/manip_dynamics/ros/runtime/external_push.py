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
Pushes on the simulated arm: simulator_node's ``~/apply_wrench`` and ``~/external_wrench``.

* ``~/apply_wrench`` (manip_dynamics_interfaces/ApplyWrench): a wrench on one link for
  ``duration`` seconds of simulated time, from the next step on. Its force acts at the
  link's origin; its vectors are in the link's own axes (``frame`` empty, the push turns
  with the link) or in the axes of another link (``'world'`` = the root link: fixed axes),
  re-expressed in the link's frame before every chunk of steps.
* ``~/external_wrench`` (geometry_msgs/WrenchStamped): a continuous wrench on the link
  named by ``header.frame_id``, in that link's frame, about its origin, acting until the
  next message for that link (an all-zero wrench ends it).
* ``~/applied_wrench`` (geometry_msgs/WrenchStamped): with every /joint_states message
  while a push acts (and once more after it ends, all zero), the total wrench on each pushed
  link, frame_id = the link, in its frame, stamped like /joint_states.

The wrench enters the simulated dynamics through
:meth:`manip_dynamics.simulation.Simulator.set_external_wrenches`, i.e. the library's
``external_wrenches``; /joint_states' effort stays the motor torque, as on a real arm.
Start and end are counted in simulation steps, so a push lasts exactly
``round(duration * rate)`` steps, from the first step the simulator runs after the call
(the service reads the step count while the simulation thread runs on; a push dated from
that count lost what ran meanwhile: 0.2 of 0.3 s once by hand). ``~/reset`` ends the timed
pushes; a new model ends all.

A push is accepted only when its joint torques ``J^T w`` at the current pose stay within
the URDF effort limits (:func:`manip_dynamics.simulation.push_beyond_effort_limits`): a push
the arm's motors could hold, as a person's push or a cobot's collision. Harder ones spin
light links at hundreds of rad/s, which neither a real arm nor any plausibility check
tells from a glitch.
"""

from collections.abc import Callable
import math
from typing import Any, NamedTuple

from geometry_msgs.msg import WrenchStamped
import numpy as np
from numpy.typing import NDArray
from rclpy.node import Node

from manip_dynamics.observers import wrench_in_axes
from manip_dynamics.robot_model import RobotModel
from manip_dynamics.ros.runtime.conversions import array_to_wrench, wrench_to_array
from manip_dynamics.ros.runtime.node_runtime import KindThrottle
from manip_dynamics.simulation import push_beyond_effort_limits, Simulator
from manip_dynamics_interfaces.srv import ApplyWrench

FloatArray = NDArray[np.float64]

#: ``() -> (model, simulator, steps done)`` of the simulator node.
StateGetter = Callable[[], tuple[RobotModel | None, Simulator | None, int]]


class Push(NamedTuple):
    """
    One wrench on one link; ``end`` is None for a continuous one.

    ``taken``: a timed push not yet put on the simulator; it starts at the first step the
    simulator runs after it was taken (see :meth:`ExternalPushes.before_steps`).
    """

    link: str
    wrench: FloatArray
    frame: str
    start: int
    end: int | None
    taken: bool = False


#: Largest push accepted: |force| [N], |torque| [N m], duration [s], queued timed pushes.
#: A 1e300 N push broke the integration; these bounds come before the effort-limit check.
MAX_FORCE = 1.0e5
MAX_TORQUE = 1.0e4
MAX_DURATION = 3600.0
MAX_TIMED_PUSHES = 100


class ExternalPushes:
    """The push interfaces of simulator_node and the wrenches they put on the simulator."""

    def __init__(self, node: Node, state: StateGetter, rate: float,
                 stamp_of: Callable[[int], float] | None = None) -> None:
        """
        Create ``~/apply_wrench``, ``~/external_wrench`` and ``~/applied_wrench`` on a node.

        :param node: The simulator node.
        :param state: Returns the node's current model, simulator and step count.
        :param rate: Simulation rate [Hz] (steps per simulated second).
        :param stamp_of: Step count -> the /joint_states stamp of that step [s]; default
            ``steps / rate`` (simulated time).
        """
        self._node = node
        self._state = state
        self._rate = float(rate)
        self._stamp_of = stamp_of or (lambda steps: steps / self._rate)
        self._timed: list[Push] = []
        self._continuous: dict[str, Push] = {}
        self._model_seen: RobotModel | None = None
        self._last_step = 0
        self._shown: set[str] = set()
        self._applied: dict[str, FloatArray] = {}
        self._throttle = KindThrottle(node.get_logger(), 2.0)
        node.create_service(ApplyWrench, '~/apply_wrench', self.apply_wrench_callback)
        node.create_subscription(WrenchStamped, '~/external_wrench',
                                 self.external_wrench_callback, 10)
        self._applied_pub = node.create_publisher(WrenchStamped, '~/applied_wrench', 10)

    # ------------------------------------------------------------------ checks
    @staticmethod
    def _check(model: RobotModel, link: str, frame: str, wrench: FloatArray,
               q: FloatArray) -> str:
        """Return the frame to use ('' = the link's own) or raise ValueError (at pose q)."""
        if link not in model.link_names:
            raise ValueError('unknown link %r; the model has %s' % (link,
                                                                    list(model.link_names)))
        if model.tree.links[link].body < 0:
            raise ValueError('link %r is fixed to the root %r: a wrench there moves nothing'
                             % (link, model.root_link))
        if frame == 'world':
            frame = model.root_link
        if frame == link:
            frame = ''
        if frame and frame not in model.link_names:
            raise ValueError("unknown frame %r: use '' (the link's), 'world' or a link of %s"
                             % (frame, list(model.link_names)))
        if not np.all(np.isfinite(wrench)):
            raise ValueError('the wrench has NaN or inf: %s' % wrench.tolist())
        force, torque = float(np.linalg.norm(wrench[:3])), float(np.linalg.norm(wrench[3:]))
        if force > MAX_FORCE or torque > MAX_TORQUE:
            raise ValueError('the wrench (|f| = %.6g N, |t| = %.6g N m) is beyond what the '
                             'simulation integrates: at most %g N and %g N m'
                             % (force, torque, MAX_FORCE, MAX_TORQUE))
        in_link = wrench
        if frame:
            rot_root_frame = model.link_transform(q, frame)[:3, :3]
            rot_root_link = model.link_transform(q, link)[:3, :3]
            in_link = wrench_in_axes(wrench, rot_root_frame.T @ rot_root_link)
        beyond = push_beyond_effort_limits(model, q, {link: in_link})
        if beyond:
            raise ValueError('push refused: %s' % beyond)
        return frame

    def clear(self) -> None:
        """Forget every push, timed and continuous (a reset to a clean state)."""
        self._timed.clear()
        self._continuous.clear()

    def _sync(self, model: RobotModel | None, steps: int) -> None:
        """Forget pushes of an old model, and timed pushes after a reset (steps went back)."""
        if model is not self._model_seen:
            self._model_seen = model
            self._timed.clear()
            self._continuous.clear()
        elif steps < self._last_step:
            self._timed.clear()
        self._last_step = steps

    # ------------------------------------------------------------------ ROS callbacks
    def apply_wrench_callback(self, request: ApplyWrench.Request,
                              response: ApplyWrench.Response) -> ApplyWrench.Response:
        """Start a timed push (see the module docstring)."""
        model, sim, steps = self._state()
        try:
            if model is None or sim is None:
                raise ValueError('no robot model yet')
            self._sync(model, steps)
            wrench = wrench_to_array(request.wrench)
            frame = self._check(model, request.link, request.frame, wrench, sim.q)
            duration = float(request.duration)
            if not (math.isfinite(duration) and 0.0 < duration <= MAX_DURATION):
                raise ValueError('duration must be in (0, %g] s, got %r' % (
                    MAX_DURATION, duration))
            if len(self._timed) >= MAX_TIMED_PUSHES:
                raise ValueError('%d timed pushes are already queued: wait for them to end '
                                 'or call ~/reset' % len(self._timed))
            count = int(round(duration * self._rate))
            if count < 1:
                raise ValueError('duration %g s is shorter than one step (%g s)'
                                 % (duration, 1.0 / self._rate))
        except ValueError as error:
            response.success = False
            response.message = str(error)
            self._node.get_logger().warning('apply_wrench: %s' % error)
            return response
        push = Push(request.link, wrench, frame, steps, steps + count, taken=True)
        self._timed.append(push)
        response.success = True
        # on the clock of the /joint_states stamps, so a caller can tell which samples it hit
        response.start_time = self._stamp_of(steps)
        response.end_time = self._stamp_of(steps + count)
        # and the ROS time now: where a controller_manager stamps /joint_states with its own
        # clock, the simulator's stamps can lag it (lockstep waits for late commands)
        response.message = ('wrench %s on %r in the axes of %r from t = %.4f s to %.4f s '
                            '(ROS time %.4f s)' % (
                                np.round(wrench, 6).tolist(), request.link,
                                frame or request.link, response.start_time,
                                response.end_time,
                                self._node.get_clock().now().nanoseconds * 1e-9))
        self._node.get_logger().info('apply_wrench: %s' % response.message)
        return response

    def external_wrench_callback(self, msg: WrenchStamped) -> None:
        """Set (or with an all-zero wrench, end) the continuous push on one link."""
        model, sim, steps = self._state()
        link = msg.header.frame_id
        try:
            if model is None:
                raise ValueError('no robot model yet')
            self._sync(model, steps)
            wrench = wrench_to_array(msg.wrench)
            self._check(model, link, '', wrench,
                        sim.q if sim is not None else np.zeros(model.dof))
        except ValueError as error:
            self._throttle.warning('ignoring ~/external_wrench: %s' % error,
                                   kind='external_wrench')
            return
        if np.any(wrench != 0.0):
            self._continuous[link] = Push(link, wrench, '', steps, None)
        else:
            self._continuous.pop(link, None)

    # ------------------------------------------------------------------ simulation loop
    def before_steps(self, sim: Simulator, steps: int, chunk: int) -> int:
        """
        Put the wrenches acting at step ``steps`` on the simulator; shorten the chunk.

        :param sim: The simulator.
        :param steps: Steps done so far (the next step's index).
        :param chunk: Steps the node is about to run.
        :return: The chunk, cut at the next start or end of a timed push (>= 1).
        """
        model = sim.model
        self._sync(model, steps)
        # a push taken while a chunk ran starts now and lasts its whole duration (steps is at
        # least its start: a reset since it was taken cleared it in _sync)
        self._timed = [p._replace(start=steps, end=steps + p.end - p.start, taken=False)
                       if p.taken else p for p in self._timed]
        self._timed = [p for p in self._timed if p.end > steps]
        if not self._timed and not self._continuous:
            if self._applied:
                sim.set_external_wrenches(None)
                self._applied = {}
            return chunk
        q = None
        total: dict[str, FloatArray] = {}
        for push in list(self._continuous.values()) + self._timed:
            if push.start > steps:
                chunk = min(chunk, push.start - steps)
                continue
            if push.end is not None:
                chunk = min(chunk, push.end - steps)
            wrench = push.wrench
            if push.frame:
                if q is None:
                    q = sim.q
                rot_root_frame = model.link_transform(q, push.frame)[:3, :3]
                rot_root_link = model.link_transform(q, push.link)[:3, :3]
                wrench = wrench_in_axes(wrench, rot_root_frame.T @ rot_root_link)
            total[push.link] = total.get(push.link, 0.0) + wrench
        sim.set_external_wrenches(total or None)
        self._applied = total
        return max(1, chunk)

    def publish(self, stamp: Any) -> None:
        """Publish ``~/applied_wrench`` for the pushed links (and one zero after a push)."""
        for link in sorted(set(self._applied) | self._shown):
            msg = WrenchStamped()
            msg.header.stamp = stamp
            msg.header.frame_id = link
            msg.wrench = array_to_wrench(self._applied.get(link, np.zeros(6)))
            self._applied_pub.publish(msg)
        self._shown = set(self._applied)
