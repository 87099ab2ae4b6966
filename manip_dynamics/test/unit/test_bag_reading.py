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
manip_dynamics.identification.data reads bags with rosbag2_py where it is importable.

rosbags otherwise; both give the same recording.
"""

from joint_motion import moving_data
import numpy as np
import pytest

from manip_dynamics import RobotModel
from manip_dynamics.bundled import urdf_path


class _FakeRosbag2Py:
    """
    The part of rosbag2_py's reader API that read_rosbag uses, over rosbags' reader.

    rosbag2_py is C++ and on no registry reachable here: this stand-in has its documented
    shape (SequentialReader.open / get_all_topics_and_types / set_filter / has_next /
    read_next returning raw CDR), so the rosbag2_py path is exercised with rclpy's real
    deserialize_message. On an apt ROS install the real module is used.
    """

    class StorageOptions:
        def __init__(self, uri, storage_id=''):
            self.uri = uri

    class ConverterOptions:
        def __init__(self, input_serialization_format='', output_serialization_format=''):
            pass

    class StorageFilter:
        def __init__(self, topics=()):
            self.topics = list(topics)

    class SequentialReader:
        def open(self, storage, converter):  # noqa: A003 - rosbag2_py's method name
            from rosbags.rosbag2 import Reader
            self._reader = Reader(storage.uri)
            self._reader.open()
            self._topics = None
            self._items = None

        def get_all_topics_and_types(self):
            return [type('TopicMetadata', (), {'name': c.topic, 'type': c.msgtype})()
                    for c in self._reader.connections]

        def set_filter(self, storage_filter):
            self._topics = storage_filter.topics

        def _iterate(self):
            conns = [c for c in self._reader.connections
                     if self._topics is None or c.topic in self._topics]
            for conn, stamp, raw in self._reader.messages(connections=conns):
                yield conn.topic, bytes(raw), stamp

        def has_next(self):
            if self._items is None:
                self._items = list(self._iterate())
            return bool(self._items)

        def read_next(self):
            return self._items.pop(0)


def test_bags_are_read_with_rosbag2_py_where_it_is_importable(tmp_path, monkeypatch):
    pytest.importorskip('rosbags', reason='rosbags not installed')
    pytest.importorskip('rclpy', reason='rclpy not installed: no deserialize_message')
    import sys
    from manip_dynamics.identification import data
    model = RobotModel.from_urdf_file(urdf_path('cobot7'))
    q, qd, qdd = moving_data(model, seconds=0.2)
    t = np.arange(q.shape[0]) * 0.004
    tau = model.inverse_dynamics(q, qd, qdd)
    bag = str(tmp_path / 'bag')
    data.write_rosbag(bag, data.Recording(t, q, qd, tau, model.joint_names))
    monkeypatch.setitem(sys.modules, 'rosbag2_py', None)   # not importable: rosbags
    assert data.bag_reader_name() == 'rosbags'
    by_rosbags = data.read_rosbag(bag, model)
    monkeypatch.setitem(sys.modules, 'rosbag2_py', _FakeRosbag2Py)
    assert data.bag_reader_name() == 'rosbag2_py'
    by_rosbag2_py = data.read_rosbag(bag, model)
    np.testing.assert_allclose(by_rosbag2_py.t, by_rosbags.t)
    np.testing.assert_allclose(by_rosbag2_py.q, q, atol=1e-12)
    np.testing.assert_allclose(by_rosbag2_py.tau, tau, atol=1e-12)
    with pytest.raises(ValueError, match="no topic '/other'"):
        data.read_rosbag(bag, model, topic='/other')
