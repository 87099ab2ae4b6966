# Copyright 2026 The manip_dynamics Authors
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

"""
The viewer in a real browser: headless Chromium looks at the live arm while it is pushed.

The simulator holds the default arm under gravity compensation and the viewer node serves
the page; Chromium (Debian's ``chromium``; ``make test-browser`` installs it) opens it. The
test waits until the arm is drawn, takes a screenshot, pushes the arm through the
simulator's ``~/apply_wrench`` (15 N sideways on the flange for 1 s) and takes a second
screenshot a second later (on a machine too loaded for the page to have changed yet, one
more each second, for at most 10 s). Checks, on the 3D canvas (the panel excluded):

* the arm is drawn: pixels that differ from the page's background cover a plausible share
  of the canvas (0.5 % to 60 %), and each of the URDF's three material colours (light
  grey, dark grey, blue) covers some of them;
* it moved: the two masks of arm pixels differ in more than 3 % of their union.

When the simulator has no ``~/apply_wrench`` service (a simulator without the push), the
push is played instead by this test publishing /joint_states itself (the simulator stopped),
with the second pose 0.3 rad away on two joints; the test says so in its output.

The screenshots are kept in ``out/browser/`` at the repository root (the second one is
the README's docs/img/viewer.png when refreshed by hand).
"""

import math
import os
import re
import shutil
import threading
import time

from headless_chromium import CHROMIUM, HeadlessChromium, HIDE_NOTIFICATIONS
import numpy as np
import pytest
from ros_test_support import spun_node

HERE = os.path.dirname(os.path.abspath(__file__))
if not os.path.exists(CHROMIUM):
    pytest.skip("%s is missing: install Debian's chromium package (make test-browser does)"
                % CHROMIUM, allow_module_level=True)
pytest.importorskip('viser', reason='viser (the [viewer] extra) is not installed')
rclpy = pytest.importorskip('rclpy', reason='rclpy not installed')

from manip_dynamics.bundled import DEFAULT_ARM, urdf_path  # noqa: E402
from manip_dynamics.ros.runtime.node_process import start_node, stop_node  # noqa: E402
from manip_dynamics.viewer.server import BACKGROUND_RGB  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
ARTEFACTS = os.path.join(REPO, 'out', 'browser')
WIDTH, HEIGHT = 1280, 800
#: The panel occupies the right of the page; the view-cube gizmo the bottom-left corner.
PANEL_LEFT = 930
GIZMO = (HEIGHT - 70, 70)
#: How long the nodes may take to come up [s].
STARTUP = 400.0


def arm_mask(pixels: np.ndarray) -> np.ndarray:
    """Return the canvas pixels that are not background (panel and gizmo left out)."""
    diff = np.abs(pixels.astype(np.int16) - np.array(BACKGROUND_RGB, dtype=np.int16))
    mask = diff.max(axis=2) > 30
    mask[:, PANEL_LEFT:] = False
    mask[GIZMO[0]:, :GIZMO[1]] = False
    return mask


def background_shown(pixels: np.ndarray) -> bool:
    """
    Tell whether the canvas shows the page's own background colour.

    The client dims its canvas (a light veil over every pixel) while it is (re)connecting;
    such a screenshot says nothing about the arm.
    """
    canvas = pixels[:, :PANEL_LEFT].astype(np.int16)
    near = np.abs(canvas - np.array(BACKGROUND_RGB, dtype=np.int16)).max(axis=2) <= 3
    return np.count_nonzero(near) > 0.3 * near.size


def material_shares(pixels: np.ndarray, mask: np.ndarray) -> dict[str, float]:
    """Return the share of the canvas covered by each of cobot7's material colours."""
    p = pixels.astype(np.int16)
    r, g, b = p[..., 0], p[..., 1], p[..., 2]
    spread = p.max(axis=2) - p.min(axis=2)
    canvas = mask.shape[0] * PANEL_LEFT
    classes = {
        'light grey': (p.min(axis=2) > 150) & (spread < 40),
        'dark grey': (p.max(axis=2) < 75) & (spread < 30),
        'blue': (b - r > 70) & (b - g > 20),
    }
    return {name: float(np.count_nonzero(c & mask)) / canvas for name, c in classes.items()}


