"""Host memory over many tasks (issue 14, item 10; issue 16, item 5): is ~70 KB a task a leak?

The product as users run it: headless Chromium with extension/ loaded and the host installed into the
profile (as tests/e2e/ does); Chromium spawns the host; one-step tasks typed into the popup and run over
the extension's chrome.debugger relay, the model the scripted server. The host's resident memory
(VmRSS from /proc) is printed after 10 and 20 tasks and every 50 after, up to 200 (or --tasks N), each with the
load average.

    .venv/bin/python bench/bench_memory.py [--tasks 200] [--probe [--tracemalloc]]

--probe looks inside the host at each of those points (bench/memory_probe/sitecustomize.py): objects the collector
tracks and the garbage a full collection finds, Python's arenas and glibc's heap after it, SQLite's memory; with
--tracemalloc also Python's traced heap (the host then runs with PYTHONTRACEMALLOC=1, slower and larger). Live
objects that stay flat while RSS rises are garbage or fragmentation, not a leak. The probe collects the garbage it
finds, so the RSS of a probed run is not the plain figure.

TABPILOT_HOME and HOME in temporary folders. Prints numbers; asserts nothing. Linux only (/proc).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # e2e_support imports tests/required.py
sys.path.insert(0, str(ROOT / "tests" / "e2e"))


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for {pid}")


def load() -> str:
    return f"load {os.getloadavg()[0]:.2f}"


async def probe(pid: int, folder: Path, number: int) -> str:
    """What the host's probe (bench/memory_probe) says, as one line."""
    os.kill(pid, signal.SIGUSR1)
    found = folder / f"probe-{number}.json"
    for _ in range(600):
        if found.exists():
            break
        await asyncio.sleep(0.05)
    else:
        return "(the probe did not answer)"
    seen = json.loads(found.read_text())
    parts = [f"objects {seen['tracked']} ({seen['garbage']} garbage; {seen['frozen']} frozen)"]
    if "traced" in seen:
        parts.append(f"traced {seen['traced'] / 2**20:.2f} MB")
    pymalloc, malloc = seen.get("pymalloc"), seen.get("malloc")
    if isinstance(pymalloc, dict):
        parts.append(f"arenas {pymalloc.get('arenas')} ({pymalloc.get('in_blocks', 0) / 2**20:.1f} MB in blocks)")
    if isinstance(malloc, dict):
        parts.append(f"malloc {malloc['in_use'] / 2**20:.1f} MB used, {malloc['free'] / 2**20:.1f} free")
    if isinstance(seen.get("sqlite"), int):
        parts.append(f"sqlite {seen['sqlite'] / 1024:.0f} KB")
    return " | ".join(parts)


async def main(tasks: int, probing: bool, tracing: bool) -> None:
    from e2e_support import configure, done, run_in_popup, start_connected_harness, wait_status

    from tabpilot.browser.launcher import find_browser
    from tabpilot.llm.scripted import ScriptedLLMServer
    from tabpilot.localfiles import LocalFiles

    pages_folder = ROOT / "tests" / "fixtures" / "pages"
    with tempfile.TemporaryDirectory(prefix="tpm-") as base, LocalFiles(pages_folder) as pages, \
            ScriptedLLMServer([]) as server:
        folder = Path(base) / "probe"
        env: dict[str, str] = {}
        if probing:
            folder.mkdir()
            earlier = os.environ.get("PYTHONPATH")
            path = os.pathsep.join([str(ROOT / "bench" / "memory_probe"), *([earlier] if earlier else [])])
            env = {"PYTHONPATH": path, "TABPILOT_MEMORY_PROBE": str(folder)}
            if tracing:
                env["PYTHONTRACEMALLOC"] = "1"
        harness = await start_connected_harness(find_browser(), Path(base), extra_env=env)
        probes = 0
        try:
            tab = await harness.browser.new_tab(pages.url("basic.html"))
            popup = await harness.open_popup(tab)
            await configure(popup, server.base_url)
            [host] = harness.host_pids()
            print(f"host {host}: {rss_kb(host) / 1024:.1f} MB before the first task ({load()})")
            figures: list[tuple[int, int]] = []
            began = time.monotonic()
            for number in range(1, tasks + 1):
                server.add(done(f"task {number} done"))
                await run_in_popup(popup, f"Task number {number}: read the page")
                status = await wait_status(popup, "completed", "error", "stopped", timeout=60)
                if status != "completed":
                    print(f"task {number} ended {status}; stopping")
                    break
                # Run pressed within ~20 ms of the final status is refused as busy (issue 14, item 6)
                await asyncio.sleep(0.3)
                if number in (10, 20) or number % 50 == 0:
                    figures.append((number, rss_kb(host)))
                    print(f"after {number:4d} tasks: host RSS {figures[-1][1] / 1024:6.1f} MB "
                          f"({time.monotonic() - began:.0f} s, {load()})", flush=True)
                    if probing:
                        probes += 1
                        print(f"    {await probe(host, folder, probes)}", flush=True)
            if len(figures) > 1:
                (first_n, first), (last_n, last) = figures[0], figures[-1]
                print(f"RSS after {last_n} tasks is {(last / first - 1) * 100:+.1f} % of after {first_n} "
                      "(issue 16's target: within 10 %)")
            for (first_n, first) in [figure for figure in figures if figure[0] in (10, 50)]:
                last_n, last = figures[-1]
                if last_n > first_n:
                    per_task = (last - first) / (last_n - first_n)
                    print(f"growth from task {first_n} to {last_n}: {per_task:.1f} KB a task")
        finally:
            await harness.browser.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--probe", action="store_true", help="look inside the host at each figure")
    parser.add_argument("--tracemalloc", action="store_true", help="with --probe: the host traces its Python heap")
    arguments = parser.parse_args()
    asyncio.run(main(arguments.tasks, arguments.probe, arguments.tracemalloc))
