"""The command line's own output stream: quiet once its reader has gone (`tabpilot run … | head -3`), and,
on a terminal only, one transient status line ("⠋ step 2 · thinking… 4 s") that any other line replaces.
And the one way a command says on stderr why it failed (`fail`).

Piped or redirected output never gets the status line, so what a script reads is the plain lines."""

from __future__ import annotations

import io
import os
import shutil
import sys
import threading
import time
from collections.abc import Callable
from typing import TextIO

from ..i18n import Language
from ..i18n import text as say
from ..textsafety import show_controls

EXIT_BROKEN_PIPE = 141  # what a shell reports for a program that SIGPIPE ended
SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
TICK = 0.1  # seconds between two frames of the spinner
CLEAR_LINE = "\r\x1b[K"


def silence_stdout() -> None:
    """The reader of stdout has gone: point it at the null device so that nothing written later (and
    Python's own flush at exit) fails again with a broken pipe."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    except (OSError, ValueError, AttributeError):
        pass


def fail(command: str | None, message: object, language: Language, status: int = 1) -> int:
    """Say on stderr, in `language`, why `tabpilot COMMAND` failed ("tabpilot config: …"; no command, for what
    `run` and `demo` share: "tabpilot: …"); `status` is the exit status to return."""
    if command is None:
        print(say("cli.error_bare", language, message=message), file=sys.stderr)
    else:
        print(say("cli.error", language, command=command, message=message), file=sys.stderr)
    return status


def is_terminal(stream: object) -> bool:
    try:
        return bool(stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, ValueError, OSError):
        return False


def terminal_width() -> int | None:
    """The columns of the terminal stdout is (COLUMNS, where set, as the shell says it), None when it is none: what a
    pipe reads is never cut to a width."""
    if not is_terminal(sys.stdout):
        return None
    return shutil.get_terminal_size().columns


class CommandOutput(io.TextIOBase):
    """Wraps stdout (or stderr): a write after the reader went away is dropped, and `on_gone` is called
    once (`run` then stops its task, as a program killed by SIGPIPE would stop)."""

    def __init__(self, stream: TextIO, *, status: bool | None = None) -> None:
        super().__init__()
        self.stream = stream
        self.gone = False
        self._on_gone: list[Callable[[], None]] = []
        self._lock = threading.RLock()
        self._status_allowed = is_terminal(stream) if status is None else status
        self._status: str | None = None
        self._status_since = 0.0
        self._seconds = " {seconds} s"
        self._shown = False
        self._ticker: threading.Thread | None = None
        self._stop = threading.Event()

    # --- io.TextIOBase ------------------------------------------------------------------------------
    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return is_terminal(self.stream)

    def write(self, text: str) -> int:
        with self._lock:
            if self.gone:
                return len(text)
            self._status = None  # any line of its own replaces the status line
            self._raw(CLEAR_LINE + text if self._shown else text)
            self._shown = False
        return len(text)

    def flush(self) -> None:
        with self._lock:
            if not self.gone:
                self._raw("", flush=True)

    def on_gone(self, callback: Callable[[], None]) -> None:
        """Call `callback` once the reader has gone (at once if it has already)."""
        if self.gone:
            callback()
        else:
            self._on_gone.append(callback)

    def _raw(self, text: str, *, flush: bool = False) -> None:
        try:
            if text:
                self.stream.write(text)
            if flush or text:
                self.stream.flush()
        except BrokenPipeError:
            self.gone = True
            if self.stream is sys.stdout:
                silence_stdout()
            for callback in self._on_gone:
                callback()

    # --- the status line (terminal only) --------------------------------------------------------------
    def status(self, text: str, seconds: str = " {seconds} s") -> None:
        """Show `text` with a spinner and the seconds it has been shown (worded by `seconds`), until the next
        line is written. What it names may be a page's (the element a step acts on): shown, never obeyed."""
        if not self._status_allowed:
            return
        text = show_controls(text)
        with self._lock:
            self._seconds = seconds
            if text != self._status:
                self._status, self._status_since = text, time.monotonic()
            self._draw()
        if self._ticker is None:
            self._ticker = threading.Thread(target=self._tick, name="status-line", daemon=True)
            self._ticker.start()

    def clear_status(self) -> None:
        with self._lock:
            self._status = None
            if self._shown and not self.gone:
                self._raw(CLEAR_LINE)
            self._shown = False

    def close_status(self) -> None:
        self.clear_status()
        self._stop.set()

    def _draw(self) -> None:
        if self._status is None or self.gone:
            return
        elapsed = time.monotonic() - self._status_since
        frame = SPINNER[int(elapsed / TICK) % len(SPINNER)]
        seconds = self._seconds.format(seconds=f"{elapsed:.0f}") if elapsed >= 1 else ""
        self._raw(f"{CLEAR_LINE}{frame} {self._status}{seconds}")
        self._shown = True

    def _tick(self) -> None:
        while not self._stop.wait(TICK):
            with self._lock:
                self._draw()
