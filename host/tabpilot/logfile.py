"""The log files tabpilot's long-lived processes write (the native host's host.log, `tabpilot mcp`'s mcp.log), one
way for all: in the owner-only log folder, each file and its rotations readable by their owner only (they hold page
URLs and task text), one line per message with its controls shown as codes and what looks like a secret redacted."""

from __future__ import annotations

import logging
import logging.handlers
import os
from pathlib import Path

from . import paths
from .textsafety import clipped, show_controls

LINE = "%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s"
CHATTY = ("httpx", "httpx2", "openai", "websockets")  # one line per request, URLs and all
# A message is cut there: a value a sender chose goes into some (an extension's version in its hello came whole,
# 100 KB).
LINE_LIMIT = 2000


class PrivateLogFile(logging.handlers.RotatingFileHandler):
    """A log file and its rotations, readable by their owner only.
    A character UTF-8 cannot hold (a lone surrogate from anywhere) is written escaped, never a traceback."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, maxBytes=1_000_000, backupCount=3, encoding="utf-8", errors="backslashreplace")

    def _open(self):  # type: ignore[no-untyped-def]
        stream = super()._open()
        if os.name == "posix":
            os.chmod(self.baseFilename, 0o600)
        return stream


class OneLineFormatter(logging.Formatter):
    """Each message on its own line with its controls shown as codes: a page's, a model's or a local program's
    text in a message (a newline, an escape sequence) can neither forge a log line nor act on the terminal
    of someone reading the log. What looks like a secret (an API key, a bearer token, a URL's password or token:
    store/redact.py) is redacted as in the record; a message longer than LINE_LIMIT characters is cut there. A
    traceback, the process's own, is added as it is."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        from .store.redact import scrub_text

        line = clipped(scrub_text(super().formatMessage(record)), LINE_LIMIT)  # a key cut in two would not be seen
        return show_controls(line.replace("\n", "\\n"))


def log_to_file(name: str, quiet: tuple[str, ...] = ()) -> None:
    """Every log line of this process goes to `name` in the log folder (the chatty libraries' and `quiet`'s from
    warnings on)."""
    folder = paths.log_dir()
    if os.name == "posix":
        os.chmod(folder, 0o700)
        for old in folder.glob(f"{name}*"):  # written by an earlier version with the umask's 0644
            old.chmod(0o600)
    handler = PrivateLogFile(folder / name)
    handler.setFormatter(OneLineFormatter(LINE))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    for chatty in (*CHATTY, *quiet):
        logging.getLogger(chatty).setLevel(logging.WARNING)


def log_to_file_or_stderr(name: str) -> None:
    """As `log_to_file`; where the log folder cannot be written (another user's, a read-only disk), warnings go to
    stderr instead, one formatted, redacted line each (a command that only reads a page still runs)."""
    try:
        log_to_file(name)
    except OSError:  # paths.NotYours among them
        import sys

        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(OneLineFormatter("tabpilot: %(levelname)s %(name)s: %(message)s"))
        handler.setLevel(logging.WARNING)
        logging.getLogger().addHandler(handler)
