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
Split large batches of states over the CPU cores.

The numba kernels release the GIL (``nogil``), so plain Python threads run them in
parallel; no numba threading layer is involved, which keeps concurrent calls from several
threads of a ROS node safe.  Small batches run on the calling thread.
"""

from concurrent.futures import ThreadPoolExecutor
import os
import threading
from typing import Callable

#: Batches smaller than this run on the calling thread.
PARALLEL_MIN_STATES = 2048

_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def worker_count() -> int:
    """Return how many threads a large batch is split over (the usable CPU cores)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def _pool() -> ThreadPoolExecutor:
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(max_workers=worker_count(),
                                       thread_name_prefix='manip_dynamics')
        return _POOL


def run_batched(run: Callable[[int, int], int], count: int, codes_per_state: int) -> int:
    """
    Run ``run(lo, hi)`` over ``[0, count)``, in chunks on worker threads when large.

    :param run: Runs a kernel on states ``lo:hi`` and returns its status code, where a
        positive code ``1 + codes_per_state * k + a`` names state ``k`` of the chunk and a
        negative code ``-1 - k`` likewise (see the kernels' docs).
    :param count: Number of states N.
    :param codes_per_state: The kernel's number of checked arguments per state.
    :return: The first non-zero status code with its state index made global, or 0.
    """
    workers = worker_count()
    if count < PARALLEL_MIN_STATES or workers == 1:
        return run(0, count)
    bounds = [count * w // workers for w in range(workers + 1)]
    futures = [(lo, _pool().submit(run, lo, hi)) for lo, hi in zip(bounds, bounds[1:])]
    for lo, future in futures:
        code = future.result()
        if code > 0:
            return code + codes_per_state * lo
        if code < 0:
            return code - lo
    return 0
