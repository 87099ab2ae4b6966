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
Where one joint-state message's time goes in the story's three nodes (issue 28, item 5).

Per message, on cobot7, in one process, each part timed on its own (median of many):

* **rclpy**: a JointState published and taken by a subscription callback through
  ``executor.spin_once`` in the same process, on the SingleThreadedExecutor the nodes
  spin on and on the EventsExecutor that ``MANIP_DYNAMICS_EXECUTOR=events`` selects
  (DDS on loopback: what the executor, the middleware and the (de)serialization cost a
  node per message, no work in the callback); deserializing and serializing the
  message alone;
* **conversion**: the message to model-order arrays (``joint_state_arrays``), and the reply
  message built (``float64_multi_array`` for a command, ``joint_state_message``);
* **library**: what each node computes per message: trajectory_controller the gate and the
  computed-torque law; external_torque_observer the gated momentum observer; simulator_node
  one 4 ms chunk of 4 integration steps at 1 kHz (the simulator publishes once per chunk at
  250 Hz, once per step at 1 kHz).

Printed: a table in microseconds and, per node, the share of one core that 1,000 messages a
second take. Usage::

    python benchmarks/message_cost_benchmark.py [--output FILE]

With ``--output`` the table replaces the marked block of that file for this distribution.
"""

import argparse
import os
import platform
import statistics
import sys
import time

import numpy as np

REPEAT = 2000
EVENTS = 'rclpy: publish + take in a callback, EventsExecutor (on request)'
SINGLE = 'rclpy: publish + take in a callback, SingleThreadedExecutor (the default)'


def median_us(function, repeat: int = REPEAT) -> float:
    """Return the median time of one call of ``function`` [us] over ``repeat`` calls."""
    for _ in range(50):
        function()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return 1e6 * statistics.median(times)


def rclpy_round_trip_us(names: list[str], events: bool, messages: int = 3000) -> float:
    """
    Return the median time per message published and taken by a callback [us].

    :param events: Spin rclpy's EventsExecutor (``MANIP_DYNAMICS_EXECUTOR=events``), else
        its SingleThreadedExecutor (the nodes' default, node_runtime.make_executor).
    """
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.experimental import EventsExecutor
    from rclpy.qos import QoSProfile
    from sensor_msgs.msg import JointState
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        node = rclpy.create_node('message_cost', context=context)
        executor = (EventsExecutor if events else SingleThreadedExecutor)(context=context)
        executor.add_node(node)
        got = []
        node.create_subscription(JointState, 'message_cost_states',
                                 lambda msg: got.append(msg), QoSProfile(depth=1))
        pub = node.create_publisher(JointState, 'message_cost_states', QoSProfile(depth=1))
        msg = JointState(name=names, position=[0.1] * len(names),
                         velocity=[0.2] * len(names), effort=[0.3] * len(names))
        deadline = time.monotonic() + 10.0
        while not got and time.monotonic() < deadline:   # matched
            pub.publish(msg)
            executor.spin_once(timeout_sec=0.05)
        times = []
        for _ in range(messages):
            count = len(got)
            start = time.perf_counter()
            pub.publish(msg)
            while len(got) == count:
                executor.spin_once(timeout_sec=1.0)
            times.append(time.perf_counter() - start)
        node.destroy_node()
        return 1e6 * statistics.median(times[100:])
    finally:
        rclpy.shutdown(context=context)


def measure() -> dict:
    """Return the parts' medians [us] and the per-node sums."""
    from rclpy.serialization import deserialize_message, serialize_message
    from sensor_msgs.msg import JointState

    from manip_dynamics import RobotModel
    from manip_dynamics.bundled import urdf_path
    from manip_dynamics.control import ComputedTorqueController
    from manip_dynamics.observers.gated_observer import GatedObserver
    from manip_dynamics.observers.momentum_observer import MomentumObserver
    from manip_dynamics.ros.launch_support.ros2_control_setup import default_initial_positions
    from manip_dynamics.ros.runtime.conversions import float64_multi_array, \
        joint_state_arrays, joint_state_message
    from manip_dynamics.safety.plausibility import JointStateGate
    from manip_dynamics.simulation import Simulator

    with open(urdf_path('cobot7'), encoding='utf-8') as stream:
        xml = stream.read()
    model = RobotModel.from_urdf_string(xml)
    q0 = default_initial_positions(model, xml)
    names = list(model.joint_names)
    msg = JointState(name=names, position=q0.tolist(), velocity=[0.01] * 7,
                     effort=[1.0] * 7)
    raw = serialize_message(msg)
    sim = Simulator(model, q0, dt=0.001)
    tau = model.gravity_torques(q0)
    ctl = ComputedTorqueController(model, 400.0, 40.0)
    ctl.hold(q0)
    gate = JointStateGate(model)
    observer = GatedObserver(MomentumObserver(model, 25.0), JointStateGate(model),
                             model.effort_limits)
    clock = {'t': 0.0}

    def controller():
        clock['t'] += 0.001
        q = q0 + 1e-4 * np.sin(clock['t'])
        qd = np.full(7, 1e-4 * np.cos(clock['t']))
        gate.check(clock['t'], q, qd, clock['t'])
        ctl.update(clock['t'], q, qd)

    def observe():
        clock['t'] += 0.001
        q = q0 + 1e-4 * np.sin(clock['t'])
        qd = np.full(7, 1e-4 * np.cos(clock['t']))
        observer.update(clock['t'], clock['t'], q, qd, tau)

    parts = {
        EVENTS: rclpy_round_trip_us(names, True),
        SINGLE: rclpy_round_trip_us(names, False),
        'rclpy: deserialize a JointState': median_us(lambda: deserialize_message(
            raw, JointState)),
        'rclpy: serialize a JointState': median_us(lambda: serialize_message(msg)),
        'conversion: JointState -> model-order arrays': median_us(
            lambda: joint_state_arrays(model, msg)),
        'conversion: command -> Float64MultiArray': median_us(
            lambda: float64_multi_array(tau)),
        'conversion: state -> JointState (simulator)': median_us(
            lambda: joint_state_message(names, tau)),
        'library: gate + computed torque (trajectory_controller)': median_us(controller),
        'library: gated momentum observer (external_torque_observer)': median_us(observe),
        'library: 1 integration step at 1 kHz (simulator_node)': median_us(
            lambda: sim.step(tau, steps=1)),
        'library: 4 integration steps, one 250 Hz chunk (simulator_node)': median_us(
            lambda: sim.step(tau, steps=4)),
    }
    conv_in = parts['conversion: JointState -> model-order arrays']
    work = {
        'trajectory_controller (state in, command out)':
            conv_in + parts['library: gate + computed torque (trajectory_controller)']
            + parts['conversion: command -> Float64MultiArray'],
        'external_torque_observer (state in)':
            conv_in + parts['library: gated momentum observer (external_torque_observer)'],
        'simulator_node at 1 kHz (command in, state out per step)':
            parts['library: 1 integration step at 1 kHz (simulator_node)']
            + parts['conversion: state -> JointState (simulator)'],
    }
    nodes = {name: (parts[EVENTS] + value, parts[SINGLE] + value)
             for name, value in work.items()}
    return {'parts': parts, 'nodes': nodes}


def table(result: dict) -> str:
    """Return the result as Markdown lines."""
    lines = ['| part, per message | us |', '| --- | ---: |']
    lines += ['| %s | %.1f |' % (name, value) for name, value in result['parts'].items()]
    lines += ['', '| node, per 1 kHz message (sum of its parts) | EventsExecutor: us | share '
              'of one core at 1 kHz | SingleThreadedExecutor: us | share |',
              '| --- | ---: | ---: | ---: | ---: |']
    lines += ['| %s | %.1f | %.0f %% | %.1f | %.0f %% |' % (
        name, events, events / 10.0, single, single / 10.0)
        for name, (events, single) in result['nodes'].items()]
    events = sum(v[0] for v in result['nodes'].values())
    single = sum(v[1] for v in result['nodes'].values())
    lines.append('| the three together | %.1f | %.0f %% | %.1f | %.0f %% |' % (
        events, events / 10.0, single, single / 10.0))
    return '\n'.join(lines)


def main() -> int:
    """Measure, print, and optionally write the table into a doc's marked block."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[1])
    parser.add_argument('--output', help='Markdown file with the marked block to replace')
    args = parser.parse_args()
    from manip_dynamics.ros.runtime.discovery import apply_loopback_environment
    apply_loopback_environment()   # the round-trip rows' nodes stay on loopback
    result = measure()
    distro = os.environ.get('ROS_DISTRO', 'unknown')
    header = 'Measured %s on %s (%s, %d cores), Python %s, ROS 2 %s.' % (
        time.strftime('%Y-%m-%d'), platform.node() or 'this machine', platform.machine(),
        os.cpu_count() or 0, platform.python_version(), distro)
    text = header + '\n\n' + table(result)
    print(text)
    if args.output:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from doc_blocks import write_block
        title = "### One joint-state message in the story's nodes, ROS 2 %s" % (
            distro.capitalize())
        write_block(args.output, 'message-cost-%s' % distro, title, text)
    return 0


if __name__ == '__main__':
    sys.exit(main())
