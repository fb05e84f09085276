"""Secrets and masking in real tasks: `tabpilot run` attached to a real Chromium (the tab stays open,
so the page's own record can be read), the scripted model over HTTP, the secret set with `tabpilot
secrets set` on stdin, the settings file, the real SQLite store and `tabpilot history export`.

The grep proof: after a task that typed a secret and a masked e-mail, neither value is in any request
the model server received, the run's output, the SQLite file's bytes, the log files or the export."""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from actions_support import wait_until
from agent_support import browser_state, done, history_section, index_of, on_page, step
from store_support import tabpilot, tabpilot_process

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
        tabpilot_process, home, "run", task, "--cdp-url", browser.launched.ws_url, "--base-url", server.base_url,
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
    channels["history list"] = listed.stdout.encode()
    for words in ("account details", "password", SECRET, EMAIL):  # a search shows what the record holds, and finds it
        channels[f"history --search {words}"] = tabpilot(home, "history", "--search", words).stdout.encode()
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
            on_page(lambda b: {"input_text": {"index": index_of(b, "User name"), "text": "<secret>SITE_PW</secret>"}}),
            on_page(lambda b: {"input_text": {"index": index_of(b, "Copy to"), "text": "[email 1]"}}),
            done("Typed the password and the copy address"),
        ]
        with ScriptedLLMServer(replies) as server:
            # The second time the person writes the secret into the task itself: recorded by its name only.
            told = f"; my password is {SECRET}" if attempt == 2 else ""
            proc = await run_attached(browser, server, tmp_path, f"Fill in the account details ({attempt}){told}")

        # the page's own record: the real values went in, typed as a person would
        typed = {entry["field"]: entry["value"] for entry in await page_log(tab)}
        assert typed == {"user": SECRET, "copy": EMAIL}, typed
        assert all(entry["trusted"] for entry in await page_log(tab))

        first, second, third = (user_text(body) for body in server.requests)
        # told the secret's name in what changes per step (after the history, next to the page), and the page masked
        tail = first[first.rindex("</agent_history>"):]
        assert "<privacy>" in tail and "<secret>SITE_PW</secret>" in tail.split("</privacy>")[0]
        assert "Contact: [email 1]" in first and "Card on file: [card 1]" in first
        # the secret in a user-name field, read back and shown in the next state: its name only
        assert "Typed '<secret>SITE_PW</secret>'" in second and "value is now '<secret>SITE_PW</secret>'" in second
        assert 'value="<secret>SITE_PW</secret>"' in browser_state(server.requests[1]) or \
            "<secret>SITE_PW</secret>" in browser_state(server.requests[1])
        assert "value is now '[email 1]'" in third
        channels = every_output(tmp_path, proc, server)
        assert b'"rawRequest"' in channels["sqlite file"]
        assert_nowhere(channels, SECRET, EMAIL, CARD, "4242424242424242")
        if attempt == 2:  # found by a word of it, and shown with the password's name in its place
            assert b"my password is <secret>" in channels["history --search password"]
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


FIELDS_PAGE = "privacy_fields.html"
LOGIN_ONLY = "Refused: <secret>SITE_PW</secret> may be typed only into a login field"


def field_after(label: str, nth: int = 0) -> Callable[[dict[str, Any]], int]:
    """The index of the field shown on the line after the `nth` line that reads `label` (a shadow root's and a
    frame's fields have no attribute to find them by)."""
    def find(body: dict[str, Any]) -> int:
        lines = browser_state(body).splitlines()
        at = [i for i, line in enumerate(lines) if line.strip() == label][nth]
        return int(lines[at + 1].split("[", 1)[1].split("]", 1)[0])
    return find


def type_secret(where: Callable[[dict[str, Any]], int] | str) -> Callable[[dict[str, Any]], Any]:
    find = where if callable(where) else (lambda body: index_of(body, where))
    return on_page(lambda b: {"input_text": {"index": find(b), "text": "<secret>SITE_PW</secret>"}})


# Every kind of field a login secret must not go into, then every login field it may go into, on one page.
NOT_LOGIN_FIELDS = {  # where → the field's id in the page's record
    "name=q": "search", "<textarea": "comment", "Message to support": "editor", "name=display": "display",
    field_after("Find a branch"): "branch-search", field_after("Search help"): "same:help-search",
}
LOGIN_FIELDS = {"name=cust": "customer", "name=pw": "password", field_after("Card number"): "card-number",
                field_after("Card PIN"): "card-pin", field_after("Security code"): "same:otp"}


