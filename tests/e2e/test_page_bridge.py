"""The page bridge end to end: real Chromium, the real extension, the real host Chromium spawned, the
scripted model server. page-agent's documented Quick Start, pasted unchanged into an app page (its
TypeScript types erased), runs a multi-step task through `window.PAGE_AGENT_EXT`; consent, revoke,
the ask prompt, spoofing from an iframe or the page, reload mid-task, and where the page's API key
must never appear. Sites are allowed with `tabpilot sites` (the running browser picks it up at once)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e_support import E2E_PAGES, Harness, act_on, done, wait_until

from tabpilot.browser.tab import Tab
from tabpilot.llm.scripted import ScriptedLLMServer
from tabpilot.localfiles import LocalFiles

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]

BRIDGE_PAGES = E2E_PAGES / "bridge"
PAGE_KEY = "sk-page-app-key-5d2e9f7a1c3b4e6f"  # the app's own key: it must appear nowhere tabpilot writes
SCREENS = Path(os.environ.get("TABPILOT_BRIDGE_SCREENS", "/tmp/tabpilot-screens"))


def quickstart_script(base_url: str) -> str:
    """page-agent's Quick Start as a browser runs it: types erased (what tsc emits), the endpoint and key
    pointed at the test's model server. Each edit must apply exactly once, so a changed copy fails loudly."""
    source = (BRIDGE_PAGES / "page_agent_quickstart.ts").read_text()
    edits = [
        ("import type { AgentActivity, AgentStatus, ExecutionResult, HistoricalEvent } from '@page-agent/core'\n", ""),
        ("): Promise<boolean> {", ") {"),
        ("window.PAGE_AGENT_EXT!.execute", "window.PAGE_AGENT_EXT.execute"),
        ("'https://api.openai.com/v1'", json.dumps(base_url)),
        ("'your-api-key'", json.dumps(PAGE_KEY)),
    ]
    for old, new in edits:
        assert source.count(old) == 1, f"the Quick Start copy changed: {old!r}"
        source = source.replace(old, new)
    return source


@pytest.fixture(scope="module")
def llm() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer([]) as server:
        yield server


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, llm: ScriptedLLMServer) -> Iterator[LocalFiles]:
    """The app's pages on their own origin: the Quick Start page and a plain app page."""
    folder = tmp_path_factory.mktemp("app")
    template = (BRIDGE_PAGES / "quickstart.html").read_text()
    (folder / "quickstart.html").write_text(template.replace("{{QUICKSTART}}", quickstart_script(llm.base_url)))
    (folder / "app.html").write_text(template.replace("{{QUICKSTART}}", ""))
    for extra in BRIDGE_PAGES.glob("*.html"):
        if extra.name != "quickstart.html":
            (folder / extra.name).write_text(extra.read_text())
    with LocalFiles(folder) as server:
        yield server


def origin_of(files: LocalFiles, host: str = "127.0.0.1") -> str:
    return f"http://{host}:{files.port}"


