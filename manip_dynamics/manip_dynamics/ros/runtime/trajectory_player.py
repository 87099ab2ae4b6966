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
Publish a trajectory_msgs/JointTrajectory read from a YAML file, once.

What ``manip-dynamics identify play`` runs. ``ros2 topic pub`` takes the message on its
command line, and one argument is capped at 128 KiB (``Argument list too long``), while an
excitation trajectory of ``identify excite`` is close to 1 MB: this reads the file, checks
it (names, lengths, finite numbers, increasing times), waits for a subscriber (e.g.
joint_trajectory_controller's ``~/joint_trajectory``), publishes one reliable message and
waits until the subscribers have acknowledged it.
"""

from collections.abc import Mapping
import math
import time
from typing import Any

from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from manip_dynamics.ros.runtime.conversions import time_msg

#: Fields of a point that carry one value per joint (``effort`` may also be empty).
_POINT_FIELDS = ('positions', 'velocities', 'accelerations', 'effort')


def _seconds(value: Any, where: str) -> float:
    """Return a ``time_from_start`` ({sec, nanosec} or a number of seconds) in seconds."""
    if isinstance(value, Mapping):
        sec, nanosec = value.get('sec', 0), value.get('nanosec', 0)
        if not (isinstance(sec, int) and isinstance(nanosec, int)
                and 0 <= nanosec < 1_000_000_000):
            raise ValueError('%s: time_from_start must have integer sec and nanosec in '
                             '[0, 1e9), got %r' % (where, dict(value)))
        return sec + 1e-9 * nanosec
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    raise ValueError('%s: time_from_start must be {sec, nanosec} or seconds, got %r'
                     % (where, value))


def trajectory_from_document(doc: Any) -> JointTrajectory:
    """
    Build a JointTrajectory from its YAML fields, as ``ros2 topic pub`` would, checked.

    :param doc: The parsed YAML: ``joint_names`` and ``points`` (each with ``positions`` and
        optionally ``velocities``, ``accelerations``, ``effort``, one value per joint, and
        ``time_from_start``); ``header`` is ignored (the stamp is left zero: start now).
    :return: The message.
    :raises ValueError: A missing or malformed field, named with its point index.
    """
    if not isinstance(doc, Mapping):
        raise ValueError('expected a JointTrajectory mapping (joint_names, points), got %s'
                         % type(doc).__name__)
    names = doc.get('joint_names')
    if (not isinstance(names, list) or not names
            or not all(isinstance(n, str) and n for n in names)):
        raise ValueError('joint_names must be a non-empty list of joint names')
    if len(set(names)) != len(names):
        raise ValueError('joint_names names a joint twice: %s' % names)
    points = doc.get('points')
    if not isinstance(points, list) or not points:
        raise ValueError('points must be a non-empty list')
    msg = JointTrajectory()
    msg.joint_names = list(names)
    last = -math.inf
    for k, raw in enumerate(points):
        where = 'point %d' % k
        if not isinstance(raw, Mapping):
            raise ValueError('%s is not a mapping' % where)
        point = JointTrajectoryPoint()
        for field in _POINT_FIELDS:
            values = raw.get(field) or []
            if field == 'positions' and not values:
                raise ValueError('%s has no positions' % where)
            if values and len(values) != len(names):
                raise ValueError('%s: %s has %d values for %d joints'
                                 % (where, field, len(values), len(names)))
            try:
                floats = [float(v) for v in values]
            except (TypeError, ValueError):
                raise ValueError('%s: %s must be numbers' % (where, field)) from None
            if not all(math.isfinite(v) for v in floats):
                raise ValueError('%s: %s has NaN or inf' % (where, field))
            setattr(point, field, floats)
        t = _seconds(raw.get('time_from_start', 0), where)
        if not (math.isfinite(t) and t >= 0.0 and t > last):
            raise ValueError('%s: time_from_start %.9g s must be >= 0 and after the point '
                             'before (%.9g s)' % (where, t, last))
        last = t
        stamp = time_msg(t)
        point.time_from_start.sec, point.time_from_start.nanosec = stamp.sec, stamp.nanosec
        msg.points.append(point)
    return msg


def publish_once(msg: JointTrajectory, topic: str, *, wait: float = 10.0,
                 node_name: str = 'trajectory_player') -> int:
    """
    Publish ``msg`` once on ``topic`` after a subscriber appears; wait for its acknowledgement.

    Initialises and shuts down rclpy itself (a command-line front end).

    :param msg: The trajectory.
    :param topic: Topic name, e.g. ``/joint_trajectory_controller/joint_trajectory``.
    :param wait: Seconds to wait for a subscriber, then for the acknowledgement [s].
    :param node_name: Name of the short-lived publishing node.
    :return: The number of subscribers it was published to.
    :raises TimeoutError: No subscriber within ``wait`` seconds, or no acknowledgement.
    """
    import rclpy
    from rclpy.duration import Duration
    from rclpy.qos import QoSProfile, ReliabilityPolicy

    rclpy.init(args=[])
    try:
        node = rclpy.create_node(node_name)
        try:
            qos = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE)
            pub = node.create_publisher(JointTrajectory, topic, qos)
            deadline = time.monotonic() + wait
            while pub.get_subscription_count() == 0:
                if time.monotonic() > deadline:
                    raise TimeoutError('no subscriber on %s within %g s (is the controller '
                                       'running? --topic names another)' % (topic, wait))
                time.sleep(0.05)
            time.sleep(0.2)  # let discovery finish on the subscriber's side too
            subscribers = pub.get_subscription_count()
            pub.publish(msg)
            if not pub.wait_for_all_acked(Duration(seconds=wait)):
                raise TimeoutError('the trajectory on %s was not acknowledged within %g s'
                                   % (topic, wait))
            return subscribers
        finally:
            node.destroy_node()
    finally:
        rclpy.try_shutdown()
