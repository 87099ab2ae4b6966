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
No DDS packet leaves the machine, and no deprecation warning is printed.

A node process is started with the environment every script of the project gives it
(:func:`manip_dynamics.ros.runtime.discovery.loopback_environment`); meanwhile a raw packet socket
(AF_PACKET, needs root or CAP_NET_RAW: skipped with that reason otherwise) listens on every
network interface but loopback and counts the UDP packets to or from the RTPS ports (7400
and up). There must be none. ROS_FROM_PYPI.md measured 16 such packets in 5 s with the
default discovery, on this machine's kind.
"""

import os
import socket
import struct
import threading
import time

import pytest
from ros_test_support import read_log, require_rclpy, STARTUP_TIMEOUT, wait_until

require_rclpy()

from manip_dynamics.bundled import urdf_path  # noqa: E402, I100
from manip_dynamics.ros.runtime.discovery import loopback_environment  # noqa: E402
from manip_dynamics.ros.runtime.node_process import start_node, stop_node  # noqa: E402

pytestmark = pytest.mark.rostest

#: RTPS ports: 7400 + 250 domain + offsets (< 7400 + 250 * 232 + 1000 covers every domain).
RTPS_LOW, RTPS_HIGH = 7400, 7400 + 250 * 233


def non_loopback_interfaces() -> list[str]:
    return [name for _, name in socket.if_nameindex() if name != 'lo']


def rtps_packets(frame: bytes) -> bool:
    """Return whether an Ethernet frame is an IPv4/IPv6 UDP datagram on an RTPS port."""
    if len(frame) < 14:
        return False
    ethertype = struct.unpack('!H', frame[12:14])[0]
    if ethertype == 0x0800 and len(frame) >= 34:
        ihl = (frame[14] & 0x0F) * 4
        if frame[23] != 17 or len(frame) < 14 + ihl + 4:
            return False
        ports = struct.unpack('!HH', frame[14 + ihl:14 + ihl + 4])
    elif ethertype == 0x86DD and len(frame) >= 58:
        if frame[20] != 17:
            return False
        ports = struct.unpack('!HH', frame[54:58])
    else:
        return False
    return any(RTPS_LOW <= p < RTPS_HIGH for p in ports)


def test_the_environment_is_the_range_alone_on_jazzy_and_newer():
    env = loopback_environment({'ROS_DISTRO': 'jazzy', 'ROS_LOCALHOST_ONLY': '1'})
    assert env['ROS_AUTOMATIC_DISCOVERY_RANGE'] == 'LOCALHOST'
    assert 'ROS_LOCALHOST_ONLY' not in env
    humble = loopback_environment({'ROS_DISTRO': 'humble'})
    assert humble['ROS_LOCALHOST_ONLY'] == '1'


def test_a_node_sends_no_dds_packet_off_the_machine_and_prints_no_deprecation():
    interfaces = non_loopback_interfaces()
    if not interfaces:
        pytest.skip('no network interface but loopback: nothing could leave the machine')
    try:
        sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.ntohs(0x0003))
    except (PermissionError, OSError) as error:
        pytest.skip('cannot open a raw packet socket (needs root or CAP_NET_RAW): %s' % error)
    sock.settimeout(0.2)
    seen = []
    stop = threading.Event()

    def capture() -> None:
        while not stop.is_set():
            try:
                frame, address = sock.recvfrom(65535)
            except socket.timeout:
                continue
            except OSError:
                return
            if address[0] != 'lo' and rtps_packets(frame):
                seen.append(address[0])
    thread = threading.Thread(target=capture, daemon=True)
    thread.start()
    process = start_node('dynamics_node', 'md_loopback_probe', {
        'robot_description': open(urdf_path('cobot7'), encoding='utf-8').read()},
        env=loopback_environment())
    try:
        wait_until(lambda: 'robot model' in read_log(process), STARTUP_TIMEOUT,
                   'the node did not start:\n' + read_log(process))
        time.sleep(5.0)   # discovery announces itself repeatedly in its first seconds
    finally:
        stop_node(process)
        stop.set()
        thread.join(timeout=2.0)
        sock.close()
    assert not seen, '%d DDS packets left through %s' % (len(seen), sorted(set(seen)))
    log = read_log(process)
    assert 'ROS_LOCALHOST_ONLY is deprecated' not in log, log
    assert os.environ.get('ROS_LOCALHOST_ONLY') is None
