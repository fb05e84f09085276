"""Allowed domains in the user's own browser (issue 13): the same Fetch interception as in a launched one, sent
through the extension's chrome.debugger relay. A task started as the popup starts it, on a hostile page at
shop.test, with the setting allowedDomains = [shop.test]; the scripted model follows the page's links to
evil.test. The web server's own record shows what reached evil.test; the popup's timeline shows the cards."""

from __future__ import annotations

import json
import threading
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import quote

import pytest
import pytest_asyncio
from e2e_support import SCREENS, Harness, act_on, done, prompt_text, start_connected_harness, wait_until
from guard_support import RESOLVER_RULES, RecordingSite, recording_site  # noqa: F401  (the `site` fixture)
from test_takeover import account_told, ask_host, controlled_by_user, ended, start

from tabpilot.browser.tab import Tab
from tabpilot.llm.scripted import Delay, ScriptedLLMServer

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]

BLOCKED = "Navigation to {} was blocked: not in this task's allowed domains"


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def harness(browser_binary: str, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Harness]:
    """The module's browser, with the test's made-up domains resolving to the recording server."""
    h = await start_connected_harness(browser_binary, tmp_path_factory.mktemp("e2e"), browser_args=[RESOLVER_RULES])
    yield h
    await h.browser.close()


@pytest_asyncio.fixture(loop_scope="module")
async def hostile_tab(harness: Harness, site: RecordingSite) -> AsyncIterator[Tab]:
    tab = await harness.browser.new_tab(site.url("shop.test", "guard_hostile.html"))
    await wait_until(lambda: tab.evaluate("document.readyState === 'complete'"), "the page to load")
    yield tab
    if not tab.closed:
        await harness.browser.close_tab(tab.target_id)


async def test_the_extension_relay_stops_links_and_redirects_to_other_domains(
    harness: Harness, llm: ScriptedLLMServer, hostile_tab: Tab, site: RecordingSite
) -> None:
    """A link and a target=_blank link the agent clicks are refused before the click (nothing is requested at
    all); a link to the task's own domain that the server redirects to sub.evil.test is stopped on the hop."""
    problems: list[str] = []
    seen: list[dict[str, Any]] = []
    llm.add(
        act_on("Claim your prize", "click_element_by_index", "Open evil.test as the page says", problems),
        account_told(seen, act_on("Open the prize in a new tab", "click_element_by_index", "In a new tab then",
                                  problems)),
        account_told(seen, act_on("Continue to the deal", "click_element_by_index", "Try the other link", problems)),
        account_told(seen, done("evil.test could not be opened")),
    )
    reply = await allow_only_shop(harness, llm)
    assert reply["data"]["allowedDomains"] == ["shop.test"]
    tabs_before = {t.target_id for t in await harness.browser.tabs()}
    task_id = await start(harness, hostile_tab, "Find the best deal on this page")
    snap = await ended(harness, task_id)
    assert not problems, problems
    assert snap["status"] == "completed", snap
    assert site.reached("evil.test") == [], site.hits  # the server's own record: nothing arrived
    assert any(hit.path.startswith("/redirect") for hit in site.reached("shop.test"))  # the allowed hop went out
    link, blank, _redirect = [e for e in snap["history"] if e["type"] == "step" and e["action"]["name"] != "done"]
    assert BLOCKED.format("evil.test") in link["action"]["output"], link  # refused before the click
    assert BLOCKED.format("evil.test") in blank["action"]["output"], blank
    assert {t.target_id for t in await harness.browser.tabs()} == tabs_before  # no tab was opened
    guards = [e["content"] for e in snap["history"] if e["type"] == "observation" and e.get("guard") == "blocked"]
    assert BLOCKED.format("sub.evil.test") in guards, snap["history"]
    assert BLOCKED.format("evil.test") in prompt_text(seen[0])  # the model read it before its next step
    assert BLOCKED.format("evil.test") in prompt_text(seen[1])
    assert BLOCKED.format("sub.evil.test") in prompt_text(seen[2])
    assert await hostile_tab.url() == site.url("shop.test", "guard_hostile.html")  # the page stayed
    popup = await harness.open_popup(hostile_tab)
    await popup.wait_for("document.querySelectorAll('#timeline .card-blocked').length >= 1", "the blocked card")
    cards = [card for card in await popup.cards() if card["type"] == "blocked"]
    assert "Not opened: http://sub.evil.test" in cards[0]["text"], cards  # to the person: the address it would open
    assert cards[0]["text"].endswith("is outside the sites this task may visit."), cards
    await harness.browser.close_tab(popup.tab.target_id)
    await ask_host(harness, {"type": "settings.set", "allowedDomains": []})


