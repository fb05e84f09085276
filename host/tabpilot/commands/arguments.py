"""What the subcommands' arguments share: a number of seconds that must be above zero, and the mark of an
argument that takes a task in plain words (words left over after it were meant for it: cli.py says to quote it)."""

from __future__ import annotations

import argparse
import math
import shlex
from collections.abc import Sequence
from typing import Any


def positive_seconds(text: str) -> float:
    """A timeout as typed: a number of seconds above 0 (0, a negative number, nan or inf would make no sense)."""
    from ..i18n import text as say
    from .run import terminal_language

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(say("setting.number", terminal_language())) from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(say("setting.number", terminal_language()))
    if value <= 0:
        raise argparse.ArgumentTypeError(say("setting.more_than", terminal_language(), limit=0))
    return value


def add_browser_option(parser: argparse.ArgumentParser, help: str | None = None) -> None:
    """--browser, as every command that launches a browser takes it (run, demo, state, mcp): a browser named as
    `tabpilot install --browser` names one, or its program's path."""
    parser.add_argument("--browser", metavar="BROWSER", help=help or (
        "the browser to launch: chrome, chromium, edge, brave, or the path of its program (default: found)"))


class TaskText(argparse.Action):
    """A positional argument that is a task in plain words: one argument, so its words go in quotes."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: str | Sequence[Any] | None, option_string: str | None = None) -> None:
        setattr(namespace, self.dest, values)


def quoted(words: str) -> str:
    """`words` as one argument on a command line: in double quotes where the shell takes them literally (and
    cmd.exe and PowerShell understand them too), else as a POSIX shell quotes it."""
    if not any(char in words for char in '"$`\\!'):
        return f'"{words}"'
    return shlex.quote(words)
