"""The task record on a real SQLite file: what is appended is there, in order, at once, without secrets."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from store_support import API_KEY, step

from tabpilot.store.ids import new_task_id
from tabpilot.store.owner import current_owner
from tabpilot.store.tasks import OUTCOME_CHARS, StoreError, TaskNotFound, TaskStore


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TABPILOT_HOME", str(tmp_path))
    return tmp_path


@pytest.fixture
def store(home: Path):
    with TaskStore() as task_store:
        yield task_store


def rows(db_path: Path, sql: str, *params: object) -> list[tuple]:
    """Read the database with a separate plain connection: what another process would see."""
    with sqlite3.connect(db_path) as db:
        return db.execute(sql, params).fetchall()


def test_default_path_is_under_tabpilot_home(store: TaskStore, home: Path) -> None:
    assert store.path == home / "data" / "tasks.sqlite3"
    assert store.path.exists()


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permission bits")
def test_database_files_are_owner_only(store: TaskStore) -> None:
    store.append_event(store.start_task("private page text"), step(0))
    files = list(store.path.parent.iterdir())
    assert {f.name for f in files} >= {"tasks.sqlite3", "tasks.sqlite3-wal"}
    assert {f.name: stat.S_IMODE(f.stat().st_mode) for f in files} == {f.name: 0o600 for f in files}


def test_a_task_and_its_events_are_recorded_in_order(store: TaskStore) -> None:
    task_id = store.start_task("Fill the form", url="http://127.0.0.1/form.html", model="m1", source="popup")
    events = [
        step(0, "type the name", prompt=1000, completion=40),
        {"type": "observation", "content": "URL changed to /next"},
        {"type": "retry", "message": "timeout", "attempt": 1, "maxAttempts": 3},
        step(1, "submit", prompt=1200, completion=60),
        {"type": "user_takeover", "actions": [{"description": "typed a"}], "note": "fixed the date"},
        {"type": "error", "message": "model unreachable"},
    ]
    for event in events:
        store.append_event(task_id, event)

    # Visible to another connection before the task finishes: each event is committed as it comes.
    stored = rows(store.path, "SELECT seq, type, body FROM events WHERE task_id = ? ORDER BY seq", task_id)
    assert [(seq, kind) for seq, kind, _ in stored] == [(i, e["type"]) for i, e in enumerate(events)]
    assert [json.loads(body) for _, _, body in stored] == events
    assert rows(store.path, "SELECT status, steps, prompt_tokens, completion_tokens, total_tokens FROM tasks") == [
        ("running", 2, 2200, 100, 2300)
    ]

    store.finish_task(task_id, status="completed", result={"success": True, "data": "Sent.", "history": events})
    record = store.get_task(task_id)
    assert record is not None
    assert record.events == events  # the result's history was not stored a second time
    assert record.result == {"success": True, "data": "Sent."}
    summary = record.summary
    assert (summary.status, summary.steps, summary.total_tokens) == ("completed", 2, 2300)
    assert (summary.url, summary.model, summary.source) == ("http://127.0.0.1/form.html", "m1", "popup")
    assert summary.result_text == "Sent."
    assert summary.success is True
    assert summary.ended_at is not None and summary.ended_at >= summary.started_at


def test_list_is_newest_first_and_limited(store: TaskStore) -> None:
    ids = [store.start_task(f"task {n}") for n in range(5)]
    assert [t.task_id for t in store.list_tasks()] == ids[::-1]
    assert [t.task for t in store.list_tasks(limit=2)] == ["task 4", "task 3"]


def test_a_listed_task_says_how_it_ended_in_a_line_and_whether_the_person_took_over(store: TaskStore) -> None:
    done = store.start_task("Click the Save button")
    store.append_event(done, {"type": "user_takeover", "actions": [], "startedAt": 1, "endedAt": 2})
    result = {"success": True, "data": "\n  Saved the draft.\nMore " + "x" * 300}
    store.finish_task(done, status="completed", result=result)
    failed = store.start_task("Click the Save button")  # ended by an error its code words in the reader's language
    store.append_event(failed, {"type": "error", "message": "Step count exceeded maximum limit", "code": "max_steps"})
    store.finish_task(failed, status="error", result={"success": False, "data": "Step count exceeded maximum limit"})
    running = store.start_task("Click the Save button")  # the person has the controls right now
    store.keep_open_takeover(running, {"type": "user_takeover", "startedAt": 3}, [{"kind": "click", "at": 3.5}])
    listed = {task.task_id: task for task in store.list_tasks()}
    assert [listed[task_id].took_over for task_id in (done, failed, running)] == [True, False, True]
    assert listed[done].outcome() == "Saved the draft."  # its first line
    assert listed[failed].outcome("zh-CN") == "步数已超过上限，任务没有完成。"
    assert listed[failed].outcome("en-US") == "Step count exceeded maximum limit"
    assert listed[running].outcome() is None
    long = store.start_task("Say it all")
    store.finish_task(long, status="completed", result={"success": True, "data": "word " * 100})
    outcome = store.list_tasks(1)[0].outcome()
    assert outcome is not None and len(outcome) == OUTCOME_CHARS and outcome.endswith("…")


def test_ids_are_short_unique_and_sort_by_creation() -> None:
    ids = [new_task_id() for _ in range(2000)]
    assert len(set(ids)) == len(ids)
    assert ids == sorted(ids)
    assert all(len(i) == 12 and i.isalnum() and i == i.lower() for i in ids)


def test_raw_llm_io_is_dropped_unless_debug_capture_is_on(home: Path) -> None:
    raw = {"rawRequest": {"messages": [{"content": "<page text>"}]}, "rawResponse": {"choices": []}}
    with TaskStore() as off:
        task_off = off.start_task("no capture")
        off.append_event(task_off, step(0, **raw))
        off.append_event(task_off, {"type": "error", "message": "bad", "rawResponse": "garbage"})
    with TaskStore(capture_raw=True) as on:
        task_on = on.start_task("capture")
        on.append_event(task_on, step(0, **raw))
        bodies_off = [json.loads(b) for (b,) in rows(on.path, "SELECT body FROM events WHERE task_id = ?", task_off)]
        bodies_on = [json.loads(b) for (b,) in rows(on.path, "SELECT body FROM events WHERE task_id = ?", task_on)]
    assert all("rawRequest" not in b and "rawResponse" not in b for b in bodies_off)
    assert bodies_off[1] == {"type": "error", "message": "bad"}
    assert bodies_on[0]["rawRequest"] == raw["rawRequest"]
    assert bodies_on[0]["rawResponse"] == raw["rawResponse"]


def test_secrets_never_reach_the_database_or_an_export(home: Path) -> None:
    with TaskStore(capture_raw=True, secrets=[API_KEY]) as store:
        task_id = store.start_task(f"log in with {API_KEY}")
        store.append_event(
            task_id,
            step(
                0,
                rawRequest={"headers": {"Authorization": f"Bearer {API_KEY}"}, "api_key": API_KEY},
                rawResponse=f"echo: {API_KEY}",
            ),
        )
        store.append_event(task_id, {"type": "observation", "content": "token: Bearer abcdefghijklmnop1234"})
        store.append_event(
            task_id,
            {
                "type": "step",
                "stepIndex": 1,
                "reflection": {"next_goal": "configure"},
                "action": {"name": "input_text", "input": {"apiKey": "some-other-key"}, "output": f"key={API_KEY}"},
            },
        )
        store.append_event(task_id, {"type": "observation", "content": "sk-proj-ZZZZZZZZZZZZZZZZZZZZZZZZZZZZ leaked"})
        store.finish_task(task_id, status="completed", result={"success": True, "data": f"done {API_KEY}"})
        export = json.dumps(store.export_task(task_id, include_raw=True))
        record = store.get_task(task_id)

    database = b"".join(path.read_bytes() for path in (home / "data").iterdir())  # db, WAL and all
    assert b"[redacted]" in database  # the rows are in what we read
    for secret in (API_KEY, "some-other-key", "abcdefghijklmnop1234", "sk-proj-ZZZZ"):
        assert secret.encode() not in database, secret
        assert secret not in export, secret
    assert record is not None
    assert record.events[0]["rawRequest"]["headers"]["Authorization"] == "[redacted]"
    assert record.events[2]["action"]["input"] == {"apiKey": "[redacted]"}
    assert record.summary.task == "log in with [redacted]"


def test_export_is_page_agent_shaped_without_raw_when_capture_is_off(store: TaskStore) -> None:
    task_id = store.start_task("Find the price", url="http://x.test/", model="m")
    store.append_event(task_id, step(0, rawResponse={"secret page": 1}))
    store.append_event(task_id, {"type": "observation", "content": "waited 3 s"})
    store.finish_task(task_id, status="error", result={"success": False, "data": "Gave up."})
    export = store.export_task(task_id)
    assert export["task"] == "Find the price"
    assert export["status"] == "error"
    assert export["success"] is False
    assert export["data"] == "Gave up."
    assert [e["type"] for e in export["history"]] == ["step", "observation"]
    assert "rawResponse" not in export["history"][0]
    assert export["usage"] == {"promptTokens": 100, "completionTokens": 10, "totalTokens": 110}
    json.dumps(export)  # plain JSON


def test_export_puts_the_execution_result_at_the_top_and_data_is_always_text(store: TaskStore) -> None:
    finished = store.start_task("Say hi")
    store.finish_task(finished, status="completed", result={"success": True, "data": "hi"})
    export = store.export_task(finished)
    assert {"success", "data", "history", "task", "taskId", "status", "usage"} <= set(export)
    assert "result" not in export  # page-agent's ExecutionResult is the top level, not nested
    assert (export["success"], export["data"], export["history"]) == (True, "hi", [])
    running = store.start_task("Still going")
    store.append_event(running, {"type": "observation", "content": "o"})
    export = store.export_task(running)
    assert export["success"] is False and export["data"] == "The task is still running."
    assert export["history"] == [{"type": "observation", "content": "o"}]
    stopped = store.start_task("Stopped without a result")
    store.finish_task(stopped, status="stopped", result=None)
    assert store.export_task(stopped)["data"] == "The task was stopped."


def test_a_result_history_is_kept_when_no_events_were_appended(store: TaskStore) -> None:
    task_id = store.start_task("one shot")
    history = [step(0), {"type": "observation", "content": "o"}]
    store.finish_task(task_id, status="completed", result={"success": True, "data": "ok", "history": history})
    record = store.get_task(task_id)
    assert record is not None
    assert record.events == history
    assert record.summary.steps == 1


def test_bad_input_gets_clear_errors_and_changes_nothing(store: TaskStore) -> None:
    task_id = store.start_task("t")
    with pytest.raises(StoreError, match="'type'"):
        store.append_event(task_id, {"stepIndex": 0})
    with pytest.raises(StoreError, match="'type'"):
        store.append_event(task_id, "not an event")  # type: ignore[arg-type]
    with pytest.raises(TaskNotFound, match="nope"):
        store.append_event("nope", {"type": "observation", "content": "x"})
    with pytest.raises(StoreError, match="status must be one of"):
        store.finish_task(task_id, status="done", result=None)
    with pytest.raises(TaskNotFound):
        store.finish_task("nope", status="completed", result=None)
    with pytest.raises(StoreError, match="some text"):
        store.start_task("   ")
    with pytest.raises(TaskNotFound):
        store.export_task("nope")
    assert rows(store.path, "SELECT COUNT(*) FROM events") == [(0,)]
    assert [t.status for t in store.list_tasks()] == ["running"]
    # A value JSON cannot hold is written as text rather than losing the event.
    store.append_event(task_id, {"type": "observation", "content": Path("/x")})
    assert store.get_task(task_id).events == [{"type": "observation", "content": "/x"}]  # type: ignore[union-attr]


def test_id_prefixes_resolve_like_git(store: TaskStore) -> None:
    first, second = store.start_task("a"), store.start_task("b")
    differ_at = next(i for i, (a, b) in enumerate(zip(first, second, strict=True)) if a != b)
    common = first[:differ_at]  # same millisecond-clock prefix
    assert store.resolve_id(first) == first
    assert store.resolve_id(second[: differ_at + 1].upper()) == second
    with pytest.raises(TaskNotFound, match="ambiguous"):
        store.resolve_id(common)
    with pytest.raises(TaskNotFound, match="no task"):
        store.resolve_id("zzzz")
    with pytest.raises(TaskNotFound):
        store.resolve_id("%")  # LIKE wildcards are taken literally


def test_delete_removes_the_task_and_its_events(store: TaskStore) -> None:
    keep, drop = store.start_task("keep"), store.start_task("drop")
    for task_id in (keep, drop):
        store.append_event(task_id, step(0))
        store.finish_task(task_id, status="stopped", result=None)
    assert store.delete_task(drop) is True
    assert store.delete_task(drop) is False
    assert store.get_task(drop) is None
    assert rows(store.path, "SELECT DISTINCT task_id FROM events") == [(keep,)]


def test_a_task_running_in_a_live_process_is_neither_interrupted_nor_deleted(store: TaskStore) -> None:
    task_id = store.start_task("still going")  # owned by this (live) process
    assert store.mark_interrupted() == 0
    assert store.list_tasks()[0].status == "running"
    with pytest.raises(StoreError, match="still running"):
        store.delete_task(task_id)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="process identity comes from /proc")
def test_a_reused_pid_or_a_reboot_does_not_keep_a_dead_task_running(store: TaskStore) -> None:
    live_pid = os.getpid()  # a pid that certainly exists now
    owners = {
        "before a reboot": f"{live_pid}:another-boot-id:12345",
        "pid reused by another program": f"{live_pid}:{current_owner().split(':', 2)[1]}:1",
        "pid only, still alive": str(live_pid),
    }
    ids = {}
    for case, owner in owners.items():
        ids[case] = store.start_task(case)
        with sqlite3.connect(store.path) as db:
            db.execute("UPDATE tasks SET owner = ? WHERE id = ?", (owner, ids[case]))
    assert store.mark_interrupted() == 2
    statuses = {t.task: t.status for t in store.list_tasks()}
    assert statuses == {
        "before a reboot": "interrupted",
        "pid reused by another program": "interrupted",
        "pid only, still alive": "running",
    }


def test_threads_appending_at_once_lose_nothing(store: TaskStore) -> None:
    task_ids = [store.start_task(f"t{n}") for n in range(4)]

    def append_many(task_id: str) -> None:
        for index in range(50):
            store.append_event(task_id, step(index))

    threads = [threading.Thread(target=append_many, args=(t,)) for t in task_ids]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for task_id in task_ids:
        record = store.get_task(task_id)
        assert record is not None
        assert [e["stepIndex"] for e in record.events] == list(range(50))
        assert record.summary.steps == 50
        assert record.summary.total_tokens == 50 * 110


CRASHING_WRITER = """
import sys, time
from tabpilot.store.tasks import TaskStore
from store_support import step
store = TaskStore()
task_id = store.start_task("will be killed", url="http://127.0.0.1/", model="m")
for index in range(3):
    store.append_event(task_id, step(index))