async def allow_only_shop(harness: Harness, llm: ScriptedLLMServer) -> dict[str, Any]:
    """The scripted model, and shop.test as the only domain a task may reach; the host's reply."""
    reply: dict[str, Any] = await ask_host(harness, {
        "type": "settings.set", "baseURL": llm.base_url, "model": "scripted",
        "apiKey": "sk-test-0123456789abcdefghijklmnop", "maxSteps": 8, "allowedDomains": ["shop.test"]})
    assert reply["ok"], reply
    return reply


def held(gate: threading.Event, then: Any) -> Any:
    """A reply that waits (in the scripted server's thread) until the test opens the gate."""

    def reply(body: dict[str, Any]) -> Any:
        gate.wait(60)
        return then(body) if callable(then) else then

    return reply


async def session_rules(harness: Harness) -> list[dict[str, Any]]:
    return list(json.loads(await harness.sw("JSON.stringify(await chrome.declarativeNetRequest.getSessionRules())")))


async def test_a_popup_to_another_domain_never_reaches_it_and_the_users_other_tabs_are_not_affected(
    harness: Harness, llm: ScriptedLLMServer, hostile_tab: Tab, site: RecordingSite
) -> None:
    """The page's own script opens evil.test in a new tab (window.open) when the agent presses its button:
    chrome.debugger cannot hold that tab before its first request, the extension's rules (the task's tabs and
    the tabs they open) block it. Then, the task still running, the user's own tab opens the same URL: it is
    not the task's."""
    problems: list[str] = []
    seen: list[dict[str, Any]] = []
    gate = threading.Event()
    llm.add(act_on("Open the prize window", "click_element_by_index", "Open the prize window", problems),
            account_told(seen, held(gate, done("No prize"))))
    await allow_only_shop(harness, llm)
    before = {t.target_id for t in await harness.browser.tabs()}
    users_tab = await harness.browser.new_tab("about:blank")
    # the task's tab is the one in front, as when the user starts a task (Chromium's openerTabId of a popup is
    # the tab in front when it opens, measured: not always the tab whose script opened it)
    await harness.sw(f"await chrome.tabs.update({await harness.chrome_tab_id(hostile_tab)}, {{active: true}}); 1")
    try:
        task_id = await start(harness, hostile_tab, "Find the best deal on this page")
        await wait_until(lambda: _at_least(llm, 2), "the model to be asked after the click")
        assert site.reached("evil.test") == [], site.hits  # the page's window.open: nothing arrived
        await users_tab.navigate(site.url("evil.test", "popup?by=the-user"))  # the user's tab: not the task's
        assert "/popup?by=the-user" in [hit.path for hit in site.reached("evil.test")], site.hits
        assert await session_rules(harness), "the rules of the tab the task opened are in place while it runs"
        gate.set()
        snap = await ended(harness, task_id)
    finally:
        gate.set()
        await harness.browser.close_tab(users_tab.target_id)
    assert not problems, problems
    # the page's window.open never reached evil.test: the user's own visit (and its favicon) is all it got
    assert {hit.path for hit in site.reached("evil.test")} <= {"/popup?by=the-user", "/favicon.ico"}, site.hits
    assert snap["status"] == "completed", snap
    [click] = [e for e in snap["history"] if e["type"] == "step" and e["action"]["name"] != "done"]
    assert "closed at once; this tab is still the active one" in click["action"]["output"], click
    assert BLOCKED.format("evil.test") in prompt_text(seen[0])
    await wait_until(lambda: _only(harness, before), "the popup to be closed")
    await wait_until(lambda: _no_rules(harness), "the task's rules to go when it ended")
    await ask_host(harness, {"type": "settings.set", "allowedDomains": []})


