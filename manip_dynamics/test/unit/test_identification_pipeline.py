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
Identification end to end, against a synthetic truth from the suite's own simulator.

The "true" arm is cobot7 with every body's mass and inertia perturbed by 10 to 30 %
(physically consistent) and other friction; it is simulated
(:func:`manip_dynamics.simulation.simulate`, not the estimator's equations) following an
optimised excitation under a computed-torque controller built on the nominal model, and
recorded at 250 Hz into a real rosbag2 folder written with ``rosbags``; sensor noise is
added to a second copy.  The fit starts from the nominal cobot7.  A different, held-out
excitation checks the prediction.  Slow (about a minute on two cores): marked ``slow``.
"""

import io
import os
import re

import numpy as np
import pytest

from manip_dynamics import cli, RobotModel
from manip_dynamics.bundled import urdf_path
from manip_dynamics.identification.data import prepare, read_csv, read_recording, write_csv
from manip_dynamics.identification.data import write_rosbag
from manip_dynamics.identification.estimation import least_squares, physically_consistent
from manip_dynamics.identification.excitation import (
    optimise_excitation, read_trajectory_yaml, trajectory_yaml)
from manip_dynamics.identification.payload import estimate_payload
from manip_dynamics.identification.regressor import pseudo_inertia
from manip_dynamics.identification.synthetic import Noise, perturbed_model, simulate_recording
from manip_dynamics.identification.urdf_writer import (
    joint_dynamics_yaml, link_parameters, read_joint_dynamics_yaml, write_identified_urdf)
from manip_dynamics.simulation import simulate

pytest.importorskip('rosbags', reason='rosbags (rosbag2 reader/writer) not installed')

#: Effort noise per joint [N m], position [rad], velocity [rad/s].
EFFORT_NOISE = np.full(7, 0.05)
NOISE = Noise(position=1e-4, velocity=1e-3, effort=EFFORT_NOISE)


@pytest.fixture(scope='module')
def run(tmp_path_factory):
    """Simulate, record into bags, read back: everything the tests below share."""
    folder = tmp_path_factory.mktemp('identification')
    nominal = RobotModel.from_urdf_file(urdf_path('cobot7'))
    true = perturbed_model(nominal, seed=1)
    train = optimise_excitation(nominal, base_frequency=0.1, harmonics=5, max_iterations=10,
                                seed=0)
    held_out = optimise_excitation(nominal, base_frequency=0.1, harmonics=5, max_iterations=2,
                                   seed=1)
    clean, noisy = simulate_recording(true, nominal, train.trajectory, duration=20.0,
                                      noise=NOISE, seed=3)
    _, held_noisy = simulate_recording(true, nominal, held_out.trajectory, duration=10.0,
                                       noise=NOISE, seed=4)
    bags = {}
    for name, rec in (('clean', clean), ('noisy', noisy), ('held_out', held_noisy)):
        path = str(folder / name)
        write_rosbag(path, rec, storage='mcap' if name == 'held_out' else 'sqlite3')
        bags[name] = read_recording(path, nominal)
    return {'nominal': nominal, 'true': true, 'train': train, 'clean': clean, 'bags': bags,
            'folder': folder, 'base': nominal.base_parameters(friction=True)}


@pytest.fixture(scope='module')
def fits(run):
    out = {}
    for name in ('clean', 'noisy'):
        samples = prepare(run['bags'][name])
        ls = least_squares(run['nominal'], samples, run['base'])
        out[name] = (samples, ls)
    return out


@pytest.mark.slow
def test_excitation_respects_limits_and_improves_conditioning(run):
    result = run['train']
    model = run['nominal']
    assert result.condition < result.initial_condition
    assert np.all(result.position_margin >= 0.1 - 1e-9)
    assert np.all(result.velocity_usage <= 0.5 + 1e-9)
    assert np.all(result.effort_usage <= 0.5 + 1e-9)
    # the exported YAML carries the same motion, starting at rest
    text = trajectory_yaml(result.trajectory, periods=1, rate=20.0, approach_time=2.0)
    again = read_trajectory_yaml(text)
    np.testing.assert_allclose(again.a, result.trajectory.a)
    import yaml
    doc = yaml.safe_load(text)
    assert doc['joint_names'] == list(model.joint_names)
    first = doc['points'][0]
    assert first['time_from_start'] == {'sec': 2, 'nanosec': 0}
    np.testing.assert_allclose(first['velocities'], 0.0, atol=1e-12)
    np.testing.assert_allclose(first['accelerations'], 0.0, atol=1e-12)
    # the simulated arm stayed inside its position limits
    q = run['clean'].q
    assert np.all(q > model.position_lower) and np.all(q < model.position_upper)


@pytest.mark.slow
def test_bag_holds_the_recording(run, tmp_path):
    clean = run['clean']
    read = run['bags']['clean']
    assert os.path.isfile(os.path.join(str(run['folder'] / 'clean'), 'metadata.yaml'))
    np.testing.assert_allclose(read.t - read.t[0], clean.t - clean.t[0], atol=1e-8)
    np.testing.assert_array_equal(read.q, clean.q)
    np.testing.assert_array_equal(read.tau, clean.tau)
    assert abs(clean.t[1] - clean.t[0] - 1.0 / 250.0) < 1e-12
    path = str(tmp_path / 'rec.csv')
    write_csv(path, clean)
    again = read_csv(path, run['nominal'])
    np.testing.assert_allclose(again.q, clean.q, rtol=1e-9, atol=1e-12)


def _significance(run, samples, ls):
    """Per base parameter: the value that would move the torques by their RMS."""
    model = run['nominal']
    y = model.regressor(samples.q, samples.qd, samples.qdd, friction=True)[..., ls.columns]
    column_rms = np.sqrt(np.mean(y.reshape(-1, ls.columns.size) ** 2, axis=0))
    return float(np.sqrt(np.mean(samples.tau ** 2))) / column_rms


@pytest.mark.slow
def test_base_parameters_noise_free_within_2_percent(run, fits):
    """
    2 % of each base parameter, or of the value that would move the torques by their RMS.

    Tiny parameters (products of inertia of the wrist, 1e-4 kg m^2) cannot be held to 2 %
    of themselves by any torque data; the second bound is 2 % in the torque they make.
    """
    samples, ls = fits['clean']
    truth = ls.K @ run['true'].inertial_parameters(friction=True)
    scale = np.maximum(np.abs(truth), _significance(run, samples, ls))
    error = np.abs(ls.values - truth) / scale
    worst = int(np.argmax(error))
    assert error[worst] <= 0.02, (ls.names[worst], ls.values[worst], truth[worst])
    # the large ones to 2 % of themselves: masses and first moments that carry gravity
    big = np.abs(truth) > _significance(run, samples, ls)
    assert np.all(np.abs(ls.values - truth)[big] <= 0.02 * np.abs(truth)[big])


@pytest.mark.slow
def test_base_parameters_noisy_within_3_sigma(run, fits):
    samples, ls = fits['noisy']
    truth = ls.K @ run['true'].inertial_parameters(friction=True)
    z = np.abs(ls.values - truth) / ls.std
    worst = int(np.argmax(z))
    assert z[worst] <= 3.0, (ls.names[worst], ls.values[worst], truth[worst], ls.std[worst])
    assert ls.condition < 1e4


@pytest.fixture(scope='module')
def identified(run, fits, tmp_path_factory):
    """Consistent fit from the noisy bag, written as URDF + joint-dynamics YAML, reloaded."""
    nominal = run['nominal']
    samples, ls = fits['noisy']
    text = open(urdf_path('cobot7'), encoding='utf-8').read()
    _, fixed = link_parameters(nominal, text)
    result = physically_consistent(nominal, samples, ls, fixed_params=fixed)
    n = nominal.dof
    friction = result.params[10 * n:].reshape(n, 3)
    written = write_identified_urdf(text, nominal, result.link_params, friction=friction)
    folder = tmp_path_factory.mktemp('identified')
    path = str(folder / 'cobot7_identified.urdf')
    with open(path, 'w', encoding='utf-8') as stream:
        stream.write(written)
    yaml_text = joint_dynamics_yaml(nominal, damping=friction[:, 0], friction=friction[:, 1])
    overrides = read_joint_dynamics_yaml(yaml_text)
    model = RobotModel.from_urdf_file(path).with_joint_dynamics(**overrides)
    return {'result': result, 'text': text, 'written': written, 'path': path, 'model': model}


@pytest.mark.slow
def test_physically_consistent_and_close_to_least_squares(identified, fits):
    result = identified['result']
    _, ls = fits['noisy']
    for k in range(7):
        assert np.min(np.linalg.eigvalsh(pseudo_inertia(result.params[10 * k:10 * k + 10]))) > 0
    assert np.max(np.abs(result.base_values - ls.values) / ls.std) < 3.0


def _strip(text: str) -> str:
    text = re.sub(r'<inertial>.*?</inertial>', '<inertial/>', text, flags=re.S)
    return re.sub(r'<dynamics [^>]*/>', '<dynamics/>', text)


def _check(path: str, capsys) -> list[dict]:
    import json
    assert cli.main(['check', path, '--json']) == 0
    report = json.loads(capsys.readouterr().out)
    assert report['counts']['error'] == 0, report
    return [f for f in report['findings'] if f['severity'] == 'warning']


@pytest.mark.slow
def test_written_urdf_loads_checks_clean_and_changes_only_inertials(run, identified, capsys):
    """
    Only <inertial> and <dynamics> change; ``check`` finds no error and no new warning.

    ``check`` also compares inertias with the links' visual shapes (a plausibility
    heuristic).  The simulated true arm written into the same file triggers one (link 5's
    perturbed inertia exceeds mass x shape size^2), link 1's unidentifiable parameters may
    trigger another: the identified file may show those, and nothing else.
    """
    assert _strip(identified['written']) == _strip(identified['text'])
    assert identified['written'] != identified['text']
    true_text = write_identified_urdf(identified['text'], run['nominal'],
                                      run['true'].inertial_parameters().reshape(7, 10))
    true_path = str(run['folder'] / 'cobot7_true.urdf')
    with open(true_path, 'w', encoding='utf-8') as stream:
        stream.write(true_text)
    allowed = {(f['kind'], f['name']) for path in (urdf_path('cobot7'), true_path)
               for f in _check(path, capsys)}
    # link 1 turns about the vertical axis only: its mass, centre of mass and Ixx, Iyy do
    # not enter any joint torque, so the fit leaves them to the regularization and the
    # shape heuristic may flag them (the bundled file's own link-1 warning covered this
    # until the shoulder column was drawn on link 1)
    allowed.add(('link', 'cobot7_link1'))
    new = [f for f in _check(identified['path'], capsys)
           if (f['kind'], f['name']) not in allowed]
    assert not new, new


def _rms(a: np.ndarray) -> np.ndarray:
    return np.sqrt(np.mean(a ** 2, axis=0))


@pytest.mark.slow
def test_held_out_torque_error(run, identified):
    """Held-out trajectory: identified URDF within 1.2x the noise, 5x better than nominal."""
    samples = prepare(run['bags']['held_out'])
    measured = samples.full[3][samples.index]        # raw efforts, noise included
    fitted = identified['model'].inverse_dynamics(samples.q, samples.qd, samples.qdd,
                                                  include_friction=True)
    nominal = run['nominal'].inverse_dynamics(samples.q, samples.qd, samples.qdd,
                                              include_friction=True)
    rms_fit = _rms(fitted - measured)
    rms_nom = _rms(nominal - measured)
    assert np.all(rms_fit <= 1.2 * EFFORT_NOISE), (rms_fit, EFFORT_NOISE)
    assert np.all(rms_nom >= 5.0 * rms_fit), (rms_nom, rms_fit)


def _hold(true: RobotModel, compensation: RobotModel, q0: np.ndarray) -> float:
    result = simulate(true, q0, duration=5.0, dt=1e-3, record_every=50,
                      controller=lambda t, q, qd: compensation.gravity_torques(q))
    return float(np.max(np.abs(result.q - q0)))


@pytest.mark.slow
def test_gravity_compensation_holds_with_the_identified_urdf(run, identified):
    q0 = np.array([0.0, -0.5, 0.3, -2.0, 0.2, 1.6, 0.5])
    drift_identified = _hold(run['true'], identified['model'], q0)
    drift_nominal = _hold(run['true'], run['nominal'], q0)
    assert drift_identified <= 1e-3, drift_identified
    assert drift_nominal >= 20.0 * drift_identified, (drift_nominal, drift_identified)


def test_payload_from_static_poses():
    """A 1.5 kg payload 5 cm off the tool axis: mass to 2 %, centre of mass to 5 mm."""
    nominal = RobotModel.from_urdf_file(urdf_path('cobot7'))
    loaded = RobotModel.from_urdf_file(urdf_path('cobot7'))
    com = np.array([0.05, 0.0, 0.04])
    loaded.set_payload('tool0', 1.5, com, (2e-3, 0.0, 0.0, 2e-3, 0.0, 1e-3))
    poses = np.array([[0.0, -0.3, 0.0, -2.0, 0.0, 1.7, 0.0],
                      [0.5, 0.2, -0.4, -1.5, 0.8, 2.0, 1.0],
                      [-0.7, -0.6, 0.6, -2.4, -1.0, 1.2, -1.2],
                      [0.2, 0.4, 0.1, -1.0, 1.5, 0.8, 2.0],
                      [1.0, -0.1, -0.8, -2.6, 0.4, 2.6, -0.5]])
    # the measurement: torques that hold the loaded arm still in the simulator
    measured = []
    for q in poses:
        result = simulate(loaded, q, duration=0.05, dt=1e-3,
                          controller=lambda t, qq, qd: loaded.gravity_torques(qq))
        assert np.max(np.abs(result.q[-1] - q)) < 1e-9
        measured.append(result.tau[-1])
    est = estimate_payload(nominal, 'tool0', poses, np.array(measured))
    assert abs(est.mass - 1.5) <= 0.02 * 1.5
    assert np.linalg.norm(est.com - com) <= 5e-3


def test_payload_needs_varied_poses():
    nominal = RobotModel.from_urdf_file(urdf_path('cobot7'))
    q = np.zeros((3, 7))
    with pytest.raises(ValueError, match='poses'):
        estimate_payload(nominal, 'tool0', q, nominal.gravity_torques(q))


def test_yaml_round_trip_and_errors():
    model = RobotModel.from_urdf_file(urdf_path('planar_2r'))
    text = joint_dynamics_yaml(model, damping=[0.1, 0.2], armature=[0.01, 0.02])
    values = read_joint_dynamics_yaml(text)
    assert values['damping'] == dict(zip(model.joint_names, [0.1, 0.2]))
    assert 'friction' not in values
    with pytest.raises(ValueError, match='joint_dynamics'):
        read_joint_dynamics_yaml('a: 1')
    stream = io.StringIO(text)
    assert stream.read().startswith('/**')
