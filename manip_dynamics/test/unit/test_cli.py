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
End-to-end tests of the ``manip-dynamics`` command-line tool.

Every subcommand runs as a subprocess (``python -m manip_dynamics.cli``, the same ``main``
the console script calls) on a bundled URDF.  ``--json`` output is parsed and compared
with the library and, for the planar 2R arm, with Craig's closed form (section 6.7, eq.
6.60), typed in here independently.  ``check`` runs on deliberately broken URDFs written
to tmp files.  User mistakes must give exit code 2, exactly one line on stderr and no
traceback.
"""

import importlib.util
import json
import math
import os
from pathlib import Path
import subprocess
import sys

import numpy as np
import pytest
import urdf_factory

from manip_dynamics import RobotModel
from manip_dynamics.bundled import urdf_path
from manip_dynamics.cli import build_parser
from manip_dynamics.cli.common import CliError, parse_joint_values
from manip_dynamics.model_check import check_urdf_string
from manip_dynamics.ros.runtime.discovery import loopback_environment

PACKAGE_ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 240

# Craig sec. 6.7 planar 2R arm as bundled (planar_2r.urdf): point masses at the distal ends.
L1, L2, M1, M2, G = 1.0, 0.8, 2.0, 1.5, 9.81
GRAVITY_2R = '0,-9.81,0'


def run_cli(*args: str, expect: int | None = 0) -> subprocess.CompletedProcess:
    """Run ``manip-dynamics ARGS`` as a subprocess from the source tree; check its exit code."""
    env = dict(os.environ)
    env['PYTHONPATH'] = str(PACKAGE_ROOT) + os.pathsep + env.get('PYTHONPATH', '')
    env['MPLBACKEND'] = 'Agg'
    env = loopback_environment(env)
    proc = subprocess.run([sys.executable, '-m', 'manip_dynamics.cli', *args],
                          capture_output=True, text=True, timeout=TIMEOUT, env=env,
                          cwd=str(PACKAGE_ROOT))
    if expect is not None:
        assert proc.returncode == expect, (
            'exit %d (expected %d)\nstdout:\n%s\nstderr:\n%s'
            % (proc.returncode, expect, proc.stdout, proc.stderr))
    return proc


def run_json(*args: str) -> dict:
    """Run a subcommand with --json and parse stdout."""
    return json.loads(run_cli(*args, '--json').stdout)


def craig_2r(q, qd, qdd):
    """Return (M, V, G, tau) of Craig's 2R arm, eq. 6.60-6.62, gravity along -y."""
    m = urdf_factory.craig_m(L1, L2, M1, M2, q)
    v = urdf_factory.craig_v(L1, L2, M1, M2, q, qd)
    g = urdf_factory.craig_g(L1, L2, M1, M2, q, G)
    return m, v, g, m @ np.asarray(qdd) + v + g


@pytest.fixture(scope='module')
def cobot():
    return RobotModel.from_urdf_file(urdf_path('cobot7'))


# ---------------------------------------------------------------------- help and parsing
SUBCOMMANDS = ['info', 'check', 'id', 'fd', 'terms', 'gravity', 'cartesian', 'simulate',
               'closed-form', 'bench']


@pytest.mark.parametrize('command', SUBCOMMANDS)
def test_every_subcommand_help_has_an_example_and_common_options(command):
    parser = build_parser()
    sub = parser._subparsers._group_actions[0].choices[command]
    text = sub.format_help()
    assert 'example:' in text and 'manip-dynamics %s ' % command in text
    for option in ('--root-link', '--tip-link', '--gravity', '--json', '--debug'):
        assert option in text


def test_help_as_a_subprocess_exits_0():
    proc = run_cli('gravity', '--help')
    assert 'example:' in proc.stdout and proc.stderr == ''


