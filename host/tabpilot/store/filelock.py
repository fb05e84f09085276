"""One writer at a time for a read-change-write of a small JSON file (the settings, the allowed sites),
across processes: the host, `tabpilot` in a terminal and every `tabpilot mcp` may change the same file at
the same moment. Without it two changes made together kept only one (two MCP clients allowed at once: one
was asked about again). The lock is a sibling `.<name>.lock` file; re-entrant within a thread.
`claimed` holds a lock for as long as some work lasts, or says another process holds it (one task per tab)."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_held = threading.local()


@contextmanager
def changing(path: Path) -> Iterator[None]:
    """Hold the lock of `path` while the caller reads, changes and writes it."""
    held: set[str] = _held.__dict__.setdefault("paths", set())
    key = str(path.resolve())
    if key in held:  # already ours (a change calling another): an OS lock would wait on itself
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path.with_name(f".{path.name}.lock"), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        _lock(fd)
        held.add(key)
        try:
            yield
        finally:
            held.discard(key)
    finally:
        os.close(fd)  # closing releases the lock


@contextmanager
def claimed(path: Path) -> Iterator[bool]:
    """Hold the lock file `path` for as long as the caller works, if no other process holds it: yields whether it
    is ours. Never waits. The OS lets go of it when the process ends, however it ends; an ordinary end removes the
    file too (one a tab was left behind for every tab ever worked in)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            ours = _lock(fd, wait=False)
        except OSError:  # no locks here at all (ENOLCK): nothing to claim, nothing to hold the work up
            os.close(fd)
            yield True
            return
        if ours and not _same_file(fd, path):  # removed by the one before us as we opened it: take the new one
            os.close(fd)
            continue
        break
    try:
        yield ours
    finally:
        if ours:
            with contextlib.suppress(OSError):
                path.unlink()  # while still held: whoever opens the path next makes a new file
        os.close(fd)


def _same_file(fd: int, path: Path) -> bool:
    try:
        return os.path.samestat(os.fstat(fd), path.stat())
    except OSError:
        return False


def _lock(fd: int, *, wait: bool = True) -> bool:
    if sys.platform == "win32":  # pragma: no cover - Windows
        import msvcrt

        try:
            msvcrt.locking(fd, msvcrt.LK_LOCK if wait else msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]
        except OSError:
            if wait:
                raise
            return False
    else:
        import fcntl

        try:
            fcntl.flock(fd, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
    return True
