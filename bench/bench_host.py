"""Native host figures.

1. host start → first frame answered, a framed round trip and exit after stdin EOF: the host run
   exactly as Chromium does (a subprocess speaking frames on stdin/stdout);
2. over the real extension relay (headless Chromium with extension/ loaded and the host installed
   into the profile, as tests/e2e/ does; the figures reach the relay through the host's test-only
   debug socket, one loopback websocket hop more than the host itself has):
   a CDP round trip, reading a medium page (`get_state`) over the relay and over the DevTools
   websocket, and the agent's time per step with the model's time excluded.

    .venv/bin/python bench/bench_host.py [--no-relay]

TABPILOT_HOME and HOME in temporary folders. Prints numbers; asserts nothing.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HEADER = struct.Struct("=I")
ROOT = Path(__file__).resolve().parents[1]
STEPS = 12


def frame(message: dict) -> bytes:
    data = json.dumps(message).encode()
    return HEADER.pack(len(data)) + data


def read_frame(stream) -> dict:  # type: ignore[no-untyped-def]
    (length,) = HEADER.unpack(stream.read(4))
    return json.loads(stream.read(length))


def start_host(home: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "tabpilot", "chrome-extension://benchmark/"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env={**os.environ, "TABPILOT_HOME": home},
    )


def host_figures() -> None:
    with tempfile.TemporaryDirectory() as home:
        starts = []
        for _ in range(9):
            began = time.perf_counter()
            host = start_host(home)
            assert host.stdin and host.stdout
            host.stdin.write(frame({"type": "hello", "id": "1", "extensionVersion": "bench"}))
            host.stdin.flush()
            read_frame(host.stdout)
            starts.append(time.perf_counter() - began)
            host.stdin.close()
            host.wait()
        print(f"host start → first frame answered: median {statistics.median(starts) * 1000:.0f} ms "
              f"(min {min(starts) * 1000:.0f}, max {max(starts) * 1000:.0f}; target < 250 ms)")

        host = start_host(home)
        assert host.stdin and host.stdout
        trips = []
        for n in range(500):
            began = time.perf_counter()
            host.stdin.write(frame({"type": "ping", "id": str(n)}))
            host.stdin.flush()
            read_frame(host.stdout)
            trips.append(time.perf_counter() - began)
        print(f"framed ping round trip to the host: median {statistics.median(trips) * 1000:.3f} ms, "
              f"p95 {sorted(trips)[int(len(trips) * 0.95)] * 1000:.3f} ms")
        began = time.perf_counter()
        host.stdin.close()
        host.wait()
        print(f"exit after stdin EOF: {(time.perf_counter() - began) * 1000:.0f} ms")


def serve_pages() -> int:
    from tabpilot.localfiles import LocalFiles

    return LocalFiles(ROOT / "tests" / "fixtures" / "pages").port


def scroll_reply(step: int) -> Any:
    from tabpilot.llm.scripted import ToolCall

    action: dict[str, Any] = {"scroll": {"down": step % 2 == 0, "num_pages": 0.5}}
    if step == STEPS - 1:
        action = {"done": {"text": "Scrolled the front page.", "success": True}}
    return ToolCall("AgentOutput", {
        "evaluation_previous_goal": "Success", "memory": f"step {step}", "next_goal": "Scroll the front page",
        "action": action,
    })


async def product_steps(harness: Any, page: Any) -> None:
    """A task run the way users run one: typed into the popup, run by the host Chromium spawned, over
    the extension's chrome.debugger relay. Step times come from the record (each event's commit
    time), less the scripted model's HTTP time measured on the same endpoint."""
    import sqlite3

    from e2e_support import configure, run_in_popup, wait_status

    from tabpilot.llm import LLMClient, LLMConfig
    from tabpilot.llm.scripted import ScriptedLLMServer

    with ScriptedLLMServer([scroll_reply(i) for i in range(STEPS)]) as server:
        popup = await harness.open_popup(page)
        await configure(popup, server.base_url)
        task_id = await run_in_popup(popup, "Scroll the front page up and down.")
        status = await wait_status(popup, "completed", "error", "stopped", timeout=120)
        if status != "completed":
            print(f"the task through the popup ended {status}")
            return
        server.add(*[scroll_reply(0) for _ in range(20)])
        client = LLMClient(LLMConfig(base_url=server.base_url, model="scripted", api_key="bench"))
        from tabpilot.agent import AgentConfig
        from tabpilot.agent.macro import MACRO_TOOL_NAME, macro_parameters
        from tabpilot.agent.tools import assemble_tools
        from tabpilot.llm.client import ToolSpec

        spec = ToolSpec(MACRO_TOOL_NAME, "bench", macro_parameters(assemble_tools(AgentConfig())))
        model_ms = []
        for _ in range(20):
            began = time.perf_counter()
            await client.invoke([{"role": "user", "content": "x" * 8000}], spec, parse=lambda value: value)
            model_ms.append((time.perf_counter() - began) * 1000)
        await client.aclose()
    database = harness.tabpilot_home / "data" / "tasks.sqlite3"
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as db:
        rows = db.execute(
            "SELECT created_at, body FROM events WHERE task_id = ? ORDER BY seq", (task_id,)
        ).fetchall()
    step_times = [created for created, body in rows if json.loads(body)["type"] == "step"]
    gaps = [(b - a) * 1000 for a, b in itertools.pairwise(step_times[1:])]  # the first pays for warm-up
    model = statistics.median(model_ms)
    delay = AgentConfig().step_delay * 1000  # the pause page-agent leaves between steps, on purpose
    print(f"a task from the popup over the relay, medium page ({len(step_times)} steps, scripted model):")
    print(f"  step to step (record times)   median {statistics.median(gaps):6.1f} ms")
    print(f"  model call (scripted, HTTP)   median {model:6.1f} ms")
    print(f"  deliberate step delay                {delay:6.1f} ms")
    print(f"  step overhead (the rest)      median {statistics.median(gaps) - model - delay:6.1f} ms (target < 150)")


