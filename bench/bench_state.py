"""Browser-state figures: extraction time and tokens on a medium (~2.5k nodes), a large (~20k) page and one
with 6,000 event listeners (the click listeners are read through CDP at every step).

    .venv/bin/python bench/bench_state.py [--runs 9] [--snapshot]

Serves tests/fixtures/pages on 127.0.0.1, launches a headless Chromium, and for each page prints the
median (and min/max) of `get_state` after a warm-up, split into the browser side (`read_page`: the
in-page walker, or with --snapshot the whole-page DOM snapshot, and its JSON) and the Python side
(`build_state`), plus the o200k token count of the text.
Targets: medium < 50 ms, large < 400 ms, listeners < 100 ms. Prints numbers; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import http.server
import os
import statistics
import threading
import time
from pathlib import Path

from tabpilot.browser.browser import Browser
from tabpilot.browser.state import build_state, read_page

PAGES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "pages"
CASES = [("medium", "state_medium.html", 50), ("large", "state_table.html", 400),
         ("listeners", "state_listeners.html", 100)]
COUNT_NODES = "(function count(n) { let k = 1; for (const c of n.childNodes) k += count(c); return k; })(document)"


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


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


def _ms(values: list[float]) -> str:
    return f"median {statistics.median(values):7.1f} ms  (min {min(values):.1f}, max {max(values):.1f})"


async def bench(runs: int, snapshot: bool) -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(PAGES)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    browser = await Browser.launch(headless=True)
    try:
        print(f"reading with: {'whole-page DOM snapshots' if snapshot else 'the in-page walker'}")
        print(f"load average before: {os.getloadavg()[0]:.2f} (cores: {os.cpu_count()})")
        tab = await browser.current_tab()
        pings = []
        for _ in range(20):
            started = time.perf_counter()
            await tab.evaluate("1")
            pings.append((time.perf_counter() - started) * 1000)
        print(f"baseline: Runtime.evaluate('1') round trip median {statistics.median(pings):.2f} ms "
              "(well under 1 ms on an idle machine; far more means the figures below are inflated by load)")
        for label, page, target in CASES:
            tab = await browser.current_tab()
            await tab.navigate(f"http://127.0.0.1:{server.server_address[1]}/{page}")
            nodes = await tab.evaluate(COUNT_NODES)
            state = build_state(await read_page(browser, tab, snapshot=snapshot))  # warm-up (attaches frame tracking)
            totals, reads, builds, chromium_cpu, python_cpu = [], [], [], [], []
            for _ in range(runs):
                cpu_before, own_before = _browser_cpu_ms(browser), time.process_time()
                started = time.perf_counter()
                reading = await read_page(browser, tab, snapshot=snapshot)
                read_done = time.perf_counter()
                state = build_state(reading, state)
                finished = time.perf_counter()
                chromium_cpu.append(_browser_cpu_ms(browser) - cpu_before)
                python_cpu.append((time.process_time() - own_before) * 1000)
                totals.append((finished - started) * 1000)
                reads.append((read_done - started) * 1000)
                builds.append((finished - read_done) * 1000)
            tokens = _tokens(state.text)
            verdict = "OK" if statistics.median(totals) < target else "ABOVE TARGET"
            print(f"\n{label}: {page}, {nodes} DOM nodes, {len(state.elements)} elements listed, "
                  f"{len(state.text)} chars, {tokens if tokens is not None else '?'} tokens (o200k)")
            print(f"  get_state   {_ms(totals)}   target < {target} ms: {verdict}")
            print(f"  browser     {_ms(reads)}   (reading in Chromium + transfer + JSON decode)")
            print(f"  python      {_ms(builds)}   (walk, render)")
            print(f"  cpu time    Chromium median {statistics.median(chromium_cpu):.0f} ms, this process "
                  f"{statistics.median(python_cpu):.0f} ms (incl. the reply's JSON decode)")
        print(f"\nload average after: {os.getloadavg()[0]:.2f}")
    finally:
        await browser.close()
        server.shutdown()
        server.server_close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9, help="measured runs per page after one warm-up (default 9)")
    parser.add_argument("--snapshot", action="store_true", help="read with whole-page DOM snapshots (the old way)")
    args = parser.parse_args()
    asyncio.run(bench(max(7, args.runs), args.snapshot))


if __name__ == "__main__":
    main()