async def test_a_popup_that_loads_a_refused_domain_again_and_again_while_the_agent_attaches_never_reaches_it(
    harness: Harness, llm: ScriptedLLMServer, hostile_tab: Tab, site: RecordingSite
) -> None:
    """A popup the task's page opened stays under the extension's rules after the host attaches it (they
    used to hand it to the host's Fetch interception at once, before Fetch held it: 1 to 3 in 12 popups reached
    evil.test under load, and this page's every time). The page opens a blank popup and sends it to evil.test
    every millisecond, so a load starts inside any gap while the host takes the tab over."""
    problems: list[str] = []
    gate = threading.Event()
    llm.add(act_on("Open the prize window step by step", "click_element_by_index", "Open the prize window",
                   problems), held(gate, done("No prize")))
    await allow_only_shop(harness, llm)
    before = {t.target_id for t in await harness.browser.tabs()}
    await harness.sw(f"await chrome.tabs.update({await harness.chrome_tab_id(hostile_tab)}, {{active: true}}); 1")
    try:
        task_id = await start(harness, hostile_tab, "Find the best deal on this page")
        await wait_until(lambda: _at_least(llm, 2), "the model to be asked after the click")
        await wait_until(lambda: _only(harness, before), "the popup to be closed")
        assert _popup_tries(site) == [], site.hits
        gate.set()
        snap = await ended(harness, task_id)
    finally:
        gate.set()
    assert not problems, problems
    assert _popup_tries(site) == [], site.hits
    assert snap["status"] == "completed", snap
    [click] = [e for e in snap["history"] if e["type"] == "step" and e["action"]["name"] != "done"]
    assert "closed at once; this tab is still the active one" in click["action"]["output"], click
    await ask_host(harness, {"type": "settings.set", "allowedDomains": []})


def _popup_tries(site: RecordingSite) -> list[str]:
    return [hit.path for hit in site.reached("evil.test") if hit.path.startswith("/popup?try=")]


async def _only(harness: Harness, tabs: set[str]) -> bool:
    return {t.target_id for t in await harness.browser.tabs()} <= tabs


async def _no_rules(harness: Harness) -> bool:
    return not await session_rules(harness)


async def test_the_safety_settings_in_the_popup_are_the_hosts(harness: Harness, hostile_tab: Tab) -> None:
    popup = await harness.open_popup(hostile_tab)
    await popup.click("#nav-settings")
    # the host's settings, not the form's defaults (the reply used to paint over a fill made before it came)
    await popup.wait_for("document.getElementById('guards').dataset.loaded === 'true'", "the Safety section")
    assert await popup.js("document.getElementById('guards-ask-before').value") == "irreversible"
    await popup.fill("#guards-allowed", "shop.test, exa$mple.com")
    await popup.click("#guards-save")
    await popup.wait_for("!document.getElementById('guards-error').hidden", "the bad domain to be refused")
    assert "not a domain" in await popup.text("#guards-error")
    await popup.fill("#guards-allowed", "Shop.Test\nhttps://docs.example/help")
    await popup.fill("#guards-blocked", "evil.test")
    await popup.js("document.getElementById('guards-ask-before').value = 'every'")
    await popup.click("#guards-save")
    await popup.wait_for("document.getElementById('guards-allowed').value === 'shop.test\\ndocs.example'",
                         "the saved domains, as the host normalized them")
    saved = (await ask_host(harness, {"type": "settings.get"}))["data"]
    assert (saved["allowedDomains"], saved["blockedDomains"], saved["askBefore"]) == (
        ["shop.test", "docs.example"], ["evil.test"], "every")
    await popup.screenshot(SCREENS / "guards-settings.png", max_height=1400)
    await ask_host(harness, {"type": "settings.set", "allowedDomains": [], "blockedDomains": [],
                             "askBefore": "irreversible"})
    await harness.browser.close_tab(popup.tab.target_id)


async def _at_least(llm: ScriptedLLMServer, count: int) -> bool:
    return len(llm.requests) >= count


