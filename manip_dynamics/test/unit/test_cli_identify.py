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
``manip-dynamics identify``: the four steps through the command line, on the planar 2R arm.

excite -> simulate (a perturbed "true" arm in the simulator, recorded into a rosbag2
folder) -> fit -> validate, with ``--json`` documents checked for their content and the
written files for what they must be; bad input gives exit code 2 and one line.
"""

import json
import os

import pytest

from manip_dynamics import cli

pytest.importorskip('rosbags', reason='rosbags (rosbag2 reader/writer) not installed')

COMMON = ['planar_2r', '--gravity', '0,-9.81,0']


def _run(capsys, *argv):
    code = cli.main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.slow
def test_identify_excite_simulate_fit_validate(tmp_path, capsys):
    j = lambda name: str(tmp_path / name)  # noqa: E731
    code, out, _ = _run(capsys, 'identify', 'excite', *COMMON, '--out', j('excite.yaml'),
                        '--csv', j('excite.csv'), '--iterations', '5', '--json')
    assert code == 0
    doc = json.loads(out)
    assert doc['condition'] <= doc['initial_condition']
    assert os.path.isfile(j('excite.yaml')) and os.path.isfile(j('excite.csv'))
    code, out, _ = _run(capsys, 'identify', 'simulate', *COMMON, '--excitation',
                        j('excite.yaml'), '--duration', '20', '--out', j('run'), '--quiet')
    assert code == 0, out
    assert os.path.isfile(os.path.join(j('run'), 'metadata.yaml'))
    code, out, err = _run(capsys, 'identify', 'fit', *COMMON, j('run'), '--out',
                          j('identified.urdf'))
    assert code == 0, err
    assert 'fit [' in err                         # progress on stderr
    assert 'condition number' in out and 'wrote' in out
    assert os.path.isfile(j('identified_joint_dynamics.yaml'))
    code, out, _ = _run(capsys, 'identify', 'validate', *COMMON, j('run'), '--identified',
                        j('identified.urdf'), '--joint-dynamics',
                        j('identified_joint_dynamics.yaml'), '--plot', j('v.png'), '--json')
    assert code == 0
    doc = json.loads(out)
    for joint, rms in doc['rms']['identified'].items():
        assert rms < 0.5 * doc['rms']['urdf'][joint], doc['rms']
    assert os.path.getsize(j('v.png')) > 1000


def test_identify_bad_input(tmp_path, capsys):
    code, _, err = _run(capsys, 'identify', 'fit', 'planar_2r', str(tmp_path / 'nothing'),
                        '--out', str(tmp_path / 'x.urdf'))
    assert code == 2
    assert err.startswith('manip-dynamics: error:') and err.count('\n') == 1
    code, _, err = _run(capsys, 'identify', 'excite', 'planar_2r', '--out',
                        str(tmp_path / 'e.yaml'), '--harmonics', '1')
    assert code == 2 and 'harmonics' in err


@pytest.mark.slow
def test_armature_is_identified():
    """Rotor inertias in the simulated truth come back with --armature (library path)."""
    import numpy as np

    from manip_dynamics import RobotModel
    from manip_dynamics.bundled import urdf_path
    from manip_dynamics.identification.data import prepare
    from manip_dynamics.identification.estimation import least_squares
    from manip_dynamics.identification.excitation import optimise_excitation
    from manip_dynamics.identification.synthetic import perturbed_model, simulate_recording

    nominal = RobotModel.from_urdf_file(urdf_path('planar_2r'), gravity=(0.0, -9.81, 0.0))
    true = perturbed_model(nominal, seed=2).with_joint_dynamics(
        armature={nominal.joint_names[0]: 0.05, nominal.joint_names[1]: 0.02})
    traj = optimise_excitation(nominal, max_iterations=5).trajectory
    clean, _ = simulate_recording(true, nominal, traj, duration=20.0)
    base = nominal.base_parameters(friction=True, armature=True)
    ls = least_squares(nominal, prepare(clean), base)
    truth = ls.K @ true.inertial_parameters(friction=True, armature=True)
    assert 'ia2' in ls.names        # joint 2's rotor inertia is a base parameter alone
    k = ls.names.index('ia2')
    assert abs(ls.values[k] - 0.02) <= 0.1 * 0.02, (ls.values[k], truth[k])
    np.testing.assert_allclose(ls.values, truth, rtol=0.02, atol=0.02 * np.abs(truth).max())
