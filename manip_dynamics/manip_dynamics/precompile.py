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
Compile every numba kernel of the library once, into numba's on-disk cache.

The kernels (:mod:`manip_dynamics.algorithms`, :mod:`manip_dynamics.simulation`) are
compiled on their first call and the machine code is kept on disk, so only the first
process after an install pays the compile time.  This module pays it up front, at build
time (``make build`` runs it after colcon) or with a one-time command::

    manip-dynamics precompile            # or: python -m manip_dynamics.precompile
    ros2 run manip_dynamics precompile   # in a colcon workspace

It drives the public API (:class:`~manip_dynamics.RobotModel`, :class:`Simulator`,
:func:`simulate`) on a small arm (:data:`ARM_URDF`) through every call path the library,
the CLI and the nodes use. The call paths are declared where the kernels are: every
module with kernels has a ``PRECOMPILE_STEPS`` list (``(label, step(model))``), collected
here, so a new kernel needs no edit in this module. The argument types, not the robot,
select the compiled signature, so one arm serves every robot.

Where the cache lives is numba's rule: ``$NUMBA_CACHE_DIR`` when set; else ``__pycache__``
next to the kernel sources when that directory is writable (with colcon's
``--symlink-install`` that is the source tree); else a per-user directory
(``~/.cache/numba/...``, ``$XDG_CACHE_HOME`` respected); when none is writable,
:mod:`manip_dynamics._numba_cache` sets ``NUMBA_CACHE_DIR`` to a per-user folder in the
temporary directory.

Numba checks each kernel's own source file, not the files of the kernels it calls, before
using a cached kernel.  So a manifest (``manip_dynamics-precompile.json`` in the cache
directory) records a hash of every kernel source; when any of them changed, or numba did,
:func:`precompile` drops the package's cached kernels and compiles them all again.
:func:`is_warm` is the fast check (no compilation) that the nodes use to say whether their
first start will compile.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
import hashlib
import importlib
import json
import os
import re
import sys
import time

#: Line prefix of the progress messages (nodes log it while they compile).
PROGRESS_PREFIX = 'compiling dynamics kernels (first start after install)'
#: File, in the cache directory of the first kernel, that records what was compiled.
MANIFEST_NAME = 'manip_dynamics-precompile.json'
#: Lock file next to the manifest: concurrent processes compile once, the others wait.
LOCK_NAME = 'manip_dynamics-precompile.lock'
#: The arm driven through the API: three joints (revolute, revolute, prismatic) and a
#: tool frame, written here so that no data file is needed; the robot does not matter.
ARM = 'precompile_arm'
_LINK = ('<link name="%s"><inertial><origin xyz="0.05 0.01 0.2"/><mass value="%g"/><inertia '
         'ixx="0.02" ixy="0.001" ixz="0" iyy="0.03" iyz="0" izz="0.025"/></inertial></link>')
_JOINT = ('<joint name="%s" type="%s"><parent link="%s"/><child link="%s"/><origin '
          'xyz="0 0 0.3" rpy="0.1 0 0"/><axis xyz="%s"/><limit lower="-2" upper="2" '
          'effort="50" velocity="2"/><dynamics damping="0.1" friction="0.2"/></joint>')
ARM_URDF = ''.join([
    '<robot name="%s"><link name="base_link"/>' % ARM,
    _LINK % ('link1', 3.0), _LINK % ('link2', 2.0), _LINK % ('link3', 1.0),
    _JOINT % ('joint1', 'revolute', 'base_link', 'link1', '0 0 1'),
    _JOINT % ('joint2', 'revolute', 'link1', 'link2', '0 1 0'),
    _JOINT % ('joint3', 'prismatic', 'link2', 'link3', '1 0 0'),
    '<link name="tool0"/><joint name="tool_joint" type="fixed"><parent link="link3"/>'
    '<child link="tool0"/><origin xyz="0 0 0.1"/></joint></robot>'])
_SELF = 'manip_dynamics.precompile'  # also when run as __main__ (python -m)
#: Sub-packages never scanned for kernels (ROS, sympy).
_SKIP_DIRS = ('ros', 'symbolic', '__pycache__')
_USES_NUMBA = re.compile(r'^\s*(import numba|from numba[ .])', re.MULTILINE)
#: Modules with ``import numba`` that failed to import: ``{module: error}``.
IMPORT_ERRORS: dict[str, str] = {}

Progress = Callable[[int, int, str], object]


