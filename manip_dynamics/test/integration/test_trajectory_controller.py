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
trajectory_controller driving simulator_node over real DDS.

The controller holds the start pose (releasing the simulator's brakes), follows an untimed
trajectory (retimed) to its end, refuses one that would jump, stops on a contact message and
holds, resumes on ``~/resume``, and stops with a zero command when joint_states go stale.
Expected values: the trajectory's points and the simulator's own start pose.
"""

import time

import numpy as np
import pytest
from ros_test_support import (read_log, require_interfaces, require_rclpy,
                              send_until_logged, spun_node, STARTUP_TIMEOUT, wait_until)

rclpy = require_rclpy()
srv = require_interfaces()

from sensor_msgs.msg import JointState  # noqa: E402, I100
from std_srvs.srv import SetBool, Trigger  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

from manip_dynamics.bundled import urdf_path  # noqa: E402
from manip_dynamics.ros.runtime.node_process import start_node, stop_node  # noqa: E402
from manip_dynamics_interfaces.msg import Contact  # noqa: E402

#: action_msgs/GoalStatus codes of a finished goal.
STATUS_SUCCEEDED, STATUS_CANCELED, STATUS_ABORTED = 4, 5, 6

pytestmark = [pytest.mark.rostest, pytest.mark.slow, pytest.mark.realtime]

NAMES = ['cobot7_joint%d' % i for i in range(1, 8)]
MOVE = np.array([0.5, 0.3, -0.2, 0.4, 0.3, -0.3, 0.2])


@pytest.fixture(scope='module')
def graph():
    """Start a simulator and a trajectory controller on private topics; yield a probe."""
    with open(urdf_path('cobot7'), encoding='utf-8') as stream:
        xml = stream.read()
    remap = ('/joint_states:=/tc/joint_states',)
    sim = start_node('simulator_node', 'tc_sim', {
        'robot_description': xml, 'controller_name': 'tc_effort', 'brakes': True,
        'command_timeout': 0.5, 'publish_clock': False,
        'joint_commands_topic': '/tc_sim/joint_commands'}, remaps=remap)
    ctl = start_node('trajectory_controller', 'tc_ctrl', {
        'robot_description': xml, 'controller_name': 'tc_effort', 'timeout': 0.5,
        'acceleration_limits': [2.0], 'observer_namespace': '/tc_obs',
        'max_tracking_error': 0.1}, remaps=remap)
    try:
        with spun_node('tc_probe') as node:
            states = []
            node.create_subscription(JointState, '/tc/joint_states',
                                     lambda m: states.append((time.monotonic(),
                                                              np.array(m.position))), 100)
            node.traj_pub = node.create_publisher(JointTrajectory,
                                                  '/tc_ctrl/joint_trajectory', 10)
            node.contact_pub = node.create_publisher(Contact, '/tc_obs/contact', 10)
            node.states = states
            node.procs = {'sim': sim, 'ctl': ctl}
            wait_until(lambda: 'brakes released' in read_log(sim), STARTUP_TIMEOUT,
                       'the controller never released the brakes:\n' + read_log(ctl))
            wait_until(lambda: node.traj_pub.get_subscription_count() > 0, 30.0,
                       'no trajectory subscription')
            wait_until(lambda: len(states) > 10, 30.0, 'no joint_states')
            yield node
    finally:
        stop_node(ctl)
        stop_node(sim)


def pose(graph) -> np.ndarray:
    """Return the newest simulated pose."""
    return graph.states[-1][1]


def untimed(positions) -> JointTrajectory:
    """Return a JointTrajectory of positions without timing."""
    msg = JointTrajectory(joint_names=NAMES)
    for row in positions:
        msg.points.append(JointTrajectoryPoint(positions=[float(v) for v in row]))
    return msg


def send_move(graph, msg, text: str) -> None:
    """Send a trajectory until ``text`` is logged, again only when it was lost (3 s)."""
    send_until_logged(graph.procs['ctl'], graph.traj_pub, msg, text, timeout=20.0,
                      period=3.0)


def test_holds_then_follows_an_untimed_trajectory(graph):
    start = pose(graph).copy()
    time.sleep(1.0)
    np.testing.assert_allclose(pose(graph), start, atol=2e-3)  # held still
    goal = start + MOVE
    send_move(graph, untimed([start, goal]), 'following a retimed trajectory')
    wait_until(lambda: 'trajectory finished' in read_log(graph.procs['ctl']), 30.0,
               'no end:\n' + read_log(graph.procs['ctl']))
    time.sleep(0.5)
    np.testing.assert_allclose(pose(graph), goal, atol=3e-3)


def test_a_trajectory_that_would_jump_is_refused(graph):
    here = pose(graph).copy()
    msg = JointTrajectory(joint_names=NAMES)
    msg.points.append(JointTrajectoryPoint(positions=list(here + 0.3)))
    msg.points.append(JointTrajectoryPoint(positions=list(here + 0.4)))
    msg.points[1].time_from_start.sec = 2
    send_move(graph, msg, 'trajectory refused')
    assert 'it would jump' in read_log(graph.procs['ctl'])
    time.sleep(0.5)
    np.testing.assert_allclose(pose(graph), here, atol=3e-3)


def test_contact_stops_and_resume_continues(graph):
    here = pose(graph).copy()
    goal = here - MOVE
    send_move(graph, untimed([here, goal]), 'following a retimed trajectory')
    time.sleep(0.3)  # moving
    contact = Contact(joint_names=NAMES, joint_contact=[False] * 7,
                      normalized_residual=[0.0] * 7, strongest_joint=NAMES[1],
                      strongest_normalized_residual=5.0, contact=True)
    proc = graph.procs['ctl']
    sent = time.monotonic()
    before = read_log(proc).count('reaction hold')
    while read_log(proc).count('reaction hold') == before:
        graph.contact_pub.publish(contact)
        time.sleep(0.02)
        assert time.monotonic() - sent < 10.0, read_log(proc)
    time.sleep(0.5)  # it brakes to the pose of the reaction (moving at about 1 rad/s)
    stopped = pose(graph).copy()
    time.sleep(1.0)
    assert np.max(np.abs(pose(graph) - stopped)) < 1e-2, 'the arm kept moving after contact'
    assert np.max(np.abs(stopped - goal)) > 0.05, 'it had already arrived'
    with spun_node('tc_resume') as node:
        client = node.create_client(Trigger, '/tc_ctrl/resume')
        assert client.wait_for_service(timeout_sec=30.0)
        future = client.call_async(Trigger.Request())
        wait_until(future.done, 30.0, 'no answer')
    assert future.result().success, future.result().message
    assert 'resumed at' in future.result().message
    wait_until(lambda: np.max(np.abs(pose(graph) - goal)) < 3e-3, 30.0,
               'did not reach the goal after resume:\n' + read_log(proc))


def test_an_old_contact_message_is_ignored(graph):
    """A contact stamped 1 s before the newest joint state does not stop a move."""
    here = pose(graph).copy()
    goal = here + 0.5 * MOVE
    proc = graph.procs['ctl']
    with spun_node('tc_old_contact') as node:
        stamps = []
        node.create_subscription(JointState, '/tc/joint_states',
                                 lambda m: stamps.append(m.header.stamp), 10)
        wait_until(lambda: stamps, 10.0, 'no joint_states')
        reactions = read_log(proc).count('reaction hold')
        send_move(graph, untimed([here, goal]), 'following a retimed trajectory')
        time.sleep(0.2)  # moving
        old = Contact(joint_names=NAMES, joint_contact=[False] * 7,
                      normalized_residual=[0.0] * 7, strongest_joint=NAMES[1],
                      strongest_normalized_residual=5.0, contact=True)
        old.header.stamp.sec = stamps[-1].sec - 1
        old.header.stamp.nanosec = stamps[-1].nanosec
        send_until_logged(proc, graph.contact_pub, old, 'ignoring a contact message',
                          timeout=10.0, period=0.05)
    wait_until(lambda: np.max(np.abs(pose(graph) - goal)) < 3e-3, 30.0,
               'the old contact stopped the move:\n' + read_log(proc))
    assert read_log(proc).count('reaction hold') == reactions


def test_stale_joint_states_stop_with_one_hold_command(graph):
    """Stale input ends with gravity at the last good pose (stale_action hold)."""
    from std_msgs.msg import Float64MultiArray
    from manip_dynamics import RobotModel
    proc = graph.procs['ctl']
    with open(urdf_path('cobot7'), encoding='utf-8') as stream:
        model = RobotModel.from_urdf_string(stream.read())
    with spun_node('tc_pause') as node:
        commands = []
        node.create_subscription(Float64MultiArray, '/tc_effort/commands',
                                 lambda m: commands.append(np.array(m.data)), 100)
        client = node.create_client(SetBool, '/tc_sim/pause')
        assert client.wait_for_service(timeout_sec=30.0)
        # the subscription matched (the controller commands at every state) before the
        # pause: its one hold command must not go out before this node hears the topic
        wait_until(lambda: commands, 30.0, 'the controller is not commanding')
        future = client.call_async(SetBool.Request(data=True))
        wait_until(future.done, 30.0, 'no answer')
        wait_until(lambda: 'sent one hold (gravity at the last good pose) command'
                   in read_log(proc), 10.0, 'no stop on stale joint_states:\n' + read_log(proc))
        time.sleep(0.3)
        np.testing.assert_allclose(commands[-1], model.gravity_torques(pose(graph)),
                                   rtol=0, atol=1e-9)
        future = client.call_async(SetBool.Request(data=False))
        wait_until(future.done, 30.0, 'no answer')
    wait_until(lambda: 'joint_states are back: holding' in read_log(proc), 10.0,
               read_log(proc))


def test_follow_joint_trajectory_action(graph):
    """MoveIt's interface as JTC answers it: success, refusal, preemption, cancel."""
    action = pytest.importorskip(
        'control_msgs.action', reason='control_msgs is not built (scripts/build.sh builds '
        'test_support/control_msgs where no ROS 2 install provides it)')
    from rclpy.action import ActionClient
    Result = action.FollowJointTrajectory.Result
    here = pose(graph).copy()
    goal_pose = here + 0.5 * MOVE
    with spun_node('tc_action') as node:
        client = ActionClient(node, action.FollowJointTrajectory,
                              '/tc_ctrl/follow_joint_trajectory')
        assert client.wait_for_server(timeout_sec=30.0), 'no action server'

        def send(points, times):
            goal = action.FollowJointTrajectory.Goal()
            goal.trajectory.joint_names = NAMES
            for p, t in zip(points, times):
                point = JointTrajectoryPoint(positions=[float(v) for v in p])
                point.time_from_start.sec = int(t)
                point.time_from_start.nanosec = int(round((t - int(t)) * 1e9))
                goal.trajectory.points.append(point)
            sent = client.send_goal_async(goal)
            wait_until(sent.done, 30.0, 'goal not answered')
            return sent.result()

        def result_of(handle):
            result = handle.get_result_async()
            wait_until(result.done, 60.0, 'no result')
            return result.result().status, result.result().result
        # first point after t = 0: from the current pose; SUCCEEDED at the end
        status, answer = result_of(send([goal_pose], [2.0]))
        assert (status, answer.error_code) == (STATUS_SUCCEEDED, Result.SUCCESSFUL), \
            answer.error_string
        np.testing.assert_allclose(pose(graph), goal_pose, atol=3e-3)
        # a first point at t = 0 away from the pose: refused when it arrives, never run
        assert not send([goal_pose + 0.3, goal_pose], [0.0, 1.0]).accepted
        # a new goal preempts the running one: ABORTED with JTC's INVALID_GOAL
        first = send([here], [2.0])
        time.sleep(0.3)
        second = send([goal_pose], [1.0])
        status, answer = result_of(first)
        assert (status, answer.error_code) == (STATUS_ABORTED, Result.INVALID_GOAL)
        assert 'preempted' in answer.error_string
        status, _ = result_of(second)
        assert status == STATUS_SUCCEEDED
        # a cancel: CANCELED (not SUCCEEDED), and the pose where it stopped is held
        moving = send([here], [2.0])
        time.sleep(0.6)
        future = moving.cancel_goal_async()
        wait_until(future.done, 10.0, 'cancel not answered')
        status, _ = result_of(moving)
        assert status == STATUS_CANCELED
        stopped = pose(graph).copy()
        time.sleep(1.0)
        # held, not falling (a fall moves 0.1 rad and more in 1 s) and not going on to here
        assert np.abs(pose(graph) - stopped).max() < 0.02
        assert np.abs(stopped - here).max() > 0.05