def test_joint_values_positional_named_and_errors():
    names = ('a', 'b', 'c')
    assert parse_joint_values('1,2,3', names, '--q').tolist() == [1, 2, 3]
    # named form: joints not named are 0
    assert parse_joint_values('c=0.5, a=pi/2', names, '--q').tolist() == [math.pi / 2, 0, 0.5]
    assert parse_joint_values(None, names, '--q').tolist() == [0, 0, 0]
    for bad, needle in (('1,2', '3 joints'), ('a=1,d=2', "unknown joint 'd'"),
                        ('a=1,a=2', 'twice'), ('a=1,2,3', 'mixes'), ('1,x,3', "'b'"),
                        ('inf,0,0', 'finite'), ('a=__import__', 'not a number')):
        with pytest.raises(CliError, match=needle):
            parse_joint_values(bad, names, '--q')


# ---------------------------------------------------------------------- numeric subcommands
def test_info_json_matches_the_library_and_the_published_mass(cobot):
    doc = run_json('info', 'cobot7')
    assert doc['dof'] == 7
    assert [j['name'] for j in doc['joints']] == list(cobot.joint_names)
    # Gaz et al. 2019 masses of links 1-7 sum to 16.062 kg (urdf/README.md)
    assert doc['total_mass'] == pytest.approx(16.062, abs=1e-3)
    assert doc['root_link'] == 'cobot7_base_link'
    assert [j['effort'] for j in doc['joints']] == pytest.approx(list(cobot.effort_limits))


def test_info_table_shows_tree_units_and_tip_selection():
    out = run_cli('info', 'gripper_arm', '--tip-link', 'gripper_arm_finger_left').stdout
    assert 'gripper_arm_finger_left_joint' in out and 'kinematic tree' in out
    assert 'kg' in out and 'N m' in out
    # the right finger is off the chain root -> tip: it is locked and reported
    assert 'locked' in out and 'gripper_arm_finger_right_joint' in out