def format_progress(done: int, total: int, label: str = '') -> str:
    """
    Return the progress line, e.g. ``compiling dynamics kernels (...): 3/9 mass matrix``.

    :param done: Steps finished.
    :param total: Steps in all.
    :param label: What the next (or last) step compiles.
    """
    return '%s: %d/%d%s' % (PROGRESS_PREFIX, done, total, ' ' + label if label else '')


# ---------------------------------------------------------------------- kernels and cache
def _library_sources(pattern: re.Pattern) -> list[tuple[str, str]]:
    """
    Return ``(module name, file path)`` of the core library's modules whose text matches.

    Reads the sources, imports nothing; ``ros`` and ``symbolic`` are left out. Sorted by
    module name.
    """
    root = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        'manip_dynamics')
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS
                             and not d.startswith(('.', '_')))
        for filename in sorted(filenames):
            if not filename.endswith('.py'):
                continue
            path = os.path.join(dirpath, filename)
            rel = os.path.relpath(path, root)[:-3].replace(os.sep, '.')
            name = 'manip_dynamics' if rel == '__init__' else 'manip_dynamics.' + rel
            name = name[:-len('.__init__')] if name.endswith('.__init__') else name
            if name == _SELF:
                continue
            try:
                with open(path, encoding='utf-8') as f:
                    if pattern.search(f.read()):
                        found.append((name, path))
            except (OSError, UnicodeDecodeError):
                continue
    return sorted(found)


def kernel_sources() -> list[tuple[str, str]]:
    """
    Return ``(module name, file path)`` of every module of the core library that imports numba.

    Found by reading the sources (``import numba`` / ``from numba``), nothing imported;
    ``ros`` and ``symbolic`` are left out.  Sorted by module name.
    """
    return _library_sources(_USES_NUMBA)


def kernel_modules(*, only_imported: bool = False) -> list:
    """
    Return the modules of :func:`kernel_sources`, imported.

    :param only_imported: Return only those already imported (import nothing).
    A module that fails to import is skipped and listed in :data:`IMPORT_ERRORS` (its
    kernels then compile on first use).
    """
    mods = []
    for name, _ in kernel_sources():
        if only_imported:
            if sys.modules.get(name) is not None:
                mods.append(sys.modules[name])
            continue
        try:
            mods.append(importlib.import_module(name))
        except Exception as exc:  # noqa: B902 - another module's bug must not stop us
            IMPORT_ERRORS[name] = '%s: %s' % (type(exc).__name__, exc)
    return mods


def kernel_dispatchers(*, only_imported: bool = False) -> list[tuple[str, object]]:
    """
    Return ``(qualified name, dispatcher)`` for every numba kernel of the core library.

    Sorted by name; a kernel re-exported by another module is listed once.

    :param only_imported: Look only in the modules already imported.
    """
    from numba.core.dispatcher import Dispatcher
    seen = {}
    for mod in kernel_modules(only_imported=only_imported):
        for value in vars(mod).values():
            if isinstance(value, Dispatcher) and id(value) not in seen:
                func = value.py_func
                if func.__module__.startswith('manip_dynamics.'):
                    seen[id(value)] = ('%s.%s' % (func.__module__, func.__qualname__), value)
    return sorted(seen.values(), key=lambda item: item[0])


def _sources() -> dict[str, str]:
    """Return ``{module: sha256 of its source}`` of the kernel modules and of this one."""
    out = {}
    for name, path in [(_SELF, os.path.abspath(__file__))] + kernel_sources():
        with open(path, 'rb') as f:
            out[name] = hashlib.sha256(f.read()).hexdigest()
    return out


def _expected_manifest() -> dict:
    import numba
    return {'numba': numba.__version__, 'python': sys.version.split()[0],
            'sources': _sources()}


def _called_by_kernels(dispatchers: list[tuple[str, object]]) -> set[int]:
    """Return the ids of kernels that some other kernel calls (by a global name)."""
    called = set()
    for _, disp in dispatchers:
        func = disp.py_func
        for name in func.__code__.co_names:
            value = func.__globals__.get(name)
            if value is not None and value is not disp:
                called.add(id(value))
    return called


def _manifest_matches(manifest: dict | None) -> bool:
    if not isinstance(manifest, dict):
        return False
    recorded = {k: v for k, v in manifest.items()
                if k not in ('compiled', 'unreached', 'indexes')}
    return recorded == _expected_manifest()


def _cache_dir(disp) -> str | None:
    """Return the directory numba caches ``disp`` in, or None when caching is off."""
    cache = getattr(disp, '_cache', None)
    return getattr(cache, 'cache_path', None) or None


