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
What reaches an arm stays safe under glitches, in the library, without ROS.

Each test names the item of the issue it covers; each failed before the fix (the
plausibility gate, the compensator and the gated observer did not exist; the library calls
returned inf/NaN or raised the wrong type). The property tests feed random glitch sequences
to the compensation and the observer.
"""

import math

import numpy as np
import pytest

from manip_dynamics import InputError, RobotModel, URDFError
from manip_dynamics.bundled import urdf_path
from manip_dynamics.control import GravityCompensator
from manip_dynamics.identification.payload import estimate_payload
from manip_dynamics.identification.payload_window import JointStateWindow
from manip_dynamics.model import precheck_urdf
from manip_dynamics.observers import GatedObserver, MomentumObserver
from manip_dynamics.safety import bounded_friction, JointStateGate
from manip_dynamics.simulation import Simulator

hypothesis = pytest.importorskip('hypothesis', reason='hypothesis not installed')
st = pytest.importorskip('hypothesis.strategies', reason='hypothesis not installed')


@pytest.fixture(scope='module')
def cobot():
    return RobotModel.from_urdf_file(urdf_path('cobot7'))


@pytest.fixture(scope='module')
def cobot_friction(cobot):
    return cobot.with_joint_dynamics(damping=dict.fromkeys(cobot.joint_names, 2.0),
                                     friction=dict.fromkeys(cobot.joint_names, 1.5))


def home(model):
    return 0.5 * (model.position_lower + model.position_upper)


# ---------------------------------------------------------------- item 1: friction glitch
def test_velocity_glitch_never_commands_full_effort_with_friction(cobot_friction):
    """Item 1: one 1e6 rad/s sample used to command every joint at its effort limit."""
    model = cobot_friction
    comp = GravityCompensator(model, list(range(model.dof)), include_friction=True,
                              ramp_time=0.0)
    q = home(model)
    good = comp.update(0.0, q, np.zeros(model.dof))
    glitch = comp.update(0.001, q, np.full(model.dof, 1e6))
    assert glitch.event == 'glitch' and 'velocity' in glitch.message
    # the glitch is answered with the last good command, not with the glitch's friction
    np.testing.assert_array_equal(glitch.command, good.command)
    assert np.all(np.abs(glitch.command) < 0.9 * model.effort_limits)


def test_bounded_friction_never_exceeds_the_friction_at_the_velocity_limit(cobot_friction):
    model = cobot_friction
    at_limit = model.friction_torques(model.velocity_limits)
    for qd in (np.full(model.dof, 1e6), np.full(model.dof, 1e300), -model.velocity_limits * 7):
        out = bounded_friction(model, qd)
        assert np.all(np.abs(out) <= np.abs(at_limit) + 1e-12)
    # below the limit it is the model's friction, exactly
    slow = 0.3 * model.velocity_limits
    np.testing.assert_array_equal(bounded_friction(model, slow), model.friction_torques(slow))


def test_glitches_hold_the_last_command_then_gravity_at_the_last_good_pose(cobot):
    """A stream of glitches holds the arm (gravity at the last good pose), never zero."""
    comp = GravityCompensator(cobot, list(range(cobot.dof)), ramp_time=0.0, timeout=0.1)
    q = home(cobot)
    first = comp.update(0.0, q, np.zeros(cobot.dof))
    assert first.event == 'started'
    far = q.copy()
    far[2] = cobot.position_upper[2] + 4.5   # item 6: 4.5 rad outside the limits
    held = comp.update(0.02, far, np.zeros(cobot.dof))
    assert held.event == 'glitch' and 'position' in held.message
    np.testing.assert_array_equal(held.command, first.command)
    hold = comp.update(0.02 + comp.gate.hold_time + 1e-3, far, np.zeros(cobot.dof))
    assert hold.event == 'holding_glitch' and 'holding gravity' in hold.message
    np.testing.assert_allclose(hold.command, cobot.gravity_torques(q), rtol=0, atol=1e-12)
    assert comp.active   # still commanding: a stream of rejected samples is not stale
    again = comp.update(0.2, far, np.zeros(cobot.dof))
    assert again.event == 'glitch'
    np.testing.assert_array_equal(again.command, hold.command)
    assert comp.watchdog(0.2 + 0.05).command is None   # samples keep coming: not stale
    back = comp.update(0.3, q, np.zeros(cobot.dof))
    assert back.event == 'recovered'
    np.testing.assert_allclose(back.command, cobot.gravity_torques(q), rtol=0, atol=1e-12)


def test_position_1e300_is_rejected_not_compensated(cobot):
    """Item 6: 1e300 used to be compensated without a warning."""
    gate = JointStateGate(cobot)
    q = home(cobot)
    q[0] = 1e300
    verdict = gate.check(0.0, q, None)
    assert not verdict.ok and verdict.kind == 'position'
    assert repr(cobot.joint_names[0]) in verdict.message


def test_gate_on_a_continuous_joint_uses_absolute_bounds():
    xml = ('<robot name="c"><link name="base"/><link name="l1"><inertial><mass value="1"/>'
           '<origin xyz="0.1 0 0"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" '
           'izz="0.01"/></inertial></link><joint name="j" type="continuous"><parent '
           'link="base"/><child link="l1"/><axis xyz="0 1 0"/><limit effort="5" '
           'velocity="1"/></joint></robot>')
    model = RobotModel.from_urdf_string(xml)
    gate = JointStateGate(model)
    assert gate.check(0.0, np.array([123.0]), np.array([1.4])).ok   # many turns: fine
    assert not gate.check(0.0, np.array([1e6]), None).ok
    # 1.6 x its 1 rad/s limit is overspeed, reported, not a glitch; a value no
    # real motion reaches is
    fast = gate.check(0.001, np.array([123.0016]), np.array([1.6]))
    assert fast.ok and 'velocity limit' in fast.overspeed
    assert not gate.check(0.002, np.array([123.0]), np.array([2e3])).ok


# ---------------------------------------------------------------- item 2: ranges
@pytest.mark.parametrize('kwargs, word', [
    ({'timeout': 1e-6}, 'timeout'), ({'timeout': 100.0}, 'timeout'),
    ({'ramp_time': -1.0}, 'ramp_time'), ({'effort_scale': 0.0}, 'effort_scale'),
    ({'effort_scale': math.nan}, 'effort_scale')])
def test_compensator_settings_out_of_range_are_refused(cobot, kwargs, word):
    with pytest.raises(InputError, match=word):
        GravityCompensator(cobot, [0], **kwargs)


def test_the_watchdog_range_serves_the_timeout():
    from manip_dynamics.control.gravity_compensation import watchdog_rate_range
    valid = watchdog_rate_range(0.1)
    assert not valid.contains(1e-6) and not valid.contains(0.2)   # item 2's values
    assert valid.contains(20.0) and valid.contains(50.0)
    assert 1.0 / valid.low <= 0.5 * 0.1   # the check runs at least twice per timeout


@pytest.mark.parametrize('action', ['zero', 'hold'])
def test_stale_input_stops_within_the_timeout(cobot, action):
    comp = GravityCompensator(cobot, [0, 1], ramp_time=0.0, timeout=0.1, stale_action=action)
    comp.update(0.0, home(cobot), np.zeros(cobot.dof))
    assert comp.watchdog(0.09).command is None
    step = comp.watchdog(0.101)
    assert step.event == ('stopped_stale' if action == 'zero' else 'holding_stale')
    expected = [0.0, 0.0] if action == 'zero' else cobot.gravity_torques(home(cobot))[:2]
    np.testing.assert_allclose(step.command, expected, rtol=0, atol=1e-12)
    assert comp.watchdog(0.2).command is None   # one command, not a stream
    assert not comp.active


def test_stale_action_is_checked(cobot):
    with pytest.raises(InputError, match='stale_action'):
        GravityCompensator(cobot, [0], stale_action='drop')


def test_after_a_stale_hold_the_ramp_goes_on_from_the_held_command(cobot):
    """A held arm must not be dropped to zero and ramped in again when samples return."""
    comp = GravityCompensator(cobot, list(range(cobot.dof)), ramp_time=2.0, timeout=0.1)
    q = home(cobot)
    comp.update(0.0, q, np.zeros(cobot.dof))
    full = comp.update(2.5, q, np.zeros(cobot.dof))   # ramped in
    np.testing.assert_allclose(full.command, cobot.gravity_torques(q), atol=1e-12)
    held = comp.watchdog(2.7)
    np.testing.assert_allclose(held.command, full.command, atol=1e-12)
    back = comp.update(3.0, q, np.zeros(cobot.dof))
    assert back.event == 'resumed'
    np.testing.assert_allclose(back.command, full.command, atol=1e-12)


# ---------------------------------------------------------------- item 4: observer blinded
@pytest.mark.parametrize('glitch', [1e308, 1e200])
def test_observer_restarts_on_a_glitch_instead_of_blinding_itself(cobot, glitch):
    model = cobot
    limits = model.effort_limits
    gated = GatedObserver(MomentumObserver(model, 50.0), JointStateGate(model), limits)
    q = home(model)
    tau = model.gravity_torques(q)
    assert gated.update(0.001, 0.001, q, np.full(model.dof, glitch), tau) is None
    assert gated.rejection_kind == 'velocity'
    outputs = [gated.update(0.001 * k, 0.001 * k, q, np.zeros(model.dof), tau)
               for k in range(2, 50)]
    assert all(r is not None and np.all(np.isfinite(r)) for r in outputs)
    assert max(float(np.max(np.abs(r))) for r in outputs) < 1e-6   # no contact at rest


def test_momentum_observer_refuses_an_overflowing_first_sample(cobot):
    """Item 11: velocity 1e308 on the first sample gave -inf, then NaN for ever."""
    obs = MomentumObserver(cobot, 50.0)
    q = home(cobot)
    with pytest.raises(InputError, match='overflow'):
        obs.update(0.0, q, np.full(cobot.dof, 1e308), np.zeros(cobot.dof))
    assert obs.time is None
    tau = cobot.gravity_torques(q)
    obs.update(0.001, q, np.zeros(cobot.dof), tau)
    r = obs.update(0.002, q, np.zeros(cobot.dof), tau)
    assert np.all(np.isfinite(r)) and np.max(np.abs(r)) < 1e-9


def test_gated_observer_output_is_clipped_to_the_effort_limits(cobot):
    gated = GatedObserver(MomentumObserver(cobot, 1000.0), JointStateGate(cobot),
                          cobot.effort_limits)
    q = home(cobot)
    gated.update(0.0, 0.0, q, np.zeros(cobot.dof), np.zeros(cobot.dof))
    # a huge applied torque the model does not explain: r beyond the limits
    r = gated.update(0.001, 0.001, q, np.zeros(cobot.dof), np.full(cobot.dof, 1e6))
    assert gated.saturated
    assert np.all(np.abs(r) <= cobot.effort_limits)


# ---------------------------------------------------------------- item 5: huge descriptions
def big_chain(links: int) -> str:
    parts = ['<robot name="big"><link name="l0"/>']
    for i in range(1, links):
        parts.append('<link name="l%d"><inertial><mass value="1"/><inertia ixx="0.01" ixy="0" '
                     'ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link><joint name="j%d" '
                     'type="revolute"><parent link="l%d"/><child link="l%d"/><axis xyz="0 0 1"/>'
                     '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint>'
                     % (i, i, i - 1, i))
    parts.append('</robot>')
    return ''.join(parts)


def test_precheck_refuses_a_huge_description_before_building_it():
    import time
    xml = big_chain(5000)
    start = time.perf_counter()
    with pytest.raises(URDFError, match='5000 links, more than the 1000'):
        precheck_urdf(xml)
    assert time.perf_counter() - start < 2.0   # a parse, not a 4.4 s build (loose bound)
    with pytest.raises(URDFError, match='bytes'):
        precheck_urdf(xml, max_bytes=10000)
    assert precheck_urdf(big_chain(10)) == 10


# ---------------------------------------------------------------- item 8: bounded window
def test_payload_window_is_bounded_whatever_the_stamps():
    window = JointStateWindow(max_seconds=60.0, max_samples=500)
    z = np.zeros(3)
    for _ in range(5000):
        window.add(1.0, z, z, z)   # a driver that does not stamp: constant time
    assert len(window) == 500


# ---------------------------------------------------------------- item 10: limits
def one_joint(kind: str, limit: str) -> str:
    return ('<robot name="r"><link name="base"/><link name="l1"><inertial><mass value="1"/>'
            '<origin xyz="0.1 0 0"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" '
            'izz="0.01"/></inertial></link><joint name="j1" type="%s"><parent link="base"/>'
            '<child link="l1"/><axis xyz="0 1 0"/>%s</joint></robot>' % (kind, limit))


@pytest.mark.parametrize('kind', ['revolute', 'prismatic'])
def test_joint_without_limit_loads_with_a_warning_and_strict_refuses(kind):
    model = RobotModel.from_urdf_string(one_joint(kind, ''))
    assert any("joint 'j1'" in w and 'without <limit>' in w for w in model.warnings)
    with pytest.raises(URDFError, match='strict'):
        RobotModel.from_urdf_string(one_joint(kind, ''), strict=True)
    # a node that sends efforts refuses it unless the limits are given
    with pytest.raises(InputError, match=r"\['j1'\] have no effort limit"):
        GravityCompensator(model, [0])
    comp = GravityCompensator(model, [0], effort_limits=[3.0], ramp_time=0.0)
    step = comp.update(0.0, np.array([0.0]), None)
    assert abs(step.command[0]) <= 3.0


def test_equal_lower_and_upper_limits_are_limits_not_unlimited():
    model = RobotModel.from_urdf_string(one_joint(
        'revolute', '<limit lower="0.3" upper="0.3" effort="5" velocity="1"/>'))
    assert model.position_lower[0] == model.position_upper[0] == 0.3
    assert any('both 0.3' in w for w in model.warnings)
    gate = JointStateGate(model)
    assert gate.check(0.0, np.array([0.3]), None).ok
    assert not gate.check(0.0, np.array([1.0]), None).ok


# ---------------------------------------------------------------- item 11: silent inf/NaN
def test_inverse_dynamics_overflow_with_armature_is_an_error(cobot):
    model = cobot.with_joint_dynamics(armature=dict.fromkeys(cobot.joint_names, 1e10))
    q = home(cobot)
    with pytest.raises(InputError, match='overflow.*qdd'):
        model.inverse_dynamics(q, np.zeros(7), np.full(7, 1e299), include_armature=True)


def test_inverse_dynamics_overflow_with_friction_is_an_error(cobot):
    model = cobot.with_joint_dynamics(damping=dict.fromkeys(cobot.joint_names, 1e200))
    with pytest.raises(InputError, match='overflow'):
        model.inverse_dynamics(home(cobot), np.full(7, 1e150), np.zeros(7),
                               include_friction=True)


def test_regressor_overflow_is_an_error(cobot):
    with pytest.raises(InputError, match='overflow.*qd'):
        cobot.regressor(home(cobot), np.full(7, 1e200), np.zeros(7))


def test_estimate_payload_refuses_nan_complex_and_empty(cobot):
    q = np.tile(home(cobot), (4, 1))
    tau = cobot.gravity_torques(q)
    bad = tau.copy()
    bad[1, 2] = np.nan
    with pytest.raises(InputError, match='tau of joint 2 in sample 1'):
        estimate_payload(cobot, cobot.link_names[-1], q, bad)
    bad[1, 2] = np.inf
    with pytest.raises(InputError, match='tau'):
        estimate_payload(cobot, cobot.link_names[-1], q, bad)
    with pytest.raises(InputError, match='complex'):
        estimate_payload(cobot, cobot.link_names[-1], q.astype(complex), tau)
    with pytest.raises(InputError, match='no samples'):
        estimate_payload(cobot, cobot.link_names[-1], np.zeros((0, 7)), np.zeros((0, 7)))


# ---------------------------------------------------------------- item 12: clear errors
def test_from_urdf_file_none_is_a_clear_error():
    with pytest.raises(URDFError, match='path must be a string'):
        RobotModel.from_urdf_file(None)


def test_external_wrenches_as_an_array_is_a_clear_error(cobot):
    z = np.zeros(7)
    for call in (lambda: cobot.inverse_dynamics(z, z, z, external_wrenches=np.ones(6)),
                 lambda: cobot.forward_dynamics(z, z, z, external_wrenches=np.ones(6))):
        with pytest.raises(InputError, match='must map link names'):
            call()


def test_cartesian_dynamics_batch_and_nan_threshold(cobot):
    tip = cobot.link_names[-1]
    with pytest.raises(InputError, match='one state'):
        cobot.cartesian_dynamics(np.zeros((3, 7)), np.zeros((3, 7)), tip)
    with pytest.raises(InputError, match='singular_threshold'):
        cobot.cartesian_dynamics(np.zeros(7), np.zeros(7), tip, singular_threshold=math.nan)


def test_to_model_order_nested_names_and_joint_dynamics_values(cobot):
    with pytest.raises(InputError, match='must be strings'):
        cobot.to_model_order([['a', 'b']], [1.0])
    name = cobot.joint_names[3]
    with pytest.raises(InputError, match="damping of joint '%s'" % name):
        cobot.with_joint_dynamics(damping={name: 'x'})


@pytest.mark.parametrize('element, owner', [
    ('<axis xyz="0 1"/>', "joint 'j1'"),
    ('<axis xyz="a b c"/>', "joint 'j1'"),
    ('<mass value="abc"/>', "link 'l1'"),
    ('<mass value="1,5"/>', "link 'l1'"),
    ('<mass value="${m}"/>', "link 'l1'")])
def test_urdf_value_errors_name_the_joint_or_link(element, owner):
    xml = one_joint('revolute', '<limit lower="-1" upper="1" effort="5" velocity="1"/>')
    if element.startswith('<axis'):
        xml = xml.replace('<axis xyz="0 1 0"/>', element)
    else:
        xml = xml.replace('<mass value="1"/>', element)
    with pytest.raises(URDFError) as info:
        RobotModel.from_urdf_string(xml)
    assert owner in str(info.value)
    if '${' in element:
        assert 'xacro' in str(info.value)


def test_simulator_refuses_a_step_of_a_million_seconds(cobot):
    with pytest.raises(InputError, match='dt must be in'):
        Simulator(cobot, home(cobot), dt=1e6)


# ---------------------------------------------------------------- property tests
class Stream(list):
    """Samples ``(t, q, qd)`` of a simulated arm (a short repr for hypothesis' reports)."""

    def __repr__(self) -> str:
        return '<%d simulated samples>' % len(self)


def pushed_stream(model, seconds=11.0):
    """Return a Stream of the arm held by computed torque, pushed at its tool every 2 s."""
    from manip_dynamics.control import ComputedTorqueController
    q0 = home(model)
    sim = Simulator(model, q0, dt=0.001, include_friction=True)
    ctl = ComputedTorqueController(model, 400.0, 40.0)
    out = Stream()
    for k in range(int(seconds * 1000)):
        t = 0.001 * k
        sim.set_external_wrenches({model.link_names[-1]: [0.0, 15.0, 0.0, 0.0, 0.0, 0.0]}
                                  if 0.2 <= t % 2.0 < 1.2 else None)
        sim.step(ctl.update(t, sim.q, sim.qd).tau)
        out.append((sim.t, sim.q.copy(), sim.qd.copy()))
    return out


@pytest.fixture(scope='module')
def stream(cobot_friction):
    return pushed_stream(cobot_friction)


SAMPLE = st.sampled_from(['good', 'velocity', 'position', 'gap'])


@hypothesis.settings(max_examples=60, deadline=None,
                     suppress_health_check=list(hypothesis.HealthCheck))
@hypothesis.given(kinds=st.lists(SAMPLE, min_size=1, max_size=60),
                  seed=st.integers(0, 2 ** 31 - 1), start=st.integers(0, 1800))
@hypothesis.example(kinds=['position', 'gap'], seed=20008247, start=0)
def test_property_compensation_commands_are_finite_bounded_and_never_drop_the_arm(
        cobot_friction, stream, kinds, seed, start):
    """
    Glitches injected into a pushed arm's stream never reach the command; nothing drops it.

    Every command is finite and within the limits; a glitch is answered with the last good
    command, after the hold time with gravity at the last good pose, never with
    zero; only a gap in the stream (stale input) acts through the watchdog, with the hold.
    """
    model = cobot_friction
    rng = np.random.default_rng(seed)
    comp = GravityCompensator(model, list(range(model.dof)), include_friction=True,
                              ramp_time=0.0, timeout=0.1)
    limits = model.effort_limits
    k = start
    now = 0.0
    last_good = last_good_q = None

    def tick(now):
        watchdog = comp.watchdog(now)
        if watchdog.command is not None:
            assert last_good is None or now - last_good > comp.timeout
            np.testing.assert_allclose(watchdog.command, model.gravity_torques(last_good_q),
                                       rtol=0, atol=1e-9)

    for kind in kinds:
        if kind == 'gap':
            k += 150
            for _ in range(6):   # a node's watchdog ticks on through the gap (every 25 ms)
                now += 0.025
                tick(now)
        k = min(k + 1, len(stream) - 1)
        now += 0.001
        t, q, qd = stream[k]
        q, qd = q.copy(), qd.copy()
        if kind == 'velocity':
            qd[rng.integers(model.dof)] = rng.choice([1e6, -1e155, 1e300, 5e3])
        elif kind == 'position':
            # always outside the limits: q + 4.5 from a low q stayed inside them, a good
            # sample the test counted as a glitch (hypothesis found it in a fresh clone)
            j = rng.integers(model.dof)
            q[j] = rng.choice([model.position_upper[j] + 4.5, -1e300, 1e10])
        tick(now)
        step = comp.update(now, q, qd, t)
        if step.command is not None:
            assert np.all(np.isfinite(step.command))
            assert np.all(np.abs(step.command) <= limits + 1e-9)
            assert np.any(step.command)   # never a zero command: that drops the arm
        if kind in ('good', 'gap'):
            assert step.event != 'glitch', step.message   # real samples pass
            last_good, last_good_q = now, q
        elif last_good is not None and now - last_good > comp.gate.hold_time:
            # glitches only, for longer than the hold time: gravity at the last good pose
            np.testing.assert_allclose(step.command, model.gravity_torques(last_good_q),
                                       rtol=0, atol=1e-9)


@hypothesis.settings(max_examples=40, deadline=None,
                     suppress_health_check=list(hypothesis.HealthCheck))
@hypothesis.given(kinds=st.lists(st.sampled_from(['good', 'velocity', 'position', 'push']),
                                 min_size=1, max_size=60),
                  seed=st.integers(0, 2 ** 31 - 1), start=st.integers(0, 8000))
def test_property_observer_outputs_are_finite_and_bounded(cobot, stream, kinds, seed, start):
    model = cobot
    rng = np.random.default_rng(seed)
    gated = GatedObserver(MomentumObserver(model, 50.0), JointStateGate(model),
                          model.effort_limits)
    for k, kind in enumerate(kinds, start=start):
        t, q, qd = stream[k]
        q, qd = q.copy(), qd.copy()
        tau = model.gravity_torques(q)
        if kind == 'velocity':
            qd[rng.integers(model.dof)] = rng.choice([1e308, 1e200, -1e6])
        elif kind == 'position':
            q[rng.integers(model.dof)] = rng.choice([1e300, -50.0])
        elif kind == 'push':
            tau = tau + rng.uniform(-1e5, 1e5, model.dof)
        r = gated.update(t, t, q, qd, tau)
        if kind in ('velocity', 'position'):
            assert r is None and gated.skipped == 'rejected'
        else:
            assert r is not None and np.all(np.isfinite(r)), gated.rejection
            assert np.all(np.abs(r) <= model.effort_limits)


def test_a_lower_effort_scale_on_a_running_arm_clamps_the_next_command(cobot):
    """rescale: the clamp is the URDF effort limit x the new scale, from the next command."""
    comp = GravityCompensator(cobot, list(range(cobot.dof)), ramp_time=0.0)
    q = home(cobot)
    tau = cobot.gravity_torques(q)
    full = comp.update(0.0, q, np.zeros(cobot.dof)).command
    np.testing.assert_allclose(full, tau, rtol=0, atol=1e-12)   # unclamped at scale 1
    scale = 0.5 * np.min(np.abs(tau[np.abs(tau) > 1.0]) / cobot.effort_limits[
        np.abs(tau) > 1.0])
    comp.rescale(scale)
    clamped = comp.update(0.001, q, np.zeros(cobot.dof)).command
    limit = scale * np.asarray(cobot.effort_limits)
    np.testing.assert_allclose(clamped, np.clip(tau, -limit, limit), rtol=0, atol=1e-12)
    assert np.any(np.abs(clamped) < np.abs(tau) - 1e-9)
    with pytest.raises(InputError, match='effort_scale'):
        comp.rescale(1.5)
    np.testing.assert_allclose(comp.limits, limit)   # the old scale stays
