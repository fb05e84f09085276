"""The record: every task and every history event, in SQLite, written the moment it happens.

One row per task (status, result, timings, token totals, URL, model) and one row per event, in order.
Each call is one short transaction, so a host killed mid-task loses nothing it already appended; the
next start marks such a task `interrupted` — unless its host suspended it (`save_run_state(...,
suspended=True)`: what its run needs beyond the events to go on), which the next native host resumes.
Events are stored as their page-agent wire JSON.

A takeover under way is kept too, as the `user_takeover` event it would be if it ended now
(`keep_open_takeover`: its head, and one row per action the person did, so a batch of actions writes those
actions, not the takeover again): it goes when its event is appended, and a task that ends without it (its
host died, or could not go on with it) gets it appended then."""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import os
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import paths
from ..i18n import event_text, result_words
from ..language import say
from ..textsafety import clipped
from .ids import new_task_id
from .owner import current_owner, owner_alive
from .redact import scrub, scrub_text, without_raw
from .resumable import marker
from .search import TaskQuery, started_by

log = logging.getLogger(__name__)

FINAL_STATUSES = ("completed", "error", "stopped")
# A task that never ran, asked for by a page or an MCP client: the person said no (or did not answer), the
# host refused it (not allowed, out of bounds, started without the person's yes), or its question was withdrawn
# before anyone answered (the page that asked went away, the MCP client stopped waiting, the host stopped).
# Recorded for the person to see.
NOT_RUN_STATUSES = ("denied", "refused", "withdrawn")
OUTCOME_CHARS = 120  # a past task's outcome as its row in a list shows it
DAMAGED = ("SQLITE_NOTADB", "SQLITE_CORRUPT")  # the file is no database (any more): nothing to wait for or retry
SCHEMA_VERSION = 3  # 2: run_states; 3: tasks.requester

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tasks (
    id                TEXT PRIMARY KEY,
    task              TEXT NOT NULL,
    status            TEXT NOT NULL,
    source            TEXT NOT NULL,
    url               TEXT,
    model             TEXT,
    started_at        REAL NOT NULL,
    ended_at          REAL,
    steps             INTEGER NOT NULL DEFAULT 0,
    prompt_tokens     INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    total_tokens      INTEGER NOT NULL DEFAULT 0,
    result            TEXT,
    owner             TEXT,
    requester         TEXT
);
CREATE INDEX IF NOT EXISTS tasks_started ON tasks (started_at);
CREATE TABLE IF NOT EXISTS events (
    task_id    TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL,
    type       TEXT NOT NULL,
    created_at REAL NOT NULL,
    body       TEXT NOT NULL,
    PRIMARY KEY (task_id, seq)
);
CREATE TABLE IF NOT EXISTS run_states (
    task_id   TEXT PRIMARY KEY REFERENCES tasks (id) ON DELETE CASCADE,
    body      TEXT NOT NULL,
    suspended INTEGER NOT NULL DEFAULT 0
);
"""
# Tables added without a new schema version: a tabpilot that does not know them reads and writes the record as before
# (a takeover it leaves open is appended by the next one that knows them), so versions sharing one record both work.
# open_takeovers: a takeover under way as its whole event, rewritten at every batch of actions (written by tabpilot
# before takeover_heads; still read). takeover_heads + takeover_actions: the event without the person's actions (its
# `actions` are the notes that follow theirs), and theirs one row each — a batch writes its own rows and the one row
# it may have changed (the field typed in on). Rewriting the event whole wrote ~290 KiB a batch at 1,000 actions
# against ~22 KiB at 10; by rows, ~12 KiB at both (bench/bench_takeover_record.py).
_OPEN_TAKEOVERS = """
CREATE TABLE IF NOT EXISTS open_takeovers (
    task_id  TEXT PRIMARY KEY REFERENCES tasks (id) ON DELETE CASCADE,
    body     TEXT NOT NULL,
    saved_at REAL NOT NULL
);
"""
_TAKEOVER_ROWS = """
CREATE TABLE IF NOT EXISTS takeover_heads (
    task_id  TEXT PRIMARY KEY REFERENCES tasks (id) ON DELETE CASCADE,
    body     TEXT NOT NULL,
    saved_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS takeover_actions (
    task_id TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    n       INTEGER NOT NULL,
    body    TEXT NOT NULL,
    PRIMARY KEY (task_id, n)
);
"""

# Which tasks the person took over in, for every row of a list (_SUMMARY_COLUMNS): without it each task's events were
# read to find one. Listing 500 tasks of 21 events took 13.8 ms of CPU before the mark, 23-25 ms with it and no index,
# 15.6-16.7 ms with it (bench/bench_store.py).
_TAKEOVER_INDEX = "CREATE INDEX IF NOT EXISTS events_takeovers ON events (task_id) WHERE type = 'user_takeover';"


class StoreError(Exception):
    """A store operation that cannot be done, with a message meant for the user: `str()` is the English,
    `text(language)` the reader's language when the message was raised by catalog key (`worded`)."""

    def __init__(self, message: str, key: str | None = None, values: dict[str, object] | None = None) -> None:
        super().__init__(message)
        self.key, self.values = key, values or {}

    @classmethod
    def worded(cls, key: str, **values: object) -> StoreError:
        return cls(say(key, "en-US", **values), key, values)

    def text(self, language: str | None) -> str:
        return say(self.key, language, **self.values) if self.key else str(self)


class TaskNotFound(StoreError, LookupError):
    def __init__(self, task_id: str, key: str = "history.no_task", **values: object) -> None:
        self.task_id = task_id
        values = values or {"task_id": task_id}
        super().__init__(say(key, "en-US", **values), key, values)


@dataclass(frozen=True)
class TaskSummary:
    task_id: str
    task: str
    status: str  # running | completed | error | stopped | interrupted
    source: str
    started_at: float  # unix seconds
    ended_at: float | None
    steps: int
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    url: str | None
    model: str | None
    result_text: str | None
    success: bool | None
    requester: str | None = None  # who asked: a page's origin, an MCP client's name (None: the person)
    gave_up: bool = False  # ended "error" by the agent's own verdict (agent_gave_up): not done, not an error
    took_over: bool = False  # the person took the controls during it (a user_takeover event, or one under way)
    ending_error: dict[str, Any] | None = None  # the error event it ended with, whose code words it in any language

    @property
    def started_by(self) -> str:
        """Who started it: "popup", "panel" (the side panel), "terminal", "page" or "mcp" (search.STARTED_BY)."""
        return started_by(self.source)

    def outcome(self, language: str | None = None) -> str | None:
        """How it ended, in a line: the first line of its result, or of the error that ended it in `language`
        (when its code words it), at most OUTCOME_CHARS; None for a task without either (running, interrupted)."""
        said = event_text(self.ending_error, language) if self.ending_error else None
        text = said or (result_words(self.result_text, language) if self.result_text else None)
        first = next((line.strip() for line in (text or "").splitlines() if line.strip()), "")
        return clipped(" ".join(first.split()), OUTCOME_CHARS) if first else None

    @property
    def shown_status(self) -> str:
        """The status as the person is told it: "not_done" for one the agent gave up on."""
        return "not_done" if self.gave_up else self.status

    @property
    def duration(self) -> float | None:
        """None when unknown: still running, or interrupted before it recorded anything (its end is then its start:
        mark_interrupted), which read "took 0.0 s" for a task that had run for seconds."""
        if self.ended_at is None or (self.status == "interrupted" and self.ended_at <= self.started_at):
            return None
        return max(0.0, self.ended_at - self.started_at)

    def to_wire(self, language: str | None = None) -> dict[str, Any]:
        """camelCase for the extension; times in epoch milliseconds (what JS `Date` takes); `outcome` in
        `language`."""
        return {
            "taskId": self.task_id,
            "task": self.task,
            "status": self.status,
            "source": self.source,
            "requester": self.requester,
            "startedBy": self.started_by,
            "startedAt": _ms(self.started_at),
            "endedAt": _ms(self.ended_at),
            "steps": self.steps,
            "promptTokens": self.prompt_tokens,
            "completionTokens": self.completion_tokens,
            "totalTokens": self.total_tokens,
            "url": self.url,
            "model": self.model,
            "resultText": self.result_text,
            "success": self.success,
            "gaveUp": self.gave_up,
            "outcome": self.outcome(language),
            "tookOver": self.took_over,
        }


@dataclass(frozen=True)
class StoredEvent:
    seq: int
    created_at: float
    event: dict[str, Any]  # the page-agent wire JSON, as appended (minus secrets and, unless captured, raw I/O)


@dataclass(frozen=True)
class Orphan:
    """A task `running` with a run state in another process: suspended for the next host to resume, or
    still run by a host that has not exited yet."""

    task_id: str
    owner: str | None
    state: dict[str, Any]
    alive: bool = False  # its process still runs (a host of the same browser still shutting down)
    suspended: bool = False  # its host went away saying it goes on: the next host resumes it


@dataclass(frozen=True)
class TaskRecord:
    summary: TaskSummary
    result: dict[str, Any] | None  # ExecutionResult wire JSON without its history (the events are the history)
    stored_events: list[StoredEvent] = field(default_factory=list)

    @property
    def events(self) -> list[dict[str, Any]]:
        return [stored.event for stored in self.stored_events]

    def to_wire(self, language: str | None = None) -> dict[str, Any]:
        return {"task": self.summary.to_wire(language), "result": self.result, "events": self.events}


def _ms(seconds: float | None) -> int | None:
    return None if seconds is None else round(seconds * 1000)


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def storable(text: str) -> str:
    """`text` as SQLite can store it (UTF-8): a lone surrogate, which JSON from a page or a non-UTF-8
    command line can carry and which made the write fail, becomes U+FFFD."""
    return _LONE_SURROGATE.sub("\ufffd", text)


def _result_text(result: dict[str, Any] | None) -> str | None:
    if not result:
        return None
    data = result.get("data")
    if data is None:
        return None
    return storable(data if isinstance(data, str) else json.dumps(data, ensure_ascii=False))


def agent_gave_up(status: str, last_event: Any) -> bool:
    """Whether a task that ended "error" (page-agent's status for both) ended so by the agent's own verdict: it called
    done with success false, having finished but not achieved the task; not a failure of tabpilot or of the model (an
    endpoint down, a crash), which ends with an error event. Said "Not done" to the person, never "Error"."""
    if status != "error" or not isinstance(last_event, dict) or last_event.get("type") != "step":
        return False
    action = last_event.get("action")
    return isinstance(action, dict) and action.get("name") == "done"


# An export's `data` when the task left no result text (page-agent's ExecutionResult.data is a string).
_STATUS_SENTENCES = {
    "running": "The task is still running.",
    "interrupted": "The task was interrupted: the process running it stopped before it finished (closed, killed or "
                   "crashed). Run the task again to finish it.",
    "stopped": "The task was stopped.",
    "error": "The task ended with an error.",
    "completed": "The task completed.",
}


class TaskStore:
    """The task history database. Safe to share between threads (one connection behind a lock) and
    between processes (WAL; the host and `tabpilot history` may have it open at once)."""

    def __init__(self, path: Path | None = None, *, capture_raw: bool = False, secrets: Iterable[str] = ()) -> None:
        self.path = Path(path) if path is not None else paths.database_path()
        self.capture_raw = capture_raw
        self._secrets: frozenset[str] = frozenset(s for s in secrets if s)  # kept out of everything written
        self._task_secrets: dict[str, frozenset[str]] = {}  # a run's keys, kept out of its task's writes until it ends
        self._lock = threading.Lock()
        self.set_aside: Path | None = None  # where a damaged database was moved (a fresh one replaced it)
        try:
            self._db = self._open()
        except sqlite3.DatabaseError as exc:
            if exc.sqlite_errorname not in DAMAGED:
                raise StoreError.worded("history.cannot_open", path=self.path, reason=exc) from exc
            # Not a database any more (a disk error, a copy cut short): kept aside, as browsers do with theirs,
            # and a new record begins; failing instead stopped every task and every history view.
            self.set_aside = self._move_aside()
            log.info("the task database %s was damaged (%s); kept as %s, a new one begins", self.path, exc,
                        self.set_aside)
            try:
                self._db = self._open()
            except sqlite3.Error as again:
                raise StoreError.worded("history.cannot_open", path=self.path, reason=again) from again
        except (OSError, sqlite3.Error) as exc:
            raise StoreError.worded("history.cannot_open", path=self.path, reason=exc) from exc

    def _open(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if not self.path.exists():
            # Owner-only from the start: tasks hold page text (and, with debug capture, whole prompts).
            # SQLite gives the -wal and -shm files the database file's permissions.
            os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o600))
        db = sqlite3.connect(self.path, check_same_thread=False, timeout=10.0, isolation_level=None)
        db.row_factory = sqlite3.Row
        try:
            db.execute("PRAGMA journal_mode=WAL")
            # WAL + NORMAL: a committed event survives the process being killed at any moment (what the
            # record promises); only an OS crash or power cut can drop the last commits. FULL would fsync
            # every event: measured 2.5-3 ms median per append instead of 0.2 ms (bench/bench_store.py).
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("PRAGMA foreign_keys=ON")
            # A deleted row's text is overwritten, not left in the file's free pages: SQLite's own default is off
            # (python.org's, macOS's and Windows' builds; Debian's is built with it on).
            db.execute("PRAGMA secure_delete=ON")
            self._create_schema(db)
        except BaseException:
            db.close()
            raise
        return db

    def _move_aside(self) -> Path:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        aside = self.path.with_name(f"{self.path.name}.damaged-{stamp}")
        for count in itertools.count(2):  # never over an earlier one
            if not aside.exists():
                break
            aside = self.path.with_name(f"{self.path.name}.damaged-{stamp}-{count}")
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):  # another process may have moved it a moment ago
                os.replace(f"{self.path}{suffix}", f"{aside}{suffix}")
        return aside

    def _create_schema(self, db: sqlite3.Connection) -> None:
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"the task database {self.path} was written by a newer tabpilot (schema {version}); upgrade tabpilot"
            )
        if version < SCHEMA_VERSION:
            # who asked for a task (3): a record made before it keeps its tasks, with no requester named
            columns = {row[1] for row in db.execute("PRAGMA table_info(tasks)")}
            added = "ALTER TABLE tasks ADD COLUMN requester TEXT;" if columns and "requester" not in columns else ""
            db.executescript(f"BEGIN IMMEDIATE; {_SCHEMA} {added} PRAGMA user_version={SCHEMA_VERSION}; COMMIT;")
        names = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'index')")}
        if not {"open_takeovers", "takeover_heads", "takeover_actions"} <= names:
            db.executescript(f"BEGIN IMMEDIATE; {_OPEN_TAKEOVERS} {_TAKEOVER_ROWS} COMMIT;")
        if "events_takeovers" not in names:
            db.executescript(f"BEGIN IMMEDIATE; {_TAKEOVER_INDEX} COMMIT;")

    def _transaction(self) -> _Transaction:
        return _Transaction(self._db)

    # -- secrets ---------------------------------------------------------------------------------

    # A new set or dict each change: a run's writer thread may be reading the old one.
    def add_secret(self, value: str | None, task_id: str | None = None) -> None:
        """A value (e.g. an API key) to blank out wherever it shows up in stored text: in everything this store
        writes, or with `task_id` in what is written for that task until `release_secrets(task_id)`. A run's keys
        are its task's: kept for the host's life, every page's own key made each later write scan them all."""
        if not value:
            return
        if task_id is None:
            self._secrets = self._secrets | {value}
        else:
            self._task_secrets = {**self._task_secrets, task_id: self._task_secrets.get(task_id, frozenset()) | {value}}

    def release_secrets(self, task_id: str) -> None:
        """The task's run has ended: its own keys are no longer held (what it wrote was scrubbed of them)."""
        self._task_secrets = {key: values for key, values in self._task_secrets.items() if key != task_id}

    def held_secrets(self) -> int:
        """How many values the store holds to blank out (its own and the running tasks')."""
        return len(self._secrets) + sum(len(values) for values in self._task_secrets.values())

    def _secrets_for(self, task_id: str | None) -> frozenset[str]:
        return self._secrets | self._task_secrets.get(task_id, frozenset()) if task_id else self._secrets

    def _clean(self, value: Any, task_id: str | None = None) -> Any:
        return scrub(value, self._secrets_for(task_id))

    # -- writing ---------------------------------------------------------------------------------

    def mark_interrupted(self) -> int:
        """Tasks left `running` by a process that no longer exists become `interrupted`. Call at start.
        A task its host suspended is left to the native host, which resumes it (`orphans`, `claim`)."""
        with self._lock:
            rows = self._db.execute(
                "SELECT id, owner FROM tasks WHERE status = 'running'"
                " AND id NOT IN (SELECT task_id FROM run_states WHERE suspended)"
            ).fetchall()
            dead = [row["id"] for row in rows if not owner_alive(row["owner"])]
            with self._transaction():
                for task_id in dead:
                    self._settle_open_takeover(task_id)  # what the person did while it died is kept
                    last = self._db.execute(
                        "SELECT MAX(created_at) FROM events WHERE task_id = ?", (task_id,)
                    ).fetchone()[0]
                    self._db.execute(
                        "UPDATE tasks SET status = 'interrupted', ended_at = COALESCE(?, started_at) WHERE id = ?",
                        (last, task_id),
                    )
        self._note_if_none_resumable()  # an older record (or one a crash left without the file) gets it here
        return len(dead)

    def start_task(self, task: str, *, url: str | None = None, model: str | None = None, source: str = "cli",
                   requester: str | None = None, task_id: str | None = None) -> str:
        """`requester`: who asked for it besides the person at the controls (a page's origin, an MCP client);
        `task_id`: the id to record it under (one `new_task_id()` gave before, e.g. for its guard), else a new one."""
        return self._insert_task(task, url=url, model=model, source=source, requester=requester, task_id=task_id)

    def _insert_task(self, task: str, *, url: str | None, model: str | None, source: str, requester: str | None,
                     not_run: tuple[str, float, float, dict[str, Any]] | None = None,
                     task_id: str | None = None) -> str:
        """One task row: running, owned by this process; or (`not_run`: status, asked, ended, result) one that
        never ran."""
        if not isinstance(task, str) or not task.strip():
            raise StoreError.worded("task.no_text")
        task_id = task_id or new_task_id()
        status, started_at, ended_at, result = not_run or ("running", time.time(), None, None)
        secrets = self._secrets_for(task_id)
        with self._lock, self._transaction():
            self._db.execute(
                "INSERT INTO tasks (id, task, status, source, url, model, started_at, ended_at, result, owner,"
                " requester) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    task_id,
                    storable(scrub_text(task, secrets)),
                    status,
                    source,
                    storable(scrub_text(url, secrets)) if url else None,
                    model,
                    started_at,
                    ended_at,
                    None if result is None else storable(json.dumps(scrub(result, secrets), ensure_ascii=False)),
                    None if not_run else current_owner(),
                    storable(requester[:200]) if requester else None,
                ),
            )
        return task_id

    def record_not_run(self, task: str, *, status: str, why: str, source: str, requester: str | None,
                       asked_at: float | None = None, url: str | None = None) -> str:
        """A task someone asked for that never ran (`NOT_RUN_STATUSES`): who asked, the text, when, and why not
        (`why`, for the person: its result's data). No event, no step, no model."""
        if status not in NOT_RUN_STATUSES:
            raise StoreError(f"status must be one of {', '.join(NOT_RUN_STATUSES)}, not {status!r}")
        now = time.time()
        return self._insert_task(task, url=url, model=None, source=source, requester=requester,
                                 not_run=(status, now if asked_at is None else asked_at, now,
                                          {"success": False, "data": why}))

    def save_run_state(self, task_id: str, state: dict[str, Any] | None, *, suspended: bool = False) -> None:
        """What a running task's run needs beyond its events to go on in another process (None: nothing,
        the task cannot be resumed). `suspended`: its host is going away and leaves it to the next host
        (a host that dies without saying so leaves it `interrupted`). Dropped when the task is finished."""
        body = None if state is None else storable(json.dumps(self._clean(state, task_id), ensure_ascii=False,
                                                              default=str))
        if body is None:
            with self._lock, self._transaction():
                self._db.execute("DELETE FROM run_states WHERE task_id = ?", (task_id,))
            self._note_if_none_resumable()
            return
        # The file goes before the state is written and again after (another process may have made it in between,
        # having counted before this commit): whenever a resumable task is in the record, the file is not there.
        marker(self.path).unlink(missing_ok=True)
        with self._lock, self._transaction():
            self._db.execute(
                "INSERT INTO run_states (task_id, body, suspended) VALUES (?, ?, ?)"
                " ON CONFLICT (task_id) DO UPDATE SET body = excluded.body, suspended = excluded.suspended",
                (task_id, body, int(suspended)),
            )
        marker(self.path).unlink(missing_ok=True)

    def keep_open_takeover(self, task_id: str, head: dict[str, Any], actions: list[dict[str, Any]],
                           start: int = 0) -> None:
        """The takeover under way in `task_id`, as the `user_takeover` event it would be if it ended now: `head` is
        that event without the person's actions (its `actions`: the notes that follow theirs, e.g. that it was cut
        short), `actions` theirs from index `start` on (those before are kept already; none after them are).
        Kept until that task's next `user_takeover` event is appended; a task that ends or is found interrupted
        before then gets it appended (`_settle_open_takeover`)."""
        head_body = storable(json.dumps(self._clean(head, task_id), ensure_ascii=False, default=str))
        rows = [(task_id, start + i, storable(json.dumps(self._clean(action, task_id), ensure_ascii=False,
                                                         default=str)))
                for i, action in enumerate(actions)]
        with self._lock, self._transaction():
            self._db.execute("DELETE FROM open_takeovers WHERE task_id = ?", (task_id,))  # an older tabpilot's form
            self._db.execute(
                "INSERT INTO takeover_heads (task_id, body, saved_at) VALUES (?, ?, ?)"
                " ON CONFLICT (task_id) DO UPDATE SET body = excluded.body, saved_at = excluded.saved_at",
                (task_id, head_body, time.time()),
            )
            self._db.executemany(
                "INSERT INTO takeover_actions (task_id, n, body) VALUES (?, ?, ?)"
                " ON CONFLICT (task_id, n) DO UPDATE SET body = excluded.body", rows,
            )
            self._db.execute("DELETE FROM takeover_actions WHERE task_id = ? AND n >= ?", (task_id, start + len(rows)))

    def drop_open_takeover(self, task_id: str) -> None:
        """No takeover is under way in `task_id` any more, and none is appended for it."""
        with self._lock, self._transaction():
            self._drop_open_takeover(task_id)

    def open_takeover(self, task_id: str) -> dict[str, Any] | None:
        """The takeover under way in `task_id` as its event would be appended now; None if none is kept."""
        with self._lock:
            kept = self._open_takeover(task_id)
        return None if kept is None else _object(_decoded(kept[0]))

    def settle_open_takeover(self, task_id: str) -> None:
        """Append the task's open takeover (if any) as its `user_takeover` event now, e.g. before the error that
        ends a task which could not go on."""
        with self._lock, self._transaction():
            self._settle_open_takeover(task_id)

    def _open_takeover(self, task_id: str) -> tuple[str, float] | None:
        """The task's open takeover as its event's JSON, and when it was last saved (under the lock)."""
        head = self._db.execute("SELECT body, saved_at FROM takeover_heads WHERE task_id = ?", (task_id,)).fetchone()
        if head is None:
            old = self._db.execute("SELECT body, saved_at FROM open_takeovers WHERE task_id = ?", (task_id,)).fetchone()
            return None if old is None else (old["body"], old["saved_at"])
        event = _object(_decoded(head["body"]))
        rows = self._db.execute("SELECT body FROM takeover_actions WHERE task_id = ? ORDER BY n", (task_id,))
        theirs = [action for action in (_decoded(row["body"]) for row in rows) if isinstance(action, dict)]
        tail = event.get("actions")
        event["actions"] = theirs + (tail if isinstance(tail, list) else [])
        event.setdefault("type", "user_takeover")
        return storable(json.dumps(event, ensure_ascii=False)), head["saved_at"]

    def _drop_open_takeover(self, task_id: str) -> None:
        for table in ("open_takeovers", "takeover_heads", "takeover_actions"):
            self._db.execute(f"DELETE FROM {table} WHERE task_id = ?", (task_id,))

    def _settle_open_takeover(self, task_id: str) -> None:
        """Append the task's open takeover as its event, at the time it was last saved (inside a transaction)."""
        kept = self._open_takeover(task_id)
        if kept is None:
            return
        body, saved_at = kept
        seq = self._db.execute(
            "SELECT COALESCE(MAX(seq), -1) + 1 FROM events WHERE task_id = ?", (task_id,)
        ).fetchone()[0]
        self._db.execute(
            "INSERT INTO events (task_id, seq, type, created_at, body) VALUES (?, ?, 'user_takeover', ?, ?)",
            (task_id, seq, saved_at, body),
        )
        self._drop_open_takeover(task_id)

    def amend_last_takeover(self, task_id: str, change: Callable[[dict[str, Any]], dict[str, Any] | None], *,
                            running: bool = False, started_at: float | None = None) -> bool:
        """Change the last `user_takeover` event (with `started_at`, the last begun then) of a task no host runs any
        more (found interrupted, or ended), or with `running` of the caller's own run: `change` gets it and returns it
        changed, or None to leave it. For what the person did in a takeover that its host never got, or the page gave
        late. False when the task runs (unless `running`), has no such event, or `change` left it; TaskNotFound when
        the record has no such task."""
        with self._lock, self._transaction():
            task = self._db.execute("SELECT status FROM tasks WHERE id = ?", (task_id,)).fetchone()
            if task is None:
                raise TaskNotFound(task_id)
            if task["status"] == "running" and not running:
                return False
            for row in self._db.execute(
                    "SELECT seq, body FROM events WHERE task_id = ? AND type = 'user_takeover' ORDER BY seq DESC",
                    (task_id,)).fetchall():
                event = _decoded(row["body"])
                if isinstance(event, dict) and started_at in (None, event.get("startedAt")):
                    break
            else:
                return False
            changed = change(event)
            if changed is None:
                return False
            body = storable(json.dumps(self._clean(changed, task_id), ensure_ascii=False, default=str))
            self._db.execute("UPDATE events SET body = ? WHERE task_id = ? AND seq = ?", (body, task_id, row["seq"]))
            return True

    def _note_if_none_resumable(self) -> None:
        """Make the file that says no task here can be resumed (store/resumable.py), if none can: counted, made,
        counted again (a run state written meanwhile removes it, or this does)."""
        if self._resumable():
            return
        path = marker(self.path)
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))
        except OSError as exc:
            log.info("could not write %s (the next host reads the record): %s", path, exc)
            return
        if self._resumable():
            path.unlink(missing_ok=True)

    def _resumable(self) -> bool:
        with self._lock:
            return self._db.execute(
                "SELECT 1 FROM tasks t JOIN run_states r ON r.task_id = t.id WHERE t.status = 'running' LIMIT 1"
            ).fetchone() is not None

    def orphans(self) -> list[Orphan]:
        """Tasks still `running` with a run state that another process runs, or suspended, oldest first."""
        with self._lock:
            rows = self._db.execute(
                "SELECT t.id, t.owner, r.body, r.suspended FROM tasks t JOIN run_states r ON r.task_id = t.id"
                " WHERE t.status = 'running' AND t.owner IS NOT ? ORDER BY t.started_at", (current_owner(),)
            ).fetchall()
        orphans = [Orphan(row["id"], row["owner"], _object(_decoded(row["body"])), owner_alive(row["owner"]),
                          bool(row["suspended"])) for row in rows]  # a damaged state: its resume fails, saying so
        return [orphan for orphan in orphans if orphan.alive or orphan.suspended]

    def claim(self, orphan: Orphan) -> bool:
        """Make this process the task's owner; False if another process claimed it first."""
        with self._lock, self._transaction():
            claimed = self._db.execute(
                "UPDATE tasks SET owner = ? WHERE id = ? AND status = 'running' AND owner IS ?",
                (current_owner(), orphan.task_id, orphan.owner),
            )
            return claimed.rowcount == 1

    def append_event(self, task_id: str, event: dict[str, Any]) -> None:
        """Store one HistoricalEvent; it is committed to disk before this returns."""
        if not isinstance(event, dict) or not isinstance(event.get("type"), str):
            raise StoreError(f"an event must be a JSON object with a string 'type', got {str(event)[:80]!r}")
        if not self.capture_raw:
            event = without_raw(event)
        body = storable(json.dumps(self._clean(event, task_id), ensure_ascii=False, default=str))
        usage = event.get("usage") if event["type"] == "step" else None
        usage = usage if isinstance(usage, dict) else {}
        now = time.time()
        with self._lock, self._transaction():
            if self._db.execute("SELECT 1 FROM tasks WHERE id = ?", (task_id,)).fetchone() is None:
                raise TaskNotFound(task_id)
            seq = self._db.execute(
                "SELECT COALESCE(MAX(seq), -1) + 1 FROM events WHERE task_id = ?", (task_id,)
            ).fetchone()[0]
            self._db.execute(
                "INSERT INTO events (task_id, seq, type, created_at, body) VALUES (?, ?, ?, ?, ?)",
                (task_id, seq, event["type"], now, body),
            )
            if event["type"] == "user_takeover":  # the takeover kept while it was under way is this one, ended
                self._drop_open_takeover(task_id)
            if event["type"] == "step":
                self._db.execute(
                    "UPDATE tasks SET steps = steps + 1, prompt_tokens = prompt_tokens + ?,"
                    " completion_tokens = completion_tokens + ?, total_tokens = total_tokens + ? WHERE id = ?",
                    (
                        _count(usage.get("promptTokens")),
                        _count(usage.get("completionTokens")),
                        _count(usage.get("totalTokens")),
                        task_id,
                    ),
                )

    def finish_task(self, task_id: str, *, status: str, result: dict[str, Any] | None) -> None:
        """Record how a task ended. `result` is the ExecutionResult wire JSON; its `history` is not stored
        again (the appended events are the history) unless no events were appended at all."""
        if status not in FINAL_STATUSES:
            raise StoreError(f"status must be one of {', '.join(FINAL_STATUSES)}, not {status!r}")
        if result is not None and not isinstance(result, dict):
            raise StoreError("result must be an ExecutionResult JSON object or None")
        history = (result or {}).get("history")
        result_json = None
        if result is not None:
            stored_result = self._clean({key: value for key, value in result.items() if key != "history"}, task_id)
            result_json = storable(json.dumps(stored_result, ensure_ascii=False, default=str))
        with self._lock, self._transaction():
            if self._db.execute("SELECT 1 FROM tasks WHERE id = ?", (task_id,)).fetchone() is None:
                raise TaskNotFound(task_id)
            self._settle_open_takeover(task_id)  # ended while the person had the controls, e.g. it could not go on
            has_events = self._db.execute("SELECT 1 FROM events WHERE task_id = ? LIMIT 1", (task_id,)).fetchone()
            self._db.execute(
                "UPDATE tasks SET status = ?, ended_at = ?, result = ? WHERE id = ?",
                (status, time.time(), result_json, task_id),
            )
            self._db.execute("DELETE FROM run_states WHERE task_id = ?", (task_id,))
        self._note_if_none_resumable()
        if not has_events and isinstance(history, list):
            for event in history:
                if isinstance(event, dict) and isinstance(event.get("type"), str):
                    self.append_event(task_id, event)

    def delete_task(self, task_id: str, *, keep_suspended: bool = False) -> bool:
        """Delete the task and its events; StoreError when it is running. `keep_suspended`: also when its host
        suspended it for the next host to go on with (it shows as running; `history delete --all`). Named by its
        id, such a task is deleted: one whose browser never comes back would otherwise stay for good."""
        with self._lock, self._transaction():
            row = self._db.execute(
                "SELECT status, owner, EXISTS (SELECT 1 FROM run_states WHERE task_id = tasks.id AND suspended)"
                " AS suspended FROM tasks WHERE id = ?", (task_id,)).fetchone()
            if row is None:
                return False
            if row["status"] == "running" and (owner_alive(row["owner"]) or (keep_suspended and row["suspended"])):
                raise StoreError.worded("history.still_running", task_id=task_id)
            self._db.execute("DELETE FROM events WHERE task_id = ?", (task_id,))
            self._db.execute("DELETE FROM run_states WHERE task_id = ?", (task_id,))
            self._db.execute("DELETE FROM tasks WHERE id = ?", (task_id,))
        with self._lock:
            # The write-ahead log still held the task's text (every page it was written in, until the last connection
            # closes: the host keeps one open while the browser runs). Copied back and cut to nothing, it goes.
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        self._note_if_none_resumable()
        return True

    # -- reading ---------------------------------------------------------------------------------

    def running_ids(self) -> list[str]:
        """The tasks the record shows running (by a host, or suspended for the next)."""
        with self._lock:
            return [row["id"] for row in self._db.execute("SELECT id FROM tasks WHERE status = 'running'")]

    def list_tasks(self, limit: int | None = 50, query: TaskQuery | None = None) -> list[TaskSummary]:
        """Newest first; every one with `limit` None; with `query`, the ones it matches (`limit` of them)."""
        rows_wanted = -1 if limit is None else max(0, int(limit))  # SQLite: a negative LIMIT is none
        with self._lock:
            if query is not None:  # asked of each row before the limit counts it
                self._db.create_function("wanted", 4, lambda *row: _wanted(query, *row), deterministic=True)
            where = "WHERE wanted(task, result, source, requester)" if query is not None else ""
            rows = self._db.execute(
                f"SELECT {_SUMMARY_COLUMNS} FROM tasks {where} ORDER BY started_at DESC, id DESC LIMIT ?",
                (rows_wanted,),
            ).fetchall()
        return [_summary(row) for row in rows]

    def resolve_id(self, prefix: str) -> str:
        """The full id of the one task whose id starts with `prefix` (like git's short hashes)."""
        prefix = prefix.strip().lower()
        if not prefix:
            raise TaskNotFound(prefix, "history.no_id")
        pattern = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        with self._lock:
            rows = self._db.execute(
                "SELECT id FROM tasks WHERE id LIKE ? ESCAPE '\\' ORDER BY id LIMIT 6", (pattern,)
            ).fetchall()
        ids: list[str] = [row["id"] for row in rows]
        if not ids:
            raise TaskNotFound(prefix)
        if prefix in ids:
            return prefix
        if len(ids) > 1:
            shown = ", ".join(ids[:5]) + (", ..." if len(ids) > 5 else "")
            raise TaskNotFound(prefix, "history.ambiguous", prefix=prefix, ids=shown)
        return ids[0]

    def get_task(self, task_id: str) -> TaskRecord | None:
        with self._lock:
            row = self._db.execute(f"SELECT {_SUMMARY_COLUMNS} FROM tasks WHERE id = ?", (task_id,)).fetchone()
            if row is None:
                return None
            events = self._db.execute(
                "SELECT seq, created_at, body FROM events WHERE task_id = ? ORDER BY seq", (task_id,)
            ).fetchall()
        return TaskRecord(
            summary=_summary(row),
            result=_result(row),
            stored_events=[StoredEvent(e["seq"], _number(e["created_at"], 0.0), _event(e["seq"], e["body"]))
                           for e in events],
        )

    def export_task(self, task_id: str, *, include_raw: bool | None = None) -> dict[str, Any]:
        """page-agent-shaped JSON: its ExecutionResult (`success`, `data` — always a string — and
        `history`) at the top level, next to what we know about the task. Holds no secrets; raw LLM I/O
        only if it was captured and `include_raw` (default: this store's `capture_raw`)."""
        include_raw = self.capture_raw if include_raw is None else include_raw
        record = self.get_task(task_id)
        if record is None:
            raise TaskNotFound(task_id)
        summary = record.summary
        result = record.result or {}
        success = result.get("success")
        data = result.get("data")
        wire = summary.to_wire()
        export = {
            "success": success if isinstance(success, bool) else summary.status == "completed",
            "data": data if isinstance(data, str) else _STATUS_SENTENCES.get(summary.status, ""),
            "history": record.events if include_raw else [without_raw(event) for event in record.events],
            "task": summary.task,
            "taskId": summary.task_id,
            "status": summary.status,
            "gaveUp": summary.gave_up,
            "url": summary.url,
            "model": summary.model,
            "source": summary.source,
            "requester": summary.requester,
            "startedAt": wire["startedAt"],
            "endedAt": wire["endedAt"],
            "steps": summary.steps,
            "usage": {
                "promptTokens": summary.prompt_tokens,
                "completionTokens": summary.completion_tokens,
                "totalTokens": summary.total_tokens,
            },
        }
        cleaned: dict[str, Any] = self._clean(export, summary.task_id)  # defence in depth: scrubbed once more
        return cleaned

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> TaskStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class _Transaction:
    """BEGIN IMMEDIATE … COMMIT (or ROLLBACK on error) on an autocommit connection."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def __enter__(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *rest: object) -> None:
        self._db.execute("ROLLBACK" if exc_type else "COMMIT")


# Token counts per event, clamped: a provider's 10^30 raised OverflowError in SQLite (64-bit integers) and
# the step was never stored. 10^12 per event keeps any task's sums far inside that range.
MAX_EVENT_COUNT = 10**12


def _count(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        return 0
    return min(value, MAX_EVENT_COUNT)


# Reading is forgiving, field by field: one damaged row (a disk error, a hand edit, a half-written copy)
# made history.list fail for every task and `tabpilot history` end in a traceback. A damaged value reads
# as absent, a damaged event as a note saying so; everything around it is shown as recorded.
def _decoded(text: object) -> Any:
    if not isinstance(text, str | bytes) or not text:
        return None
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _number(value: object, default: float) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else default


def _text(value: object, default: str = "") -> str:
    return value if isinstance(value, str) else default if value is None else str(value)


def _result(row: sqlite3.Row) -> dict[str, Any] | None:
    result = _decoded(row["result"])
    return result if isinstance(result, dict) else None


def _event(seq: int, body: object) -> dict[str, Any]:
    event = _decoded(body)
    if isinstance(event, dict) and isinstance(event.get("type"), str):
        return event
    return {"type": "observation", "content": f"event {seq} of this task is damaged in the record and cannot be shown",
            "damaged": True}


# A task row as _summary reads it: with its last event (its body), for agent_gave_up and the error it ended with, and
# whether the person took over during it (an event of it, or a takeover under way, kept in either of its forms).
_SUMMARY_COLUMNS = (
    "*, (SELECT body FROM events WHERE events.task_id = tasks.id ORDER BY seq DESC LIMIT 1) AS last_event,"
    " (EXISTS (SELECT 1 FROM events WHERE events.task_id = tasks.id AND events.type = 'user_takeover')"
    " OR EXISTS (SELECT 1 FROM takeover_heads WHERE takeover_heads.task_id = tasks.id)"
    " OR EXISTS (SELECT 1 FROM open_takeovers WHERE open_takeovers.task_id = tasks.id)) AS took_over"
)


def _wanted(query: TaskQuery, task: object, result: object, source: object, requester: object) -> bool:
    """`query` asked of a tasks row's columns as stored, as forgiving as _summary of a damaged one."""
    return query.matches(_text(task), _result_text(_object(_decoded(result))), started_by(_text(source)),
                         None if requester is None else _text(requester))


