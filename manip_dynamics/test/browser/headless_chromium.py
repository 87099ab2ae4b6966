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
Drive Debian's headless Chromium over the DevTools protocol: open a page, take screenshots.

One browser process with a new, temporary profile, started with the flags that keep it
off the network (no background networking, no component updates, no sync, no QUIC) and
without a GPU (WebGL runs in software). The DevTools endpoint listens on 127.0.0.1 on a
port the browser picks. The protocol messages go over the ``websockets`` package (a
dependency of viser). Also pixel helpers for the checks (PNG decoding with matplotlib).
"""

import base64
import itertools
import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.request

import numpy as np

CHROMIUM = '/usr/bin/chromium'
FLAGS = ('--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
         '--disable-background-networking', '--disable-component-update', '--disable-sync',
         '--remote-debugging-port=0', '--remote-debugging-address=127.0.0.1')


class HeadlessChromium:
    """One headless Chromium with one page, controlled over the DevTools protocol."""

    def __init__(self, width: int = 1280, height: int = 800, executable: str = CHROMIUM,
                 log_path: str | None = None, timeout: float = 60.0) -> None:
        """
        Start the browser and attach to its page.

        :param width: Window width [px].
        :param height: Window height [px].
        :param executable: The browser.
        :param log_path: File for the browser's output (default: discarded).
        :param timeout: How long to wait for the DevTools endpoint [s].
        :raises RuntimeError: The browser did not start.
        """
        from websockets.sync.client import connect
        self.profile = tempfile.mkdtemp(prefix='md_chromium_')
        log = open(log_path, 'w') if log_path else subprocess.DEVNULL
        self.proc = subprocess.Popen(
            [executable, *FLAGS, '--user-data-dir=' + self.profile,
             '--window-size=%d,%d' % (width, height), 'about:blank'],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        if log_path:
            log.close()
        port_file = os.path.join(self.profile, 'DevToolsActivePort')
        deadline = time.monotonic() + timeout
        port = None
        while time.monotonic() < deadline and self.proc.poll() is None:
            if os.path.isfile(port_file):
                with open(port_file) as stream:
                    lines = stream.read().split()
                if lines:
                    port = int(lines[0])
                    break
            time.sleep(0.1)
        if port is None:
            self.close()
            raise RuntimeError('chromium did not open its DevTools port within %g s' % timeout)
        page = None
        while page is None and time.monotonic() < deadline:
            with urllib.request.urlopen('http://127.0.0.1:%d/json/list' % port) as reply:
                targets = json.load(reply)
            page = next((t for t in targets if t.get('type') == 'page'), None)
            time.sleep(0.1)
        if page is None:
            self.close()
            raise RuntimeError('chromium has no page target')
        self.ws = connect(page['webSocketDebuggerUrl'], max_size=None, open_timeout=timeout)
        self._ids = itertools.count(1)
        self.send('Emulation.setDeviceMetricsOverride', {
            'width': width, 'height': height, 'deviceScaleFactor': 1, 'mobile': False})

    def send(self, method: str, params: dict | None = None, timeout: float = 60.0) -> dict:
        """
        Call one DevTools method and return its result (events in between are dropped).

        :raises RuntimeError: The browser answered with an error.
        """
        ident = next(self._ids)
        self.ws.send(json.dumps({'id': ident, 'method': method, 'params': params or {}}))
        deadline = time.monotonic() + timeout
        while True:
            message = json.loads(self.ws.recv(timeout=max(0.1, deadline - time.monotonic())))
            if message.get('id') == ident:
                if 'error' in message:
                    raise RuntimeError('%s: %s' % (method, message['error']))
                return message.get('result', {})

    def navigate(self, url: str) -> None:
        """Open a URL in the page."""
        self.send('Page.enable')
        self.send('Page.navigate', {'url': url})

    def evaluate(self, expression: str) -> object:
        """Evaluate JavaScript in the page and return its value (JSON-serialisable)."""
        result = self.send('Runtime.evaluate', {'expression': expression,
                                                'returnByValue': True})
        return result.get('result', {}).get('value')

    def screenshot(self, path: str) -> np.ndarray:
        """
        Save a PNG of the page and return its pixels.

        :param path: Output file.
        :return: RGB pixels, shape (height, width, 3), uint8.
        """
        data = base64.b64decode(self.send('Page.captureScreenshot', {'format': 'png'})['data'])
        with open(path, 'wb') as stream:
            stream.write(data)
        return read_png(path)

    def close(self) -> None:
        """Stop the browser and delete its temporary profile."""
        ws = getattr(self, 'ws', None)
        if ws is not None:
            try:
                ws.close()
            except Exception:  # noqa: B902 - closing a broken connection
                pass
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.profile, ignore_errors=True)


def read_png(path: str) -> np.ndarray:
    """Return the RGB pixels of a PNG file, shape (h, w, 3), uint8."""
    from matplotlib import image
    pixels = image.imread(path)
    if pixels.dtype != np.uint8:
        pixels = np.round(pixels * 255.0).astype(np.uint8)
    return pixels[..., :3]


#: JavaScript that hides the client's notifications (e.g. "Software WebGL rendering
#: detected", shown because the test browser has no GPU).
HIDE_NOTIFICATIONS = '''
(() => {
  let n = 0;
  for (const el of document.querySelectorAll('[class*="Notification"]')) {
    el.style.display = 'none'; n += 1;
  }
  return n;
})()
'''
