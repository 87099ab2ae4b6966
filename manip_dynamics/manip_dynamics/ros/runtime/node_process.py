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
Start and stop the package's nodes as child processes (tests, benchmarks, the demo).

A node runs as ``python -m manip_dynamics.ros.<module> --ros-args -r __node:=<name>
--params-file <file>`` with the copy of ``manip_dynamics`` this module comes from first on
PYTHONPATH, its output going to a log file. This module does not import rclpy: the caller
may or may not be a ROS process itself.
"""

import os
import signal
import subprocess
import sys
import tempfile
import time
from typing import Any, Callable, Iterable, Mapping

import yaml

from manip_dynamics.ros.runtime.discovery import loopback_environment

#: The folder holding the ``manip_dynamics`` package this module belongs to (the source
#: tree in a checkout, site-packages in an install).
PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def module_path(module: str) -> str:
    """
    Return the full module path of a node module named as :func:`start_node` takes it.

    :param module: A node's module (``'dynamics_node'``: under ``manip_dynamics.ros.nodes``)
        or a dotted path under ``manip_dynamics.ros`` (``'testing.controller_manager_standin'``).
    :return: E.g. ``'manip_dynamics.ros.nodes.dynamics_node'``.
    """
    return 'manip_dynamics.ros.' + (module if '.' in module else 'nodes.' + module)


def start_node(module: str, name: str, params: Mapping, *, remaps: Iterable[str] = (),
               log_dir: str | None = None,
               env: Mapping[str, str] | None = None) -> subprocess.Popen:
    """
    Start one node of this package in a new process and return at once.

    The parameters go to ``<log_dir>/<name>.params.yaml`` under the ``/**`` wildcard (the
    file serves this one process only); stdout and stderr go to ``<log_dir>/<name>.log``,
    unbuffered. The child runs in a session of its own, so a Ctrl-C in the caller's
    terminal reaches it only through :func:`stop_node`.

    :param module: A node's module, e.g. ``'dynamics_node'``, or a dotted path under
        ``manip_dynamics.ros`` (:func:`module_path`).
    :param name: Node name (``-r __node:=<name>``); also names the files.
    :param params: ROS parameters, name -> YAML-serialisable value.
    :param remaps: Extra ``from:=to`` remapping rules, each passed as ``-r <rule>``.
    :param log_dir: Folder for the parameter and log files; default a new temporary one.
    :param env: Environment of the child; default this process's. PYTHONPATH is prefixed
        with :data:`PACKAGE_ROOT` and PYTHONUNBUFFERED set either way; loopback-only
        discovery always (:func:`manip_dynamics.ros.runtime.discovery.loopback_environment`).
    :return: The process; its ``log_path`` attribute is the path of the log file.
    """
    if log_dir is None:
        log_dir = tempfile.mkdtemp(prefix='md_%s_' % name)
    params_path = os.path.join(log_dir, name + '.params.yaml')
    with open(params_path, 'w', encoding='utf-8') as stream:
        yaml.safe_dump({'/**': {'ros__parameters': dict(params)}}, stream)
    child_env = dict(os.environ if env is None else env)
    child_env['PYTHONPATH'] = PACKAGE_ROOT + os.pathsep + child_env.get('PYTHONPATH', '')
    child_env['PYTHONUNBUFFERED'] = '1'
    # the project's own node processes (tests, demo, benchmarks) stay on this machine
    child_env = loopback_environment(child_env)
    cmd = [sys.executable, '-m', module_path(module), '--ros-args',
           '-r', '__node:=' + name, '--params-file', params_path]
    for rule in remaps:
        cmd += ['-r', rule]
    log_path = os.path.join(log_dir, name + '.log')
    with open(log_path, 'w', encoding='utf-8') as log:
        proc = subprocess.Popen(cmd, env=child_env, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
    proc.log_path = log_path
    return proc


def stop_node(proc: subprocess.Popen | None, timeout: float = 10.0,
              group: bool = False) -> int | None:
    """
    Stop a node process: SIGINT, wait up to ``timeout`` seconds, then SIGKILL.

    A process that has already exited is only reaped.

    :param proc: The process (None: nothing to stop).
    :param timeout: Seconds to wait for a clean exit after SIGINT [s].
    :param group: Signal the process group ``proc`` leads (a ``ros2 launch`` started with
        ``start_new_session=True``: every process it started gets the signal, as from
        Ctrl-C in a terminal), not only ``proc``.
    :return: The exit code (negative: killed by that signal), None when ``proc`` is None.
    """
    if proc is None:
        return None

    def send(sig: int) -> None:
        if group:
            os.killpg(proc.pid, sig)
        else:
            proc.send_signal(sig)
    if proc.poll() is None:
        send(signal.SIGINT)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            send(signal.SIGKILL)
            proc.wait()
    return proc.returncode


def process_alive(pid: int) -> bool:
    """
    Return whether process ``pid`` still runs (a zombie, exited but not reaped, does not).

    For checking that a stop reached every process of a session (:func:`stop_node` with
    ``group=True``): the children of a stopped launch are not this process's to reap.
    """
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open('/proc/%d/stat' % pid) as stream:
            return stream.read().rsplit(') ', 1)[1][0] != 'Z'
    except OSError:   # gone between the two looks
        return False


def start_busy_loop(core: int) -> subprocess.Popen | None:
    """
    Start a process that keeps CPU ``core`` busy (a loaded machine), or None for core < 0.

    Stop it with ``proc.kill()`` and ``proc.wait()``.
    """
    if core < 0:
        return None
    return subprocess.Popen(['taskset', '-c', str(core), sys.executable, '-c',
                             'while True: pass'], start_new_session=True)


def read_log(proc: subprocess.Popen) -> str:
    """
    Return what a node process from :func:`start_node` has logged so far.

    :param proc: The process (its ``log_path`` attribute names the log file).
    :return: The log file's text (undecodable bytes replaced).
    """
    with open(proc.log_path, encoding='utf-8', errors='replace') as stream:
        return stream.read()


def wait_for_log(proc: subprocess.Popen, text: str, timeout: float) -> str:
    """
    Wait until a node process from :func:`start_node` has logged ``text``; return its log.

    :param proc: The process.
    :param text: What the log must contain.
    :param timeout: Longest wait [s].
    :raises AssertionError: Not logged within ``timeout`` s, or the process ended first
        (the message carries the whole log and the exit code).
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        log = read_log(proc)
        if text in log:
            return log
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    raise AssertionError('%r not in the log of %s (exit code %s):\n%s' % (
        text, proc.args[2], proc.poll(), read_log(proc)))


def wait_until(what: Callable[[], Any], timeout: float, message: str) -> Any:
    """
    Poll ``what`` every 20 ms until it returns a true value.

    :param what: The condition.
    :param timeout: Longest wait [s].
    :param message: The assertion message when the wait times out.
    :return: The first true value.
    :raises AssertionError: ``what`` stayed false for ``timeout`` s.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = what()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(message)
