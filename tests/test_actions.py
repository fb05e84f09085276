"""Clicks, hovering, keys and scrolling as trusted input in a real Chromium, proven by what the page's own
script recorded; and the clear errors for stale nodes, gone frames and closed tabs."""

from __future__ import annotations

import pytest
from actions_support import evaluate, events, frame_session, ref, wait_until

from tabpilot.browser import actions
from tabpilot.browser.browser import Browser
from tabpilot.browser.errors import ActionError, TabClosed

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]


async def test_click_is_trusted_and_scrolls_far_button_into_view(browser, tab, pages) -> None:
    await actions.go_to_url(browser, tab, pages.url("actions_click.html"))
    result = await actions.click(browser, tab, await ref(tab, "#save", name="Save"))
    assert result.endswith("button 'Save'.") and result.startswith("Clicked [")
    far = await ref(tab, "#far", name="Far button")
    assert await actions.click(browser, tab, far) == f"Clicked [{far.index}] button 'Far button'."
    clicks = await events(tab, "click")
    assert [(c["id"], c["trusted"]) for c in clicks] == [("save", True), ("far", True)]
    assert await evaluate(tab, "scrollY") > 1000  # it had to scroll to reach it


async def test_click_inside_open_shadow_root(browser, tab, pages) -> None:
    await actions.go_to_url(browser, tab, pages.url("actions_click.html"))
    await actions.click(browser, tab, await ref(tab, "#shadow-host >>> #shadow-button"))
    assert [(c["id"], c["trusted"]) for c in await events(tab, "click")] == [("shadow-button", True)]


async def test_click_covered_by_modal_is_retargeted_and_said(browser, tab, pages) -> None:
    await actions.go_to_url(browser, tab, pages.url("actions_modal.html"))
    result = await actions.click(browser, tab, await ref(tab, "#save", name="Save"))
    assert "is covered by div#overlay" in result and "landed on that" in result
    assert [c["id"] for c in await events(tab, "click")] == ["overlay"]


async def test_partly_covered_button_is_clicked_where_it_shows(browser, tab, pages) -> None:
    await actions.go_to_url(browser, tab, pages.url("actions_modal.html"))
    await evaluate(tab, "document.getElementById('overlay').remove()")
    result = await actions.click(browser, tab, await ref(tab, "#half", name="Partly hidden"))
    assert result.startswith("Clicked [") and "covered" not in result
    assert [c["id"] for c in await events(tab, "click")] == ["half"]


async def test_click_that_navigates_waits_for_next_page(browser, tab, pages) -> None:
    await actions.go_to_url(browser, tab, pages.url("actions_click.html"))
    await actions.click(browser, tab, await ref(tab, "#next"))
    assert await tab.title() == "Next page"
    assert await evaluate(tab, "document.readyState") == "complete"


async def test_link_to_new_tab_is_followed(browser, tab, pages) -> None:
    await actions.go_to_url(browser, tab, pages.url("actions_click.html"))
    result = await actions.click(browser, tab, await ref(tab, "#newtab", name="Open in a new tab"))
    new = browser.active
    assert new is not None and new is not tab
    number = browser.tab_number(new.target_id)
    assert f"opened a new tab (tab {number}: 'Next page'" in result and "now the active tab" in result
    assert await evaluate(new, "document.getElementById('query').textContent") == "?from=blank"
    await browser.close_tab(new.target_id)


async def test_alert_opened_by_click_is_accepted_and_reported(browser, tab, pages) -> None:
    await actions.go_to_url(browser, tab, pages.url("actions_click.html"))
    result = await actions.click(browser, tab, await ref(tab, "#alert", name="Alert me"))
    assert "an alert saying 'Saved!', which was accepted" in result
    assert [e["type"] for e in await events(tab) if e["type"] == "after-alert"] == ["after-alert"]


async def test_click_refuses_file_input_and_hints_select(browser, tab, pages) -> None:
    await actions.go_to_url(browser, tab, pages.url("actions_click.html"))
    with pytest.raises(ActionError, match="upload_file"):
        await actions.click(browser, tab, await ref(tab, "#file"))
    assert "select_option" in await actions.click(browser, tab, await ref(tab, "#pick"))


async def test_hover_fires_page_handler(browser, tab, pages) -> None:
    await actions.go_to_url(browser, tab, pages.url("actions_click.html"))
    result = await actions.hover(browser, tab, await ref(tab, "#hover-target", name="Hover me"))
    assert result == "The mouse is over " + result.split("over ", 1)[1] and "Hover me" in result
    assert await events(tab, "mouseenter") == [{"type": "mouseenter", "trusted": True}]
    assert await evaluate(tab, "document.getElementById('hover-target').className") == "hot"


