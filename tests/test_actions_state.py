"""Actions on the elements `get_state` hands the model: the index → node map from the real state engine,
including cross-site iframes, same-site iframes and closed shadow roots."""

from __future__ import annotations

import pytest
from actions_support import evaluate, events, frame_session

from tabpilot.browser import actions
from tabpilot.browser.errors import ActionError
from tabpilot.browser.state import BrowserState, get_state

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]


def named(state: BrowserState, name: str, *, in_frame: bool | None = None) -> int:
    """The index the model would use for the element called `name`."""
    for index, element in state.elements.items():
        if element.name == name and (in_frame is None or (element.frame_owner is not None) == in_frame):
            return index
    raise AssertionError(f"no element named {name!r} in:\n{state.text}")


async def test_form_filled_through_state_indices(browser, tab, pages, tmp_path) -> None:
    await actions.go_to_url(browser, tab, pages.url("actions_forms.html"))
    state = await get_state(browser, tab)
    elements = state.elements
    await actions.input_text(browser, tab, elements[named(state, "Controlled")], "from state")
    select = next(i for i, e in elements.items() if e.tag == "select")
    await actions.select_option(browser, tab, elements[select], "Apple")
    await actions.select_option(browser, tab, elements[named(state, "Pick a color")], "Blue")
    await actions.click(browser, tab, elements[named(state, "Medium")])
    upload = tmp_path / "cv.txt"
    upload.write_text("resume")
    await actions.upload_file(browser, tab, elements[named(state, "Upload")], [str(upload)])
    assert await evaluate(tab, "document.getElementById('controlled-state').textContent") == "from state"
    assert await events(tab, "change") == [{"type": "change", "id": "fruit", "value": "a"}]
    assert [(e["id"], e["value"], e["trusted"]) for e in await events(tab, "aria-change")] == [
        ("color", "Blue", True), ("sizes", "Medium", True)
    ]
    assert (await events(tab, "files"))[0]["files"] == [{"name": "cv.txt", "size": 6}]

    after = await get_state(browser, tab, state)
    assert "Blue" in after.text and "from state" in after.text


async def test_frames_through_state_indices(browser, tab, pages) -> None:
    inner = pages.url("actions_frame_inner.html", host="localhost")
    await actions.go_to_url(browser, tab, pages.url("actions_frames.html") + "?inner=" + inner)
    state = await get_state(browser, tab)
    cross_button = state.elements[named(state, "Inner button", in_frame=True)]
    same_button = state.elements[named(state, "Inner button", in_frame=False)]
    assert cross_button.frame_owner is not None
    await actions.click(browser, tab, cross_button)
    await actions.click(browser, tab, same_button)  # below the first frame: needs a scroll first
    await actions.input_text(browser, tab, state.elements[named(state, "inner text", in_frame=True)], "cross")
    await actions.input_text(browser, tab, state.elements[named(state, "inner text", in_frame=False)], "same")

    frame = await frame_session(browser, "localhost")
    assert [(e["type"], e["trusted"]) for e in await events(frame)][:1] == [("click", True)]
    assert (await events(frame, "input"))[-1]["value"] == "cross"
    same = await evaluate(tab, "document.getElementById('same').contentWindow.__events")
    assert same[0]["type"] == "click" and same[0]["trusted"] is True
    assert [e["value"] for e in same if e["type"] == "input"][-1] == "same"


async def test_closed_shadow_root_and_new_tab_through_state(browser, tab, pages) -> None:
    await actions.go_to_url(browser, tab, pages.url("actions_click.html"))
    await actions.scroll(browser, tab, down=True, num_pages=10)
    state = await get_state(browser, tab)
    await actions.click(browser, tab, state.elements[named(state, "Closed inside")])
    assert await events(tab, "closed-click") == [{"type": "closed-click", "trusted": True}]

    await actions.scroll(browser, tab, down=False, num_pages=10)
    state = await get_state(browser, tab, state)
    result = await actions.click(browser, tab, state.elements[named(state, "Open in a new tab")])
    assert "now the active tab" in result and browser.active is not tab
    followed = await get_state(browser, browser.active)
    assert followed.title == "Next page"
    await browser.close_tab(browser.active.target_id)


async def test_index_from_an_old_page_is_stale(browser, tab, pages) -> None:
    await actions.go_to_url(browser, tab, pages.url("actions_click.html"))
    state = await get_state(browser, tab)
    save = state.elements[named(state, "Save")]
    await actions.click(browser, tab, state.elements[named(state, "Next page")])
    assert await tab.title() == "Next page"
    with pytest.raises(ActionError, match=rf"\[{save.index}\] button 'Save' is no longer on the page"):
        await actions.click(browser, tab, save)
