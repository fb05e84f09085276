"""A stored task as text a person reads: the task list and one task's timeline (`tabpilot history`)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from .tasks import StoredEvent, TaskRecord, TaskSummary

CLIP = 400


def clip(text: Any, limit: int = CLIP) -> str:
    """One line, at most `limit` characters; anything that is not text is shown as compact JSON."""
    line = " ".join((text if isinstance(text, str) else compact(text)).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def when(seconds: float | None) -> str:
    return "-" if seconds is None else datetime.fromtimestamp(seconds).strftime("%Y-%m-%d %H:%M:%S")


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes} min {rest} s" if minutes < 60 else f"{minutes // 60} h {minutes % 60} min"


def compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def task_table(tasks: list[TaskSummary], task_width: int = 60) -> str:
    if not tasks:
        return "No tasks recorded yet. Run one with `tabpilot run TASK` or from the extension's popup."
    header = ("ID", "STARTED", "STATUS", "STEPS", "TOKENS", "TASK")
    rows = [
        (
            t.task_id,
            when(t.started_at)[:16],
            t.status,
            str(t.steps),
            f"{t.total_tokens:,}",
            clip(t.task, task_width),
        )
        for t in tasks
    ]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header) - 1)]
    lines = []
    for row in [header, *rows]:
        cells = [
            cell.rjust(w) if i in (3, 4) else cell.ljust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=False))
        ]
        lines.append("  ".join([*cells, row[-1]]))
    return "\n".join(lines)


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _event_lines(stored: StoredEvent, started_at: float) -> list[str]:
    event = stored.event
    offset = f"+{max(0.0, stored.created_at - started_at):.1f}s".rjust(8)
    pad = " " * len(offset)
    kind = event.get("type")
    if kind == "step":
        reflection = _object(event.get("reflection"))
        action = _object(event.get("action"))
        number = event.get("stepIndex", stored.seq)
        number = number + 1 if isinstance(number, int) else number
        lines = [f"{offset}  step {number}: {clip(reflection.get('next_goal') or '(no goal given)')}"]
        if reflection.get("evaluation_previous_goal"):
            lines.append(f"{pad}    evaluation: {clip(reflection['evaluation_previous_goal'])}")
        name = action.get("name", "?")
        lines.append(f"{pad}    action: {name}({clip(compact(action.get('input')), 200)})")
        if action.get("output") not in (None, ""):
            lines.append(f"{pad}    result: {clip(action['output'])}")
        return lines
    if kind == "observation":
        return [f"{offset}  observation: {clip(event.get('content', ''))}"]
    if kind == "retry":
        attempt = f"{event.get('attempt', '?')}/{event.get('maxAttempts', '?')}"
        return [f"{offset}  retry {attempt}: {clip(event.get('message', ''))}"]
    if kind == "error":
        return [f"{offset}  error: {clip(event.get('message', ''))}"]
    if kind == "user_takeover":
        took = ""
        if isinstance(event.get("startedAt"), int | float) and isinstance(event.get("endedAt"), int | float):
            took = f" for {duration((event['endedAt'] - event['startedAt']) / 1000)}"
        lines = [f"{offset}  you took over{took}"]
        recorded = event.get("actions")
        actions: list[Any] = recorded if isinstance(recorded, list) else []
        for action in actions[:20]:
            text = action if isinstance(action, str) else _object(action).get("description") or compact(action)
            lines.append(f"{pad}    - {clip(text, 200)}")
        if len(actions) > 20:
            lines.append(f"{pad}    - … and {len(actions) - 20} more")
        if event.get("note"):
            lines.append(f"{pad}    note: {clip(event['note'])}")
        return lines
    rest = {key: value for key, value in event.items() if key != "type"}
    return [f"{offset}  {kind}: {clip(compact(rest), 200)}"]


def timeline(record: TaskRecord) -> str:
    s = record.summary
    steps = f"{s.steps} step" + ("" if s.steps == 1 else "s")
    tokens = f"{s.total_tokens:,} tokens ({s.prompt_tokens:,} prompt, {s.completion_tokens:,} completion)"
    lines = [
        f"Task {s.task_id}: {s.task}",
        f"{s.status} · started {when(s.started_at)} · took {duration(s.duration)} · {steps} · {tokens}",
    ]
    if s.url:
        lines.append(f"url: {s.url}")
    if s.model:
        lines.append(f"model: {s.model}")
    lines.append("")
    if not record.stored_events:
        lines.append("(no events recorded)")
    for stored in record.stored_events:
        lines.extend(_event_lines(stored, s.started_at))
    lines.append("")
    if record.result is not None:
        success = record.result.get("success")
        verdict = "success" if success is True else "failed" if success is False else "finished"
        data = record.result.get("data")
        lines.append(f"Result ({verdict}): {data if isinstance(data, str) else compact(data)}")
    elif s.status == "interrupted":
        lines.append("Result: none: the process running this task stopped before it finished.")
    elif s.status == "running":
        lines.append("Result: none yet: the task is still running.")
    else:
        lines.append(f"Result: none recorded ({s.status}).")
    return "\n".join(lines)
