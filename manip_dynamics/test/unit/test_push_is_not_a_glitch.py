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
A push is not a sensor glitch, in the library, without ROS.

A 15 N push swung cobot7's wrist past 1.5 x its velocity limit and the old gate, a fixed
multiple of the limit, rejected the real motion: the nodes stopped and the arm fell. The
gate now judges a sample by its neighbours. These tests feed it streams of the library's own
simulator (the physics is independent of the gate): pushes up to the simulator's push limit
and a free fall at zero torque are never rejected, while glitches injected into the same
streams never pass. The arms: cobot7 (the default), the gripper arm (prismatic fingers, a
light wrist) and the planar 2R arm. Not puma560: its wrist (joint 6, 4e-5 kg m^2 felt with
0.22 N m s/rad of damping and a Coulomb slope of 55 N m s/rad) is stiffer than the 1 kHz
step resolves, so the simulator's own samples chatter there (noted in docs/SIMULATOR.md).
"""

import numpy as np
import pytest

from manip_dynamics import RobotModel
from manip_dynamics.bundled import urdf_path
from manip_dynamics.control import ComputedTorqueController, GravityCompensator
from manip_dynamics.ros.launch_support.ros2_control_setup import default_initial_positions
from manip_dynamics.safety import JointStateGate
from manip_dynamics.safety.plausibility import DEFAULT_MAX_ACCELERATION
from manip_dynamics.simulation import (
    push_beyond_effort_limits, push_joint_torques, Simulator)

hypothesis = pytest.importorskip('hypothesis', reason='hypothesis not installed')
st = pytest.importorskip('hypothesis.strategies', reason='hypothesis not installed')

ARMS = ('cobot7', 'gripper_arm', 'planar_2r')
#: Longest time a real stream may wait for confirmation [s] (the gripper's fingers bouncing
#: between their stops 4 cm apart: 20 ms): below the 50 ms hold time, so a commanding node
#: goes on from the last good state and never reaches its hold command.
HELD_AT_MOST = 0.03


def load(arm):
    with open(urdf_path(arm)) as stream:
        xml = stream.read()
    model = RobotModel.from_urdf_string(xml)
    return model, default_initial_positions(model, xml)


@pytest.fixture(scope='module')
def arms():
    return {arm: load(arm) for arm in ARMS}


#: Largest wrench norm the push property draws [N, N m]: five times the story's 15 N and
#: more than the 99 % push at hold (about 112 N).
MAX_PUSH_WRENCH = 150.0


def moving_links(model):
    return [link for link in model.link_names if model.tree.links[link].body >= 0]


def run(model, q0, *, wrench=None, link=None, start=0.3, duration=1.0, seconds=2.5,
        controlled=True, every=1):
    """Simulate at 1 kHz and return the samples ``(t, q, qd)`` taken every ``every`` steps."""
    sim = Simulator(model, q0, dt=0.001, limits='spring', include_friction=True)
    ctl = ComputedTorqueController(model, 400.0, 40.0)
    samples = []
    for k in range(int(seconds * 1000)):
        t = 0.001 * k
        pushing = wrench is not None and start <= t < start + duration
        sim.set_external_wrenches({link: wrench} if pushing else None)
        sim.step(ctl.update(t, sim.q, sim.qd).tau if controlled else np.zeros(model.dof))
        if (k + 1) % every == 0:
            samples.append((sim.t, sim.q.copy(), sim.qd.copy()))
    return samples


def largest_push(model, q, link, direction, fraction=1.0):
    """Return the wrench along ``direction`` (link axes) at ``fraction`` of the push limit."""
    tau = push_joint_torques(model, q, link, direction)
    return np.asarray(direction) * fraction / np.max(np.abs(tau) / model.effort_limits)


def judge(model, samples):
    gate = JointStateGate(model)
    verdicts = [gate.check(t, q, qd, t) for t, q, qd in samples]
    return gate, verdicts


def longest_hold(verdicts):
    """Return the longest run of samples held back (suspects waiting for their neighbours)."""
    longest = run = 0
    for verdict in verdicts:
        run = 0 if verdict.ok else run + 1
        longest = max(longest, run)
    return longest


# ---------------------------------------------------------------- real motion passes
@pytest.mark.parametrize('arm', ARMS)
def test_a_free_fall_at_zero_torque_is_never_rejected(arms, arm):
    model, q0 = arms[arm]
    samples = run(model, q0, seconds=4.0, controlled=False)
    speed = max(np.max(np.abs(qd) / model.velocity_limits) for _, _, qd in samples)
    gate, verdicts = judge(model, samples)
    assert sum(gate.rejected.values()) == 0, gate.summary()
    # the falls hit the joint stops: a bounce waits for its neighbours, a few ms at most
    assert 0.001 * longest_hold(verdicts) <= HELD_AT_MOST, longest_hold(verdicts)
    if arm != 'planar_2r':   # its start pose hangs at rest under gravity
        assert speed > 1.5 and gate.overspeeds > 0   # the old gate's bound, now reported


@hypothesis.settings(max_examples=5, deadline=None,
                     suppress_health_check=list(hypothesis.HealthCheck))
@hypothesis.given(data=st.data())
@pytest.mark.parametrize('arm', ARMS)
@pytest.mark.parametrize('every', [1, 4])
def test_property_pushes_up_to_the_push_limit_are_never_rejected(arms, arm, every, data):
    """Any link, any direction, up to the simulator's push limit, held or free, 1 or 0.25 kHz."""
    model, q0 = arms[arm]
    links = moving_links(model)
    link = links[data.draw(st.integers(0, len(links) - 1), label='link')]
    direction = np.array(data.draw(st.lists(st.floats(-1.0, 1.0), min_size=6, max_size=6),
                                   label='direction'))
    hypothesis.assume(np.linalg.norm(direction) > 0.1)
    hypothesis.assume(np.max(np.abs(push_joint_torques(model, q0, link, direction))) > 1e-3)
    fraction = data.draw(st.floats(0.05, 0.999), label='fraction of the push limit')
    duration = data.draw(st.floats(0.1, 1.5), label='duration')
    # At 250 Hz only arms held by the controller: a free arm bouncing between its stops
    # under a torque push, sampled every 4 ms, gave one sample counted as a glitch and a
    # 40 ms hold (hypothesis found it: cobot7, link 3, 0.72 of the limit); it is never used
    # either way, but it is not "never rejected" (docs/ROS_API.md says so).
    controlled = data.draw(st.booleans(), label='held by computed torque') if every == 1 \
        else True
    wrench = largest_push(model, q0, link, direction, fraction)
    # The limit holds at the start pose only and the push turns with its link: a direction
    # that barely loads the joints there (hypothesis found a 3,400 N m moment on cobot7's
    # link 2 giving 43 N m on joint 1) loads them with hundreds of N m once the arm turns,
    # spinning joints at 400 rad/s through their stops. No person or collision pushes so:
    # the wrench is capped at MAX_PUSH_WRENCH (N, N m).
    wrench = wrench * min(1.0, MAX_PUSH_WRENCH / np.linalg.norm(wrench))
    assert not push_beyond_effort_limits(model, q0, {link: wrench})
    samples = run(model, q0, wrench=wrench, link=link, duration=duration,
                  seconds=duration + 1.0, controlled=controlled, every=every)
    gate, verdicts = judge(model, samples)
    assert sum(gate.rejected.values()) == 0, gate.summary()
    assert 0.001 * every * longest_hold(verdicts) <= HELD_AT_MOST, longest_hold(verdicts)