def _index_path(disp) -> str | None:
    try:
        return disp._cache._cache_file._index_path
    except AttributeError:
        return None


def _directories(dispatchers: list[tuple[str, object]]) -> list[str]:
    dirs = []
    for _, disp in dispatchers:
        path = _cache_dir(disp)
        if path and path not in dirs:
            dirs.append(path)
    return dirs


def _manifest_path() -> str | None:
    """
    Return where the manifest lives: the cache folder of the first kernel module's kernels.

    Imports that one module (the first of :func:`kernel_sources` that defines a kernel).
    """
    from numba.core.dispatcher import Dispatcher
    for name, _ in kernel_sources():
        try:
            mod = importlib.import_module(name)
        except Exception:  # noqa: B902 - reported by kernel_modules
            continue
        for _, value in sorted(vars(mod).items()):
            if isinstance(value, Dispatcher) and value.py_func.__module__ == name:
                path = _cache_dir(value)
                return os.path.join(path, MANIFEST_NAME) if path else None
    return None


def cache_directories() -> list[str]:
    """Return the directories numba uses for the library's kernel cache, as numba chose them."""
    return _directories(kernel_dispatchers())


def _has_current_entry(disp) -> bool:
    """
    Return True when the cache index of ``disp`` holds code for this source, CPU and numba.

    Reads numba's index file (internal API; False when it changed shape).
    """
    try:
        cache = disp._cache
        index = cache._cache_file._load_index()
        probe = cache._index_key(None, disp.targetctx.codegen())
    except Exception:  # noqa: B902 - numba internals moved: treat as not warm
        return False
    return any(key[1:] == probe[1:] for key in index)


def _read_manifest(path: str | None) -> dict | None:
    if path is None:
        return None
    try:
        with open(path, encoding='utf-8') as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


@dataclass
class CacheState:
    """
    What :func:`cache_state` found.

    :ivar warm: True when every kernel loads from the cache without compiling.
    :ivar reason: Why it is not warm ('' when warm).
    :ivar directories: The cache directories of the kernels checked.
    :ivar kernels: Number of kernels the last precompile compiled (or found, when none).
    :ivar missing: Kernels with no usable cached code.
    """

    warm: bool
    reason: str
    directories: list[str]
    kernels: int
    missing: list[str] = field(default_factory=list)


def cache_state() -> CacheState:
    """
    Check, without compiling, whether every kernel is in the cache for the current sources.

    Warm means: the manifest written by the last :func:`precompile` matches the current
    kernel sources (all of them, hashed) and numba version; every kernel it compiled that
    lives in an already imported module has code in its cache index for this source, CPU
    and numba; the index files of the others exist.  Imports no kernel module beyond the
    first (optional parts such as identification stay unimported); costs a few tenths of a
    second with numba imported.
    """
    path = _manifest_path()
    dispatchers = kernel_dispatchers(only_imported=True)
    dirs = _directories(dispatchers)
    if path is None:
        if not kernel_sources():
            return CacheState(True, '', dirs, 0)
        return CacheState(False, 'numba has no writable cache directory', dirs, 0)
    manifest = _read_manifest(path)
    if manifest is None:
        return CacheState(False, 'never precompiled here', dirs, len(dispatchers))
    compiled = manifest.get('compiled', [])
    if not _manifest_matches(manifest):
        return CacheState(False, 'kernel sources or numba changed since the last precompile',
                          dirs, len(compiled))
    loaded = dict(dispatchers)
    indexes = manifest.get('indexes', {})
    missing = []
    for name in compiled:
        disp = loaded.get(name)
        if disp is not None:
            ok = _has_current_entry(disp)
        else:
            ok = isinstance(indexes.get(name), str) and os.path.isfile(indexes[name])
        if not ok:
            missing.append(name)
    reason = ('%d of %d kernels not in the cache' % (len(missing), len(compiled))
              if missing else '')
    return CacheState(not missing, reason, dirs, len(compiled), missing)


def is_warm() -> bool:
    """Return True when the first calls will load every kernel from disk (no compiling)."""
    return cache_state().warm


# ---------------------------------------------------------------------- the call paths
#: The last step's label: every bound entry point, and kernels the API does not call.
LAST_STEP = 'entry points and other kernels'


def _bind_entry_points(model) -> None:
    """Bind every entry point of every kernel module (algorithms._jit.EntryPoints)."""
    for mod in kernel_modules():
        for value in list(vars(mod).values()):
            if type(value).__name__ == 'EntryPoints' and hasattr(value, 'bind_all'):
                value.bind_all()


