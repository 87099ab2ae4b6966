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

"""Write the generated parameter tables into a Markdown file (docs/ROS_API.md)."""

import sys

from manip_dynamics.ros.parameters import docs_block_markers, node_parameters, TABLES
from manip_dynamics.ros.parameters.spec import markdown_table


def main(argv: list[str]) -> int:
    """Replace each node's marked block of ``argv[0]`` with its table; report a missing one."""
    if len(argv) != 1:
        print('usage: python -m manip_dynamics.ros.parameters docs/ROS_API.md',
              file=sys.stderr)
        return 2
    with open(argv[0], encoding='utf-8') as stream:
        text = stream.read()
    missing = []
    for node in TABLES:
        begin, end = docs_block_markers(node)
        if begin not in text or end not in text:
            missing.append(node)
            continue
        head, rest = text.split(begin, 1)
        text = '%s%s\n%s\n%s%s' % (head, begin, markdown_table(node_parameters(node)), end,
                                   rest.split(end, 1)[1])
    with open(argv[0], 'w', encoding='utf-8') as stream:
        stream.write(text)
    for node in missing:
        print('%s: no block for %s (add its two markers)' % (argv[0], node), file=sys.stderr)
    return 1 if missing else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
