"""The peers' page reading and tabpilot's get_state side by side, in one headless Chromium, on bench_state's pages:
page-agent's page controller, browser-use's browser state, tabpilot. Time of the first look after a navigation and
of a later step, and o200k tokens of each system's page text.

    .venv/bin/python bench/bench_peers.py [--runs 9] [--only login,shop] [--dump DIR]

The peers are fetched at run time into the user cache directory (never into the repo, never a tabpilot dependency):
- page-agent: the npm package @page-agent/page-controller 1.12.x, with `npm pack`. Its bundle is an ES module with no
  static imports; the bench strips the `export` line and installs it with Page.addScriptToEvaluateOnNewDocument, as
  page-agent's extension content script is there before a step runs. Its page text is what page-agent sends the
  model as <browser_state>: `getBrowserState()`'s header, content (the simplified HTML of its flat tree, full page:
  viewportExpansion -1 by default) and footer.
- browser-use 0.13.0, with pip into a venv of its own (its pins clash with tabpilot's), run in a subprocess with that
  venv's python (bench_peers_browser_use.py says what it times) that connects to this Chromium's CDP endpoint and
  reads in a tab of its own with the same viewport. Its page text is the <browser_state> part of its agent's message
  (interactive elements of the viewport, page stats, tabs, scroll position). The column in brackets is its DOM
  service alone, without its event bus (not what a step pays; the floor of one).
tabpilot's text is the viewport plus a count of what lies above and below it, so on pages longer than the screen
page-agent's tokens include off-screen elements tabpilot only counts (shop, medium, listeners, table). On
shadow+frames neither peer's text has the cross-origin iframe (browser-use leaves it out in the tab it opens here)
and page-agent's not the closed shadow root; tabpilot's has both.
All are timed the same way: wall time from Python of what produces the page text, median over the runs; first look =
a fresh navigation then one read; later step = repeated reads of one document, each system on a document of its own
(page-agent draws a highlight box per element into the page on every read: a page it has read is not the page).
page-agent's bundle is in the documents page-agent reads only (see _Documents).
"CPU pa / tp" is what a later step costs in processor time, which a loaded machine sways far less than wall time:
the page's renderer main thread (Performance.getMetrics TaskDuration in thread time) plus this Python process (what
tabpilot's host does with the reply; page-agent's Python side only sends one command).
Prints numbers and the machine's load; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

import platformdirs
from bench_state import CASES, COUNT_ELEMENTS, PAGES, _Counted, _timed_state, _tokens

from tabpilot.browser.browser import Browser
from tabpilot.browser.tab import Tab
from tabpilot.localfiles import LocalFiles

PAGE_AGENT = "@page-agent/page-controller@1.12"
BROWSER_USE = "0.13.0"
BROWSER_USE_READER = Path(__file__).resolve().parent / "bench_peers_browser_use.py"
# page-agent's core puts these three parts, one a line, inside <browser_state> in the model's message.
PAGE_AGENT_STATE = ("window.__benchPeer ??= new window.__BenchPageController({});"
                    "window.__benchPeer.getBrowserState().then(s => s.header + '\\n' + s.content + '\\n' + s.footer)")
# page-agent draws a highlight box per element on every read (getFlatTree forces doHighlightElements): seconds
# a read on pages of a few thousand elements, so slow pages get one timed read and a generous timeout.
PAGE_AGENT_TIMEOUT = 300.0
SLOW_PEER_MS = 2000.0


def _cache() -> Path:
    cache = Path(platformdirs.user_cache_dir("tabpilot-bench"))
    cache.mkdir(parents=True, exist_ok=True)
    return cache


def page_agent_bundle() -> tuple[str, str]:
    """(version, JS that defines window.__BenchPageController), downloading the package once into the cache."""
    cache = _cache()
    tarballs = sorted(cache.glob("page-agent-page-controller-1.12.*.tgz"))
    if not tarballs:
        subprocess.run(["npm", "pack", PAGE_AGENT, "--pack-destination", str(cache)], check=True, capture_output=True)
        tarballs = sorted(cache.glob("page-agent-page-controller-1.12.*.tgz"))
    with tarfile.open(tarballs[-1]) as archive:
        member = archive.extractfile("package/dist/lib/page-controller.js")
        assert member is not None
        source = member.read().decode()
    version = tarballs[-1].name.removeprefix("page-agent-page-controller-").removesuffix(".tgz")
    source = re.sub(r"^export \{[^}]*\};\s*$", "", source, flags=re.M)
    return version, f"(() => {{\n{source}\nwindow.__BenchPageController = PageController;\n}})();"


def browser_use_python() -> Path:
    """The python of a venv in the cache holding browser-use, made with pip once (a minute or so)."""
    venv = _cache() / f"browser-use-{BROWSER_USE}"
    python = venv / "bin" / "python"
    installed = venv / ".installed"
    if not installed.exists():
        print(f"installing browser-use {BROWSER_USE} into {venv} (once)", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", f"browser-use=={BROWSER_USE}"], check=True)
        installed.touch()
    return python


async def _cpu_ms(tab: Tab) -> float:
    """Processor time so far, ms: the tab's renderer main thread and this process."""
    metrics = (await tab.send("Performance.getMetrics"))["metrics"]
    task = next(m["value"] for m in metrics if m["name"] == "TaskDuration")
    return (task + time.process_time()) * 1000


