"""Native host figures.

1. host start → first frame answered (with tabpilot's bytecode cached as an install has it, and compiled at
   each start as in this sandbox; the main thread's CPU beside the wall time, less swayed by load; a bare
   interpreter answering one frame as the floor; what is imported before the answer), a framed round trip
   and exit after stdin EOF: the host run exactly as Chromium does (a subprocess speaking frames on
   stdin/stdout);
2. over the real extension relay (headless Chromium with extension/ loaded and the host installed
   into the profile, as tests/e2e/ does; the figures reach the relay through the host's test-only
   debug socket, one loopback websocket hop more than the host itself has):
   a CDP round trip, reading a medium page (`get_state`) over the relay and over the DevTools
   websocket, and the agent's time per step with the model's time excluded.

    .venv/bin/python bench/bench_host.py [--runs 15] [--no-relay | --start-only]

TABPILOT_HOME and HOME in temporary folders. Prints numbers; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
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
from collections.abc import Callable
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


def start_host(home: str, env: dict[str, str] | None = None, *, argv: list[str] | None = None,
               stderr: Any = None) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        argv or [sys.executable, "-m", "tabpilot", "chrome-extension://benchmark/"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=stderr,
        env={**os.environ, "TABPILOT_HOME": home, **(env or {})},
    )


# The least any Python host pays: the interpreter starting, reading one frame and answering it.
BARE_HOST = """import json, os, struct
size = struct.Struct("=I")
(length,) = size.unpack(os.read(0, 4))
data = json.dumps({"type": "reply", "id": json.loads(os.read(0, length))["id"], "ok": True}).encode()
os.write(1, size.pack(len(data)) + data)
os.read(0, 1)
"""


def first_frame(home: str, env: dict[str, str] | None = None, *, argv: list[str] | None = None,
                stderr: Any = None, answered: Callable[[], None] = lambda: None) -> tuple[float, float | None, int]:
    """One cold start: ms from spawning the host to its answer to hello, the CPU its main thread used until
    then (Linux: schedstat, in ns; the warm-up thread it starts after that reply is not counted; None
    elsewhere), and its pid."""
    began = time.perf_counter()
    host = start_host(home, env, argv=argv, stderr=stderr)
    assert host.stdin and host.stdout
    host.stdin.write(frame({"type": "hello", "id": "1", "extensionVersion": "bench"}))
    host.stdin.flush()
    read_frame(host.stdout)
    wall = (time.perf_counter() - began) * 1000
    answered()
    try:
        cpu: float | None = int(Path(f"/proc/{host.pid}/task/{host.pid}/schedstat").read_text().split()[0]) / 1e6
    except OSError:
        cpu = None
    host.stdin.close()
    host.wait()
    return wall, cpu, host.pid


def _spread(values: list[float]) -> str:
    return f"median {statistics.median(values):5.1f} ms (min {min(values):5.1f}, max {max(values):5.1f})"


def start_figures(home: str, runs: int) -> None:
    """Host start → first frame answered, as Chromium starts it, in two set-ups taking turns (so load from
    elsewhere falls on both alike): tabpilot's modules compiled once and cached, as a pip install leaves
    them; and compiled at each start, as PYTHONDONTWRITEBYTECODE=1 makes it (this sandbox sets it, so every
    host an e2e test's Chromium spawns starts that way). Then what the host imports before that answer."""
    with tempfile.TemporaryDirectory() as cache:
        setups = {
            "bytecode cached (as installed)": {"PYTHONPYCACHEPREFIX": cache, "PYTHONDONTWRITEBYTECODE": ""},
            "compiled at each start": {"PYTHONDONTWRITEBYTECODE": "1"},
            "bare interpreter, one frame": {"PYTHONPYCACHEPREFIX": cache, "PYTHONDONTWRITEBYTECODE": ""},
        }
        walls: dict[str, list[float]] = {name: [] for name in setups}
        cpus: dict[str, list[float]] = {name: [] for name in setups}
        for round_ in range(runs + 1):  # the first round fills the cache
            for name, env in setups.items():
                argv = [sys.executable, "-c", BARE_HOST] if name.startswith("bare") else None
                wall, cpu, _pid = first_frame(home, env, argv=argv)
                if round_:
                    walls[name].append(wall)
                    if cpu is not None:
                        cpus[name].append(cpu)
        print(f"host start → first frame answered ({runs} cold starts each; load {_load()}):")
        for name in setups:
            cpu_text = f"; main thread's CPU {_spread(cpus[name])}" if cpus[name] else ""
            print(f"  {name:<31} {_spread(walls[name])}{cpu_text}")
        print("  target: 71 ms (bytecode cached, quiet machine); the bare interpreter is the floor under this load")
        import_figures(home, {"PYTHONPYCACHEPREFIX": cache, "PYTHONDONTWRITEBYTECODE": ""})


# Holds back the modules the host loads only after its answer (native/process.py answers the first hello, then imports
# the loop and the host in stdio.py) until the bench has read the import log up to the answer.
HOLD_BACK = """
import os, time

AFTER_THE_ANSWER = ("tabpilot.native.stdio",)


class HoldBack:
    def find_spec(self, name, path, target=None):
        while name in AFTER_THE_ANSWER and not os.path.exists(os.environ["TABPILOT_BENCH_RELEASE"]):
            time.sleep(0.005)
        return None


import sys
sys.meta_path.insert(0, HoldBack())
"""


def import_figures(home: str, env: dict[str, str], runs: int = 5, shown: int = 14) -> None:
    """`python -X importtime` of the modules loaded before the host answers hello (those it loads after are held
    back until the log is read: HOLD_BACK), median over `runs` starts: the total and the costliest."""
    own: dict[str, list[float]] = {}
    totals = []
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "sitecustomize.py").write_text(HOLD_BACK)
        for run in range(runs):
            log, release = Path(folder) / f"importtime-{run}.txt", Path(folder) / f"release-{run}"
            written: list[int] = []  # how much of the log was there when the answer came
            with log.open("wb") as stderr:
                first_frame(home, {**env, "PYTHONPATH": folder, "TABPILOT_BENCH_RELEASE": str(release)},
                            argv=[sys.executable, "-X", "importtime", "-m", "tabpilot", "chrome-extension://benchmark/"],
                            stderr=stderr, answered=functools.partial(_note_size, log, written, release))
            total = 0.0
            for line in log.read_bytes()[: written[0]].decode().splitlines():
                fields = line.removeprefix("import time:").split("|")
                if len(fields) != 3 or not fields[0].strip().isdigit() or fields[2].strip() == "sitecustomize":
                    continue
                own.setdefault(fields[2].strip(), []).append(int(fields[0]) / 1000)
                total += int(fields[0]) / 1000
            totals.append(total)
    costliest = sorted(own.items(), key=lambda item: -statistics.median(item[1]))[:shown]
    print(f"  imports before the answer (-X importtime, bytecode cached): median {statistics.median(totals):.1f} ms "
          f"in {len(own)} modules; the costliest, each without what it imports:")
    print("    " + ", ".join(f"{name} {statistics.median(ms):.1f}" for name, ms in costliest))


