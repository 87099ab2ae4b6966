#!/usr/bin/env bash
# The make-run story N times in a row, each run's figures on one line (issue 27's check).
#
# Usage: scripts/demo_runs.sh [N] [--busy]     (after `make build`; N defaults to 10)
#   --busy   a busy loop pinned to core 0 runs during every run (a loaded machine)
# Each run is `make run DURATION=${DURATION:-25}`, its log and plot copied to out/demo_runs/;
# the line printed per run is the demo's own `run_demo: story:` line.
# The exit code is 1 if any run failed or showed a rejected sample, an unflagged push, a
# push at hold the arm did not return from within 1 s, a refused resume, a false contact or
# a zero-torque sample.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
runs=${1:-10}
busy=${2:-}
out=out/demo_runs
mkdir -p "${out}"
busy_pid=
if [[ "${busy}" == "--busy" ]]; then
  taskset -c 0 python3 -c 'while True: pass' &
  busy_pid=$!
  trap 'kill ${busy_pid} 2>/dev/null || true' EXIT
  echo "demo_runs: busy loop on core 0 (pid ${busy_pid})"
fi
failed=0
for k in $(seq 1 "${runs}"); do
  start=$(date +%s)
  if make --no-print-directory run DURATION="${DURATION:-25}" > "${out}/run_${k}.log" 2>&1
  then code=0; else code=$?; fi
  cp -f out/demo.png "${out}/run_${k}.png" 2>/dev/null || true
  rm -rf "${out}/run_${k}_logs" && cp -r out/demo_logs "${out}/run_${k}_logs" 2>/dev/null || true
  line=$(grep -h '^run_demo: story:' "${out}/run_${k}.log" | sed 's/^run_demo: story: //' || true)
  rtf=$(grep -h '^run_demo: final' "${out}/run_${k}.log" | grep -o 'RTF *[0-9.]*' || true)
  echo "run ${k}: exit ${code}, $(( $(date +%s) - start )) s, ${rtf}: ${line:-no story line}"
  if [[ ${code} -ne 0 || -z "${line}" ]] || ! python3 - "${line}" <<'PY'
import re, sys
line = sys.argv[1]
n = {k: int(v) for k, v in re.findall(r'(pushes|flagged|rejected samples|false contacts|'
                                      r'zero-torque samples) (\d+)', line)}
back = re.search(r'hold pose (\d+)/(\d+)', line)
resumed = re.search(r'resumed (\d+)/(\d+)', line)
ok = (n['pushes'] == n['flagged'] and n['rejected samples'] == 0 and n['false contacts'] == 0
      and n['zero-torque samples'] == 0 and back.group(1) == back.group(2)
      and resumed.group(1) == resumed.group(2))
sys.exit(0 if ok else 1)
PY
  then
    failed=$(( failed + 1 ))
  fi
done
echo "demo_runs: ${runs} runs, ${failed} failed the checks${busy_pid:+ (busy loop on core 0)}"
[[ ${failed} -eq 0 ]]
