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
The QoS profiles the nodes share: one declaration per stream.

* :data:`JOINT_STATES_QOS`: ``/joint_states`` and other per-sample state streams read for
  their newest sample (best effort matches reliable and best-effort publishers alike; keep
  the newest only: after a stall a node answers the newest sample, never a queue of old
  ones, each answer being for a state the arm has left).
* :data:`COMMANDS_QOS`: effort commands (``/<controller>/commands``), as ros2_controllers'
  forward-command controllers subscribe and publish them.
* :data:`CONTACT_QOS`: the observer's ``~/contact`` on both ends. The observer publishes it
  once per batch of joint states and at every change of the flag, so a brief contact is one
  raised message between lowered ones; the nodes that stop a motion on it take it on a lane
  that waits while the node's executor callbacks run (a goal callback took up to 0.33 s of
  wall time with a busy core). With ten messages kept, 20 ms at 500 Hz, the raised one is
  overwritten before it is read (test_contact_qos.py; the likely way a push flagged for 8 ms
  once did not stop its goal). The depth keeps every message that can still be acted on:
  :data:`CONTACT_DEPTH` covers ``MAX_CONTACT_AGE`` at :data:`MAX_CONTACT_RATE`.
* :data:`SERVICE_QOS`: dynamics_node's services. rclpy's default keeps the last 10 requests:
  more than 10 clients calling while the node works on one long request (a large
  trajectory) would overwrite the oldest waiting requests, which are then never answered.
  Keeping 1000 bounds the memory and drops nothing at any realistic number of clients.
  (Calls lost by a client stalled under load are lost in that client's own reader:
  docs/ROS_API.md says which client QoS avoids it.)
"""

import math

from rclpy.qos import QoSProfile, ReliabilityPolicy

from manip_dynamics.observers import MAX_CONTACT_AGE

#: Rate the contact depth is sized for [Hz]: the observer publishes once per joint state
#: at most, and the suite's joint states come at 1 kHz at most (simulator_node's default
#: ``rate``; controller_manager at 500 Hz behind control.launch.py): twice that, for margin.
MAX_CONTACT_RATE = 2000.0

#: Contact messages kept per subscription and per publisher: every message stamped within
#: ``MAX_CONTACT_AGE`` at :data:`MAX_CONTACT_RATE` (an older flag is not acted on anyway).
CONTACT_DEPTH = int(math.ceil(MAX_CONTACT_AGE * MAX_CONTACT_RATE))

JOINT_STATES_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT)
COMMANDS_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
CONTACT_QOS = QoSProfile(depth=CONTACT_DEPTH, reliability=ReliabilityPolicy.RELIABLE)
SERVICE_QOS = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
