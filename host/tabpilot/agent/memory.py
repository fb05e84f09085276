"""The history as the model reads it: bounded, and append-only so providers can cache it.

The newest steps appear whole. Older steps fold into `<earlier_steps>` lines carrying the model's own
`memory` from the block's last step — its running summary — so the prompt at step 30 stays about as
long as at step 10. Folding happens in fixed blocks (`FOLD_BLOCK` steps; every `FOLD_BLOCK *
MERGE_BLOCKS` steps merge again into one line), so a step's text never changes between two folds: the
history only grows at its end, and the request up to there stays byte-identical from step to step
(prompt caching, issue 16). Whole steps shown: between `FULL_STEPS` and `FULL_STEPS + FOLD_BLOCK - 1`
(2 to 6); fewer whole steps make a fold rewrite less (bench/bench_prompt_cache.py: 83 % of a folding
request still cached with 2, 80 % with 3).

Retries and errors are left out (each event's `to_prompt` decides); observations and takeovers stay
with the steps they precede (a folded block drops its observations and keeps its takeovers, short)."""

from __future__ import annotations

from collections.abc import Sequence

from ..i18n import text as say
from .types import AnyEvent, StepEvent, inert

FULL_STEPS = 2
FOLD_BLOCK = 5
MERGE_BLOCKS = 10


def folded_steps(step_count: int, *, full_steps: int = FULL_STEPS, block: int = FOLD_BLOCK) -> int:
    """How many of the oldest steps are folded: a multiple of `block`, leaving at least `full_steps`."""
    return max(0, step_count - full_steps) // block * block


def fold_chunks(folded: int, *, block: int = FOLD_BLOCK, merge: int = MERGE_BLOCKS) -> list[range]:
    """The folded steps (0-based) in aligned chunks: whole runs of `block * merge` first, then `block`s.
    A chunk's bounds depend only on where it starts, so earlier chunks never change."""
    big = block * merge
    edge = folded // big * big
    return [range(start, start + big) for start in range(0, edge, big)] + [
        range(start, start + block) for start in range(edge, folded, block)
    ]


def render_history(history: Sequence[AnyEvent], *, full_steps: int = FULL_STEPS, block: int = FOLD_BLOCK,
                   merge: int = MERGE_BLOCKS, language: str | None = None) -> str:
    step_count = sum(1 for event in history if isinstance(event, StepEvent))
    folded = folded_steps(step_count, full_steps=full_steps, block=block)
    chunk_of = {step: chunk for chunk in fold_chunks(folded, block=block, merge=merge) for step in chunk}
    lines: list[str] = []
    pending: list[StepEvent] = []  # steps of the current chunk not yet written out
    steps_seen = 0
    for event in history:
        # an event belongs with the step it precedes (or is): steps_seen counts the steps before it
        position = steps_seen
        if isinstance(event, StepEvent):
            steps_seen += 1
        if position < folded:
            if isinstance(event, StepEvent):
                pending.append(event)
                if position == chunk_of[position][-1]:
                    lines.append(_folded_block(pending, language))
                    pending = []
            elif event.type == "user_takeover":
                if pending:
                    lines.append(_folded_block(pending, language))
                    pending = []
                lines.append(event.to_prompt(full=False, language=language))
            continue
        text = event.to_prompt(full=True, language=language)
        if text:
            lines.append(text)
    return "\n".join(lines)


def _folded_block(steps: list[StepEvent], language: str | None) -> str:
    first, last = steps[0].step_index + 1, steps[-1].step_index + 1
    memory = next((s.reflection.memory for s in reversed(steps) if s.reflection.memory), "")
    condensed = say("history.condensed", language, first=first, last=last,
                    memory=memory or say("history.no_memory", language))
    return f"<earlier_steps>{inert(condensed)}</earlier_steps>"
