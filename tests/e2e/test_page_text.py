"""Text a page chose, as tabpilot's own views show it (an attack run): a button named with a RIGHT-TO-LEFT OVERRIDE
made a step card read other than what the agent did, and a site with a Cyrillic letter passed for another in the
question asking the person to allow an action there. Everything is read from the real DOM of the popup, the side panel
and the in-page overlay, on a real page Chromium loads (the IDN host mapped to 127.0.0.1)."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from e2e_support import (
    PAGE_LOADED,
    SCREENS,
    Harness,
    PopupPage,
    agent_output,
    configure,
    done,
    index_of,
    prompt_text,
    run_in_popup,
    start_connected_harness,
    wait_status,
    wait_until,
)
from user_support import open_panel, screenshot, wait_overlay

from tabpilot.browser.tab import Tab
from tabpilot.llm.scripted import ScriptedLLMServer, Text, ToolCall
from tabpilot.localfiles import LocalFiles

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]

IDN_HOST = "\u0430pple.com"  # a Cyrillic а: reads as apple.com
IDN_SPELLED = "xn--pple-43d.com"  # as Chromium's address bar and its URL parser spell it
NAME = "Pay \u202emoc.knab\u200d now"  # the page's button: a RIGHT-TO-LEFT OVERRIDE and a zero-width joiner
NAME_SHOWN = "Pay <U+202E>moc.knab\u200d now"  # the override shown as what it is; the joiner shapes, it never reorders
# what reorders or hides text when drawn: bidi embeddings, overrides, isolates and marks, and the invisible ones
OBEYED = re.compile("[\u061c\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")
SHOTS = SCREENS / "page-text"


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def harness(browser_binary: str, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Harness]:
    """The module's browser reaches the IDN host on 127.0.0.1, as it would reach the real site."""
    h = await start_connected_harness(browser_binary, tmp_path_factory.mktemp("e2e"),
                                      browser_args=[f"--host-resolver-rules=MAP {IDN_SPELLED} 127.0.0.1"])
    yield h
    await h.browser.close()


def click_pay(problems: list[str]) -> Any:
    """The scripted model clicks the page's button, its goal naming it as the page does."""

    def reply(body: dict[str, Any]) -> Any:
        try:
            index = index_of(body, "moc.knab")
        except LookupError as exc:
            problems.append(f"{exc}; prompt was:\n{prompt_text(body)[-3000:]}")
            return Text(str(exc))
        return ToolCall("AgentOutput", agent_output(f"Press {NAME}", {"click_element_by_index": {"index": index}}))

    return reply


def open_address(url: str) -> Any:
    return ToolCall("AgentOutput", agent_output("Open the shop", {"go_to_url": {"url": url}}))


READ = """(() => {
  const asked = document.getElementById('control-reason');
  return {
    asked: asked.closest('[hidden]') ? '' : asked.textContent,
    askedIsolated: [...asked.querySelectorAll('bdi')].map((b) => b.textContent),
    actions: [...document.querySelectorAll('#timeline .card-step .action .v')].map((v) => v.textContent),
    actionsIsolated: [...document.querySelectorAll('#timeline .card-step .action .v bdi')]
      .map((b) => b.textContent),
    goals: [...document.querySelectorAll('#timeline .card-step .goal .v')].map((v) => v.textContent),
    cards: [...document.querySelectorAll('#timeline .card')].map((c) => c.textContent),
    tab: document.getElementById('target-tab').textContent,
  };
})()"""


async def read(view: PopupPage) -> dict[str, Any]:
    said: dict[str, Any] = await view.js(READ)
    return said


async def asks(view: PopupPage, words: str, name: str) -> dict[str, Any]:
    """What `view` shows once its question holds `words`."""
    await view.wait_for(f"document.getElementById('control-reason').textContent.includes({json.dumps(words)})"
                        " && !document.getElementById('approve-box').hidden", f"the {name} to ask", 30)
    return await read(view)


async def started(harness: Harness, llm: ScriptedLLMServer, tab: Tab, task: str, first: bool
                  ) -> tuple[PopupPage, PopupPage]:
    """`task` run from the popup on `tab` (the model set in Settings the `first` time), the side panel beside it."""
    await wait_until(lambda: tab.evaluate(PAGE_LOADED), "the page to load")
    popup = await harness.open_popup(tab)
    if first:
        await configure(popup, llm.base_url)
        await popup.click("#nav-task")
    panel = await open_panel(harness, tab)
    await run_in_popup(popup, task)
    return popup, panel


def nothing_obeyed(where: str, *texts: str) -> None:
    for text in texts:
        assert not OBEYED.search(text), (where, text)


