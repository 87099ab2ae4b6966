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
The MuJoCo arm beside the suite's simulator: the cost of a step and of the node at 1 kHz.

Two measurements, the engines side by side in one run, in turn, repeated:

- one step of cobot7 at 1 kHz in this process: ``Simulator.step`` (the suite's compiled
  kernel) and ``MujocoArm.step`` (MuJoCo, the description compiled; and a variant with 20 %
  errors, rotor inertia and a table under the tool), microseconds per step;
- simulator_node stepping at 1 kHz on the wall clock, publishing /joint_states at every step
  or at its default 250 Hz, held by gravity_compensation_node (one command per state), each
  a process: the simulator's CPU time from /proc over a window, as a share of one core,
  with ``engine: suite`` and ``engine: mujoco``.

Usage::

    python benchmarks/mujoco_arm_benchmark.py [--seconds 15] [--repeats 2] [--output FILE]
"""

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time

import numpy as np

POSE = [0.0, -0.3, 0.0, -2.2, 0.0, 2.0, 0.8]


def cpu_seconds(pid: int) -> float:
    """Return a process's user + system CPU time [s] (/proc/<pid>/stat)."""
    with open('/proc/%d/stat' % pid, encoding='utf-8') as stream:
        fields = stream.read().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')


def engines(variant_path: str) -> dict:
    """Return name -> factory of a fresh engine at POSE (cobot7, 1 kHz)."""
    from manip_dynamics import RobotModel
    from manip_dynamics.bundled import urdf_path
    from manip_dynamics.simulation import Simulator
    from manip_dynamics.simulation.mujoco_arm import MujocoArm
    model = RobotModel.from_urdf_file(urdf_path('cobot7'))
    return {
        "suite's Simulator": (model, lambda: Simulator(model, POSE, dt=1e-3)),
        'MuJoCo, the description': (model, lambda: MujocoArm(model, urdf_path('cobot7'),
                                                             POSE, dt=1e-3)),
        'MuJoCo, variant with a table': (model, lambda: MujocoArm(model, variant_path, POSE,
                                                                  dt=1e-3)),
    }


def step_cost(model, make, steps: int) -> float:
    """Return microseconds per step, the arm held by g(q) of the description."""
    arm = make()
    arm.warm_up()
    tau = model.gravity_torques(np.asarray(POSE))
    arm.step(tau)
    t0 = time.perf_counter()
    for _ in range(steps):
        arm.step(tau)
    return 1e6 * (time.perf_counter() - t0) / steps


def node_cpu(engine: str, mujoco_model: str, publish_rate: float, seconds: float,
             warmup: float) -> float:
    """Return simulator_node's share of one core, 1 kHz steps, with ``engine``."""
    from manip_dynamics.bundled import urdf_path
    from manip_dynamics.ros.runtime.node_process import start_node, stop_node
    with open(urdf_path('cobot7'), encoding='utf-8') as stream:
        xml = stream.read()
    gc = start_node('gravity_compensation_node', 'bench_gc', {
        'robot_description': xml, 'ramp_time': 0.0, 'timeout': 0.5})
    sim = start_node('simulator_node', 'bench_sim', {
        'robot_description': xml, 'rate': 1000.0, 'publish_rate': publish_rate,
        'initial_positions': POSE, 'command_timeout': 0.5, 'engine': engine,
        'mujoco_model': mujoco_model})
    try:
        time.sleep(warmup)
        for name, proc in (('simulator_node', sim), ('gravity_compensation_node', gc)):
            if proc.poll() is not None:
                raise RuntimeError('%s exited; see %s' % (name, proc.log_path))
        start, t0 = cpu_seconds(sim.pid), time.monotonic()
        time.sleep(seconds)
        return (cpu_seconds(sim.pid) - start) / (time.monotonic() - t0)
    finally:
        for proc in (sim, gc):
            stop_node(proc)


def main() -> int:
    """Measure both, print, and optionally write the marked block."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[1])
    parser.add_argument('--seconds', type=float, default=15.0, help='CPU window [s]')
    parser.add_argument('--warmup', type=float, default=10.0, help='seconds before it')
    parser.add_argument('--steps', type=int, default=5000, help='timed steps per round')
    parser.add_argument('--repeats', type=int, default=2, help='rounds over the engines')
    parser.add_argument('--output', help='Markdown file with the marked block to replace')
    args = parser.parse_args()
    from manip_dynamics.bundled import urdf_path
    from manip_dynamics.ros.runtime.discovery import apply_loopback_environment
    from manip_dynamics.simulation.arm_variants import arm_variant, ArmErrors, table
    apply_loopback_environment()
    load_text = ', '.join('%.2f' % v for v in os.getloadavg())
    folder = tempfile.mkdtemp(prefix='mujoco_bench_')
    variant = os.path.join(folder, 'cobot7_variant.xml')
    with open(variant, 'w', encoding='utf-8') as stream:
        # a table in the scene, under the tool (the engine checks it for contact every step)
        stream.write(arm_variant(urdf_path('cobot7'), ArmErrors(
            mass=0.2, com=0.2, inertia=0.2, armature=0.1, seed=1), boxes=[table(0.3)]))
    factories = engines(variant)
    steps: dict = {name: [] for name in factories}
    cpu: dict = {(engine, rate): [] for rate in (1000.0, 250.0)
                 for engine in ('suite', 'mujoco')}
    for _ in range(args.repeats):
        for name, (model, make) in factories.items():
            steps[name].append(step_cost(model, make, args.steps))
        for engine, rate in cpu:
            cpu[engine, rate].append(node_cpu(engine, variant if engine == 'mujoco' else '',
                                              rate, args.seconds, args.warmup))
    os.remove(variant)
    os.rmdir(folder)
    distro = os.environ.get('ROS_DISTRO', 'unknown')
    lines = ['Measured %s on %s (%s, %d cores), Python %s, ROS 2 %s, %d rounds in turn '
             '(medians; each round in brackets); load average at start %s.' % (
                 time.strftime('%Y-%m-%d'), platform.node() or 'this machine',
                 platform.machine(), os.cpu_count() or 0, platform.python_version(), distro,
                 args.repeats, load_text), '',
             '| cobot7, one step at 1 kHz | microseconds per step |', '| --- | ---: |']
    for name, values in steps.items():
        lines.append('| %s | %.1f (%s) |' % (name, statistics.median(values),
                                             ', '.join('%.1f' % v for v in values)))
    lines += ['', '| simulator_node stepping at 1 kHz, held by the compensation | share of one '
              'core |', '| --- | ---: |']
    for (engine, rate), values in cpu.items():
        lines.append('| engine: %s%s, /joint_states at %g Hz%s | %.0f %% (%s) |' % (
            engine, ' (the variant with a table)' if engine == 'mujoco' else '', rate,
            ' (the default)' if rate == 250.0 else '', 100 * statistics.median(values),
            ', '.join('%.0f' % (100 * v) for v in values)))
    text = '\n'.join(lines)
    print(text)
    if args.output:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from doc_blocks import write_block
        write_block(args.output, 'mujoco-arm-%s' % distro,
                    '### The MuJoCo arm beside the simulator, ROS 2 %s' % distro.capitalize(),
                    text)
    return 0


if __name__ == '__main__':
    sys.exit(main())
