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
description_publisher: /robot_description where robot_state_publisher is not running.

robot_state_publisher publishes the description on ``/robot_description`` (std_msgs/String,
reliable, transient local) and every node that follows the topic (the observer, the viewer,
ros2_control's controller_manager on Jazzy) waits for it. Where robot_state_publisher is
not installed, or is switched off (``robot_state_publisher:=false`` in the launch files),
this node publishes the same text with the same QoS, once, and keeps it available to late
subscribers until it is stopped. It publishes no TF (RViz needs robot_state_publisher).

Parameters: ``robot_description`` (string, required; a URDF the suite loads: it is checked
before it is offered, so that a description nobody can use is an error here, at the
start).
"""

import sys
from typing import Any

from std_msgs.msg import String

from manip_dynamics.model import precheck_urdf
from manip_dynamics.ros.runtime.guarded_node import GuardedNode
from manip_dynamics.ros.runtime.names import ROBOT_DESCRIPTION
from manip_dynamics.ros.runtime.node_runtime import run_node
from manip_dynamics.ros.runtime.robot_description import ROBOT_DESCRIPTION_QOS
from manip_dynamics.ros.runtime.startup import report_startup_error, STARTUP_ERRORS, StartupError

#: Node name (also the default of ``-r __node:=``).
NODE_NAME = 'description_publisher'


class DescriptionPublisher(GuardedNode):
    """Publish the ``robot_description`` parameter on /robot_description (transient local)."""

    def __init__(self, **kwargs: Any) -> None:
        """
        Read the parameter, check the text and publish it once.

        :raises StartupError: robot_description is empty, not a URDF or too large.
        """
        super().__init__(NODE_NAME, **kwargs)
        text = self.declare_parameter('robot_description', '').value
        if not isinstance(text, str) or not text.strip():
            raise StartupError('robot_description is empty: pass the URDF text')
        try:
            links = precheck_urdf(text)
        except ValueError as error:
            raise StartupError('robot_description: %s' % error) from None
        self.publisher = self.create_publisher(String, ROBOT_DESCRIPTION,
                                               ROBOT_DESCRIPTION_QOS)
        self.publisher.publish(String(data=text))
        self.get_logger().info('publishing %s (%d links, %d bytes, transient '
                               'local) in place of robot_state_publisher; no TF'
                               % (self.publisher.topic_name, links, len(text.encode('utf-8'))))


def main(args: list[str] | None = None) -> int:
    """
    Run the publisher until Ctrl-C, SIGTERM or an external shutdown (no kernels to prepare).

    :param args: Command-line arguments (ROS arguments included); default ``sys.argv``.
    :return: Exit code: 0 after a normal shutdown, 1 for an unusable robot_description.
    """
    return run_node(NODE_NAME, DescriptionPublisher, args, STARTUP_ERRORS,
                    report_startup_error, prepare=False)


if __name__ == '__main__':
    sys.exit(main())