store.append_event(task_id, {"type": "observation", "content": "last words"})
print(task_id, flush=True)
time.sleep(120)
"""


def test_events_survive_a_killed_process_and_the_task_is_marked_interrupted(home: Path) -> None:
    env = {**os.environ, "TABPILOT_HOME": str(home), "PYTHONPATH": str(Path(__file__).parent)}
    writer = subprocess.Popen(
        [sys.executable, "-c", CRASHING_WRITER],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        task_id = writer.stdout.readline().strip()  # type: ignore[union-attr]
        assert task_id, "the writer did not start"
        with TaskStore() as store:
            assert store.mark_interrupted() == 0  # its process is alive: not interrupted yet
    finally:
        writer.kill()  # SIGKILL: no cleanup, no atexit, no close()
        writer.wait()
        writer.stdout.close()  # type: ignore[union-attr]

    with TaskStore() as store:
        assert store.list_tasks()[0].status == "running"
        assert store.mark_interrupted() == 1
        assert store.mark_interrupted() == 0
        record = store.get_task(task_id)
    assert record is not None
    assert record.summary.status == "interrupted"
    assert [e["type"] for e in record.events] == ["step", "step", "step", "observation"]
    assert record.events[-1]["content"] == "last words"
    assert record.summary.steps == 3
    assert record.summary.ended_at == record.stored_events[-1].created_at


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="zombies are read from /proc")
def test_a_killed_process_not_yet_reaped_counts_as_dead(home: Path) -> None:
    env = {**os.environ, "TABPILOT_HOME": str(home), "PYTHONPATH": str(Path(__file__).parent)}
    writer = subprocess.Popen([sys.executable, "-c", CRASHING_WRITER], stdout=subprocess.PIPE, text=True, env=env)
    try:
        task_id = writer.stdout.readline().strip()  # type: ignore[union-attr]
        writer.kill()
        os.waitid(os.P_PID, writer.pid, os.WEXITED | os.WNOWAIT)  # dead, but left unreaped: a zombie
        with TaskStore() as store:
            assert store.mark_interrupted() == 1
            assert store.get_task(task_id).summary.status == "interrupted"  # type: ignore[union-attr]
    finally:
        writer.kill()
        writer.wait()
        writer.stdout.close()  # type: ignore[union-attr]


def test_a_database_from_a_newer_version_is_refused_clearly(home: Path) -> None:
    path = home / "newer.sqlite3"
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA user_version=99")
    with pytest.raises(StoreError, match="newer tabpilot"):
        TaskStore(path)


def test_a_file_that_is_not_a_database_is_kept_aside_and_one_that_cannot_be_opened_is_refused_clearly(
    home: Path,
) -> None:
    path = home / "garbage.sqlite3"
    path.write_bytes(b"this is not sqlite" * 100)
    with TaskStore(path) as store:  # kept aside (test_history_cli shows what the user is told)
        assert store.set_aside is not None and store.set_aside.read_bytes() == b"this is not sqlite" * 100
        assert store.list_tasks() == []
    folder = home / "a-folder.sqlite3"
    folder.mkdir()
    with pytest.raises(StoreError, match="cannot open the task database"):
        TaskStore(folder)


def test_scrubbing_leaves_ordinary_text_alone() -> None:
    from tabpilot.store.redact import scrub

    prose = {"content": "Bearer bonds and bearer instruments; the sky-blue task-list; Authorization required"}
    assert scrub(prose) == prose
    assert scrub({"headers": {"X-Api-Key": "k", "Password": "hunter2", "apiKey": None, "count": 3}}) == {
        "headers": {"X-Api-Key": "[redacted]", "Password": "[redacted]", "apiKey": None, "count": 3}
    }


@pytest.mark.skipif(sys.platform == "win32" or os.geteuid() == 0, reason="root ignores permission bits")
def test_an_unwritable_data_folder_is_reported_clearly(home: Path) -> None:
    folder = home / "locked"
    folder.mkdir(mode=0o500)
    try:
        with pytest.raises(StoreError, match="cannot open the task database"):
            TaskStore(folder / "tasks.sqlite3")
    finally:
        folder.chmod(0o700)


def test_a_path_that_is_a_folder_is_reported_clearly(home: Path) -> None:
    (home / "a-folder").mkdir()
    with pytest.raises(StoreError, match="cannot open the task database"):
        TaskStore(home / "a-folder")
