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
Check that the XML files of the suite are well-formed.

Covers both package.xml files, the URDF and xacro files in urdf/, and any XML launch or
configuration file. Well-formedness only (an XML parser, no schema download), the part of
ament_xmllint that needs no network.
"""

import glob
import os
import xml.etree.ElementTree as ElementTree

import pytest

PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INTERFACES_ROOT = os.path.join(os.path.dirname(PACKAGE_ROOT), 'manip_dynamics_interfaces')


def _xml_files() -> list[str]:
    """
    List the XML files to check.

    :return: Absolute paths, sorted; the interfaces' package.xml only when the sibling
        package folder is present.
    """
    patterns = ['package.xml', 'urdf/*.urdf', 'urdf/*.xacro', 'urdf/**/*.xml',
                'launch/*.xml', 'config/*.xml']
    files = set()
    for pattern in patterns:
        files.update(glob.glob(os.path.join(PACKAGE_ROOT, pattern), recursive=True))
    interfaces_xml = os.path.join(INTERFACES_ROOT, 'package.xml')
    if os.path.isfile(interfaces_xml):
        files.add(interfaces_xml)
    return sorted(files)


def test_xml_checker_rejects_broken_xml(tmp_path) -> None:
    """Check that the parser used here does reject a document with an unclosed tag."""
    broken = tmp_path / 'broken.urdf'
    broken.write_text('<robot name="r"><link name="a"></robot>')
    with pytest.raises(ElementTree.ParseError):
        ElementTree.parse(str(broken))


@pytest.mark.linter
def test_xmllint() -> None:
    """Parse every XML file of the suite and report the ones that are not well-formed."""
    files = _xml_files()
    assert os.path.join(PACKAGE_ROOT, 'package.xml') in files
    problems = []
    for path in files:
        try:
            ElementTree.parse(path)
        except ElementTree.ParseError as error:
            problems.append('%s: %s' % (os.path.relpath(path, PACKAGE_ROOT), error))
    assert not problems, 'malformed XML files:\n' + '\n'.join(problems)
