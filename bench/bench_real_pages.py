"""tabpilot's page reading and page-agent's on real web pages that others saved: time of the first look after a
navigation and of a later step, and o200k tokens of each system's page text, page by page, then the medians, the
worst ratio and every page a system could not read.

    .venv/bin/python bench/bench_real_pages.py PAGES [--runs 3] [--only NAME,…] [--no-peer]

PAGES is a folder of saved pages, each NAME.html or NAME/source.html. mozilla/readability's test corpus is one:
`git clone --depth 1 https://github.com/mozilla/readability` and give readability/test/test-pages (130 news, blog,
wiki and shop pages as their sites served them, scripts and all: nothing here was written for tabpilot or for this
bench). bench_state.py and bench_peers.py read fixture pages of this repo's own.
The pages are served from 127.0.0.1 to a headless Chromium that resolves no other host, so what a page loads from
elsewhere fails at once, as offline (waiting for it made a read wait out a 30 s load on a few pages).
Timed as bench_peers.py times them (its page-agent 1.12 page controller, installed as its content script would be,
on documents of its own): wall time from Python of what produces the page text; first look = a navigation then one
read, later step = reading the same document again; medians over --runs, one run of page-agent's on a page where
its read takes seconds. "÷ pa" is tabpilot's time over page-agent's (issue 16's target: at most 0.5). browser-use is
left out: its reader runs in a venv and a process of its own per page (bench_peers.py has it on the fixture pages).
"CPU pa / tp" is what a later step costs in processor time, as bench_peers.py counts it (the page's renderer main
thread plus this Python process): a loaded machine sways it far less than wall time.
Prints numbers and the machine's load; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
from pathlib import Path

from bench_peers import SLOW_PEER_MS, _cpu_ms, _Documents, page_agent_bundle, timed_page_agent
from bench_state import COUNT_ELEMENTS, _tokens

from tabpilot.browser.browser import Browser
from tabpilot.browser.state import BrowserState, build_state, read_page
from tabpilot.browser.tab import Tab
from tabpilot.localfiles import LocalFiles

LOAD_WAIT = 20.0  # seconds a navigation may take before the page is read as it stands
READ_WAIT = 120.0


def saved_pages(folder: Path) -> list[tuple[str, str]]:
    """(name, path under `folder`) of each saved page, by name."""
    pages = {path.stem: path.name for path in folder.glob("*.html")}
    pages.update({path.parent.name: f"{path.parent.name}/source.html" for path in folder.glob("*/source.html")})
    return sorted(pages.items())


async def open_page(documents: _Documents, url: str, *, page_agent: bool) -> None:
    try:
        await asyncio.wait_for(documents.open(url, page_agent=page_agent), LOAD_WAIT)
    except TimeoutError:
        pass  # a page whose load never ends is read as it stands, as a step would


async def timed_state(browser: Browser, tab: Tab, previous: BrowserState | None) -> tuple[float, BrowserState]:
    started = time.perf_counter()
    state = build_state(await asyncio.wait_for(read_page(browser, tab), READ_WAIT), previous)
    return (time.perf_counter() - started) * 1000, state


async def bench(folder: Path, runs: int, only: set[str], peer: bool) -> None:
    pages = [(name, path) for name, path in saved_pages(folder) if not only or name in only]
    if not pages:
        raise SystemExit(f"no saved pages in {folder} (NAME.html or NAME/source.html)")
    bundle = page_agent_bundle()[1] if peer else ""
    server = LocalFiles(folder)
    browser = await Browser.launch(headless=True, extra_args=["--host-resolver-rules=MAP * ~NOTFOUND, "
                                                               "EXCLUDE 127.0.0.1"])
    ratios: dict[str, tuple[float, float]] = {}
    cpu_ratios: dict[str, float] = {}
    ours_first_all, ours_later_all, failed = [], [], []
    try:
        tab = await browser.current_tab()
        documents = _Documents(tab, bundle)
        await tab.send("Performance.enable", {"timeDomain": "threadTicks"})
        print(f"{len(pages)} pages from {folder}; ms, medians of {runs} runs (¹ page-agent: one run, its read takes "
              f"seconds); load average {os.getloadavg()[0]:.2f} (cores: {os.cpu_count()})\n")
        print(f"{'page':34} {'elements':>8}  {'tabpilot first/later':>21}  {'page-agent first/later':>22}  "
              f"{'÷ pa':>11}  {'tokens tp / pa':>15}  {'CPU pa / tp':>15}  load")
        for name, path in pages:
            url = server.url(path)
            try:
                await open_page(documents, url, page_agent=False)
                await timed_state(browser, tab, None)  # warm-up (attaches frame tracking)
                ours_first: list[float] = []
                for _ in range(runs):
                    await open_page(documents, url, page_agent=False)
                    ours_first.append((await timed_state(browser, tab, None))[0])
                elements = int(await tab.evaluate(COUNT_ELEMENTS))
                _, state = await timed_state(browser, tab, None)
                text = state.text
                ours_later, ours_cpu = [], []
                for _ in range(runs):
                    before = await _cpu_ms(tab)
                    ms, state = await timed_state(browser, tab, state)
                    ours_cpu.append(await _cpu_ms(tab) - before)
                    ours_later.append(ms)
            except Exception as exc:  # a page tabpilot cannot read is a finding, not the bench's end
                failed.append(f"tabpilot on {name}: {type(exc).__name__}: {exc}")
                print(f"{name:34} tabpilot failed: {type(exc).__name__}: {exc}", flush=True)
                tab = await browser.new_tab("about:blank")
                documents = _Documents(tab, bundle)
                await tab.send("Performance.enable", {"timeDomain": "threadTicks"})
                continue
            first, later = statistics.median(ours_first), statistics.median(ours_later)
            ours_first_all.append(first)
            ours_later_all.append(later)
            cpu, peer_cells, ratio, peer_tokens, one = statistics.median(ours_cpu), "", "", "", " "
            cpu_cell = f"{cpu:.1f}"
            if peer:
                try:
                    peer_first, peer_later, peer_text, peer_cpu = await page_agent_figures(documents, tab, url, runs)
                except Exception as exc:
                    failed.append(f"page-agent on {name}: {type(exc).__name__}: {exc}")
                    peer_cells = "failed"
                else:
                    one = "¹" if len(peer_first) < runs else " "
                    pa_first, pa_later = statistics.median(peer_first), statistics.median(peer_later)
                    ratios[name] = (first / pa_first, later / pa_later)
                    cpu_ratios[name] = cpu / statistics.median(peer_cpu)
                    cpu_cell = f"{statistics.median(peer_cpu):.1f} / {cpu:.1f}"
                    peer_cells = f"{pa_first:8.1f} /{pa_later:8.1f}{one}"
                    ratio = f"{first / pa_first:4.2f} /{later / pa_later:5.2f}"
                    peer_tokens = str(_tokens(peer_text))
            print(f"{name[:34]:34} {elements:8d}  {first:8.1f} /{later:8.1f}    {peer_cells:>22}  {ratio:>11}  "
                  f"{str(_tokens(text)) + ' / ' + peer_tokens:>15}  {cpu_cell:>15}  {os.getloadavg()[0]:.1f}",
                  flush=True)
    finally:
        await browser.close()
        server.close()
    print(f"\ntabpilot, median over pages: first look {statistics.median(ours_first_all):.1f} ms, later step "
          f"{statistics.median(ours_later_all):.1f} ms ({len(ours_later_all)} pages read)")
    if ratios:
        firsts, laters = [r[0] for r in ratios.values()], [r[1] for r in ratios.values()]
        worst_first, worst_later = max(ratios, key=lambda n: ratios[n][0]), max(ratios, key=lambda n: ratios[n][1])
        print(f"÷ page-agent, median over pages: first look {statistics.median(firsts):.2f}, later step "
              f"{statistics.median(laters):.2f}; pages above 0.5: {sum(r > 0.5 for r in firsts)} / "
              f"{sum(r > 0.5 for r in laters)} of {len(ratios)}; worst: {worst_first} {ratios[worst_first][0]:.2f}, "
              f"{worst_later} {ratios[worst_later][1]:.2f}")
    if cpu_ratios:
        cpu_values = list(cpu_ratios.values())
        worst_cpu = max(cpu_ratios, key=lambda n: cpu_ratios[n])
        print(f"CPU of a later step ÷ page-agent's, median over pages: {statistics.median(cpu_values):.2f}; "
              f"pages above 0.5: {sum(r > 0.5 for r in cpu_values)} of {len(cpu_values)}; worst: {worst_cpu} "
              f"{cpu_ratios[worst_cpu]:.2f}")
    print(f"not read: {len(failed)}" + "".join(f"\n  {line}" for line in failed))
    print(f"load average after: {os.getloadavg()[0]:.2f}")


async def page_agent_figures(documents: _Documents, tab: Tab, url: str, runs: int
                             ) -> tuple[list[float], list[float], str, list[float]]:
    """page-agent's first looks and later steps on `url`, each on a document of its own, its text, and the CPU of
    each later step."""
    await open_page(documents, url, page_agent=True)
    warm_ms, _ = await timed_page_agent(tab)
    peer_runs = 1 if warm_ms > SLOW_PEER_MS else runs
    first = []
    for _ in range(peer_runs):
        await open_page(documents, url, page_agent=True)
        first.append((await timed_page_agent(tab))[0])
    _, text = await timed_page_agent(tab)
    later, cpu = [], []
    for _ in range(peer_runs):
        before = await _cpu_ms(tab)
        ms, text = await timed_page_agent(tab)
        cpu.append(await _cpu_ms(tab) - before)
        later.append(ms)
    return first, later, text, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pages", type=Path, help="a folder of saved pages: NAME.html or NAME/source.html")
    parser.add_argument("--runs", type=int, default=3, help="measured runs per column and page (default 3)")
    parser.add_argument("--only", default="", help="comma-separated page names (default: all)")
    parser.add_argument("--no-peer", action="store_true", help="tabpilot alone (no page-agent)")
    args = parser.parse_args()
    asyncio.run(bench(args.pages, max(1, args.runs), {o for o in args.only.split(",") if o}, not args.no_peer))


if __name__ == "__main__":
    main()
