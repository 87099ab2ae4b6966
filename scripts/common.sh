# shellcheck shell=bash
# Shared settings of the scripts in this folder; sourced, never run.
# Sets MD_ROOT, MD_DISTRO, MD_VENV, MD_BUILD_BASE, MD_INSTALL_BASE, MD_LOG_BASE.

MD_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
MD_DISTRO=${ROS_DISTRO:-jazzy}

md_die() {
  echo "error: $*" >&2
  exit 1
}

case "${MD_DISTRO}" in
  jazzy)
    MD_VENV=${MD_VENV:-${MD_ROOT}/.venv}
    MD_BUILD_BASE=${MD_ROOT}/build
    MD_INSTALL_BASE=${MD_ROOT}/install
    MD_LOG_BASE=${MD_ROOT}/log
    ;;
  kilted)
    MD_VENV=${MD_VENV:-${MD_ROOT}/.venv-kilted}
    MD_BUILD_BASE=${MD_ROOT}/build-kilted
    MD_INSTALL_BASE=${MD_ROOT}/install-kilted
    MD_LOG_BASE=${MD_ROOT}/log-kilted
    ;;
  *)
    # Not md_die: when this file is sourced into an interactive shell, exit would close it.
    echo "error: ROS_DISTRO='${MD_DISTRO}' is not supported by the PyPI set-up (ROS 2 wheels" \
      "exist for jazzy and kilted only). Run e.g. 'make test ROS_DISTRO=jazzy', or build in" \
      "your own ROS workspace (see README.md)." >&2
    return 1
    ;;
esac

# Loopback only (ROS_FROM_PYPI.md gotcha 6): Jazzy and Kilted take the discovery range alone
# (ROS_LOCALHOST_ONLY as well makes every process print two deprecation warnings; Humble,
# which this PyPI set-up does not serve, would need ROS_LOCALHOST_ONLY=1 instead, as
# manip_dynamics/ros/runtime/discovery.py does for Python processes).
export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
unset ROS_LOCALHOST_ONLY ROS_STATIC_PEERS
