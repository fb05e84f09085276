"""The record writer of a task run (taskrun/writer.py): writes in order, off the event loop, waiting out another
program's lock on the database beyond SQLite's own busy timeout, and failing (said once) only past its patience."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import threading
import time

from tabpilot.store.tasks import TaskStore
from tabpilot.taskrun.writer import RecordWriter


def hold_lock(path, seconds: float) -> threading.Event:
    locked = threading.Event()

    def hold() -> None:
        with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as db:
            db.execute("BEGIN EXCLUSIVE")
            locked.set()
            time.sleep(seconds)
            db.execute("COMMIT")

    threading.Thread(target=hold, daemon=True).start()
    assert locked.wait(5)
    return locked


async def test_writes_wait_out_a_lock_longer_than_the_busy_timeout_in_order_and_off_the_loop(tmp_path):
    store = TaskStore(tmp_path / "tasks.sqlite3")
    store._db.execute("PRAGMA busy_timeout = 100")  # SQLite's own wait, cut short for the test (10 s in use)
    task_id = store.start_task("Type Ada")
    writer, failures = RecordWriter(), []
    hold_lock(store.path, 0.8)
    began = time.monotonic()
    for index in range(5):
        writer.submit(lambda i=index: store.append_event(task_id, {"type": "observation", "content": str(i)}),
                      failures.append)
    ticks = 0
    while time.monotonic() - began < 0.5:  # the loop runs on while the writes wait
        await asyncio.sleep(0.01)
        ticks += 1
    assert ticks > 20
    await writer.drained()
    assert failures == []
    assert [e["content"] for e in store.get_task(task_id).events] == ["0", "1", "2", "3", "4"]
    assert await writer.call(lambda: store.finish_task(task_id, status="completed", result=None)) is None
    writer.close()
    store.close()


async def test_past_its_patience_a_locked_write_fails_and_says_why(tmp_path):
    store = TaskStore(tmp_path / "tasks.sqlite3")
    store._db.execute("PRAGMA busy_timeout = 50")
    task_id = store.start_task("Type Ada")
    writer, failures = RecordWriter(patience=0.2), []
    hold_lock(store.path, 1.0)
    writer.submit(lambda: store.append_event(task_id, {"type": "observation", "content": "x"}), failures.append)
    await writer.drained()
    assert len(failures) == 1 and "locked" in str(failures[0])
    writer.close()
    await asyncio.sleep(1.0)
    assert store.get_task(task_id).events == []
    store.close()