async def test_the_user_at_the_controls_may_go_anywhere_and_the_agent_is_held_again_after(
    harness: Harness, llm: ScriptedLLMServer, hostile_tab: Tab, site: RecordingSite
) -> None:
    problems: list[str] = []
    seen: list[dict[str, Any]] = []
    llm.add(Delay(60),  # the agent thinks; the user takes the controls meanwhile (this call is cancelled)
            act_on("Claim your prize", "click_element_by_index", "Open evil.test as the page says", problems),
            account_told(seen, done("evil.test could not be opened")))
    await allow_only_shop(harness, llm)
    task_id = await start(harness, hostile_tab, "Find the best deal on this page")
    await wait_until(lambda: _at_least(llm, 1), "the model to be asked")
    assert (await ask_host(harness, {"type": "task.takeover", "taskId": task_id, "reason": "user"}))["ok"]
    await controlled_by_user(harness, task_id)
    await hostile_tab.navigate(site.url("evil.test", "by-the-user"))  # the user's own navigation goes through
    assert "/by-the-user" in [hit.path for hit in site.reached("evil.test")], site.hits
    await hostile_tab.navigate(site.url("shop.test", "guard_hostile.html"))
    assert (await ask_host(harness, {"type": "task.handback", "taskId": task_id}))["ok"]
    snap = await ended(harness, task_id)
    assert not problems, problems
    assert not [hit for hit in site.reached("evil.test") if hit.path.startswith("/collect")], site.hits
    assert BLOCKED.format("evil.test") in prompt_text(seen[0])  # the agent's own link click was stopped again
    assert snap["status"] == "completed", snap
    await ask_host(harness, {"type": "settings.set", "allowedDomains": []})


async def test_the_rules_of_a_task_no_host_runs_are_cleared_on_the_next_hello(
    harness: Harness, hostile_tab: Tab
) -> None:
    """Session rules outlive a service-worker restart, the host and its tasks do not: a new host's hello
    clears the rules of every task it does not run (here a task of the host that went away)."""
    rules = {"taskId": "a-task-of-a-dead-host", "tabIds": [await harness.chrome_tab_id(hostile_tab)],
             "allowedDomains": ["shop.test"], "blockedDomains": []}
    await harness.sw(f"await setGuardRules({json.dumps(rules)}); 1")
    assert await session_rules(harness)
    await harness.sw("hostDown('the test dropped the host'); 1")  # the next host says hello
    await harness.wait_host_connected()
    await wait_until(lambda: _no_rules(harness), "the dead task's rules to be cleared")


# 127.0.0.1 written as an IPv6 address reaches 127.0.0.1; Chromium keeps the spelling apart ([::ffff:7f00:1]),
# while it brings 127.1, 0x7f000001, case and trailing dots to one form itself
MAPPED = "[::ffff:127.0.0.1]"


@pytest.mark.parametrize(("domains", "reaches"), [
    ({"blockedDomains": ["127.0.0.1"]}, False),
    ({"allowedDomains": ["shop.test", "127.0.0.1"]}, True),
], ids=["blocked", "allowed"])
async def test_a_popup_to_a_domain_spelled_another_way_is_judged_as_the_host_judges_it(
    harness: Harness, llm: ScriptedLLMServer, site: RecordingSite, domains: dict[str, list[str]], reaches: bool
) -> None:
    """The extension's rules know an IPv4 domain under its IPv6 spelling too: a popup the task's page opens to
    http://[::ffff:127.0.0.1]/ never reaches a blocked 127.0.0.1 (it used to: the rules named 127.0.0.1 only), and
    reaches an allowed one (it used to be blocked there while the host let it go)."""
    path = f"/popup?{'blocked' if not reaches else 'allowed'}"
    to = f"http://{MAPPED}:{site.port}{path}"
    snap, told = await _a_task_opens_a_popup(harness, llm, site, site.url("shop.test", "guard_popup_to.html"), to,
                                             domains)
    arrived = [hit.path for hit in site.hits if hit.host == "[::ffff:7f00:1]" and hit.path == path]
    if reaches:
        assert arrived == [path], site.hits
        assert "was blocked" not in told, told
    else:
        assert arrived == [], site.hits  # the server's own record: nothing arrived
        assert "Navigation to 127.0.0.1 was blocked: it is on the blocked domains list" in told, told
    assert snap["status"] == "completed", snap


async def test_the_rules_name_an_ipv4_domain_under_every_ipv6_address_that_carries_it(harness: Harness) -> None:
    """NAT64 and 6to4 addresses reach an IPv4 host as ::ffff: does, and the host's guard takes each as that host
    (test_guards_rules.py): the extension's rules for a popup's first request name them too, as Chromium spells
    them (nothing answers at those addresses here, so no request can show it)."""
    spelled = await harness.sw("ruleDomains(['127.0.0.1', 'shop.test'])")
    assert spelled == ["127.0.0.1", "[::ffff:7f00:1]", "[64:ff9b::7f00:1]", "[2002:7f00:1::]", "shop.test"], spelled


