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

"""dynamics_node's ``~/torque_markers``: each joint's gravity torque as RViz markers."""

from builtin_interfaces.msg import Time
from geometry_msgs.msg import Point
import numpy as np
from numpy.typing import NDArray
from visualization_msgs.msg import Marker, MarkerArray

from manip_dynamics.robot_model import RobotModel


def torque_markers(model: RobotModel, gravity: NDArray[np.float64], scale: float) -> MarkerArray:
    """
    Build one arrow and one text per joint showing its gravity torque.

    Each marker is in the joint's child link frame (frame_id = link name, stamp zero so
    RViz uses the newest transform from robot_state_publisher). The arrow lies along the
    joint axis, pointing where the torque acts, ``scale`` m per N m (or per N).

    :param model: The robot model.
    :param gravity: g(q) in model order [N m | N], shape (n,).
    :param scale: Arrow length per unit of torque [m / (N m) or m / N].
    :return: The marker array (2 n markers).
    """
    out = MarkerArray()
    for i, joint in enumerate(model.tree.joints):
        tau = float(gravity[i])
        unit = 'N' if joint.kind == 'prismatic' else 'N m'
        axis = np.asarray(joint.axis, dtype=np.float64)
        arrow = Marker()
        arrow.header.frame_id = joint.child_link
        arrow.header.stamp = Time()
        arrow.ns = 'gravity_torque'
        arrow.id = i
        arrow.type = Marker.ARROW
        arrow.action = Marker.ADD
        arrow.pose.orientation.w = 1.0
        tip = axis * tau * scale
        arrow.points = [Point(), Point(x=float(tip[0]), y=float(tip[1]), z=float(tip[2]))]
        arrow.scale.x, arrow.scale.y, arrow.scale.z = 0.01, 0.02, 0.02
        arrow.color.a = 1.0
        rgb = (0.1, 0.8, 0.1) if tau >= 0.0 else (0.9, 0.2, 0.1)
        arrow.color.r, arrow.color.g, arrow.color.b = rgb
        text = Marker()
        text.header = arrow.header
        text.ns = 'gravity_torque_text'
        text.id = i
        text.type = Marker.TEXT_VIEW_FACING
        text.action = Marker.ADD
        text.pose.position.x, text.pose.position.y, text.pose.position.z = (
            float(v) for v in tip + np.array([0.0, 0.0, 0.05]))
        text.pose.orientation.w = 1.0
        text.scale.z = 0.04
        text.color.r = text.color.g = text.color.b = text.color.a = 1.0
        text.text = '%s: %.2f %s' % (joint.name, tau, unit)
        out.markers.extend([arrow, text])
    return out