_DECLARES_STEPS = re.compile(r'^PRECOMPILE_STEPS = ', re.MULTILINE)


def _step_modules() -> list:
    """
    Return the core library's modules that declare ``PRECOMPILE_STEPS``, imported, by name.

    A module that fails to import is skipped and listed in :data:`IMPORT_ERRORS`.
    """
    mods = []
    for name, _ in _library_sources(_DECLARES_STEPS):
        try:
            mods.append(importlib.import_module(name))
        except Exception as exc:  # noqa: B902 - another module's bug must not stop us
            IMPORT_ERRORS[name] = '%s: %s' % (type(exc).__name__, exc)
    return mods


def _steps() -> list[tuple[str, Callable[[object], object]]]:
    """
    Return the labelled steps, collected from the kernel modules' ``PRECOMPILE_STEPS``.

    Every module that declares kernels declares how the API reaches them (a list of
    ``(label, step(model))``); steps of one label run together, in module order, and
    :data:`LAST_STEP` (binding every entry point) comes last. A new kernel needs no edit
    here: its module's list, or an entry point, reaches it (a test checks that every
    kernel is reached).
    """
    grouped: dict[str, list[Callable[[object], object]]] = {}
    for mod in _step_modules():
        for label, step in getattr(mod, 'PRECOMPILE_STEPS', ()):
            grouped.setdefault(label, []).append(step)
    grouped.setdefault(LAST_STEP, []).insert(0, _bind_entry_points)
    order = [label for label in grouped if label != LAST_STEP] + [LAST_STEP]

    def run_all(funcs: list[Callable[[object], object]]) -> Callable[[object], None]:
        def run(model) -> None:
            for func in funcs:
                func(model)
        return run
    return [(label, run_all(grouped[label])) for label in order]


def steps() -> list[tuple[str, Callable[[object], object]]]:
    """
    Return the warm-up steps as ``(label, function(model))`` pairs, in order.

    Each step calls the public API through one family of kernels (single states, batches,
    external wrenches, friction, armature, every integrator and limit mode).  Used by
    :func:`precompile` and by ``benchmarks/compile_benchmark.py``.
    """
    return _steps()


def warm_model():
    """Return the small arm the steps run on (:data:`ARM_URDF`)."""
    from manip_dynamics.robot_model import RobotModel
    return RobotModel.from_urdf_string(ARM_URDF)


# ---------------------------------------------------------------------- one model, live
def warm_up(model, *, acceleration_limit: float | None = None,
            trajectories: bool = False) -> None:
    """
    Exercise ``model``'s kernels once, so a node's first message or request is fast.

    The one place a node warms up (off its control loop, while it loads a model): the
    numba kernels compile, or load from the disk cache, on their first call, from a
    fraction of a second to tens of seconds; :func:`precompile` fills the cache, this loads
    it for the model at hand.

    :param model: The :class:`~manip_dynamics.RobotModel` (not modified): every dynamics
        call once at q = 0 (a call that raises there, e.g. a singular M, has compiled all the
        same).
    :param acceleration_limit: With a value [rad/s^2 or m/s^2], also retime a tiny move
        (:func:`manip_dynamics.planning.retime`): behind a controller_manager the first
        untimed trajectory otherwise stopped trajectory_controller's commands for 0.2 s.
        A too-weak arm is skipped (said again for a real trajectory).
    :param trajectories: Also build and sample each kind of timed trajectory once
        (:class:`manip_dynamics.control.TimedPoints`): the first one of a process imports
        scipy.interpolate, which in ``make run`` on a loaded 2-core machine stopped the
        commands for 1.2 s.
    """
    import numpy as np
    zero = np.zeros(model.dof)
    tip = model.tip_link or model.link_names[-1]
    calls = (lambda: model.inverse_dynamics(zero, zero, zero),
             lambda: model.gravity_torques(zero),
             lambda: model.coriolis_torques(zero, zero),
             lambda: model.friction_torques(zero),
             lambda: model.mass_matrix(zero),
             lambda: model.coriolis_matrix(zero, zero),
             lambda: model.forward_dynamics(zero, zero, zero),
             lambda: model.cartesian_dynamics(zero, zero, tip))
    for call in calls:
        try:
            call()
        except ValueError:
            pass
    if acceleration_limit:
        from manip_dynamics.planning import retime
        lower = np.where(np.isfinite(model.position_lower), model.position_lower, -1.0)
        upper = np.where(np.isfinite(model.position_upper), model.position_upper, 1.0)
        middle = 0.5 * (lower + upper)
        try:
            retime(model, np.vstack([middle, middle + 0.01 * (upper - lower)]),
                   acceleration_limits=acceleration_limit)
        except ValueError:
            pass
    if trajectories:
        from manip_dynamics.control import TimedPoints
        rows = np.zeros((2, model.dof))
        for vel, acc in ((rows, rows), (rows, None), (None, None)):
            TimedPoints([0.0, 0.1], rows, vel, acc).sample(np.array([0.05]))


