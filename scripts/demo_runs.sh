#!/usr/bin/env bash
# The make-run story N times in a row, each run's figures on one line (issue 27's check).
#
# Usage: scripts/demo_runs.sh [N] [--busy] [--standin]   (after `make build`; N defaults to 10)
#   --busy      a busy loop pinned to core 0 runs during every run (a loaded machine)
#   --standin   the arm behind the controller_manager stand-in with jitter 0.3 and 2 % of the
#               cycles skipped, seed = the run's number (issue 28)
# DEMO_RUNS_ARGS: more arguments of the demo for every run (e.g. "--thread-priority 0": the
# stand-in and the loop's nodes on the normal scheduler).
# After the runs: every flagged push of every run pooled (latency p50, p95, max).
# Each run is `make run DURATION=${DURATION:-25}`, its log and plot copied to out/demo_runs/;
# the line printed per run is the demo's own `run_demo: story:` line.
# The exit code is 1 if any run failed or its story line shows trouble
# (manip_dynamics.demo.run_demo.story_failures: an unflagged push, a rejected sample, a push
# at hold the arm did not return from within 1 s, a refused resume, a false contact, a
# zero-torque or an overspeed sample).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
runs=${1:-10}
busy=
standin=
for option in "${@:2}"; do
  case "${option}" in
    --busy) busy=1 ;;
    --standin) standin=1 ;;
    *) echo "demo_runs: unknown option ${option}" >&2; exit 2 ;;
  esac
done
out=out/demo_runs
mkdir -p "${out}"
busy_pid=
if [[ -n "${busy}" ]]; then
  taskset -c 0 python3 -c 'while True: pass' &
  busy_pid=$!
  trap 'kill ${busy_pid} 2>/dev/null || true' EXIT
  echo "demo_runs: busy loop on core 0 (pid ${busy_pid})"
fi
failed=0
for k in $(seq 1 "${runs}"); do
  start=$(date +%s)
  demo_args=
  [[ -n "${standin}" ]] && demo_args="--standin --jitter 0.3 --skip 0.02 --seed ${k}"
  demo_args="${demo_args}${DEMO_RUNS_ARGS:+ ${DEMO_RUNS_ARGS}}"
  if DEMO_ARGS="${demo_args}" make --no-print-directory run DURATION="${DURATION:-25}" \
      > "${out}/run_${k}.log" 2>&1
  then code=0; else code=$?; fi
  cp -f out/demo.png "${out}/run_${k}.png" 2>/dev/null || true
  rm -rf "${out}/run_${k}_logs" && cp -r out/demo_logs "${out}/run_${k}_logs" 2>/dev/null || true
  line=$(grep -h '^run_demo: story:' "${out}/run_${k}.log" | sed 's/^run_demo: story: //' || true)
  rtf=$(grep -h '^run_demo: final' "${out}/run_${k}.log" | grep -o 'RTF *[0-9.]*' || true)
  echo "run ${k}: exit ${code}, $(( $(date +%s) - start )) s, ${rtf}: ${line:-no story line}"
  if [[ ${code} -ne 0 || -z "${line}" ]] || ! (source scripts/env.sh > /dev/null && python3 -c '
import sys
from manip_dynamics.demo.run_demo import story_failures
failures = story_failures(sys.argv[1])
print("  " + "; ".join(failures)) if failures else None
sys.exit(1 if failures else 0)' "${line}")
  then
    failed=$(( failed + 1 ))
  fi
done
# every push of every run: the campaign's latency percentiles
(source scripts/env.sh > /dev/null && python3 -c '
import sys
from manip_dynamics.demo.run_demo import latency_summary
print("demo_runs: " + latency_summary([line for path in sys.argv[1:]
                                       for line in open(path, errors="replace")
                                       if line.startswith("run_demo: story:")]))' \
  $(seq -f "${out}/run_%g.log" 1 "${runs}")) || true
echo "demo_runs: ${runs} runs, ${failed} failed the checks${busy_pid:+ (busy loop on core 0)}${standin:+ (behind the controller_manager stand-in)}"
[[ ${failed} -eq 0 ]]
