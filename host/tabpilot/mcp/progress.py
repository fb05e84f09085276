"""A task's history events and activities → the progress messages an MCP client shows: first the task's
id (`started_message`), then one per step (step number, next goal, the action and its result), per takeover or
pause, per retry of a model call and per action a guard stopped, and one whenever the task waits on someone: the
person in the browser (a question of the agent's, an action waiting for their yes) or a model that is slow to
answer. A client (and the agent or person behind it) is never left with a silent call while the task waits.
`remedy` says what to do about a task that failed, where an MCP client's user is (`task_result`)."""

from __future__ import annotations

import json
from typing import Any

from ..actionwords import step_words

CLIP = 300


def started_message(task_id: str, tab: int | str) -> str:
    """The first progress message once the task exists: its id, which get_task and stop_task take while
    run_task is still running (the SDK's progress callback gets the message text only)."""
    return (f"taskId {task_id} · started in tab {tab}; get_task and stop_task take this taskId while the task "
            "runs")


def event_message(event: dict[str, Any]) -> str | None:
    """The progress line for one HistoricalEvent (page-agent's shapes), or None for one not worth one."""
    kind = event.get("type")
    if kind == "step":  # the action in words, as the person's step cards say it, then the exact call
        action = event.get("action") or {}
        goal = (event.get("reflection") or {}).get("next_goal") or "(no goal given)"
        tool_input = json.dumps(action.get("input"), ensure_ascii=False)
        return (f"step {int(event.get('stepIndex', 0)) + 1} · {goal} · {_clip(step_words(action, 'en-US'))} "
                f"({action.get('name')} {_clip(tool_input)}) → {_clip(str(action.get('output', '')))}")
    if kind == "user_takeover":  # UserTakeoverEvent: what the person did while they had the controls
        actions = event.get("actions") or []
        did = f" and did {len(actions)} thing{'s' if len(actions) != 1 else ''}" if actions else ""
        note = event.get("note")
        return f"the person took over the tab{did}" + (f": {_clip(str(note))}" if note else "")
    if kind == "error":
        return f"error: {_clip(str(event.get('message', '')))}"
    if kind == "retry":  # a model call that failed and is tried again: said as it happens, as `tabpilot run` does
        return f"retry {event.get('attempt')}/{event.get('maxAttempts')}: {_clip(str(event.get('message', '')))}"
    if kind == "observation" and event.get("guard"):  # blocked, denied, not answered in time: told to the model too
        return f"{GUARDS.get(str(event.get('guard')), 'stopped')}: {_clip(str(event.get('content', '')))}"
    return None


def amended_message(event: dict[str, Any]) -> str | None:
    """The progress line for an event told before, changed since (task.amended: a takeover that ended while the page
    was slow, which the page's late answer completed), or None."""
    told = event_message(event)
    if told is None:
        return None
    actions = event.get("actions") or []
    last = actions[-1] if actions and isinstance(actions[-1], dict) and actions[-1].get("kind") == "note" else {}
    return f"updated: {told}" + (f" {_clip(str(last['description']))}" if last.get("description") else "")


GUARDS = {"blocked": "blocked", "denied": "not done", "expired": "not done", "unasked": "not done",
          "allowed": "allowed"}
WHERE_THE_PERSON_ANSWERS = "the tabpilot popup or side panel, or the page's tabpilot overlay"


def activity_message(activity: dict[str, Any]) -> str | None:
    kind = activity.get("type")
    if kind == "paused":
        reason = activity.get("reason")
        return "paused" + (f": {reason}" if reason else "")
    if kind == "resumed":
        return "resumed"
    if kind == "question":
        return (f"the agent asks the person using the browser: {_clip(str(activity.get('question', '')))} "
                f"(waiting for their answer in {WHERE_THE_PERSON_ANSWERS})")
    if kind == "waiting":
        return f"the model has not answered for {float(activity.get('seconds') or 0):g} s; still waiting"
    return None


def control_message(approval: dict[str, Any] | None) -> str | None:
    """The progress line for an action waiting for the person's yes (the host's task.control), or None."""
    if not approval:
        return None
    site = approval.get("site")
    wants = f"{approval.get('action')}" + (f" on {site}" if site else "")
    # why, as the person is told it ("you asked …"), in the third person here
    why = "the person's settings ask before every action" if approval.get("whyCode") == "every_action" else (
        approval.get("why"))
    return (f"waiting for the person using the browser to allow an action: the agent wants to {_clip(wants)}"
            + (f" ({_clip(str(why))})" if why else "") + f"; they answer in {WHERE_THE_PERSON_ANSWERS}")


# What to do about a failed task, where an MCP client's user is: the model is the person's own choice (the
# tabpilot popup's Settings, or `tabpilot config set`, which share one settings file), and the call is made again
# from the client. One for each name i18n.REMEDIES gives (tests/test_mcp_command.py checks that none is missing).
SETTINGS = "the tabpilot popup's Settings, or `tabpilot config set {key}`"
REMEDIES = {
    "endpoint": ("Check that the model server at {base_url} is running and that the base URL is right ("
                 + SETTINGS.format(key="base-url <url>") + "); `tabpilot doctor` checks it. Then call run_task "
                 "again."),
    "slow": ("The model server is slow or overloaded: call run_task again later, or give one model call longer "
             "(`tabpilot config set model-deadline <seconds>`)."),
    "busy": ("The model provider is busy or failing: wait a minute and call run_task again, or choose another model ("
             + SETTINGS.format(key="model <name>") + ")."),
    "bad_reply": ("The endpoint did not answer like an OpenAI-compatible API: check the base URL ("
                  + SETTINGS.format(key="base-url <url>") + "); `tabpilot doctor` checks it."),
    "bad_call": ("The model did not call the agent's tool properly: call run_task again, or choose a model that "
                 "supports tool calls (" + SETTINGS.format(key="model <name>") + ")."),
    "rejected": ("The model endpoint refused the request: check the model name, base URL and API key ("
                 + SETTINGS.format(key="model|base-url|api-key") + "); `tabpilot doctor` checks them."),
    "filtered": "Reword the task, or choose another model.",
    "context": "Choose a model with a larger context window, or give a task that needs less of the page.",
    "max_steps": ("Raise the step limit (" + SETTINGS.format(key="max-steps N") + "), or split the task into "
                  "smaller run_task calls."),
    "browser": "The browser closed or crashed under the task: call run_task again.",
    "page_busy": ("The page is busy (a script that never ends, or a dialog that stays open): reload or close it, then "
                  "call run_task again."),
}


def remedy(result: dict[str, Any]) -> str | None:
    """What to do about a failed task's failure, for an MCP client's user; None when its words say it already."""
    from ..i18n import failure_remedy
    from ..store.timeline import ends_task

    if result.get("success"):
        return None
    data = result.get("data")
    for event in reversed(result.get("history") or []):
        if isinstance(event, dict) and ends_task(event, data):
            found = failure_remedy(event)
            if found is None:
                return None
            name, values = found
            return REMEDIES[name].format(base_url=values.get("base_url", "the endpoint"))
    return None


def steps_of(history: list[dict[str, Any]]) -> int:
    return sum(1 for event in history if event.get("type") == "step")


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= CLIP else text[: CLIP - 1] + "…"
