"""Typing 100 characters (issue 16 target: ≤ 100 ms), over the DevTools websocket and over the extension
relay, with the key events in a sliding window (what input_text does) and, for comparison, in batches of 64
each awaited whole (how it typed before).

    .venv/bin/python bench/bench_typing.py [--runs 15]

Launches headless Chromium with extension/ loaded and the host installed into a temporary profile (as
bench/bench_relay.py does), types into actions_forms.html's Name field on both paths, the four variants
taking turns so that load from elsewhere on the machine falls on all alike. Prints numbers; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

from actions_support import ref  # noqa: E402
from e2e_support import start_connected_harness  # noqa: E402

from tabpilot.browser import actions  # noqa: E402
from tabpilot.browser.browser import Browser  # noqa: E402
from tabpilot.browser.elements import ElementRef  # noqa: E402
from tabpilot.browser.launcher import find_browser  # noqa: E402
from tabpilot.browser.nodes import send  # noqa: E402
from tabpilot.browser.tab import Tab  # noqa: E402
from tabpilot.localfiles import LocalFiles  # noqa: E402
from tabpilot.native.debug import DebugAccess, DebugLink  # noqa: E402
from tabpilot.native.relay import RelayBrowser  # noqa: E402

PAGES = ROOT / "tests" / "fixtures" / "pages"
TEXT = ("a hundred characters of text typed into a field, " * 3)[:99] + "."
TARGET_MS = 100.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _in_batches(tab: Tab, element: ElementRef | None, commands: list[tuple[str, dict[str, Any]]]) -> None:
    """How typing sent its commands before the sliding window: batches of 64, each awaited whole before the
    next. (Before that, each command awaited one by one: ~2.5x the batches' time on the websocket, ~4x on
    the relay.)"""
    for start in range(0, len(commands), 64):
        replies = await asyncio.gather(
            *(send(tab, tab.session, method, params, element=element) for method, params in commands[start:start + 64]),
            return_exceptions=True)
        for reply in replies:
            if isinstance(reply, BaseException):
                raise reply


@contextmanager
def _awaiting_each(really: bool, sending: list[float]) -> Iterator[None]:
    """input_text sending its commands in whole batches (really) or in a sliding window; either way the milliseconds the
    sending alone took go to `sending`."""
    pipelined = actions._send_in_order
    way = _in_batches if really else pipelined

    async def timed(tab: Tab, element: ElementRef | None, commands: list[tuple[str, dict[str, Any]]]) -> None:
        started = time.perf_counter()
        await way(tab, element, commands)
        sending.append((time.perf_counter() - started) * 1000)

    actions._send_in_order = timed  # type: ignore[assignment]
    try:
        yield
    finally:
        actions._send_in_order = pipelined  # type: ignore[assignment]


async def bench(runs: int) -> None:
    server = LocalFiles(PAGES)
    page_url = server.url("actions_forms.html")
    port = _free_port()
    base = Path(tempfile.mkdtemp(prefix="tabpilot-bench-typing-"))
    access = DebugAccess.new(port)
    harness = await start_connected_harness(find_browser(), base, extra_env=access.env())
    link = await DebugLink.connect(access)
    relay = await RelayBrowser.open(link)
    ws_browser = await Browser.connect(harness.browser.launched.http_url)  # type: ignore[union-attr]
    try:
        print(f"load average before: {os.getloadavg()[0]:.2f} (cores: {os.cpu_count()})")
        relay_tab = await relay.new_tab(page_url)
        ws_tab = await ws_browser.new_tab()
        await actions.go_to_url(ws_browser, ws_tab, page_url)
        sides: dict[str, tuple[Browser, Tab, ElementRef]] = {
            "websocket": (ws_browser, ws_tab, await ref(ws_tab, "#name", name="Name")),
            "relay": (relay, relay_tab, await ref(relay_tab, "#name", name="Name")),
        }
        samples: dict[tuple[str, bool], list[float]] = {(side, each): [] for side in sides for each in (True, False)}
        sending: dict[tuple[str, bool], list[float]] = {key: [] for key in samples}
        for i in range(runs + 1):  # the first round is a warm-up
            for (side, each), out in samples.items():
                browser, tab, name = sides[side]
                with _awaiting_each(each, sending[(side, each)]):
                    started = time.perf_counter()
                    said = await actions.input_text(browser, tab, name, TEXT)
                    elapsed = (time.perf_counter() - started) * 1000
                if not said.endswith(f"its value is now '{TEXT}'."):
                    raise SystemExit(f"typing went wrong on the {side} path: {said}")
                if i:
                    out.append(elapsed)
                else:
                    sending[(side, each)].clear()
        print(f"\ninput_text of {len(TEXT)} characters (the whole action: focus, clear, type, read back):")
        for side in sides:
            for each, label in ((True, "before: batches of 64 awaited"), (False, "after: sliding window of 64")):
                values = samples[(side, each)]
                median = statistics.median(values)
                verdict = f"target ≤ {TARGET_MS:g} ms: {'OK' if median <= TARGET_MS else 'ABOVE'}" if not each else ""
                print(f"  {side:<10} {label:<32} median {median:7.1f} ms  (min {min(values):.1f}, "
                      f"max {max(values):.1f}, n={len(values)})  {verdict}")
                print(f"  {'':<10} {'    of which sending the keys':<32} median "
                      f"{statistics.median(sending[(side, each)]):7.1f} ms")
        print(f"\nload average after: {os.getloadavg()[0]:.2f}")
    finally:
        await ws_browser.connection.close()
        await relay.close()
        await link.close()
        await harness.browser.close()
        server.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="measured runs per variant after one warm-up")
    asyncio.run(bench(parser.parse_args().runs))


if __name__ == "__main__":
    main()
