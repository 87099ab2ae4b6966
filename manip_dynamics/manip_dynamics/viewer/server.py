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
The browser view: a :class:`RobotScene` drawn by viser, served on 127.0.0.1.

viser (PyPI) serves its web client (three.js, bundled in the wheel) and a websocket from
one port; the browser needs no network and the machine no Node.js. This module is the
only one of the package that imports viser, and only when an :class:`ArmView` is created,
so the rest of the viewer (and its tests) work without it.

Scene layout: ``/robot/<link>`` is one frame per drawn link, posed ``T_root_link`` at each
update, with the link's visuals as children at their URDF origins; ``/torques/gravity``,
``/torques/external`` and ``/wrench`` are arrows (see :mod:`manip_dynamics.viewer.scene`
for their scales); ``/payload/<link>`` a sphere per payload. The panel on the right holds a
status table, the joint sliders of ``manip-dynamics view``, the legend and the notes about
what could not be drawn.
"""

from collections.abc import Callable, Sequence
import contextlib
import io
import threading

import numpy as np
from numpy.typing import ArrayLike

from manip_dynamics.viewer.scene import colour_bytes, RobotScene

#: Background of the 3D view (8-bit RGB): a blue-grey that the white, dark and coloured
#: parts of the bundled arms all stand out against.
BACKGROUND_RGB = (92, 104, 122)
#: Colours of the markers (8-bit RGB).
GRAVITY_RGB = (255, 110, 0)
EXTERNAL_RGB = (235, 40, 110)
WRENCH_RGB = (40, 210, 100)
PAYLOAD_RGB = (150, 80, 220)
CONTACT_RGB = (235, 40, 40)

LEGEND = ('**Arrows** along each joint axis, right-hand rule, half the reach at the largest '
          'effort limit: <span style="color:#ff9600">orange</span> g(q), '
          '<span style="color:#eb286e">pink</span> external torque (observer, beside; red on '
          'contact). '
          '<span style="color:#28d264">Green</span>: estimated tool force, 0.1 m per 10 N. '
          '<span style="color:#9650dc">Violet</span> sphere: payload.')


def viser_missing() -> str:
    """
    Return why the web viewer cannot start here, or '' when it can.

    The viewer's one third-party dependency, viser, is imported only when an
    :class:`ArmView` is created; the nodes and the CLI ask this first, so that a missing
    viser is one clear line (with the ways to install it) instead of a traceback from
    inside the view's constructor.
    """
    try:
        import viser  # noqa: F401
    except ImportError as error:
        return ('the viewer needs viser (%s): pip install viser, or install manip_dynamics '
                "with the 'viewer' extra (pip install 'manip_dynamics[viewer]')" % error)
    return ''


def _wxyz(rotation: np.ndarray) -> np.ndarray:
    """Return the unit quaternion (w, x, y, z) of a rotation matrix (Shepperd's method)."""
    m = rotation
    trace = m[0, 0] + m[1, 1] + m[2, 2]
    if trace > 0.0:
        s = 2.0 * np.sqrt(trace + 1.0)
        q = [0.25 * s, (m[2, 1] - m[1, 2]) / s, (m[0, 2] - m[2, 0]) / s, (m[1, 0] - m[0, 1]) / s]
    elif m[0, 0] > m[1, 1] and m[0, 0] > m[2, 2]:
        s = 2.0 * np.sqrt(1.0 + m[0, 0] - m[1, 1] - m[2, 2])
        q = [(m[2, 1] - m[1, 2]) / s, 0.25 * s, (m[0, 1] + m[1, 0]) / s, (m[0, 2] + m[2, 0]) / s]
    elif m[1, 1] > m[2, 2]:
        s = 2.0 * np.sqrt(1.0 + m[1, 1] - m[0, 0] - m[2, 2])
        q = [(m[0, 2] - m[2, 0]) / s, (m[0, 1] + m[1, 0]) / s, 0.25 * s, (m[1, 2] + m[2, 1]) / s]
    else:
        s = 2.0 * np.sqrt(1.0 + m[2, 2] - m[0, 0] - m[1, 1])
        q = [(m[1, 0] - m[0, 1]) / s, (m[0, 2] + m[2, 0]) / s, (m[1, 2] + m[2, 1]) / s, 0.25 * s]
    q = np.array(q)
    return q / np.linalg.norm(q)


def _load_mesh(path: str, scale: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """
    Read a mesh file (STL, OBJ, PLY, ...; DAE when pycollada is installed) with trimesh.

    :param path: The file.
    :param scale: Scale per axis from the URDF.
    :return: ``(vertices (V, 3) [m], faces (F, 3))``.
    :raises ValueError: The file cannot be read as a triangle mesh.
    """
    import trimesh
    try:
        mesh = trimesh.load(path, force='mesh')
    except Exception as exc:  # noqa: B902 - trimesh raises many types for bad files
        raise ValueError('%s: %s' % (type(exc).__name__, exc)) from None
    vertices = np.asarray(getattr(mesh, 'vertices', ()), dtype=np.float64)
    faces = np.asarray(getattr(mesh, 'faces', ()), dtype=np.int64)
    if vertices.ndim != 2 or len(vertices) == 0 or faces.ndim != 2 or len(faces) == 0:
        raise ValueError('no triangles in the file')
    return vertices * np.asarray(scale, dtype=np.float64), faces


class ArmView:
    """
    A viser server showing one robot, its joint torques, payloads and a status panel.

    Thread-safe: :meth:`update`, :meth:`show` and :meth:`set_status` may be called from any
    thread (a ROS callback, a slider callback).
    """

    def __init__(self, host: str = '127.0.0.1', port: int = 8080,
                 title: str = 'manip_dynamics') -> None:
        """
        Start the web server (it serves at once, before any robot is shown).

        :param host: Address to listen on; keep the default loopback address unless the
            page must be reachable from other machines.
        :param port: TCP port; taken: the next free one is used (see :attr:`url`); 0: any.
        :param title: Shown at the top of the panel.
        :raises ImportError: viser is not installed.
        """
        import viser
        self._lock = threading.RLock()
        with contextlib.redirect_stdout(io.StringIO()):  # viser prints a banner: we print
            self.server = viser.ViserServer(host=host, port=port, label=title, verbose=False)
        self.host = host
        self.port = int(self.server.get_port())
        self.server.gui.configure_theme(show_share_button=False, show_logo=False,
                                        control_width='medium')
        self.server.scene.set_background_image(
            np.broadcast_to(np.array(BACKGROUND_RGB, dtype=np.uint8), (8, 8, 3)).copy(),
            format='png')
        # Image-based light only: the default lights (and brighter presets) wash out the
        # URDF colours and tint the background.
        self.server.scene.configure_environment_map('warehouse', environment_intensity=0.6)
        self.server.scene.configure_default_lights(enabled=False, cast_shadow=False)
        self._status = self.server.gui.add_markdown('waiting for the robot ...', order=0.0)
        self._legend = self.server.gui.add_markdown(LEGEND, order=100.0)
        self._notes = self.server.gui.add_markdown('', order=101.0)
        self.scene: RobotScene | None = None
        self._frames: dict[str, object] = {}
        self._arrows: dict[str, object] = {}
        self._payloads: dict[str, object] = {}
        self._payload_key: tuple = ()
        self._sliders: list = []
        self.server.on_client_connect(self._aim)

    def _aim(self, client: object) -> None:
        """Point a browser's camera at the robot (it starts from viser's default pose)."""
        with self._lock:
            if self.scene is not None:
                client.camera.position = self.server.initial_camera.position
                client.camera.look_at = self.server.initial_camera.look_at

    @property
    def url(self) -> str:
        """Return the page's address, e.g. ``http://127.0.0.1:8080``."""
        return 'http://%s:%d' % (self.host, self.port)

    @property
    def client_count(self) -> int:
        """Return the number of browsers connected now."""
        return len(self.server.get_clients())

    def close(self) -> None:
        """Stop the server (the page shows 'disconnected')."""
        with contextlib.redirect_stdout(io.StringIO()):
            self.server.stop()

    # ------------------------------------------------------------------ robot
    def show(self, scene: RobotScene, q: ArrayLike | None = None) -> list[str]:
        """
        Draw a robot, replacing the one shown before.

        :param scene: The robot.
        :param q: Initial joint positions, model order (default zeros).
        :return: The notes about what is not drawn (also shown in the panel).
        """
        api = self.server.scene
        with self._lock:
            for handle in [*self._frames.values(), *self._arrows.values(),
                           *self._payloads.values()]:
                handle.remove()
            self._frames, self._arrows, self._payloads, self._payload_key = {}, {}, {}, ()
            notes = list(scene.notes)
            for link in scene.drawn_links:
                self._frames[link] = api.add_frame('/robot/' + link, show_axes=False)
            for i, visual in enumerate(scene.visuals):
                name = '/robot/%s/v%d_%s' % (visual.link, i, visual.kind)
                pose = visual.T_link_visual
                kwargs = {'position': tuple(pose[:3, 3]), 'wxyz': tuple(_wxyz(pose[:3, :3]))}
                rgb = colour_bytes(visual.rgba)
                opacity = None if visual.rgba[3] >= 0.999 else float(visual.rgba[3])
                if visual.kind == 'box':
                    api.add_box(name, color=rgb, dimensions=visual.size, opacity=opacity,
                                **kwargs)
                elif visual.kind == 'cylinder':
                    api.add_cylinder(name, radius=visual.size[0], height=visual.size[1],
                                     color=rgb, opacity=opacity, **kwargs)
                elif visual.kind == 'sphere':
                    api.add_icosphere(name, radius=visual.size[0], color=rgb,
                                      opacity=opacity, **kwargs)
                else:
                    try:
                        vertices, faces = _load_mesh(visual.mesh_path, visual.size)
                    except (ValueError, ImportError, OSError) as exc:
                        notes.append('mesh %r of link %r not drawn: cannot read %s: %s' % (
                            visual.mesh_uri, visual.link, visual.mesh_path, exc))
                        continue
                    api.add_mesh_simple(name, vertices, faces, color=rgb, opacity=opacity,
                                        **kwargs)
            self.scene = scene
            reach = scene.reach()
            self.server.initial_camera.fov = np.radians(50.0)
            self.server.initial_camera.position = (1.3 * reach, -1.3 * reach, 0.9 * reach)
            self.server.initial_camera.look_at = (0.0, 0.0, 0.4 * reach)
            for client in self.server.get_clients().values():
                self._aim(client)
            self._notes.content = ('**Not drawn**\n\n' + '\n'.join('- ' + n for n in notes)
                                   if notes else '')
            self.update(np.zeros(scene.model.dof) if q is None else q)
        return notes

    def update(self, q: ArrayLike, *, gravity: ArrayLike | None = None,
               external: ArrayLike | None = None,
               wrench: tuple[str, ArrayLike, str | None] | None = None,
               contact: bool | None = None) -> None:
        """
        Move the robot and its markers.

        :param q: Joint positions, model order, shape (n,) [rad | m].
        :param gravity: Gravity torques g(q) to draw, shape (n,) [N m | N]; None hides them.
        :param external: External joint torques (observer residual), shape (n,); None hides.
        :param wrench: ``(link, force (3,) [N], frame or None)``: the estimated force at the
            link's origin, in the axes of ``frame`` (None: root axes); None hides it.
        :param contact: Whether contact is flagged: the external arrows turn red.
        :raises ValueError: Bad shapes or non-finite values (nothing is changed then).
        """
        with self._lock:
            scene = self.scene
            if scene is None:
                return
            q = np.asarray(q, dtype=np.float64)
            poses = scene.link_poses(q)
            arrows = {
                'gravity': None if gravity is None else scene.torque_arrows(q, gravity),
                # beside the g(q) arrows of the same joint, not hidden in them
                'external': None if external is None else scene.torque_arrows(
                    q, external, lateral=1.5 * scene.arrow_offset),
                'wrench': None if wrench is None else scene.force_arrow(q, wrench[0],
                                                                        wrench[1], wrench[2]),
            }
            markers = scene.payload_markers(q)
            with self.server.atomic():
                for link, pose in poses.items():
                    frame = self._frames[link]
                    frame.position = pose[:3, 3]
                    frame.wxyz = _wxyz(pose[:3, :3])
                colours = {'gravity': GRAVITY_RGB, 'wrench': WRENCH_RGB,
                           'external': CONTACT_RGB if contact else EXTERNAL_RGB}
                for key, points in arrows.items():
                    self._set_arrows(key, points, colours[key])
                self._set_payloads(markers)

    def _set_arrows(self, key: str, points: np.ndarray | None, rgb: tuple) -> None:
        """Create, move or hide one set of arrows."""
        handle = self._arrows.get(key)
        radius = 0.01 * self.scene.reach()
        if points is not None:
            # an arrow much shorter than its head (5 radii) would be a blob: leave it out
            points = points[np.linalg.norm(points[:, 1] - points[:, 0], axis=1) > 2.0 * radius]
        if points is None or len(points) == 0:
            if handle is not None:
                handle.visible = False
            return
        points = points.astype(np.float32)
        if handle is None:
            self._arrows[key] = self.server.scene.add_arrows(
                '/%s' % ('wrench' if key == 'wrench' else 'torques/' + key), points,
                colors=rgb, shaft_radius=radius, head_radius=2.2 * radius,
                head_length=5.0 * radius)
            return
        handle.points = points
        handle.colors = np.array(rgb, dtype=np.uint8)
        handle.visible = True

    def _set_payloads(self, markers: list) -> None:
        """Draw the payload spheres (re-created when a payload changes, moved otherwise)."""
        key = tuple((link, round(mass, 9), round(radius, 9))
                    for link, mass, _, radius in markers)
        if key != self._payload_key:
            for handle in self._payloads.values():
                handle.remove()
            self._payloads = {
                link: self.server.scene.add_icosphere('/payload/' + link, radius=radius,
                                                      color=PAYLOAD_RGB, opacity=0.85)
                for link, _, _, radius in markers}
            self._payload_key = key
        for link, _, centre, _ in markers:
            self._payloads[link].position = centre

    # ------------------------------------------------------------------ panel
    def set_status(self, rows: Sequence[tuple[str, str]], title: str = '') -> None:
        """
        Replace the status table of the panel.

        :param rows: ``(label, value)`` pairs, shown as a two-column table.
        :param title: A bold line above the table.
        """
        lines = ['**%s**\n' % title] if title else []
        lines += ['| | |', '|:--|--:|'] + ['| %s | %s |' % (k, v) for k, v in rows]
        with self._lock:
            self._status.content = '\n'.join(lines)

    def add_joint_sliders(self, on_change: Callable[[np.ndarray], None],
                          q0: ArrayLike | None = None) -> None:
        """
        Add one slider per joint of the shown robot (limits from the URDF, else +-pi or 1 m).

        :param on_change: Called with all joint positions (model order) after each move.
        :param q0: Initial positions (default zeros, clipped to the limits).
        """
        scene = self.scene
        if scene is None:
            raise ValueError('show a robot before adding sliders')
        model = scene.model
        lower = np.asarray(model.position_lower, dtype=np.float64)
        upper = np.asarray(model.position_upper, dtype=np.float64)
        q = np.zeros(model.dof) if q0 is None else np.asarray(q0, dtype=np.float64).copy()
        folder = self.server.gui.add_folder('Joints', order=10.0)
        with folder:
            for i, (name, kind) in enumerate(zip(model.joint_names, model.joint_types)):
                default = 1.0 if kind == 'prismatic' else np.pi
                lo = lower[i] if np.isfinite(lower[i]) else -default
                hi = upper[i] if np.isfinite(upper[i]) else default
                q[i] = float(np.clip(q[i], lo, hi))
                slider = self.server.gui.add_slider(
                    '%s [%s]' % (name, 'm' if kind == 'prismatic' else 'rad'), min=float(lo),
                    max=float(hi), step=0.001 if kind == 'prismatic' else 0.01,
                    initial_value=float(q[i]))

                def moved(event: object, index: int = i, handle: object = slider) -> None:
                    q[index] = handle.value
                    on_change(q.copy())
                slider.on_update(moved)
                self._sliders.append(slider)
        on_change(q.copy())
