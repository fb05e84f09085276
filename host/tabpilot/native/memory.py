"""The host's memory between tasks: a task's objects go when it ends, and the pages they held go back to the system.

A task that ended leaves its objects as cyclic garbage (its agent and its run's handlers, the browser and its
backend, asyncio tasks and futures, exceptions and their frames refer to each other), which Python frees only at
its next full collection: that comes once the objects that survived since the last one number a quarter of all
(~25,000 here), so the garbage of several tasks piled up between two, and each pile left Python's 1 MiB arenas a
little more spread out. Measured with bench/bench_memory.py (one-step tasks over the relay, load 3-8): the live
objects are flat from task 20 on (tracemalloc after a full collection: +58 KB from task 50 to 200), yet RSS rose
from 68.2 MB after 10 tasks to 73.5 MB after 200 and 74.6 MB after 250, all of it in Python's arenas (32 of them
at task 10, 37 from task 100 on). Collected as each task ends (the ended tasks kept for task.get still holding their
runs then): 66.5 MB after 10, 67.7 after 200, 67.8 after 300.

A full collection looks at every object the host has (~97,000 once a task has run: the modules, openai, pydantic's
schemas): 60-90 ms of the event loop on a loaded 2-core machine. So the first time no task is running after one
ended, what is alive then is frozen (`gc.freeze`: never looked at again, still freed when no longer referred to;
nothing of a task is alive then, tests/test_host_memory.py), and each later collection looks only at the ~1,000
objects made since: 1.7 ms median, 7.5 ms at the 90th percentile (load 5). Never frozen while a task runs: its
objects, frozen, could never be collected once it ended.

`malloc_trim(0)` afterwards (glibc) hands the heap pages freed back to the system. On its own (before the garbage
was collected at each task's end) it took the growth from task 10 to 200 from +12-13 % to +9 %.

With the ended tasks kept for task.get holding only what a popup reads (tasks.EndedRun): 65.8 MB after 10 tasks,
66.1 after 200, 66.5 after 500 (load 3-9). What is left, ~1.2 KB a task, is mostly SQLite's page cache filling as
the record grows (0.65 KB a task; bounded by its cache_size, 2 MB); Python's traced heap after a collection grew
30 KB from task 50 to 300 (bench_memory.py --probe --tracemalloc)."""

from __future__ import annotations

import gc
import sys
from collections.abc import Callable
from typing import Any

_trim: Callable[[int], Any] | None = None
_looked = False
_frozen = False


def after_task(*, idle: bool) -> None:
    """A task has ended (call it once its runner is done, so nothing of it is still on a stack): collect its
    garbage, freeze what lives when `idle` (no task running) the first time, and give free pages back."""
    global _frozen
    gc.collect()
    if idle and not _frozen:
        _frozen = True
        gc.freeze()
    return_free_memory()


def return_free_memory() -> None:
    """Give the pages the allocator holds free back to the system (a few ms; call it between tasks)."""
    global _trim, _looked
    if not _looked:
        _looked = True
        if sys.platform.startswith("linux"):
            import ctypes

            _trim = getattr(ctypes.CDLL(None), "malloc_trim", None)  # musl has none
    if _trim is not None:
        _trim(0)
