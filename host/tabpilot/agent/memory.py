"""The history as the model reads it, kept bounded.

The newest `full_steps` steps appear whole; the `line_steps` before them as one line each; everything
older folds into one block carrying the model's own `memory` from the last folded step — its running
summary. So the prompt at step 30 is about as long as at step 10. Retries and errors are left out
(each event's `to_prompt` decides), observations and takeovers stay with the steps they precede."""

from __future__ import annotations

from collections.abc import Sequence

from ..i18n import text as say
from .types import AnyEvent, StepEvent

FULL_STEPS = 3
LINE_STEPS = 6


def render_history(history: Sequence[AnyEvent], *, full_steps: int = FULL_STEPS, line_steps: int = LINE_STEPS,
                   language: str | None = None) -> str:
    step_count = sum(1 for event in history if isinstance(event, StepEvent))
    first_full = step_count - full_steps
    first_line = first_full - line_steps
    lines: list[str] = []
    folded: list[StepEvent] = []
    steps_seen = 0
    for event in history:
        # an event belongs with the step it precedes (or is): steps_seen counts the steps before it
        position = steps_seen
        if isinstance(event, StepEvent):
            steps_seen += 1
        if position < first_line:
            if isinstance(event, StepEvent):
                folded.append(event)
            elif event.type == "user_takeover":
                if folded:
                    lines.append(_folded_block(folded, language))
                    folded = []
                lines.append(event.to_prompt(full=False, language=language))
            continue
        if folded:
            lines.append(_folded_block(folded, language))
            folded = []
        text = event.to_prompt(full=position >= first_full, language=language)
        if text:
            lines.append(text)
    if folded:
        lines.append(_folded_block(folded, language))
    return "\n".join(lines)


def _folded_block(steps: list[StepEvent], language: str | None) -> str:
    first, last = steps[0].step_index + 1, steps[-1].step_index + 1
    memory = next((s.reflection.memory for s in reversed(steps) if s.reflection.memory), "")
    condensed = say("history.condensed", language, first=first, last=last,
                    memory=memory or say("history.no_memory", language))
    return f"<earlier_steps>{condensed}</earlier_steps>"
