#!/usr/bin/env bash
# Start the main job: the simulation demo on the bundled default arm.
#
# Usage: scripts/run.sh            (after setup.sh and build.sh; make run does all three)
#        DURATION=10 scripts/run.sh   stop after 10 s of simulated time
# Runs `python -m manip_dynamics.demo` (manip_dynamics/demo/).
set -euo pipefail
# shellcheck source=scripts/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh" || exit 1

[[ -f "${MD_INSTALL_BASE}/local_setup.bash" ]] || md_die "workspace not built; run scripts/build.sh"
export MPLBACKEND=${MPLBACKEND:-Agg}

demo=manip_dynamics.demo

args=()
if [[ -n "${DURATION:-}" ]]; then
  args+=(--duration "${DURATION}")
fi
# extra demo options, e.g. DEMO_ARGS="--standin --jitter 0.3" (scripts/demo_runs.sh)
if [[ -n "${DEMO_ARGS:-}" ]]; then
  read -r -a extra <<< "${DEMO_ARGS}"
  args+=("${extra[@]}")
fi
echo "run: python -m ${demo} ${args[*]:-} $*"
cd "${MD_ROOT}"
exec python -m "${demo}" "${args[@]}" "$@"