async def test_send_keys_combinations_reach_page(browser, tab, pages) -> None:
    await actions.go_to_url(browser, tab, pages.url("actions_click.html"))
    await actions.click(browser, tab, await ref(tab, "#q"))
    await actions.input_text(browser, tab, await ref(tab, "#q"), "abc")
    result = await actions.send_keys(browser, tab, "Control+a Shift+Tab Escape ArrowDown")
    assert result == "Pressed Control+a, then Shift+Tab, then Escape, then ArrowDown."
    keys = [(k["key"], k["ctrl"], k["shift"], k["trusted"]) for k in await events(tab, "keydown")]
    assert ("a", True, False, True) in keys
    assert ("Tab", False, True, True) in keys
    assert ("Escape", False, False, True) in keys and ("ArrowDown", False, False, True) in keys
    # Control+a selected the field's text rather than typing an "a"; Shift+Tab moved focus backwards.
    assert await evaluate(tab, "document.getElementById('q').value") == "abc"
    assert await evaluate(tab, "document.activeElement.id") == "shadow-host"


async def test_enter_submits_form_and_waits_for_navigation(browser, tab, pages) -> None:
    await actions.go_to_url(browser, tab, pages.url("actions_click.html"))
    await actions.input_text(browser, tab, await ref(tab, "#q"), "tabpilot")
    await actions.send_keys(browser, tab, "Enter")
    assert await tab.title() == "Next page"
    assert await evaluate(tab, "document.getElementById('query').textContent") == "?q=tabpilot"


async def test_unknown_key_is_a_clear_error(browser, tab) -> None:
    with pytest.raises(ActionError, match="Unknown key 'Hyper'"):
        await actions.send_keys(browser, tab, "Control+Hyper")
    with pytest.raises(ActionError, match="not a modifier"):
        await actions.send_keys(browser, tab, "a+b")


async def test_cross_origin_iframe_click_and_typing(browser, tab, pages) -> None:
    inner = pages.url("actions_frame_inner.html", host="localhost")
    await actions.go_to_url(browser, tab, pages.url("actions_frames.html") + "?inner=" + inner)
    frame = await frame_session(browser, "localhost")
    owner = await ref(tab, "#cross")
    await evaluate(tab, "document.body.style.paddingTop = '900px'")  # the frame starts out of view
    await evaluate(frame, "document.body.style.paddingTop = '500px'")  # and the button is below the frame's fold
    button = await ref(frame, "#inner-button", frame_owner=owner, name="Inner button")
    assert await actions.click(browser, tab, button) == f"Clicked [{button.index}] button 'Inner button'."
    # Input for an out-of-process frame is routed through the browser process: it may land a moment
    # after the command returns, so wait for the frame's own record rather than read it at once.
    await wait_until(lambda: events(frame, "click"), timeout=5)
    clicks = await events(frame, "click")
    assert len(clicks) == 1 and clicks[0]["trusted"] is True
    box = await evaluate(frame, "document.getElementById('inner-button').getBoundingClientRect().toJSON()")
    assert await evaluate(frame, "scrollY") > 0  # the frame's own document had to scroll
    assert box["left"] <= clicks[0]["x"] <= box["right"] and box["top"] <= clicks[0]["y"] <= box["bottom"]
    result = await actions.input_text(browser, tab, await ref(frame, "#inner-input", frame_owner=owner), "über")
    assert result.endswith("its value is now 'über'.")
    inputs = await events(frame, "input")
    assert inputs[-1] == {"type": "input", "trusted": True, "value": "über"}


async def test_same_origin_iframe_click(browser, tab, pages) -> None:
    await actions.go_to_url(browser, tab, pages.url("actions_frames.html"))
    button = await ref(tab, "#same")  # reach into the same-process frame through contentDocument
    reply = await tab.session.send("Runtime.evaluate", {
        "expression": "document.getElementById('same').contentDocument.getElementById('inner-button')"})
    node = (await tab.session.send("DOM.describeNode", {"objectId": reply["result"]["objectId"]}))["node"]
    button.backend_node_id, button.tag = node["backendNodeId"], "button"
    await actions.click(browser, tab, button)
    clicks = await evaluate(tab, "document.getElementById('same').contentWindow.__events")
    assert [c["trusted"] for c in clicks] == [True]


async def test_removed_element_is_stale(browser, tab, pages) -> None:
    await actions.go_to_url(browser, tab, pages.url("actions_click.html"))
    vanish = await ref(tab, "#vanish", name="Vanish")
    await evaluate(tab, "document.getElementById('vanish').remove()")
    with pytest.raises(ActionError, match=r"\[\d+\] button 'Vanish' is no longer on the page"):
        await actions.click(browser, tab, vanish)
    # after a navigation the old node id means nothing
    await actions.go_to_url(browser, tab, pages.url("actions_next.html"))
    with pytest.raises(ActionError, match="no longer on the page"):
        await actions.hover(browser, tab, vanish)


