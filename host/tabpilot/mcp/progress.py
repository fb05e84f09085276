"""A task's history events and activities → the progress messages an MCP client shows: first the task's
id (`started_message`), then one per step (step number, next goal, the action and its result) and one per
takeover or pause."""

from __future__ import annotations

import json
from typing import Any

CLIP = 300


def started_message(task_id: str, tab: int | str) -> str:
    """The first progress message once the task exists: its id, which get_task and stop_task take while
    run_task is still running (the SDK's progress callback gets the message text only)."""
    return (f"taskId {task_id} · started in tab {tab}; get_task and stop_task take this taskId while the task "
            "runs")


def event_message(event: dict[str, Any]) -> str | None:
    """The progress line for one HistoricalEvent (page-agent's shapes), or None for one not worth one."""
    kind = event.get("type")
    if kind == "step":
        action = event.get("action") or {}
        goal = (event.get("reflection") or {}).get("next_goal") or "(no goal given)"
        tool_input = json.dumps(action.get("input"), ensure_ascii=False)
        return (f"step {int(event.get('stepIndex', 0)) + 1} · {goal} · {action.get('name')} {_clip(tool_input)}"
                f" → {_clip(str(action.get('output', '')))}")
    if kind == "user_takeover":  # UserTakeoverEvent: what the person did while they had the controls
        actions = event.get("actions") or []
        did = f" and did {len(actions)} thing{'s' if len(actions) != 1 else ''}" if actions else ""
        note = event.get("note")
        return f"the person took over the tab{did}" + (f": {_clip(str(note))}" if note else "")
    if kind == "error":
        return f"error: {_clip(str(event.get('message', '')))}"
    return None


def activity_message(activity: dict[str, Any]) -> str | None:
    kind = activity.get("type")
    if kind == "paused":
        reason = activity.get("reason")
        return "paused" + (f": {reason}" if reason else "")
    if kind == "resumed":
        return "resumed"
    return None


def steps_of(history: list[dict[str, Any]]) -> int:
    return sum(1 for event in history if event.get("type") == "step")


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= CLIP else text[: CLIP - 1] + "…"
