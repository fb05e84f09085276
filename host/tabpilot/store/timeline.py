"""A stored task as text a person reads: the task list and one task's timeline (`tabpilot history`). What a
page or a model wrote is shown on the terminal, never obeyed (`textsafety.show_controls`)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from ..actionwords import step_words
from ..agent.types import describe_action
from ..i18n import column, event_text, shown_width, step_result
from ..i18n import text as say
from ..textsafety import show_controls
from .tasks import NOT_RUN_STATUSES, StoredEvent, TaskRecord, TaskSummary

CLIP = 400
BY_WIDTH = 40  # a page's origin or a client's name in the list's FROM column


def clip(text: Any, limit: int = CLIP) -> str:
    """One line, at most `limit` characters; anything that is not text is shown as compact JSON."""
    line = " ".join((text if isinstance(text, str) else compact(text)).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def continued(text: str) -> str:
    """A text of several lines (a task, a result) as one entry of the timeline: its further lines indented, so a
    line of a page's or a model's text can never read as a line of the timeline's own ("Result (success): ...")."""
    return text.replace("\n", "\n    ")


def when(seconds: float | None) -> str:
    return "-" if seconds is None else datetime.fromtimestamp(seconds).strftime("%Y-%m-%d %H:%M:%S")


def duration(seconds: float | None, language: str | None = None) -> str:
    if seconds is None:
        return "-"
    if seconds < 60:
        return say("timeline.seconds", language, seconds=f"{seconds:.1f}")
    minutes, rest = divmod(int(seconds), 60)
    if minutes < 60:
        return say("timeline.minutes", language, minutes=minutes, seconds=rest)
    return say("timeline.hours", language, hours=minutes // 60, minutes=minutes % 60)


def status_word(status: str, language: str | None) -> str:
    """A task's stored status in words; one the catalog does not know is shown as stored."""
    try:
        return say(f"timeline.status.{status}", language)
    except KeyError:
        return status


def compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def who_started(summary: TaskSummary, language: str | None = None) -> str:
    """Who started a task, in words: the popup, a terminal, a page with its origin, an MCP client with its name."""
    try:
        return say(f"timeline.by.{summary.started_by}", language, requester=summary.requester or "?")
    except KeyError:  # a source this version does not know
        return summary.started_by


TASK_MIN = 24  # the fewest columns the task gets on a row's own line; on a terminal narrower, it gets a line of its own
INDENT = "  "  # a row's second line, on a narrow terminal


def fit(text: str, columns: int) -> str:
    """`text` cut to at most `columns` terminal columns (a Chinese character takes two), the cut marked with "…"."""
    if shown_width(text) <= columns:
        return text
    kept = ""
    for character in text:
        if shown_width(kept + character) > columns - 1:
            break
        kept += character
    return kept + "…"


def task_table(tasks: list[TaskSummary], task_width: int = 60, language: str | None = None,
               width: int | None = None) -> str:
    """The task list: how each ended (as the popup's Past tasks says it), whether the person took over, who started
    it. `width`: the terminal's columns, which no line passes: the task is cut to what is left, or on a terminal too
    narrow for it beside the rest (80 columns), the source and the task go on a line of their own under each row (the
    columns before them take about 70: a terminal narrower still wraps those)."""
    if not tasks:
        return say("timeline.no_tasks", language)
    names = ("id", "started", "status", "took_over", "steps", "tokens", "by", "task")
    header = tuple(say(f"timeline.column.{name}", language) for name in names)
    took_over = say("timeline.took_over_mark", language)
    rows = [
        (
            t.task_id,
            when(t.started_at)[:16],
            show_controls(status_word(t.shown_status, language)),
            took_over if t.took_over else "-",
            str(t.steps),
            f"{t.total_tokens:,}",
            show_controls(clip(who_started(t, language), BY_WIDTH)),
            show_controls(clip(t.task, task_width)),
        )
        for t in tasks
    ]
    widths = [max(shown_width(row[i]) for row in [header, *rows]) for i in range(len(header) - 1)]

    def line(cells: tuple[str, ...], widths: list[int]) -> str:
        """`cells` padded to `widths` (the steps and tokens to the right), the last one as it is."""
        padded = [column(cell, w, right=i in (4, 5)) for i, (cell, w) in enumerate(zip(cells[:-1], widths,
                                                                                          strict=False))]
        return "  ".join([*padded, cells[-1]])

    beside = sum(widths) + 2 * len(widths)  # the columns before the task, each with its two spaces
    if width is None or width - beside >= TASK_MIN:
        room = None if width is None else width - beside
        fitted = [(*row[:-1], row[-1] if room is None else fit(row[-1], room)) for row in [header, *rows]]
        return show_controls("\n".join(line(row, widths).rstrip() for row in fitted))
    # narrow: the row, then who started it and the task, indented, under it
    by_width = min(widths[-1], max(width - len(INDENT) - 2 - TASK_MIN, 8))
    lines = []
    for row in [header, *rows]:
        lines.append(line((*row[:-2], ""), widths[:-1]).rstrip())
        room = width - len(INDENT) - by_width - 2
        lines.append(f"{INDENT}{column(fit(row[-2], by_width), by_width)}  {fit(row[-1], room)}".rstrip())
    return show_controls("\n".join(lines))


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _event_lines(stored: StoredEvent, started_at: float, language: str | None) -> list[str]:
    event = stored.event
    offset = f"+{max(0.0, stored.created_at - started_at):.1f}s".rjust(8)
    pad = " " * len(offset)
    kind = event.get("type")
    if kind == "step":
        reflection = _object(event.get("reflection"))
        action = _object(event.get("action"))
        number = event.get("stepIndex", stored.seq)
        number = number + 1 if isinstance(number, int) else number
        goal = clip(reflection.get("next_goal") or say("run.no_goal", language))
        lines = [f"{offset}  " + say("timeline.step", language, number=number, goal=goal)]
        if reflection.get("evaluation_previous_goal") and event.get("stepIndex") != 0:  # step 1 has none before it
            evaluation = clip(reflection["evaluation_previous_goal"])
            lines.append(f"{pad}    " + say("timeline.evaluation", language, evaluation=evaluation))
        call = f"{action.get('name', '?')}({clip(compact(action.get('input')), 200)})"
        lines.append(f"{pad}    " + say("timeline.action", language, action=clip(step_words(action, language))))
        lines.append(f"{pad}    " + say("timeline.call", language, call=call))  # the exact call, for whoever wants it
        if action.get("output") not in (None, ""):
            lines.append(f"{pad}    " + say("timeline.result", language, result=clip(step_result(action, language))))
        return lines
    if kind == "observation":
        return [f"{offset}  " + say("timeline.observation", language, content=clip(event.get("content", "")))]
    if kind == "retry":
        attempt = f"{event.get('attempt', '?')}/{event.get('maxAttempts', '?')}"
        message = event_text(event, language) or event.get("message", "")
        return [f"{offset}  " + say("timeline.retry", language, attempt=attempt, message=clip(message))]
    if kind == "error":
        message = event_text(event, language) or event.get("message", "")
        return [f"{offset}  " + say("timeline.error", language, message=clip(message))]
    if kind == "user_takeover":
        took = ""
        if isinstance(event.get("startedAt"), int | float) and isinstance(event.get("endedAt"), int | float):
            took = say("timeline.took_for", language,
                       duration=duration((event["endedAt"] - event["startedAt"]) / 1000, language))
        lines = [f"{offset}  " + say("timeline.took_over", language, took=took)]
        recorded = event.get("actions")
        actions: list[Any] = recorded if isinstance(recorded, list) else []
        for action in actions[:20]:
            lines.append(f"{pad}    - {clip(describe_action(action, language), 200)}")
        if len(actions) > 20:
            lines.append(f"{pad}    - " + say("timeline.more_actions", language, count=len(actions) - 20))
        if event.get("note"):
            lines.append(f"{pad}    " + say("timeline.note", language, note=clip(event["note"])))
        return lines
    rest = {key: value for key, value in event.items() if key != "type"}
    return [f"{offset}  {kind}: {clip(compact(rest), 200)}"]


def ends_task(event: dict[str, Any], data: object) -> bool:
    """Is `event` the error that ended the task, whose message its result's data repeats?"""
    return event.get("type") == "error" and isinstance(data, str) and event.get("message") == data


def timeline(record: TaskRecord, language: str | None = None) -> str:
    s = record.summary
    steps = say("timeline.one_step" if s.steps == 1 else "timeline.steps", language, count=s.steps)
    tokens = say("timeline.tokens", language, total=f"{s.total_tokens:,}", prompt=f"{s.prompt_tokens:,}",
                 completion=f"{s.completion_tokens:,}")
    lines = [
        say("timeline.task", language, task_id=s.task_id, task=continued(s.task)),
        say("timeline.summary", language, status=status_word(s.shown_status, language), started=when(s.started_at),
            duration=duration(s.duration, language), steps=steps, tokens=tokens),
    ]
    if s.url:
        lines.append(say("timeline.url", language, url=continued(s.url)))
    if s.model:
        lines.append(say("timeline.model", language, model=continued(s.model)))
    if s.requester and s.source in ("page", "mcp"):
        lines.append(say(f"timeline.asked_by.{s.source}", language, requester=continued(s.requester)))
    lines.append("")
    if not record.stored_events:
        lines.append(say("timeline.no_events", language))
    data = record.result.get("data") if record.result is not None else None
    for stored in record.stored_events:
        if ends_task(stored.event, data):
            data = event_text(stored.event, language) or data  # said once, as the result
            continue
        lines.extend(_event_lines(stored, s.started_at, language))
    lines.append("")
    if s.status in NOT_RUN_STATUSES:
        # asked for and never run: said in the reader's language, who asked; the recorded why (the host's English,
        # "The person using the browser refused…") under it, as the popup's Details has it (a new user's trial)
        said = say(f"timeline.not_run.{s.status}", language, requester=s.requester or "?")
        lines.append(say("timeline.result_of", language, verdict=say("timeline.verdict.never_ran", language),
                         data=said))
        if isinstance(data, str) and data:
            lines.append("    " + say("timeline.not_run.why", language, why=continued(data)))
    elif record.result is not None:
        success = record.result.get("success")
        # A stop the person (or the page, or an MCP client) asked for is not a failure (success false on the wire).
        verdict = ("not_done" if s.gave_up else "stopped" if s.status == "stopped" else "success" if success is True
                   else "failed" if success is False else "finished")
        lines.append(say("timeline.result_of", language, verdict=say(f"timeline.verdict.{verdict}", language),
                         data=continued(data if isinstance(data, str) else compact(data))))
    elif s.status in ("interrupted", "running"):
        lines.append(say(f"timeline.no_result.{s.status}", language))
    else:
        lines.append(say("timeline.no_result", language, status=status_word(s.status, language)))
    return show_controls("\n".join(lines))
