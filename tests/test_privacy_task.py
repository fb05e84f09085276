"""Secrets and masking in real tasks: `tabpilot run` attached to a real Chromium (the tab stays open,
so the page's own record can be read), the scripted model over HTTP, the secret set with `tabpilot
secrets set` on stdin, the settings file, the real SQLite store and `tabpilot history export`.

The grep proof: after a task that typed a secret and a masked e-mail, neither value is in any request
the model server received, the run's output, the SQLite file's bytes, the log files or the export."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from agent_support import browser_state, done, index_of, on_page, step
from store_support import tabpilot

from tabpilot.agent import Agent, AgentConfig
from tabpilot.agent.types import StepEvent
from tabpilot.browser.browser import Browser
from tabpilot.llm import LLMConfig
from tabpilot.llm.scripted import ScriptedLLMServer
from tabpilot.privacy.guard import PrivacyGuard
from tabpilot.privacy.masking import MaskRules
from tabpilot.privacy.secrets import Secret
from tabpilot.store.settings import Settings, save_settings

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

API_KEY = "sk-test-0123456789abcdefghijklmnop"
SECRET = "Tr0ub4dor&3-horse"
EMAIL = "ada.lovelace@example.org"
CARD = "4242 4242 4242 4242"
PAGE = "privacy_form.html"


def prepare_home(home: Path, domain: str) -> None:
    # debug capture on: the raw requests are kept in the record too, and must be the masked ones
    save_settings(Settings(mask_emails=True, debug_capture=True), home / "config" / "config.json")
    saved = tabpilot(home, "secrets", "set", "SITE_PW", "--domain", domain, stdin=SECRET + "\n")
    assert saved.returncode == 0, saved.stderr


async def run_attached(
    browser: Browser, server: ScriptedLLMServer, home: Path, task: str, *, exit_code: int = 0
) -> subprocess.CompletedProcess[str]:
    assert browser.launched is not None
    proc = await asyncio.to_thread(
        tabpilot, home, "run", task, "--cdp-url", browser.launched.ws_url, "--base-url", server.base_url,
        "--model", "scripted", "--api-key", API_KEY, env={"HOME": str(home)}, timeout=120)
    assert proc.returncode == exit_code, proc.stdout + proc.stderr
    return proc


async def only_tab(browser: Browser, url: str) -> Any:
    for info in await browser.tabs():
        await browser.close_tab(info.target_id)
    return await browser.new_tab(url)


async def page_log(tab: Any) -> list[dict[str, Any]]:
    return await tab.evaluate("window.agentLog")


def user_text(body: dict[str, Any]) -> str:
    return "\n".join(m["content"] for m in body["messages"] if isinstance(m.get("content"), str))


def every_output(home: Path, proc: subprocess.CompletedProcess[str], server: ScriptedLLMServer) -> dict[str, bytes]:
    """Each channel a value could leak through, as bytes."""
    channels = {
        "model requests": json.dumps(server.requests, ensure_ascii=False).encode(),
        "run output": (proc.stdout + proc.stderr).encode(),
        "sqlite file": b"".join(p.read_bytes() for p in (home / "data").glob("tasks.sqlite3*")),
    }
    for log in (home / "log").rglob("*") if (home / "log").exists() else []:
        if log.is_file():
            channels[f"log {log.name}"] = log.read_bytes()
    listed = tabpilot(home, "history", "--json")
    for task in json.loads(listed.stdout):
        task_id = task["taskId"]
        exported = tabpilot(home, "history", "export", task_id)
        shown = tabpilot(home, "history", "show", task_id, "--json")
        assert exported.returncode == 0 and shown.returncode == 0, exported.stderr + shown.stderr
        channels[f"export {task_id}"] = exported.stdout.encode()
        channels[f"history show {task_id}"] = shown.stdout.encode()
    return channels


def assert_nowhere(channels: dict[str, bytes], *values: str) -> None:
    for name, data in channels.items():
        for value in values:
            assert value.encode() not in data, f"{value!r} leaked into {name}"


async def test_a_secret_and_a_masked_email_are_typed_on_their_site_and_appear_in_no_output(
    browser: Browser, pages, tmp_path: Path
) -> None:
    prepare_home(tmp_path, "127.0.0.1")
    for attempt in (1, 2):  # a second task on the same page works the same (placeholders from 1 again)
        tab = await only_tab(browser, pages.url(PAGE))
        replies = [
            on_page(lambda b: {"input_text": {"index": index_of(b, "Notes"), "text": "<secret>SITE_PW</secret>"}}),
            on_page(lambda b: {"input_text": {"index": index_of(b, "Copy to"), "text": "[email 1]"}}),
            done("Typed the password and the copy address"),
        ]
        with ScriptedLLMServer(replies) as server:
            # The second time the person writes the secret into the task itself: recorded by its name only.
            told = f"; my password is {SECRET}" if attempt == 2 else ""
            proc = await run_attached(browser, server, tmp_path, f"Fill in the account details ({attempt}){told}")

        # the page's own record: the real values went in, typed as a person would
        typed = {entry["field"]: entry["value"] for entry in await page_log(tab)}
        assert typed == {"notes": SECRET, "copy": EMAIL}, typed
        assert all(entry["trusted"] for entry in await page_log(tab))

        first, second, third = (user_text(body) for body in server.requests)
        # told the secret's name in what changes per step (after the history, next to the page), and the page masked
        tail = first[first.rindex("</agent_history>"):]
        assert "<privacy>" in tail and "<secret>SITE_PW</secret>" in tail.split("</privacy>")[0]
        assert "Contact: [email 1]" in first and "Card on file: [card 1]" in first
        # the secret in a plain text field, read back and shown in the next state: its name only
        assert "Typed '<secret>SITE_PW</secret>'" in second and "value is now '<secret>SITE_PW</secret>'" in second
        assert 'value="<secret>SITE_PW</secret>"' in browser_state(server.requests[1]) or \
            "<secret>SITE_PW</secret>" in browser_state(server.requests[1])
        assert "value is now '[email 1]'" in third
        channels = every_output(tmp_path, proc, server)
        assert b'"rawRequest"' in channels["sqlite file"]
        assert_nowhere(channels, SECRET, EMAIL, CARD, "4242424242424242")
    listed = json.loads(tabpilot(tmp_path, "history", "--json").stdout)
    assert "Fill in the account details (2); my password is <secret>SITE_PW</secret>" in [t["task"] for t in listed]


async def test_a_password_or_token_in_an_address_reaches_neither_the_model_nor_the_record(
    browser: Browser, pages, tmp_path: Path
) -> None:
    """Found by an attack run: a tab opened at http://user:password@host/…?access_token=… keeps both in its URL (CDP
    reports it so), and the page state, the task's row, its events, raw requests and the export carried them to the
    model and into the record; a URL with a password in the task text too. The password and secret-named parameter
    values are hidden everywhere; which page it is stays readable."""
    prepare_home(tmp_path, "127.0.0.1")
    address = pages.url(PAGE).replace("://", "://alice:Hunter2-in-url@", 1)
    await only_tab(browser, f"{address}?access_token=tok-0123456789abcdef&lang=en#id_token=eyJ-idtoken-xyz")
    with ScriptedLLMServer([done("Looked at the page")]) as server:
        proc = await run_attached(browser, server, tmp_path, "Compare with https://bob:S3cret-in-task@mail.example/inbox")
    seen = user_text(server.requests[0])
    assert "alice:[redacted]@127.0.0.1" in seen and "access_token=[redacted]&lang=en" in seen, seen
    assert "https://bob:[redacted]@mail.example/inbox" in seen
    assert_nowhere(every_output(tmp_path, proc, server), "Hunter2-in-url", "tok-0123456789abcdef", "eyJ-idtoken-xyz",
                   "S3cret-in-task")
    [row] = json.loads(tabpilot(tmp_path, "history", "--json").stdout)
    assert "privacy_form.html?access_token=[redacted]&lang=en" in row["url"], row


async def test_on_another_site_a_secret_and_a_placeholder_are_refused_and_the_page_gets_nothing(
    browser: Browser, pages, tmp_path: Path
) -> None:
    prepare_home(tmp_path, "127.0.0.1")  # the secret and the e-mail belong to 127.0.0.1; localhost is another site
    await only_tab(browser, pages.url(PAGE))
    elsewhere = pages.url("agent_form.html", host="localhost")  # a sign-up form that does not show the e-mail
    replies = [
        step("go_to_url", {"url": elsewhere}),
        on_page(lambda b: {"input_text": {"index": index_of(b, "Your name"), "text": "<secret>SITE_PW</secret>"}}),
        on_page(lambda b: {"input_text": {"index": index_of(b, "placeholder=[email 2]"), "text": "[email 1]"}}),
        done("Could not type them here", success=False),
    ]
    with ScriptedLLMServer(replies) as server:
        proc = await run_attached(browser, server, tmp_path, "Fill in the account details on the other site",
                                  exit_code=1)  # the model said it could not
    assert "❌ not done: Could not type them here" in proc.stdout, proc.stdout  # not "error": nothing broke
    [info] = await browser.tabs()
    assert info.url == elsewhere
    tab = await browser.attach(info.target_id)
    assert json.loads(await tab.evaluate("sessionStorage.getItem('agentLog') || '[]'")) == []  # the page got nothing
    assert await tab.evaluate("fullname.value + email.value") == ""

    assert "[email 1]" in user_text(server.requests[0])  # seen (and masked) on 127.0.0.1
    on_other_site = user_text(server.requests[1])
    assert "SITE_PW" not in on_other_site, on_other_site  # nothing of the secret here
    assert "<secret>" not in browser_state(server.requests[1])
    assert "The secret SITE_PW may not be typed on localhost" in user_text(server.requests[2])
    assert "[email 1] may not be typed on localhost" in user_text(server.requests[3])
    assert_nowhere(every_output(tmp_path, proc, server), SECRET, EMAIL)


async def test_a_script_result_and_a_secret_in_a_script_never_reach_the_model(browser: Browser, pages) -> None:
    tab = await only_tab(browser, pages.url(PAGE))
    await tab.evaluate(f"document.getElementById('notes').value = {SECRET!r}")
    replies = [
        step("execute_javascript", {"script": "return document.getElementById('notes').value + ' / ' + "
                                              "document.getElementById('contact').textContent"}),
        step("execute_javascript", {"script": "document.title = '<secret>SITE_PW</secret>'"}),
        done(),
    ]
    guard = PrivacyGuard([Secret("SITE_PW", "127.0.0.1", SECRET)], MaskRules(emails=True))
    with ScriptedLLMServer(replies) as server:
        llm = LLMConfig(base_url=server.base_url, model="scripted", api_key=API_KEY, timeout=5.0, backoff_base=0.0)
        agent = Agent(browser, llm, AgentConfig(step_delay=0, enable_javascript_tool=True, privacy=guard))
        result = await agent.execute("Read the notes")
    outputs = [e.action.output for e in result.history if isinstance(e, StepEvent)]
    assert outputs[0] == "The script returned: <secret>SITE_PW</secret> / Contact: [email 1]"
    assert "only be typed with input_text" in outputs[1]
    assert await tab.evaluate("document.title") == "Account details"  # the refused script did not run
    assert_nowhere({"model requests": json.dumps(server.requests).encode()}, SECRET, EMAIL)


async def test_a_secret_goes_into_a_same_site_frame_but_not_into_a_frame_of_another_site(
    browser: Browser, pages
) -> None:
    inner = pages.url("actions_frame_inner.html", host="localhost")
    tab = await only_tab(browser, pages.url(f"actions_frames.html?inner={inner}"))
    await asyncio.sleep(0.5)  # both frames loaded
    def into_frame(which: int) -> Any:
        def reply(body: dict[str, Any]) -> Any:
            lines = [line for line in browser_state(body).splitlines() if "inner text" in line]
            index = int(lines[which].split("[", 1)[1].split("]", 1)[0])
            return step("input_text", {"index": index, "text": "<secret>SITE_PW</secret>"})
        return reply

    guard = PrivacyGuard([Secret("SITE_PW", "127.0.0.1", SECRET)])
    with ScriptedLLMServer([into_frame(0), into_frame(1), done()]) as server:
        llm = LLMConfig(base_url=server.base_url, model="scripted", api_key=API_KEY, timeout=5.0, backoff_base=0.0)
        result = await Agent(browser, llm, AgentConfig(step_delay=0, privacy=guard)).execute("Type the password")
    outputs = [e.action.output for e in result.history if isinstance(e, StepEvent)]
    # the top page is on 127.0.0.1, but the first frame's document is on localhost: refused there
    assert outputs[0].startswith("❌ The secret SITE_PW may not be typed on localhost"), outputs
    assert "Typed '<secret>SITE_PW</secret>'" in outputs[1], outputs
    same_site = await tab.evaluate("document.getElementById('same').contentWindow.__events")
    assert [e["value"] for e in same_site if e["type"] == "input"][-1] == SECRET
    assert_nowhere({"model requests": json.dumps(server.requests).encode()}, SECRET)
