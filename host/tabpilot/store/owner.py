"""Which process runs a task, and whether it still does.

A task row names its owner as `pid` or, on Linux, `pid:boot_id:start_ticks`: after a reboot or once
the pid is reused by another program, a pid alone would make a dead task look alive forever."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def _linux_identity(pid: int) -> tuple[str, str] | None:
    """("boot_id:start_ticks", process state letter) from /proc; None without /proc or the process."""
    try:
        boot_id = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rpartition(")")[2].split()  # the command name in (...) may hold spaces
    if len(fields) < 20:
        return None
    state, start_ticks = fields[0], fields[19]
    return f"{boot_id}:{start_ticks}", state


def current_owner() -> str:
    return process_owner(os.getpid())


def process_owner(pid: int) -> str:
    """Process `pid` named as `owner_alive` checks it: `pid:boot_id:start_ticks` on Linux, else `pid`."""
    identity = _linux_identity(pid)
    return f"{pid}:{identity[0]}" if identity else str(pid)


def owner_alive(owner: str | None) -> bool:
    if not owner:
        return False
    pid_text, _, identity = owner.partition(":")
    try:
        pid = int(pid_text)
    except ValueError:
        return False
    if owner == current_owner():
        return True
    if sys.platform == "win32":
        return _windows_pid_alive(pid)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # exists, owned by another user
    if not identity:
        return True  # no /proc where the task started (macOS): the pid is all we have
    now = _linux_identity(pid)
    if now is None:
        return True
    # A killed process its parent has not reaped yet (a zombie) still answers kill(pid, 0).
    return now[0] == identity and now[1] != "Z"


def _windows_pid_alive(pid: int) -> bool:
    import ctypes

    process_query_limited_information, still_active = 0x1000, 259
    kernel32 = ctypes.windll.kernel32  # type: ignore[attr-defined]
    handle = kernel32.OpenProcess(process_query_limited_information, False, pid)
    if not handle:
        return False
    try:
        code = ctypes.c_ulong()
        return bool(kernel32.GetExitCodeProcess(handle, ctypes.byref(code))) and code.value == still_active
    finally:
        kernel32.CloseHandle(handle)
