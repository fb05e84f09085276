"""`tabpilot host`: the native messaging host. Chromium starts it through the launcher `tabpilot
install` registered, as `<launcher> chrome-extension://<id>/ [--parent-window=N]`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse


def configure(parser: argparse.ArgumentParser) -> None:
    import argparse

    parser.add_argument("origin", nargs="?", help="the calling extension's origin (Chromium passes it)")
    parser.add_argument("--parent-window", help=argparse.SUPPRESS)  # Windows passes the caller's window


def run(args: argparse.Namespace) -> int:
    import sys

    if sys.stdin.isatty():  # started by hand: say what it is, or it looks hung (Chromium never gives it a terminal)
        from ..i18n import text as say
        from .run import terminal_language

        print(say("host.on_a_terminal", terminal_language()), file=sys.stderr, flush=True)
    return serve(args.origin)


def browser_origin(args: Sequence[str]) -> str | None:
    """The extension's origin when `args` is the command line the browser starts the host with (`[host]
    chrome-extension://<id>/`, on Windows with `--parent-window=<n>` after it): the host then starts without the
    command line's parser (argparse, its help formatter, gettext's look-ups, every help text: ~8 ms of a cold
    start on a loaded 2-core machine, bench/bench_host.py). None for anything else, which the parser reads."""
    rest = list(args[1:] if args and args[0] == "host" else args)
    if 1 <= len(rest) <= 2 and rest[0].startswith("chrome-extension://") \
            and all(arg.startswith("--parent-window=") for arg in rest[1:]):
        return rest[0]
    return None


def serve(origin: str | None) -> int:
    """Serve the extension on stdin/stdout until it closes them; the process ends with the host."""
    from ..native.process import exit_now, main

    exit_now(main(origin))
    return 0  # not reached