async def test_a_login_secret_goes_only_into_login_fields_and_the_model_is_told_why_elsewhere(
    browser: Browser, pages, tmp_path: Path
) -> None:
    """A review found a stored password typed into any field of its site: a search box (into the address and the
    analytics), a comment, an editable area, a field of a web component or of a frame. Now the page's own record
    shows the value only in its login fields, the model reads why each other field was refused, and the value is in
    no output."""
    prepare_home(tmp_path, "127.0.0.1")
    other_site = pages.url("privacy_fields_frame.html?name=cross", host="localhost")
    for attempt in (1, 2):  # a second task on the page, loaded anew, is refused and served the same
        tab = await only_tab(browser, pages.url(f"{FIELDS_PAGE}?other={quote(other_site)}"))
        await wait_until(partial(tab.evaluate, "document.getElementById('same').contentDocument.readyState === "
                                               "'complete' && window.crossLoaded === true"), timeout=30)
        refused = NOT_LOGIN_FIELDS if attempt == 1 else {"name=q": "search"}
        typed_into = LOGIN_FIELDS if attempt == 1 else {"name=cust": "customer"}
        replies = [type_secret(where) for where in [*refused, *typed_into]]
        if attempt == 1:  # another site's login field: refused for its site, as before
            replies.append(type_secret(field_after("Security code", 1)))
            # "show password" makes the field plain text: still the password field it was
            replies += [on_page(lambda b: {"click_element_by_index": {"index": index_of(b, "Show password")}}),
                        type_secret("name=pw")]
        with ScriptedLLMServer([*replies, done("Signed in")]) as server:
            proc = await run_attached(browser, server, tmp_path, f"Sign in ({attempt})")

        log = await page_log(tab)
        received = {entry["field"]: entry["value"] for entry in log}
        assert received == dict.fromkeys(typed_into.values(), SECRET), log  # nothing at all reached the others
        assert all(entry["trusted"] for entry in log)
        # what the model was told of each step, next time it was asked
        told = [history_section(body).rsplit("Action Results: ", 1)[1] for body in server.requests[1:]]
        for result, field in zip(told, [*refused.values(), *typed_into.values()], strict=False):
            assert result.startswith(f"❌ {LOGIN_ONLY}" if field in refused.values() else "Typed "), (field, result)
        if attempt == 1:
            assert "The secret SITE_PW may not be typed on localhost" in told[len(refused) + len(typed_into)]
            assert "Nothing was typed" in told[0] and "ask the user" in told[0]
            assert await tab.evaluate("document.getElementById('password').type") == "text"
        [task] = json.loads(tabpilot(tmp_path, "history", "--json").stdout)[:1]
        events = json.loads(tabpilot(tmp_path, "history", "show", task["taskId"], "--json").stdout)["events"]
        outputs = [event["action"]["output"] for event in events if event["type"] == "step"]
        # the person sees each refusal in the timeline
        assert sum(output.startswith(f"❌ {LOGIN_ONLY}") for output in outputs) == len(refused), outputs
        assert_nowhere(every_output(tmp_path, proc, server), SECRET)


async def test_a_secret_stored_for_any_field_goes_into_a_settings_field_and_the_model_is_told_so(
    browser: Browser, pages, tmp_path: Path
) -> None:
    """An API key for a settings page (`secrets set --any-field`) goes into a plain field or a textarea."""
    save_settings(Settings(), tmp_path / "config" / "config.json")
    saved = tabpilot(tmp_path, "secrets", "set", "SITE_PW", "--domain", "127.0.0.1", "--any-field",
                     stdin=SECRET + "\n")
    assert saved.returncode == 0, saved.stderr
    tab = await only_tab(browser, pages.url(FIELDS_PAGE))
    replies = [type_secret("name=display"), type_secret("<textarea"), done("Saved the key")]
    with ScriptedLLMServer(replies) as server:
        proc = await run_attached(browser, server, tmp_path, "Paste the API key into the settings")
    received = {entry["field"]: entry["value"] for entry in await page_log(tab)}
    assert received == {"display": SECRET, "comment": SECRET}
    first = user_text(server.requests[0])
    assert "<secret>SITE_PW</secret> (any field)" in first.split("</agent_history>")[1]
    assert LOGIN_ONLY not in json.dumps(server.requests)
    assert_nowhere(every_output(tmp_path, proc, server), SECRET)