@pytest.fixture
def ros_node():
    """Yield an rclpy node spun on a thread (own context)."""
    with spun_node('viewer_browser_test') as node:
        yield node


def wait_for(predicate, timeout: float, what: str, period: float = 0.2):
    """Poll ``predicate`` until it returns neither None nor False; fail after ``timeout``."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = predicate()
        if value is not None and value is not False:
            return value
        time.sleep(period)
    pytest.fail('timed out after %g s waiting for %s' % (timeout, what))


def viewer_url(proc) -> str | None:
    """Return the URL the viewer node printed, or None yet."""
    with open(proc.log_path) as stream:
        found = re.search(r'open (http://127\.0\.0\.1:\d+)', stream.read())
    return found.group(1) if found else None


def apply_wrench_client(node, timeout: float):
    """Return a client of the simulator's ~/apply_wrench, or None when there is none."""
    try:
        from manip_dynamics_interfaces.srv import ApplyWrench
    except ImportError:
        return None
    client = node.create_client(ApplyWrench, '/simulator/apply_wrench')
    return client if client.wait_for_service(timeout_sec=timeout) else None


def push(client) -> None:
    """Push the flange sideways (world +y) with 15 N for 1 s."""
    from manip_dynamics_interfaces.srv import ApplyWrench
    request = ApplyWrench.Request(link='cobot7_flange', frame='world', duration=1.0)
    request.wrench.force.y = 15.0
    future = client.call_async(request)
    wait_for(future.done, 10.0, 'the answer of ~/apply_wrench')
    assert future.result().success, future.result().message


