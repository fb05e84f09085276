"""bench_memory.py --probe: a look inside the native host Chromium spawns (only there, and only with
TABPILOT_MEMORY_PROBE=<folder> in its environment; the bench puts this folder first on PYTHONPATH).

On SIGUSR1 the host writes <folder>/probe-<n>.json: RSS; objects the collector tracks and what a full collection
then finds (garbage of cycles not yet collected); Python's heap after it (tracemalloc's traced size when the host
traces, PYTHONTRACEMALLOC); pymalloc's arenas (sys._debugmallocstats); glibc's heap (mallinfo2: in use, free);
SQLite's own memory (its page cache included). A probe collects the garbage it finds, so the RSS after a probed
checkpoint is not the plain figure."""

from __future__ import annotations

import os
import sys


def _host() -> bool:
    try:
        with open("/proc/self/cmdline", "rb") as cmdline:
            return any(arg.startswith(b"chrome-extension://") for arg in cmdline.read().split(b"\0"))
    except OSError:
        return False


def _rss_kb() -> int:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))


def _malloc() -> dict[str, int]:
    import ctypes

    class MallInfo2(ctypes.Structure):
        _fields_ = [(name, ctypes.c_size_t) for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                         "fsmblks", "uordblks", "fordblks", "keepcost")]

    mallinfo2 = ctypes.CDLL(None).mallinfo2
    mallinfo2.restype = MallInfo2
    info = mallinfo2()
    return {"in_use": info.uordblks, "free": info.fordblks, "mmapped": info.hblkhd}


def _sqlite_bytes() -> int:
    import _sqlite3
    import ctypes

    library = ctypes.CDLL(_sqlite3.__file__)  # looks sqlite3_status64 up in the libsqlite3 it uses
    now, high = ctypes.c_int64(), ctypes.c_int64()
    library.sqlite3_status64(0, ctypes.byref(now), ctypes.byref(high), 0)  # SQLITE_STATUS_MEMORY_USED
    return now.value


def _pymalloc() -> dict[str, int]:
    import tempfile

    with tempfile.TemporaryFile() as file:
        saved = os.dup(2)
        os.dup2(file.fileno(), 2)
        try:
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        file.seek(0)
        text = file.read().decode(errors="replace")
    found = {}
    for line in text.splitlines():
        for key, label in (("arenas", "# arenas allocated current"), ("in_blocks", "# bytes in allocated blocks")):
            if line.startswith(label):
                found[key] = int(line.split("=")[1].replace(",", ""))
    return found


def _probe(signum: int, frame: object) -> None:
    import gc
    import json
    import tracemalloc

    folder = os.environ["TABPILOT_MEMORY_PROBE"]
    number = len([name for name in os.listdir(folder) if name.endswith(".json")]) + 1
    out: dict[str, object] = {"rss_kb": _rss_kb(), "tracked": len(gc.get_objects())}
    out["garbage"] = gc.collect()
    out["tracked_live"] = len(gc.get_objects())
    out["frozen"] = gc.get_freeze_count()
    if tracemalloc.is_tracing():
        out["traced"] = tracemalloc.get_traced_memory()[0]
    for name, read in (("pymalloc", _pymalloc), ("malloc", _malloc), ("sqlite", _sqlite_bytes)):
        try:
            out[name] = read()
        except Exception as exc:  # another libc, another build: the rest is still worth having
            out[name] = repr(exc)
    with open(os.path.join(folder, f".probe-{number}"), "w") as file:
        json.dump(out, file)
    os.rename(os.path.join(folder, f".probe-{number}"), os.path.join(folder, f"probe-{number}.json"))


if os.environ.get("TABPILOT_MEMORY_PROBE") and _host():
    import signal

    signal.signal(signal.SIGUSR1, _probe)
