#!/usr/bin/env bash
# Build both packages of the suite with colcon against the project's venv (the ROS underlay).
#
# Usage: scripts/build.sh [extra colcon build arguments]
#        ROS_DISTRO=kilted scripts/build.sh
# Output: build/ install/ log/ in the repository root (build-kilted/ ... for Kilted).
# The Python package is built with --symlink-install, so edits to its sources are seen without
# a rebuild. When no source file of either package changed since the last successful build,
# colcon is not run at all (MD_FORCE_BUILD=1 forces it).
# The numba kernels are compiled into their disk cache (manip_dynamics.precompile; beside
# colcon when it runs, then checked; under a second when the cache is already warm;
# MD_SKIP_PRECOMPILE=1 skips it), so the first start of a node or of manip-dynamics does
# not compile.
set -euo pipefail
# shellcheck source=scripts/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh" || exit 1

[[ -x "${MD_VENV}/bin/colcon" ]] || md_die "no colcon in ${MD_VENV}; run scripts/setup.sh first"

packages=("${MD_ROOT}/manip_dynamics_interfaces" "${MD_ROOT}/manip_dynamics")
# control_msgs is not on PyPI: where the environment has none (the PyPI set-up), the test-only
# subset in test_support/ is built beside the packages so the action paths can be tested; an
# installed ROS 2's real control_msgs wins (test_support/README.md).
real_control_msgs=
IFS=: read -r -a _md_prefixes <<< "${AMENT_PREFIX_PATH:-}"
for _md_prefix in "${_md_prefixes[@]}"; do
  case "${_md_prefix}" in "${MD_INSTALL_BASE}"*) continue ;; esac
  if [[ -n "${_md_prefix}" && -f "${_md_prefix}/share/control_msgs/package.xml" ]]; then
    real_control_msgs=${_md_prefix}
  fi
done
if [[ -z "${real_control_msgs}" ]]; then
  packages+=("${MD_ROOT}/test_support/control_msgs")
fi

# Hash of what makes a rebuild necessary: the content of every file of the interfaces package;
# for the Python package (built with --symlink-install, so edited sources are live) the list of
# its data files (a new launch/config/urdf file needs a new symlink) and the content of its
# metadata; the venv (path and requirement stamp), the distro and the colcon arguments.
sources_hash() {
  (
    cd "${MD_ROOT}"
    prune=(\( -name __pycache__ -o -name build -o -name '*.egg-info' -o -name .pytest_cache -o -name .hypothesis \)
           -prune -o -type f -print)
    find manip_dynamics_interfaces test_support "${prune[@]}" | LC_ALL=C sort | while IFS= read -r f; do
      printf '%s %s\n' "$(sha1sum < "$f" | cut -d' ' -f1)" "$f"
    done
    # The Python package folder itself is symlinked whole, so files added there (or in test/)
    # are live too; only launch/, config/, urdf/, resource/ need new symlinks.
    find manip_dynamics \( -path manip_dynamics/manip_dynamics -o -path manip_dynamics/test \) \
      -prune -o "${prune[@]}" | LC_ALL=C sort
    cat manip_dynamics/setup.py manip_dynamics/setup.cfg manip_dynamics/package.xml
    cat "${MD_VENV}/.manip_dynamics_requirements.sha256" 2>/dev/null || true
    echo "${MD_VENV} ${MD_DISTRO} ${real_control_msgs} $*"
  ) | sha256sum | cut -d' ' -f1
}

# Compile every kernel into numba's cache, as the built package finds it (with
# --symlink-install: __pycache__ next to the sources). Skips in about a second when warm.
precompile_kernels() {
  [[ -z "${MD_SKIP_PRECOMPILE:-}" ]] || return 0
  if ! (source "${MD_ROOT}/scripts/env.sh" && cd / \
        && python -m manip_dynamics.precompile | sed -u 's/^/build: /'); then
    echo "build: warning: precompiling the numba kernels failed; they will compile on first" \
      "use (run 'manip-dynamics precompile' to see why)" >&2
  fi
}

stamp_file=${MD_BUILD_BASE}/.manip_dynamics_build.sha256
hash=$(sources_hash "$@")
if [[ -z "${MD_FORCE_BUILD:-}" && -f "${stamp_file}" && -f "${MD_INSTALL_BASE}/local_setup.bash" \
      && "$(cat "${stamp_file}")" == "${hash}" ]]; then
  echo "build: nothing changed since the last build (${MD_INSTALL_BASE#"${MD_ROOT}"/})"
  precompile_kernels
  exit 0
fi

echo "build: colcon build (ROS 2 ${MD_DISTRO}) -> ${MD_INSTALL_BASE#"${MD_ROOT}"/}"
mkdir -p "${MD_BUILD_BASE}" "${MD_INSTALL_BASE}" "${MD_LOG_BASE}"
# Keep build artefacts out of git even where the root .gitignore does not list them.
for dir in "${MD_BUILD_BASE}" "${MD_INSTALL_BASE}" "${MD_LOG_BASE}"; do
  printf '*\n' > "${dir}/.gitignore"
done
rm -f "${stamp_file}"
cd "${MD_ROOT}"
# The kernels compile from the source folder while colcon builds the interfaces: the built
# package's folder is a symlink to it (--symlink-install), so numba's cache beside the
# sources is the one the built package finds (precompile_kernels below then finds it warm
# in about a second). make gets -j<cores> without colcon's default load limit -l<cores>: the
# precompile beside it keeps the load average above the limit, and make would then hold its
# jobs back (a fresh clone's build took 106 s that way instead of 72).
precompile_log=
if [[ -z "${MD_SKIP_PRECOMPILE:-}" ]]; then
  precompile_log=$(mktemp -t manip_dynamics_precompile.XXXXXX)
  (cd / && PYTHONPATH="${MD_ROOT}/manip_dynamics${PYTHONPATH:+:${PYTHONPATH}}" \
     python -m manip_dynamics.precompile) > "${precompile_log}" 2>&1 &
  precompile_pid=$!
  # (errexit applies inside a trap: a kill of a finished process must not fail the build)
  trap 'kill "${precompile_pid}" 2>/dev/null || true; rm -f "${precompile_log}"' EXIT
  if [[ -z "${MAKEFLAGS:-}" ]]; then
    export MAKEFLAGS="-j$(nproc 2>/dev/null || echo 2)"
  fi
fi
# the precompile above runs beside colcon: not a second one inside it (setup.py's hook)
MANIP_DYNAMICS_PRECOMPILE=0 colcon --log-base "${MD_LOG_BASE}" build \
  --base-paths "${packages[@]}" \
  --build-base "${MD_BUILD_BASE}" \
  --install-base "${MD_INSTALL_BASE}" \
  --symlink-install \
  --event-handlers console_cohesion- summary+ status- \
  --cmake-args -DBUILD_TESTING=OFF -DPython3_EXECUTABLE="${MD_VENV}/bin/python" \
  "$@"
echo "${hash}" > "${stamp_file}"
if [[ -n "${precompile_log}" ]]; then
  wait "${precompile_pid}" || true
  sed 's/^/build: /' "${precompile_log}"
  trap - EXIT
  rm -f "${precompile_log}"
fi
precompile_kernels
