"""A native host's task's placeholders and the values behind them (`PrivacyGuard.masks()`), kept for the next host
of the same task: one that goes on with it after a service-worker restart, or one that adds to its takeover what
the person did after its host died. Without them that host numbered from 1 again: `[email 1]` named a second
address, and the model's `[email 1]` from before was typed as whatever the new host saw first.

Never in the record: the grep proof (tests/test_privacy_task.py) holds that a masked value is nowhere in the
SQLite file, and a row deleted from it stays in its pages. One owner-only file per task in the host's runtime
folder (paths.runtime_dir: on Linux /run/user/<uid>/…, in memory and gone at logout; <TABPILOT_HOME>/run with
TABPILOT_HOME), removed when the run ends; a task whose host died keeps its file until the host that found it
interrupted (and took the person's late actions) exits."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from .. import paths

log = logging.getLogger(__name__)

_TASK_ID = re.compile(r"[0-9a-z]{1,64}")  # an id from the wire names no other file


def _folder(create: bool = True) -> Path:
    folder = paths.runtime_dir() / "masked"
    if create:
        folder.mkdir(mode=0o700, exist_ok=True)
    return folder


def _file(task_id: str) -> Path | None:
    return _folder() / f"{task_id}.json" if _TASK_ID.fullmatch(task_id) else None


def keep(task_id: str, masks: list[dict[str, Any]]) -> None:
    path = _file(task_id)
    if path is None:
        return
    partial = path.with_suffix(".part")
    descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        json.dump(masks, file, ensure_ascii=False)
    os.replace(partial, path)


def kept(task_id: str) -> list[Any]:
    """What `keep` kept for the task; nothing when there is none (or it cannot be read)."""
    path = _file(task_id)
    try:
        masks = json.loads(path.read_text(encoding="utf-8")) if path is not None else []
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as exc:
        log.warning("the placeholders kept for task %s cannot be read: %s", task_id, exc)
        return []
    return masks if isinstance(masks, list) else []


def forget(task_id: str) -> None:
    path = _file(task_id)
    if path is not None:
        path.unlink(missing_ok=True)


def forget_all_but(running: Callable[[], Iterable[str]]) -> None:
    """Remove what is kept for every task but those `running()` names (asked only when something is kept)."""
    with contextlib.suppress(FileNotFoundError):
        files = list(_folder(create=False).iterdir())
        keep_them = {f"{task_id}.json" for task_id in running()} if files else set()
        for path in files:
            if path.name not in keep_them:
                path.unlink(missing_ok=True)