# ---------------------------------------------------------------------- precompile
@dataclass
class PrecompileReport:
    """
    What :func:`precompile` did.

    :ivar compiled: False when the cache was already warm and nothing ran.
    :ivar kernels: Kernels in the library.
    :ivar signatures: Compiled (or loaded) signatures over all kernels.
    :ivar unreached: Kernels that neither a step nor another kernel calls (not compiled:
        a step is missing; they compile on first use and :func:`is_warm` ignores them).
        Helpers called only by other kernels need no code of their own: a kernel loaded
        from the cache carries its callees.
    :ivar directories: Where numba put the cache.
    :ivar seconds: Wall time [s].
    :ivar cpu_seconds: CPU time of this process [s].
    :ivar step_seconds: Wall time of each step [s], by label.
    :ivar errors: Steps that raised, by label: ``'ExceptionType: message'``.  The other
        steps still ran; no manifest is written, so the cache does not count as warm.
    """

    compiled: bool
    kernels: int
    signatures: int
    unreached: list[str]
    directories: list[str]
    seconds: float
    cpu_seconds: float
    step_seconds: dict[str, float] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)


def _flush(dispatchers: list[tuple[str, object]]) -> None:
    """Empty the cache index of every kernel so none can load code built on old callees."""
    for _, disp in dispatchers:
        cache = getattr(disp, '_cache', None)
        if cache is not None and not disp.signatures:
            try:
                cache.flush()
            except OSError:
                pass


class _Lock:
    """An exclusive advisory lock on a file (no-op where fcntl is missing)."""

    def __init__(self, directory: str | None) -> None:
        self._path = os.path.join(directory, LOCK_NAME) if directory else None
        self._file = None

    def __enter__(self) -> '_Lock':
        try:
            import fcntl
            self._file = open(self._path, 'a')
            fcntl.flock(self._file, fcntl.LOCK_EX)
        except (ImportError, OSError, TypeError):
            if self._file is not None:
                self._file.close()
            self._file = None
        return self

    def __exit__(self, *exc: object) -> None:
        if self._file is not None:
            self._file.close()  # releases the lock


def precompile(progress: Progress | None = None, *, force: bool = False,
               model=None) -> PrecompileReport:
    """
    Compile every kernel signature the library uses and keep it in numba's disk cache.

    Does nothing when :func:`cache_state` says the cache is warm (unless ``force``).
    Otherwise, when the kernel sources or numba changed since the last run, drops the
    package's cached kernels first (numba would keep code built on an old callee), then
    runs :func:`steps` and writes the manifest.  Processes that start together compile
    once: the others wait on a file lock, then load from the cache.

    :param progress: ``progress(done, total, label)`` called before each step and at the
        end (``done == total``); :func:`format_progress` makes the log line.
    :param force: Recompile even when the cache is warm.
    :param model: The :class:`~manip_dynamics.RobotModel` to drive (default:
        :func:`warm_model`); any model compiles the same signatures.
    :return: A :class:`PrecompileReport`.
    """
    t0, c0 = time.perf_counter(), time.process_time()
    if not force:
        state = cache_state()
        if state.warm:
            return PrecompileReport(False, state.kernels, 0, [], state.directories,
                                    time.perf_counter() - t0, time.process_time() - c0)
    dispatchers = kernel_dispatchers()
    dirs = _directories(dispatchers)
    manifest_path = _manifest_path()
    with _Lock(os.path.dirname(manifest_path) if manifest_path else None):
        # Another process may have compiled everything while this one waited for the lock.
        state = cache_state()
        if state.warm and not force:
            return PrecompileReport(False, state.kernels, 0, [], state.directories,
                                    time.perf_counter() - t0, time.process_time() - c0)
        if force or not _manifest_matches(_read_manifest(manifest_path)):
            _flush(dispatchers)
        todo = _steps()
        total = len(todo) + 1
        if progress is not None:
            progress(0, total, 'loading a small test arm')
        if model is None:
            model = warm_model()
        timings = {}
        errors = {}
        for k, (label, step) in enumerate(todo):
            if progress is not None:
                progress(k + 1, total, label)
            t_step = time.perf_counter()
            try:
                step(model)
            except Exception as exc:  # noqa: B902 - a failing step must not stop the others
                errors[label] = '%s: %s' % (type(exc).__name__, ' '.join(str(exc).split()))
            timings[label] = time.perf_counter() - t_step
        unreached = _record(dispatchers, manifest_path if not errors else None)
        if progress is not None:
            progress(total, total, 'done')
    return PrecompileReport(
        True, len(dispatchers), sum(len(d.signatures) for _, d in dispatchers), unreached,
        dirs, time.perf_counter() - t0, time.process_time() - c0, timings, errors)


