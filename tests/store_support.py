"""Helpers for the store, history and config tests: run `tabpilot` as users do, in a throwaway home."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from cli_support import tabpilot_here

from tabpilot.paths import HOME_ENV
from tabpilot.store.settings import update_settings

API_KEY = "sk-test-0123456789abcdefghijklmnopqrstuv"


def tabpilot(home: Path, *args: str, stdin: str | None = None, env: dict[str, str] | None = None
             ) -> subprocess.CompletedProcess[str]:
    """`tabpilot ARGS` with TABPILOT_HOME=home, its output and exit code as a separate process's, done in this
    process (cli_support). For what is about the process itself, `tabpilot_process`."""
    return tabpilot_here(list(args), _environment(home, env), stdin)


def tabpilot_process(
    home: Path, *args: str, stdin: str | None = None, env: dict[str, str] | None = None, timeout: float = 30
) -> subprocess.CompletedProcess[str]:
    """`python -m tabpilot ARGS` with TABPILOT_HOME=home, as a separate process."""
    return subprocess.run(
        [sys.executable, "-m", "tabpilot", *args],
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=_environment(home, env),
        timeout=timeout,
    )


def _environment(home: Path, env: dict[str, str] | None) -> dict[str, str]:
    """The test's environment without a model's address or key, with `home` as TABPILOT_HOME and `env` on top."""
    base = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    return {**base, HOME_ENV: str(home), "PYTHONIOENCODING": "utf-8", **(env or {})}


def set_language(home: Path, language: str) -> None:
    """The language setting in `home`, saved here as `tabpilot config set language` saves it, for a test about what
    another command says (test_cli_language tests that command)."""
    folder = home / "config"
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)  # owner-only, as tabpilot makes it
    update_settings({"language": language}, folder / "config.json")


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


def in_a_terminal(args: list[str], env: dict[str, str], *, timeout: float = 90,
                  answer: tuple[bytes, bytes] | None = None, answer_after: float = 0.0) -> tuple[str, int]:
    """Run `tabpilot ARGS` with a pty as its terminal (stdin, stdout and stderr); what it showed, its exit code.
    `answer`: (prompt, keys) — the keys are typed `answer_after` seconds after the prompt is shown."""
    import pty

    pid, fd = pty.fork()
    if pid == 0:  # the child: becomes tabpilot
        os.execve(sys.executable, [sys.executable, "-m", "tabpilot", *args], env)
    shown = b""
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if answer is not None and answer[0] in shown:
                time.sleep(answer_after)
                os.write(fd, answer[1])
                answer = None
            if not select.select([fd], [], [], 0.2)[0]:
                continue
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            shown += chunk
    finally:
        os.close(fd)
    done, status = os.waitpid(pid, os.WNOHANG)
    if not done:  # still running at the deadline: stopped, so the test fails instead of hanging
        time.sleep(0.5)
        done, status = os.waitpid(pid, os.WNOHANG)
        if not done:
            os.kill(pid, signal.SIGKILL)
            _, status = os.waitpid(pid, 0)
    return shown.decode("utf-8", "replace"), os.waitstatus_to_exitcode(status)


def processes_using(path: Path | str) -> list[str]:
    """The command lines (shortened) of the live processes whose arguments name `path` (Linux /proc)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (proc / "stat").read_text().rpartition(")")[2].split()[0]
        except (OSError, IndexError):
            continue
        if str(path) in cmdline and state != "Z":
            found.append(cmdline[:120])
    return found
