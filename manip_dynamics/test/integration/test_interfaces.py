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
Introspect the generated manip_dynamics_interfaces service types.

The equivalent of `ros2 interface show`: import the generated Python classes, compare their
fields and types with the contract in srv/*.srv, and round-trip a message through the C type
support (serialize and deserialize) to prove the compiled libraries load.

Skipped with a reason when the interfaces package has not been built; scripts/test.sh sets
MANIP_DYNAMICS_REQUIRE_INTERFACES=1 so that `make test` fails instead of skipping.
"""

import math
import os
import re

import pytest
from ros_test_support import require_interfaces

PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SRV_DIR = os.path.join(os.path.dirname(PACKAGE_ROOT), 'manip_dynamics_interfaces', 'srv')

STATE_FIELDS = {
    'joint_names': 'sequence<string>',
    'positions': 'sequence<double>',
    'velocities': 'sequence<double>',
}
STATUS_FIELDS = {'success': 'boolean', 'message': 'string'}

# service name -> (request fields, response fields), as docs/ROS_API.md specifies them.
EXPECTED = {
    'InverseDynamics': (
        {**STATE_FIELDS,
         'accelerations': 'sequence<double>',
         'external_wrenches': 'sequence<geometry_msgs/WrenchStamped>',
         'include_friction': 'boolean',
         'include_armature': 'boolean'},
        {**STATUS_FIELDS, 'joint_names': 'sequence<string>', 'efforts': 'sequence<double>'},
    ),
    'ForwardDynamics': (
        {**STATE_FIELDS,
         'efforts': 'sequence<double>',
         'external_wrenches': 'sequence<geometry_msgs/WrenchStamped>',
         'include_friction': 'boolean',
         'include_armature': 'boolean'},
        {**STATUS_FIELDS, 'joint_names': 'sequence<string>',
         'accelerations': 'sequence<double>'},
    ),
    'GetDynamicsTerms': (
        dict(STATE_FIELDS),
        {**STATUS_FIELDS, 'joint_names': 'sequence<string>',
         'mass_matrix': 'sequence<double>', 'coriolis_matrix': 'sequence<double>',
         'coriolis_torques': 'sequence<double>', 'gravity_torques': 'sequence<double>'},
    ),
    'GetCartesianDynamics': (
        {'link': 'string', 'reference_frame': 'string', 'directions': 'sequence<string>',
         **STATE_FIELDS},
        {**STATUS_FIELDS, 'jacobian': 'sequence<double>', 'mass_matrix': 'sequence<double>',
         'velocity_term': 'sequence<double>', 'gravity_term': 'sequence<double>',
         'near_singular': 'boolean', 'min_singular_value': 'double',
         'directions': 'sequence<string>', 'joint_names': 'sequence<string>'},
    ),
    'ComputeTrajectoryEfforts': (
        {'trajectory': 'trajectory_msgs/JointTrajectory', 'include_friction': 'boolean'},
        {**STATUS_FIELDS, 'trajectory': 'trajectory_msgs/JointTrajectory',
         'peak_efforts': 'sequence<double>', 'within_limits': 'sequence<boolean>',
         'effort_limits': 'sequence<double>', 'feasible': 'boolean'},
    ),
    'RetimeTrajectory': (
        {'waypoints': 'trajectory_msgs/JointTrajectory',
         'acceleration_limits': 'sequence<double>', 'velocity_scale': 'double',
         'acceleration_scale': 'double', 'effort_scale': 'double', 'rate': 'double',
         'efforts': 'string'},
        {**STATUS_FIELDS, 'trajectory': 'trajectory_msgs/JointTrajectory',
         'duration': 'double', 'waypoint_times': 'sequence<double>',
         'peak_velocity': 'double', 'peak_acceleration': 'double', 'peak_effort': 'double'},
    ),
    'SetPayload': (
        {'link': 'string', 'mass': 'double', 'center_of_mass': 'geometry_msgs/Point',
         'ixx': 'double', 'ixy': 'double', 'ixz': 'double', 'iyy': 'double', 'iyz': 'double',
         'izz': 'double'},
        dict(STATUS_FIELDS),
    ),
    'ApplyWrench': (
        {'link': 'string', 'wrench': 'geometry_msgs/Wrench', 'frame': 'string',
         'duration': 'double'},
        {**STATUS_FIELDS, 'start_time': 'double', 'end_time': 'double'},
    ),
    'EstimatePayload': (
        {'link': 'string', 'window_seconds': 'double', 'apply': 'boolean'},
        {**STATUS_FIELDS, 'mass': 'double', 'center_of_mass': 'geometry_msgs/Point',
         'ixx': 'double', 'ixy': 'double', 'ixz': 'double', 'iyy': 'double', 'iyz': 'double',
         'izz': 'double', 'samples': 'uint32', 'inertia_estimated': 'boolean',
         'residual_rms': 'sequence<double>'},
    ),
}


@pytest.mark.parametrize('service', sorted(EXPECTED))
def test_service_fields(service: str) -> None:
    """Check the request and response fields and types of one generated service."""
    module = require_interfaces()
    srv_type = getattr(module, service)
    expected_request, expected_response = EXPECTED[service]
    assert srv_type.Request.get_fields_and_field_types() == expected_request
    assert srv_type.Response.get_fields_and_field_types() == expected_response


def test_defaults_are_empty_and_false() -> None:
    """Check default-constructed messages: empty arrays, false flags, zero numbers."""
    module = require_interfaces()
    request = module.InverseDynamics.Request()
    assert list(request.joint_names) == []
    assert len(request.positions) == 0
    assert list(request.external_wrenches) == []
    assert request.include_friction is False
    response = module.GetCartesianDynamics.Response()
    assert response.success is False
    assert response.message == ''
    assert response.min_singular_value == 0.0
    payload = module.SetPayload.Request()
    assert payload.mass == 0.0
    assert payload.center_of_mass.x == 0.0


def test_round_trip_through_type_support() -> None:
    """Serialize and deserialize filled messages through the compiled C type support."""
    module = require_interfaces()
    serialization = pytest.importorskip('rclpy.serialization', reason='rclpy not installed')
    geometry_msgs = pytest.importorskip('geometry_msgs.msg', reason='geometry_msgs missing')
    trajectory_msgs = pytest.importorskip('trajectory_msgs.msg',
                                          reason='trajectory_msgs missing')

    request = module.InverseDynamics.Request()
    request.joint_names = ['shoulder', 'elbow']
    request.positions = [0.5, -1.25]
    request.velocities = [0.0, 2.0]
    request.accelerations = [1.0, 0.0]
    wrench = geometry_msgs.WrenchStamped()
    wrench.header.frame_id = 'tool0'
    wrench.wrench.force.z = -9.81
    request.external_wrenches = [wrench]
    request.include_friction = True
    copy = serialization.deserialize_message(
        serialization.serialize_message(request), module.InverseDynamics.Request)
    assert list(copy.joint_names) == ['shoulder', 'elbow']
    assert list(copy.positions) == [0.5, -1.25]
    assert list(copy.velocities) == [0.0, 2.0]
    assert copy.external_wrenches[0].header.frame_id == 'tool0'
    assert copy.external_wrenches[0].wrench.force.z == -9.81
    assert copy.include_friction is True

    response = module.ComputeTrajectoryEfforts.Response()
    response.trajectory.joint_names = ['j1']
    point = trajectory_msgs.JointTrajectoryPoint()
    point.positions = [0.1]
    point.effort = [3.5]
    response.trajectory.points = [point]
    response.peak_efforts = [3.5]
    response.within_limits = [True]
    response.effort_limits = [math.inf]
    response.feasible = True
    response.success = True
    copy = serialization.deserialize_message(
        serialization.serialize_message(response), module.ComputeTrajectoryEfforts.Response)
    assert list(copy.trajectory.points[0].effort) == [3.5]
    assert list(copy.within_limits) == [True]
    assert math.isinf(copy.effort_limits[0])
    assert copy.feasible is True


def _srv_files() -> list[str]:
    """
    List the .srv files of the interfaces package source.

    :return: Absolute paths, sorted; empty when the source folder is not next to this package.
    """
    if not os.path.isdir(SRV_DIR):
        return []
    return sorted(os.path.join(SRV_DIR, name) for name in os.listdir(SRV_DIR)
                  if name.endswith('.srv'))


def test_every_srv_field_is_commented() -> None:
    """Check that each field of each .srv file has a comment line right above it."""
    files = _srv_files()
    if not files:
        pytest.skip('manip_dynamics_interfaces/srv not found next to manip_dynamics')
    assert sorted(os.path.basename(path)[:-4] for path in files) == sorted(EXPECTED)
    field_line = re.compile(r'^[A-Za-z][\w/]*(\[\d*\])?\s+\w+')
    uncommented = []
    for path in files:
        with open(path, encoding='utf-8') as stream:
            lines = [line.rstrip() for line in stream]
        for number, line in enumerate(lines):
            if field_line.match(line) and (number == 0 or not lines[number - 1].startswith('#')):
                uncommented.append('%s:%d: %s' % (os.path.basename(path), number + 1, line))
    assert not uncommented, 'fields without a comment:\n' + '\n'.join(uncommented)
