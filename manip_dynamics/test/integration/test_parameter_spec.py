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
A node's table declared on a ROS node: ranges in the descriptors, start-up errors, run-time sets.

On a plain rclpy node with gravity_compensation_node's table (what ``ros2 param describe``
and ``ros2 param set`` see), then on the running node itself: ``effort_scale`` set through
the parameter service changes what the node commands; an out-of-range value and a
read-only parameter are refused with the reason.
"""

import pytest
from ros_test_support import (bundled_arm, read_log, require_interfaces, require_rclpy,
                              spun_node, STARTUP_TIMEOUT, wait_for_log, wait_until)

rclpy = require_rclpy()
require_interfaces()

from rcl_interfaces.srv import SetParameters  # noqa: E402, I100
from rclpy.parameter import Parameter  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402

from manip_dynamics.ros.parameters.gravity_compensation_node import PARAMETERS  # noqa: E402
from manip_dynamics.ros.runtime.node_process import start_node, stop_node  # noqa: E402
from manip_dynamics.ros.runtime.parameter_spec import declare_parameters  # noqa: E402
from manip_dynamics.ros.runtime.startup import StartupError  # noqa: E402

pytestmark = [pytest.mark.rostest]


def plain_node(overrides: list) -> object:
    context = rclpy.Context()
    rclpy.init(context=context)
    node = rclpy.create_node('parameter_spec_probe', context=context,
                             parameter_overrides=overrides)
    node.context_to_close = context
    return node


def close(node) -> None:
    context = node.context_to_close
    node.destroy_node()
    rclpy.try_shutdown(context=context)


def test_descriptors_carry_the_ranges_and_sets_are_checked():
    changed = []
    node = plain_node([Parameter('timeout', value=1)])   # YAML's 1 for 1.0
    try:
        values = declare_parameters(node, PARAMETERS, on_change=lambda *c: changed.append(c))
        assert values.timeout == 1.0
        scale = node.describe_parameter('effort_scale')
        assert not scale.read_only
        assert (scale.floating_point_range[0].from_value,
                scale.floating_point_range[0].to_value) == (0.0, 1.0)
        assert node.describe_parameter('timeout').read_only
        assert 'one of: hold, zero' == node.describe_parameter('stale_action') \
            .additional_constraints
        links = node.describe_parameter('robot_description_max_links').integer_range[0]
        assert (links.from_value, links.to_value) == (1, 1000000)
        ok, = node.set_parameters([Parameter('effort_scale', value=0.25)])
        assert ok.successful and values.effort_scale == 0.25
        assert changed == [('effort_scale', 0.25)]
        open_bound, = node.set_parameters([Parameter('effort_scale', value=0.0)])
        assert not open_bound.successful
        assert 'parameter effort_scale must be in (0, 1], got 0.0' in open_bound.reason
        assert values.effort_scale == 0.25
        read_only, = node.set_parameters([Parameter('timeout', value=0.5)])
        assert not read_only.successful and 'read-only' in read_only.reason
    finally:
        close(node)


@pytest.mark.parametrize('override, message', [
    (Parameter('effort_scale', value=2.0), 'parameter effort_scale must be in (0, 1], got 2.0'),
    (Parameter('stale_action', value='fall'),
     "parameter stale_action must be one of hold, zero, got 'fall'"),
    (Parameter('payload_com', value=[0.0, 1.0]),
     'parameter payload_com must be 3 finite numbers, got [0.0, 1.0]'),
    (Parameter('robot_description_max_links', value=0),
     'parameter robot_description_max_links must be an integer in [1, 1e+06], got 0')])
def test_a_start_up_value_outside_the_table_is_a_startup_error(override, message):
    node = plain_node([override])
    try:
        with pytest.raises(StartupError) as error:
            declare_parameters(node, PARAMETERS)
        assert str(error.value) == message
    finally:
        close(node)


def set_remote(probe, node: str, name: str, value) -> object:
    """Set ``name`` on the running ``node`` as ``ros2 param set`` does; return the result."""
    client = probe.create_client(SetParameters, '/%s/set_parameters' % node)
    assert client.wait_for_service(timeout_sec=STARTUP_TIMEOUT), node
    future = client.call_async(SetParameters.Request(
        parameters=[Parameter(name, value=value).to_parameter_msg()]))
    wait_until(future.done, 30.0, 'no answer from %s/set_parameters' % node)
    probe.destroy_client(client)
    return future.result().results[0]


def test_thresholds_and_plan_tolerances_are_tunable_and_checked():
    xml, model, _ = bundled_arm('cobot7')
    with spun_node('tunables_probe') as probe:
        observer = start_node('external_torque_observer', 'external_torque_observer',
                              {'robot_description': xml})
        filt = start_node('feedforward_filter', 'feedforward_filter',
                          {'robot_description': xml, 'downstream': 'topic'})
        tracker = start_node('trajectory_controller', 'trajectory_controller',
                             {'robot_description': xml})
        try:
            wait_for_log(observer, 'observer for')
            wait_for_log(filt, 'feed-forward filter:')
            wait_for_log(tracker, 'controlling joints')
            # gains the controller refuses (a length that is neither 1 nor the joints'): the
            # set is refused with its reason, the old gains stay
            wrong = set_remote(probe, 'trajectory_controller', 'kp', [100.0, 200.0])
            assert not wrong.successful and 'kp' in wrong.reason, wrong.reason
            assert set_remote(probe, 'trajectory_controller', 'kp', [200.0]).successful
            assert set_remote(probe, 'trajectory_controller', 'kd',
                              [20.0] * model.dof).successful
            wait_for_log(tracker, 'kd set to')
            assert not set_remote(probe, 'trajectory_controller', 'law',
                                  'impedance').successful   # read-only
            wrong = set_remote(probe, 'external_torque_observer', 'thresholds', [1.0, 2.0])
            assert not wrong.successful and 'thresholds' in wrong.reason, wrong.reason
            assert set_remote(probe, 'external_torque_observer', 'threshold', 2.5).successful
            per_joint = [3.0] * model.dof
            assert set_remote(probe, 'external_torque_observer', 'thresholds',
                              per_joint).successful
            assert set_remote(probe, 'external_torque_observer', 'hysteresis', 0.3).successful
            wait_for_log(observer, 'hysteresis set to 0.3')
            assert not set_remote(probe, 'external_torque_observer', 'gain', 10.0).successful
            assert not set_remote(probe, 'feedforward_filter', 'start_tolerance',
                                  0.0).successful   # the open bound
            assert set_remote(probe, 'feedforward_filter', 'max_contact_age', 0.3).successful
            wait_for_log(filt, 'max_contact_age set to 0.3')
            assert not set_remote(probe, 'feedforward_filter', 'downstream',
                                  'action').successful   # read-only
        finally:
            for proc in (observer, filt, tracker):
                stop_node(proc)


def test_effort_scale_set_on_the_running_node_clamps_its_commands():
    xml, model, q0 = bundled_arm('cobot7')
    names = list(model.joint_names)
    tau = model.gravity_torques(q0)
    shoulder = int(abs(tau / model.effort_limits).argmax())
    # a scale that clamps the shoulder to half its gravity torque
    scale = 0.5 * abs(tau[shoulder]) / model.effort_limits[shoulder]
    commands = []
    with spun_node('effort_scale_probe') as probe:
        probe.create_subscription(Float64MultiArray, '/effort_controller/commands',
                                  lambda msg: commands.append(list(msg.data)), 10)
        states = probe.create_publisher(JointState, '/joint_states', 10)
        proc = start_node('gravity_compensation_node', 'gravity_compensation', {
            'robot_description': xml, 'ramp_time': 0.0, 'timeout': 1.0,
            'watchdog_rate': 10.0})
        try:
            wait_for_log(proc, 'gravity compensation ->')

            def publish() -> None:
                msg = JointState(name=names, position=q0.tolist(),
                                 velocity=[0.0] * len(names))
                msg.header.stamp = probe.get_clock().now().to_msg()
                states.publish(msg)
            timer = probe.create_timer(0.02, publish)
            wait_until(lambda: commands, STARTUP_TIMEOUT, 'no command:\n' + read_log(proc))
            assert abs(commands[-1][shoulder] - tau[shoulder]) < 1e-9
            client = probe.create_client(SetParameters, '/gravity_compensation/set_parameters')
            assert client.wait_for_service(timeout_sec=STARTUP_TIMEOUT)

            def set_value(name: str, value: float):
                request = SetParameters.Request(parameters=[Parameter(name, value=value)
                                                            .to_parameter_msg()])
                future = client.call_async(request)
                wait_until(future.done, 30.0, 'no answer from set_parameters')
                return future.result().results[0]
            # outside the descriptor's range rclpy refuses it first, in its own words
            refused = set_value('effort_scale', 1.5)
            assert not refused.successful and 'effort_scale out of range' in refused.reason
            refused = set_value('effort_scale', 0.0)   # the open bound: the table's check
            assert not refused.successful and 'must be in (0, 1]' in refused.reason
            assert not set_value('timeout', 0.5).successful
            assert set_value('effort_scale', scale).successful
            count = len(commands)
            wait_until(lambda: len(commands) > count + 2, 30.0, 'no command after the set')
            assert abs(abs(commands[-1][shoulder]) - 0.5 * abs(tau[shoulder])) < 1e-9
            probe.destroy_timer(timer)
        finally:
            stop_node(proc)


def test_the_observer_refuses_stiction_without_the_friction_it_is_part_of():
    from manip_dynamics.ros.nodes.external_torque_observer import ExternalTorqueObserverNode
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        with pytest.raises(StartupError, match='parameter stiction needs subtract_friction'):
            ExternalTorqueObserverNode(context=context, parameter_overrides=[
                Parameter('stiction', value=True), Parameter('subtract_friction', value=False)])
    finally:
        rclpy.try_shutdown(context=context)