@pytest.mark.rostest
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_browser_shows_the_arm_and_its_motion(ros_node, tmp_path) -> None:
    from sensor_msgs.msg import JointState
    from std_srvs.srv import SetBool, Trigger
    with open(urdf_path(DEFAULT_ARM)) as stream:
        xml = stream.read()
    logs = str(tmp_path)
    procs = {
        'viewer': start_node('viewer_node', 'viewer', {'robot_description': xml, 'port': 0},
                             log_dir=logs),
        'simulator': start_node('simulator_node', 'simulator', {
            'robot_description': xml, 'start_paused': True, 'command_timeout': 0.5,
            'publish_clock': True},
            log_dir=logs),
        'gravity_compensation': start_node('gravity_compensation_node', 'gravity_compensation',
                                           {'robot_description': xml, 'ramp_time': 0.0,
                                            'timeout': 0.5}, log_dir=logs),
    }
    browser = None
    publisher_thread = None
    stop_publishing = threading.Event()
    try:
        # generous: a node compiles its numba kernels first after a kernel changed (minutes
        # on a loaded 2-core machine)
        url = wait_for(lambda: viewer_url(procs['viewer']), STARTUP, 'the viewer URL')
        pause = ros_node.create_client(SetBool, '/simulator/pause')
        assert pause.wait_for_service(timeout_sec=STARTUP), 'no /simulator/pause'
        wait_for(lambda: ros_node.count_publishers('/effort_controller/commands') > 0, STARTUP,
                 'gravity compensation')
        time.sleep(1.0)
        future = pause.call_async(SetBool.Request(data=False))
        wait_for(future.done, 10.0, 'the simulator to start')
        # As the demo does: once the compensation is engaged, restart the arm from its start
        # pose at rest (the first commands come late while the controller warms up).
        time.sleep(2.0)
        reset = ros_node.create_client(Trigger, '/simulator/reset')
        assert reset.wait_for_service(timeout_sec=10.0), 'no /simulator/reset'
        future = reset.call_async(Trigger.Request())
        wait_for(future.done, 10.0, 'the simulator to reset')

        browser = HeadlessChromium(WIDTH, HEIGHT, log_path=os.path.join(logs, 'chromium.log'))
        browser.navigate(url)
        os.makedirs(ARTEFACTS, exist_ok=True)
        first = os.path.join(ARTEFACTS, 'viewer_1.png')

        def drawn() -> bool:
            # loaded: the background covers most of the canvas and something else is on it
            browser.evaluate(HIDE_NOTIFICATIONS)
            pixels = browser.screenshot(first)
            arm = np.count_nonzero(arm_mask(pixels)) / (HEIGHT * PANEL_LEFT)
            return background_shown(pixels) and 0.005 < arm < 0.6
        wait_for(drawn, 120.0, 'the arm to appear in the page', period=1.0)

        client = apply_wrench_client(ros_node, timeout=15.0)
        pushed = client is not None
        if not pushed:
            print('simulator_node has no ~/apply_wrench: the test moves the arm by '
                  'publishing /joint_states itself')
            for name in ('gravity_compensation', 'simulator'):
                stop_node(procs.pop(name))
            publisher = ros_node.create_publisher(JointState, '/joint_states', 10)
            pose = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])
            names = ['cobot7_joint%d' % (i + 1) for i in range(7)]
            moved = {'value': False}

            def publish() -> None:
                while not stop_publishing.is_set():
                    q = pose + (np.array([0.3, 0.3, 0, 0, 0, 0, 0]) if moved['value'] else 0)
                    publisher.publish(JointState(name=names, position=list(q)))
                    time.sleep(0.02)
            publisher_thread = threading.Thread(target=publish, daemon=True)
            publisher_thread.start()
            time.sleep(2.0)
        browser.evaluate(HIDE_NOTIFICATIONS)
        before = wait_for(lambda: (lambda p: p if background_shown(p) else None)(
            browser.screenshot(first)), 60.0, 'an undimmed page', period=1.0)
        mask_before = arm_mask(before)
        if pushed:
            push(client)
        else:
            moved['value'] = True
        # the second screenshot a second later; on a machine so loaded that the page has not
        # changed yet, more a second apart each, for at most 10 s (a generous timeout)
        second = os.path.join(ARTEFACTS, 'viewer_2.png')
        changed = 0.0
        for waited in range(1, 11):
            time.sleep(1.0)
            after = browser.screenshot(second)
            if not background_shown(after):
                continue  # the page is dimmed (reconnecting): look again a second later
            mask_after = arm_mask(after)
            changed = (np.count_nonzero(mask_before ^ mask_after)
                       / max(1, np.count_nonzero(mask_before | mask_after)))
            if changed > 0.03:
                break
        for name in ('viewer_1.png', 'viewer_2.png'):
            shutil.copy(os.path.join(ARTEFACTS, name), tmp_path / name)

        canvas = HEIGHT * PANEL_LEFT
        share = np.count_nonzero(mask_before) / canvas
        shares = material_shares(before, mask_before)
        print('arm covers %.1f %% of the canvas; materials %s; %.1f %% of the arm pixels '
              'changed in %d s (%s); screenshots in %s' % (
                  100 * share, {k: '%.2f %%' % (100 * v) for k, v in shares.items()},
                  100 * changed, waited, 'pushed by ~/apply_wrench' if pushed
                  else 'moved by published joint_states', ARTEFACTS))
        assert 0.005 < share < 0.6, 'the arm covers %.2f %% of the canvas' % (100 * share)
        for name, value in shares.items():
            assert value > 0.0005, 'no %s pixels of the arm (%.3f %%)' % (name, 100 * value)
        assert changed > 0.03, 'the arm did not move in the page within 10 s: %.2f %% ' \
            'changed; viewer log %s' % (100 * changed, procs['viewer'].log_path)
        assert math.isfinite(changed)
    finally:
        stop_publishing.set()
        if publisher_thread is not None:
            publisher_thread.join(timeout=5)
        if browser is not None:
            browser.close()
        for proc in procs.values():
            stop_node(proc)
