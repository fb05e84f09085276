"""The record's cost per event: how long `append_event` (committed before it returns) takes, and
how fast history reads are on a store with many tasks. Prints numbers; asserts nothing.

    .venv/bin/python bench/bench_store.py
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from tabpilot.store.tasks import TaskStore


def step_event(index: int, raw: bool) -> dict:
    event = {
        "type": "step",
        "stepIndex": index,
        "reflection": {
            "evaluation_previous_goal": "Success: the search box was filled in.",
            "memory": "Searching for the cheapest flight; 3 of 5 results checked. " * 3,
            "next_goal": "Open the fourth result",
        },
        "action": {"name": "click_element_by_index", "input": {"index": 42}, "output": "Clicked element 42. " * 5},
        "usage": {"promptTokens": 5200, "completionTokens": 180, "totalTokens": 5380},
    }
    if raw:  # what debug capture stores: the whole prompt with the page in it
        event["rawRequest"] = {"messages": [{"role": "user", "content": "page text " * 6000}]}
        event["rawResponse"] = {"choices": [{"message": {"content": "x" * 2000}}]}
    return event


def time_appends(path: Path, count: int, raw: bool, synchronous: str = "NORMAL") -> list[float]:
    with TaskStore(path, capture_raw=raw) as store:
        store._db.execute(f"PRAGMA synchronous={synchronous}")  # NORMAL is what TaskStore uses
        task_id = store.start_task("benchmark task")
        timings = []
        for index in range(count):
            event = step_event(index, raw)
            started = time.perf_counter()
            store.append_event(task_id, event)
            timings.append(time.perf_counter() - started)
        store.finish_task(task_id, status="completed", result={"success": True, "data": "ok"})
    return timings


def describe(label: str, timings: list[float]) -> None:
    ms = sorted(t * 1000 for t in timings)
    p95 = ms[int(len(ms) * 0.95) - 1]
    print(f"{label:<44} median {statistics.median(ms):6.2f} ms   p95 {p95:6.2f} ms   max {ms[-1]:6.2f} ms")


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "tasks.sqlite3"
        describe("append_event, step (raw dropped), n=300", time_appends(path, 300, raw=False))
        describe("  same with synchronous=FULL (fsync each)", time_appends(path, 300, raw=False, synchronous="FULL"))
        describe("append_event, step + raw I/O (~60 kB), n=100", time_appends(path, 100, raw=True))

        with TaskStore(path) as store:
            for n in range(1000):
                task_id = store.start_task(f"task {n}")
                for index in range(5):
                    store.append_event(task_id, step_event(index, raw=False))
                store.finish_task(task_id, status="completed", result={"success": True, "data": "ok"})
            started = time.perf_counter()
            listed = store.list_tasks(50)
            list_ms = (time.perf_counter() - started) * 1000
            started = time.perf_counter()
            store.get_task(listed[-1].task_id)
            get_ms = (time.perf_counter() - started) * 1000
            started = time.perf_counter()
            store.resolve_id(listed[10].task_id[:10])
            resolve_ms = (time.perf_counter() - started) * 1000
        size_mb = sum(p.stat().st_size for p in Path(folder).iterdir()) / 1e6
        print(f"with 1000 tasks x 5 steps ({size_mb:.1f} MB on disk):")
        print(f"  list_tasks(50) {list_ms:.2f} ms   get_task {get_ms:.2f} ms   resolve_id(prefix) {resolve_ms:.2f} ms")


if __name__ == "__main__":
    main()
