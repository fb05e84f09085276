"""How soon a request to run a long task shows in the popup (a task may have 200,000 characters: MAX_TASK_CHARS).

The product as users run it: headless Chromium with extension/ loaded and the host installed into the profile (as
tests/e2e/ does); a local client (tabpilot mcp's HostLink) sends `approval.ask` through the host's local endpoint;
the host pushes `approval.request` to the extension, whose popup draws the card. Printed per task size and kind of
text: when the card was added to the popup's page, and when the frame after it was drawn (both from the moment the
client sent the question), and when the bench saw it. Each card is then answered Deny.

    .venv/bin/python bench/bench_approval_card.py [--kinds words,nospace,cjk,lines] [--sizes 1000,20000,200000]

Measured on 2 loaded cores (Chromium 156), a 200,000-character task: drawn whole, the card was painted 0.5-1.0 s
after the question (words 1.04 s, CJK 0.97 s, lines 0.52 s; the message itself reached the popup in 0.2-0.5 s);
with its first 2,000 characters and a "Show all" button (lib/task_text.js), 0.04-0.24 s (CJK the slowest: its
600 KB of UTF-8 go as two chunks). The first question of a run also waits for the worker: read the later ones.
TABPILOT_HOME and HOME in temporary folders. Prints numbers; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # e2e_support imports tests/required.py
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

KINDS = {
    "words": lambda n: ("lorem ipsum dolor sit amet " * (n // 27 + 1))[:n],
    "nospace": lambda n: "x" * n,
    "cjk": lambda n: ("请帮我填写这个表格" * (n // 9 + 1))[:n],
    "lines": lambda n: ("line of text\n" * (n // 13 + 1))[:n],
}

# In the popup: when each card is added, and when the frame after that is drawn (epoch milliseconds).
WATCH = """
window.benchSeen = new Map();
new MutationObserver(() => {
  for (const li of document.querySelectorAll('#approval-list .approval-card')) {
    if (benchSeen.has(li.dataset.approvalId)) continue;
    const seen = { added: performance.timeOrigin + performance.now() };
    benchSeen.set(li.dataset.approvalId, seen);
    requestAnimationFrame(() => setTimeout(() => { seen.painted = performance.timeOrigin + performance.now(); }));
  }
}).observe(document.getElementById('approval-list'), { childList: true });
true"""
PAINTED = "(() => { for (const [id, v] of benchSeen) if (v.painted) return [id, v.added, v.painted]; return null; })()"


async def main(kinds: list[str], sizes: list[int]) -> None:
    from e2e_support import start_connected_harness, wait_until

    from tabpilot.browser.launcher import find_browser
    from tabpilot.mcp.hostlink import HostLink

    with tempfile.TemporaryDirectory() as base:
        harness = await start_connected_harness(find_browser(), Path(base))
        os.environ["TABPILOT_HOME"] = str(harness.tabpilot_home)  # the host's local endpoint, as a client finds it
        try:
            popup = await harness.open_popup()
            await popup.js(WATCH)
            link = HostLink("Bench")
            try:
                for kind in kinds:
                    for size in sizes:
                        task = KINDS[kind](size)
                        sent = time.time() * 1000
                        asking = asyncio.ensure_future(link.request("approval.ask", {
                            "requester": f"Bench {kind} {size}", "task": task, "newTab": True, "timeout": 60}))
                        card = await wait_until(lambda: popup.js(PAINTED), "the card", interval=0.01)
                        seen = time.time() * 1000
                        approval_id, added, painted = card
                        print(f"{kind:8} {size:>7,} characters: card added {added - sent:6.0f} ms, painted "
                              f"{painted - sent:6.0f} ms, seen by the bench {seen - sent:6.0f} ms", flush=True)
                        await popup.js(f"benchSeen.delete({json.dumps(approval_id)}); document.querySelector("
                                       f"'.approval-card[data-approval-id=\"{approval_id}\"] "
                                       "button[data-decision=\"deny\"]').click(); true")
                        await asking
            finally:
                await link.close()
        finally:
            await harness.browser.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kinds", default="words,nospace,cjk,lines")
    parser.add_argument("--sizes", default="1000,20000,200000")
    options = parser.parse_args()
    asyncio.run(main(options.kinds.split(","), [int(size) for size in options.sizes.split(",")]))
