"""Keeping a takeover in the record as it grows (taskrun/run.py `_keep_takeover`), as the takeover gets long:

1. what one batch of the person's actions writes to the record, and how long its write takes (on the run's writer
   thread), for a takeover of 10 and of 1,000 actions. Bytes are what SQLite appended to its write-ahead log for
   the batch (automatic checkpoints off, so the log only grows): the record's real write volume. Written whole at
   every batch, a takeover's record costs writes quadratic in its length;
2. the event loop's time a batch costs (the redaction runs on the loop), up to the 2,000 actions a takeover keeps;
   redone whole at every batch it took ~340 ms at 2,000;
3. Hand back's time, which records the takeover's own event.

    .venv/bin/python bench/bench_takeover_record.py

A real TaskRun and SQLite store, with two stored secrets and card and e-mail masking on; no browser (nothing here
touches one). Prints; asserts nothing.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

BATCH = 5  # actions a batch: capture.js sends what the person did in ~250 ms
MEASURED = 20  # batches measured at each length


class _Tab:
    closed = False

    class input_log:
        refused = None

    async def url(self) -> str:
        return "https://shop.example/cart"


class _Browser:
    async def current_tab(self) -> _Tab:
        return _Tab()

    async def close(self) -> None:
        pass

    async def guard_navigation(self, guard: Any) -> None:
        pass


def _action(i: int, typed: int = 0) -> dict[str, Any]:
    """The action on field `i`; `typed` more letters: the field typed in on (an `again` report)."""
    return {"kind": "input", "target": f'textbox "Field {i}"', "value": f"value {i} ada@example.org" + "x" * typed,
            "url": "https://shop.example/form", "at": i, **({"again": True} if typed else {})}


def _size(path: Path) -> int:
    return path.stat().st_size


async def _taken_over(home: str, store: Any) -> Any:
    from tabpilot.store.settings import Settings
    from tabpilot.taskrun.plan import plan_task
    from tabpilot.taskrun.run import TaskRun

    settings = Settings.model_validate({"baseURL": "http://127.0.0.1:9/v1", "model": "scripted", "maskEmails": True})
    run = TaskRun(plan_task("Buy socks", source="popup", settings=settings), store, _Browser(), recipe={"tabId": 1})
    await run.begin("https://shop.example/")
    assert await run.take_over("user")  # the agent waits, paused, for the person: no model is asked
    return run


async def _writes(home: str, store: Any, length: int) -> None:
    """A takeover grown to `length` actions, then: a batch of BATCH new actions, and a batch that is the field
    typed in on (one `again` report, capture.js's 0.2 s report while typing)."""
    run = await _taken_over(home, store)
    executing = asyncio.ensure_future(run.execute())
    for start in range(0, length, BATCH):
        run.add_takeover_actions([_action(i) for i in range(start, min(length, start + BATCH))])
    await run._writer.drained()
    wal = Path(f"{store.path}-wal")
    for name, batch in (("5 new actions", lambda n, _: [_action(n + i) for i in range(BATCH)]),
                        ("1 field typed on", lambda n, typed: [_action(n - 1, typed)])):
        sizes, times = [], []
        for typed in range(1, MEASURED + 1):
            before = _size(wal)
            began = time.perf_counter()
            assert run._takeover is not None
            run.add_takeover_actions(batch(len(run._takeover.actions), typed))
            await run._writer.drained()
            times.append((time.perf_counter() - began) * 1000)
            sizes.append(_size(wal) - before)
        print(f"  {length:5d} actions, a batch of {name:16s}: {statistics.median(sizes) / 1024:8.1f} KiB written,"
              f" {statistics.median(times):6.2f} ms to the record (median of {MEASURED})")
    await run.stop()
    await executing


async def main() -> None:
    with tempfile.TemporaryDirectory() as home:
        os.environ["TABPILOT_HOME"] = home
        from tabpilot.privacy.secrets import set_secret
        from tabpilot.store.tasks import TaskStore

        for name, value in (("SHOP_KEY", "sk-shop-1234567890"), ("SHOP_PW", "hunter2-Horse-9")):
            set_secret(name, "shop.example", value, path=Path(home) / "config" / "secrets.json")
        store = TaskStore(Path(home) / "tasks.sqlite3")
        store._db.execute("PRAGMA wal_autocheckpoint=0")  # the log only grows: its growth is what was written
        print("what a batch writes to the record, by the takeover's length")
        for length in (10, 1000):
            await _writes(home, store, length)

        run = await _taken_over(home, store)
        executing = asyncio.ensure_future(run.execute())
        print(f"loop time a batch of {BATCH} actions, by the takeover's length (median of the batches up to it)")
        costs: list[float] = []
        marks = {100, 500, 1000, 2000}
        for start in range(0, 2000, BATCH):
            began = time.perf_counter()
            run.add_takeover_actions([_action(i) for i in range(start, start + BATCH)])
            costs.append((time.perf_counter() - began) * 1000)
            if start + BATCH in marks:
                print(f"  {start + BATCH:5d} actions: {statistics.median(costs[-20:]):7.2f} ms")
        # Hand back records the takeover's own event: the loop's time for it, and for redacting that event whole
        # (what Hand back did before it reused the actions redacted as they came)
        assert run._takeover is not None
        whole = run._takeover.event(url_after="https://shop.example/done", note=None).to_wire()
        began = time.perf_counter()
        run._shown(whole)
        whole_ms = (time.perf_counter() - began) * 1000
        began = time.perf_counter()
        await run.hand_back()
        print(f"Hand back after 2000 actions: {(time.perf_counter() - began) * 1000:.1f} ms "
              f"(the event redacted whole: {whole_ms:.1f} ms)")
        await run.stop()
        await executing  # the run's end, after every write it queued
        store.close()


if __name__ == "__main__":
    asyncio.run(main())
