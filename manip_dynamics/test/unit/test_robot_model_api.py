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
RobotModel's public API is all other packages use: no private member read from outside.

The facade (``robot_model``, ``robot_model_calls``) owns the model's internals and the
kernels' status codes; every other module of the package reaches the model through its
public names (``packed``, ``link_frame``, ``state_batch``, ``state_error``,
``body_wrenches`` for the library's own kernels). The import-layer test cannot see an
attribute access, so this one reads the source.
"""

import ast
import os

import numpy as np
import pytest

import manip_dynamics
from manip_dynamics import RobotModel
from manip_dynamics.bundled import urdf_path
from manip_dynamics.errors import InputError

PACKAGE = os.path.dirname(os.path.abspath(manip_dynamics.__file__))
FACADE = {'robot_model.py', 'robot_model_calls.py'}


def _private_names() -> set[str]:
    """Return every single-underscore member of RobotModel: class and instance attributes."""
    model = RobotModel.from_urdf_file(urdf_path('cobot7'))
    names = set(vars(RobotModel)) | set(vars(model))
    return {n for n in names if n.startswith('_') and not n.startswith('__')}


def _accesses(path: str, private: set[str]) -> list[str]:
    """Return ``file:line expr._name`` for each access of such a name not through self/cls."""
    with open(path, encoding='utf-8') as stream:
        tree = ast.parse(stream.read(), path)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in private and not (
                isinstance(node.value, ast.Name) and node.value.id in ('self', 'cls')):
            found.append('%s:%d %s' % (os.path.relpath(path, PACKAGE), node.lineno,
                                       ast.unparse(node)))
    return found


def test_no_module_outside_the_facade_reads_a_private_member_of_the_model() -> None:
    private = _private_names()
    assert {'_arrays', '_tree', '_raise_code'} & private == {'_arrays', '_tree'}, \
        'the scan must know the internals it looks for'
    found = []
    for folder, _, files in os.walk(PACKAGE):
        for name in files:
            path = os.path.join(folder, name)
            if name.endswith('.py') and os.path.relpath(path, PACKAGE) not in FACADE:
                found += _accesses(path, private)
    assert found == [], 'RobotModel internals used outside the facade:\n' + '\n'.join(found)


def test_the_scan_sees_a_private_access(tmp_path) -> None:
    """The scan itself: it finds model._arrays and ignores self._arrays."""
    probe = tmp_path / 'probe.py'
    probe.write_text('def f(model, self):\n    return model._arrays, self._arrays\n')
    assert _accesses(str(probe), {'_arrays'}) == [
        '%s:2 model._arrays' % os.path.relpath(str(probe), PACKAGE)]


def test_the_library_names_agree_with_the_dynamics() -> None:
    """packed, link_frame, state_batch, state_error, body_wrenches: checked by identities."""
    model = RobotModel.from_urdf_file(urdf_path('cobot7'))
    ints, flat = model.packed
    n = model.dof
    assert ints.shape == (2 * n,) and flat.dtype == np.float64
    # the tip link's frame on the last body
    frame = model.link_frame('cobot7_link7')
    assert frame.body == n - 1 and frame.T_body_link.shape == (4, 4)
    with pytest.raises(InputError, match='unknown link'):
        model.link_frame('no_such_link')
    # one state and a batch of two, the same arrays
    q = np.linspace(-0.5, 0.5, n)
    (single,), one = model.state_batch(('q',), q)
    (batch,), many = model.state_batch(('q',), np.stack([q, q]))
    assert one and not many and single.shape == (1, n) and batch.shape == (2, n)
    with pytest.raises(InputError, match=r'q must have shape \(%d,\)' % n):
        model.state_batch(('q',), q[:-1])
    # the error names the joint that holds the NaN, and the state in a batch
    bad = np.stack([q, q])
    bad[1, 3] = np.nan
    error = model.state_error(('q',), [bad], 1, 0)
    assert isinstance(error, InputError)
    assert repr(model.joint_names[3]) in str(error) and 'state 1' in str(error)
    assert 'overflow' in str(model.state_error(('q',), [np.stack([q, q])], 0))
    # a wrench on the tip: the torques it causes are J^T w (the Jacobian's own identity)
    wrench = np.array([0.0, 0.0, -20.0, 0.0, 0.0, 0.0])
    body = model.body_wrenches({'cobot7_link7': wrench})
    assert body.shape == (1, n, 6)
    qd = np.zeros(n)
    tau = model.inverse_dynamics(q, qd, qd, external_wrenches={'cobot7_link7': wrench})
    jac = model.jacobian(q, 'cobot7_link7', frame='link')
    np.testing.assert_allclose(model.gravity_torques(q) - tau, jac.T @ wrench, atol=1e-9)
    assert not model.body_wrenches(None).any()
