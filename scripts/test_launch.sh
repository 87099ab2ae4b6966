#!/usr/bin/env bash
# Run the launch tests of manip_dynamics (test/launch/) where ROS 2's launch packages exist.
#
# Usage: scripts/test_launch.sh                 (after build.sh; needs `launch_test`, `ros2`)
# The launch_testing modules (generate_test_description) run one by one with `launch_test`,
# which does not go through pytest's plugin loading (Jazzy's launch_testing plugin fails to
# load under pytest 9: upstream ros2/launch#979); the plain pytest modules
# (test_launch_processes.py, test_story_launch.py: no generate_test_description) run with
# pytest. With apt-installed Jazzy (pytest 7.4) plain
# `python -m pytest test/launch` or `colcon test` runs all of them with the plugin.
# launch, launch_ros and launch_testing are not on PyPI: without them this script says so
# and exits 0 (nothing to run), as the tests themselves skip with that reason.
set -euo pipefail
# env.sh drops PYTHONPATH and AMENT_PREFIX_PATH (the venv replaces a sourced ROS); launch,
# launch_ros, launch_testing and the C++ packages control.launch.py starts
# (controller_manager, topic_based_ros2_control, robot_state_publisher) come from the
# caller's environment (an apt ROS 2 or a source build), so the caller's entries are appended
# after the workspace's: the venv's packages still win.
caller_pythonpath=${PYTHONPATH:-}
caller_ament_prefix_path=${AMENT_PREFIX_PATH:-}
# shellcheck source=scripts/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh" || exit 1
if [[ -n "${caller_pythonpath}" ]]; then
  export PYTHONPATH=${PYTHONPATH:+${PYTHONPATH}:}${caller_pythonpath}
fi
if [[ -n "${caller_ament_prefix_path}" ]]; then
  export AMENT_PREFIX_PATH=${AMENT_PREFIX_PATH:+${AMENT_PREFIX_PATH}:}${caller_ament_prefix_path}
fi

if ! command -v launch_test > /dev/null || ! command -v ros2 > /dev/null; then
  echo "test_launch: launch_test / ros2 not found (not on PyPI; an apt ROS 2 or a source" \
    "build of ros2/launch, launch_ros, ros2cli provides them): nothing run"
  exit 0
fi
export MANIP_DYNAMICS_TEST_DOMAIN_ID=${MANIP_DYNAMICS_TEST_DOMAIN_ID:-88}
export ROS_DOMAIN_ID=${MANIP_DYNAMICS_TEST_DOMAIN_ID}

cd "${MD_ROOT}/manip_dynamics"
failed=()
plain=()
for test in test/launch/test_*.py; do
  # launch_testing modules have generate_test_description; the others are plain pytest
  if ! grep -q '^def generate_test_description' "${test}"; then
    plain+=("${test}")
    continue
  fi
  echo "== launch_test ${test}"
  launch_test "${test}" || failed+=("${test}")
done
echo "== pytest ${plain[*]}"
python -m pytest "${plain[@]}" -ra -p no:cacheprovider \
  -p no:launch_testing -p no:launch_pytest -p no:launch_ros || failed+=("${plain[@]}")
if (( ${#failed[@]} )); then
  echo "test_launch: failed: ${failed[*]}" >&2
  exit 1
fi
echo "test_launch: all launch tests passed"