class _Documents:
    """Opens the bench's pages in the tab, each document with page-agent's bundle in it or not: each system reads a
    document as it would in use. page-agent's content script is in every page it reads; tabpilot never shares a page
    with it, and a page that compiles and runs page-agent's bundle as it loads is a busier renderer to read."""

    def __init__(self, tab: Tab, bundle: str) -> None:
        self.tab, self.bundle = tab, bundle
        self.script: str | None = None  # the identifier of the bundle's addScriptToEvaluateOnNewDocument, while there

    async def open(self, url: str, *, page_agent: bool) -> None:
        if page_agent and self.script is None:
            added = await self.tab.send("Page.addScriptToEvaluateOnNewDocument", {"source": self.bundle})
            self.script = added["identifier"]
        elif not page_agent and self.script is not None:
            await self.tab.send("Page.removeScriptToEvaluateOnNewDocument", {"identifier": self.script})
            self.script = None
        await self.tab.navigate(url)


async def timed_page_agent(tab: Tab) -> tuple[float, str]:
    started = time.perf_counter()
    text = await tab.evaluate(PAGE_AGENT_STATE, timeout=PAGE_AGENT_TIMEOUT)
    return (time.perf_counter() - started) * 1000, str(text)


async def browser_use_figures(browser: Browser, python: Path, url: str, runs: int,
                              viewport: list[int]) -> dict[str, Any]:
    """browser-use's figures for one page (bench_peers_browser_use.py in its venv), its tab closed afterwards."""
    assert browser.launched is not None
    env = dict(os.environ, ANONYMIZED_TELEMETRY="false", BROWSER_USE_LOGGING_LEVEL="error",
               BROWSER_USE_CONFIG_DIR=str(_cache() / "browser-use-config"))
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "figures.json"
        reader = await asyncio.create_subprocess_exec(
            str(python), str(BROWSER_USE_READER), browser.launched.http_url, url, str(runs),
            f"{viewport[0]}x{viewport[1]}", str(out),
            env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
        output, _ = await reader.communicate()
        if reader.returncode != 0 or not out.exists():
            raise RuntimeError(f"browser-use's reader failed ({reader.returncode}):\n{output.decode()[-3000:]}")
        figures: dict[str, Any] = json.loads(out.read_text())
    await browser.close_tab(figures["target"])
    return figures


def _median(values: list[float]) -> float:
    return statistics.median(values)


def _pair(first: list[float], later: list[float], runs: int) -> str:
    return f"{_median(first):6.1f} /{_median(later):6.1f}" + ("¹" if len(first) < runs else " ")


def _use_pair(figures: dict[str, Any], name: str, runs: int) -> str:
    if f"{name}_later" not in figures:
        return "failed"
    return _pair(figures[f"{name}_first"], figures[f"{name}_later"], runs)


def _dump(directory: Path, name: str, texts: dict[str, str]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for system, text in texts.items():
        if text:
            (directory / f"{name}.{system}.txt").write_text(text)


async def bench(runs: int, only: set[str], dump: Path | None) -> None:
    version, bundle = page_agent_bundle()
    python = browser_use_python()
    server = LocalFiles(PAGES)
    browser = await Browser.launch(headless=True)
    try:
        tab = await browser.current_tab()
        pages = _Documents(tab, bundle)
        await tab.send("Performance.enable", {"timeDomain": "threadTicks"})
        counter = _Counted(tab.session.connection)
        print(f"page-agent page controller {version}, browser-use {BROWSER_USE} (its DOM service alone in "
              f"brackets), tabpilot get_state; ms, medians of {runs} runs (¹ one run: a read of seconds)")
        print(f"load average before: {os.getloadavg()[0]:.2f} (cores: {os.cpu_count()})\n")
        print(f"{'page':14} {'elements':>8}  {'page-agent first/later':>22}  {'browser-use first/later':>23}  "
              f"{'(DOM service)':>15}  {'tabpilot first/later':>21}  {'÷ best peer':>11}  "
              f"{'tokens pa / bu / tp':>20}  {'CPU pa / tp (÷)':>20}  load")
        for label, page, _ in CASES:
            if only and label.split()[0] not in only:
                continue
            url = server.url(page)
            await pages.open(url, page_agent=True)
            warm_ms, _ = await timed_page_agent(tab)
            page_agent_runs = 1 if warm_ms > SLOW_PEER_MS else runs
            await _timed_state(browser, tab, None, None, counter)  # warm-up (attaches frame tracking)
            page_agent_first, ours_first = [], []
            for run in range(runs):  # alternate, so load on the machine falls on both alike
                if run < page_agent_runs:
                    await pages.open(url, page_agent=True)
                    page_agent_first.append((await timed_page_agent(tab))[0])
                await pages.open(url, page_agent=False)
                ms, _, _ = await _timed_state(browser, tab, None, None, counter)
                ours_first.append(ms)
            # later steps: each system on a document of its own, read once before the timed reads
            await pages.open(url, page_agent=True)
            elements = await tab.evaluate(COUNT_ELEMENTS)
            _, page_agent_text = await timed_page_agent(tab)
            page_agent_later, page_agent_cpu = [], []
            for _ in range(page_agent_runs):
                before = await _cpu_ms(tab)
                ms, page_agent_text = await timed_page_agent(tab)
                page_agent_cpu.append(await _cpu_ms(tab) - before)
                page_agent_later.append(ms)
            await pages.open(url, page_agent=False)
            _, state, _ = await _timed_state(browser, tab, None, None, counter)
            ours_later, ours_cpu = [], []
            for _ in range(runs):
                before = await _cpu_ms(tab)
                ms, state, _ = await _timed_state(browser, tab, state, None, counter)
                ours_cpu.append(await _cpu_ms(tab) - before)
                ours_later.append(ms)
            # a fresh first look's text: the later step marks nothing new, the first look's is what a step pays
            await pages.open(url, page_agent=False)
            _, first_state, _ = await _timed_state(browser, tab, None, None, counter)
            viewport = await tab.evaluate("[innerWidth, innerHeight]")
            use = await browser_use_figures(browser, python, url, runs, viewport)
            await browser.activate(tab.target_id)
            texts = {"page-agent": page_agent_text, "browser-use": use.get("text", ""), "tabpilot": first_state.text}
            tokens = " / ".join(str(_tokens(text)) if text else "-" for text in texts.values())
            peers_first = [_median(page_agent_first), *([_median(use["step_first"])] if "step_later" in use else [])]
            peers_later = [_median(page_agent_later), *([_median(use["step_later"])] if "step_later" in use else [])]
            ratio = f"{_median(ours_first) / min(peers_first):4.2f} /{_median(ours_later) / min(peers_later):5.2f}"
            cpu = (f"{_median(page_agent_cpu):5.1f} /{_median(ours_cpu):5.1f} "
                   f"({_median(ours_cpu) / _median(page_agent_cpu):4.2f})")
            print(f"{label:14} {elements:8d}  {_pair(page_agent_first, page_agent_later, runs):>22}  "
                  f"{_use_pair(use, 'step', runs):>23}  {'(' + _use_pair(use, 'dom', runs).strip() + ')':>15}  "
                  f"{_pair(ours_first, ours_later, runs):>21}  {ratio:>11}  {tokens:>20}  {cpu:>20}  "
                  f"{os.getloadavg()[0]:.1f}", flush=True)
            if "error" in use:
                print(f"    browser-use failed: {use['error']}")
            elif use["window"] != [*viewport, "visible"]:
                print(f"    browser-use read in a window of {use['window']}, not the {viewport} of the others")
            if dump is not None:
                _dump(dump, label.split()[0], texts)
        print(f"\nload average after: {os.getloadavg()[0]:.2f}")
    finally:
        await browser.close()
        server.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9, help="measured runs per column and page (default 9)")
    parser.add_argument("--only", default="", help="comma-separated page labels (default: all)")
    parser.add_argument("--dump", type=Path, help="write each system's page text per page into this directory")
    args = parser.parse_args()
    asyncio.run(bench(max(3, args.runs), {o for o in args.only.split(",") if o}, args.dump))


if __name__ == "__main__":
    main()
