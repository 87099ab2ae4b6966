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
Tests of manip_dynamics.precompile (kernel cache warm-up) and manip_dynamics._numba_cache.

The precompile runs on the cache this test process uses (warm after ``make build``, so
fast; it compiles when cold).  The cold path from an empty cache is exercised by
``make test-cold`` and ``benchmarks/compile_benchmark.py``.
"""

import io
import os
import subprocess
import sys

import pytest

from manip_dynamics import _numba_cache
from manip_dynamics import precompile

PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_progress_line_names_the_first_start_and_counts_steps():
    assert precompile.format_progress(3, 9, 'mass matrix') == (
        'compiling dynamics kernels (first start after install): 3/9 mass matrix')
    assert precompile.format_progress(9, 9).endswith(': 9/9')


def test_every_module_with_kernels_is_found():
    names = [name for name, _ in precompile.kernel_dispatchers()]
    assert names == sorted(set(names))
    for kernel in ('manip_dynamics.algorithms.kernels.dynamics',
                   'manip_dynamics.algorithms.kernels.matrices',
                   'manip_dynamics.simulation.integrators.advance'):
        assert kernel in names
    assert not any(name.startswith('manip_dynamics.ros.') for name in names)
    assert precompile.IMPORT_ERRORS == {}


def test_precompile_reaches_every_kernel_and_leaves_the_cache_warm():
    calls = []
    report = precompile.precompile(lambda done, total, label: calls.append((done, total)))
    state = precompile.cache_state()
    assert state.warm, state.reason
    assert state.directories and all(os.path.isdir(d) for d in state.directories)
    if report.compiled:
        # Progress from 0 to total, one call per step, as the nodes log it.
        total = calls[0][1]
        assert calls == [(k, total) for k in range(total + 1)]
        # A kernel that neither a step nor another kernel calls compiles on a user's
        # control path: add a step for it in precompile._steps.
        assert report.unreached == []
    again = precompile.precompile()
    assert not again.compiled


def test_manifest_from_other_sources_does_not_count_as_warm():
    good = dict(precompile._expected_manifest(), compiled=[], unreached=[], indexes={})
    assert precompile._manifest_matches(good)
    assert 'manip_dynamics.algorithms.rnea' in good['sources']
    for module in good['sources']:
        stale = dict(good, sources=dict(good['sources'], **{module: '0' * 64}))
        assert not precompile._manifest_matches(stale)
    assert not precompile._manifest_matches(dict(good, numba='0.0'))
    assert not precompile._manifest_matches(None)


def test_check_command_reports_the_cache_state():
    out = io.StringIO()
    args = type('Args', (), {'check': True, 'force': False, 'quiet': False})()
    code = precompile.run(args, out)
    state = precompile.cache_state()
    assert code == (0 if state.warm else 1)
    assert out.getvalue().startswith('kernel cache: ')


def test_cli_has_the_precompile_command():
    proc = subprocess.run([sys.executable, '-m', 'manip_dynamics.cli', 'precompile', '--help'],
                          cwd=PACKAGE_ROOT, capture_output=True, text=True, timeout=120,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    assert '--check' in proc.stdout


def test_import_does_not_load_numba_until_a_model_is_used():
    code = ('import sys, manip_dynamics, manip_dynamics.bundled; '
            'print("numba" in sys.modules); '
            'from manip_dynamics import RobotModel; print("numba" in sys.modules)')
    proc = subprocess.run([sys.executable, '-c', code], cwd=PACKAGE_ROOT, capture_output=True,
                          text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ['False', 'True']


def test_cache_location_left_to_numba_when_it_has_a_writable_folder(monkeypatch):
    monkeypatch.setenv('NUMBA_CACHE_DIR', '')  # empty counts as unset, and is restored
    monkeypatch.setattr(_numba_cache, '_writable_folder', lambda path: True)
    assert _numba_cache.ensure_cache_location() is None
    assert os.environ['NUMBA_CACHE_DIR'] == ''


def test_cache_location_respects_numba_cache_dir(monkeypatch, tmp_path):
    monkeypatch.setenv('NUMBA_CACHE_DIR', str(tmp_path))
    monkeypatch.setattr(_numba_cache, '_writable_folder', lambda path: False)
    assert _numba_cache.ensure_cache_location() is None
    assert os.environ['NUMBA_CACHE_DIR'] == str(tmp_path)


def test_cache_location_falls_back_to_a_temporary_folder(monkeypatch, tmp_path):
    # Read-only install and no writable home: only the temporary folder is writable.
    monkeypatch.setenv('NUMBA_CACHE_DIR', '')
    fallback = str(tmp_path / 'fallback')
    monkeypatch.setattr(_numba_cache, 'fallback_folder', lambda: fallback)
    monkeypatch.setattr(_numba_cache, '_writable_folder', lambda path: path == fallback)
    config = pytest.importorskip('numba.core.config')
    monkeypatch.setattr(config, 'CACHE_DIR', config.CACHE_DIR)
    assert _numba_cache.ensure_cache_location() == fallback
    assert os.environ['NUMBA_CACHE_DIR'] == fallback
    assert config.CACHE_DIR == fallback


def test_writable_folder_probe(tmp_path):
    assert _numba_cache._writable_folder(str(tmp_path / 'new'))
    blocked = tmp_path / 'file'
    blocked.write_text('not a folder')
    assert not _numba_cache._writable_folder(str(blocked / 'sub'))


def test_a_failing_step_is_reported_and_the_cache_not_marked_warm(monkeypatch):
    def boom(model):
        raise ValueError('bad\n  sample state')

    written = []
    cold = precompile.CacheState(False, 'test', [], 0)
    monkeypatch.setattr(precompile, 'cache_state', lambda: cold)
    monkeypatch.setattr(precompile, '_manifest_matches', lambda manifest: True)  # no flush
    monkeypatch.setattr(precompile, '_steps', lambda: [('boom', boom), ('fine', lambda m: None)])
    monkeypatch.setattr(precompile, '_write_manifest', lambda *a: written.append(a))
    report = precompile.precompile(model=object())
    assert report.compiled
    assert report.errors == {'boom': 'ValueError: bad sample state'}
    assert set(report.step_seconds) == {'boom', 'fine'}
    assert written == []


def test_warm_up_loads_what_a_node_first_uses_off_its_loop():
    # a fresh process: before the warm-up neither the retiming nor scipy's interpolation is
    # loaded (what stopped trajectory_controller's commands for 0.2 s and 1.2 s on first use)
    code = ('import sys; from manip_dynamics.bundled import urdf_path; '
            'from manip_dynamics import RobotModel, precompile; '
            'm = RobotModel.from_urdf_file(urdf_path("cobot7")); '
            'names = ("manip_dynamics.planning.retiming", "scipy.interpolate"); '
            'print([n in sys.modules for n in names]); '
            'precompile.warm_up(m); print([n in sys.modules for n in names]); '
            'precompile.warm_up(m, acceleration_limit=5.0, trajectories=True); '
            'print([n in sys.modules for n in names])')
    proc = subprocess.run([sys.executable, '-c', code], cwd=PACKAGE_ROOT, capture_output=True,
                          text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split('\n')[:3] == ['[False, False]', '[False, False]', '[True, True]']