def _summary(row: sqlite3.Row) -> TaskSummary:
    """A tasks row, selected as _SUMMARY_COLUMNS."""
    result = _result(row)
    status = _text(row["status"], "interrupted")
    last = None if row["last_event"] is None else _event(0, row["last_event"])
    success = result.get("success") if result is not None else None
    ended_at = row["ended_at"]
    url, model = row["url"], row["model"]
    return TaskSummary(
        task_id=_text(row["id"]),
        task=_text(row["task"]),
        status=status,
        source=_text(row["source"]),
        started_at=_number(row["started_at"], 0.0),
        ended_at=None if ended_at is None else _number(ended_at, 0.0),
        steps=int(_number(row["steps"], 0)),
        prompt_tokens=int(_number(row["prompt_tokens"], 0)),
        completion_tokens=int(_number(row["completion_tokens"], 0)),
        total_tokens=int(_number(row["total_tokens"], 0)),
        url=None if url is None else _text(url),
        model=None if model is None else _text(model),
        result_text=_result_text(result),
        success=success if isinstance(success, bool) else None,
        requester=None if row["requester"] is None else _text(row["requester"]),
        gave_up=last is not None and agent_gave_up(status, last),
        took_over=bool(row["took_over"]),
        ending_error=last if status == "error" and last is not None and last["type"] == "error" else None,
    )
