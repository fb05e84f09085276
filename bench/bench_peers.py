"""page-agent's page controller and tabpilot's get_state side by side, in one headless Chromium, on bench_state's pages:
time of the first look after a navigation and of a later step, and o200k tokens of each system's page text.

    .venv/bin/python bench/bench_peers.py [--runs 9] [--only login,shop]

The peer is the npm package @page-agent/page-controller 1.12.x, fetched at run time with `npm pack` into the user cache
directory (never into the repo). Its bundle is an ES module with no static imports; the bench strips the `export`
line and installs it with Page.addScriptToEvaluateOnNewDocument, as page-agent's extension content script is there
before a step runs. Its page text is what page-agent sends the model as <browser_state>: `getBrowserState()`'s
header, content (the simplified HTML of its flat tree, full page: viewportExpansion -1 by default) and footer.
tabpilot's text is the viewport plus a count of what lies above and below it, so on pages longer than the screen
page-agent's tokens include off-screen elements tabpilot only counts (shop, medium, listeners, table).
Both systems are timed the same way: wall time of the CDP call(s) from Python, median over the runs.
Prints numbers; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import statistics
import subprocess
import tarfile
import time
from pathlib import Path

import platformdirs
from bench_state import CASES, COUNT_ELEMENTS, PAGES, _Counted, _timed_state, _tokens

from tabpilot.browser.browser import Browser
from tabpilot.browser.tab import Tab
from tabpilot.localfiles import LocalFiles

PEER = "@page-agent/page-controller@1.12"
# page-agent's core puts these three parts, one a line, inside <browser_state> in the model's message.
PEER_STATE = ("window.__benchPeer ??= new window.__BenchPageController({});"
              "window.__benchPeer.getBrowserState().then(s => s.header + '\\n' + s.content + '\\n' + s.footer)")
# page-agent draws a highlight box per element on every read (getFlatTree forces doHighlightElements): seconds
# a read on pages of a few thousand elements, so slow pages get one timed read and a generous timeout.
PEER_TIMEOUT = 300.0
SLOW_PEER_MS = 2000.0


def peer_bundle() -> tuple[str, str]:
    """(version, JS that defines window.__BenchPageController), downloading the package once into the cache."""
    cache = Path(platformdirs.user_cache_dir("tabpilot-bench"))
    cache.mkdir(parents=True, exist_ok=True)
    tarballs = sorted(cache.glob("page-agent-page-controller-1.12.*.tgz"))
    if not tarballs:
        subprocess.run(["npm", "pack", PEER, "--pack-destination", str(cache)], check=True, capture_output=True)
        tarballs = sorted(cache.glob("page-agent-page-controller-1.12.*.tgz"))
    with tarfile.open(tarballs[-1]) as archive:
        member = archive.extractfile("package/dist/lib/page-controller.js")
        assert member is not None
        source = member.read().decode()
    version = tarballs[-1].name.removeprefix("page-agent-page-controller-").removesuffix(".tgz")
    source = re.sub(r"^export \{[^}]*\};\s*$", "", source, flags=re.M)
    return version, f"(() => {{\n{source}\nwindow.__BenchPageController = PageController;\n}})();"


async def timed_peer(tab: Tab) -> tuple[float, str]:
    started = time.perf_counter()
    text = await tab.evaluate(PEER_STATE, timeout=PEER_TIMEOUT)
    return (time.perf_counter() - started) * 1000, str(text)


def _pair(first: list[float], later: list[float]) -> str:
    return f"{statistics.median(first):7.1f} /{statistics.median(later):7.1f}"


def _dump(directory: Path, name: str, peer_text: str, our_text: str) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"{name}.page-agent.txt").write_text(peer_text)
    (directory / f"{name}.tabpilot.txt").write_text(our_text)


async def bench(runs: int, only: set[str], dump: Path | None) -> None:
    version, bundle = peer_bundle()
    server = LocalFiles(PAGES)
    browser = await Browser.launch(headless=True)
    try:
        tab = await browser.current_tab()
        await tab.send("Page.addScriptToEvaluateOnNewDocument", {"source": bundle})
        counter = _Counted(tab.session.connection)
        print(f"page-agent page controller {version} vs tabpilot get_state; {runs} runs a column, medians")
        print(f"{'page':14} {'elements':>8}  {'page-agent ms first/later':>25}  {'tabpilot ms first/later':>23}  "
              f"{'ratio first/later':>17}  {'tokens page-agent/tabpilot':>26}")
        for label, page, _ in CASES:
            if only and label.split()[0] not in only:
                continue
            url = server.url(page)
            await tab.navigate(url)
            warm_ms, _ = await timed_peer(tab)
            peer_runs = 1 if warm_ms > SLOW_PEER_MS else runs
            await _timed_state(browser, tab, None, None, counter)  # warm-up (attaches frame tracking)
            peer_first, ours_first = [], []
            for run in range(runs):  # alternate, so load on the machine falls on both alike
                if run < peer_runs:
                    await tab.navigate(url)
                    peer_first.append((await timed_peer(tab))[0])
                await tab.navigate(url)
                ms, state, _ = await _timed_state(browser, tab, None, None, counter)
                ours_first.append(ms)
            elements = await tab.evaluate(COUNT_ELEMENTS)
            _, peer_text = await timed_peer(tab)
            _, state, _ = await _timed_state(browser, tab, state, None, counter)
            peer_later, ours_later = [], []
            for run in range(runs):
                if run < peer_runs:
                    ms, peer_text = await timed_peer(tab)
                    peer_later.append(ms)
                ms, state, _ = await _timed_state(browser, tab, state, None, counter)
                ours_later.append(ms)
            # a fresh first look's text: the later step marks nothing new, the first look's is what a step pays
            await tab.navigate(url)
            _, first_state, _ = await _timed_state(browser, tab, None, None, counter)
            peer_tokens, our_tokens = _tokens(peer_text), _tokens(first_state.text)
            ratio = (f"{statistics.median(ours_first) / statistics.median(peer_first):7.2f}x /"
                     f"{statistics.median(ours_later) / statistics.median(peer_later):5.2f}x")
            peer_cell = _pair(peer_first, peer_later) + ("" if peer_runs == runs else " (1 run)")
            print(f"{label:14} {elements:8d}  {peer_cell:>25}  "
                  f"{_pair(ours_first, ours_later):>23}  {ratio:>17}  {f'{peer_tokens} / {our_tokens}':>26}",
                  flush=True)
            if dump is not None:
                _dump(dump, label.split()[0], peer_text, first_state.text)
    finally:
        await browser.close()
        server.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9, help="measured runs per column and page (default 9)")
    parser.add_argument("--only", default="", help="comma-separated page labels (default: all)")
    parser.add_argument("--dump", type=Path, help="write both systems' page text per page into this directory")
    args = parser.parse_args()
    asyncio.run(bench(max(3, args.runs), {o for o in args.only.split(",") if o}, args.dump))


if __name__ == "__main__":
    main()
