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
Where a node's robot model comes from: the ``robot_description`` parameter or topic.

When the parameter holds URDF text, the model is built from it once at start-up and the
topic is not used. When it is empty, the node subscribes to ``/robot_description``
(std_msgs/String, reliable, transient local, depth 1: the QoS robot_state_publisher
publishes with, so a late subscriber still gets the last description) and (re)builds its
model whenever a new description arrives. A description that does not load, or that the
node rejects, is logged and the previous model is kept.
"""

from collections.abc import Callable
import threading

from rclpy.callback_groups import CallbackGroup
from rclpy.clock import Clock as RosClock, ClockType
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import String

from manip_dynamics.model.urdf_loader import precheck_urdf
from manip_dynamics.precompile import warm_up
from manip_dynamics.robot_model import RobotModel
from manip_dynamics.ros.runtime.joint_dynamics_parameters import (
    apply_joint_dynamics, joint_dynamics_overrides)
from manip_dynamics.ros.runtime.names import ROBOT_DESCRIPTION
from manip_dynamics.ros.runtime.parameter_spec import NodeParameters
from manip_dynamics.ros.runtime.startup import StartupError

#: How often the executor looks for a model built on the worker thread [s].
RESULT_POLL_PERIOD = 0.05

#: QoS of /robot_description (as robot_state_publisher offers it).
ROBOT_DESCRIPTION_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                                   durability=DurabilityPolicy.TRANSIENT_LOCAL)

#: The answer of every service before a model exists.
NO_MODEL_MESSAGE = ('no robot model yet: set the robot_description parameter or publish the '
                    'robot_description topic')


ModelBuilder = Callable[[str], RobotModel]
ModelAccepted = Callable[[RobotModel], None]


class RobotDescriptionSource:
    """
    Hold a node's current :class:`RobotModel` built from a parameter or a topic.

    A description from the topic is first checked where it costs little (size, XML parse,
    link count: :func:`manip_dynamics.model.precheck_urdf`, bounds in the parameters
    ``robot_description_max_bytes`` and ``robot_description_max_links``), then built and
    warmed up on a worker thread, off the control loop: until the new model is ready the
    node keeps working with the old one. The finished model is vetted (``on_model``) and
    installed on the executor's thread (a guard condition), so node state is only ever
    changed there. The model reference is swapped atomically; read :attr:`model` once per
    callback and use that object.
    """

    def __init__(self, node: Node, urdf: str, build: ModelBuilder,
                 on_model: ModelAccepted | None = None,
                 callback_group: CallbackGroup | None = None) -> None:
        """
        Build the model from ``urdf`` now, or subscribe to ``/robot_description``.

        :param node: The node that owns the subscription and logs.
        :param urdf: The ``robot_description`` parameter value; empty = use the topic.
        :param build: URDF text -> model (root_link, tip_link, gravity already bound);
            raises ValueError on a bad description.
        :param on_model: Called with a freshly built model before it becomes current; may
            raise ValueError to reject it (e.g. a payload or command joint it lacks), or
            finish setting it up (re-apply payloads).
        :param callback_group: Group of the topic subscription.
        :raises ValueError: The parameter's URDF does not load or is rejected (start-up
            error: the caller exits).
        """
        self._node = node
        self._build = build
        self._on_model = on_model
        self._lock = threading.Lock()
        self._model: RobotModel | None = None
        self._urdf: str | None = None
        # declared with the node's MODEL parameters
        self.max_bytes = node.get_parameter('robot_description_max_bytes').value
        self.max_links = node.get_parameter('robot_description_max_links').value
        # worker state: the description being built, the next one waiting, the result
        self._building = False
        self._waiting: str | None = None
        self._result: tuple[str, RobotModel | None, Exception | None] | None = None
        self.subscription = None
        self._ready = None
        self.from_parameter = bool(urdf.strip())
        if self.from_parameter:
            precheck_urdf(urdf, max_bytes=self.max_bytes, max_links=self.max_links)
            self._install(urdf, self._build_and_warm(urdf))
            node.get_logger().info('robot model %r from the robot_description parameter: %d '
                                   'joints %s' % (self._model.name, self._model.dof,
                                                  list(self._model.joint_names)))
            for warning in self._model.warnings:
                node.get_logger().warning('URDF: %s' % warning)
        else:
            # the worker's result is picked up on the executor's thread by a steady timer
            # (rclpy's EventsExecutor, which the nodes spin on, has no guard conditions)
            self._ready = node.create_timer(
                RESULT_POLL_PERIOD, self._finish_build, callback_group=callback_group,
                clock=RosClock(clock_type=ClockType.STEADY_TIME))
            self.subscription = node.create_subscription(
                String, ROBOT_DESCRIPTION, self.description_callback,
                ROBOT_DESCRIPTION_QOS, callback_group=callback_group)
            node.get_logger().info('robot_description parameter is empty: waiting for %s'
                                   % self.subscription.topic_name)

    @property
    def model(self) -> RobotModel | None:
        """Return the current model, or None before the first good description."""
        return self._model

    @property
    def building(self) -> bool:
        """Return whether a description is being built on the worker thread."""
        return self._building

    def _build_and_warm(self, urdf: str) -> RobotModel:
        """Build a model and compile its kernels (the expensive part; any thread)."""
        model = self._build(urdf)
        warm_up(model)
        return model

    def _install(self, urdf: str, model: RobotModel) -> None:
        """Vet and install a built model; raise ValueError and keep the old one on failure."""
        with self._lock:
            if self._on_model is not None:
                self._on_model(model)
            self._model = model
            self._urdf = urdf

    def _reject(self, error: Exception) -> None:
        kept = ('keeping the previous model %r' % self._model.name
                if self._model is not None else 'still no robot model')
        self._node.get_logger().error('rejected the robot description from %s (%s): %s' % (
            self.subscription.topic_name, kept, error))

    def description_callback(self, msg: String) -> None:
        """Check a /robot_description message cheaply, then build it off the control loop."""
        if msg.data == self._urdf:
            return
        try:
            links = precheck_urdf(msg.data, max_bytes=self.max_bytes, max_links=self.max_links)
        except Exception as error:  # noqa: B902 - a bad URDF must never kill the node
            self._reject(error)
            return
        with self._lock:
            if self._building:
                self._waiting = msg.data  # built when the current one is done
                return
            self._building = True
        self._node.get_logger().info('building the robot model from %s (%d links) while the '
                                     '%s keeps working' % (
                                         self.subscription.topic_name, links,
                                         'previous model' if self._model is not None
                                         else 'node'))
        self._start_worker(msg.data)

    def _start_worker(self, urdf: str) -> None:
        def work() -> None:
            try:
                result = (urdf, self._build_and_warm(urdf), None)
            except Exception as error:  # noqa: B902 - reported on the executor's thread
                result = (urdf, None, error)
            with self._lock:
                self._result = result
        threading.Thread(target=work, name='robot_description_build', daemon=True).start()

    def _finish_build(self) -> None:
        """Install (or reject) the model the worker built; start the next waiting one."""
        with self._lock:
            result, self._result = self._result, None
        if result is None:
            return
        urdf, model, error = result
        if error is None:
            try:
                self._install(urdf, model)
            except Exception as install_error:  # noqa: B902 - never kill the node
                error = install_error
        if error is not None:
            self._reject(error)
        else:
            logger = self._node.get_logger()
            logger.info('robot model %r from %s: %d joints %s' % (
                model.name, self.subscription.topic_name, model.dof, list(model.joint_names)))
            for warning in model.warnings:
                logger.warning('URDF: %s' % warning)
        with self._lock:
            waiting, self._waiting = self._waiting, None
            self._building = waiting is not None and waiting != self._urdf
        if self._building:
            self._start_worker(waiting)


def model_builder(values: NodeParameters) -> tuple[str, ModelBuilder]:
    """
    Return the URDF text and how to build the model, from a node's declared ``MODEL`` values.

    ``robot_description`` (URDF text; empty = the /robot_description topic), ``root_link``
    and ``tip_link`` (empty = the URDF root / the whole tree), ``gravity`` (3 numbers [m/s^2]
    in the root link's frame), ``strict`` (refuse a description with physically suspect data
    instead of logging each model warning once) and the ``joint_dynamics.*`` overrides
    (:mod:`~manip_dynamics.ros.parameters.shared`).

    :param values: The node's parameter values (its table includes ``MODEL``).
    :return: ``(urdf, build)``: the parameter's URDF text and a function URDF text -> model.
    :raises StartupError: joint_dynamics lists of different lengths.
    """
    try:
        joint_dynamics = joint_dynamics_overrides(values)
    except ValueError as error:
        raise StartupError(str(error)) from None
    root, tip = values.root_link or None, values.tip_link or None
    gravity, strict = values.gravity, values.strict

    def build(xml: str) -> RobotModel:
        return apply_joint_dynamics(RobotModel.from_urdf_string(
            xml, root_link=root, tip_link=tip, gravity=gravity, strict=strict),
            joint_dynamics)
    return values.robot_description, build
