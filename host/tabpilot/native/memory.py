"""Handing back to the system the memory a finished task freed (Linux with glibc; elsewhere nothing).

Measured with bench/bench_memory.py (one-step tasks typed into the popup, over the relay): from task ~50 on,
the host's Python objects, the bytes malloc has handed out and SQLite's cache stay flat, yet its RSS kept
rising until task ~200 (+12 % from task 10 to 200, flat from 250 to 350): glibc kept the freed heap pages
(4.5 MB free in its arenas by task 350) and Python's small-object arenas some more. `malloc_trim(0)` after
each task returns them: +6 % from task 10 to 200."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

_trim: Callable[[int], Any] | None = None
_looked = False


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
