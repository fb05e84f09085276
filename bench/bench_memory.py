"""Host memory over many tasks (issue 14, item 10; issue 16, item 5): is ~70 KB a task a leak?

The product as users run it: headless Chromium with extension/ loaded and the host installed into the
profile (as tests/e2e/ does); Chromium spawns the host; one-step tasks typed into the popup and run over
the extension's chrome.debugger relay, the model the scripted server. The host's resident memory
(VmRSS from /proc) is printed after 10 tasks and every 50 after, up to 200 (or --tasks N).

    .venv/bin/python bench/bench_memory.py [--tasks 200]

TABPILOT_HOME and HOME in temporary folders. Prints numbers; asserts nothing. Linux only (/proc).
"""

from __future__ import annotations

import argparse
import asyncio
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


async def main(tasks: int) -> None:
    from e2e_support import configure, done, run_in_popup, start_connected_harness, wait_status

    from tabpilot.browser.launcher import find_browser
    from tabpilot.llm.scripted import ScriptedLLMServer
    from tabpilot.localfiles import LocalFiles

    pages_folder = ROOT / "tests" / "fixtures" / "pages"
    with tempfile.TemporaryDirectory(prefix="tpm-") as base, LocalFiles(pages_folder) as pages, \
            ScriptedLLMServer([]) as server:
        harness = await start_connected_harness(find_browser(), Path(base))
        try:
            tab = await harness.browser.new_tab(pages.url("basic.html"))
            popup = await harness.open_popup(tab)
            await configure(popup, server.base_url)
            [host] = harness.host_pids()
            print(f"host {host}: {rss_kb(host) / 1024:.1f} MB before the first task")
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
                if number == 10 or number % 50 == 0:
                    figures.append((number, rss_kb(host)))
                    print(f"after {number:4d} tasks: host RSS {figures[-1][1] / 1024:6.1f} MB "
                          f"({time.monotonic() - began:.0f} s)", flush=True)
            if len(figures) > 1:
                (first_n, first), (last_n, last) = figures[0], figures[-1]
                print(f"RSS after {last_n} tasks is {(last / first - 1) * 100:+.1f} % of after {first_n} "
                      "(issue 16's target: within 10 %)")
            for (first_n, first) in figures[:2]:
                last_n, last = figures[-1]
                if last_n > first_n:
                    per_task = (last - first) / (last_n - first_n)
                    print(f"growth from task {first_n} to {last_n}: {per_task:.1f} KB a task")
        finally:
            await harness.browser.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=200)
    asyncio.run(main(parser.parse_args().tasks))
