#!/usr/bin/env bash
# Start the main job: the simulation demo on the bundled default arm.
#
# Usage: scripts/run.sh            (after setup.sh and build.sh; make run does all three)
#        DURATION=10 scripts/run.sh   stop after 10 s of simulated time
# Runs `python -m manip_dynamics.ros.run_demo`; before the ROS demo exists it falls back to
# the core library demo `python -m manip_dynamics.demo`.
set -euo pipefail
# shellcheck source=scripts/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh" || exit 1

[[ -f "${MD_INSTALL_BASE}/local_setup.bash" ]] || md_die "workspace not built; run scripts/build.sh"
export MPLBACKEND=${MPLBACKEND:-Agg}

module_exists() {
  python -c 'import importlib.util, sys; sys.exit(importlib.util.find_spec(sys.argv[1]) is None)' \
    "$1" 2>/dev/null
}

demo=''
for candidate in manip_dynamics.ros.run_demo manip_dynamics.demo; do
  if module_exists "${candidate}"; then
    demo=${candidate}
    break
  fi
done
if [[ -z "${demo}" ]]; then
  echo "run: no demo yet (neither manip_dynamics.ros.run_demo nor manip_dynamics.demo exists)."
  echo "run: the environment and the build are ready; try 'make test'."
  exit 0
fi

args=()
if [[ -n "${DURATION:-}" ]]; then
  args+=(--duration "${DURATION}")
fi
echo "run: python -m ${demo} ${args[*]:-}"
cd "${MD_ROOT}"
exec python -m "${demo}" "${args[@]}" "$@"