COPY_OVER = "document.getElementById('search').value = document.getElementById('customer').value; return 'ok'"


async def signed_in_with_scripts(browser: Browser, replies: list[Any]) -> tuple[list[str], list[dict[str, Any]]]:
    """The agent, its scripts allowed and SITE_PW stored for the test's pages, run on `replies`: its steps' results
    and the model requests."""
    guard = PrivacyGuard([Secret("SITE_PW", "127.0.0.1", SECRET)])
    with ScriptedLLMServer(replies) as server:
        llm = LLMConfig(base_url=server.base_url, model="scripted", api_key=API_KEY, timeout=5.0, backoff_base=0.0)
        config = AgentConfig(step_delay=0, enable_javascript_tool=True, privacy=guard)
        result = await Agent(browser, llm, config).execute("Sign in")
    return [e.action.output for e in result.history if isinstance(e, StepEvent)], server.requests


async def test_a_secret_typed_into_a_login_field_is_not_copied_or_scripted_on_into_another_field(
    browser: Browser, pages
) -> None:
    """Typed into a user-name field, a secret could be carried on into the search box: Control+A, Control+C, a
    click, Control+V works over CDP, and a script can copy it. On that page neither runs; on the next one they do."""
    tab = await only_tab(browser, pages.url(FIELDS_PAGE))
    replies = [
        type_secret("name=cust"),
        step("send_keys", {"keys": "Control+a Control+c"}),
        on_page(lambda b: {"click_element_by_index": {"index": index_of(b, "name=q")}}),
        step("send_keys", {"keys": "Control+v"}),
        step("execute_javascript", {"script": COPY_OVER}),
        step("go_to_url", {"url": pages.url(FIELDS_PAGE)}),  # a new document: nothing of the secret in it
        step("execute_javascript", {"script": "return document.title"}),
        done(),
    ]
    outputs, requests = await signed_in_with_scripts(browser, replies)
    # the page's own record (kept across its reload): the value went into the customer number and nowhere else
    log = await page_log(tab)
    assert [entry["field"] for entry in log if SECRET in entry["value"]] == ["customer"], log
    assert outputs[0].startswith("Typed '<secret>SITE_PW</secret>'"), outputs
    assert outputs[1].startswith("❌ Refused: Control+c copies or cuts text"), outputs
    assert outputs[3] == "Pressed Control+v.", outputs
    assert outputs[4].startswith("❌ Refused: a stored secret was typed"), outputs
    assert outputs[6] == "The script returned: Bank sign-in", outputs
    assert "No key was pressed" in history_section(requests[2])
    assert_nowhere({"model requests": json.dumps(requests).encode()}, SECRET)


async def test_a_page_gone_back_to_with_the_secret_still_typed_in_refuses_scripts(browser: Browser, pages) -> None:
    """Going back to the page a secret was typed into brings its fields back as they were (the customer number still
    held it) in what is another document to the tab: a script then copied it into the search box. Refused there, at
    the history entry it was typed at; run again on a page the agent opened anew."""
    tab = await only_tab(browser, pages.url(FIELDS_PAGE))
    replies = [
        type_secret("name=cust"),
        step("go_to_url", {"url": pages.url("basic.html")}),
        step("go_back", {}),
        step("execute_javascript", {"script": COPY_OVER}),
        step("go_to_url", {"url": pages.url(FIELDS_PAGE)}),
        step("execute_javascript", {"script": "return document.title"}),
        done(),
    ]
    outputs, requests = await signed_in_with_scripts(browser, replies)
    assert outputs[2].startswith("Went back to"), outputs
    assert outputs[3].startswith("❌ Refused: a stored secret was typed"), outputs
    assert outputs[5] == "The script returned: Bank sign-in", outputs
    assert await tab.evaluate("document.getElementById('search').value") == ""
    assert_nowhere({"model requests": json.dumps(requests).encode()}, SECRET)
