"""Browser-state figures: read time for the first look after a navigation and for a later step, and tokens,
on pages from ~20 to ~20k elements (issue 16's table: the best peer's time is printed next to ours).

    .venv/bin/python bench/bench_state.py [--runs 9] [--snapshot] [--only login,shop] [--trace]

Serves tests/fixtures/pages on 127.0.0.1, launches a headless Chromium, and for each page prints medians of
`get_state` (read_page + build_state):
  first look   navigate to the page (a new document), then the first read: what every step after a navigation
               pays (the walker's world is set up, every element is new);
  settled      the same, 100 ms after the page loaded: Chromium is then done with its own work after a load
               (right after it, commands wait ~5 ms for the renderer), so this is the reader's own first-look cost;
  later step   reading the same document again (after one warm-up read).
With --cold, new documents get the walker without its warm-up while the page is idle (walker.js `warm`): the
figures as they were before it, for comparison (it shows in "settled").
With --trace, each page's line is followed by the CDP commands of its last settled first look and its last
later step, each as start .. end in ms from the read's start (which round trips wait for which).
"waits" is the number of round trips a first look / later step waits for one after the other (the longest
chain of CDP commands each sent after another's answer): unlike wall time, it does not depend on the load.
Also the o200k token count of the text (quicktok) and Chromium/host CPU time for a later step. The target
(issue 16) is at most half the best peer's time in both columns. Prints numbers; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
from pathlib import Path
from typing import Any

from tabpilot.browser.browser import Browser
from tabpilot.browser.dom import fast
from tabpilot.browser.state import BrowserState, build_state, read_page
from tabpilot.browser.tab import Tab
from tabpilot.cdp.connection import CDPConnection
from tabpilot.localfiles import LocalFiles

PAGES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "pages"
# (label, page, best peer's median in ms from issue 16's table, or None where it has no such page)
CASES: list[tuple[str, str, float | None]] = [
    ("login", "speed_login.html", 3.7),
    ("checkboxes", "speed_checkboxes.html", 7.5),
    ("flight", "speed_flight.html", 4.7),
    ("feed", "speed_feed.html", 8.7),
    ("shadow+frames", "speed_shadow_frames.html", 4.5),
    ("frames", "state_frames.html", None),  # a cross-site frame, no closed shadow root
    ("modal", "speed_modal.html", 6.2),
    ("shop", "speed_shop.html", 110),
    ("medium", "state_medium.html", None),
    ("listeners", "state_listeners.html", None),
    ("table 18k", "state_table.html", 788),
]
COUNT_ELEMENTS = """(function count(root) {
  let k = 0;
  for (const e of root.querySelectorAll('*')) { k++; if (e.shadowRoot) k += count(e.shadowRoot);
    if (e.localName === 'iframe') { try { if (e.contentDocument) k += count(e.contentDocument); } catch (x) {} } }
  return k; })(document)"""



def _tokens(text: str) -> int | None:
    try:
        import quicktok
    except ImportError:
        return None
    return len(quicktok.get_encoding("o200k_base").encode(text))


def _browser_cpu_ms(browser: Browser) -> float:
    """CPU time used so far by every process of the launched browser (Linux /proc; 0 elsewhere). Unlike
    wall time it barely depends on what else the machine is doing."""
    if browser.launched is None or not os.path.isdir("/proc"):
        return 0.0
    group = os.getpgid(browser.launched.process.pid)
    ticks = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == group:
            ticks += int(fields[11]) + int(fields[12])
    return ticks * 1000 / os.sysconf("SC_CLK_TCK")


class _Counted:
    """Counts the CDP commands sent over a connection (a figure that does not depend on the machine's load),
    and keeps the last read's commands with their start and end times (for --trace)."""

    def __init__(self, connection: CDPConnection) -> None:
        self.count = 0
        self.trace: list[str] = []
        self.calls: list[tuple[str, float, float]] = []
        self.waits = 0  # of the last read: round trips on its longest chain of commands each waiting on another
        send = connection.send

        async def counting(method: str, *args: Any, **kwargs: Any) -> dict[str, Any]:
            self.count += 1
            started = time.perf_counter()
            try:
                return await send(method, *args, **kwargs)
            finally:
                self.calls.append((method, started, time.perf_counter()))

        connection.send = counting  # type: ignore[method-assign]


async def _timed_state(browser: Browser, tab: Tab, previous: BrowserState | None,
                       snapshot: bool | None, counter: _Counted) -> tuple[float, BrowserState, int]:
    sent = counter.count
    counter.calls.clear()
    started = time.perf_counter()
    reading = await read_page(browser, tab, snapshot=snapshot)
    read = time.perf_counter()
    state = build_state(reading, previous)
    elapsed = (time.perf_counter() - started) * 1000  # the trace below is the bench's own work
    counter.trace = _trace(counter.calls, started, read)
    counter.waits = _waits([call for call in counter.calls if call[2] <= read])
    return elapsed, state, counter.count - sent


def _trace(calls: list[tuple[str, float, float]], started: float, read: float) -> list[str]:
    lines = [f"      {method:38} {(begin - started) * 1000:6.2f} .. {(end - started) * 1000:6.2f}"
             for method, begin, end in sorted(calls, key=lambda call: call[1])]
    return [*lines, f"      {'(read_page returns; build_state)':38} {(read - started) * 1000:6.2f}"]


def _waits(calls: list[tuple[str, float, float]]) -> int:
    """The longest chain of commands in which each was sent after the one before had its answer: the round
    trips a read waits for, whatever the machine's load makes each one cost. (A command answered after the
    read returned, such as a release sent without waiting, was not waited for.)"""
    depth: list[tuple[float, int]] = []  # (end, chain length up to and including that command)
    for _, begin, end in sorted(calls, key=lambda call: call[1]):
        depth.append((end, 1 + max((n for finished, n in depth if finished <= begin), default=0)))
    return max((n for _, n in depth), default=0)


def _cell(ms: float, peer: float | None) -> str:
    if peer is None:
        return f"{ms:8.1f}        "
    return f"{ms:8.1f} ({ms / peer:4.2f}x)"


async def bench(runs: int, snapshot: bool | None, only: set[str], trace: bool) -> None:
    server = LocalFiles(PAGES)
    browser = await Browser.launch(headless=True)
    try:
        reader = {True: "whole-page DOM snapshots", False: "the in-page walker", None: "the default reader"}[snapshot]
        print(f"reading with: {reader}; {runs} runs a column")
        print(f"load average before: {os.getloadavg()[0]:.2f} (cores: {os.cpu_count()})")
        tab = await browser.current_tab()
        counter = _Counted(tab.session.connection)
        pings = []
        for _ in range(20):
            started = time.perf_counter()
            await tab.evaluate("1")
            pings.append((time.perf_counter() - started) * 1000)
        print(f"baseline: Runtime.evaluate('1') round trip median {statistics.median(pings):.2f} ms "
              "(well under 1 ms on an idle machine; far more means the figures below are inflated by load)\n")
        print(f"{'page':14} {'elements':>8} {'peer ms':>7}  {'first look ms (x peer)':>22}  "
              f"{'settled':>8}  {'later step ms (x peer)':>22}  {'tokens':>6}  {'CDP calls':>9}  {'waits':>5}  "
              "cpu ms Chromium/host (later)")
        for label, page, peer in CASES:
            if only and label.split()[0] not in only:
                continue
            url = server.url(page)
            tab = await browser.current_tab()
            await tab.navigate(url)
            await _timed_state(browser, tab, None, snapshot, counter)  # warm-up (attaches frame tracking)
            first = []
            for _ in range(runs):
                await tab.navigate(url)
                ms, state, first_calls = await _timed_state(browser, tab, None, snapshot, counter)
                first.append(ms)
                first_waits = counter.waits
            settled = []
            for _ in range(runs):
                await tab.navigate(url)
                await asyncio.sleep(0.1)
                ms, state, _ = await _timed_state(browser, tab, None, snapshot, counter)
                settled.append(ms)
            settled_trace = counter.trace
            elements = await tab.evaluate(COUNT_ELEMENTS)
            _, state, _ = await _timed_state(browser, tab, state, snapshot, counter)
            later, chromium_cpu, host_cpu = [], [], []
            for _ in range(runs):
                cpu_before, own_before = _browser_cpu_ms(browser), time.process_time()
                ms, state, later_calls = await _timed_state(browser, tab, state, snapshot, counter)
                chromium_cpu.append(_browser_cpu_ms(browser) - cpu_before)
                host_cpu.append((time.process_time() - own_before) * 1000)
                later.append(ms)
            later_waits = counter.waits
            tokens = _tokens(state.text)
            print(f"{label:14} {elements:8d} {peer if peer is not None else '-':>7}  "
                  f"{_cell(statistics.median(first), peer):>22}  {statistics.median(settled):8.1f}  "
                  f"{_cell(statistics.median(later), peer):>22}  "
                  f"{tokens if tokens is not None else '?':>6}  {f'{first_calls}/{later_calls}':>9}  "
                  f"{f'{first_waits}/{later_waits}':>5}  "
                  f"{statistics.median(chromium_cpu):.0f}/{statistics.median(host_cpu):.0f}", flush=True)
            if trace:
                print("\n".join(["    settled first look:", *settled_trace, "    later step:", *counter.trace]))
        print(f"\nload average after: {os.getloadavg()[0]:.2f}")
    finally:
        await browser.close()
        server.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9, help="measured runs per column and page (default 9)")
    reader = parser.add_mutually_exclusive_group()
    reader.add_argument("--snapshot", action="store_true", help="read with whole-page DOM snapshots only")
    reader.add_argument("--walker", action="store_true", help="read with the in-page walker only")
    parser.add_argument("--only", default="", help="comma-separated page labels (default: all)")
    parser.add_argument("--trace", action="store_true", help="print each page's CDP commands with their times")
    parser.add_argument("--cold", action="store_true", help="new documents' walkers are not warmed up while idle")
    args = parser.parse_args()
    if args.cold:
        fast._AHEAD = fast._INSTALL
    snapshot = True if args.snapshot else False if args.walker else None
    asyncio.run(bench(max(3, args.runs), snapshot, {o for o in args.only.split(",") if o}, args.trace))


if __name__ == "__main__":
    main()
