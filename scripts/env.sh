# shellcheck shell=bash
# Environment of the project's venv and colcon overlay; source it:
#   source scripts/env.sh            (ROS 2 Jazzy)
#   ROS_DISTRO=kilted source scripts/env.sh
# Sets VIRTUAL_ENV, PATH, AMENT_PREFIX_PATH, CMAKE_PREFIX_PATH (the venv is the ROS underlay,
# ROS_FROM_PYPI.md gotcha 2), the loopback-only discovery variables and, when the workspace
# has been built, this workspace's overlay (PYTHONPATH, LD_LIBRARY_PATH, AMENT_PREFIX_PATH).
# The venv replaces any ROS installation sourced before (e.g. /opt/ros/<distro>): mixing the
# two would link the workspace against both.
# shellcheck source=scripts/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" || return 1

export VIRTUAL_ENV=${MD_VENV}
export PATH=${MD_VENV}/bin:${PATH}
export AMENT_PREFIX_PATH=${MD_VENV}
export CMAKE_PREFIX_PATH=${MD_VENV}
export ROS_DISTRO=${MD_DISTRO}
export ROS_PYTHON_VERSION=3
unset PYTHONHOME PYTHONPATH COLCON_PREFIX_PATH ROS_VERSION

if [[ -f "${MD_INSTALL_BASE}/local_setup.bash" ]]; then
  # colcon's scripts read unset variables; relax nounset while sourcing them.
  case $- in *u*) _md_nounset=1; set +u ;; *) _md_nounset=0 ;; esac
  COLCON_CURRENT_PREFIX=${MD_INSTALL_BASE} source "${MD_INSTALL_BASE}/local_setup.bash"
  if [[ ${_md_nounset} == 1 ]]; then set -u; fi
  unset _md_nounset
fi

# The package's executables (manip-dynamics, the nodes) on PATH, as `ros2 run` would find them.
if [[ -d "${MD_INSTALL_BASE}/manip_dynamics/lib/manip_dynamics" ]]; then
  export PATH=${MD_INSTALL_BASE}/manip_dynamics/lib/manip_dynamics:${PATH}
fi
