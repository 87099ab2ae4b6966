#!/usr/bin/env bash
# Run every test of the suite (unit, integration, lint) with the built overlay active.
#
# Usage: scripts/test.sh [pytest arguments]     (after setup.sh and build.sh)
#   no arguments: the whole suite in two lanes at once (below); with arguments: one pytest
#   run of test/ with them (e.g. -k retime, -m linter, test/unit/test_retiming.py).
# Exit code: pytest's verdict, except that "no test ran" (pytest exit 5) is a failure.
set -euo pipefail
# shellcheck source=scripts/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh" || exit 1

[[ -f "${MD_INSTALL_BASE}/local_setup.bash" ]] || md_die "workspace not built; run scripts/build.sh"

# A DDS domain of the tests' own (test/conftest.py applies it too), loopback only (common.sh).
export MANIP_DYNAMICS_TEST_DOMAIN_ID=${MANIP_DYNAMICS_TEST_DOMAIN_ID:-87}
export ROS_DOMAIN_ID=${MANIP_DYNAMICS_TEST_DOMAIN_ID}
# The interfaces were just built: a failure to import them is an error here, not a skip.
export MANIP_DYNAMICS_REQUIRE_INTERFACES=1
# Headless plotting.
export MPLBACKEND=Agg

cd "${MD_ROOT}/manip_dynamics"
# Jazzy's launch_testing pytest plugins cannot be loaded by pytest 9 (PluginValidationError,
# upstream ros2/launch#979); where launch_testing is importable (an apt ROS sourced, or the
# launch packages installed), switch them off for this run. The launch_testing modules are
# then skipped with the reason (test/launch/conftest.py); scripts/test_launch.sh runs them
# with launch_test, and pytest 7.4 (apt Jazzy's) loads the plugins as they are.
plugins=()
if python - <<'PY'
import sys
import pytest
sys.exit(0 if int(pytest.__version__.split('.')[0]) >= 9 else 1)
PY
then
  plugins=(-p no:launch_testing -p no:launch_pytest -p no:launch_ros)
fi
# pytest's verdict, except that "no test ran" (exit 5) is a failure.
verdict() {
  if [[ $1 -eq 5 ]]; then
    echo "test: pytest collected no test in $2; treating that as a failure" >&2
    echo 1
  else
    echo "$1"
  fi
}

# With arguments (a file, -k, -m ...): one pytest run of what they select.
if [[ $# -gt 0 || -n "${MD_TEST_ONE_LANE:-}" ]]; then
  set +e
  python -m pytest test -ra -p no:cacheprovider "${plugins[@]}" "$@"
  rc=$(verdict $? 'test')
  set -e
  exit "${rc}"
fi

# The whole suite in two lanes at once, each on a DDS domain of its own: the tests that start
# nodes and measure time (integration/, launch/) in this process, everything else (unit
# tests, linters) beside it. The second lane keeps about one core busy, the condition the
# timing tests must hold under (issue 30); it also halves the wall time on a 2-core machine.
# MD_TEST_ONE_LANE=1 runs everything in one pytest process instead.
lane_log=$(mktemp -t manip_dynamics_unit_lane.XXXXXX)
trap 'rm -f "${lane_log}"' EXIT
set +e
MANIP_DYNAMICS_TEST_DOMAIN_ID=$(( (ROS_DOMAIN_ID + 1) % 101 )) \
  ROS_DOMAIN_ID=$(( (ROS_DOMAIN_ID + 1) % 101 )) \
  python -m pytest test -ra -p no:cacheprovider "${plugins[@]}" \
    --ignore=test/integration --ignore=test/launch > "${lane_log}" 2>&1 &
lane_pid=$!
echo "test: lane 1 (integration/, launch/) here; lane 2 (unit tests, linters) beside it," \
  "its output follows lane 1's"
python -m pytest test/integration test/launch -ra -p no:cacheprovider "${plugins[@]}"
rc_nodes=$(verdict $? 'test/integration, test/launch')
wait "${lane_pid}"
rc_rest=$(verdict $? 'the unit lane')
set -e
echo "test: lane 2 (unit tests, linters):"
cat "${lane_log}"
echo "test: lane 1 exit ${rc_nodes}, lane 2 exit ${rc_rest}"
if [[ ${rc_nodes} -ne 0 ]]; then
  exit "${rc_nodes}"
fi
exit "${rc_rest}"
