#!/usr/bin/env bash
# Create or refresh the project's virtual environment with ROS 2 from PyPI wheels.
#
# Usage: scripts/setup.sh            (ROS 2 Jazzy, venv .venv)
#        ROS_DISTRO=kilted scripts/setup.sh   (ROS 2 Kilted, venv .venv-kilted)
# Idempotent: a stamp file records the hash of the requirement files; when it matches, pip is
# not run at all. Set MD_FORCE_SETUP=1 to reinstall anyway.
set -euo pipefail
# shellcheck source=scripts/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

req_distro=${MD_ROOT}/scripts/requirements-${MD_DISTRO}.txt
req_common=${MD_ROOT}/scripts/requirements-common.txt
req_dev=${MD_ROOT}/scripts/requirements-dev.txt

# --- system tools -------------------------------------------------------------------------
missing=()
command -v cc >/dev/null 2>&1 || missing+=('C compiler (cc)')
command -v c++ >/dev/null 2>&1 || missing+=('C++ compiler (c++)')
command -v cmake >/dev/null 2>&1 || missing+=('cmake')
command -v make >/dev/null 2>&1 || missing+=('make')
if (( ${#missing[@]} )); then
  md_die "missing system tools: ${missing[*]}." \
    "On Debian/Ubuntu: sudo apt-get install build-essential cmake"
fi

# The ROS 2 wheels on PyPI are built for CPython 3.11 only.
python_bin=${PYTHON:-}
if [[ -z "${python_bin}" ]]; then
  for candidate in python3.11 python3; do
    if command -v "${candidate}" >/dev/null 2>&1 \
        && "${candidate}" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
      python_bin=${candidate}
      break
    fi
  done
fi
if [[ -z "${python_bin}" ]]; then
  md_die "Python 3.11 not found (the ROS 2 wheels on PyPI are cp311 only)." \
    "On Debian 12: sudo apt-get install python3 python3-venv python3-dev;" \
    "elsewhere install Python 3.11 (e.g. pyenv install 3.11) or set PYTHON=/path/to/python3.11"
fi
if ! "${python_bin}" -c 'import venv, ensurepip' >/dev/null 2>&1; then
  md_die "${python_bin} has no venv/ensurepip module. On Debian/Ubuntu:" \
    "sudo apt-get install python3-venv"
fi

# --- stamp check ----------------------------------------------------------------------------
stamp_file=${MD_VENV}/.manip_dynamics_requirements.sha256
stamp=$(cat "${req_distro}" "${req_common}" "${req_dev}" | sha256sum | cut -d' ' -f1)
if [[ -z "${MD_FORCE_SETUP:-}" && -x "${MD_VENV}/bin/python" && -f "${stamp_file}" \
      && "$(cat "${stamp_file}")" == "${stamp}" ]]; then
  echo "setup: ${MD_VENV#"${MD_ROOT}"/} is up to date (ROS 2 ${MD_DISTRO})"
  exit 0
fi

# --- venv and pip ---------------------------------------------------------------------------
echo "setup: installing ROS 2 ${MD_DISTRO} from PyPI into ${MD_VENV} (first run: a few minutes)"
if [[ ! -x "${MD_VENV}/bin/python" ]]; then
  "${python_bin}" -m venv "${MD_VENV}"
fi
# Keep git and colcon out of the venv: it holds share/<pkg>/package.xml files of every ROS
# wheel, which a colcon crawl of the repository would otherwise pick up as packages.
printf '*\n' > "${MD_VENV}/.gitignore"
touch "${MD_VENV}/COLCON_IGNORE"

rm -f "${stamp_file}"
"${MD_VENV}/bin/python" -m pip install --disable-pip-version-check --progress-bar off -q \
  -r "${req_distro}" -r "${req_dev}"
echo "${stamp}" > "${stamp_file}"
echo "setup: done"
