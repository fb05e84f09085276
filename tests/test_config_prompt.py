"""What tabpilot asks at a real terminal (a pty): `config set api-key` at its no-echo prompt, the task of `run -`,
`secrets set`'s value."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from store_support import API_KEY, in_a_terminal

from tabpilot.paths import HOME_ENV

pty = pytest.importorskip("pty")


def _at_the_prompt(home: Path, keys: bytes) -> tuple[str, int]:
    """`tabpilot config set api-key` in a terminal; `keys` typed once it asks. What it showed, its exit code."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env.update({HOME_ENV: str(home), "PYTHONUNBUFFERED": "1", "LANG": "C.UTF-8"})
    return in_a_terminal(["config", "set", "api-key"], env, timeout=60, answer=(b"API key:", keys))


@pytest.mark.parametrize("keys", [b"\x03", b"\x04"], ids=["ctrl-c", "ctrl-d"])
def test_giving_up_at_the_key_prompt_says_nothing_was_saved(tmp_path: Path, keys: bytes) -> None:
    shown, code = _at_the_prompt(tmp_path, keys)
    assert code == 1, shown
    assert "Traceback" not in shown and "KeyboardInterrupt" not in shown and "EOFError" not in shown, shown
    assert "\ntabpilot config: cancelled; nothing was saved" in shown, shown  # under the prompt, not after it
    assert not (tmp_path / "config" / "config.json").exists()


def test_enter_at_the_key_prompt_says_to_paste_the_key_there(tmp_path: Path) -> None:
    shown, code = _at_the_prompt(tmp_path, b"\r")
    assert code == 1, shown
    assert "tabpilot config: no API key typed, so nothing was saved: run it again and paste the key at the prompt" \
        in shown, shown
    assert "stdin" not in shown
    assert not (tmp_path / "config" / "config.json").exists()


def test_a_key_typed_at_the_prompt_is_saved_and_not_shown(tmp_path: Path) -> None:
    shown, code = _at_the_prompt(tmp_path, API_KEY.encode() + b"\r")
    assert code == 0, shown
    assert API_KEY not in shown and "api-key set to sk-…" in shown
    assert API_KEY in (tmp_path / "config" / "config.json").read_text()


def test_run_dash_in_a_terminal_says_to_type_the_task(tmp_path: Path) -> None:
    # `run -` reads the task from standard input; at a terminal it waited without a word (a new user's finding).
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env.update({HOME_ENV: str(tmp_path), "PYTHONUNBUFFERED": "1", "LANG": "C.UTF-8"})
    shown, code = in_a_terminal(["run", "-", "--base-url", "http://127.0.0.1:9/v1", "--model", "m"], env, timeout=60,
                                answer=(b"Ctrl-D on a line of its own:", b"\n\x04"))
    assert "Type the task, then press Ctrl-D on a line of its own:" in shown, shown
    assert code != 0 and "a task needs some text" in shown, shown  # nothing typed: said so, nothing run


def test_a_secret_for_a_mistyped_domain_is_refused_before_its_value_is_asked(tmp_path: Path) -> None:
    env = {**os.environ, HOME_ENV: str(tmp_path), "PYTHONUNBUFFERED": "1", "LANG": "C.UTF-8"}
    shown, code = in_a_terminal(["secrets", "set", "SHOP_PW", "--domain", "shop"], env, timeout=30,
                                answer=(b"(not shown):", b"pa55-word\r"))
    assert code == 1, shown
    assert "'shop' is not a domain: give a host name with a dot (example.com)" in shown, shown
    assert "Value of SHOP_PW" not in shown, shown  # nobody types a password only to be told to start again
    assert not (tmp_path / "config" / "secrets.json").exists()