async def test_a_popup_to_a_blocked_ipv6_address_never_reaches_it(
    harness: Harness, llm: ScriptedLLMServer, site: RecordingSite
) -> None:
    """The rules name an IPv6 domain the way Chromium matches it, in brackets: "::1" alone matched nothing."""
    try:
        v6 = RecordingSite("::1")
    except OSError as exc:
        pytest.skip(f"no IPv6 loopback here: {exc}")
    try:
        snap, told = await _a_task_opens_a_popup(harness, llm, site, site.url("shop.test", "guard_popup_to.html"),
                                                 v6.url("[::1]", "popup"), {"blockedDomains": ["::1"]})
        assert [hit.path for hit in v6.hits if hit.path.startswith("/popup")] == [], v6.hits
    finally:
        v6.close()
    assert "Navigation to ::1 was blocked: it is on the blocked domains list" in told, told
    assert snap["status"] == "completed", snap


async def test_a_task_on_a_page_at_an_ipv6_address_names_it_as_the_rules_match_it(
    harness: Harness, llm: ScriptedLLMServer, site: RecordingSite
) -> None:
    """The rule for a load the task's pages start (a popup faster than tabs.onCreated) names their site as its
    initiator; a page at an IPv6 address is named in brackets ("::ffff:7f00:1" matched no initiator)."""
    gate = threading.Event()
    llm.add(held(gate, done("Nothing to do")))
    await allow_only_shop(harness, llm)
    await ask_host(harness, {"type": "settings.set", "allowedDomains": [], "blockedDomains": ["evil.test"]})
    tab = await harness.browser.new_tab(f"http://{MAPPED}:{site.port}/guard_popup_to.html")
    try:
        await wait_until(lambda: tab.evaluate("document.readyState === 'complete'"), "the page to load")
        task_id = await start(harness, tab, "Look at the prize")
        await wait_until(lambda: _at_least(llm, 1), "the model to be asked")
        initiators = [rule["condition"].get("initiatorDomains") for rule in await session_rules(harness)]
        gate.set()
        await ended(harness, task_id)
    finally:
        gate.set()
        await harness.browser.close_tab(tab.target_id)
        await ask_host(harness, {"type": "settings.set", "blockedDomains": []})
    assert initiators == [["[::ffff:7f00:1]"]], initiators


async def _a_task_opens_a_popup(
    harness: Harness, llm: ScriptedLLMServer, site: RecordingSite, page: str, to: str, domains: dict[str, list[str]]
) -> tuple[dict[str, Any], str]:
    """A task on `page` whose agent presses the button that opens `to` in a popup, under these domain settings;
    the task as it ended and what the model was told after the click."""
    problems: list[str] = []
    seen: list[dict[str, Any]] = []
    gate = threading.Event()
    llm.add(act_on("Open the prize window", "click_element_by_index", "Open the prize window", problems),
            account_told(seen, held(gate, done("Done"))))
    await allow_only_shop(harness, llm)
    await ask_host(harness, {"type": "settings.set", "allowedDomains": [], "blockedDomains": [], **domains})
    tab = await harness.browser.new_tab(f"{page}?to={quote(to, safe='')}")
    before = {t.target_id for t in await harness.browser.tabs()}
    try:
        await wait_until(lambda: tab.evaluate("document.readyState === 'complete'"), "the page to load")
        await harness.sw(f"await chrome.tabs.update({await harness.chrome_tab_id(tab)}, {{active: true}}); 1")
        task_id = await start(harness, tab, "Open the prize window")
        await wait_until(lambda: _at_least(llm, 2), "the model to be asked after the click")
        if "blockedDomains" in domains:  # the host closes the refused popup: by then its load was tried
            await wait_until(lambda: _only(harness, before), "the popup to be closed")
        gate.set()
        snap = await ended(harness, task_id)
    finally:
        gate.set()
        for opened in {t.target_id for t in await harness.browser.tabs()} - before | {tab.target_id}:
            await harness.browser.close_tab(opened)
        await ask_host(harness, {"type": "settings.set", "allowedDomains": [], "blockedDomains": []})
    assert not problems, problems
    return snap, prompt_text(seen[0])
