"""Password values never reach the model through the actions: not from a script reading a login form in a
same-origin iframe, not from a "show password" field, not by echoing what was typed."""

from __future__ import annotations

import base64
import json

import pytest
from actions_support import evaluate, ref
from agent_support import browser_state, done, index_of, on_page, step

from tabpilot.agent import Agent, AgentConfig
from tabpilot.browser import actions
from tabpilot.browser.browser import Browser
from tabpilot.browser.state import BrowserState, build_state, get_state, read_page
from tabpilot.browser.tab import Tab
from tabpilot.llm import LLMConfig
from tabpilot.llm.scripted import ScriptedLLMServer

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

SECRET = "hunter2-Correct-Horse"
SHOWN_SECRET = "battery-Staple-42"


async def _login_page(browser: Browser, pages) -> Tab:
    tab = await browser.new_tab()
    await tab.navigate(pages.url("actions_login.html"))
    assert await evaluate(tab, "new Promise((resolve) => { const f = document.getElementById('login'); "
                               "if (f.contentDocument.readyState === 'complete') resolve(true); "
                               "else f.addEventListener('load', () => resolve(true)); })")
    # what a person would have typed into the form inside the frame
    await evaluate(tab, f"""(() => {{
        const doc = document.getElementById('login').contentDocument;
        doc.getElementById('email').value = 'ann@example.com';
        doc.getElementById('password').value = {SECRET!r};
        doc.getElementById('visible').value = {SHOWN_SECRET!r};
    }})()""")
    return tab


async def test_a_script_reading_a_password_in_a_same_origin_iframe_gets_it_hidden(browser: Browser, pages) -> None:
    tab = await _login_page(browser, pages)
    result = await actions.execute_javascript(
        browser, tab,
        "const doc = document.getElementById('login').contentDocument;\n"
        "return [doc.getElementById('email').value, doc.getElementById('password').value].join(' / ')",
    )
    assert SECRET not in result
    assert "ann@example.com / [password hidden]" in result  # the rest of the answer is still there


async def test_a_show_password_field_counts_as_a_password(browser: Browser, pages) -> None:
    tab = await _login_page(browser, pages)
    result = await actions.execute_javascript(
        browser, tab, "document.getElementById('login').contentDocument.getElementById('visible').value"
    )
    assert SHOWN_SECRET not in result and "[password hidden]" in result


async def test_an_alert_showing_the_password_is_hidden_too(browser: Browser, pages) -> None:
    tab = await _login_page(browser, pages)
    script = "alert('pw: ' + document.getElementById('login').contentDocument.getElementById('password').value)"
    result = await actions.execute_javascript(browser, tab, script)
    assert SECRET not in result
    assert "pw: [password hidden]" in result


async def test_typing_into_a_show_password_field_does_not_echo_the_value(browser: Browser, pages) -> None:
    tab = await _login_page(browser, pages)
    field = await ref(tab, "#shown", name="New password")
    result = await actions.input_text(browser, tab, field, "s3cret-Typed-Value")
    assert "s3cret-Typed-Value" not in result
    assert "password" in result and str(len("s3cret-Typed-Value")) in result
    seen = await evaluate(tab, "window.__seen")
    assert seen and seen[-1] == "s3cret-Typed-Value"  # it was really typed; only the echo is withheld


# --- a password field a "show password" button turned into plain text ----------------------------------------
EYE_SECRET = "Tr0ub4dor-and-3"
EYE_SECRET_FORMS = (EYE_SECRET, EYE_SECRET.upper(), EYE_SECRET[::-1], " ".join(EYE_SECRET),
                    base64.b64encode(EYE_SECRET.encode()).decode(), json.dumps([ord(c) for c in EYE_SECRET]),
                    ",".join(str(ord(c)) for c in EYE_SECRET))
EYE_SCRIPTS = (
    "document.getElementById('pw').value",
    "document.getElementById('pw').value.toUpperCase()",
    "[...document.getElementById('pw').value].reverse().join('')",
    "document.getElementById('pw').value.split('').join(' ')",
    "btoa(document.getElementById('pw').value)",
    "[...document.getElementById('pw').value].map((c) => c.charCodeAt(0))",
    "JSON.stringify([...document.querySelectorAll('input')].map((i) => [i.id, i.type, i.value]))",
)


def _leaks(text: str) -> list[str]:
    return [form for form in EYE_SECRET_FORMS if form in text]


def _field_line(state: BrowserState) -> str:
    [line] = [line for line in state.text.splitlines() if "<input" in line and "type=email" not in line]
    return line


async def _eye_page(browser: Browser, pages) -> Tab:
    tab = await browser.new_tab(pages.url("actions_show_password.html"))
    await evaluate(tab, f"document.getElementById('pw').value = {EYE_SECRET!r}")  # what the user typed
    return tab


