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

Also checks that the core dependencies are declared, that every module the package imports
is declared (a rosdep key in package.xml, or a pip-only setup.py extra), that no key installs
with pip (rosdep's pip keys fail on Ubuntu 24.04, PEP 668), that the desktop keys are
optional and that setup.py and package.xml agree on the package name and version.
"""

import ast
import os
import re
import sys

import pytest

PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INTERFACES_ROOT = os.path.join(os.path.dirname(PACKAGE_ROOT), 'manip_dynamics_interfaces')

REQUIRED_DEPENDS = {
    'rclpy', 'std_msgs', 'std_srvs', 'sensor_msgs', 'geometry_msgs', 'trajectory_msgs',
    'visualization_msgs', 'rosgraph_msgs', 'manip_dynamics_interfaces', 'urdfdom_py',
    'python3-numpy', 'python3-scipy', 'python3-numba',
}
REQUIRED_EXEC_DEPENDS = {'robot_state_publisher', 'rviz2', 'ros2launch'}
REQUIRED_TEST_DEPENDS = {'launch_testing', 'launch_testing_ros', 'python3-pytest', 'pinocchio'}
#: Top-level modules the package imports -> their rosdep key (a ROS package's own name where
#: the two are the same: the key is the module then).
IMPORT_KEYS = {
    'numpy': 'python3-numpy', 'scipy': 'python3-scipy', 'numba': 'python3-numba',
    'yaml': 'python3-yaml', 'matplotlib': 'python3-matplotlib', 'sympy': 'python3-sympy',
    'urdf_parser_py': 'urdfdom_py',
}
#: Modules with no rosdep key that installs through apt: setup.py extras, imported only
#: where their feature is used (identification's bag reader without ROS, the web viewer,
#: MuJoCo as the arm: the mujoco-core wheel, no rosdep key).
PIP_EXTRAS = {'rosbags': 'identify', 'viser': 'viewer', 'trimesh': 'viewer',
              'mujoco': 'mujoco'}
#: Modules whose distribution on PyPI has another name.
DISTRIBUTIONS = {'mujoco': 'mujoco-core'}
#: What a robot computer without a screen can leave out (MANIP_DYNAMICS_HEADLESS=1);
#: python3-collada: trimesh's reader of the DAE meshes the viewer shows.
DESKTOP_KEYS = {'rviz2', 'python3-matplotlib', 'python3-sympy', 'python3-collada'}


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


def _imported_modules() -> set[str]:
    """Return the top-level modules imported anywhere in the package's code and launch files."""
    modules = set()
    for folder in ('manip_dynamics', 'launch'):
        for parent, _, files in os.walk(os.path.join(PACKAGE_ROOT, folder)):
            for name in files:
                if not name.endswith('.py'):
                    continue
                with open(os.path.join(parent, name), encoding='utf-8') as stream:
                    tree = ast.parse(stream.read())
                for node in ast.walk(tree):
                    if isinstance(node, ast.Import):
                        modules.update(alias.name.split('.')[0] for alias in node.names)
                    elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                        modules.add(node.module.split('.')[0])
    return modules - set(sys.stdlib_module_names) - {'manip_dynamics', '__future__'}


@pytest.mark.linter
def test_every_imported_module_is_declared() -> None:
    """Each import is a declared key (rosdep) or a pip-only extra of setup.py."""
    package = _parse(PACKAGE_ROOT)
    declared = _names(package.exec_depends)
    with open(os.path.join(PACKAGE_ROOT, 'setup.py'), encoding='utf-8') as stream:
        setup_py = stream.read()
    undeclared = []
    for module in sorted(_imported_modules()):
        if module in PIP_EXTRAS:
            extra = re.search(r"'%s': \[([^]]*)\]" % PIP_EXTRAS[module], setup_py)
            if extra is None or "'%s'" % DISTRIBUTIONS.get(module, module) not in \
                    extra.group(1):
                undeclared.append('%s (setup.py extra %s)' % (module, PIP_EXTRAS[module]))
        elif IMPORT_KEYS.get(module, module) not in declared:
            undeclared.append('%s (key %s)' % (module, IMPORT_KEYS.get(module, module)))
    assert not undeclared, 'imported but not declared: %s' % undeclared


@pytest.mark.linter
def test_no_key_installs_with_pip_and_the_desktop_is_optional() -> None:
    """No ``*-pip`` key; RViz and the plotting stack stay out with MANIP_DYNAMICS_HEADLESS=1."""
    package = _parse(PACKAGE_ROOT)
    everything = (package.build_depends + package.exec_depends + package.test_depends
                  + package.buildtool_depends)
    assert not [d.name for d in everything if d.name.endswith('-pip')]
    package.evaluate_conditions({})
    desktop = {d.name for d in package.exec_depends if d.evaluated_condition}
    assert DESKTOP_KEYS <= desktop
    package.evaluate_conditions({'MANIP_DYNAMICS_HEADLESS': '1'})
    headless = {d.name for d in package.exec_depends if d.evaluated_condition}
    assert not DESKTOP_KEYS & headless, DESKTOP_KEYS & headless
    assert {'rclpy', 'python3-numba', 'controller_manager', 'control_msgs'} <= headless
