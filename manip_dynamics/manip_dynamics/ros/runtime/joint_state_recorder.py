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
Record sensor_msgs/JointState for identification: what ``manip-dynamics identify record`` runs.

Where ``ros2 bag record`` exists it does the same job; on a machine with only the PyPI wheels
(no rosbag2) this subscribes, keeps every message with positions, velocities and efforts for
the joints of the first message, by its header stamp, for a span of the stamps' time (so a
simulated arm's recording spans simulated seconds), and returns an
:class:`~manip_dynamics.identification.data.Recording` that
:func:`~manip_dynamics.identification.data.write_rosbag` writes as a rosbag2.
"""

import time

import numpy as np

from manip_dynamics.errors import InputError
from manip_dynamics.identification.data import checked_recording, Recording


def record_joint_states(topic: str, duration: float, *, wait: float = 10.0,
                        node_name: str = 'joint_state_recorder') -> Recording:
    """
    Record ``duration`` seconds of header-stamp time of ``topic``; rclpy is set up here.

    :param topic: The JointState topic, e.g. ``/joint_states``.
    :param duration: Span of the stamps to record [s], > 0, counted from the first message.
    :param wait: Seconds to wait for the first message, and for the next one afterwards [s].
    :param node_name: Name of the short-lived subscribing node.
    :return: The recording (``t`` from the stamps, 0 at the first; joints in the first
        message's order).
    :raises TimeoutError: No message within ``wait`` seconds (at the start or later).
    :raises InputError: Messages without velocities or efforts, or non-finite values.
    """
    import rclpy
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState

    if not (np.isfinite(duration) and duration > 0.0):
        raise InputError('duration must be > 0 s, got %r' % (duration,))
    rows: list[tuple[int, list, list, list]] = []
    names: list[str] = []

    def keep(msg: JointState) -> None:
        if not names:
            names.extend(msg.name)
        if list(msg.name) != names:
            return   # another publisher's joints: not this recording's
        # integer nanoseconds: epoch seconds in a float lose 0.1 us
        rows.append((msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec,
                     list(msg.position), list(msg.velocity), list(msg.effort)))

    rclpy.init(args=[])
    try:
        node = rclpy.create_node(node_name)
        try:
            node.create_subscription(JointState, topic, keep, QoSProfile(
                depth=1000, reliability=ReliabilityPolicy.RELIABLE))
            last_count, last_time = 0, time.monotonic()
            while not rows or rows[-1][0] - rows[0][0] < duration * 1e9:
                rclpy.spin_once(node, timeout_sec=0.05)
                if len(rows) != last_count:
                    last_count, last_time = len(rows), time.monotonic()
                elif time.monotonic() - last_time > wait:
                    raise TimeoutError('no JointState on %s for %g s (%d recorded)' % (
                        topic, wait, len(rows)))
        finally:
            node.destroy_node()
    finally:
        rclpy.try_shutdown()
    n = len(names)
    if any(len(v) != n or len(e) != n for _, _, v, e in rows):
        raise InputError('the JointState messages on %s need a velocity and an effort per '
                         'joint (identification fits the measured efforts)' % topic)
    t = (np.array([r[0] for r in rows], dtype=np.int64) - rows[0][0]) * 1e-9
    return checked_recording(t, [r[1] for r in rows], [r[2] for r in rows],
                             [r[3] for r in rows], names)