async def test_bad_index_is_a_clear_error(browser, tab, pages) -> None:
    await actions.go_to_url(browser, tab, pages.url("actions_click.html"))
    elements = {1: await ref(tab, "#save")}
    assert actions.element_at(elements, 1) is elements[1]
    with pytest.raises(ActionError, match="no element with index 42"):
        actions.element_at(elements, 42)


async def test_gone_frame_is_a_clear_error(browser, tab, pages) -> None:
    inner = pages.url("actions_frame_inner.html", host="localhost")
    await actions.go_to_url(browser, tab, pages.url("actions_frames.html") + "?inner=" + inner)
    frame = await frame_session(browser, "localhost")
    button = await ref(frame, "#inner-button", frame_owner=await ref(tab, "#cross"))
    await evaluate(tab, "document.getElementById('cross').remove()")
    await wait_until(lambda: _target_gone(browser, "localhost"))
    with pytest.raises(ActionError, match=r"frame that held .* is gone"):
        await actions.click(browser, tab, button)


async def _target_gone(browser: Browser, url_part: str) -> bool:
    targets = (await browser.connection.root.send("Target.getTargets"))["targetInfos"]
    return not any(t["type"] == "iframe" and url_part in t["url"] for t in targets)


async def test_closed_tab_raises_tab_closed(browser, pages) -> None:
    doomed = await browser.new_tab()
    await actions.go_to_url(browser, doomed, pages.url("actions_click.html"))
    save = await ref(doomed, "#save")
    await browser.connection.root.send("Target.closeTarget", {"targetId": doomed.target_id})
    await wait_until(lambda: _closed(doomed))
    for action in (lambda: actions.click(browser, doomed, save), lambda: actions.send_keys(browser, doomed, "Enter"),
                   lambda: actions.scroll(browser, doomed, down=True)):
        with pytest.raises(TabClosed, match="has been closed"):
            await action()


async def _closed(tab) -> bool:
    return tab.closed


async def test_scroll_page_by_pages_and_pixels_and_report_the_rest(browser, tab, pages) -> None:
    await actions.go_to_url(browser, tab, pages.url("actions_scroll.html"))
    html = "document.documentElement"
    height, total = await evaluate(tab, f"[{html}.clientHeight, {html}.scrollHeight]")
    bottom = total - height
    result = await actions.scroll(browser, tab, down=True)
    assert await evaluate(tab, "scrollY") == height
    assert result == f"Scrolled the page down {height}px; {bottom - height}px more below."
    result = await actions.scroll(browser, tab, down=False, pixels=100)
    assert await evaluate(tab, "scrollY") == height - 100
    assert result == f"Scrolled the page up 100px; {height - 100}px more above."
    await actions.scroll(browser, tab, down=True, num_pages=50)
    assert await evaluate(tab, "scrollY") == bottom
    result = await actions.scroll(browser, tab, down=True)
    assert result == "The page is already at the bottom; there is nothing more to scroll down."
    await wait_until(lambda: _last_scroll_seen_at(tab, bottom))  # the page's own scroll handler saw it


async def _last_scroll_seen_at(tab, y: int) -> bool:
    scrolls = await evaluate(tab, "window.__scrolls")
    return bool(scrolls) and scrolls[-1]["y"] == y


async def test_scroll_container_and_horizontally(browser, tab, pages) -> None:
    await actions.go_to_url(browser, tab, pages.url("actions_scroll.html"))
    listing = await ref(tab, "#list")
    result = await actions.scroll(browser, tab, down=True, element=listing)
    assert result.endswith("ul down 200px; 600px more below.")
    assert await evaluate(tab, "document.getElementById('list').scrollTop") == 200
    item = await ref(tab, "#item2", name="Item 2")  # an item inside: its scrolling container moves
    result = await actions.scroll(browser, tab, down=True, pixels=50, element=item)
    assert "ul#list (the scrolling area around" in result
    assert await evaluate(tab, "document.getElementById('list').scrollTop") == 250
    wide = await ref(tab, "#wide")
    result = await actions.scroll_horizontally(browser, tab, right=True, pixels=500, element=wide)
    assert result.endswith("div down 500px; 700px more to the right.".replace("down", "right"))
    assert await evaluate(tab, "document.getElementById('wide').scrollLeft") == 500
    width = await evaluate(tab, "document.documentElement.clientWidth")
    result = await actions.scroll_horizontally(browser, tab, right=True)
    assert await evaluate(tab, "scrollX") == width
    assert result == f"Scrolled the page right {width}px; {3500 - 2 * width}px more to the right."
    result = await actions.scroll_horizontally(browser, tab, right=True)
    assert result == f"Scrolled the page right {3500 - 2 * width}px; now at the right edge."
    result = await actions.scroll(browser, tab, down=False, element=await ref(tab, "#static"))
    assert result == "The page is already at the top; there is nothing more to scroll up."
    with pytest.raises(ActionError, match="positive number of pixels"):
        await actions.scroll(browser, tab, down=True, pixels=-5)