def test_a_free_light_arm_spun_by_a_moment_is_never_rejected(arms):
    """
    Half the push limit as a pure moment on gripper_arm's second link, the arm free.

    Hypothesis found it: joint 1 spins up at 4000 to 7000 rad/s^2 for 20 ms, beyond the gate's
    fixed 2000/s^2, and its samples were rejected; the gate's bound is now what the arm's own
    dynamics allow with torques and pushes up to the effort limits.
    """
    model, q0 = arms['gripper_arm']
    link = moving_links(model)[1]
    wrench = largest_push(model, q0, link, [0.0, 0.0, 0.0, 1.0, 0.0, 0.125], 0.5)
    samples = run(model, q0, wrench=wrench, link=link, duration=1.0, seconds=2.0,
                  controlled=False)
    accelerations = np.diff([qd for _, _, qd in samples], axis=0) / 0.001
    assert np.max(np.abs(accelerations)) > 2 * DEFAULT_MAX_ACCELERATION   # beyond the floor
    gate, verdicts = judge(model, samples)
    assert sum(gate.rejected.values()) == 0, gate.summary()
    assert 0.001 * longest_hold(verdicts) <= HELD_AT_MOST, longest_hold(verdicts)


def test_a_free_arm_bouncing_off_a_stop_is_never_rejected(arms):
    """
    Hypothesis found it: a free cobot7 pushed on link 5 (0.66 of the push limit, 0.97 s) hits
    joint 4's stop; one sample's velocity leaves its neighbours' range by 4 rad/s within 1 ms,
    more than the effort limits allow, and was counted a glitch. A stop's reaction is bounded
    by no effort limit: such a sample waits (it is never used) but is not a glitch.
    """
    model, q0 = arms['cobot7']
    link = moving_links(model)[4]
    direction = [0.4588941262311963, 0.721943825956036, 0.5809348985424112,
                 -0.6363029123491284, -0.1483227200862689, 0.0]
    wrench = largest_push(model, q0, link, direction, 0.6566003264519765)
    wrench = wrench * min(1.0, MAX_PUSH_WRENCH / np.linalg.norm(wrench))
    samples = run(model, q0, wrench=wrench, link=link, duration=0.96875, seconds=1.96875,
                  controlled=False)
    upper = np.asarray(model.position_upper)
    assert any(q[3] > upper[3] for _, q, _ in samples)   # joint 4 is pushed past its stop
    gate, verdicts = judge(model, samples)
    assert gate.suspects > 0   # the bounces wait for their neighbours
    assert sum(gate.rejected.values()) == 0, gate.summary()
    assert 0.001 * longest_hold(verdicts) <= HELD_AT_MOST, longest_hold(verdicts)


