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
Recorded joint data: reading rosbag2 folders and CSV files, filtering and differentiation.

A :class:`Recording` is what the arm reported: time, positions, velocities (when the driver
publishes them) and efforts, in model joint order.  :func:`prepare` turns it into the
samples the estimators need: zero-phase low-pass filtered positions, velocities and
accelerations obtained by differentiation, and efforts filtered by the same filter (the
"parallel filtering" of Gautier 1997, Khalil and Dombre sec. 12.5.2: the same distortion on
both sides of ``tau = Y pi`` keeps the equation consistent).

rosbag2 folders (sqlite3 or mcap storage) are read and written with the pure-Python
``rosbags`` package (no ROS installation needed), or with ROS's own ``rosbag2_py`` where it
is importable.
"""

from collections.abc import Callable, Sequence
import csv
from dataclasses import dataclass
import math
import os

import numpy as np
from numpy.typing import NDArray

from manip_dynamics.errors import InputError

FloatArray = NDArray[np.float64]
Progress = Callable[[float], object] | None

#: Default zero-phase Butterworth cut-off [Hz] and order; measured on the simulated cobot7
#: recordings of the tests (250 Hz, excitation up to 0.5 Hz x 5 harmonics): 8 Hz keeps the
#: excitation band (2.5 Hz) untouched and removes most differentiated encoder noise.
DEFAULT_CUTOFF_HZ = 8.0
DEFAULT_FILTER_ORDER = 4


@dataclass(frozen=True)
class Recording:
    """
    Joint data as recorded, model joint order, K samples.

    ``t`` (K,) [s] increasing; ``q`` (K, n) [rad or m]; ``qd`` (K, n) or None;
    ``tau`` (K, n) measured efforts [N m or N]; ``joint_names`` (n,).
    """

    t: FloatArray
    q: FloatArray
    qd: FloatArray | None
    tau: FloatArray
    joint_names: tuple[str, ...]

    @property
    def duration(self) -> float:
        """Return the recorded time span [s]."""
        return float(self.t[-1] - self.t[0]) if self.t.size else 0.0

    def window(self, start: float, stop: float) -> 'Recording':
        """Return the samples with ``start <= t - t[0] < stop`` [s]."""
        rel = self.t - self.t[0]
        keep = (rel >= start) & (rel < stop)
        return Recording(self.t[keep], self.q[keep], None if self.qd is None else
                         self.qd[keep], self.tau[keep], self.joint_names)


@dataclass(frozen=True)
class Samples:
    """
    Filtered samples for estimation, K states kept after trimming and decimation.

    ``t`` (K,) [s]; ``q``, ``qd``, ``qdd`` (K, n) filtered and differentiated; ``tau``
    (K, n) the efforts through the same filter.  ``full`` holds the states at every
    recorded sample ``(q, qd, qdd, tau_raw)`` with ``index`` (K,) the kept rows and ``sos``
    the low-pass filter, for the parallel filtering of the regressor
    (:func:`parallel_filter`); ``cutoff_hz`` its cut-off.
    """

    t: FloatArray
    q: FloatArray
    qd: FloatArray
    qdd: FloatArray
    tau: FloatArray
    full: tuple[FloatArray, FloatArray, FloatArray, FloatArray] | None = None
    index: NDArray[np.int64] | None = None
    sos: FloatArray | None = None
    cutoff_hz: float | None = None


def parallel_filter(samples: Samples, columns: FloatArray) -> FloatArray:
    """
    Filter regressor columns computed at every recorded sample, keep the estimation rows.

    Gautier's parallel filtering: the zero-phase filter applied to the efforts is applied
    to every regressor column too, so that nonlinear columns (the Coulomb sign) see the same
    smoothing as the measured torques.

    :param samples: From :func:`prepare`.
    :param columns: Shape (N_full, ...) computed at ``samples.full`` states.
    :return: Shape (K, ...): filtered, at ``samples.index``.
    """
    from scipy import signal

    if samples.sos is None or samples.index is None:
        return columns
    flat = columns.reshape(columns.shape[0], -1)
    pad = min(3 * (2 * samples.sos.shape[0] + 1) * 3, flat.shape[0] - 1)
    out = signal.sosfiltfilt(samples.sos, flat, axis=0, padlen=pad)
    return out[samples.index].reshape((samples.index.size,) + columns.shape[1:])


def checked_recording(t, q, qd, tau, names) -> Recording:
    """
    Return a :class:`Recording` of samples sorted by time, repeated times dropped, checked.

    :param t: Sample times [s], (K,); ``q``, ``qd`` (or None), ``tau``: (K, n) arrays;
        ``names``: the n joint names.
    :raises InputError: Fewer than 10 samples, or NaN/inf (named by joint and time).
    """
    t = np.asarray(t, dtype=np.float64)
    if t.size < 10:
        raise InputError('the recording has %d joint samples; at least 10 are needed' % t.size)
    order = np.argsort(t, kind='stable')
    t = t[order]
    q = np.asarray(q, dtype=np.float64)[order]
    tau = np.asarray(tau, dtype=np.float64)[order]
    qd = None if qd is None else np.asarray(qd, dtype=np.float64)[order]
    keep = np.concatenate(([True], np.diff(t) > 0.0))
    t, q, tau = t[keep], q[keep], tau[keep]
    qd = None if qd is None else qd[keep]
    for what, arr in (('position', q), ('effort', tau), ('velocity', qd)):
        if arr is not None and not np.all(np.isfinite(arr)):
            row, col = np.argwhere(~np.isfinite(arr))[0]
            raise InputError('%s of joint %r is %r at t = %.6g s' % (
                what, names[col], float(arr[row, col]), t[row]))
    return Recording(t, q, qd, tau, tuple(names))


# ---------------------------------------------------------------------- rosbag2
def _typestore():
    try:
        from rosbags.typesys import get_typestore, Stores
    except ImportError:
        raise InputError('reading rosbag2 needs the rosbags package: pip install rosbags'
                         ) from None
    return get_typestore(Stores.ROS2_JAZZY)


def _rosbag2_py_messages(folder: str, topic: str):
    """
    Yield ``(receive time [ns], JointState)`` with ROS's own reader (an apt ROS install).

    :return: A generator, after ``(count, topics)`` of the bag (count 0 when unknown).
    :raises ImportError: rosbag2_py (or the JointState message) is not importable.
    """
    import rosbag2_py
    from rclpy.serialization import deserialize_message
    from sensor_msgs.msg import JointState

    reader = rosbag2_py.SequentialReader()
    try:
        reader.open(rosbag2_py.StorageOptions(uri=folder, storage_id=''),
                    rosbag2_py.ConverterOptions(input_serialization_format='cdr',
                                                output_serialization_format='cdr'))
    except Exception as exc:  # noqa: B902 - rosbag2 raises RuntimeError and others
        raise InputError('cannot open rosbag2 %r: %s' % (folder, exc)) from None
    topics = sorted(t.name for t in reader.get_all_topics_and_types())
    count = 0
    try:
        for info in reader.get_metadata().topics_with_message_count:
            if info.topic_metadata.name == topic:
                count = int(info.message_count)
    except AttributeError:
        pass  # an older rosbag2_py: no count, no progress fraction

    def messages():
        if topic in topics:
            reader.set_filter(rosbag2_py.StorageFilter(topics=[topic]))
            while reader.has_next():
                _, data, stamp = reader.read_next()
                yield int(stamp), deserialize_message(data, JointState)
    return count, topics, messages()


def _rosbags_messages(folder: str, topic: str):
    """
    Yield ``(receive time [ns], JointState)`` with the pure-Python ``rosbags`` package.

    :return: ``(count, topics, generator)`` as :func:`_rosbag2_py_messages`.
    :raises InputError: rosbags is not installed, or the bag does not open.
    """
    try:
        from rosbags.rosbag2 import Reader
    except ImportError:
        raise InputError('reading rosbag2 needs rosbag2_py (any ROS 2 install: sudo apt '
                         'install ros-$ROS_DISTRO-rosbag2-py) or the rosbags package (pip '
                         'install rosbags)') from None
    store = _typestore()
    try:
        reader = Reader(folder)
        reader.open()
    except Exception as exc:  # noqa: B902 - rosbags raises its own types
        raise InputError('cannot open rosbag2 %r: %s' % (folder, exc)) from None
    topics = sorted({c.topic for c in reader.connections})
    conns = [c for c in reader.connections if c.topic == topic]

    def messages():
        try:
            for conn, stamp, raw in reader.messages(connections=conns):
                yield int(stamp), store.deserialize_cdr(raw, conn.msgtype)
        finally:
            reader.close()
    if not conns:
        reader.close()
    return sum(c.msgcount for c in conns), topics, messages()


def bag_reader_name() -> str:
    """Return which reader :func:`read_rosbag` uses here: 'rosbag2_py' or 'rosbags'."""
    try:
        import rosbag2_py  # noqa: F401
        return 'rosbag2_py'
    except ImportError:
        return 'rosbags'


def read_rosbag(path: str, model, *, topic: str = '/joint_states',
                progress: Progress = None) -> Recording:
    """
    Read ``sensor_msgs/JointState`` messages of a rosbag2 folder (sqlite3 or mcap).

    Read with ``rosbag2_py`` where it is importable (every ROS 2 install has it), else with
    the pure-Python ``rosbags`` package (the PyPI set-up). Times are the messages' header
    stamps (the bag's receive times when a stamp is zero); joints are matched by name,
    extra joints ignored.  Messages without efforts or without all the model's joints are
    skipped.

    :param path: The bag folder (with ``metadata.yaml``) or a ``.db3``/``.mcap`` file in it.
    :param model: The :class:`~manip_dynamics.RobotModel` whose joints to extract.
    :param topic: The JointState topic.
    :param progress: ``progress(fraction)`` while reading.
    :return: The :class:`Recording`.
    :raises InputError: Not a bag, no such topic, no reader installed, or too few usable
        messages.
    """
    folder = path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
    if bag_reader_name() == 'rosbag2_py':
        total, topics, messages = _rosbag2_py_messages(folder, topic)
    else:
        total, topics, messages = _rosbags_messages(folder, topic)
    if topic not in topics:
        raise InputError('bag %r has no topic %r; it has %s' % (path, topic, topics))
    total = max(1, total)
    t, q, qd, tau = [], [], [], []
    skipped = 0
    has_velocity = True
    for k, (stamp, msg) in enumerate(messages):
        if progress is not None and k % 500 == 0:
            progress(min(1.0, k / total))
        names = list(msg.name)
        if len(msg.effort) != len(names) or len(msg.position) != len(names):
            skipped += 1
            continue
        try:
            q.append(model.to_model_order(names, msg.position, what='position',
                                          allow_extra=True))
            tau.append(model.to_model_order(names, msg.effort, what='effort',
                                            allow_extra=True))
        except InputError:
            skipped += 1
            continue
        if has_velocity and len(msg.velocity) == len(names):
            qd.append(model.to_model_order(names, msg.velocity, what='velocity',
                                           allow_extra=True))
        else:
            has_velocity = False
        ns = int(msg.header.stamp.sec) * 1_000_000_000 + int(msg.header.stamp.nanosec)
        t.append(ns if ns > 0 else stamp)
    if progress is not None:
        progress(1.0)
    if len(t) < 10:
        raise InputError('bag %r: %d usable %s messages (need >= 10 with position and '
                         'effort for every joint of %s; %d skipped)' % (
                             path, len(t), topic, list(model.joint_names), skipped))
    # integer nanoseconds from the first message: epoch seconds in a float lose 0.1 us
    t = (np.array(t, dtype=np.int64) - min(t)) * 1e-9
    return checked_recording(t, np.array(q), np.array(qd) if has_velocity else None,
                             np.array(tau), model.joint_names)


def write_rosbag(path: str, recording: Recording, *, topic: str = '/joint_states',
                 storage: str = 'sqlite3', start_time: float = 1.0e9) -> None:
    """
    Write a recording as ``sensor_msgs/JointState`` messages into a new rosbag2 folder.

    :param path: The folder to create (must not exist).
    :param recording: The data; ``t`` is shifted by ``start_time`` [s] for the stamps.
    :param topic: Topic name.
    :param storage: 'sqlite3' or 'mcap'.
    :param start_time: Epoch time of ``t = 0`` [s].
    :raises InputError: Unknown storage or existing folder.
    """
    from rosbags.rosbag2 import StoragePlugin, Writer

    if storage not in ('sqlite3', 'mcap'):
        raise InputError("storage must be 'sqlite3' or 'mcap', got %r" % storage)
    if os.path.exists(path):
        raise InputError('%r exists: rosbag2 writes a new folder' % path)
    store = _typestore()
    joint_state = store.types['sensor_msgs/msg/JointState']
    header = store.types['std_msgs/msg/Header']
    stamp_type = store.types['builtin_interfaces/msg/Time']
    plugin = StoragePlugin.SQLITE3 if storage == 'sqlite3' else StoragePlugin.MCAP
    names = list(recording.joint_names)
    empty = np.zeros(0)
    with Writer(path, version=9, storage_plugin=plugin) as writer:
        conn = writer.add_connection(topic, joint_state.__msgtype__, typestore=store)
        start_ns = int(round(start_time * 1e9))   # apart: 1e9 s + t in a float loses 60 ns
        for k in range(recording.t.shape[0]):
            ns = start_ns + int(round(recording.t[k] * 1e9))
            msg = joint_state(
                header=header(stamp=stamp_type(sec=ns // 1_000_000_000,
                                               nanosec=ns % 1_000_000_000), frame_id=''),
                name=names, position=np.ascontiguousarray(recording.q[k]),
                velocity=(empty if recording.qd is None
                          else np.ascontiguousarray(recording.qd[k])),
                effort=np.ascontiguousarray(recording.tau[k]))
            writer.write(conn, ns, store.serialize_cdr(msg, joint_state.__msgtype__))


# ---------------------------------------------------------------------- CSV
def read_csv(path: str, model) -> Recording:
    """
    Read a CSV recording: a header row, then one row per sample.

    Columns: ``t`` [s]; per joint ``q_<joint>`` (or ``position_<joint>``), optionally
    ``qd_<joint>`` (``velocity_<joint>``), and ``tau_<joint>`` (``effort_<joint>``); other
    columns are ignored.  ``manip-dynamics simulate --csv`` writes this layout.

    :raises InputError: Missing column or not numbers.
    """
    try:
        with open(path, newline='', encoding='utf-8') as stream:
            rows = list(csv.reader(stream))
    except OSError as exc:
        raise InputError('cannot read CSV %r: %s' % (path, exc.strerror)) from None
    if len(rows) < 2:
        raise InputError('CSV %r has no data rows' % path)
    header = [h.strip() for h in rows[0]]
    index = {h: i for i, h in enumerate(header)}

    def column(prefixes: Sequence[str], joint: str, required: bool) -> int | None:
        for prefix in prefixes:
            if prefix + joint in index:
                return index[prefix + joint]
        if required:
            raise InputError('CSV %r has no column %s for joint %r' % (
                path, ' or '.join(p + joint for p in prefixes), joint))
        return None

    if 't' not in index:
        raise InputError("CSV %r has no time column 't'" % path)
    try:
        data = np.array([[float(v) for v in row] for row in rows[1:] if row], dtype=np.float64)
    except ValueError as exc:
        raise InputError('CSV %r: %s' % (path, exc)) from None
    names = model.joint_names
    qi = [column(('q_', 'position_'), j, True) for j in names]
    ti = [column(('tau_', 'effort_'), j, True) for j in names]
    vi = [column(('qd_', 'velocity_'), j, False) for j in names]
    qd = None if any(v is None for v in vi) else data[:, vi]
    return checked_recording(data[:, index['t']], data[:, qi], qd, data[:, ti], names)


def write_csv(path: str, recording: Recording) -> None:
    """Write a recording in the layout :func:`read_csv` reads."""
    names = recording.joint_names
    header = ['t'] + ['q_' + j for j in names]
    parts = [recording.t[:, None], recording.q]
    if recording.qd is not None:
        header += ['qd_' + j for j in names]
        parts.append(recording.qd)
    header += ['tau_' + j for j in names]
    parts.append(recording.tau)
    data = np.hstack(parts)
    with open(path, 'w', newline='', encoding='utf-8') as stream:
        writer = csv.writer(stream)
        writer.writerow(header)
        for row in data:
            writer.writerow(['%.10g' % v for v in row])


def read_recording(path: str, model, *, topic: str = '/joint_states',
                   progress: Progress = None) -> Recording:
    """Read a rosbag2 folder (or its .db3/.mcap file) or a ``.csv`` file."""
    if path.lower().endswith('.csv'):
        return read_csv(path, model)
    if os.path.isdir(path) or path.endswith(('.db3', '.mcap')):
        return read_rosbag(path, model, topic=topic, progress=progress)
    raise InputError('%r is neither a rosbag2 folder nor a .csv file' % path)


# ---------------------------------------------------------------------- filtering
def prepare(recording: Recording, *, cutoff_hz: float = DEFAULT_CUTOFF_HZ,
            order: int = DEFAULT_FILTER_ORDER, use_velocity: bool = True,
            decimate: int | None = None, trim: float | None = None) -> Samples:
    """
    Filter and differentiate a recording into estimation samples.

    The data are first put on a uniform time grid (linear interpolation at the median
    sample period, when stamps jitter); positions, velocities and efforts are low-pass
    filtered forward and backward (``scipy.signal.sosfiltfilt``, zero phase) with a
    Butterworth filter; velocities are the recorded ones when ``use_velocity`` and present,
    otherwise central differences of the filtered positions; accelerations are central
    differences of the filtered velocities (``numpy.gradient``, second-order accurate).
    The first and last ``trim`` seconds (filter start-up) are dropped, then every
    ``decimate``-th sample is kept.

    :param recording: The raw data.
    :param cutoff_hz: Filter cut-off [Hz]; keep it above the excitation band and below
        half the sample rate.
    :param order: Butterworth order (applied twice: zero phase).
    :param use_velocity: Use recorded velocities when the recording has them.
    :param decimate: Keep every k-th sample (default: down to about 2.5 x cutoff, so that
        the kept samples of the filtered residual are nearly independent and the
        least-squares standard deviations are not too optimistic).
    :param trim: Seconds dropped at each end (default ``2 / cutoff_hz``).
    :return: :class:`Samples`.
    :raises InputError: Cut-off not below the Nyquist frequency, or too short a recording.
    """
    from scipy import signal

    t = recording.t - recording.t[0]
    dt = float(np.median(np.diff(t)))
    if not (dt > 0.0 and math.isfinite(dt)):
        raise InputError('the recording has no increasing time stamps')
    rate = 1.0 / dt
    if not (0.0 < cutoff_hz < 0.5 * rate):
        raise InputError('filter cut-off %g Hz must be in (0, %g) Hz (half the %g Hz sample '
                         'rate)' % (cutoff_hz, 0.5 * rate, rate))
    grid = np.arange(0.0, t[-1] + 0.5 * dt, dt)
    uniform = t.shape == grid.shape and bool(np.allclose(t, grid, atol=0.05 * dt))

    def on_grid(x: FloatArray) -> FloatArray:
        if uniform:
            return x
        return np.column_stack([np.interp(grid, t, x[:, j]) for j in range(x.shape[1])])

    t_u = t if uniform else grid
    q = on_grid(recording.q)
    tau = on_grid(recording.tau)
    sos = signal.butter(order, cutoff_hz, fs=rate, output='sos')
    pad = min(3 * (2 * order + 1) * 3, q.shape[0] - 1)
    q_f = signal.sosfiltfilt(sos, q, axis=0, padlen=pad)
    tau_f = signal.sosfiltfilt(sos, tau, axis=0, padlen=pad)
    if use_velocity and recording.qd is not None:
        qd_f = signal.sosfiltfilt(sos, on_grid(recording.qd), axis=0, padlen=pad)
    else:
        qd_f = np.gradient(q_f, dt, axis=0)
    qdd_f = np.gradient(qd_f, dt, axis=0)
    trim = 2.0 / cutoff_hz if trim is None else float(trim)
    keep = (t_u >= t_u[0] + trim) & (t_u <= t_u[-1] - trim)
    step = decimate if decimate is not None else max(1, int(rate / (2.5 * cutoff_hz)))
    idx = np.flatnonzero(keep)[::step]
    if idx.size < 10:
        raise InputError('the recording is too short: %d samples left after trimming %g s at '
                         'each end' % (idx.size, trim))
    return Samples(t_u[idx], q_f[idx], qd_f[idx], qdd_f[idx], tau_f[idx],
                   full=(q_f, qd_f, qdd_f, tau), index=idx, sos=sos, cutoff_hz=cutoff_hz)
