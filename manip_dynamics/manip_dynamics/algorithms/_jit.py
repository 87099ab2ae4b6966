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
Compilation options shared by every numba kernel of the package.

``cache``: compiled machine code is kept on disk next to the sources, so only the first
import on a machine pays the compile time.  ``nogil``: kernels release the GIL, so
threads of a ROS node can run them in parallel.  ``fastmath``: only the flags that keep
IEEE NaN/inf semantics (the kernels detect non-finite input): fused multiply-add
contraction, reassociation, reciprocal approximations and signed-zero freedom.
"""

JIT_OPTIONS = {'cache': True, 'nogil': True,
               'fastmath': {'contract', 'reassoc', 'arcp', 'nsz'}}
