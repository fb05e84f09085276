"""Task after task on one document: each new task (a new host process, a new CDP session) acts on the page
the earlier ones left, with no reload in between. The page's own JS records what reached it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from agent_support import done, index_of, on_page
from test_run_cli import API_KEY, tabpilot

from tabpilot.browser.browser import Browser
from tabpilot.llm.scripted import ScriptedLLMServer

pytestmark = [pytest.mark.browser]

NAMES = ("Ada Lovelace", "Grace Hopper", "Katherine Johnson")


def type_and_click(name: str) -> list:
    return [
        on_page(lambda b: {"input_text": {"index": index_of(b, "Your name"), "text": name}}, goal="type the name"),
        on_page(lambda b: {"click_element_by_index": {"index": index_of(b, "Does nothing")}}, goal="press the button"),
        done(f"Typed {name}"),
    ]


@pytest.mark.asyncio(loop_scope="module")
async def test_three_cli_tasks_in_a_row_act_on_the_same_page(browser: Browser, pages, tmp_path: Path) -> None:
    assert browser.launched is not None
    for info in await browser.tabs():  # one page only: it is "the current tab" of every run
        await browser.close_tab(info.target_id)
    tab = await browser.new_tab(pages.url("agent_form.html"))
    await tab.evaluate("sessionStorage.clear()")
    for run, name in enumerate(NAMES, start=1):
        with ScriptedLLMServer(type_and_click(name)) as server:
            proc = await asyncio.to_thread(
                tabpilot, "run", f"Type {name} and press the button", "--cdp-url", browser.launched.ws_url,
                "--base-url", server.base_url, "--model", "scripted", "--api-key", API_KEY, home=tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert "no longer on the page" not in proc.stdout, f"run {run}:\n{proc.stdout}"
        log = await tab.evaluate("JSON.parse(sessionStorage.getItem('agentLog') || '[]')")
        typed = [e for e in log if e["event"] == "input" and e["field"] == "fullname"]
        clicks = [e for e in log if e["event"] == "click" and e["field"] == "nothing"]
        assert typed and typed[-1]["value"] == name and typed[-1]["trusted"], f"run {run}: {log}"
        assert len(clicks) == run and all(c["trusted"] for c in clicks), f"run {run}: {log}"
    await tab.evaluate("sessionStorage.clear()")
