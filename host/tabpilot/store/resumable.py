"""Whether the task record may hold a task a host could go on with (a running task with a run state), told
without opening it: the file `<database>.none-resumable` beside it exists only while it holds none. The native
host answers the browser's first hello without importing or opening the record then (sqlite3, store/tasks.py
and the database's opening: ~8 ms of a cold start's CPU under load, bench/bench_host.py). No file says nothing:
the record is read (unless there is none yet). store/tasks.py keeps the file true: removed before a run state
is written, made again after the last one goes (counted before and after)."""

from __future__ import annotations

from pathlib import Path


def marker(database: Path) -> Path:
    return database.with_name(f"{database.name}.none-resumable")


def none_resumable(database: Path) -> bool:
    return marker(database).exists() or not database.exists()  # no record yet: no task at all
