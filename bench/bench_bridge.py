"""Page bridge figures, through the real extension and the host Chromium spawned:
  - allow → registered: `tabpilot sites allow` returns → the worker has registered the bridge for the
    origin (the host notices a terminal's change by polling the file every 0.5 s)
  - token → global: a page holding page-agent's token is given `window.PAGE_AGENT_EXT` after it loads
    (page-agent's own Quick Start waits up to 1 s for it); an allowed origin has it at document_start
  - execute → first onStatusChange, and execute → result, for a one-step task on the scripted model

    .venv/bin/python bench/bench_bridge.py [--runs 10]

Prints numbers; asserts nothing."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # e2e_support imports tests/required.py
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

from e2e_support import E2E_PAGES, done, start_connected_harness, wait_until  # noqa: E402

from tabpilot.browser.launcher import find_browser  # noqa: E402
from tabpilot.llm.scripted import ScriptedLLMServer  # noqa: E402
from tabpilot.localfiles import LocalFiles  # noqa: E402


def sites(env: dict[str, str], *args: str) -> str:
    return subprocess.run([sys.executable, "-m", "tabpilot", "sites", *args], env=env, check=True,
                          capture_output=True, text=True).stdout


def figure(name: str, values: list[float]) -> None:
    values = sorted(values)
    print(f"{name:<44} median {statistics.median(values):7.1f} ms   min {values[0]:7.1f}   max {values[-1]:7.1f}"
          f"   (n={len(values)})")


async def main(runs: int) -> None:
    with tempfile.TemporaryDirectory() as temp, ScriptedLLMServer([]) as llm:
        folder = Path(temp) / "site"
        folder.mkdir()
        page = (E2E_PAGES / "bridge" / "quickstart.html").read_text().replace("{{QUICKSTART}}", "")
        (folder / "app.html").write_text(page)
        harness = await start_connected_harness(find_browser(), Path(temp) / "e2e")
        env = {**os.environ, "TABPILOT_HOME": str(harness.tabpilot_home)}
        try:
            with LocalFiles(folder) as site:
                origin = f"http://127.0.0.1:{site.port}"
                registered = []
                for _ in range(runs):
                    for action in ("allow", "revoke"):
                        await asyncio.to_thread(sites, env, action, origin)
                        began = time.perf_counter()
                        want = "true" if action == "allow" else "false"
                        await wait_until(lambda want=want: harness.sw(
                            f"await bridge.registering; !!bridgeSiteOf({json.dumps(origin)}) === {want}"),
                            "the change", 20, interval=0.01)
                        if action == "allow":
                            registered.append((time.perf_counter() - began) * 1000)
                figure("allow in a terminal → bridge registered", registered)

                token = json.loads(await asyncio.to_thread(sites, env, "list", "--json"))["token"]
                tab = await harness.browser.new_tab(site.url("app.html", host="localhost"))
                await tab.evaluate(f"localStorage.setItem('PageAgentExtUserAuthToken', {json.dumps(token)})")
                given = []
                for _ in range(runs):
                    await tab.evaluate("location.reload(), true")
                    await wait_until(lambda: tab.evaluate("document.readyState === 'complete'"), "the reload")
                    at = await wait_until(lambda: tab.evaluate(
                        "window.PAGE_AGENT_EXT ? performance.now() : null"), "the global", 10, interval=0.005)
                    given.append(float(at))
                figure("token page: load start → global (upper bound)", given)
                await harness.browser.close_tab(tab.target_id)

                await asyncio.to_thread(sites, env, "allow", origin)
                await wait_until(lambda: harness.sw(f"await bridge.registering; !!bridgeSiteOf({json.dumps(origin)})"),
                                 "the allow")
                tab = await harness.browser.new_tab(site.url("app.html"))
                await wait_until(lambda: tab.evaluate("!!window.PAGE_AGENT_EXT"), "the global")
                first_status, result = [], []
                config = {"baseURL": llm.base_url, "model": "scripted", "apiKey": "sk-bench"}
                for _ in range(runs):
                    llm.add(done("ok"))
                    timing = await tab.evaluate(f"""(async () => {{
                        const t0 = performance.now(); let first = null;
                        const r = await window.PAGE_AGENT_EXT.execute('Say ok', Object.assign({json.dumps(config)},
                            {{onStatusChange: () => {{ if (first === null) first = performance.now() - t0; }}}}));
                        return {{first, total: performance.now() - t0, ok: r.success}};
                    }})()""", timeout=60)
                    first_status.append(timing["first"])
                    result.append(timing["total"])
                figure("execute → first onStatusChange", first_status)
                figure("execute → result (one step, scripted model)", result)
        finally:
            await harness.browser.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    asyncio.run(main(parser.parse_args().runs))