async def relay_figures() -> None:
    sys.path.insert(0, str(ROOT / "tests"))  # e2e_support imports tests/required.py
    sys.path.insert(0, str(ROOT / "tests" / "e2e"))
    from e2e_support import start_connected_harness

    from tabpilot.browser.launcher import find_browser
    from tabpilot.browser.state import get_state
    from tabpilot.native.debug import DebugAccess, DebugLink
    from tabpilot.native.relay import RelayBrowser

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{serve_pages()}/state_medium.html"
    with tempfile.TemporaryDirectory() as base:
        access = DebugAccess.new(port)
        harness = await start_connected_harness(find_browser(), Path(base), extra_env=access.env())
        link = await DebugLink.connect(access)
        relay = await RelayBrowser.open(link)
        try:
            tab = await relay.new_tab(url)
            trips = []
            for _ in range(300):
                began = time.perf_counter()
                await tab.session.send("Runtime.evaluate", {"expression": "1"})
                trips.append(time.perf_counter() - began)
            print(f"CDP round trip over the extension relay: median {statistics.median(trips) * 1000:.2f} ms, "
                  f"p95 {sorted(trips)[int(len(trips) * 0.95)] * 1000:.2f} ms")

            targets = (await harness.browser.connection.root.send("Target.getTargets"))["targetInfos"]
            direct_tab = await harness.browser.attach(next(t["targetId"] for t in targets if t["url"] == url))
            for label, browser, page in (("extension relay", relay, tab), ("DevTools websocket", harness.browser,
                                                                           direct_tab)):
                times = []
                for _ in range(15):
                    began = time.perf_counter()
                    state = await get_state(browser, page)
                    times.append(time.perf_counter() - began)
                print(f"reading the medium page ({len(state.elements)} elements, {len(state.text)} chars) over the "
                      f"{label}: median {statistics.median(times) * 1000:.0f} ms")

            await product_steps(harness, direct_tab)
        finally:
            await relay.close()
            await link.close()
            await harness.browser.close()


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tabpilot_home:
        os.environ["TABPILOT_HOME"] = tabpilot_home
        host_figures()
        if "--no-relay" not in sys.argv:
            asyncio.run(relay_figures())