async def test_a_buttons_bidi_override_shows_as_what_it_is_in_the_question_and_the_step_cards(
    harness: Harness, llm: ScriptedLLMServer, e2e_pages: LocalFiles
) -> None:
    # The attack run: the button "Pay \u202emoc.knab\u200d now" made the question and the step's card read 'click button
    # "Pay won‍bank.com"'. The override is shown as <U+202E>, the name isolated (<bdi>) from the words around it, in the
    # popup, the side panel and the overlay; the page's own handler sees the one click. Twice, after a reload.
    tab = await harness.browser.new_tab(e2e_pages.url("bidi_names.html"))
    for run in range(2):
        problems: list[str] = []
        llm.add(click_pay(problems), done("Paid"))
        popup, panel = await started(harness, llm, tab, "Pay the bill", run == 0)
        question = f'click button "{NAME_SHOWN}"'
        for view, name in ((popup, "popup"), (panel, "side panel")):
            said = await asks(view, question, name)
            nothing_obeyed(name, said["asked"], said["tab"])
            assert said["asked"].startswith(f"The agent wants to {question} on 127.0.0.1"), (name, said)
            assert question in said["askedIsolated"], (name, said)  # nothing of the page reorders the question
            assert said["tab"].endswith(": Checkout <U+202E>moc.knab"), (name, said)  # the tab's title
            if run == 0:
                await view.screenshot(SHOTS / f"question-{name.replace(' ', '-')}.png", max_height=700)
        shown = await wait_overlay(tab, "the overlay to ask", lambda shown, asked=question: asked in shown["reason"])
        nothing_obeyed("overlay", shown["reason"], shown["task"])
        assert shown["reason"].startswith(f"The agent wants to {question} on 127.0.0.1"), shown
        if run == 0:
            await screenshot(tab, "page-text-overlay.png")
        await panel.click("#approve-allow")
        assert await wait_status(popup, "completed", "error", "stopped") == "completed", problems
        assert not problems, problems
        assert await tab.evaluate("window.clicks") == [{"trusted": True}]  # the page's own handler saw the click
        for view, name in ((popup, "popup"), (panel, "side panel")):
            said = await view.wait_for(f"(() => {{ const said = {READ}; return said.actions.length === 2 && said; }})"
                                       "()", f"the {name}'s step cards", 30)
            nothing_obeyed(name, *said["cards"])
            assert said["actions"][0] == f'clicked "{NAME_SHOWN}"', (name, said)
            assert said["actionsIsolated"][0] == NAME_SHOWN, (name, said)
            assert said["goals"][0] == f"Press {NAME_SHOWN}", (name, said)
            assert any(f'You said yes: {question} on 127.0.0.1.' in card for card in said["cards"]), (name, said)
            if run == 0:
                await view.screenshot(SHOTS / f"cards-{name.replace(' ', '-')}.png", max_height=900)
        for view in (popup, panel):
            await harness.browser.close_tab(view.tab.target_id)
        await tab.navigate(await tab.url())  # the second task on the page loaded again
    await harness.browser.close_tab(tab.target_id)


async def ask_before(harness: Harness, value: str) -> None:
    reply = await harness.sw(
        f"try {{ ({{ok: true, data: await requestHost({json.dumps({'type': 'settings.set', 'askBefore': value})})}}) }}"
        " catch (e) { ({ok: false, message: e.message}) }", timeout=30)
    assert reply["ok"], reply


async def test_a_site_of_another_script_is_asked_about_in_the_browsers_spelling(
    harness: Harness, llm: ScriptedLLMServer, e2e_pages: LocalFiles
) -> None:
    # The attack run: "The agent wants to open http://аpple.com/… " (a Cyrillic а) read as apple.com in the question,
    # and the step's card said 'opened аpple.com/…'. The host is said as the browser spells it, xn--pple-43d.com,
    # in the question, its card and the next question about the page there (asked before every action). Twice, the
    # second task from the page the first one opened, loaded again.
    port = int(e2e_pages.url("bidi_names.html").split(":")[2].split("/")[0])
    address = f"http://{IDN_HOST}:{port}/bidi_names.html"
    spelled = f"http://{IDN_SPELLED}:{port}/bidi_names.html"
    await ask_before(harness, "every")
    tab = await harness.browser.new_tab(e2e_pages.url("bidi_names.html"))
    try:
        for run in range(2):
            problems: list[str] = []
            llm.add(open_address(address), click_pay(problems), done("Paid"))
            popup, panel = await started(harness, llm, tab, "Pay at the shop", run == 0)
            said = await asks(panel, f"open {spelled}", "side panel")
            nothing_obeyed("side panel", said["asked"])
            assert IDN_HOST not in said["asked"] and "\u0430" not in said["asked"], said
            await panel.click("#approve-allow")
            await wait_until(lambda: tab.evaluate(f"location.host === {json.dumps(f'{IDN_SPELLED}:{port}')}"
                                                  " && document.readyState === 'complete'"), "the shop to open")
            said = await asks(panel, f'on {IDN_SPELLED}', "side panel")
            assert said["asked"].startswith(f'The agent wants to click button "{NAME_SHOWN}" on {IDN_SPELLED}'), said
            if run == 0:
                await panel.screenshot(SHOTS / "question-idn.png", max_height=700)
            await panel.click("#approve-allow")
            assert await wait_status(popup, "completed", "error", "stopped") == "completed", problems
            assert not problems, problems
            said = await panel.wait_for(f"(() => {{ const said = {READ}; return said.actions.length === 3 && said; }})"
                                        "()", "the side panel's step cards", 30)
            assert said["actions"][0] == f"opened {IDN_SPELLED}:{port}/bidi_names.html", said
            assert not any("\u0430" in card for card in said["cards"]), said
            assert any(f"You said yes: open {spelled} on " in card for card in said["cards"]), said
            for view in (popup, panel):
                await harness.browser.close_tab(view.tab.target_id)
            await tab.navigate(e2e_pages.url("bidi_names.html"))  # the second task from the page loaded again
    finally:
        await ask_before(harness, "irreversible")
        await harness.browser.close_tab(tab.target_id)
