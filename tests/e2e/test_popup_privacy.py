"""Privacy from the popup (issue 13): the Settings' Privacy section turns masking on and adds a secret
(its value goes from the form straight to the host: never into extension storage, never shown again),
a task started in the popup types that secret and a masked e-mail back on their site, and neither value
is in the model requests, the pushes the popup received, the SQLite file, the logs or the export.
Screenshots go to $TABPILOT_SCREENS."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from e2e_support import API_KEY, SCREENS, Harness, PopupPage, configure, done, run_in_popup, wait_status
from store_support import tabpilot

from tabpilot.browser.tab import Tab
from tabpilot.llm.scripted import ScriptedLLMServer, ToolCall

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]

SECRET = "c0rrect-h0rse-battery"
EMAIL = "ada.lovelace@example.org"
CARD_DIGITS = ("4242 4242 4242 4242", "4242424242424242")

RECORD_PUSHES = """(() => {
  window.seenPushes = [];
  const handle = onPush;
  onPush = (message) => { window.seenPushes.push(JSON.stringify(message)); handle(message); };
  return true;
})()"""


async def open_privacy(popup: PopupPage) -> None:
    await popup.click("#nav-settings")
    await popup.wait_for("document.getElementById('privacy').dataset.loaded === 'true'", "the privacy section")


def type_into(label: str, text: str) -> object:
    def reply(body: dict) -> ToolCall:
        from e2e_support import index_of

        return ToolCall("AgentOutput", {
            "evaluation_previous_goal": "ok", "memory": "", "next_goal": f"type into {label}",
            "action": {"input_text": {"index": index_of(body, label), "text": text}}})
    return reply


async def test_privacy_settings_and_a_task_that_types_a_secret_and_a_masked_email(
    harness: Harness, llm: ScriptedLLMServer, pages
) -> None:
    popup = await harness.open_popup()
    await configure(popup, llm.base_url)
    await open_privacy(popup)
    # off by default except card numbers
    toggles = await popup.js("['emails', 'phones', 'cards', 'ibans'].map(k => $('mask-' + k).checked)")
    assert toggles == [False, False, True, False]
    await popup.click("#mask-emails")
    await popup.wait_for("document.getElementById('privacy-saved').textContent !== ''", "masking to be saved")
    await popup.fill("#secret-name", "SITE_PW")
    await popup.fill("#secret-domain", "127.0.0.1")
    await popup.fill("#secret-value", SECRET)
    await popup.click("#secret-add")
    await popup.wait_for("!!document.querySelector('#secrets-list li') || !$('privacy-error').hidden",
                         "the secret in the list")
    assert await popup.text("#privacy-error") == ""
    assert [line.strip() for line in (await popup.js("document.getElementById('secrets-list').innerText")).splitlines()
            if line.strip()][:2] == ["SITE_PW", "127.0.0.1 · login fields only"]
    assert await popup.js("document.getElementById('secret-value').value") == ""
    assert SECRET not in await popup.js("document.documentElement.outerHTML")
    stored = await harness.sw("JSON.stringify([await chrome.storage.local.get(null), "
                              "await chrome.storage.sync.get(null), await chrome.storage.session.get(null)])")
    assert SECRET not in stored
    await popup.js("document.getElementById('privacy').scrollIntoView()")
    await popup.screenshot(SCREENS / "settings-privacy.png", max_height=1600)
    # a bad entry is one clear line, and the host keeps running
    await popup.fill("#secret-name", "2bad")
    await popup.fill("#secret-domain", "example.com")
    await popup.fill("#secret-value", "long-enough")
    await popup.click("#secret-add")
    await popup.wait_for("!document.getElementById('privacy-error').hidden", "the error")
    assert "not a usable secret name" in await popup.text("#privacy-error")
    await harness.browser.close_tab(popup.tab.target_id)

    target: Tab = await harness.browser.new_tab(pages.url("privacy_form.html"))
    # a login secret asked into a notes field is refused (and shown so), then typed into the user-name field
    llm.add(type_into("Notes", "<secret>SITE_PW</secret>"), type_into("User name", "<secret>SITE_PW</secret>"),
            type_into("Copy to", "[email 1]"), done("Typed both"))
    popup = await harness.open_popup(target)
    assert await popup.js(RECORD_PUSHES)
    task_id = await run_in_popup(popup, "Fill in the account details")
    assert await wait_status(popup, "completed", "error", "stopped") == "completed", await popup.cards()
    assert await popup.visible("#masking-mark")
    assert "e-mail" in await popup.js("document.getElementById('masking-mark').title")
    await popup.screenshot(SCREENS / "task-masking-mark.png")

    typed = {entry["field"]: entry["value"] for entry in await target.evaluate("window.agentLog")}
    assert typed == {"user": SECRET, "copy": EMAIL}  # the page's own record: the real values went in, nothing in Notes
    requests = json.dumps(llm.requests, ensure_ascii=False)
    assert "<secret>SITE_PW</secret>" in requests and "[email 1]" in requests and "[card 1]" in requests
    cards = "\n".join(card["text"] for card in await popup.cards())
    assert "<secret>SITE_PW</secret>" in cards  # the popup shows what the model typed: the name
    assert "may be typed only into a login field" in cards and "'Notes' is not one" in cards  # and the refusal

    exported = await popup.js(f"ask('history.export', {{taskId: {json.dumps(task_id)}}}).then(JSON.stringify)")
    channels = {
        "model requests": requests,
        "pushes seen by the popup": "\n".join(await popup.js("window.seenPushes")),
        "popup page": await popup.js("document.documentElement.outerHTML"),
        "history export": exported,
        "sqlite file": b"".join(p.read_bytes() for p in harness.database().parent.glob("tasks.sqlite3*")).decode(
            "utf-8", "replace"),
        "logs": harness.logs() + "".join(p.read_text(errors="replace")
                                         for p in (harness.tabpilot_home / "log").rglob("*") if p.is_file()),
    }
    assert len(channels["pushes seen by the popup"]) > 1000  # the run's pushes were seen
    for name, text in channels.items():
        for value in (SECRET, EMAIL, *CARD_DIGITS, API_KEY):  # the key: in the requests' headers only
            assert value not in text, f"{value!r} leaked into {name}"

    # Delete from the popup: gone from the list and from the host
    await harness.browser.close_tab(popup.tab.target_id)
    popup = await harness.open_popup()
    await open_privacy(popup)
    await popup.click("#secrets-list li[data-name=SITE_PW] .secret-delete")
    await popup.wait_for("!document.querySelector('#secrets-list li')", "the secret to go")
    assert await popup.visible("#secrets-empty")
    secrets_file = harness.tabpilot_home / "config" / "secrets.json"
    assert SECRET not in secrets_file.read_text()
    await harness.browser.close_tab(popup.tab.target_id)
    await harness.browser.close_tab(target.target_id)


async def save_secret(popup: PopupPage, name: str, domain: str, value: str) -> None:
    await popup.fill("#secret-name", name)
    await popup.fill("#secret-domain", domain)
    await popup.fill("#secret-value", value)
    await popup.click("#secret-add")
    # the value leaves the form once the host answered, and the list is drawn from that answer
    await popup.wait_for("document.getElementById('secret-value').value === ''", "the save")
    assert await popup.text("#privacy-error") == ""


async def secret_row(popup: PopupPage, name: str) -> str:
    return await popup.text(f"#secrets-list li[data-name={name}] .site-flags")


def cli_listed(harness: Harness, name: str) -> str:
    listed = tabpilot(harness.tabpilot_home, "secrets", "list", env={"LANG": "C.UTF-8"})
    assert listed.returncode == 0, listed.stderr
    return " ".join(next(line for line in listed.stdout.splitlines() if line.startswith(name)).split())


async def test_a_secret_for_any_field_is_chosen_in_the_popup_and_kept_when_saved_again(
    harness: Harness, llm: ScriptedLLMServer, pages
) -> None:
    # The popup's form stored login-only secrets (`secrets set --any-field` was the command line's alone), and saving
    # an API key again from it (a new value) quietly made it login-only: the agent could no longer type it into the
    # settings page's field. The form offers the choice, off by default; saved again, a secret keeps it.
    first, second = "tok-first-value-1234", "tok-second-value-5678"
    popup = await harness.open_popup()
    await configure(popup, llm.base_url)
    await open_privacy(popup)
    assert not await popup.js("document.getElementById('secret-any-field').checked")
    assert "API key on a settings page" in await popup.text(".secret-any-field")
    await popup.fill("#secret-name", "API_TOKEN")
    await popup.click("#secret-any-field")
    await save_secret(popup, "API_TOKEN", "127.0.0.1", first)
    assert await secret_row(popup, "API_TOKEN") == "127.0.0.1 · any field"
    assert cli_listed(harness, "API_TOKEN") == "API_TOKEN 127.0.0.1 any field"  # as `secrets list` says it
    assert not await popup.js("document.getElementById('secret-any-field').checked")  # the form is fresh again
    await popup.js("document.getElementById('secret-form').scrollIntoView()")
    await popup.screenshot(SCREENS / "secret-any-field.png", max_height=1600)
    await harness.browser.close_tab(popup.tab.target_id)

    # a new value from a reopened popup, the box untouched: it shows the stored choice, and the secret keeps it
    popup = await harness.open_popup()
    await open_privacy(popup)
    assert await secret_row(popup, "API_TOKEN") == "127.0.0.1 · any field"
    await save_secret(popup, "API_TOKEN", "127.0.0.1", second)
    assert await secret_row(popup, "API_TOKEN") == "127.0.0.1 · any field"
    assert cli_listed(harness, "API_TOKEN") == "API_TOKEN 127.0.0.1 any field"
    await harness.browser.close_tab(popup.tab.target_id)

    # so the agent types the new value into a field that is not a login field, on its site: the page's own record
    target: Tab = await harness.browser.new_tab(pages.url("privacy_form.html"))
    llm.add(type_into("Notes", "<secret>API_TOKEN</secret>"), done("Typed it"))
    popup = await harness.open_popup(target)
    await run_in_popup(popup, "Put the API token in the notes")
    assert await wait_status(popup, "completed", "error", "stopped") == "completed", await popup.cards()
    assert [(e["field"], e["value"]) for e in await target.evaluate("window.agentLog")][-1:] == [("notes", second)]
    await harness.browser.close_tab(popup.tab.target_id)
    await harness.browser.close_tab(target.target_id)

    # the person unticks it when saving again: login fields only, in the popup and on the command line
    popup = await harness.open_popup()
    await open_privacy(popup)
    await popup.fill("#secret-name", "API_TOKEN")
    assert await popup.js("document.getElementById('secret-any-field').checked")
    await popup.click("#secret-any-field")
    await save_secret(popup, "API_TOKEN", "127.0.0.1", second)
    assert await secret_row(popup, "API_TOKEN") == "127.0.0.1 · login fields only"
    assert cli_listed(harness, "API_TOKEN") == "API_TOKEN 127.0.0.1 login fields only"
    await popup.click("#secrets-list li[data-name=API_TOKEN] .secret-delete")
    await popup.wait_for("!document.querySelector('#secrets-list li[data-name=API_TOKEN]')", "the secret to go")
    await harness.browser.close_tab(popup.tab.target_id)


async def test_mcp_progress_and_read_page_carry_neither_a_secret_nor_a_masked_value(
    browser_binary: str, tmp_path: Path, llm: ScriptedLLMServer, pages
) -> None:
    from test_mcp import mcp_client

    class Home:
        home = tmp_path / "home"
        tabpilot_home = tmp_path / "tabpilot-home"

    Home.home.mkdir()
    settings = [("base-url", llm.base_url), ("model", "scripted"), ("api-key", API_KEY), ("mask-emails", "on")]
    for args, stdin in [*((("config", "set", *pair), None) for pair in settings),
                        (("secrets", "set", "SITE_PW", "--domain", "127.0.0.1"), SECRET)]:
        done_ = tabpilot(Home.tabpilot_home, *args, stdin=stdin, env={"HOME": str(Home.home)})
        assert done_.returncode == 0, done_.stderr
    llm.add(type_into("User name", "<secret>SITE_PW</secret>"), type_into("Copy to", "[email 1]"), done("Typed both"))
    url = pages.url("privacy_form.html")
    async with mcp_client(Home, "--launch", "--headless", "--browser", browser_binary) as client:
        is_error, result = await client.call("run_task", task="Fill in the account details", url=url, new_tab=False)
        assert not is_error and result["success"], result
        progress = "\n".join(message or "" for _, message in client.progress)
        assert "input_text" in progress and "<secret>SITE_PW</secret>" in progress and "[email 1]" in progress
        is_error, page = await client.call("read_page")  # the form the task filled in, as the MCP client reads it
        assert not is_error, page
        assert "<secret>SITE_PW</secret>" in page["text"] and "Contact: [email 1]" in page["text"]
        assert "[card 1]" in page["text"]
        is_error, task = await client.call("get_task", task_id=result["taskId"])
        assert not is_error, task
    channels = {"progress": progress, "read_page": json.dumps(page), "get_task": json.dumps(task),
                "model requests": json.dumps(llm.requests)}
    for name, text in channels.items():
        for value in (SECRET, EMAIL, *CARD_DIGITS):
            assert value not in text, f"{value!r} leaked into {name}"