async def _press_the_eye(browser: Browser, tab: Tab) -> BrowserState:
    state = await get_state(browser, tab)
    assert "type=password" in _field_line(state) and not _leaks(state.text)
    [eye] = [ref for ref in state.elements.values() if ref.attributes.get("aria-label") == "Show password"]
    await actions.click(browser, tab, eye)
    assert await evaluate(tab, "window.__shown") == [{"type": "text", "trusted": True}]  # now plain text
    return state


async def test_a_password_field_shown_as_plain_text_stays_hidden_in_the_state(browser: Browser, pages) -> None:
    tab = await _eye_page(browser, pages)
    state = await get_state(browser, tab, await _press_the_eye(browser, tab))
    assert not _leaks(state.text), state.text
    assert "type=password" in _field_line(state) and "filled" in _field_line(state)
    from_snapshots = build_state(await read_page(browser, tab, snapshot=True))  # the other reader agrees
    assert not _leaks(from_snapshots.text) and "type=password filled" in _field_line(from_snapshots)
    # a later task reads the page through a new connection: it is still a password field to it
    assert browser.launched is not None
    async with await Browser.connect(browser.launched.ws_url) as other:
        other_tab = await other.attach(tab.target_id)
        later = await get_state(other, other_tab)
        assert not _leaks(later.text) and "type=password" in _field_line(later)
        assert not _leaks(await actions.execute_javascript(other, other_tab, EYE_SCRIPTS[0]))
    await browser.close_tab(tab.target_id)


@pytest.mark.parametrize("script", EYE_SCRIPTS)
async def test_a_script_cannot_read_a_shown_password_even_transformed(browser: Browser, pages, script: str) -> None:
    tab = await _eye_page(browser, pages)
    await _press_the_eye(browser, tab)
    result = await actions.execute_javascript(browser, tab, script)
    assert not _leaks(result), result
    assert "[password hidden]" in result or "withheld" in result, result
    await browser.close_tab(tab.target_id)


async def test_an_agent_that_shows_a_password_and_reads_it_never_gets_it(browser: Browser, pages) -> None:
    """The whole loop: the model clicks the eye, then asks a script for the field. Neither the prompts the
    model is sent nor the task's history (raw requests included, as debug capture stores them) hold it."""
    tab = await _eye_page(browser, pages)
    browser.active = tab
    script = "[document.getElementById('pw').value, btoa(document.getElementById('pw').value)].join(' ')"
    replies = [
        on_page(lambda b: {"click_element_by_index": {"index": index_of(b, "Show password")}}, goal="show it"),
        step("execute_javascript", {"script": script}, goal="read it"),
        done("Looked at the password field"),
    ]
    with ScriptedLLMServer(replies) as server:
        agent = Agent(browser, LLMConfig(base_url=server.base_url, model="scripted", api_key="sk-test"),
                      AgentConfig(step_delay=0, enable_javascript_tool=True))
        result = await agent.execute("Show the password and read it")
    assert result.success
    assert await evaluate(tab, "window.__shown") == [{"type": "text", "trusted": True}]  # it was shown
    sent = json.dumps(server.requests)
    assert len(server.requests) == 3 and "The script returned: [withheld: " in sent
    assert "type=password filled" in browser_state(server.requests[1])
    assert not _leaks(sent)
    assert not _leaks(json.dumps([event.model_dump(mode="json") for event in result.history]))
    await browser.close_tab(tab.target_id)


async def test_a_one_time_code_is_a_secret_wherever_the_model_could_read_it(browser: Browser, pages) -> None:
    # A code the person typed (or the agent did) into a field the page marks as one-time-code never reaches the
    # model: not in either reader's page text, not through read_text, a script or the typing result. The
    # takeover record hides it already (capture.js); the page text showed `value=884213`.
    tab = await browser.new_tab()
    await tab.navigate(pages.url("actions_one_time_code.html"))
    await evaluate(tab, "document.getElementById('otp').value = '884213'")
    for state in (await get_state(browser, tab), build_state(await read_page(browser, tab, snapshot=True))):
        assert "884213" not in state.text, state.text
        line = next(line for line in state.text.splitlines() if "Code" in line)
        assert "filled" in line, state.text
        assert "ann@example.com" in state.text  # an ordinary field keeps its value
    code = await ref(tab, "#otp", name="Code")
    with pytest.raises(actions.ActionError, match="never shown"):
        await actions.read_text(browser, tab, code)
    read = await actions.execute_javascript(browser, tab, "'code: ' + document.getElementById('otp').value")
    assert "884213" not in read and "code: [password hidden]" in read, read
    typed = await actions.input_text(browser, tab, code, "551902")
    assert "551902" not in typed and "6 characters" in typed, typed
    assert await evaluate(tab, "document.getElementById('otp').value") == "551902"  # typed all the same
    again = await get_state(browser, tab)
    assert "551902" not in again.text and "884213" not in again.text, again.text
    await browser.close_tab(tab.target_id)
