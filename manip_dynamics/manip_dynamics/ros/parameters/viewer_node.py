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

"""viewer_node's parameters (docs/ROS_API.md's table is generated from this)."""

from manip_dynamics.ros.parameters.shared import MODEL, OBSERVER_NAMESPACE, PAYLOAD, WRENCH_LINK
from manip_dynamics.ros.parameters.spec import Param
from manip_dynamics.safety.ranges import Range

PARAMETERS = MODEL + (
    Param('port', 'integer', 8080,
          'TCP port of the page on 127.0.0.1 (the next free one when taken; 0: any)',
          valid=Range(0, 65535)),
    Param('redraw_rate', 'double', 30.0, 'Largest redraw rate of the page', unit='Hz',
          valid=Range(0.0, 1000.0, low_open=True)),
    Param('stale_after', 'double', 1.0, 'Hide observer markers older than this (wall time)',
          unit='s', valid=Range(0.0, 3600.0, low_open=True)),
    Param('mesh_search_paths', 'string_array', None,
          'Folders for package:// and relative mesh files, searched after the ament index'),
    OBSERVER_NAMESPACE,
    WRENCH_LINK,
) + PAYLOAD
