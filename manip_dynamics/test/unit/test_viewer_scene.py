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
The viewer's scene without a browser: URDF visuals, mesh resolution, poses and markers.

References are independent of the code under test: the planar 2R arm's forward kinematics
in closed form (Craig ch. 3), the sphere volume formula, and hand-written URDF attributes.
The viser server is exercised over HTTP only (no browser) when viser is installed.
"""

import math
import os
import subprocess
import sys
import urllib.request

import numpy as np
import pytest

from manip_dynamics import RobotModel
from manip_dynamics.bundled import bundled_robots, urdf_path
from manip_dynamics.errors import URDFError
from manip_dynamics.viewer import parse_visuals, resolve_mesh, RobotScene
from manip_dynamics.viewer.scene import PAYLOAD_DENSITY, payload_radius

L1, L2 = 0.5, 0.3


def planar_urdf(extra_visuals: str = '') -> str:
    """Return a planar 2R arm about z with links along x and visuals of every kind."""
    return f'''<?xml version="1.0"?>
<robot name="planar">
  <material name="blue"><color rgba="0.1 0.2 0.9 1"/></material>
  <link name="base">
    <visual><geometry><box size="0.2 0.2 0.1"/></geometry><material name="blue"/></visual>
  </link>
  <link name="link1">
    <inertial><origin xyz="{L1 / 2} 0 0"/><mass value="1"/>
      <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>
    <visual name="rod1">
      <origin xyz="{L1 / 2} 0 0" rpy="0 {math.pi / 2} 0"/>
      <geometry><cylinder radius="0.03" length="{L1}"/></geometry>
      <material name="red"><color rgba="0.8 0.1 0.1 1"/></material>
    </visual>
  </link>
  <link name="link2">
    <inertial><origin xyz="{L2 / 2} 0 0"/><mass value="1"/>
      <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>
    <visual><origin xyz="{L2} 0 0"/><geometry><sphere radius="0.04"/></geometry></visual>
    {extra_visuals}
  </link>
  <link name="tool"/>
  <joint name="j1" type="revolute"><parent link="base"/><child link="link1"/>
    <axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="50" velocity="2"/></joint>
  <joint name="j2" type="revolute"><parent link="link1"/><child link="link2"/>
    <origin xyz="{L1} 0 0"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="20" velocity="2"/></joint>
  <joint name="tool_joint" type="fixed"><parent link="link2"/><child link="tool"/>
    <origin xyz="{L2} 0 0"/></joint>
</robot>'''


def visual_world_pose(scene: RobotScene, q: np.ndarray, name: str) -> np.ndarray:
    """Compose the link pose and the visual's origin (what the browser draws)."""
    visual = next(v for v in scene.visuals if v.name == name)
    return scene.link_poses(q)[visual.link] @ visual.T_link_visual


def test_parse_visuals_kinds_colours_and_axes() -> None:
    visuals = parse_visuals(planar_urdf())
    assert visuals.robot_name == 'planar'
    kinds = {(v.link, v.kind): v for v in visuals.visuals}
    assert set(kinds) == {('base', 'box'), ('link1', 'cylinder'), ('link2', 'sphere')}
    assert kinds['base', 'box'].size == (0.2, 0.2, 0.1)
    assert kinds['base', 'box'].rgba == (0.1, 0.2, 0.9, 1.0)      # named top-level material
    assert kinds['link1', 'cylinder'].size == (0.03, L1)
    assert kinds['link1', 'cylinder'].rgba == (0.8, 0.1, 0.1, 1.0)  # inline colour
    assert kinds['link1', 'cylinder'].name == 'rod1'
    assert kinds['link2', 'sphere'].size == (0.04,)
    assert kinds['link2', 'sphere'].rgba[3] == 1.0                 # no material: default
    assert visuals.joints['j2'].child == 'link2'
    np.testing.assert_allclose(visuals.joints['j2'].axis, [0, 0, 1])
    np.testing.assert_allclose(visuals.joints['tool_joint'].axis, [1, 0, 0])  # URDF default
    assert visuals.notes == ()


