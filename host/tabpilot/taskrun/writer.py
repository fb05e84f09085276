"""A run's writes to the record, in order, on a thread of their own: never on the event loop.

SQLite waits up to its busy timeout (10 s) for a write lock another program holds (a backup tool, the
sqlite3 shell, a long `tabpilot history delete`). Written from the loop, each of a run's events held up the
whole native host that long: ping, the CDP relay, the popup's requests and every other task. Here only the
run whose write waits is held up (the agent waits for its events to be in the record before its next step),
and a lock held longer than the busy timeout is waited out (up to `LOCK_PATIENCE`) instead of failing the task
and losing its events."""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import sqlite3
import time
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")
log = logging.getLogger(__name__)

LOCK_PATIENCE = 120.0  # seconds a write waits for another program's lock on the record before the run fails


def _patiently(handed: list[Callable[[], T]], patience: float) -> T:
    """The work in `handed`, tried again while the database is locked by another program (each try waits out
    SQLite's busy timeout), until `patience` seconds have gone by. A write is one transaction: a try that failed
    left nothing.

    The work is taken out of `handed` and let go before this returns: the executor's thread keeps its arguments
    until after the loop has heard the write is done, and a write's closure holds its run. Passed as is, a busy
    machine sometimes ended a task, collected its garbage (native/memory.py) and found the run still held by the
    thread that wrote its end: it stayed until Python's next full collection (test_host_memory, 4 runs in 10 at
    load 3 on 2 cores)."""
    work = handed.pop()
    try:
        began = time.monotonic()
        while True:
            try:
                return work()
            except sqlite3.OperationalError as exc:
                if not _locked(exc) or time.monotonic() - began >= patience:
                    raise
                log.info("the task record is locked by another program; waiting (%s)", exc)
                time.sleep(0.05)
    finally:
        del work


def _locked(exc: sqlite3.OperationalError) -> bool:
    return getattr(exc, "sqlite_errorname", "") in ("SQLITE_BUSY", "SQLITE_LOCKED") or "locked" in str(exc)


class RecordWriter:
    def __init__(self, patience: float = LOCK_PATIENCE) -> None:
        self.patience = patience
        self._executor = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="record")
        self._last: asyncio.Future[Any] | None = None
        self._closed = False

    def submit(self, work: Callable[[], object], on_error: Callable[[BaseException], None]) -> None:
        """Do `work` after every write submitted before it; a failure goes to `on_error` (on the loop)."""
        def done(future: asyncio.Future[Any]) -> None:
            if not future.cancelled() and (exc := future.exception()) is not None:
                on_error(exc)

        self._queue(work).add_done_callback(done)

    async def call(self, work: Callable[[], T]) -> T:
        """Do `work` after every write submitted before it and return its result (or raise its error). A
        caller cancelled meanwhile does not cancel the write: once asked for, it is done."""
        future = self._queue(work)
        return await asyncio.shield(future)

    async def drained(self) -> None:
        """Once every write submitted so far is done, whether it worked or not (each says so itself)."""
        last = self._last
        if last is not None and not last.done():
            await asyncio.wait([last])

    def close(self) -> None:
        """No more writes: the thread ends once what is queued is written."""
        self._closed = True
        self._executor.shutdown(wait=False)

    def _queue(self, work: Callable[[], Any]) -> asyncio.Future[Any]:
        loop = asyncio.get_running_loop()
        if self._closed:  # a write after the run ended (nothing should): done here rather than lost
            future: asyncio.Future[Any] = loop.create_future()
            try:
                future.set_result(work())
            except Exception as exc:
                future.set_exception(exc)
        else:
            future = loop.run_in_executor(self._executor, _patiently, [work], self.patience)
        self._last = future
        return future