def _note_size(path: Path, sizes: list[int], release: Path) -> None:
    sizes.append(path.stat().st_size)
    release.touch()


def _settled(pid: int, quiet: float = 0.5, limit: float = 20.0) -> float:
    """Seconds until the process `pid` used no CPU for `quiet` seconds (Linux: /proc; elsewhere a fixed 5 s)."""
    began = time.monotonic()
    stat = Path(f"/proc/{pid}/stat")
    if not stat.exists():
        time.sleep(5)
        return time.monotonic() - began

    def cpu() -> int:
        fields = stat.read_text().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])  # utime + stime, in clock ticks

    last = cpu()
    while time.monotonic() - began < limit:
        time.sleep(quiet)
        now = cpu()
        if now == last:
            break
        last = now
    return time.monotonic() - began


def _load() -> str:
    return " / ".join(f"{value:.2f}" for value in os.getloadavg())


def host_figures(runs: int, *, start_only: bool = False) -> None:
    with tempfile.TemporaryDirectory() as home:
        start_figures(home, runs)
        if start_only:
            return

        host = start_host(home)
        assert host.stdin and host.stdout

        def pings(count: int) -> list[float]:
            trips = []
            for n in range(count):
                began = time.perf_counter()
                host.stdin.write(frame({"type": "ping", "id": str(n)}))
                host.stdin.flush()
                read_frame(host.stdout)
                trips.append(time.perf_counter() - began)
            return trips

        # The first frame starts the warm-up (a thread importing the agent and openai, ~1 s of CPU that holds the
        # GIL): pings then wait on it. The worker's pings come mostly later, while the host waits for work.
        early = pings(200)
        settled = _settled(host.pid)
        trips = pings(500)
        print(f"framed ping round trip to the host, settled ({settled:.1f} s after start): median "
              f"{statistics.median(trips) * 1000:.3f} ms, p95 {sorted(trips)[int(len(trips) * 0.95)] * 1000:.3f} ms; "
              f"during its warm-up: median {statistics.median(early) * 1000:.3f} ms, "
              f"p95 {sorted(early)[int(len(early) * 0.95)] * 1000:.3f} ms")
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
    from tabpilot.native.relay import extension_browser

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{serve_pages()}/state_medium.html"
    with tempfile.TemporaryDirectory() as base:
        access = DebugAccess.new(port)
        harness = await start_connected_harness(find_browser(), Path(base), extra_env=access.env())
        link = await DebugLink.connect(access)
        relay = await extension_browser(link)
        await relay.current_tab()
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
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="cold starts per set-up, after one that fills the cache")
    parser.add_argument("--no-relay", action="store_true", help="only the host's own figures, no browser")
    parser.add_argument("--start-only", action="store_true", help="only the cold start figures")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tabpilot_home:
        os.environ["TABPILOT_HOME"] = tabpilot_home
        host_figures(options.runs, start_only=options.start_only)
        if not options.no_relay and not options.start_only:
            asyncio.run(relay_figures())