@pytest.mark.parametrize('q', [(0.0, 0.0), (0.7, -1.2), (-2.5, 2.9)])
def test_visual_poses_match_closed_form_kinematics(q: tuple) -> None:
    scene = RobotScene.from_urdf(planar_urdf())
    q = np.array(q)
    q1, q12 = q[0], q[0] + q[1]
    # rod1: centre half-way along link 1, its axis (the cylinder's z) along link 1's x.
    pose = visual_world_pose(scene, q, 'rod1')
    np.testing.assert_allclose(pose[:3, 3], [L1 / 2 * math.cos(q1), L1 / 2 * math.sin(q1), 0],
                               atol=1e-12)
    np.testing.assert_allclose(pose[:3, 2], [math.cos(q1), math.sin(q1), 0], atol=1e-12)
    # the sphere sits at the tool point: Craig's 2R forward kinematics.
    pose = visual_world_pose(scene, q, 'link2_visual0')
    tip = [L1 * math.cos(q1) + L2 * math.cos(q12), L1 * math.sin(q1) + L2 * math.sin(q12), 0]
    np.testing.assert_allclose(pose[:3, 3], tip, atol=1e-12)


def test_torque_arrows_follow_the_joint_axes() -> None:
    scene = RobotScene.from_urdf(planar_urdf())
    q = np.array([0.4, 0.9])
    tau = np.array([10.0, -5.0])
    arrows = scene.torque_arrows(q, tau)
    assert arrows.shape == (2, 2, 3)
    joints = [np.zeros(3), np.array([L1 * math.cos(0.4), L1 * math.sin(0.4), 0.0])]
    z = np.array([0.0, 0.0, 1.0])
    for i in range(2):
        tail, head = arrows[i]
        np.testing.assert_allclose(tail, joints[i] + scene.arrow_offset * np.sign(tau[i]) * z,
                                   atol=1e-12)
        np.testing.assert_allclose(head - tail, scene.torque_scale * tau[i] * z, atol=1e-12)
    # a second set beside the first: shifted along the root x axis for these vertical axes
    shifted = scene.torque_arrows(q, tau, lateral=0.05)
    np.testing.assert_allclose(shifted - arrows, np.broadcast_to([0.05, 0.0, 0.0], (2, 2, 3)),
                               atol=1e-12)
    # the largest effort limit (50 N m) maps to half the reach
    assert scene.torque_scale * 50.0 == pytest.approx(0.5 * scene.reach())
    with pytest.raises(ValueError):
        scene.torque_arrows(q, [1.0, float('nan')])
    with pytest.raises(ValueError):
        scene.torque_arrows(q, [1.0])


def test_force_arrow_and_payload_marker() -> None:
    model = RobotModel.from_urdf_string(planar_urdf())
    scene = RobotScene.from_urdf(planar_urdf(), model=model)
    q = np.array([math.pi / 2, 0.0])
    arrow = scene.force_arrow(q, 'tool', [0.0, 0.0, 20.0])
    np.testing.assert_allclose(arrow[0, 0], [0.0, L1 + L2, 0.0], atol=1e-12)
    np.testing.assert_allclose(arrow[0, 1] - arrow[0, 0], [0.0, 0.0, 0.2], atol=1e-12)
    # a force along the tool's own x axis points along world +y at this pose
    arrow = scene.force_arrow(q, 'tool', [10.0, 0.0, 0.0], frame='tool')
    np.testing.assert_allclose(arrow[0, 1] - arrow[0, 0], [0.0, 0.1, 0.0], atol=1e-12)
    r = 0.05
    mass = 4.0 / 3.0 * math.pi * r ** 3 * PAYLOAD_DENSITY
    model.set_payload('tool', mass, [0.02, 0.0, 0.0])
    (link, m, centre, radius), = scene.payload_markers(q)
    assert (link, m) == ('tool', pytest.approx(mass))
    assert radius == pytest.approx(r)
    np.testing.assert_allclose(centre, [0.0, L1 + L2 + 0.02, 0.0], atol=1e-12)
    assert payload_radius(0.0) == 0.01


def test_meshes_resolve_or_get_a_note(tmp_path) -> None:
    share = tmp_path / 'share'
    (share / 'my_arm' / 'meshes').mkdir(parents=True)
    mesh = share / 'my_arm' / 'meshes' / 'hand.stl'
    mesh.write_text('solid t\nendsolid t\n')
    local = tmp_path / 'urdf'
    local.mkdir()
    (local / 'local.stl').write_text('solid t\nendsolid t\n')
    extra = ''.join('<visual><geometry><mesh filename="%s" scale="2 2 2"/></geometry></visual>'
                    % uri for uri in ('package://my_arm/meshes/hand.stl', 'file://%s' % mesh,
                                      'local.stl', 'package://absent_pkg/x.dae',
                                      'https://example.com/x.stl'))
    visuals = parse_visuals(planar_urdf(extra), search_paths=(str(share),),
                            base_dir=str(local))
    meshes = [v for v in visuals.visuals if v.kind == 'mesh']
    assert [v.mesh_path for v in meshes[:3]] == [str(mesh), str(mesh), str(local / 'local.stl')]
    assert meshes[0].size == (2.0, 2.0, 2.0)
    assert meshes[3].mesh_path is None and 'absent_pkg' in meshes[3].note
    assert meshes[4].mesh_path is None and 'unsupported URI scheme' in meshes[4].note
    assert len(visuals.notes) == 2
    # the scene drops what did not resolve and keeps the notes
    scene = RobotScene.from_urdf(planar_urdf(extra), search_paths=(str(share),),
                                 base_dir=str(local))
    assert sum(v.kind == 'mesh' for v in scene.visuals) == 3
    assert len(scene.notes) == 2
    path, note = resolve_mesh('package://my_arm/meshes/absent.stl', (str(share),))
    assert path is None and str(share) in note