def test_a_push_beyond_the_effort_limits_is_named(arms):
    model, q0 = arms['cobot7']
    wrench = largest_push(model, q0, 'tool0', [0.0, 1.0, 0.0, 0.0, 0.0, 0.0], 1.2)
    message = push_beyond_effort_limits(model, q0, {'tool0': wrench})
    assert 'beyond its effort limit' in message and 'cobot7_joint' in message


def test_push_joint_torques_are_the_virtual_work_of_the_wrench(arms):
    """tau_i = f . dp/dq_i + m . omega_i: finite differences of link_transform, not ID."""
    model, q0 = arms['cobot7']
    q = q0 + np.array([0.1, -0.2, 0.3, 0.2, -0.1, 0.2, 0.4])
    wrench = np.array([3.0, -2.0, 5.0, 0.4, -0.3, 0.2])   # link axes, about its origin
    pose = model.link_transform(q, 'tool0')
    force, moment = pose[:3, :3] @ wrench[:3], pose[:3, :3] @ wrench[3:]
    expected = np.zeros(model.dof)
    eps = 1e-6
    for i in range(model.dof):
        dq = np.zeros(model.dof)
        dq[i] = eps
        ahead = model.link_transform(q + dq, 'tool0')
        dp = (ahead[:3, 3] - pose[:3, 3]) / eps
        skew = (ahead[:3, :3] @ pose[:3, :3].T - np.eye(3)) / eps
        omega = np.array([skew[2, 1], skew[0, 2], skew[1, 0]])
        expected[i] = force @ dp + moment @ omega
    np.testing.assert_allclose(push_joint_torques(model, q, 'tool0', wrench), expected,
                               rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------- glitches still fail
@hypothesis.settings(max_examples=40, deadline=None,
                     suppress_health_check=list(hypothesis.HealthCheck))
@hypothesis.given(data=st.data())
def test_property_glitches_injected_into_a_pushed_stream_never_pass(arms, data):
    """
    Velocity spikes the positions do not show, position jumps the velocities do not explain,
    NaN, values beyond any physical bound, each once or twice in a row: never accepted, each
    counted as rejected, and the stream goes on right after it.
    """
    model, q0 = arms['cobot7']
    samples = pushed_stream(model, q0)
    start = data.draw(st.integers(5, len(samples) - 40), label='where')
    kind = data.draw(st.sampled_from(['velocity', 'position', 'nan', 'huge']), label='kind')
    joint = data.draw(st.integers(0, model.dof - 1), label='joint')
    size = data.draw(st.floats(0.0, 1.0), label='size')
    twice = data.draw(st.booleans(), label='twice')
    sign = data.draw(st.sampled_from([-1.0, 1.0]), label='sign')
    gate = JointStateGate(model)
    glitched = {start, start + 1} if twice else {start}
    for k, (t, q, qd) in enumerate(samples[:start + 20]):
        q, qd = q.copy(), qd.copy()
        if k in glitched:
            if kind == 'velocity':       # 20 to 1000 rad/s on top of the real one
                qd[joint] += sign * (20.0 + 980.0 * size)
            elif kind == 'position':     # 0.05 to 1 rad (m) away
                q[joint] += sign * (0.05 + 0.95 * size)
            elif kind == 'nan':
                qd[joint] = np.nan
            else:
                qd[joint] = sign * 1e6 * (1.0 + size)
        verdict = gate.check(t, q, qd, t)
        if k in glitched:
            assert not verdict.ok, (kind, verdict)
        else:   # the real samples around the glitch pass, the first one after it too
            assert verdict.ok, (k, verdict.message)
    assert sum(gate.rejected.values()) == len(glitched), gate.summary()


@pytest.mark.parametrize('joint, size', [(1, -1000.0), (1, 1000.0), (6, -20.0), (6, 20.0)])
@pytest.mark.parametrize('start', [5, 210, 700])
def test_a_velocity_glitch_twice_in_a_row_does_not_excuse_itself(arms, joint, size, start):
    """
    A velocity the positions never show, in two samples in a row: both rejected and counted.

    The examples hypothesis found against the first dynamic bound: -1000 rad/s on cobot7's
    joint 2 raised the bound through its own Coriolis terms; 20 rad/s on the wrist hid in the
    trapezoid rule's loose error bound. The positions of the glitched samples are the real
    ones: a joint that went from rest to |size| and back moves ``|size| dt / 2`` at least.
    """
    model, q0 = arms['cobot7']
    samples = pushed_stream(model, q0)
    gate = JointStateGate(model)
    for k, (t, q, qd) in enumerate(samples[:start + 10]):
        qd = qd.copy()
        if k in (start, start + 1):
            qd[joint] += size
        verdict = gate.check(t, q, qd, t)
        assert verdict.ok == (k not in (start, start + 1)), (k, verdict.message)
    assert sum(gate.rejected.values()) == 2, gate.summary()


_STREAMS = {}


def pushed_stream(model, q0):
    """The cobot7 stream of the glitch test: held, pushed along y at 30 % of the limit."""
    if 'cobot7' not in _STREAMS:
        wrench = largest_push(model, q0, 'tool0', [0.0, 1.0, 0.0, 0.0, 0.0, 0.0], 0.3)
        _STREAMS['cobot7'] = run(model, q0, wrench=wrench, link='tool0', seconds=1.5,
                                 start=0.2, duration=0.8)
    return _STREAMS['cobot7']


# ---------------------------------------------------------------- overspeed is an event
def test_overspeed_is_reported_and_commanded_not_rejected(arms):
    model, q0 = arms['cobot7']
    comp = GravityCompensator(model, list(range(model.dof)), ramp_time=0.0, timeout=0.1)
    qd = np.zeros(model.dof)
    comp.update(0.0, q0, qd, 0.0)
    qd[4] = 1.6 * model.velocity_limits[4]   # the wrist at 1.6 x its limit, consistently
    q = q0.copy()
    for k in range(1, 4):
        q = q + 0.001 * qd
        step = comp.update(0.001 * k, q, qd, 0.001 * k)
        assert step.event == '' and step.command is not None
        assert "'cobot7_joint5'" in step.overspeed and '1.60 x' in step.overspeed
        np.testing.assert_allclose(step.command, model.gravity_torques(q), atol=1e-12)


@pytest.mark.parametrize('clock', ['back to zero', 'on'])
def test_a_reset_to_a_braked_pose_is_taken_after_three_samples(arms, clock):
    """A simulator reset teleports the arm and brakes it: equal samples at a new pose."""
    model, q0 = arms['cobot7']
    gate = JointStateGate(model)
    moving = run(model, q0, wrench=largest_push(model, q0, 'tool0', [0, 1.0, 0, 0, 0, 0], 0.3),
                 link='tool0', seconds=0.5, start=0.1)
    for t, q, qd in moving:
        assert gate.check(t, q, qd, t).ok
    t_end = moving[-1][0]
    verdicts = []
    for k in range(1, 6):
        t = 0.001 * k if clock == 'back to zero' else t_end + 0.001 * k
        verdicts.append(gate.check(t, q0.copy(), np.zeros(model.dof), t))
    assert [v.ok for v in verdicts] == [False, False, True, True, True]
    assert verdicts[2].confirmed and sum(gate.rejected.values()) == 0
    np.testing.assert_array_equal(gate.last_q, q0)
