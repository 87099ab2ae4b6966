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

Entry points: the facade calls each kernel through the compiled function of one fixed
signature (:class:`EntryPoints`), not through numba's dispatcher, which would type every
argument on every call (about 70 ns per argument).  The facade guarantees the argument
types (float64 arrays of the right dimension), so no other signature is ever compiled.
"""

import threading

JIT_OPTIONS = {'cache': True, 'nogil': True,
               'fastmath': {'contract', 'reassoc', 'arcp', 'nsz'}}

#: Options of a kernel only other kernels call: numba then builds no CPython or C wrapper
#: for it (a wrapper unboxes every argument, and with 10 to 20 array arguments it was a
#: large part of the cold compile time).  Such a kernel cannot be called from
#: Python.
INNER = {'no_cpython_wrapper': True, 'no_cfunc_wrapper': True}
INNER_OPTIONS = {**JIT_OPTIONS, **INNER}


class EntryPoints:
    """
    Compiled entry points of kernels, each bound on first use to one signature.

    ``EntryPoints({'name': (dispatcher, signature)})``; ``points.name`` compiles the kernel
    for that signature (or loads it from numba's cache) the first time and is then a plain
    attribute: the compiled function, callable from Python with no type dispatch.  It does
    not check argument types: callers pass exactly the signature's types.
    """

    def __init__(self, kernels: dict) -> None:
        """Remember ``{name: (dispatcher, signature string)}``; compile nothing yet."""
        self._kernels = dict(kernels)
        self._lock = threading.Lock()

    def __getattr__(self, name: str):
        """Bind and return the entry point ``name`` (called only on first use)."""
        try:
            dispatcher, signature = self.__dict__['_kernels'][name]
        except KeyError:
            raise AttributeError(name) from None
        with self._lock:
            entry = dispatcher.compile(signature)
            setattr(self, name, entry)
        return entry

    def names(self) -> tuple:
        """Return the names of the kernels (for precompiling them all)."""
        return tuple(self._kernels)

    def bind_all(self) -> None:
        """Compile (or load from the cache) every entry point now."""
        for name in self._kernels:
            getattr(self, name)
