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
Check both package.xml files with catkin_pkg, the parser colcon and rosdep use.

Also checks that the dependencies issue 3 asks for are declared and that setup.py and
package.xml agree on the package name and version.
"""

import os
import re

import pytest

PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INTERFACES_ROOT = os.path.join(os.path.dirname(PACKAGE_ROOT), 'manip_dynamics_interfaces')

REQUIRED_DEPENDS = {
    'rclpy', 'std_msgs', 'std_srvs', 'sensor_msgs', 'geometry_msgs', 'trajectory_msgs',
    'visualization_msgs', 'rosgraph_msgs', 'manip_dynamics_interfaces', 'urdfdom_py',
    'python3-numpy', 'python3-scipy', 'python3-numba',
}
REQUIRED_EXEC_DEPENDS = {'robot_state_publisher', 'rviz2', 'ros2launch'}
REQUIRED_TEST_DEPENDS = {'launch_testing', 'launch_testing_ros', 'python3-pytest'}


def _parse(package_dir: str):
    """
    Parse and validate a package.xml with catkin_pkg.

    :param package_dir: Folder holding the package.xml.
    :return: The catkin_pkg Package object.
    :raises catkin_pkg.package.InvalidPackage: When the manifest is invalid.
    """
    package_module = pytest.importorskip('catkin_pkg.package', reason='catkin_pkg not installed')
    package = package_module.parse_package(os.path.join(package_dir, 'package.xml'))
    package.validate()
    return package


def _names(dependencies) -> set[str]:
    """
    Return the names of catkin_pkg dependency objects.

    :param dependencies: Iterable of catkin_pkg Dependency objects.
    :return: Their names.
    """
    return {dependency.name for dependency in dependencies}


@pytest.mark.linter
def test_manip_dynamics_package_xml() -> None:
    """Check the Python package's manifest: format, build type and dependencies."""
    package = _parse(PACKAGE_ROOT)
    assert package.name == 'manip_dynamics'
    assert package.package_format == 3
    assert package.get_build_type() == 'ament_python'
    assert package.licenses == ['Apache-2.0']
    runtime = _names(package.exec_depends)
    missing = (REQUIRED_DEPENDS - runtime) | (REQUIRED_EXEC_DEPENDS - runtime)
    assert not missing, 'package.xml lacks run dependencies: %s' % sorted(missing)
    missing_test = REQUIRED_TEST_DEPENDS - _names(package.test_depends)
    assert not missing_test, 'package.xml lacks test dependencies: %s' % sorted(missing_test)


@pytest.mark.linter
def test_setup_py_matches_package_xml() -> None:
    """Check that setup.py declares the same name and version as package.xml."""
    package = _parse(PACKAGE_ROOT)
    with open(os.path.join(PACKAGE_ROOT, 'setup.py'), encoding='utf-8') as stream:
        setup_py = stream.read()
    name = re.search(r"^package_name = '([^']+)'", setup_py, re.MULTILINE)
    version = re.search(r"version='([^']+)'", setup_py)
    assert name is not None and name.group(1) == package.name
    assert version is not None and version.group(1) == package.version
    marker = os.path.join(PACKAGE_ROOT, 'resource', package.name)
    assert os.path.isfile(marker), 'resource/%s marker (ament index) is missing' % package.name


@pytest.mark.linter
def test_interfaces_package_xml() -> None:
    """Check the interfaces package's manifest: ament_cmake, rosidl, format 3."""
    if not os.path.isfile(os.path.join(INTERFACES_ROOT, 'package.xml')):
        pytest.skip('manip_dynamics_interfaces source folder not next to manip_dynamics')
    package = _parse(INTERFACES_ROOT)
    assert package.name == 'manip_dynamics_interfaces'
    assert package.package_format == 3
    assert package.get_build_type() == 'ament_cmake'
    assert 'rosidl_interface_packages' in [group.name for group in package.member_of_groups]
    assert 'rosidl_default_generators' in _names(package.buildtool_depends)
    assert 'rosidl_default_runtime' in _names(package.exec_depends)
    assert {'geometry_msgs', 'trajectory_msgs'} <= _names(package.build_depends)
