"""When the host itself dispatched input into a tab, and whether it may now.

Input sent over CDP reaches the page `isTrusted`, exactly like a person's mouse and keyboard, so the
page cannot tell the two apart; the host can, by keeping the windows of time in which it was
dispatching (`tabpilot run`'s implicit takeover compares capture.js's input reports with them). While
the user has the controls, `refused` holds why and no input is dispatched at all."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager

KEEP_WINDOWS = 64
# Input.dispatch* replies once the page has handled the event: over bench/bench_takeover.py's 20 agent
# steps (167 events) none came after its dispatch window ended. The slack covers clock rounding and a
# handler the page runs a moment later; a person's input this soon after the agent's is not noticed.
AFTER_SLACK_MS = 300
BEFORE_SLACK_MS = 50


def now_ms() -> float:
    return time.time() * 1000


class InputLog:
    def __init__(self) -> None:
        self.windows: deque[tuple[float, float]] = deque(maxlen=KEEP_WINDOWS)
        self._active = 0
        self._active_since = 0.0
        self.refused: str | None = None  # set while the user has the controls

    @contextmanager
    def dispatching(self, really: bool = True) -> Iterator[None]:
        if not really:
            yield
            return
        if self._active == 0:
            self._active_since = now_ms()
        self._active += 1
        try:
            yield
        finally:
            self._active -= 1
            if self._active == 0:
                self.windows.append((self._active_since, now_ms()))

    def ours(self, at_ms: float) -> bool:
        """Whether input the page saw at `at_ms` (epoch ms) can be input this host dispatched."""
        if self._active:
            return True
        return any(start - BEFORE_SLACK_MS <= at_ms <= end + AFTER_SLACK_MS for start, end in self.windows)