def sites_cli(harness: Harness, *args: str) -> str:
    result = subprocess.run([sys.executable, "-m", "tabpilot", "sites", *args], capture_output=True, text=True,
                            env={**os.environ, "TABPILOT_HOME": str(harness.tabpilot_home)}, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout


async def allow(harness: Harness, origin: str, *flags: str) -> None:
    """`tabpilot sites allow` in a terminal; the running browser has it once the worker registered it."""
    sites_cli(harness, "allow", origin, *flags)
    want = {"ask": "--ask" in flags, "useMyModel": "--use-my-model" in flags, "allTabs": "--all-tabs" in flags}
    await wait_until(lambda: harness.sw(
        f"await bridge.registering; const s = bridgeSiteOf({json.dumps(origin)}); const want = {json.dumps(want)};"
        " const scripts = await chrome.scripting.getRegisteredContentScripts();"
        " !!s && Object.keys(want).every(k => s[k] === want[k])"
        f" && scripts.some(c => c.matches.includes({json.dumps(origin + '/*')}))"
    ), f"the browser to register the bridge for {origin}", 20)


async def revoke(harness: Harness, origin: str) -> None:
    sites_cli(harness, "revoke", origin)
    await wait_until(lambda: harness.sw(
        f"await bridge.registering; !bridgeSiteOf({json.dumps(origin)})"
    ), f"the browser to drop {origin}", 20)


async def js(tab: Tab, expression: str, timeout: float = 10) -> Any:
    return await tab.evaluate(expression, timeout=timeout)


async def open_page(harness: Harness, url: str) -> Tab:
    tab = await harness.browser.new_tab(url)
    await wait_until(lambda: js(tab, "document.readyState === 'complete'"), f"{url} to load")
    return tab


async def close(harness: Harness, tab: Tab) -> None:
    if not tab.closed:
        await harness.browser.close_tab(tab.target_id)


def login_script(llm: ScriptedLLMServer, problems: list[str], email: str = "ada@example.com") -> None:
    """Two acting steps and done: type the email, press Log in, report."""
    llm.add(
        act_on("Email", "input_text", "Type the email", problems, text=email),
        act_on("Log in", "click_element_by_index", "Press Log in", problems),
        done(f"Signed in as {email}"),
    )


# --- tests ------------------------------------------------------------------------------------------------------
async def test_a_site_nobody_allowed_sees_nothing_and_starts_nothing(harness: Harness, site: LocalFiles,
                                                                     llm: ScriptedLLMServer) -> None:
    before = len(llm.requests)
    tab = await open_page(harness, site.url("quickstart.html"))
    try:
        await asyncio.sleep(1.5)  # the Quick Start waits up to 1 s for the global
        seen = await js(tab, "[typeof window.PAGE_AGENT_EXT, typeof window.PAGE_AGENT_EXT_VERSION,"
                             " Object.keys(window).filter(k => /PAGE_AGENT|tabpilot/i.test(k)), window.logged]")
        assert seen == ["undefined", "undefined", [], []]
        assert len(llm.requests) == before
        assert await harness.sw("bridge.tasks.size") == 0
    finally:
        await close(harness, tab)


async def test_page_agents_quick_start_runs_unchanged_on_an_allowed_site(harness: Harness, site: LocalFiles,
                                                                         llm: ScriptedLLMServer) -> None:
    origin = origin_of(site)
    await allow(harness, origin)
    problems: list[str] = []
    login_script(llm, problems)
    tab = await open_page(harness, site.url("quickstart.html"))
    try:
        logged = await wait_until(
            lambda: js(tab, "window.logged.some(e => e[0] === 'Result:') && window.logged"),
            "the Quick Start's result", 90,
        )
        assert not problems, problems
        assert await js(tab, "document.getElementById('status').textContent") == "Signed in as ada@example.com."
        assert await js(tab, "window.PAGE_AGENT_EXT_VERSION") == json.loads(
            (E2E_PAGES.parents[2] / "extension" / "manifest.json").read_text())["version"]
        labels = [entry[0] for entry in logged]
        statuses = [entry[1] for entry in logged if entry[0] == "Status:"]
        activities = [entry[1] for entry in logged if entry[0] == "Activity:"]
        assert labels[0] == "Status:" and statuses == ["running", "completed"] and labels[-1] == "Result:"
        assert labels[-2] == "Status:"  # completed, then the result
        steps = [(a["type"], a.get("tool")) for a in activities if a["type"] in ("executing", "executed")]
        assert steps == [("executing", "input_text"), ("executed", "input_text"),
                         ("executing", "click_element_by_index"), ("executed", "click_element_by_index"),
                         ("executing", "done"), ("executed", "done")]
        assert activities[0] == {"type": "thinking"}
        executed = [a for a in activities if a["type"] == "executed"]
        assert all(set(a) >= {"tool", "input", "output", "duration"} for a in executed)
        result = logged[-1][1]
        assert set(result) == {"success", "data", "history"} and result["success"] is True
        assert result["data"] == "Signed in as ada@example.com"
        step_events = [e for e in result["history"] if e["type"] == "step"]
        assert [e["action"]["name"] for e in step_events] == ["input_text", "click_element_by_index", "done"]
        assert set(step_events[0]["reflection"]) == {"evaluation_previous_goal", "memory", "next_goal"}
        assert set(step_events[0]["usage"]) >= {"promptTokens", "completionTokens", "totalTokens"}
        assert [h["authorization"] for h in llm.headers[-3:]] == [f"Bearer {PAGE_KEY}"] * 3  # the app's own model
        trusted = await js(tab, "window.received.filter(e => e.trusted).map(e => e.type + ':' + e.target)")
        assert "click:login" in trusted
    finally:
        await close(harness, tab)
