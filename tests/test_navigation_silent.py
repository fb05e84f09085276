"""A site that takes the connection and never answers: opening it ends saying so, with the load stopped, and the
tab goes on answering with the page it showed (the agent's next look, `run --url`'s error) instead of every
later command waiting on the navigation that never came."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
from actions_support import events, ref

from tabpilot.browser import actions
from tabpilot.browser.errors import ActionError, NavigationFailed
from tabpilot.browser.nodes import request_navigation

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

SILENCE = 2.0  # the navigation's deadline here (go_to_url's is 30 s, through the same request_navigation)
READ = 15.0  # generous: a read waiting behind the navigation that never came (before the fix) never answers


@pytest.fixture(scope="module")
def silent_site() -> Iterator[str]:
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        yield f"http://127.0.0.1:{silent.getsockname()[1]}/report"


async def test_agent_told_a_silent_site_did_not_answer_keeps_its_page_twice(browser, tab, pages, silent_site) -> None:
    await actions.go_to_url(browser, tab, pages.url("actions_click.html"))
    for _ in range(2):
        with pytest.raises(ActionError) as raised:
            await request_navigation(tab, silent_site, timeout=SILENCE)
        assert str(raised.value) == (f"Could not open {silent_site}: the site did not answer within 2 s, so its "
                                     "loading was stopped; the tab still shows the page before.")
        assert await tab.evaluate("document.title", timeout=READ) == "Click page"
    assert (await actions.click(browser, tab, await ref(tab, "#save", name="Save"))).endswith("button 'Save'.")
    assert [c["id"] for c in await events(tab, "click")] == ["save"]


async def test_first_page_that_never_answers_fails_saying_so_and_the_tab_still_answers(tab, pages, silent_site) -> None:
    await tab.navigate(pages.url("actions_click.html"))
    with pytest.raises(NavigationFailed) as raised:
        await tab.navigate(silent_site, timeout=SILENCE)
    assert raised.value.error == "the site did not answer within 2 s, so its loading was stopped"
    assert await tab.evaluate("document.title", timeout=READ) == "Click page"
    assert await tab.url() == pages.url("actions_click.html")
