#!/usr/bin/env bash
# The browser test of the viewer: headless Chromium watches the live arm (issue 14).
#
# Usage: scripts/test_browser.sh [extra pytest arguments]   (make test-browser runs it)
# Installs Debian's chromium package when /usr/bin/chromium is missing (apt-get, as root, or
# through sudo), then runs test/browser (and the viewer's unit tests) with the built
# overlay active. Screenshots are kept in out/browser/.
set -euo pipefail
# shellcheck source=scripts/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh" || exit 1

[[ -f "${MD_INSTALL_BASE}/local_setup.bash" ]] || md_die "workspace not built; run scripts/build.sh"

if [[ ! -x /usr/bin/chromium ]]; then
  if [[ $(id -u) -eq 0 ]]; then
    sudo_cmd=()
  elif command -v sudo >/dev/null 2>&1; then
    sudo_cmd=(sudo)
  else
    md_die "/usr/bin/chromium is missing and this user cannot install it: run" \
      "'apt-get install chromium' as root"
  fi
  echo "test-browser: installing Debian's chromium package (apt-get)"
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq chromium
fi

export MANIP_DYNAMICS_TEST_DOMAIN_ID=${MANIP_DYNAMICS_TEST_DOMAIN_ID:-87}
export ROS_DOMAIN_ID=${MANIP_DYNAMICS_TEST_DOMAIN_ID}
export MANIP_DYNAMICS_REQUIRE_INTERFACES=1
export MPLBACKEND=Agg

cd "${MD_ROOT}/manip_dynamics"
python -m pytest test/browser test/unit/test_viewer_scene.py -ra -p no:cacheprovider "$@"
echo "test-browser: screenshots in ${MD_ROOT}/out/browser/"
