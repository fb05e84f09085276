"""What a `tabpilot run` pays around the task itself: launching headless Chromium, the first tab, closing it
(the browser, its helpers, the temporary profile and the watchdog), and a whole one-step `tabpilot run` (the
model answers `done` at once: a scripted server on 127.0.0.1) as a user's terminal waits for it.

    .venv/bin/python bench/bench_launch.py [--runs 9]

Prints medians with the machine's load; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from agent_support import done  # noqa: E402

from tabpilot.browser.browser import Browser  # noqa: E402
from tabpilot.llm.scripted import ScriptedLLMServer  # noqa: E402


async def _launch_and_close() -> tuple[float, float, float]:
    started = time.perf_counter()
    browser = await Browser.launch(headless=True)
    launched = time.perf_counter()
    await browser.current_tab()
    tab = time.perf_counter()
    await browser.close()
    return launched - started, tab - launched, time.perf_counter() - tab


def _one_step_run(home: str, base_url: str) -> float:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env.update(TABPILOT_HOME=home, HOME=home)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "tabpilot", "run", "x", "--base-url", base_url, "--model", "scripted",
                    "--api-key", "sk-bench-0000000000000000"], env=env, capture_output=True, check=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    runs = max(3, parser.parse_args().runs)
    print(f"load average before: {os.getloadavg()[0]:.2f} (cores: {os.cpu_count()})")
    figures = [asyncio.run(_launch_and_close()) for _ in range(runs)]
    for name, values in zip(("launch", "first tab", "close"), zip(*figures, strict=True), strict=True):
        print(f"  {name:24} median {statistics.median(values) * 1000:7.1f} ms  (min {min(values) * 1000:.1f})")
    with tempfile.TemporaryDirectory() as home, ScriptedLLMServer([done()] * runs) as server:
        whole = [_one_step_run(home, server.base_url) for _ in range(runs)]
    print(f"  {'tabpilot run, one step':24} median {statistics.median(whole) * 1000:7.1f} ms  "
          f"(min {min(whole) * 1000:.1f})")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
