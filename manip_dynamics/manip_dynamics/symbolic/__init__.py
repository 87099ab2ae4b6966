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
Closed-form dynamics by the Lagrangian method (Craig sec. 6.9); needs sympy (optional).

``closed_form(model)`` returns a :class:`ClosedForm` with M, C, V, G as sympy matrices,
printable as LaTeX and as a Python function.  Importing this package does not import sympy;
calling without sympy raises ``InputError('sympy is not installed: pip install sympy')``.
"""

from manip_dynamics.symbolic.lagrangian import closed_form, ClosedForm, MAX_DOF

__all__ = ['closed_form', 'ClosedForm', 'MAX_DOF']
