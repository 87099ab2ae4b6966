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
The nodes under glitches, misconfiguration and hostile input, over real DDS.

Node processes on the test-own domain (conftest.py); in-process nodes for the callback
injection (every subscription, timer, service and guard-condition callback of every node
is made to raise: the node must log it and go on, a service must answer success false).
Each test names the item of the issue it covers and failed before the fix.
"""

import os
import re
import threading
import time

import numpy as np
import pytest
from ros_test_support import (
    read_log, require_interfaces, require_rclpy, send_until_logged, spun_node,
    STARTUP_TIMEOUT, wait_until)

rclpy = require_rclpy()
srv = require_interfaces()

from rclpy.parameter import Parameter  # noqa: E402, I100
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray, String  # noqa: E402

from manip_dynamics import RobotModel  # noqa: E402
from manip_dynamics.bundled import urdf_path  # noqa: E402
from manip_dynamics.ros.runtime.node_process import start_node, stop_node  # noqa: E402
from manip_dynamics.ros.runtime.robot_description import ROBOT_DESCRIPTION_QOS  # noqa: E402

pytestmark = pytest.mark.rostest

with open(urdf_path('cobot7'), encoding='utf-8') as _stream:
    URDF = _stream.read()
MODEL = RobotModel.from_urdf_string(URDF)
NAMES = list(MODEL.joint_names)
Q = np.array([0.2, -0.4, 0.3, -1.8, 0.5, 1.6, 0.4])


def joint_state(q, qd, effort=None, stamp: float = 0.0) -> JointState:
    msg = JointState()
    msg.header.stamp.sec = int(stamp)
    msg.header.stamp.nanosec = int(round((stamp - int(stamp)) * 1e9))
    msg.name = NAMES
    msg.position = [float(v) for v in q]
    msg.velocity = [float(v) for v in qd]
    if effort is not None:
        msg.effort = [float(v) for v in effort]
    return msg


def exited(process, timeout: float) -> int | None:
    try:
        return process.wait(timeout=timeout)
    except Exception:  # noqa: B902 - still running
        return None


# ---------------------------------------------------------------- item 1 and 6
def test_friction_glitch_and_far_positions_never_reach_the_commands():
    topic, controller = '/md_glitch_js', 'md_glitch_ctrl'
    model = MODEL.with_joint_dynamics(damping=dict.fromkeys(NAMES, 2.0),
                                      friction=dict.fromkeys(NAMES, 1.5))
    urdf = URDF
    for name in NAMES:  # the same friction in the URDF the node loads
        urdf = re.sub(r'(<joint name="%s".*?<dynamics )[^/]*/>' % name,
                      r'\1damping="2.0" friction="1.5"/>', urdf, count=1, flags=re.S)
    node_model = RobotModel.from_urdf_string(urdf)
    np.testing.assert_allclose(node_model.damping, model.damping)
    process = start_node('gravity_compensation_node', 'md_glitch_gc', {
        'robot_description': urdf, 'controller_name': controller, 'ramp_time': 0.0,
        'timeout': 0.5, 'glitch_hold_time': 0.3, 'include_friction': True,
        'joint_states_topic': topic})
    commands = []
    current = {'msg': joint_state(Q, np.zeros(7))}
    stop = threading.Event()
    try:
        with spun_node('md_glitch_probe') as probe:
            pub = probe.create_publisher(JointState, topic, 10)
            probe.create_subscription(Float64MultiArray, '/%s/commands' % controller,
                                      lambda m: commands.append(np.array(m.data)), 10)
            send_until_logged(process, pub, current['msg'], 'first joint_states',
                              STARTUP_TIMEOUT)

            def feed() -> None:
                while not stop.is_set():
                    pub.publish(current['msg'])
                    time.sleep(0.005)
            feeder = threading.Thread(target=feed, daemon=True)
            feeder.start()
            wait_until(lambda: len(commands) > 5, 10.0, 'no commands')
            expected = node_model.gravity_torques(Q) + node_model.friction_torques(np.zeros(7))
            np.testing.assert_allclose(commands[-1], expected, atol=1e-9)
            for glitch in (joint_state(Q, np.full(7, 1e6)), None):     # item 1, item 6
                if glitch is None:
                    far = Q.copy()
                    far[3] = MODEL.position_lower[3] - 4.5
                    glitch = joint_state(far, np.zeros(7))
                before = len(commands)
                current['msg'] = glitch
                time.sleep(0.1)           # within the hold time (0.3 s): the last command
                current['msg'] = joint_state(Q, np.zeros(7))
                time.sleep(0.1)
                after = commands[before:]
                assert after, 'nothing was commanded around the glitch'
                for command in after:
                    assert np.all(np.isfinite(command))
                    np.testing.assert_allclose(command, expected, atol=1e-9)
            # glitches for longer than the hold time: gravity at the last good pose, never
            # zero, and still one command per sample (a stream of glitches is not stale)
            far = Q.copy()
            far[0] = 1e300
            current['msg'] = joint_state(far, np.zeros(7))
            wait_until(lambda: 'holding gravity at the last good pose' in read_log(process),
                       10.0, read_log(process))
            time.sleep(0.2)
            count = len(commands)
            time.sleep(0.3)
            held = commands[count:]
            assert len(held) > 10, 'the glitch stream went unanswered'
            for command in held:
                np.testing.assert_allclose(command, node_model.gravity_torques(Q), atol=1e-9)
            assert not any(not np.any(c) for c in commands), 'a zero command was sent'
            log = read_log(process)
            assert 'velocity 1e+06 exceeds' in log and 'position' in log
    finally:
        stop.set()
        stop_node(process)


# ---------------------------------------------------------------- item 2
@pytest.mark.parametrize('params, words', [
    # outside every timeout's range: the table's; outside this timeout's: the node's check
    ({'watchdog_rate': 1e-6}, 'watchdog_rate must be in [0.2'),
    ({'watchdog_rate': 0.2}, 'watchdog_rate must be in [20'),
    ({'timeout': 1e-9}, 'timeout must be in'),
    ({'glitch_hold_time': 0.5}, 'glitch_hold_time must be in [0, 0.1]'),
    ({'ramp_time': 1e9}, 'ramp_time must be in')])
def test_rate_and_timeout_parameters_outside_their_range_refuse_to_start(params, words):
    settings = {'robot_description': URDF, 'controller_name': 'md_range_ctrl'}
    settings.update(params)
    process = start_node('gravity_compensation_node', 'md_range_gc', settings)
    try:
        code = exited(process, STARTUP_TIMEOUT)
        assert code == 1, read_log(process)
        assert words in read_log(process), read_log(process)
    finally:
        stop_node(process)


# ---------------------------------------------------------------- item 3
def test_dynamics_node_survives_a_velocity_of_1e155():
    topic = '/md_glitch_dyn_js'
    process = start_node('dynamics_node', 'md_glitch_dyn', {
        'robot_description': URDF, 'joint_states_topic': topic})
    try:
        with spun_node('md_glitch_dyn_probe') as probe:
            pub = probe.create_publisher(JointState, topic, 10)
            got = []
            probe.create_subscription(JointState, '/md_glitch_dyn/gravity_torques',
                                      lambda m: got.append(m), 10)
            send_until_logged(process, pub, joint_state(Q, np.full(7, 1e155)),
                              'implausible joint_states', STARTUP_TIMEOUT)
            # still alive, and still answering good messages
            pub_good = joint_state(Q, np.zeros(7))
            wait_until(lambda: (pub.publish(pub_good), got)[1], 10.0,
                       'dynamics_node stopped answering:\n' + read_log(process))
            assert process.poll() is None, read_log(process)
    finally:
        stop_node(process)


# ---------------------------------------------------------------- item 4
def test_observer_recovers_from_a_glitched_first_sample():
    topic = '/md_glitch_obs_js'
    process = start_node('external_torque_observer', 'md_glitch_obs', {
        'robot_description': URDF, 'joint_states_topic': topic})
    try:
        with spun_node('md_glitch_obs_probe') as probe:
            pub = probe.create_publisher(JointState, topic, 10)
            torques = []
            probe.create_subscription(JointState, '/md_glitch_obs/external_torques',
                                      lambda m: torques.append(np.array(m.effort)), 10)
            g = MODEL.gravity_torques(Q)
            send_until_logged(process, pub, joint_state(Q, np.full(7, 1e308), g, 1.0),
                              'observer restarted', STARTUP_TIMEOUT)
            for k in range(1, 200):
                pub.publish(joint_state(Q, np.zeros(7), g, 1.0 + 0.002 * k))
                time.sleep(0.002)
            wait_until(lambda: len(torques) > 20, 10.0,
                       'no external torques after the glitch:\n' + read_log(process))
            assert all(np.all(np.isfinite(r)) for r in torques)
            assert max(float(np.max(np.abs(r))) for r in torques) < 1e-6
    finally:
        stop_node(process)


# ---------------------------------------------------------------- item 5
def test_a_huge_description_is_refused_while_the_compensation_keeps_commanding():
    topic, controller = '/md_glitch_big_js', 'md_glitch_big_ctrl'
    process = start_node('gravity_compensation_node', 'md_glitch_big', {
        'controller_name': controller, 'ramp_time': 0.0, 'timeout': 0.5,
        'joint_states_topic': topic})
    stamps = []
    try:
        with spun_node('md_glitch_big_probe') as probe:
            desc = probe.create_publisher(String, '/robot_description', ROBOT_DESCRIPTION_QOS)
            desc.publish(String(data=URDF))
            pub = probe.create_publisher(JointState, topic, 10)
            probe.create_subscription(Float64MultiArray, '/%s/commands' % controller,
                                      lambda m: stamps.append(time.monotonic()), 10)
            send_until_logged(process, pub, joint_state(Q, np.zeros(7)),
                              'first joint_states', STARTUP_TIMEOUT)
            stop = threading.Event()

            def feed() -> None:
                while not stop.is_set():
                    pub.publish(joint_state(Q, np.zeros(7)))
                    time.sleep(0.005)
            feeder = threading.Thread(target=feed, daemon=True)
            feeder.start()
            links = ['<link name="l%d"/>' % i for i in range(5000)]
            joints = ['<joint name="j%d" type="fixed"><parent link="l%d"/><child link="l%d"/>'
                      '</joint>' % (i, i - 1, i) for i in range(1, 5000)]
            sent = time.monotonic()
            desc.publish(String(data='<robot name="big">%s%s</robot>' % (
                ''.join(links), ''.join(joints))))
            wait_until(lambda: '5000 links, more than the 1000' in read_log(process), 10.0,
                       'not refused:\n' + read_log(process))
            time.sleep(0.5)
            stop.set()
            feeder.join()
            during = [s for s in stamps if s >= sent]
            gaps = np.diff(during)
            assert len(during) > 20 and float(np.max(gaps)) < 0.3, (len(during), gaps.max())
            assert 'keeping the previous model' in read_log(process)
    finally:
        stop_node(process)


# ---------------------------------------------------------------- item 9
def test_a_second_node_of_the_same_name_refuses_to_start():
    first = start_node('dynamics_node', 'md_twin', {'robot_description': URDF})
    second = None
    try:
        wait_until(lambda: 'robot model' in read_log(first), STARTUP_TIMEOUT,
                   'first node did not start:\n' + read_log(first))
        time.sleep(1.0)
        second = start_node('dynamics_node', 'md_twin', {'robot_description': URDF})
        code = exited(second, STARTUP_TIMEOUT)
        assert code == 1, read_log(second)
        log = read_log(second)
        assert 'a node named /md_twin is already running' in log
        # who it is: named when the older one's start announcement arrived within the
        # 5 s window (on a loaded machine discovery can take longer: then said so)
        assert (('in process %d' % first.pid in log and 'dynamics_node' in log)
                or 'it announced no start' in log), log
        time.sleep(1.0)
        assert first.poll() is None, read_log(first)   # the older one goes on
    finally:
        if second is not None:
            stop_node(second)
        stop_node(first)


def test_of_two_nodes_started_together_exactly_one_runs():
    nodes = [start_node('dynamics_node', 'md_pair', {'robot_description': URDF})
             for _ in range(2)]
    try:
        wait_until(lambda: any(n.poll() is not None for n in nodes), STARTUP_TIMEOUT,
                   'neither refused:\n' + '\n'.join(read_log(n) for n in nodes))
        time.sleep(6.0)   # past the other's check window
        codes = [n.poll() for n in nodes]
        assert sorted(codes, key=lambda c: c is None) == [1, None], codes
    finally:
        for n in nodes:
            stop_node(n)


# ---------------------------------------------------------------- item 10
def test_compensation_refuses_a_model_without_effort_limits_unless_given():
    urdf = re.sub(r'<limit ([^>]*?)effort="[^"]*"', r'<limit \1', URDF)
    urdf = re.sub(r'<limit [^>]*/>', '', urdf)  # no <limit> at all: urdfdom would refuse
    refused = start_node('gravity_compensation_node', 'md_nolimit_gc', {
        'robot_description': urdf, 'controller_name': 'md_nolimit_ctrl'})
    try:
        assert exited(refused, STARTUP_TIMEOUT) == 1, read_log(refused)
        assert 'have no effort limit' in read_log(refused)
    finally:
        stop_node(refused)
    given = start_node('gravity_compensation_node', 'md_nolimit_gc2', {
        'robot_description': urdf, 'controller_name': 'md_nolimit_ctrl',
        'effort_limits': [50.0] * 7})
    try:
        wait_until(lambda: 'commanding joints' in read_log(given), STARTUP_TIMEOUT,
                   read_log(given))
        assert given.poll() is None
    finally:
        stop_node(given)


# ---------------------------------------------------------------- every callback guarded
def _node_classes():
    from manip_dynamics.ros.nodes.dynamics_node import DynamicsNode
    from manip_dynamics.ros.nodes.external_torque_observer import ExternalTorqueObserverNode
    from manip_dynamics.ros.nodes.gravity_compensation_node import GravityCompensationNode
    from manip_dynamics.ros.nodes.simulator_node import SimulatorNode
    return [DynamicsNode, GravityCompensationNode, ExternalTorqueObserverNode, SimulatorNode]


@pytest.mark.parametrize('from_topic', [False, True], ids=['parameter', 'topic'])
def test_an_exception_in_any_callback_never_leaves_the_node(from_topic):
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        for cls in _node_classes():
            desc = '' if from_topic else URDF
            node = cls(context=context, parameter_overrides=[
                Parameter('robot_description', value=desc)])
            try:
                callbacks = ([('subscription', s.callback) for s in node.subscriptions]
                             + [('timer', t.callback) for t in node.timers]
                             + [('service', s.callback) for s in node.services]
                             + [('guard', g.callback) for g in node.guards])
                kinds = {kind for kind, _ in callbacks}
                assert {'subscription', 'service'} <= kinds, (cls.__name__, kinds)
                for kind, callback in callbacks:
                    if getattr(callback, '__module__', '').startswith('rclpy'):
                        continue   # rclpy's own (type description) service
                    assert getattr(callback, '_md_guarded', False), (cls.__name__, kind)

                    def boom(*args):
                        raise RuntimeError('injected')
                    inner = callback.__wrapped__
                    callback.__wrapped__ = boom
                    try:
                        if kind == 'service':
                            service = next(s for s in node.services if s.callback is callback)
                            answer = callback(service.srv_type.Request(),
                                              service.srv_type.Response())
                            if hasattr(answer, 'success'):
                                assert answer.success is False
                                assert 'injected' in answer.message
                        elif kind == 'subscription':
                            callback(object())
                        else:
                            callback()
                    finally:
                        callback.__wrapped__ = inner
            finally:
                node.destroy_node()
    finally:
        rclpy.try_shutdown(context=context)


# ---------------------------------------------------------------- item 7
def test_simulator_reset_recovers_from_an_integration_failure_and_refuses_huge_pushes():
    from manip_dynamics.ros.nodes.simulator_node import SimulatorNode
    from manip_dynamics_interfaces.srv import ApplyWrench
    from std_srvs.srv import Trigger
    context = rclpy.Context()
    rclpy.init(context=context)
    node = SimulatorNode(context=context, parameter_overrides=[
        Parameter('robot_description', value=URDF), Parameter('brakes', value=False)])
    try:
        request = ApplyWrench.Request(link=MODEL.link_names[-1], duration=0.5)
        request.wrench.force.x = 1e300
        answer = node._pushes.apply_wrench_callback(request, ApplyWrench.Response())
        assert not answer.success and 'beyond what the simulation integrates' in answer.message
        request.wrench.force.x = 10.0
        request.duration = 1e300
        answer = node._pushes.apply_wrench_callback(request, ApplyWrench.Response())
        assert not answer.success and 'duration must be in' in answer.message
        # an integration failure pauses the simulation ...
        sim = node._arm.sim

        def broken(*args, **kwargs):
            raise ValueError('simulation failed: injected divergence')
        sim.step = broken
        node.step_callback()
        assert node._arm.paused
        del sim.step   # the instance attribute: the class's step is back
        # ... and ~/reset brings it back running from a clean state
        reset = node.reset_callback(Trigger.Request(), Trigger.Response())
        assert reset.success and 'running again' in reset.message
        assert not node._arm.paused
        np.testing.assert_allclose(sim.q, node._q0)
        steps = sim.steps
        time.sleep(0.05)
        node.step_callback()
        assert sim.steps > steps
    finally:
        node.destroy_node()
        rclpy.try_shutdown(context=context)


def test_reading_the_docs_ranges_match_the_code():
    """docs/ROS_API.md lists the valid range of every gate, rate and timeout parameter."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))))
    with open(os.path.join(root, 'docs', 'ROS_API.md'), encoding='utf-8') as stream:
        text = stream.read()
    for name in ('glitch_velocity_factor', 'glitch_position_margin', 'glitch_hold_time',
                 'watchdog_rate', 'robot_description_max_links', 'allow_duplicate_name',
                 'effort_limits'):
        assert name in text, name
