"""Keeping a takeover in the record as it grows (taskrun/run.py `_keep_takeover`): the event loop's time a batch
of the person's actions costs, as the takeover gets long. The redaction runs on the loop (the write itself is on
the run's writer thread); a takeover of 2,000 actions (its limit) redone whole at every batch took ~340 ms. Then
Hand back's time, which records the takeover's own event.

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


def _action(i: int) -> dict[str, Any]:
    return {"kind": "input", "target": f'textbox "Field {i}"', "value": f"value {i} ada@example.org",
            "url": "https://shop.example/form", "at": i}


async def main() -> None:
    with tempfile.TemporaryDirectory() as home:
        os.environ["TABPILOT_HOME"] = home
        from tabpilot.privacy.secrets import set_secret
        from tabpilot.store.settings import Settings
        from tabpilot.store.tasks import TaskStore
        from tabpilot.taskrun.plan import plan_task
        from tabpilot.taskrun.run import TaskRun

        for name, value in (("SHOP_KEY", "sk-shop-1234567890"), ("SHOP_PW", "hunter2-Horse-9")):
            set_secret(name, "shop.example", value, path=Path(home) / "config" / "secrets.json")
        settings = Settings.model_validate({"baseURL": "http://127.0.0.1:9/v1", "model": "scripted",
                                            "maskEmails": True})
        store = TaskStore(Path(home) / "tasks.sqlite3")
        run = TaskRun(plan_task("Buy socks", source="popup", settings=settings), store, _Browser(),
                      recipe={"tabId": 1})
        await run.begin("https://shop.example/")
        assert await run.take_over("user")  # the agent waits, paused, for the person: no model is asked
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
