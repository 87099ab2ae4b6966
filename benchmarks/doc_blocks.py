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
The marked blocks of docs/BENCHMARKS.md that each benchmark script rewrites.

A block is ``<begin marker>\\n<body>\\n<end marker>``; a script replaces its own block and
leaves the rest of the file alone.  Standard library only: compile_benchmark.py imports it
in the processes whose import time it measures.
"""


def marked_block(begin: str, end: str, body: str) -> str:
    """Return the block: ``begin``, ``body`` (trailing newlines dropped), ``end``."""
    return '%s\n%s\n%s' % (begin, body.rstrip('\n'), end)


def replace_marked_block(text: str, begin: str, end: str, body: str) -> str | None:
    """
    Return ``text`` with its ``begin`` ... ``end`` block holding ``body``.

    :return: The new text, or None when ``text`` lacks either marker (the caller decides
        where a new block goes).
    """
    if begin not in text or end not in text:
        return None
    head, rest = text.split(begin, 1)
    tail = rest.split(end, 1)[1]
    return head + marked_block(begin, end, body) + tail


def write_block(path: str, name: str, title: str, body: str) -> None:
    """
    Put ``body`` into the ``<!-- name:begin -->`` ... ``<!-- name:end -->`` block of a file.

    :param path: The Markdown file.
    :param name: The block's name, e.g. ``'story-cpu-jazzy'``.
    :param title: The heading of a new section at the file's end when the block is missing.
    :param body: The block's text.
    """
    begin, end = '<!-- %s:begin -->' % name, '<!-- %s:end -->' % name
    with open(path, encoding='utf-8') as stream:
        doc = stream.read()
    replaced = replace_marked_block(doc, begin, end, body)
    if replaced is None:
        replaced = '%s\n\n%s\n\n%s\n' % (doc.rstrip('\n'), title,
                                         marked_block(begin, end, body))
    with open(path, 'w', encoding='utf-8') as stream:
        stream.write(replaced)
