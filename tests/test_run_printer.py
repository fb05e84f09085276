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


def _takeover_line(language: str, **fields: object) -> str:
    from tabpilot.agent.types import UserTakeoverEvent
    from tabpilot.taskrun.events import RunEvent

    out = io.StringIO()
    RunPrinter(out, language)(RunEvent(UserTakeoverEvent(**fields).to_wire()))  # type: ignore[arg-type]
    return out.getvalue()


def test_a_takeover_is_told_to_the_user_who_took_over_not_as_the_model_reads_it() -> None:
    nothing = {"reason": "agent_request", "started_at": 0, "ended_at": 5000, "note": "done"}
    assert _takeover_line("en-US", **nothing) == ("  ✋ You took the controls for 5 s (the agent asked you to): "
                                                  "no action of yours was recorded. Your note: done\n")
    assert _takeover_line("zh-CN", **nothing) == ("  ✋ 你接管了控制 5 秒（智能体请你接管的）："
                                                  "没有记录到你的操作。你的留言：done\n")
    clicked = _takeover_line("en-US", reason="implicit", actions=[{"kind": "click", "target": 'button "Pay"'}])
    assert clicked == '  ✋ You took the controls (you used the page while the agent worked): clicked button "Pay"\n'


def test_what_the_model_or_page_wrote_is_printed_never_obeyed() -> None:
    """`tabpilot run` prints each step as it happens: an escape sequence or bidi override in a goal or a
    result (a page's title the model repeated) is shown as its code, not run by the terminal."""
    from tabpilot.taskrun.events import RunEvent

    hostile = "Done\x1b[2J\x1b]0;owned\x07\r\u202eSU 001"
    out = io.StringIO()
    RunPrinter(out, "en-US")(RunEvent({"type": "step", "stepIndex": 0, "reflection": {"next_goal": hostile},
                                       "action": {"name": "click", "input": {"index": 1}, "output": hostile}}))
    printed = out.getvalue()
    assert not any(c in printed for c in "\x1b\x07\r\u202e"), repr(printed)
    assert printed.count("\\x1b[2J\\x1b]0;owned\\x07\\r\\u202eSU 001") == 1  # the goal (the result's line joins \r)


def test_the_models_question_in_the_terminal_shows_its_controls_and_line_separators_as_codes() -> None:
    # `tabpilot run` printed the model's ask_user question as it came: a page's text the model repeated could
    # clear the screen or, with U+2028, start a line of its own
    from tabpilot.commands.controls import TerminalControls
    from tabpilot.taskrun.events import RunControl

    out = io.StringIO()
    controls = TerminalControls(None, out, language="en-US")  # type: ignore[arg-type]
    controls._on_update(RunControl(control=None, question="Pay?\u2028✔ Approved by you\x1b[2J"))
    printed = out.getvalue()
    assert not any(c in printed for c in "\u2028\x1b"), repr(printed)
    assert "❓ The agent asks: Pay?\\u2028✔ Approved by you\\x1b[2J\n" in printed


def test_an_action_the_persons_taking_over_stopped_is_told_to_them_not_in_the_models_words() -> None:
    # The model is told "…so it was abandoned (not an error) … read the page as it is now before going on"; the
    # terminal, `history show` and the popup said that to the person too.
    from tabpilot.agent.types import AgentReflection, StepAction, StepEvent
    from tabpilot.i18n import text
    from tabpilot.store.tasks import StoredEvent
    from tabpilot.store.timeline import _event_lines
    from tabpilot.taskrun.events import RunEvent

    for language, words in (("en-US", "not done: you took the controls"), ("zh-CN", "未执行：你接管了控制")):
        told = text("result.took_over", language)
        step = StepEvent(step_index=0, reflection=AgentReflection(next_goal="Order"), action=StepAction(
            name="click_element_by_index", input={"index": 4}, output=told, abandoned="took_over")).to_wire()
        out = io.StringIO()
        printer = RunPrinter(out, language)  # type: ignore[arg-type]
        printer(RunEvent(step))
        printer.flush()  # the result line is held until the next event
        shown = "\n".join([out.getvalue(), *_event_lines(StoredEvent(1, 0.0, step), 0.0, language)])
        assert words in shown and told not in shown, shown
        assert told in StepEvent.model_validate(step).to_prompt(language=language)  # the model's words stay its
