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

"""Build script of the manip_dynamics ament_python package (also pip-installable)."""

from glob import glob
import os
import subprocess
import sys

from setuptools import find_packages
from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.develop import develop

package_name = 'manip_dynamics'
here = os.path.dirname(os.path.abspath(__file__))


def _files(pattern: str) -> list[str]:
    """
    List the regular files matching a glob pattern relative to this folder.

    :param pattern: Glob pattern relative to the package folder, e.g. ``'launch/*.py'``.
    :return: Matching file paths relative to the package folder, sorted.
    """
    cwd = os.getcwd()
    os.chdir(here)
    try:
        return sorted(path for path in glob(pattern) if os.path.isfile(path))
    finally:
        os.chdir(cwd)


def _precompile(path: str) -> None:
    """
    Compile the numba kernels into their disk cache beside the package found in ``path``.

    Run by ``colcon build`` (and ``setup.py build``/``develop``), so that a node started
    after the build loads its kernels instead of compiling them for tens of seconds before
    it appears in the graph. The cache is written beside the built modules and installed
    with them. ``MANIP_DYNAMICS_PRECOMPILE=0`` skips it (scripts/build.sh compiles beside
    colcon instead); where numba is missing or the compile fails the build goes on, with a
    warning, and the nodes compile on their first start.

    :param path: The folder that holds the ``manip_dynamics`` package to compile.
    """
    if os.environ.get('MANIP_DYNAMICS_PRECOMPILE', '1') == '0':
        return
    env = dict(os.environ)
    env['PYTHONPATH'] = os.pathsep.join(
        p for p in [os.path.abspath(path), env.get('PYTHONPATH', '')] if p)
    print('manip_dynamics: compiling the dynamics kernels into their cache (about a minute '
          'when cold; MANIP_DYNAMICS_PRECOMPILE=0 skips it)', flush=True)
    result = subprocess.run([sys.executable, '-m', 'manip_dynamics.precompile'], env=env,
                            cwd=os.path.abspath(path), check=False)
    if result.returncode != 0:
        print('manip_dynamics: warning: precompile failed (exit %d): the nodes compile the '
              'kernels on their first start instead' % result.returncode, flush=True)


class BuildWithKernels(build_py):
    """build_py, then the kernels compiled into the build folder (installed with it)."""

    def run(self) -> None:
        """Build the modules, then compile their kernels."""
        super().run()
        _precompile(self.build_lib)


class DevelopWithKernels(develop):
    """develop (colcon --symlink-install), then the kernels compiled beside the sources."""

    def run(self) -> None:
        """Link the package, then compile its kernels."""
        super().run()
        if not getattr(self, 'uninstall', False):
            _precompile(self.egg_path)


setup(
    name=package_name,
    cmdclass={'build_py': BuildWithKernels, 'develop': DevelopWithKernels},
    version='0.1.0',
    packages=find_packages(exclude=['test', 'test.*']),
    data_files=[
        ('share/ament_index/resource_index/packages', ['resource/' + package_name]),
        ('share/' + package_name, ['package.xml']),
        ('share/' + package_name + '/launch', _files('launch/*.py') + _files('launch/*.xml')),
        ('share/' + package_name + '/config',
         _files('config/*.yaml') + _files('config/*.rviz') + _files('config/*.xml')),
        ('share/' + package_name + '/urdf',
         _files('urdf/*.urdf') + _files('urdf/*.xacro') + _files('urdf/*.yaml')),
    ],
    python_requires='>=3.10',
    install_requires=[
        'setuptools',
        'numpy',
        'scipy',
        'numba',
        'urdfdom-py',
    ],
    extras_require={
        'symbolic': ['sympy'],
        'plot': ['matplotlib'],
        'xacro': ['xacro'],
        'viewer': ['viser', 'pycollada', 'trimesh'],
        'identify': ['rosbags'],
        'mujoco': ['mujoco-core'],
        'test': ['pytest', 'hypothesis', 'pin', 'example-robot-data'],
    },
    zip_safe=False,   # data files and the kernel cache are found through __file__
    maintainer='manip_dynamics maintainers',
    maintainer_email='maintainers@manip-dynamics.dev',
    description='Rigid-body dynamics of manipulators from URDF: library, ROS 2 nodes and CLI.',
    license='Apache-2.0',
    entry_points={
        'console_scripts': [
            'manip-dynamics = manip_dynamics.cli:main',
            'precompile = manip_dynamics.precompile:main',
            'dynamics_node = manip_dynamics.ros.nodes.dynamics_node:main',
            'simulator_node = manip_dynamics.ros.nodes.simulator_node:main',
            'gravity_compensation_node = manip_dynamics.ros.nodes.gravity_compensation_node:main',
            'external_torque_observer = manip_dynamics.ros.nodes.external_torque_observer:main',
            'viewer_node = manip_dynamics.ros.nodes.viewer_node:main',
            'description_publisher = manip_dynamics.ros.nodes.description_publisher:main',
            'trajectory_controller = manip_dynamics.ros.nodes.trajectory_controller:main',
            'feedforward_filter = manip_dynamics.ros.nodes.feedforward_filter:main',
        ],
    },
)
