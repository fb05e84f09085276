"""Run states in the record: what a running task needs beyond its events to go on in the next host (the
extension's service worker restarted). Real SQLite files; "another process" is a row whose owner is a pid
that does not exist."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from tabpilot.store.resumable import none_resumable
from tabpilot.store.tasks import SCHEMA_VERSION, StoreError, TaskStore

DEAD_OWNER = "999999999"  # no such process


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("TABPILOT_HOME", str(tmp_path))
    with TaskStore() as task_store:
        yield task_store


def rows(store: TaskStore, sql: str, *params: object) -> list[tuple]:
    with sqlite3.connect(store.path) as db:
        return db.execute(sql, params).fetchall()


def left_by_a_dead_host(store: TaskStore, task_id: str) -> None:
    with sqlite3.connect(store.path) as db:
        db.execute("UPDATE tasks SET owner = ? WHERE id = ?", (DEAD_OWNER, task_id))


def test_a_suspended_task_waits_for_a_host_to_resume_it_and_only_one_claims_it(store: TaskStore) -> None:
    resumable = store.start_task("resumable", source="popup")
    store.save_run_state(resumable, {"tabId": 7, "takeover": {"reason": "user", "actions": []}}, suspended=True)
    crashed = store.start_task("its host died without suspending it", source="popup")
    store.save_run_state(crashed, {"tabId": 8})
    plain = store.start_task("not resumable", source="page")
    for task_id in (resumable, crashed, plain):
        left_by_a_dead_host(store, task_id)

    assert store.mark_interrupted() == 2  # `tabpilot history` or another host: all but the suspended one
    for task_id in (crashed, plain):
        assert store.get_task(task_id).summary.status == "interrupted"  # type: ignore[union-attr]
    [orphan] = store.orphans()
    assert (orphan.task_id, orphan.alive, orphan.state["tabId"]) == (resumable, False, 7)
    assert store.claim(orphan) and not store.claim(orphan)  # a second host loses the race
    assert store.orphans() == []  # it is this process's task now


def test_a_running_task_claimed_by_a_live_host_is_shown_while_it_suspends(store: TaskStore) -> None:
    task_id = store.start_task("being suspended", source="popup")
    store.save_run_state(task_id, {"tabId": 1})  # from its start: the next host knows to wait for this one
    with sqlite3.connect(store.path) as db:
        db.execute("UPDATE tasks SET owner = ? WHERE id = ?", (f"{os.getppid()}", task_id))  # a live process
    [orphan] = store.orphans()
    assert (orphan.alive, orphan.suspended) == (True, False)


def test_a_finished_task_leaves_no_run_state(store: TaskStore) -> None:
    task_id = store.start_task("done", source="popup")
    store.save_run_state(task_id, {"tabId": 1}, suspended=True)
    store.finish_task(task_id, status="stopped", result={"success": False, "data": "Task stopped"})
    left_by_a_dead_host(store, task_id)
    assert store.orphans() == [] and store.mark_interrupted() == 0 and rows(store, "SELECT * FROM run_states") == []
    assert store.get_task(task_id).summary.status == "stopped"  # type: ignore[union-attr]


def typed(value: str, field: str = "Email") -> dict:
    return {"kind": "input", "target": f'textbox "{field}"', "value": value, "url": "https://a.example/", "at": 5}


def takeover_event(*values: str, note: bool = True) -> dict:
    """A takeover as TaskRun keeps it while under way (taskrun/takeover.py Takeover.unfinished)."""
    return {"type": "user_takeover", "reason": "user", "startedAt": 1, "endedAt": 5, "actions": [
        typed(v) for v in values] + ([{"kind": "note", "description": "(cut short)"}] if note else [])}


def keep(store: TaskStore, task_id: str, *values: str, start: int = 0) -> None:
    """Keep the takeover under way as TaskRun does: its head (the note after the person's actions), and their
    actions from `start` on."""
    event = takeover_event()
    store.keep_open_takeover(task_id, event, [typed(v) for v in values], start)


def open_rows(store: TaskStore) -> list[tuple]:
    return rows(store, "SELECT task_id FROM takeover_heads UNION ALL SELECT task_id FROM takeover_actions"
                       " UNION ALL SELECT task_id FROM open_takeovers")


def test_a_takeover_under_way_when_its_host_dies_is_appended_to_the_interrupted_task(store: TaskStore) -> None:
    task_id = store.start_task("taken over", source="page")
    store.append_event(task_id, {"type": "observation", "content": "before"})
    store.add_secret("sk-SECRET-0000")
    keep(store, task_id, "a@b.c", "x")
    keep(store, task_id, "a@b.c sk-SECRET-0000", start=0)  # typed on in the first field: the latest is kept, redacted
    assert store.open_takeover(task_id) == {**takeover_event("a@b.c [redacted]"), "type": "user_takeover"}
    keep(store, task_id, "a@b.c sk-SECRET-0000", "y", start=0)
    keep(store, task_id, "y", "z", start=1)  # the last one again, and a new one
    left_by_a_dead_host(store, task_id)
    assert store.mark_interrupted() == 1
    record = store.get_task(task_id)
    assert record is not None and record.summary.status == "interrupted"
    [before, took] = record.events
    assert before["type"] == "observation" and took["type"] == "user_takeover"
    assert [a.get("value") for a in took["actions"]] == ["a@b.c [redacted]", "y", "z", None], took
    assert open_rows(store) == [] and store.open_takeover(task_id) is None  # once: a second start adds nothing
    assert store.mark_interrupted() == 0 and len(store.get_task(task_id).events) == 2  # type: ignore[union-attr]


def test_a_takeover_ended_by_its_event_leaves_nothing_open_and_an_ended_task_keeps_an_open_one(
    store: TaskStore,
) -> None:
    handed_back = store.start_task("handed back", source="popup")
    keep(store, handed_back, "x")
    store.append_event(handed_back, takeover_event("x", "xy", note=False))  # Hand back: the event itself
    assert open_rows(store) == []
    store.finish_task(handed_back, status="completed", result={"success": True, "data": "ok"})
    assert len(store.get_task(handed_back).events) == 1  # type: ignore[union-attr]

    cut_short = store.start_task("could not go on", source="popup")  # e.g. its tab was gone at resume
    keep(store, cut_short, "typed")
    store.settle_open_takeover(cut_short)
    store.append_event(cut_short, {"type": "error", "message": "the tab is gone"})
    store.finish_task(cut_short, status="error", result={"success": False, "data": "the tab is gone"})
    assert [e["type"] for e in store.get_task(cut_short).events] == ["user_takeover", "error"]  # type: ignore[union-attr]

    ended = store.start_task("ended while taken over", source="popup")  # any other path to the end keeps it too
    keep(store, ended, "kept")
    store.finish_task(ended, status="stopped", result={"success": False, "data": "Task stopped"})
    assert [e["type"] for e in store.get_task(ended).events] == ["user_takeover"]  # type: ignore[union-attr]
    keep(store, ended, "kept")
    store.drop_open_takeover(ended)
    assert open_rows(store) == []


def test_a_record_of_a_tabpilot_without_open_takeovers_gets_the_table_and_keeps_its_schema(store: TaskStore) -> None:
    task_id = store.start_task("older", source="popup")
    with sqlite3.connect(store.path) as db:
        for table in ("open_takeovers", "takeover_heads", "takeover_actions"):
            db.execute(f"DROP TABLE {table}")  # as a tabpilot that did not have them made the file
    with TaskStore(store.path) as again:
        keep(again, task_id, "typed")
    assert rows(store, "SELECT task_id FROM takeover_heads") == [(task_id,)]
    assert rows(store, "PRAGMA user_version") == [(SCHEMA_VERSION,)]  # an older tabpilot still opens it


def test_a_takeover_an_older_tabpilot_kept_whole_is_still_appended_and_then_kept_by_rows(store: TaskStore) -> None:
    # tabpilot before takeover_heads kept the takeover under way as its whole event in open_takeovers
    import json

    left = store.start_task("left by an older host", source="popup")
    resumed = store.start_task("resumed", source="popup")
    with sqlite3.connect(store.path) as db:
        for task_id in (left, resumed):
            db.execute("INSERT INTO open_takeovers (task_id, body, saved_at) VALUES (?, ?, 1)",
                       (task_id, json.dumps(takeover_event("old form"))))
    assert store.open_takeover(left) == takeover_event("old form")
    keep(store, resumed, "new form")  # a host that knows the rows went on with it
    assert store.open_takeover(resumed) == takeover_event("new form")
    left_by_a_dead_host(store, left)
    left_by_a_dead_host(store, resumed)
    assert store.mark_interrupted() == 2
    for task_id, value in ((left, "old form"), (resumed, "new form")):
        assert store.get_task(task_id).events == [takeover_event(value)]  # type: ignore[union-attr]
    assert open_rows(store) == []


def test_only_the_takeover_of_a_task_no_host_runs_can_be_amended(store: TaskStore) -> None:
    from tabpilot.store.tasks import TaskNotFound

    def add(event: dict) -> dict:
        return {**event, "actions": [typed("late sk-SECRET-0000"), *event["actions"]]}

    store.add_secret("sk-SECRET-0000")
    running = store.start_task("running", source="popup")
    store.append_event(running, takeover_event("typed"))
    assert not store.amend_last_takeover(running, add)  # a run's events are its run's
    interrupted = store.start_task("its host died", source="popup")
    assert not store.amend_last_takeover(interrupted, add)  # running until the next start finds it interrupted
    keep(store, interrupted, "typed")
    left_by_a_dead_host(store, interrupted)
    store.mark_interrupted()
    store.append_event(running, {"type": "observation", "content": "not this task's"})
    assert store.amend_last_takeover(interrupted, add)
    [event] = store.get_task(interrupted).events  # type: ignore[union-attr]
    assert [a.get("value") for a in event["actions"]] == ["late [redacted]", "typed", None]
    assert not store.amend_last_takeover(interrupted, lambda event: None)  # left as it is
    with pytest.raises(TaskNotFound):
        store.amend_last_takeover("no-such-task", add)


def test_a_database_of_the_previous_schema_gets_run_states(tmp_path: Path) -> None:
    path = tmp_path / "v1.sqlite3"
    with sqlite3.connect(path) as db:
        db.executescript(
            "CREATE TABLE tasks (id TEXT PRIMARY KEY, task TEXT NOT NULL, status TEXT NOT NULL, source TEXT NOT NULL,"
            " url TEXT, model TEXT, started_at REAL NOT NULL, ended_at REAL, steps INTEGER NOT NULL DEFAULT 0,"
            " prompt_tokens INTEGER NOT NULL DEFAULT 0, completion_tokens INTEGER NOT NULL DEFAULT 0,"
            " total_tokens INTEGER NOT NULL DEFAULT 0, result TEXT, owner TEXT);"
            "CREATE TABLE events (task_id TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE, seq INTEGER NOT NULL,"
            " type TEXT NOT NULL, created_at REAL NOT NULL, body TEXT NOT NULL, PRIMARY KEY (task_id, seq));"
            f"INSERT INTO tasks (id, task, status, source, started_at, owner) VALUES"
            f" ('old', 'an old task', 'running', 'popup', 1, '{DEAD_OWNER}');"
            "PRAGMA user_version=1;"
        )
    with TaskStore(path) as store:
        assert store.mark_interrupted() == 1 and store.orphans() == []
        task_id = store.start_task("new", source="page", requester="https://app.example")
        store.save_run_state(task_id, {"tabId": 3})
        # and its tasks get the requester column (schema 3): none for the old one, the page's for the new
        assert [(s.task_id, s.requester) for s in store.list_tasks(5)] == [
            (task_id, "https://app.example"), ("old", None)]
        # a task asked for and never run fits the older record as it is (status, requester, result)
        store.add_secret("sk-OLD-KEY-1234")
        said_no = store.record_not_run("Pay with sk-OLD-KEY-1234", status="denied", source="mcp",
                                       requester="Agent X", why="you said no", asked_at=5.0)
        record = store.get_task(said_no)
        assert record is not None and record.events == []
        summary = record.summary
        assert (summary.status, summary.requester, summary.started_at) == ("denied", "Agent X", 5.0)
        assert record.result == {"success": False, "data": "you said no"}
        assert "sk-OLD-KEY" not in record.summary.task
        with pytest.raises(StoreError):
            store.record_not_run("x", status="completed", source="mcp", requester=None, why="")
        assert store.mark_interrupted() == 0  # never taken for a task a host left running
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,) == (3,)
    tables = {row[0] for row in sqlite3.connect(path).execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert "open_takeovers" in tables  # a takeover under way is kept (a table older versions leave alone)


def test_the_file_beside_the_record_says_no_task_can_be_resumed_only_while_none_can(store: TaskStore) -> None:
    # The native host answers the browser's first hello without the record when it says so (store/resumable.py).
    assert not none_resumable(store.path)  # not counted yet (an older record too): the next host reads the record
    store.mark_interrupted()  # as every host does on opening the record
    assert none_resumable(store.path)
    task_id = store.start_task("typing a name", source="popup")
    assert none_resumable(store.path)  # running, but with nothing to go on with elsewhere
    store.save_run_state(task_id, {"tabId": 3})
    assert not none_resumable(store.path)
    store.save_run_state(task_id, None)
    assert none_resumable(store.path)
    store.save_run_state(task_id, {"tabId": 3}, suspended=True)
    assert not none_resumable(store.path)
    store.finish_task(task_id, status="completed", result=None)
    assert none_resumable(store.path)

    # a suspended task left by a host that went away: no file, whoever opens the record (the next host resumes it)
    suspended = store.start_task("suspended", source="popup")
    store.save_run_state(suspended, {"tabId": 4}, suspended=True)
    left_by_a_dead_host(store, suspended)
    store.mark_interrupted()
    assert not none_resumable(store.path)
    assert store.delete_task(suspended)
    assert none_resumable(store.path)
