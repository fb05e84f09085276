"""`tabpilot host`: the native messaging host. Chromium starts it through the launcher `tabpilot
install` registered, as `<launcher> chrome-extension://<id>/ [--parent-window=N]`."""

from __future__ import annotations

import argparse


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("origin", nargs="?", help="the calling extension's origin (Chromium passes it)")
    parser.add_argument("--parent-window", help=argparse.SUPPRESS)  # Windows passes the caller's window


def run(args: argparse.Namespace) -> int:
    return serve(args.origin)


def serve(origin: str | None) -> int:
    """Serve the extension on stdin/stdout until it closes them; the process ends with the host."""
    from ..native.stdio import exit_now, main

    exit_now(main(origin))
    return 0  # not reached
