"""What `tabpilot --version` (as the user runs it) and the install-side `--help` pages tell a user."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest
from cli_support import tabpilot_here

import tabpilot


@pytest.fixture(autouse=True)
def _own_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The help follows the settings' language: the tester's own settings must not choose it."""
    monkeypatch.setenv("TABPILOT_HOME", str(tmp_path / "tabpilot"))
    monkeypatch.delenv("LANG", raising=False)
    monkeypatch.delenv("LC_ALL", raising=False)
    monkeypatch.delenv("LANGUAGE", raising=False)
    monkeypatch.delenv("LC_MESSAGES", raising=False)


def tabpilot_says(*args: str) -> str:
    """What `tabpilot ARGS` prints, run in this process (cli_support)."""
    result = tabpilot_here(list(args), dict(os.environ))
    assert result.returncode == 0, result.stderr
    return " ".join(result.stdout.split())  # argparse wraps to the terminal's width


def test_version():
    as_typed = subprocess.run([sys.executable, "-m", "tabpilot", "--version"], capture_output=True, text=True,
                              timeout=60)
    assert (as_typed.returncode, as_typed.stdout) == (0, f"tabpilot {tabpilot.__version__}\n"), as_typed.stderr
    assert version("tabpilot") == tabpilot.__version__  # the package's metadata takes it from the same place


@pytest.mark.parametrize(
    ("command", "browser_default", "profile"),
    [
        ("install", "every one installed on this computer or with a settings folder for this user",
         "register for the one profile"),
        ("uninstall", "all of them", "remove it from the one profile"),
        ("doctor", "every one `tabpilot install` registers for", "check only the one profile"),
    ],
)
def test_target_options_are_worded_for_each_command(command: str, browser_default: str, profile: str):
    said = tabpilot_says(command, "--help")
    assert f"which browser (default: {browser_default})" in said
    assert f"{profile} folder a browser was started with (--user-data-dir=DIR)" in said
    if command != "install":
        assert "register for" not in said


def test_history_help_names_every_action():
    said = tabpilot_says("history", "--help")
    assert "list, show, export or delete past tasks" in said
    assert "list past tasks, newest first (the default)" in said
    assert "delete tasks and their events: the ones named, or --all" in said
    deleting = tabpilot_says("history", "delete", "--help")
    assert "--all every recorded task but a running one (asks first; without a terminal, needs --yes)" in deleting
    assert "list, show, export or delete past tasks" in tabpilot_says("--help")


def test_every_help_text_has_its_chinese() -> None:
    """A help text is found in the catalog by its English: a new or reworded one needs its Chinese too
    (i18n.ZH_CN_COMMAND_LINE), or a zh-CN user reads that line in English."""
    import argparse
    import re

    from tabpilot.cli import build_parser
    from tabpilot.i18n import ZH_CN_COMMAND_LINE

    def texts(parser: argparse.ArgumentParser) -> list[str]:
        found = [text for text in (parser.description, parser.epilog) if text]
        for action in parser._actions:
            found += [action.help] if action.help and action.help != argparse.SUPPRESS else []
            if isinstance(action, argparse._SubParsersAction):
                found += [choice.help for choice in action._choices_actions if choice.help]
                for command_parser in action.choices.values():
                    found += texts(command_parser)
        return found

    names_only = re.compile(r"[a-z-]+(, [a-z-]+)*")  # e.g. config's KEY: the settings' names, as typed
    untranslated = [text for text in texts(build_parser()) if text not in ZH_CN_COMMAND_LINE
                    and not names_only.fullmatch(text)]
    assert not untranslated, untranslated
