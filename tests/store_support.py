"""Helpers for the store, history and config tests: run `tabpilot` as users do, in a throwaway home."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tabpilot.paths import HOME_ENV

API_KEY = "sk-test-0123456789abcdefghijklmnopqrstuv"


def tabpilot(
    home: Path, *args: str, stdin: str | None = None, env: dict[str, str] | None = None, timeout: float = 30
) -> subprocess.CompletedProcess[str]:
    """`python -m tabpilot ARGS` with TABPILOT_HOME=home, as a separate process."""
    base = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    env = {**base, HOME_ENV: str(home), "PYTHONIOENCODING": "utf-8", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "tabpilot", *args],
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=env,
        timeout=timeout,
    )


def step(index: int, goal: str = "do it", *, prompt: int = 100, completion: int = 10, **extra: Any) -> dict[str, Any]:
    """A page-agent `step` event as the agent sends it."""
    return {
        "type": "step",
        "stepIndex": index,
        "reflection": {"evaluation_previous_goal": "ok", "memory": f"memory {index}", "next_goal": goal},
        "action": {"name": "click_element_by_index", "input": {"index": index + 1}, "output": f"Clicked {index + 1}"},
        "usage": {"promptTokens": prompt, "completionTokens": completion, "totalTokens": prompt + completion},
        **extra,
    }