def test_links_outside_the_model_are_noted() -> None:
    scene = RobotScene.from_urdf(planar_urdf(), root_link='link1')
    assert 'base' not in scene.drawn_links
    assert any("'base'" in note for note in scene.notes)
    # links past a chain tip stay in the model, locked: they are drawn
    assert 'link2' in RobotScene.from_urdf(planar_urdf(), tip_link='link1').drawn_links


@pytest.mark.parametrize('xml, words', [
    ('<robot name="x"><link', 'the XML does not parse'),
    ('<model/>', 'not <robot>'),
    ('<robot name="x"><link name="a"><visual><geometry><box size="1 2"/></geometry></visual>'
     '</link></robot>', 'box size'),
    ('<robot name="x"><link name="a"><visual><geometry><cylinder radius="1"/></geometry>'
     '</visual></link></robot>', 'cylinder length'),
])
def test_bad_visuals_raise_a_clear_error(xml: str, words: str) -> None:
    with pytest.raises(URDFError, match=words):
        parse_visuals(xml)


@pytest.mark.parametrize('robot', bundled_robots())
def test_every_bundled_robot_is_drawn_whole(robot: str) -> None:
    with open(urdf_path(robot)) as stream:
        scene = RobotScene.from_urdf(stream.read())
    assert scene.notes == ()
    assert len(scene.visuals) >= scene.model.dof
    poses = scene.link_poses(np.zeros(scene.model.dof))
    assert all(np.all(np.isfinite(p)) for p in poses.values())


def test_arm_view_serves_the_page_and_draws_cobot7() -> None:
    pytest.importorskip('viser', reason='viser (the [viewer] extra) is not installed')
    from manip_dynamics.viewer.server import ArmView
    with open(urdf_path('cobot7')) as stream:
        scene = RobotScene.from_urdf(stream.read())
    view = ArmView(port=0)
    try:
        assert view.url.startswith('http://127.0.0.1:')
        q = np.full(scene.model.dof, 0.1)
        assert view.show(scene, q) == []
        view.update(q, gravity=scene.model.gravity_torques(q),
                    external=np.ones(scene.model.dof), wrench=('cobot7_flange', [0, 0, 5], None),
                    contact=True)
        scene.model.set_payload('cobot7_flange', 1.5)
        view.update(q)
        names = {'/robot/' + link for link in scene.drawn_links}
        assert all(view.server.scene.get_handle_by_name(n) is not None for n in names)
        assert view.server.scene.get_handle_by_name('/payload/cobot7_flange') is not None
        with pytest.raises(ValueError):
            view.update(np.full(scene.model.dof, np.nan))
        with urllib.request.urlopen(view.url, timeout=10) as reply:
            page = reply.read()
        assert b'<html' in page.lower()
    finally:
        view.close()


def test_cli_view_runs_without_ros(capsys) -> None:
    pytest.importorskip('viser', reason='viser (the [viewer] extra) is not installed')
    from manip_dynamics import cli
    code = cli.main(['view', 'cobot7', '--port', '0', '--duration', '0.5',
                     '--q', 'cobot7_joint2=0.5', '--payload', 'cobot7_flange=1'])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert 'http://127.0.0.1:' in captured.out
    assert cli.main(['view', 'cobot7', '--port', '70000']) == 2
    assert '--port must be in 0..65535' in capsys.readouterr().err
    assert cli.main(['view', 'cobot7', '--payload', 'nowhere=1', '--duration', '0.1']) == 2
    assert "'nowhere'" in capsys.readouterr().err


def test_viewer_modules_do_not_import_rclpy() -> None:
    code = ('import sys; import manip_dynamics.viewer, manip_dynamics.viewer.server, '
            'manip_dynamics.cli.view; sys.exit(1 if "rclpy" in sys.modules else 0)')
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get('PYTHONPATH', ''))
    assert subprocess.run([sys.executable, '-c', code], env=env).returncode == 0
