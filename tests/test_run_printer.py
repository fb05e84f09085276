"""What `tabpilot run` prints while it waits on a slow model (the agent's `waiting` activity is proven
end to end in test_agent_waiting.py; this is the terminal's side of it)."""

from __future__ import annotations

import io

from tabpilot.agent.types import ThinkingActivity, WaitingActivity
from tabpilot.commands.run import RunPrinter
from tabpilot.taskrun.events import RunActivity


def _printed(language: str, *activities: object) -> str:
    out = io.StringIO()
    printer = RunPrinter(out, language)  # type: ignore[arg-type]
    for activity in activities:
        printer(RunActivity(activity.to_wire()))  # type: ignore[attr-defined]
    return out.getvalue()


def test_a_model_that_has_not_answered_is_said_in_the_terminal() -> None:
    waiting = WaitingActivity(seconds=30.0, message="the model has not answered for 30 s")
    assert _printed("en-US", ThinkingActivity(), waiting) == "  … the model has not answered for 30 s\n"


def test_the_waiting_note_follows_the_language() -> None:
    waiting = WaitingActivity(seconds=60.0, message="the model has not answered for 60 s")
    assert _printed("zh-CN", waiting) == "  … 模型已经 60 秒没有回应\n"
