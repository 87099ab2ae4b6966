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
The ``viewer`` node: the arm in a web browser, live from ``/joint_states``, without RViz.

It serves a 3D page (:class:`manip_dynamics.viewer.server.ArmView`, viser) on
``http://127.0.0.1:<port>`` (loopback only; the port is the ``port`` parameter, the next
free one when it is taken) and logs the URL. It draws what any ROS graph offers, with no
private channel to a simulator, so it shows a real arm as well:

* the robot from ``robot_description`` (parameter, or the ``/robot_description`` topic,
  followed when it changes), posed from ``/joint_states`` positions;
* the gravity torques g(q) of its own model (with its payloads) as arrows at the joints;
* when the external-torque observer runs (``observer_namespace``, default
  ``/external_torque_observer``): its ``external_torques`` (JointState efforts) as arrows,
  its ``external_wrench`` (WrenchStamped) as a force arrow at ``wrench_link`` (default: the
  wrench's frame when it is a link of the model), and its ``contact`` flag
  (manip_dynamics_interfaces/Contact, when that message exists in the built interfaces);
  markers older than ``stale_after`` seconds are hidden;
* payloads from the ``payload_*`` parameters and ``~/set_payload`` (the same request as the
  other nodes), drawn as a sphere and included in g(q);
* a panel with the demo's status numbers: time of the last joint state, real-time factor,
  largest drift from the first pose, largest |g|, largest external torque, contact.

The page is redrawn at most ``redraw_rate`` times per second, from a timer; callbacks only store
the latest messages. Bad messages are logged (throttled) and skipped.
"""

import math
import re
import sys
import threading
import time
from typing import Any

from geometry_msgs.msg import WrenchStamped
import numpy as np
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState

from manip_dynamics.robot_model import RobotModel
from manip_dynamics.ros.parameters.viewer_node import PARAMETERS
from manip_dynamics.ros.runtime.guarded_node import GuardedNode
from manip_dynamics.ros.runtime.names import JOINT_STATES
from manip_dynamics.ros.runtime.node_runtime import run_node
from manip_dynamics.ros.runtime.parameter_spec import declare_parameters
from manip_dynamics.ros.runtime.payloads import (
    apply_payload_request, Payloads, payloads_from, reapply_payloads)
from manip_dynamics.ros.runtime.robot_description import model_builder, RobotDescriptionSource
from manip_dynamics.ros.runtime.startup import report_startup_error, STARTUP_ERRORS, StartupError
from manip_dynamics.viewer.scene import RobotScene
from manip_dynamics.viewer.urdf_visuals import parse_visuals

#: Default node name.
NODE_NAME = 'viewer'
#: The only address the page is served on.
HOST = '127.0.0.1'
#: joint_states QoS: best effort matches reliable and best-effort publishers alike.
TOPIC_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.BEST_EFFORT)
#: Seconds between two warnings about the same topic.
LOG_PERIOD = 2.0


class ViewerNode(GuardedNode):
    """Serve the browser view and feed it from the ROS graph."""

    def __init__(self, **kwargs: Any) -> None:
        """
        Declare the parameters, start the web server, subscribe the topics.

        :param kwargs: Passed to :class:`rclpy.node.Node`.
        :raises StartupError: A bad parameter, viser missing, or a robot_description
            parameter that does not load.
        """
        super().__init__(NODE_NAME, **kwargs)
        values = declare_parameters(self, PARAMETERS)
        urdf, build = model_builder(values)
        port = values.port
        self.rate = values.redraw_rate
        self.stale_after = values.stale_after
        self.search_paths = tuple(values.mesh_search_paths or ())
        namespace = values.observer_namespace
        self.wrench_link = values.wrench_link
        self._payloads: Payloads = payloads_from(values)
        from manip_dynamics.viewer.server import ArmView, viser_missing
        missing = viser_missing()
        if missing:
            raise StartupError(missing)

        self._lock = threading.Lock()
        self._scene: RobotScene | None = None
        self._pending_scene: RobotScene | None = None
        self._xml_being_built = ''
        self._q: np.ndarray | None = None
        self._q0: np.ndarray | None = None
        self._stamp = 0.0
        self._rate_window: list[tuple[float, float]] = []
        self._external: tuple[float, np.ndarray] | None = None
        self._wrench: tuple[float, str, np.ndarray] | None = None
        self._contact: tuple[float, bool, str] | None = None
        self._dirty = False
        self._received = 0
        self._last_warning: dict[str, float] = {}

        self.view = ArmView(host=HOST, port=port, title='manip_dynamics viewer')
        self.url = self.view.url

        def build_with_visuals(xml: str) -> RobotModel:
            self._xml_being_built = xml
            return build(xml)
        try:
            self.source = RobotDescriptionSource(self, urdf, build_with_visuals,
                                                 on_model=self._accept_model)
        except BaseException:
            self.view.close()  # no half-started web server left behind
            raise
        self.create_subscription(JointState, JOINT_STATES, self.joint_states_callback,
                                 TOPIC_QOS)
        if namespace.strip('/'):   # empty: no observer drawn
            self._observe(namespace.rstrip('/'))
        try:
            from manip_dynamics_interfaces.srv import SetPayload
        except ImportError:
            self.get_logger().warning('manip_dynamics_interfaces is not importable: no '
                                      '~/set_payload service')
        else:
            self.create_service(SetPayload, '~/set_payload', self.set_payload_callback)
        self.create_timer(1.0 / self.rate, self.draw_callback)
        self.get_logger().info('viewer at %s (open it in a browser)' % self.url)
        print('viewer: open %s in a browser' % self.url, flush=True)

    # ------------------------------------------------------------------ model
    def _accept_model(self, model: RobotModel) -> None:
        """Re-apply the payloads and build the scene of a new model (ValueError: reject)."""
        reapply_payloads(model, self._payloads, self.get_logger())
        scene = RobotScene(model, parse_visuals(self._xml_being_built,
                                                search_paths=self.search_paths))
        for note in scene.notes:
            self.get_logger().warning(note)
        with self._lock:
            self._pending_scene = scene
            self._q0 = None
            self._dirty = True

    def set_payload_callback(self, request: Any, response: Any) -> Any:
        """Answer ~/set_payload: attach (mass > 0) or remove (mass = 0) a drawn payload."""
        model = self.source.model
        if model is None:
            response.success, response.message = False, 'no robot model yet'
            return response
        try:
            response.message = apply_payload_request(model, self._payloads, request)
            response.success = True
            with self._lock:
                self._dirty = True
        except ValueError as error:
            response.success, response.message = False, str(error)
            self.get_logger().warning('set_payload: %s' % error)
        return response

    # ------------------------------------------------------------------ inputs
    def _warn(self, kind: str, message: str) -> None:
        """Log a warning at most once per LOG_PERIOD per kind."""
        now = time.monotonic()
        if now - self._last_warning.get(kind, -math.inf) >= LOG_PERIOD:
            self._last_warning[kind] = now
            self.get_logger().warning(message)

    def _ordered(self, msg: JointState, values: Any, what: str) -> np.ndarray | None:
        """Return message values in model order, or None (logged) when they do not fit."""
        model = self.source.model
        if model is None:
            return None
        try:
            return model.to_model_order(msg.name, values, what=what, allow_extra=True)
        except ValueError as error:
            # one throttle per kind of problem: the message without its numbers and names
            kind = re.sub(r"'[^']*'|[-+.\d]+(e[-+]?\d+)?", '#', str(error))
            self._warn(what + kind, 'ignored a message: %s' % error)
            return None

    def _observe(self, base: str) -> None:
        """Subscribe the observer's torques, wrench and contact flag under ``base``."""
        self.create_subscription(JointState, base + '/external_torques',
                                 self.external_torques_callback, TOPIC_QOS)
        self.create_subscription(WrenchStamped, base + '/external_wrench',
                                 self.wrench_callback, TOPIC_QOS)
        try:
            from manip_dynamics_interfaces.msg import Contact
        except ImportError:
            self.get_logger().info('manip_dynamics_interfaces has no Contact message in this '
                                   'build: the contact flag is not shown')
        else:
            self.create_subscription(Contact, base + '/contact', self.contact_callback,
                                     TOPIC_QOS)

    def joint_states_callback(self, msg: JointState) -> None:
        """Store the latest joint positions."""
        q = self._ordered(msg, msg.position, 'positions')
        if q is None:
            return
        if not np.all(np.isfinite(q)):
            self._warn('positions not finite', 'ignored a message: joint positions with NaN or '
                       'inf')
            return
        stamp = msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec
        now = time.monotonic()
        with self._lock:
            if self._q0 is None or stamp < self._stamp - 1e-9:  # first message, or a reset
                self._q0 = q.copy()
                self._rate_window.clear()
            self._q, self._stamp = q, stamp
            self._rate_window.append((now, stamp))
            self._rate_window = [w for w in self._rate_window if now - w[0] <= 2.0]
            self._received += 1
            self._dirty = True

    def external_torques_callback(self, msg: JointState) -> None:
        """Store the observer's external-torque estimate (JointState effort)."""
        tau = self._ordered(msg, msg.effort, 'efforts')
        if tau is not None and not np.all(np.isfinite(tau)):
            self._warn('efforts', 'ignored external torques with NaN or inf')
        elif tau is not None:
            with self._lock:
                self._external = (time.monotonic(), tau)
                self._dirty = True

    def wrench_callback(self, msg: WrenchStamped) -> None:
        """Store the observer's estimated wrench (force part drawn)."""
        f = msg.wrench.force
        force = np.array([f.x, f.y, f.z])
        if not np.all(np.isfinite(force)):
            self._warn('wrench', 'ignored a wrench with NaN or inf')
            return
        with self._lock:
            self._wrench = (time.monotonic(), msg.header.frame_id, force)
            self._dirty = True

    def contact_callback(self, msg: Any) -> None:
        """Store the observer's contact decision."""
        with self._lock:
            self._contact = (time.monotonic(), bool(msg.contact), str(msg.strongest_joint))
            self._dirty = True

    # ------------------------------------------------------------------ drawing
    def draw_callback(self) -> None:
        """Redraw the page when something changed (at most ``rate`` times per second)."""
        with self._lock:
            if not self._dirty:
                return
            if self._scene is not None and self._pending_scene is None \
                    and self.view.client_count == 0:
                return  # nobody looks: draw when a browser connects (the state stays dirty)
            self._dirty = False
            pending, self._pending_scene = self._pending_scene, None
            q, q0, stamp = self._q, self._q0, self._stamp
            window = list(self._rate_window)
            now = time.monotonic()
            external = (self._external[1] if self._external is not None
                        and now - self._external[0] <= self.stale_after else None)
            wrench = (self._wrench if self._wrench is not None
                      and now - self._wrench[0] <= self.stale_after else None)
            contact = (self._contact if self._contact is not None
                       and now - self._contact[0] <= self.stale_after else None)
        try:
            if pending is not None:
                self._scene = pending
                self.view.show(pending, q if q is not None and len(q) == pending.model.dof
                               else None)
            scene = self._scene
            if scene is None:
                return
            model = scene.model
            if q is None or len(q) != model.dof:
                self.view.set_status([('robot', '%s, %d joints' % (model.name, model.dof))],
                                     title='waiting for /joint_states ...')
                return
            g = model.gravity_torques(q)
            wrench_arg = None
            if wrench is not None:
                # axes: the frame_id when it names a link ('world', '': the root's axes);
                # point: wrench_link, else that link unless it is the root, else the tip
                frame = wrench[1] if wrench[1] in model.link_names else None
                link = (self.wrench_link or (frame if frame != model.root_link else None)
                        or model.tip_link or model.link_names[-1])
                wrench_arg = (link, wrench[2], frame)
            if external is not None and len(external) != model.dof:
                external = None
            self.view.update(q, gravity=g, external=external, wrench=wrench_arg,
                             contact=None if contact is None else contact[1])
            self.view.set_status(self._status_rows(model, q, q0, stamp, window, g, external,
                                                   wrench_arg, contact),
                                 title='%s (live from /joint_states)' % model.name)
        except ValueError as error:
            self._warn('draw', 'cannot draw: %s' % error)

    def _status_rows(self, model: RobotModel, q: np.ndarray, q0: np.ndarray | None,
                     stamp: float, window: list, g: np.ndarray, external: np.ndarray | None,
                     wrench: tuple | None, contact: tuple | None) -> list[tuple[str, str]]:
        """Return the panel rows: the status line's numbers plus the observer's."""
        names = model.joint_names
        rtf = float('nan')
        if len(window) >= 2 and window[-1][0] > window[0][0]:
            rtf = (window[-1][1] - window[0][1]) / (window[-1][0] - window[0][0])
        drift = np.abs(q - (q0 if q0 is not None else q))
        i, k = int(np.argmax(drift)), int(np.argmax(np.abs(g)))
        rows = [('t (joint_states)', '%.3f s' % stamp),
                ('real-time factor', '%.2f' % rtf if math.isfinite(rtf) else '-'),
                ('max drift', '%.2e rad (%s)' % (drift[i], names[i])),
                ('max abs(g)', '%.2f N m (%s)' % (abs(g[k]), names[k])),
                ('payloads', ', '.join('%s %.3g kg' % (link, m) for link, (m, _, _)
                                       in sorted(model.payloads.items())) or 'none')]
        if external is not None:
            j = int(np.argmax(np.abs(external)))
            rows.append(('max external torque', '%.2f N m (%s)' % (abs(external[j]),
                                                                   names[j])))
        else:
            rows.append(('external torque', 'no observer'))
        if wrench is not None:
            force = float(np.linalg.norm(wrench[1]))
            rows.append(('estimated force', '%.1f N at %s' % (force, wrench[0])))
        if contact is not None:
            rows.append(('contact', '**YES** (%s)' % contact[2] if contact[1] else 'no'))
        return rows

    def destroy_node(self) -> None:
        """
        Stop the web server (when it started), then the node.

        Kilted's rclpy destroys every node of a context at its shutdown, also one whose
        start failed before the web server existed (viser missing, port taken).
        """
        view = getattr(self, 'view', None)
        if view is not None:
            view.close()
        super().destroy_node()


def main(args: list[str] | None = None) -> int:
    """
    Run the viewer node until SIGINT, SIGTERM or an external shutdown.

    :func:`~manip_dynamics.ros.runtime.node_runtime.run_node` prepares the kernels first, spins one
    thread, and stops cleanly (exit 0) whatever the number of signals.

    :param args: Command-line arguments (ROS arguments included); default ``sys.argv``.
    :return: Exit code: 0 after a normal shutdown, 1 on unusable start-up parameters.
    """
    return run_node(NODE_NAME, ViewerNode, args, STARTUP_ERRORS, report_startup_error)


if __name__ == '__main__':
    sys.exit(main())
