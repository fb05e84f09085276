"""Navigation, history, tabs and page scripts in a real Chromium."""

from __future__ import annotations

import asyncio
import socket

import pytest
import pytest_asyncio
from actions_support import evaluate, ref

from tabpilot.browser import actions
from tabpilot.browser.browser import Browser
from tabpilot.browser.errors import ActionError
from tabpilot.browser.state import get_state

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]


@pytest_asyncio.fixture(loop_scope="module")
async def tab(browser: Browser):
    tab = await browser.new_tab()
    browser.active = tab
    yield tab
    if not tab.closed:
        await browser.close_tab(tab.target_id)


async def test_go_to_url_and_back(browser, tab, pages) -> None:
    first, second = pages.url("actions_click.html"), pages.url("actions_next.html?x=1")
    assert await actions.go_to_url(browser, tab, first) == f"Opened {first} ('Click page')."
    assert await actions.go_to_url(browser, tab, second) == f"Opened {second} ('Next page')."
    assert await actions.go_back(browser, tab) == f"Went back to {first} ('Click page')."
    assert await evaluate(tab, "document.readyState") == "complete"
    assert await evaluate(tab, "typeof window.__events") == "object"  # the old page's own script ran again


async def test_go_back_within_page_and_with_no_history(browser, tab, pages) -> None:
    with pytest.raises(ActionError, match="no previous page"):
        await actions.go_back(browser, tab)
    url = pages.url("actions_click.html")
    await actions.go_to_url(browser, tab, url)
    await actions.go_to_url(browser, tab, url + "#far")  # a jump within the same document
    assert await actions.go_back(browser, tab) == f"Went back to {url} ('Click page')."


async def test_bad_urls_are_clear_errors(browser, tab, pages) -> None:
    with pytest.raises(ActionError, match="javascript: URLs are not opened"):
        await actions.go_to_url(browser, tab, "javascript:alert(1)")
    with pytest.raises(ActionError, match="Give the URL"):
        await actions.go_to_url(browser, tab, "  ")
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(ActionError, match=rf"Could not open http://127.0.0.1:{port}/: net::ERR_CONNECTION_REFUSED"):
        await actions.go_to_url(browser, tab, f"http://127.0.0.1:{port}/")


async def test_open_switch_and_close_tabs(browser, tab, pages) -> None:
    await actions.go_to_url(browser, tab, pages.url("actions_click.html"))
    first = browser.tab_number(tab.target_id)
    result = await actions.go_to_url(browser, tab, pages.url("actions_next.html"), new_tab=True)
    opened = browser.active
    assert opened is not None and opened is not tab
    second = browser.tab_number(opened.target_id)
    url = pages.url("actions_next.html")
    assert result == f"Opened tab {second} with {url} ('Next page'); it is now the active tab."
    assert await evaluate(opened, "document.title") == "Next page"

    result = await actions.switch_tab(browser, first)
    assert browser.active is tab and result.startswith(f"Switched to tab {first} (") and "'Click page'" in result

    result = await actions.close_tab(browser, second)
    assert result == f"Closed tab {second}."  # it was not the active tab: the active one stays
    assert browser.active is tab
    assert opened.target_id not in [t.target_id for t in await browser.tabs()]

    with pytest.raises(ActionError, match=rf"There is no open tab {second}\. Open tabs: .*'Click page'"):
        await actions.switch_tab(browser, second)


async def test_the_model_opens_web_pages_only_and_files_only_from_a_file(browser, tab, pages, tmp_path,
                                                                         monkeypatch) -> None:
    # A hostile page could tell the agent to open ~/.ssh or tabpilot's settings (the API key) and read it out.
    monkeypatch.setenv("TABPILOT_HOME", str(tmp_path / "tabpilot"))
    settings = tmp_path / "tabpilot" / "config" / "config.json"
    settings.parent.mkdir(parents=True)
    settings.write_text('{"apiKey": "sk-not-for-pages"}')
    mine = tmp_path / "notes.html"
    mine.write_text("<title>My notes</title><p>notes")
    web = pages.url("actions_click.html")
    await actions.go_to_url(browser, tab, web)
    for url in (mine.as_uri(), settings.as_uri(), "chrome://settings", f"view-source:{web}", "vscode://file/x"):
        for new_tab in (False, True):
            with pytest.raises(ActionError, match="only web pages"):
                await actions.go_to_url(browser, tab, url, new_tab=new_tab)
    assert browser.active is tab and await tab.url() == web  # nothing was opened
    # A task the person started on a file of theirs may go to their other files, never to tabpilot's own.
    await tab.navigate(mine.as_uri())
    other = tmp_path / "more.html"
    other.write_text("<title>More notes</title><p>more")
    assert await actions.go_to_url(browser, tab, other.as_uri()) == f"Opened {other.as_uri()} ('More notes')."
    with pytest.raises(ActionError, match="tabpilot's own files"):
        await actions.go_to_url(browser, tab, settings.as_uri())
    assert await tab.url() == other.as_uri()
    assert await actions.go_to_url(browser, tab, web) == f"Opened {web} ('Click page')."


