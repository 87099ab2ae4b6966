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
Measure a node's garbage-collector pause with and without its start-up objects frozen.

One process does what ``run_node`` does before a node spins (rclpy, the kernels loaded from
the cache, cobot7's model, a node with a subscription and a publisher), then times a full
collection (``gc.collect()``, which walks every tracked object as the collection of the
oldest generation does when CPython starts one by itself) ``--repeat`` times; then
``node_runtime.freeze_startup_objects()`` and the same again. The pause is the time the
interpreter holds every thread of the node. Usage::

    python benchmarks/gc_pause_benchmark.py [--repeat 20] [--output docs/BENCHMARKS.md]

With ``--output`` the result replaces the marked gc-pause block of that file.
"""

import argparse
import gc
import os
import statistics
import sys
import time

from doc_blocks import replace_marked_block

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ros_benchmark  # noqa: E402, I100 (sets loopback discovery and the package path)

BEGIN = '<!-- gc-pause-benchmark-%s:begin -->' % ros_benchmark.DISTRO
END = '<!-- gc-pause-benchmark-%s:end -->' % ros_benchmark.DISTRO


def pauses(repeat: int) -> list[float]:
    """Return the wall time of ``repeat`` full collections [ms]."""
    out = []
    for _ in range(repeat):
        started = time.perf_counter()
        gc.collect()
        out.append((time.perf_counter() - started) * 1e3)
    return out


def main(argv: list[str] | None = None) -> int:
    """Measure and print (optionally write) the table."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--repeat', type=int, default=20)
    parser.add_argument('--output', help='Markdown file whose gc-pause block is replaced')
    args = parser.parse_args(argv)

    import rclpy
    from rclpy.logging import get_logger
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    from manip_dynamics import RobotModel
    from manip_dynamics.bundled import urdf_path
    from manip_dynamics.ros.runtime.node_runtime import freeze_startup_objects, prepare_kernels
    rclpy.init()
    prepare_kernels(get_logger('gc_pause_benchmark'))
    model = RobotModel.from_urdf_file(urdf_path('cobot7'))
    node = rclpy.create_node('gc_pause_benchmark')
    node.create_subscription(JointState, '/joint_states', lambda msg: None, 10)
    node.create_publisher(Float64MultiArray, '/commands', 10)
    model.gravity_torques([0.0] * model.dof)
    gc.collect()
    tracked = len(gc.get_objects())
    before = pauses(args.repeat)
    frozen = freeze_startup_objects()
    after = pauses(args.repeat)
    node.destroy_node()
    rclpy.try_shutdown()

    def row(what: str, values: list[float], objects: int) -> str:
        return '| %s | %d | %.1f | %.1f |' % (
            what, objects, statistics.median(values), max(values))
    lines = ['`python benchmarks/gc_pause_benchmark.py --repeat %d` (%s)' % (
        args.repeat, ros_benchmark.DISTRO), '']
    lines += ros_benchmark.machine()
    lines += ['', '| objects walked | tracked | median pause [ms] | max [ms] |',
              '|---|---|---|---|',
              row('all (as started)', before, tracked),
              row('after freeze_startup_objects', after, len(gc.get_objects())),
              '', '%d objects frozen.' % frozen]
    text = '\n'.join(lines)
    print(text)
    if args.output:
        with open(args.output, encoding='utf-8') as stream:
            doc = stream.read()
        new = replace_marked_block(doc, BEGIN, END, text)
        if new is None:
            new = '%s\n\n## Garbage-collector pause of a node\n\n%s\n%s\n%s\n' % (
                doc.rstrip('\n'), BEGIN, text, END)
        with open(args.output, 'w', encoding='utf-8') as stream:
            stream.write(new)
    return 0


if __name__ == '__main__':
    sys.exit(main())
