#!/usr/bin/env bash
# Run every test of the suite (unit, integration, lint) with the built overlay active.
#
# Usage: scripts/test.sh [extra pytest arguments]     (after setup.sh and build.sh)
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
set +e
python -m pytest test -ra -p no:cacheprovider "$@"
rc=$?
set -e
if [[ ${rc} -eq 5 ]]; then
  echo "test: pytest collected no test; treating that as a failure" >&2
  exit 1
fi
exit "${rc}"
