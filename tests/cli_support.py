"""`tabpilot ARGS` run by the command line's own `main()` inside the test's process, as a subprocess would see it:
the environment given (and nothing else), stdin from a string, stdout and stderr captured as pipes would carry
them, and the exit code. Each Python start took 0.4 s on an idle core (~1.2 s on a loaded one) and
test_cli_language started 101: its tests took 42 s pinned to one core, 0.6 s this way.

`main()` runs in a thread of its own: a command's event loop (asyncio.run) then neither replaces the test's current
loop nor sets signal handlers (a loop does only in the main thread; run's _StopSignals goes without them). What it
changes for the whole process is put back after each call: os.environ, sys.stdin/stdout/stderr, argparse's words
(cli.speak), the root logger's handlers and levels (cli.log for state/run/demo). A test about the process itself
(its start, signals, Ctrl-C, stdin's end, `python -m tabpilot`, the host the browser spawns) runs it as a
subprocess; so does one about what reaches stderr through logging, which pytest's own handlers take in here."""

from __future__ import annotations

import argparse
import contextlib
import io
import logging
import os
import subprocess
import sys
import threading
import traceback
from collections.abc import Callable, Iterator

_one_at_a_time = threading.Lock()


def tabpilot_here(args: list[str], env: dict[str, str], stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """`python -m tabpilot ARGS` with exactly `env` as its environment, done in this process; one call at a time (the
    std streams and os.environ it sets are the process's: commands run side by side are subprocesses)."""
    from tabpilot.cli import main

    if not _one_at_a_time.acquire(blocking=False):
        raise RuntimeError("tabpilot_here runs one command at a time: run commands side by side as subprocesses")
    try:
        return _run(main, args, env, stdin)
    finally:
        _one_at_a_time.release()


def _run(main: Callable[[list[str]], int], args: list[str], env: dict[str, str], stdin: str | None
         ) -> subprocess.CompletedProcess[str]:
    out, err = _pipe("strict"), _pipe("backslashreplace")  # the errors handlers Python gives a pipe under UTF-8
    status: list[int] = []

    def command() -> None:
        try:
            status.append(main(args))
        except SystemExit as exited:  # argparse (usage errors, --help, --version) and sys.exit(...)
            status.append(_exit_status(exited.code, err))
        except Exception:  # what the interpreter does with one uncaught: its traceback, exit status 1
            traceback.print_exc(file=err)
            status.append(1)

    with _process_state_restored(), _environment(env):
        sys.stdin, sys.stdout, sys.stderr = io.StringIO(stdin or ""), out, err  # stdin=None: as /dev/null
        thread = threading.Thread(target=command, name=f"tabpilot {' '.join(args[:1])}")
        thread.start()
        thread.join()
        out.flush()
        err.flush()
    return subprocess.CompletedProcess(["tabpilot", *args], status[0] if status else 1, _read(out), _read(err))


def _pipe(errors: str) -> io.TextIOWrapper:
    return io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors=errors)


def _read(stream: io.TextIOWrapper) -> str:
    """What subprocess.run(text=True) makes of a pipe's bytes: UTF-8 with universal newlines."""
    data = stream.buffer.getvalue()  # type: ignore[attr-defined]
    return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", newline=None).read()


def _exit_status(code: object, err: io.TextIOWrapper) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=err)  # sys.exit("message"): printed, exit status 1
    return 1


@contextlib.contextmanager
def _environment(env: dict[str, str]) -> Iterator[None]:
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


@contextlib.contextmanager
def _process_state_restored() -> Iterator[None]:
    streams = sys.stdin, sys.stdout, sys.stderr
    cwd = os.getcwd()
    words = argparse._, argparse.ngettext  # type: ignore[attr-defined]
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    levels = {name: logger.level for name, logger in logging.root.manager.loggerDict.items()
              if isinstance(logger, logging.Logger)}
    try:
        yield
    finally:
        sys.stdin, sys.stdout, sys.stderr = streams
        os.chdir(cwd)
        argparse._, argparse.ngettext = words  # type: ignore[attr-defined]
        for handler in root.handlers[:]:
            if handler not in handlers:
                root.removeHandler(handler)
                handler.close()
        root.setLevel(level)
        for name, logger in logging.root.manager.loggerDict.items():
            if isinstance(logger, logging.Logger):
                logger.setLevel(levels.get(name, logging.NOTSET))