def test_id_terms_fd_gravity_on_planar_2r_match_craig_6_60():
    q, qd, qdd = (0.3, 1.1), (0.7, -1.2), (0.5, -0.4)
    m, v, g, tau = craig_2r(q, qd, qdd)
    doc = run_json('id', 'planar_2r', '--gravity', GRAVITY_2R, '--q', '0.3,1.1',
                   '--qd', '0.7,-1.2', '--qdd', 'planar_2r_joint2=-0.4,planar_2r_joint1=0.5')
    np.testing.assert_allclose(doc['tau'], tau, rtol=1e-10, atol=1e-10)
    terms = run_json('terms', 'planar_2r', '--gravity', GRAVITY_2R, '--q', '0.3,1.1',
                     '--qd', '0.7,-1.2')
    np.testing.assert_allclose(terms['M'], m, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(terms['C_qd'], v, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.array(terms['C']) @ np.array(qd), v, rtol=1e-10,
                               atol=1e-12)
    np.testing.assert_allclose(terms['g'], g, rtol=1e-10, atol=1e-12)
    fd = run_json('fd', 'planar_2r', '--gravity', GRAVITY_2R, '--q', '0.3,1.1',
                  '--qd', '0.7,-1.2', '--tau', '%.17g,%.17g' % tuple(tau))
    np.testing.assert_allclose(fd['qdd'], qdd, rtol=1e-9, atol=1e-9)
    grav = run_json('gravity', 'planar_2r', '--gravity', GRAVITY_2R, '--q', '0.3,1.1')
    np.testing.assert_allclose(grav['g'], g, rtol=1e-10)
    # effort limit 100 N m (planar_2r.urdf)
    np.testing.assert_allclose(grav['percent_of_limit'], 100 * np.abs(g) / 100.0, rtol=1e-10)


def test_id_and_fd_json_on_cobot7_match_the_library_with_named_state_and_wrench(cobot):
    q = np.array([0.1, -0.4, 0.2, -2.0, 0.3, 1.5, 0.7])
    qd = np.array([0.2, 0.1, -0.3, 0.4, 0.0, -0.2, 0.5])
    q_arg = ','.join('%s=%.17g' % (n, v) for n, v in reversed(list(zip(cobot.joint_names, q))))
    wrench = np.array([1.0, -2.0, 3.0, 0.1, 0.2, -0.3])
    doc = run_json('id', 'cobot7', '--q', q_arg, '--qd', ','.join('%.17g' % v for v in qd),
                   '--wrench', 'tool0=' + ','.join('%g' % w for w in wrench),
                   '--include-friction')
    assert doc['joint_names'] == list(cobot.joint_names)
    expected = cobot.inverse_dynamics(q, qd, np.zeros(7), external_wrenches={'tool0': wrench},
                                      include_friction=True)
    np.testing.assert_allclose(doc['tau'], expected, rtol=1e-12, atol=1e-12)
    # physical identity, independent of the library: a wrench adds -J^T w
    j_tool = cobot.jacobian(q, 'tool0', frame='link')
    plain = run_json('id', 'cobot7', '--q', q_arg, '--qd', ','.join('%.17g' % v for v in qd),
                     '--include-friction')
    np.testing.assert_allclose(np.array(plain['tau']) - doc['tau'], j_tool.T @ wrench,
                               atol=1e-9)


def test_cartesian_json_matches_the_library_and_craig_example_6_6():
    # Craig sec. 6.10: for a square, regular J, M_x = J^-T M J^-1 and G_x = J^-T G; here J
    # is the textbook 2R tip Jacobian and M, G are Craig eq. 6.60, all typed in above.
    q = (0.3, 1.2)
    doc = run_json('cartesian', 'planar_2r', 'tool', '--gravity', GRAVITY_2R,
                   '--q', '0.3,1.2', '--directions', 'x,y')
    m, _, g, _ = craig_2r(q, (0, 0), (0, 0))
    s1, c1 = math.sin(q[0]), math.cos(q[0])
    s12, c12 = math.sin(q[0] + q[1]), math.cos(q[0] + q[1])
    jac = np.array([[-L1 * s1 - L2 * s12, -L2 * s12], [L1 * c1 + L2 * c12, L2 * c12]])
    lam = np.linalg.inv(jac @ np.linalg.solve(m, jac.T))
    np.testing.assert_allclose(doc['jacobian'], jac, atol=1e-12)
    np.testing.assert_allclose(doc['mass_matrix'], lam, rtol=1e-9)
    np.testing.assert_allclose(doc['gravity_term'], np.linalg.solve(jac.T, g), rtol=1e-9)
    assert doc['directions'] == ['x', 'y'] and doc['near_singular'] is False
    np.testing.assert_allclose(doc['pose'][0][3], L1 * c1 + L2 * c12, atol=1e-12)


def test_gravity_root_and_tip_options_change_the_model(cobot):
    q = '0.1,-0.4,0.2,-2.0,0.3,1.5,0.7'
    sideways = run_json('gravity', 'cobot7', '--q', q, '--gravity', '9.81,0,0')
    model = RobotModel.from_urdf_file(urdf_path('cobot7'), gravity=(9.81, 0, 0))
    np.testing.assert_allclose(sideways['g'], model.gravity_torques(
        [0.1, -0.4, 0.2, -2.0, 0.3, 1.5, 0.7]), rtol=1e-12, atol=1e-12)
    chain = run_json('gravity', 'gripper_arm', '--tip-link', 'gripper_arm_link3')
    assert chain['joint_names'] == ['gripper_arm_joint1', 'gripper_arm_joint2',
                                    'gripper_arm_joint3']


# ---------------------------------------------------------------------- check
def _urdf(links: str, joints: str) -> str:
    return '<robot name="broken">%s%s</robot>' % (links, joints)


GOOD_LINK = ('<link name="{name}"><inertial><origin xyz="0 0 0.1"/><mass value="1"/>'
             '<inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.005"/></inertial>'
             '<visual><origin xyz="0 0 0.1"/><geometry><box size="0.1 0.1 0.2"/></geometry>'
             '</visual></link>')
JOINT = ('<joint name="{name}" type="revolute"><parent link="{parent}"/><child link="{child}"/>'
         '<origin xyz="0 0 0.2"/><axis xyz="0 1 0"/>'
         '<limit lower="-1" upper="1" effort="{effort}" velocity="1"/></joint>')


def _arm(link2: str, effort2: str = '10') -> str:
    """Return base -> link1 (good) -> link2 (given) with revolute joints j1, j2."""
    links = '<link name="base"/>' + GOOD_LINK.format(name='link1') + link2
    joints = (JOINT.format(name='j1', parent='base', child='link1', effort='10')
              + JOINT.format(name='j2', parent='link1', child='link2', effort=effort2))
    return _urdf(links, joints)


def _link(inertial: str, geometry: str = '<box size="0.1 0.1 0.2"/>') -> str:
    return ('<link name="link2">%s<visual><origin xyz="0 0 0.1"/><geometry>%s</geometry>'
            '</visual></link>' % (inertial, geometry))


def _inertial(mass='1', xyz='0 0 0.1', ixx='0.01', ixy='0', iyy='0.01', izz='0.005'):
    return ('<inertial><origin xyz="%s"/><mass value="%s"/><inertia ixx="%s" ixy="%s" '
            'ixz="0" iyy="%s" iyz="0" izz="%s"/></inertial>' % (xyz, mass, ixx, ixy, iyy, izz))


# defect -> (URDF, severity, kind, name, words the message must contain)
DEFECTS = {
    'negative mass': (_arm(_link(_inertial(mass='-2'))), 'error', 'link', 'link2',
                      'negative mass'),
    # physically suspect inertias load as written: warnings (docs/PYTHON_API.md)
    'not positive definite': (_arm(_link(_inertial(ixx='0.01', ixy='0.05', iyy='0.01'))),
                              'warning', 'link', 'link2', 'not positive semi-definite'),
    'triangle inequality': (_arm(_link(_inertial(ixx='0.01', iyy='0.01', izz='0.05'))),
                            'warning', 'link', 'link2', 'triangle inequality'),
    'com far outside geometry': (_arm(_link(_inertial(xyz='0 0 1.5'))), 'warning', 'link',
                                 'link2', 'outside the link geometry'),
    'geometry without inertial': (_arm(_link('')), 'warning', 'link', 'link2',
                                  'no <inertial>'),
    'zero-mass moving body': (_arm(_link(_inertial(mass='0', ixx='0', iyy='0', izz='0'))),
                              'warning', 'joint', 'j2', 'moves no mass'),
    'zero effort limit': (_arm(_link(_inertial()), effort2='0'), 'error', 'joint', 'j2',
                          'effort limit is 0'),
    'inertia too large for the geometry': (_arm(_link(_inertial(ixx='5', iyy='5', izz='5'))),
                                           'warning', 'link', 'link2', 'wrong units'),
}


def test_a_clean_urdf_has_no_finding():
    assert [f for f in check_urdf_string(_arm(_link(_inertial())))
            if f.severity != 'info'] == []


@pytest.mark.parametrize('defect', sorted(DEFECTS))
def test_check_library_finds_each_defect_alone(defect):
    xml, severity, kind, name, words = DEFECTS[defect]
    findings = [f for f in check_urdf_string(xml) if f.severity != 'info']
    hits = [f for f in findings if f.name == name and words in f.message]
    assert hits, findings
    assert hits[0].severity == severity and hits[0].kind == kind
    # nothing else of that severity is blamed on the healthy link1 / j1
    assert not [f for f in findings if f.name in ('link1', 'j1')]


@pytest.mark.parametrize('defect', ['triangle inequality', 'com far outside geometry'])
def test_check_subprocess_on_broken_files(tmp_path, defect):
    xml, severity, kind, name, words = DEFECTS[defect]
    path = tmp_path / ('%s.urdf' % defect.replace(' ', '_'))
    path.write_text(xml)
    expect = 1 if severity == 'error' else 0
    doc = json.loads(run_cli('check', str(path), '--json', expect=expect).stdout)
    assert doc['ok'] is (expect == 0)
    assert any(f['name'] == name and words in f['message'] and f['severity'] == severity
               for f in doc['findings']), doc
    table = run_cli('check', str(path), expect=expect).stdout
    assert name in table and ('FAILED' if expect else 'OK') in table


def test_check_strict_fails_on_warnings_and_bundled_arms_pass(tmp_path):
    xml = DEFECTS['com far outside geometry'][0]
    path = tmp_path / 'warn.urdf'
    path.write_text(xml)
    run_cli('check', str(path), '--strict', expect=1)
    run_cli('check', 'planar_2r', expect=0)


def test_check_reports_malformed_xml_as_an_error(tmp_path):
    path = tmp_path / 'bad.urdf'
    path.write_text('<robot name="x"><link name="a">')
    proc = run_cli('check', str(path), expect=1)
    assert 'malformed' in proc.stdout and 'Traceback' not in proc.stderr


# ---------------------------------------------------------------------- errors
@pytest.mark.parametrize('args, needle', [
    ((), 'COMMAND'),
    (('id', 'cobot7', '--q', '1,2'), '7 joints'),
    (('id', 'cobot7', '--q', 'nosuchjoint=1'), "unknown joint 'nosuchjoint'"),
    (('gravity', 'no_such_file.urdf'), 'no such file'),
    (('cartesian', 'cobot7', 'nolink'), "unknown link 'nolink'"),
    (('id', 'cobot7', '--gravity', '0,0'), '--gravity'),
    (('info', 'cobot7', '--root-link', 'nolink'), "'nolink'"),
    (('simulate', 'cobot7', '--duration', '-1', '--quiet'), '--duration'),
    (('closed-form', 'cobot7', '--latex'), None),
])
def test_user_mistakes_exit_2_with_one_line_and_no_traceback(args, needle):
    proc = run_cli(*args, expect=2)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith('manip-dynamics: error: ')
    assert 'Traceback' not in proc.stderr and proc.stdout == ''
    if needle is not None:
        assert needle in lines[0]


def test_malformed_urdf_is_exit_2_and_debug_shows_the_traceback(tmp_path):
    path = tmp_path / 'bad.urdf'
    path.write_text('<robot name="x"><link name="a"></robot>')
    proc = run_cli('info', str(path), expect=2)
    assert 'malformed URDF' in proc.stderr and 'Traceback' not in proc.stderr
    proc = run_cli('info', str(path), '--debug', expect=None)
    assert proc.returncode != 0 and 'Traceback' in proc.stderr


# ---------------------------------------------------------------------- simulate
def test_simulate_writes_png_csv_and_holds_the_arm_with_gravity_compensation(tmp_path):
    png, csv_path = tmp_path / 'sim.png', tmp_path / 'sim.csv'
    proc = run_cli('simulate', 'cobot7', '--duration', '0.3', '--q0',
                   'cobot7_joint2=0.5,cobot7_joint4=-1.5', '--controller', 'gravity-comp',
                   '--plot', str(png), '--csv', str(csv_path), '--json')
    data = png.read_bytes()
    assert data[:8] == b'\x89PNG\r\n\x1a\n' and len(data) > 10000
    assert '100%' in proc.stderr  # the progress bar
    doc = json.loads(proc.stdout)
    # an arm at rest with exact gravity compensation stays at rest
    assert max(doc['max_drift']) < 1e-6
    rows = csv_path.read_text().strip().splitlines()
    header = rows[0].split(',')
    assert header[0] == 't' and 'q_cobot7_joint1' in header and header[-1] == 'energy'
    assert len(header) == 1 + 3 * 7 + 3 and len(rows) >= 300
    assert float(rows[-1].split(',')[0]) == pytest.approx(0.3, abs=2e-3)


def test_simulate_free_fall_without_friction_conserves_energy_and_falls():
    doc = run_json('simulate', 'planar_2r', '--gravity', GRAVITY_2R, '--duration', '0.5',
                   '--q0', '0.3,0', '--integrator', 'rk4', '--no-friction', '--quiet',
                   '--limits', 'none')
    assert max(doc['max_drift']) > 0.1  # it falls
    # total energy of a torque-free, frictionless arm is constant (RK4, dt 1 ms)
    assert doc['energy_max_deviation'] < 1e-6 * max(1.0, abs(doc['energy_initial']))


# ---------------------------------------------------------------------- closed form, bench
def test_closed_form_python_on_planar_2r():
    if importlib.util.find_spec('sympy') is None:
        pytest.skip('sympy not installed')
    try:
        from manip_dynamics.symbolic import closed_form  # noqa: F401
    except ImportError:
        pytest.skip('manip_dynamics.symbolic.closed_form not available yet')
    out = run_cli('closed-form', 'planar_2r', '--gravity', GRAVITY_2R, '--python').stdout
    namespace: dict = {}
    exec(compile(out, 'closed_form.py', 'exec'), namespace)
    functions = [v for k, v in namespace.items() if callable(v) and not k.startswith('_')
                 and getattr(v, '__module__', None) is None]
    assert len(functions) == 1, list(namespace)
    q, qd = (0.3, 1.1), (0.7, -1.2)
    m, v, g = functions[0](q, qd)
    m_ref, v_ref, g_ref, _ = craig_2r(q, qd, (0, 0))
    np.testing.assert_allclose(m, m_ref, rtol=1e-9)
    np.testing.assert_allclose(v, v_ref, rtol=1e-9)
    np.testing.assert_allclose(g, g_ref, rtol=1e-9)
    latex = run_cli('closed-form', 'planar_2r', '--gravity', GRAVITY_2R).stdout
    assert '\\' in latex


def test_bench_json_reports_every_call():
    doc = run_json('bench', 'planar_2r', '--repeat', '50', '--batch', '20')
    names = [r['function'] for r in doc['results']]
    assert {'inverse_dynamics', 'mass_matrix', 'forward_dynamics'} <= set(names)
    for row in doc['results']:
        assert 0 < row['min_us'] <= row['median_us'] <= row['p90_us']
        assert row['first_call_us'] > 0
    assert doc['dof'] == 2 and 'python' in doc['machine']


# ---------------------------------------------------------------------- xacro
XACRO = '''<?xml version="1.0"?>
<robot name="xarm" xmlns:xacro="http://www.ros.org/wiki/xacro">
  <xacro:arg name="tip_mass" default="1.5"/>
  <xacro:property name="l1" value="1.0"/>
  <xacro:macro name="point_link" params="name mass x">
    <link name="${name}">
      <inertial><origin xyz="${x} 0 0"/><mass value="${mass}"/>
        <inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/></inertial>
    </link>
  </xacro:macro>
  <link name="base"/>
  <xacro:point_link name="link1" mass="2.0" x="${l1}"/>
  <xacro:point_link name="link2" mass="$(arg tip_mass)" x="0.8"/>
  <joint name="j1" type="revolute"><parent link="base"/><child link="link1"/>
    <axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="100" velocity="5"/></joint>
  <joint name="j2" type="revolute"><parent link="link1"/><child link="link2"/>
    <origin xyz="${l1} 0 0"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="100" velocity="5"/></joint>
</robot>
'''


def test_xacro_input_is_expanded(tmp_path):
    if importlib.util.find_spec('xacro') is None:
        pytest.skip('xacro not importable (pip install xacro)')
    path = tmp_path / 'arm.urdf.xacro'
    path.write_text(XACRO)
    q, qd, qdd = (0.3, 1.1), (0.7, -1.2), (0.5, -0.4)
    doc = run_json('id', str(path), '--gravity', GRAVITY_2R, '--q', '0.3,1.1',
                   '--qd', '0.7,-1.2', '--qdd', '0.5,-0.4')
    assert doc['joint_names'] == ['j1', 'j2']
    np.testing.assert_allclose(doc['tau'], craig_2r(q, qd, qdd)[3], rtol=1e-10)
    heavier = run_json('info', str(path), '--xacro-arg', 'tip_mass:=3.0')
    assert heavier['total_mass'] == pytest.approx(5.0)
