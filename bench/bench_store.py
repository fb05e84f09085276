"""The record's cost per event: how long `append_event` (committed before it returns) takes, and
how fast history reads are on a store with many tasks: a page of Past tasks as the popup gets it (500 same-worded
tasks, a third of them taken over), and a search of them. Prints numbers; asserts nothing.

    .venv/bin/python bench/bench_store.py
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from tabpilot.store.search import TaskQuery
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


def fill_past_tasks(store: TaskStore, count: int, steps: int) -> None:
    """`count` tasks of the same words, as a new user's trial left them: each `steps` steps; a third taken over; from
    the popup, a terminal, a page and an MCP client in turn; a result of several lines."""
    sources = (("popup", None), ("cli", None), ("page", "https://shop.example"), ("mcp", "Claude Desktop"))
    for n in range(count):
        source, requester = sources[n % len(sources)]
        task_id = store.start_task("Click the Save button", source=source, requester=requester)
        for index in range(steps):
            store.append_event(task_id, step_event(index, raw=False))
            if n % 3 == 0 and index == steps // 2:
                store.append_event(task_id, {"type": "user_takeover", "actions": [], "startedAt": 1, "endedAt": 2})
        result = {"success": True, "data": f"Saved draft {n}.\n" + "The draft is in the Drafts folder. " * 20}
        store.finish_task(task_id, status="completed", result=result)


def time_reads(read: Callable[[], object], times: int = 60) -> str:
    """CPU time of `read` (SQLite runs in this process): wall times on the shared 2-core machine varied 13-48 ms for
    the same read."""
    timings = []
    for _ in range(times):
        started = time.process_time()
        read()
        timings.append((time.process_time() - started) * 1000)
    return f"CPU median {statistics.median(timings):6.2f} ms   min {min(timings):6.2f} ms"


def time_past_tasks(folder: Path) -> None:
    """What one page of Past tasks costs the host (history.list: the rows and their wire form, outcome and takeover
    mark included), and a `tabpilot history --search` over the same record."""
    with TaskStore(folder / "past.sqlite3") as store:
        fill_past_tasks(store, 500, 20)
        print("with 500 same-worded tasks x 21 events (a third taken over):")
        page = time_reads(lambda: [task.to_wire() for task in store.list_tasks(500)])
        print(f"  history.list of all 500 (rows + wire)   {page}")
        search = time_reads(lambda: store.list_tasks(50, TaskQuery.of("DRAFT 499")))
        print(f"  list --search 'DRAFT 499' (finds 1)     {search}")
        by_page = time_reads(lambda: store.list_tasks(500, TaskQuery.of(None, "page")))
        print(f"  list --requester page (125 of them)     {by_page}")


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
        time_past_tasks(Path(folder))


if __name__ == "__main__":
    main()
