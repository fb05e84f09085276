"""Password values never reach the model through the actions: not from a script reading a login form in a
same-origin iframe, not from a "show password" field, not by echoing what was typed."""

from __future__ import annotations

import pytest
from actions_support import evaluate, ref

from tabpilot.browser import actions
from tabpilot.browser.browser import Browser
from tabpilot.browser.tab import Tab

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
