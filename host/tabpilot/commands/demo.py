"""`tabpilot demo`: see the agent work without any API key.

A recorded model (a scripted server playing back `demo/recording.json`, reached through the real
client over HTTP) fills in a bundled page served from a loopback HTTP server this command starts, in a
real browser. Nothing here calls an AI; the output says so."""

from __future__ import annotations

import argparse
import asyncio
import json

from ..i18n import failure_text
from ..i18n import text as say
from ..localfiles import LocalFiles
from .arguments import add_browser_option
from .output import fail
from .run import Job, run_job, terminal_language


def configure(parser: argparse.ArgumentParser) -> None:
    window = parser.add_mutually_exclusive_group()
    window.add_argument("--headed", action="store_true", help="show the browser window while it works")
    window.add_argument("--headless", action="store_true", help="launch the browser without a window (the default)")
    add_browser_option(parser)


def run(args: argparse.Namespace) -> int:
    from ..demo import DEMO_DIR, PAGE, RECORDING
    from ..llm import LLMError
    from ..llm.replay import RecordingError

    task = json.loads(RECORDING.read_text(encoding="utf-8")).get("task", "Fill in the demo form")
    server = LocalFiles(DEMO_DIR)
    try:
        job = Job(
            yes=True,  # the bundled page is no real site: its form is sent without asking
            task=task,
            url=server.url(PAGE),
            headed=args.headed,
            browser=args.browser,
            replay=str(RECORDING),
            source="demo",
            step_delay=0.6 if args.headed else 0.1,
            banner=say("demo.banner", terminal_language(), task=task),
        )
        return asyncio.run(run_job(job))
    except LLMError as exc:
        said = failure_text(exc.code, exc.params, terminal_language()) if exc.code else str(exc)
        return fail("demo", said, terminal_language())
    except RecordingError as exc:
        return fail("demo", exc.text(terminal_language()), terminal_language())
    finally:
        server.close()