async def test_a_page_that_shows_dialogs_as_it_loads_is_opened(browser, tab, pages) -> None:
    # `tabpilot run --url` and `state` waited for ever on such a page: the load waits on the dialog.
    for _ in range(2):
        async with asyncio.timeout(20):
            await tab.navigate(pages.url("alert_on_load.html"))
        assert await evaluate(tab, "document.readyState") == "complete"
        assert await evaluate(tab, "document.getElementById('said').textContent") == "true guest"
        # ... and the next look at the page tells the model what the page said, once.
        state = await get_state(browser, tab)
        assert "The page showed an alert saying 'Welcome!', which was accepted." in state.text
        assert "The page showed a confirmation saying 'Continue?', which was accepted." in state.text
        assert "The page showed a prompt saying 'Your name?', which was accepted." in state.text
        assert state.text.index("Welcome!") < state.text.index("Before the greeting")
        assert "Welcome!" not in (await get_state(browser, tab, state)).text


async def test_closing_active_tab_activates_another(browser, tab, pages) -> None:
    await actions.open_tab(browser, pages.url("actions_next.html"))
    doomed = browser.active
    result = await actions.close_tab(browser, browser.tab_number(doomed.target_id))
    assert "is now the active tab" in result
    assert browser.active is not None and browser.active is not doomed and not browser.active.closed
    assert doomed.closed


async def test_execute_javascript_results_and_errors(browser, tab, pages) -> None:
    await actions.go_to_url(browser, tab, pages.url("actions_click.html"))
    assert await actions.execute_javascript(browser, tab, "document.title") == "The script returned: Click page"
    assert await actions.execute_javascript(browser, tab, "1 + 1") == "The script returned: 2"
    assert await actions.execute_javascript(browser, tab, "const n = 6; return n * 7;") == "The script returned: 42"
    assert await actions.execute_javascript(browser, tab, "await new Promise(r => setTimeout(r, 10)); ({a: [1]})") == (
        'The script returned: {"a":[1]}'
    )
    assert await actions.execute_javascript(browser, tab, "document.getElementById('save')") == (
        "The script returned: button#save"
    )
    assert await actions.execute_javascript(browser, tab, "window.__marker = 5") == "The script returned: 5"
    assert await evaluate(tab, "window.__marker") == 5  # it really ran in the page
    assert await actions.execute_javascript(browser, tab, "console.log('x')") == "The script ran and returned nothing."
    failed = await actions.execute_javascript(browser, tab, "null.boom")
    assert failed.startswith("The script failed: TypeError: Cannot read properties of null")
    failed = await actions.execute_javascript(browser, tab, "return )")
    assert failed.startswith("The script failed: SyntaxError")
    long = await actions.execute_javascript(browser, tab, "'x'.repeat(5000)")
    assert long.endswith("… (5000 characters)") and len(long) < 2100


async def test_execute_javascript_that_navigates_waits(browser, tab, pages) -> None:
    await actions.go_to_url(browser, tab, pages.url("actions_click.html"))
    await actions.execute_javascript(browser, tab, "location.href = 'actions_next.html?js=1'")
    assert await evaluate(tab, "document.getElementById('query').textContent") == "?js=1"


async def test_dialogs_are_accepted_and_reported(browser, tab, pages) -> None:
    await actions.go_to_url(browser, tab, pages.url("actions_forms.html"))
    result = await actions.execute_javascript(browser, tab, "confirm('Really delete?')")
    assert result == (
        "The script returned: true\nThe page showed a confirmation saying 'Really delete?', which was accepted."
    )
    # A page guarding unsaved changes (it asks only after the user interacted, which trusted typing is).
    await evaluate(tab, "addEventListener('beforeunload', (e) => { e.preventDefault(); e.returnValue = ''; }); 1")
    await actions.input_text(browser, tab, await ref(tab, "#name"), "unsaved")
    result = await actions.go_to_url(browser, tab, pages.url("actions_next.html"))
    assert result.endswith("The page showed a 'leave page?' question saying '', which was accepted.")
    assert await evaluate(tab, "document.title") == "Next page"