def _record(dispatchers: list[tuple[str, object]], manifest_path: str | None) -> list[str]:
    """Write the manifest for what this process compiled; return the unreached kernels."""
    called = _called_by_kernels(dispatchers)
    unreached = [name for name, disp in dispatchers
                 if not disp.signatures and id(disp) not in called]
    if manifest_path:
        compiled = [(name, disp) for name, disp in dispatchers if disp.signatures]
        _write_manifest(manifest_path, dict(
            _expected_manifest(), unreached=unreached,
            compiled=[name for name, _ in compiled],
            indexes={name: _index_path(disp) for name, disp in compiled}))
    return unreached


def mark_warm() -> list[str]:
    """
    Record the kernels this process compiled or loaded as the warm set (write the manifest).

    For callers that ran :func:`steps` themselves (``benchmarks/compile_benchmark.py``)
    in a process that started from an empty cache: afterwards :func:`is_warm` holds.

    :return: The kernels no step reached (see :class:`PrecompileReport`).
    """
    return _record(kernel_dispatchers(), _manifest_path())


def _write_manifest(path: str, manifest: dict) -> None:
    tmp = '%s.%d.tmp' % (path, os.getpid())
    try:
        with open(tmp, 'w', encoding='utf-8') as f:
            json.dump(manifest, f, indent=1, sort_keys=True)
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only cache simply stays "not precompiled"


# ---------------------------------------------------------------------- command line
def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``manip-dynamics precompile`` to ``parser``."""
    parser.add_argument('--check', action='store_true',
                        help='only report whether the cache is warm (exit 1 when not)')
    parser.add_argument('--force', action='store_true',
                        help='compile again even when the cache is warm')
    parser.add_argument('--quiet', action='store_true', help='print nothing but errors')


def run(args: argparse.Namespace, out=None) -> int:
    """
    Run the precompile command with parsed ``args``; print to ``out`` (default stdout).

    :return: 0 when the cache is warm afterwards, 1 otherwise.
    """
    out = sys.stdout if out is None else out

    def say(text: str) -> None:
        if not args.quiet:
            out.write(text + '\n')
            out.flush()

    if args.check:
        state = cache_state()
        say('kernel cache: %s (%d kernels) in %s' % (
            'warm' if state.warm else 'cold: ' + state.reason, state.kernels,
            ', '.join(state.directories) or 'no directory'))
        return 0 if state.warm else 1
    report = precompile(lambda d, t, label: say(format_progress(d, t, label)),
                        force=args.force)
    where = ', '.join(report.directories) or 'no writable directory'
    if not report.compiled:
        say('precompile: kernel cache already warm (%d kernels) in %s'
            % (report.kernels, where))
        return 0
    say('precompile: %d kernels, %d signatures in %.1f s (%.1f s CPU); cache in %s' % (
        report.kernels, report.signatures, report.seconds, report.cpu_seconds, where))
    for label, error in report.errors.items():
        sys.stderr.write('precompile: error: step %r failed: %s\n' % (label, error))
    if report.errors:
        return 1
    if report.unreached:
        sys.stderr.write('precompile: warning: no step reaches %s; they compile on first '
                         'use\n' % ', '.join(report.unreached))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m manip_dynamics.precompile`` and ``ros2 run ... precompile``."""
    parser = argparse.ArgumentParser(
        prog='precompile', description='Compile the numba kernels of manip_dynamics into the '
        'on-disk cache (once after an install; skipped when the cache is warm).')
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == '__main__':
    # Run the imported module, not this __main__ copy, so that there is one module state.
    from manip_dynamics.precompile import main as _main
    sys.exit(_main())
