#!/usr/bin/env bash
# Run the integration tests as a fresh clone on a busy machine meets them: every numba kernel
# compiles from an empty cache, while two busy processes compete for the CPU cores.
#
# Usage: scripts/test_cold.sh [pytest arguments]      (after setup.sh and build.sh)
#        make test-cold [PYTEST_ARGS=...] [COLD_LOAD=2]
# Default pytest arguments: test/integration test/launch (slow: every node compiles its
# kernels on its first start, several minutes in all). NUMBA_CACHE_DIR points at a new empty
# directory for the whole run (the tests and the nodes they start), so the developer's own
# cache in __pycache__ is neither used nor touched. COLD_LOAD sets the number of busy
# processes (default 2, one per core of the 2-core reference machine); COLD_TEST_TIMEOUT the
# per-test limit (default 900 s instead of pytest.ini's 300 s). Both the busy
# processes and the cache directory are removed at the end, whatever the outcome.
# Exit code: pytest's verdict ("no test ran" counts as a failure).
set -euo pipefail
# shellcheck source=scripts/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh" || exit 1

[[ -f "${MD_INSTALL_BASE}/local_setup.bash" ]] || md_die "workspace not built; run scripts/build.sh"

export MANIP_DYNAMICS_TEST_DOMAIN_ID=${MANIP_DYNAMICS_TEST_DOMAIN_ID:-87}
export ROS_DOMAIN_ID=${MANIP_DYNAMICS_TEST_DOMAIN_ID}
export MANIP_DYNAMICS_REQUIRE_INTERFACES=1
export MPLBACKEND=Agg

cache_dir=$(mktemp -d "${TMPDIR:-/tmp}/manip_dynamics_cold_cache.XXXXXX")
busy_pids=()
cleanup() {
  local pid
  for pid in "${busy_pids[@]}"; do
    kill "${pid}" 2>/dev/null || true
    wait "${pid}" 2>/dev/null || true
  done
  rm -rf "${cache_dir}"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
export NUMBA_CACHE_DIR=${cache_dir}

load=${COLD_LOAD:-2}
for ((i = 0; i < load; i++)); do
  python3 -c 'while True: pass' &
  busy_pids+=("$!")
done
echo "test-cold: empty numba cache ${cache_dir}, ${load} busy processes (pids ${busy_pids[*]:-none})"

if [[ $# -eq 0 ]]; then
  set -- test/integration test/launch
fi
cd "${MD_ROOT}/manip_dynamics"
set +e
# A per-test limit (pytest-timeout, 300 s in pytest.ini) sized for this machine's worst case:
# a module's first test also pays its nodes' cold start. COLD_TEST_TIMEOUT overrides it.
python -m pytest -ra -p no:cacheprovider -o timeout="${COLD_TEST_TIMEOUT:-900}" "$@"
rc=$?
set -e
if [[ ${rc} -eq 5 ]]; then
  echo "test-cold: pytest collected no test; treating that as a failure" >&2
  exit 1
fi
exit "${rc}"
