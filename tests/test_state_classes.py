"""Classes of page the model must read as a person would, each on a fixture page of its own in a real Chromium:
icon-only controls named, long values readable, tree/menu/spinner states, text quirks, and frames of another
origin on the same site. Each asserts the exact text the model gets and acts on what it offers (the page's
own script records the action)."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from actions_support import wait_until
from agent_support import browser_state, done, history_section, index_of, on_page
from state_support import line_of, node_property, open_page

from tabpilot.agent import Agent, AgentConfig
from tabpilot.browser import actions
from tabpilot.browser.browser import Browser
from tabpilot.browser.errors import ActionError
from tabpilot.browser.find import find_text
from tabpilot.browser.state import BrowserState, get_state
from tabpilot.browser.tab import Tab
from tabpilot.cdp import CDPError, CDPErrorKind
from tabpilot.cdp.connection import DEFAULT_TIMEOUT
from tabpilot.llm import LLMConfig
from tabpilot.llm.scripted import ScriptedLLMServer
from tabpilot.localfiles import LocalFiles

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

PAGES = Path(__file__).parent / "fixtures" / "pages"
EDGE_ABOVE = re.compile(r"^\[(top of page|\d+px above: .*)\]$")
EDGE_BELOW = re.compile(r"^\[(end of page|\d+px below: .*)\]$")


@pytest.fixture(scope="module")
def other_port() -> Iterator[LocalFiles]:
    """The fixture pages again on another port of 127.0.0.1: another origin of the same site."""
    with LocalFiles(PAGES) as server:
        yield server


def body(state: BrowserState) -> list[str]:
    """The page part of the text: the lines between the edge lines above and below it."""
    lines = state.text.splitlines()
    start = next(i for i, line in enumerate(lines) if EDGE_ABOVE.match(line))
    end = max(i for i, line in enumerate(lines) if EDGE_BELOW.match(line))
    return lines[start + 1:end]


async def test_same_site_frame_on_another_port_is_offered_and_used(browser: Browser, pages, other_port) -> None:
    tab = await open_page(browser, pages.url(f"eyes_frame_outer.html?port={other_port.port}"))
    await tab.settle()
    state = await get_state(browser, tab)
    assert body(state) == [
        "# Shop",
        "[1]<button>Outer button",
        "Payment on another port",
        "[2]<input placeholder=\"Card number\">",
        "[3]<button>Pay now",
        "unpaid",
    ], state.text
    card, pay = state.elements[2], state.elements[3]
    assert await node_property(card, "location.port") == str(other_port.port)
    await actions.input_text(browser, tab, card, "4242 4242")
    await actions.click(browser, tab, pay)
    assert await node_property(pay, "window.clicks") == ["pay-now"]
    again = await get_state(browser, tab, state)
    assert "paid 4242 4242" in again.text and "[3]<button>Pay now" in again.text, again.text
    assert await node_property(again.elements[2], "this.value") == "4242 4242"
    # A new document (the page reloaded): new worlds, the same offer, and it works again.
    await actions.go_to_url(browser, tab, pages.url(f"eyes_frame_outer.html?port={other_port.port}"))
    reloaded = await get_state(browser, tab, again)
    assert body(reloaded) == body(state), reloaded.text
    await actions.click(browser, tab, reloaded.elements[3])
    assert await node_property(reloaded.elements[3], "window.clicks") == ["pay-now"]
    await browser.close_tab(tab.target_id)


async def test_a_cross_site_frame_and_another_ports_frame_are_both_read_at_every_step(browser: Browser, pages,
                                                                                      other_port) -> None:
    # The cross-site frame is read through a target of its own; the other port's frame is in this tab's
    # process, where only the frame tree shows it. Later reads of a page with a cross-site frame alone do not
    # ask for the tree (tests/test_state_first_look.py); with both, every read still reads both.
    tab = await open_page(browser, pages.url(f"state_mixed_frames.html?port={other_port.port}"))
    await tab.settle()
    state: BrowserState | None = None
    for step in range(3):
        state = await get_state(browser, tab, state)
        assert "Frame cross" in state.text and "Payment on another port" in state.text, (step, state.text)
    assert state is not None
    pay = next(ref for ref in state.elements.values() if ref.name == "Pay now")
    cross = next(ref for ref in state.elements.values() if ref.name == "Pay cross")
    await actions.click(browser, tab, pay)
    await actions.click(browser, tab, cross)
    assert await node_property(pay, "window.clicks") == ["pay-now"]
    assert await node_property(cross, "window.paid") is True
    await browser.close_tab(tab.target_id)


async def test_icon_only_controls_are_named_in_each_style(browser: Browser, pages) -> None:
    tab = await open_page(browser, pages.url("eyes_feed.html"))
    state = await get_state(browser, tab)
    assert body(state) == [
        "# Home",
        "Ada: Shipping the new release today.",
        "[1]<span icon=reply>",  # only its class names say what it is: a guess
        "[2]<span role=button>Like this post",  # aria-labelledby, pointing at a hidden element
        '[3]<button title="Share post">',
        "[4]<button>More actions",  # an SVG <title>
        "Grace: Found the bug.",
        "[5]<span>Repost",  # data-tooltip
        "[6]<a>Bookmark",  # data-original-title
        "[7]<button>Pin to profile",  # data-title
        "[8]<button>Add photo",  # an image's alt
        "Linus: Merged.",
        "[9]<button>star",  # icon-font ligatures are text already
        "[10]<span role=button>send",
        "[11]<button icon=trash>",  # fa fa-trash on its only child
        "[12]<span icon=send>",  # btn btn-send
        "[13]<button>Post menu",  # aria-labelledby before the icon font's ligature (more_vert)
        "none",
    ], state.text
    assert await actions.click(browser, tab, state.elements[4]) == "Clicked [4] button 'More actions'."
    assert await actions.click(browser, tab, state.elements[11]) == "Clicked [11] button 'trash'."
    await actions.click(browser, tab, state.elements[1])
    await actions.click(browser, tab, state.elements[5])
    assert await actions.click(browser, tab, state.elements[13]) == "Clicked [13] button 'Post menu'."
    assert await tab.evaluate("window.clicks") == ["p1-more", "p3-trash", "p1-reply", "p2-retweet", "p3-menu"]
    again = await get_state(browser, tab, state)  # a second read names them the same way
    assert body(again)[:-1] == body(state)[:-1]
    assert "clicked p1-more, p3-trash, p1-reply, p2-retweet, p3-menu" in again.text
    await browser.close_tab(tab.target_id)


async def test_mail_client_reads_as_a_person_sees_it(browser: Browser, pages) -> None:
    tab = await open_page(browser, pages.url("eyes_mail.html"))
    state = await get_state(browser, tab)
    lines = body(state)
    assert lines[:14] == [
        '[1]<div scrollable="0px above, 119px below">',
        "\t[2]<button>Message one",
        "\t[3]<button>Message two",
        "\t[4]<button>Message three",
        "\t[5]<button>Message four",
        "[6]<span title=Send>",
        "[7]<span icon=star>",
        "[8]<span>Move to trash",
        'Enter "Kanesha" in the To field, then press Send.',  # no space the page does not have
        "From Ann 2 h ago",  # but spans a margin sets apart are two words
        'Read "[9]<a>the terms</a>" first.',
        "[10]<input type=checkbox checked=false>Remember me",  # the label on its checkbox's line
        "[11]<input type=checkbox checked=false>Mark as urgent",
        "[12]<input placeholder=To>",
    ], state.text
    await actions.click(browser, tab, state.elements[10])
    await actions.click(browser, tab, state.elements[8])
    assert await tab.evaluate("window.clicks") == ["remember=true", "t-trash"]

    # The inbox scrolled to its end: its rows out of view are not "above" on a page that is not scrolled.
    await actions.scroll(browser, tab, down=True, pixels=500, element=state.elements[1])
    scrolled = await get_state(browser, tab, state)
    assert body(scrolled)[:5] == [
        '[1]<div scrollable="119px above, 0px below">',
        "\t[15]<button>Message five",
        "\t[16]<button>Message six",
        "\t[17]<button>Message seven",
        "\t[18]<button>Message eight",
    ], scrolled.text
    assert "[top of page]" in scrolled.text.splitlines() and scrolled.elements_above == 0
    await actions.click(browser, tab, scrolled.elements[18])
    assert (await tab.evaluate("window.clicks"))[-1] == "m8"
    await browser.close_tab(tab.target_id)


async def test_long_field_values_are_shown_and_read_whole_but_never_a_password(browser: Browser, pages) -> None:
    tab = await open_page(browser, pages.url("eyes_mail.html"))
    state = await get_state(browser, tab)
    area = state.elements[14]
    line = line_of(state, 14)
    # The first 500 characters, the length of the whole, and that the box scrolls.
    assert line.startswith('[14]<textarea name=body value="word1 word2 word3 ') and " word72 word…" in line
    assert line.endswith('word…" length=858 scrollable="0px above, 160px below">'), line
    assert "finale" not in state.text
    whole = await actions.read_text(browser, tab, area)
    assert whole.startswith("The text of [14] textarea (858 characters):\nword1 word2 ")
    assert whole.endswith("word119 word120 finale")
    await actions.scroll(browser, tab, down=True, pixels=100, element=area)  # it scrolls like any list
    assert line_of(await get_state(browser, tab, state), 14).endswith('scrollable="100px above, 60px below">')

    await actions.input_text(browser, tab, state.elements[13], "Sw0rdf1sh-Zebra")
    with pytest.raises(ActionError, match="password field: its value is never shown"):
        await actions.read_text(browser, tab, state.elements[13])
    # A "show password" button makes it a text field: still a password, also to the page text's reader.
    await tab.evaluate("document.getElementById('secret').type = 'text';"
                       "document.getElementById('to').value = 'copy: ' + document.getElementById('secret').value")
    shown = await get_state(browser, tab, state)
    with pytest.raises(ActionError, match="password field"):
        await actions.read_text(browser, tab, shown.elements[13])
    assert await actions.read_text(browser, tab, shown.elements[12]) == \
        "The text of [12] input 'To' (23 characters):\ncopy: [password hidden]"
    await actions.input_text(browser, tab, shown.elements[14], "short now")
    short = await get_state(browser, tab, shown)
    assert line_of(short, 14) == "[14]<textarea name=body value=\"short now\">"
    await browser.close_tab(tab.target_id)


async def test_tree_menu_spinner_and_field_states(browser: Browser, pages) -> None:
    tab = await open_page(browser, pages.url("eyes_tree.html"))
    state = await get_state(browser, tab)
    assert body(state) == [
        "## Files",
        "[1]<li role=treeitem expanded=true>src",  # an open folder: its items nested in it
        "\t[2]<li role=treeitem selected=true>app.py",
        "\t[3]<li role=treeitem expanded=false>lib",  # a closed one
        "[4]<li role=treeitem>README.md",
        "[5]<div role=treeitem expanded=true>docs",  # a flat tree that says each row's aria-level
        "\t[6]<div role=treeitem>guide.md",
        "[7]<summary expanded=false>Advanced",
        "[8]<button pressed=true>Bold",
        "[9]<li role=menuitem expanded=false haspopup>File",
        "[10]<li role=menuitem>Help",
        "[11]<input type=number name=qty value=2 min=1 max=9>",
        "[12]<span role=spinbutton aria-label=Guests value=3 min=0 max=6>3",
        '[13]<span aria-label="More guests">',
        "[14]<input type=email name=email value=not-an-email required invalid>",
        '[15]<input type=email placeholder="Backup email">',
        "[16]<button disabled>Go",
    ], state.text
    await actions.click(browser, tab, state.elements[3])  # open the folder
    await actions.click(browser, tab, state.elements[9])  # open the menu
    opened = await get_state(browser, tab, state)
    assert "\t[3]<li role=treeitem expanded=true>lib" in opened.text.splitlines()
    assert "[9]<li role=menuitem expanded=true haspopup>File" in opened.text.splitlines()
    recent = next(i for i, ref in opened.elements.items() if ref.name == "Open recent")
    assert line_of(opened, recent) == f"*[{recent}]<li role=menuitem expanded=false haspopup>Open recent"
    await actions.click(browser, tab, opened.elements[recent])
    # Spinners: the named up button, and the arrow keys on the spinbutton and on the number field.
    await actions.click(browser, tab, opened.elements[13])
    await actions.click(browser, tab, opened.elements[12])
    await actions.send_keys(browser, tab, "ArrowUp")
    await actions.click(browser, tab, opened.elements[11])
    await actions.send_keys(browser, tab, "ArrowUp")
    assert await tab.evaluate("window.clicks") == ["f-lib", "menu-file", "menu-recent", "spin=4", "spin=5", "qty=3"]
    last = await get_state(browser, tab, opened)
    assert "[11]<input type=number name=qty value=3 min=1 max=9>" in last.text.splitlines()
    assert "[12]<span role=spinbutton aria-label=Guests value=5 min=0 max=6>5" in last.text.splitlines()
    # A field the browser finds invalid once it was used says what the browser says is wrong.
    await actions.input_text(browser, tab, last.elements[15], "abc")
    await actions.click(browser, tab, last.elements[8])
    message = await node_property(last.elements[15], "this.validationMessage")  # in the browser's language
    assert message  # e.g. "Please include an '@' in the email address. 'abc' is missing an '@'."
    assert line_of(await get_state(browser, tab, last), 15) == (
        f"[15]<input type=email placeholder=\"Backup email\" value=abc invalid=\"{message}\">")
    await browser.close_tab(tab.target_id)


async def test_a_model_reads_a_long_value_whole_and_clicks_an_icon_by_its_name(browser: Browser, pages) -> None:
    """Through the agent loop, its model a scripted OpenAI-compatible server: the system prompt explains
    the page text's notation, read_text hands over what the page text cut short."""
    tab = await open_page(browser, pages.url("eyes_mail.html"))
    replies = [
        on_page(lambda b: {"read_text": {"index": index_of(b, "<textarea name=body", "length=858")}}),
        on_page(lambda b: {"click_element_by_index": {"index": index_of(b, "<span>Move to trash")}}),
        done("The last word is finale."),
    ]
    with ScriptedLLMServer(replies) as server:
        agent = Agent(browser, LLMConfig(base_url=server.base_url, model="scripted", api_key="sk-test-not-real-0000",
                                         timeout=5.0, max_retries=1), AgentConfig(step_delay=0))
        result = await agent.execute("What is the last word of the message body? Then trash the message.")
    assert result.success and result.data == "The last word is finale."
    assert "read_text" in json.dumps(server.requests[0]["tools"])
    assert "icon=word is only a guess" in server.requests[0]["messages"][0]["content"]
    assert "word119 word120 finale" in history_section(server.requests[1])
    assert await tab.evaluate("window.clicks") == ["t-trash"]
    await browser.close_tab(tab.target_id)


async def test_each_checkbox_and_radio_shares_one_line_with_its_own_label(browser: Browser, pages) -> None:
    tab = await open_page(browser, pages.url("eyes_labels.html"))
    state = await get_state(browser, tab)
    assert body(state) == [
        "## Consent",
        "[1]<input type=checkbox checked=false>Necessary",  # a wrapping label, text after the box
        "[2]<input type=checkbox checked=false>Analytics",
        "[3]<input type=checkbox checked=false>Newsletter",  # text before the box
        "[4]<input type=checkbox checked=false>Remember me",  # label[for] further down
        "between",
        "Elsewhere:",
        "[5]<input type=checkbox checked=false>Weekly digest",  # a text node after the box, no label
        "[6]<input type=checkbox checked=false>Monthly digest",
        "[7]<input type=radio name=size checked=false>Small",  # a flex row of radios and label[for]
        "[8]<input type=radio name=size checked=false>Medium",
        "[9]<input type=checkbox checked=false>Milk",  # in list items
        "[10]<input type=checkbox checked=false>Bread",
        "[11]<input type=checkbox checked=true disabled>Cookies",  # a disabled box: its label is not clickable
        "[12]<input type=checkbox checked=false>Ads",
        "[13]<button>Save",
    ], state.text
    for index in range(1, 11):
        await actions.click(browser, tab, state.elements[index])
    await actions.click(browser, tab, state.elements[12])
    assert await tab.evaluate("window.changed") == [
        "after1", "after2", "before", "for1", "sibling1", "sibling2", "s", "m", "li1", "li2", "ads"]
    # The second look reads the same lines, ticked.
    again = await get_state(browser, tab, state)
    assert line_of(again, 5) == "[5]<input type=checkbox checked=true>Weekly digest"
    assert line_of(again, 8) == "[8]<input type=radio name=size checked=true>Medium"
    assert line_of(again, 7) == "[7]<input type=radio name=size checked=false>Small"
    await browser.close_tab(tab.target_id)


async def test_a_bare_wrapper_around_one_control_is_offered_once_as_that_control(browser: Browser, pages) -> None:
    tab = await open_page(browser, pages.url("eyes_wrappers.html"))
    state = await get_state(browser, tab)
    assert body(state) == [
        "[1]<a>Home",  # <li role=menuitem> around it: no line with no name
        "[2]<a>News",
        "[3]<button>Subscribe",  # <a href> around it
        "[4]<a>Read the story",  # a clickable card around one link
        "[5]<div>",  # a card with words of its own besides its link
        "\t[6]<a>More",
        "\tFour minutes",
        "[7]<li role=menuitem aria-label=\"Settings menu\">",  # a wrapper with a name of its own
        "[8]<a>Settings",
        "[9]<div>",  # two controls inside
        "\t[10]<button>Like",
        "\t[11]<button>Share",
    ], state.text
    for index in (1, 3, 4):
        await actions.click(browser, tab, state.elements[index])
    # The click on the control inside reaches the wrapper's own listener too.
    assert await tab.evaluate("window.clicked") == ["home", "subscribe", "card1", "story"]
    assert await tab.evaluate("location.hash") == "#story"
    await browser.close_tab(tab.target_id)


async def test_icons_drawn_by_svg_sprites_images_and_style_sheets_are_named(browser: Browser, pages) -> None:
    tab = await open_page(browser, pages.url("eyes_icons.html"))
    state = await get_state(browser, tab)
    assert body(state)[:16] == [
        "# Icons",
        "[1]<button icon=search>",  # <use href="#icon-search">: the sprite symbol's id, a guess
        "[2]<button>Close dialog",  # the <title> of the symbol <use> draws
        '[3]<button icon="settings gear">',  # an external sprite's symbol id
        "[4]<a icon=cart>",  # classes on the <svg>
        "[5]<button icon=arrow>",  # a symbol titled with its file's name ("arrow-left"): its id's words, a guess
        "[6]<button icon=close>",  # its words are display:none at this width: btn-close says it
        "[7]<button icon=menu>",  # icon-menu ("menu" no longer a word that says nothing)
        "[8]<a href=/badges>Ship it badge",  # an image's title
        '[9]<a icon="acme logo" href=/>',  # the image's file name, a guess
        "[10]<a href=/share/twitter?src=post>",  # a hash for a file name: nothing to guess, the address shows
        '[11]<button icon="trash can">',
        "[12]<button>Read more",  # ::after { content: "Read more" }
        "[13]<a>Next page",  # a ::before inside it
        "[14]<button icon=gear>",  # an icon font's glyph is no word: its class names guess
        "[15]<button>Print",  # content: attr(data-label)
    ], state.text
    assert state.elements[10].name == "twitter"  # the address's last word names it where its line is not read
    for index in (1, 2, 6, 10, 12, 14):
        await actions.click(browser, tab, state.elements[index])
    assert await actions.click(browser, tab, state.elements[8]) == "Clicked [8] a 'Ship it badge'."
    assert await tab.evaluate("window.clicks") == ["svg-search", "svg-close", "hidden-close", "img-href", "css-more",
                                                   "css-glyph", "img-title"]
    await browser.close_tab(tab.target_id)


async def test_a_card_with_a_photo_besides_its_one_control_keeps_its_own_line(browser: Browser, pages) -> None:
    tab = await open_page(browser, pages.url("eyes_icons.html"))
    state = await get_state(browser, tab)
    assert body(state)[16:] == [
        '[16]<div icon="red runner">',  # its photo's file name; the heart inside is the button's, not its name
        "\t[17]<button aria-label=Save>\u2661",
        "[18]<div>",  # nothing names it, yet a click on its photo does what the heart does not
        "\t[19]<button aria-label=Save>\u2661",
        "[20]<div>Blue boot",  # its photo's alt; the button's "Save" is not the card's word
        "\t[21]<button>Save",
        "[22]<a>Read the story",  # a card around one link and nothing else: offered once
        "[23]<a>Settings",  # a chevron smaller than the link beside it is no picture of its own
        '[24]<a title="Help center">Help',  # the link's title is its own, not its menu item's name
        "none",
    ], state.text
    for index in range(16, 25):
        await actions.click(browser, tab, state.elements[index])
    # The card opens where its photo is; the heart saves and the card does not open; the link reaches its card.
    assert await tab.evaluate("window.clicks") == [
        "card-photo", "save-photo", "card-hash", "save-hash", "card-alt", "save-alt", "story", "card-link",
        "settings", "item", "help", "item-help"]
    await browser.close_tab(tab.target_id)


async def test_a_field_named_by_a_label_drawn_for_screen_readers_only_carries_it(browser: Browser, pages) -> None:
    tab = await open_page(browser, pages.url("eyes_field_labels.html"))
    state = await get_state(browser, tab)
    assert body(state) == [
        "[1]<input type=search name=s>Search this site",  # label[for] cut to 1px
        "[2]<button>Go",
        "[3]<input type=email name=e>Email address",  # a visually hidden span in a wrapping label: read once
        "[4]<input>ZIP code",  # aria-labelledby a hidden element
        "[5]<select name=c value=Chile options=Chile|Peru>Country",
        "[6]<input name=q>Search the news",  # a label inside a visually hidden box
        "Full name",  # a label a person sees stays where it stands
        "[7]<input name=n>",
        "Phone",  # drawn out of a box of no height
        "[8]<input name=p>",
        "### Billing note",
        "[9]<textarea>",
        "[10]<input placeholder=\"City or town\">",  # a placeholder names it already
    ], state.text
    for index, text in ((1, "shoes"), (3, "ann@example.com"), (4, "8320000"), (6, "storms")):
        await actions.input_text(browser, tab, state.elements[index], text)
    assert await tab.evaluate("window.typed") == {"s": "shoes", "email": "ann@example.com", "zip": "8320000",
                                                  "q": "storms"}
    await browser.close_tab(tab.target_id)


@pytest.mark.parametrize("snapshot", [False, True], ids=["walker", "snapshot"])
async def test_characters_drawn_as_nothing_are_not_read_and_the_named_control_is_used(
        browser: Browser, pages, snapshot: bool) -> None:
    # Found on real pages (a news site's soft hyphens): the model read "in\u00adfor\u00adma\u00adtion", a person reads
    # "information". Soft hyphens, zero-width spaces, word joiners and BOMs go; the joiners of an emoji stay.
    from tabpilot.browser.state import build_state, read_page

    tab = await open_page(browser, pages.url("state_invisible_characters.html"))
    state = build_state(await read_page(browser, tab, snapshot=snapshot), None)
    assert body(state) == [
        "# Account information",
        "Your subscription renews online every monthly.",
        "[1]<button>Renew now",
        "Family: \U0001F468\u200d\U0001F469\u200d\U0001F467 stays drawn as one.",
    ], state.text
    assert state.title == "Account information", state.title  # the title too
    await actions.click(browser, tab, state.elements[1])
    assert await tab.evaluate("window.renewed") is True
    await browser.close_tab(tab.target_id)


async def test_a_model_finds_words_far_down_a_long_page_in_one_step(browser: Browser, pages) -> None:
    """A 3,000-row list: scrolling to row 2718 took dozens of steps (a new user's trial on the Python docs). find_text
    brings the words into the page text the model reads next; the second place of words shown twice; words only in
    an open shadow root; words hidden from people are not found."""
    tab = await open_page(browser, pages.url("eyes_long.html"))
    replies = [
        on_page(lambda b: {"find_text": {"text": "row  2718"}}),
        on_page(lambda b: {"find_text": {"text": "the needle", "occurrence": 2}}),
        on_page(lambda b: {"find_text": {"text": "shadow answer"}}),
        on_page(lambda b: {"find_text": {"text": "hidden needle"}}),
        on_page(lambda b: {"find_text": {"text": "the needle", "occurrence": 3}}),
        done("8154 EUR"),
    ]
    with ScriptedLLMServer(replies) as server:
        agent = Agent(browser, LLMConfig(base_url=server.base_url, model="scripted", api_key="sk-test-not-real-0000",
                                         timeout=5.0, max_retries=1), AgentConfig(step_delay=0))
        result = await agent.execute("What does row 2718 cost?")
    assert result.success, result
    pages_read = [browser_state(r) for r in server.requests]
    assert "Row 2718 | 8154 EUR" not in pages_read[0]
    assert "Row 2718 | 8154 EUR" in pages_read[1].splitlines()
    assert "Scrolled to place 1 of the 1 place" in history_section(server.requests[1])
    assert "Row 2000 | 6000 EUR see the needle" in pages_read[2].splitlines()
    assert "place 2 of the 2 places" in history_section(server.requests[2])
    assert "Shadow answer 42" in pages_read[3].splitlines()
    assert 'No text on this page shows "hidden needle"' in history_section(server.requests[4])
    assert "Only 2 place(s) on this page show \"the needle\"" in history_section(server.requests[5])
    await browser.close_tab(tab.target_id)


async def meters_show(tab: Tab, password: str) -> bool:
    """Both strength meters of privacy_echo_frames.html show `password`: the same origin's and the other site's."""
    same = await tab.evaluate("document.getElementById('same').contentDocument.getElementById('echo').textContent")
    other = await in_other_sites_frames(tab, "document.getElementById('echo').textContent")
    return same == password and other == [password]


async def test_find_text_tells_nothing_of_a_password_a_frame_shows(browser: Browser, pages) -> None:
    """A strength meter in a frame (one of this origin, one of another site) shows the password typed in the page:
    each document was searched with its own secret fields' values hidden only, so 'Strength of C' was found in the
    frames and 'Strength of D' not. Every document is searched with the page's secret values hidden; twice, after
    the page's password changed."""
    tab = await open_page(browser, pages.url("privacy_echo_frames.html"))
    for password in ("Correct-Horse-42", "Another-Secret-7"):
        if password != "Correct-Horse-42":
            await tab.evaluate(f"pw.value = {password!r}; pw.dispatchEvent(new Event('input'))")
        await wait_until(lambda password=password: meters_show(tab, password), timeout=20)
        for guess in (f"Strength of {password[0]}", f"Strength of {password[:9]}", password, f"{password[-4:]}: weak"):
            said = await find_text(tab, guess)
            assert said.startswith("No text on this page shows"), (guess, said)
        said = await find_text(tab, "Strength of", 2)  # the meters' own words, in both frames
        assert said.startswith("Scrolled to place 2 of the 2 places"), said
    await browser.close_tab(tab.target_id)


async def test_the_page_text_hides_a_password_a_frame_of_another_site_shows(browser: Browser, pages) -> None:
    """The page text the model reads hid the password the page echoes into a frame of its own origin ("Strength of
    [password hidden]"), not into one of another site, read by that frame's own walker, which knows no password field:
    "Strength of Correct-Horse-42: weak" (an attack run). Both meters read hidden; twice, after the password changed,
    the second time a later step of the same document."""
    tab = await open_page(browser, pages.url("privacy_echo_frames.html"))
    for password in ("Correct-Horse-42", "Another-Secret-7"):
        if password != "Correct-Horse-42":
            await tab.evaluate(f"pw.value = {password!r}; pw.dispatchEvent(new Event('input'))")
        await wait_until(lambda password=password: meters_show(tab, password), timeout=20)
        text = (await get_state(browser, tab)).text
        assert password not in text and password[:9] not in text, text
        assert text.count("Strength of [password hidden]: weak") == 2, text  # each meter read
        assert "meter of the same frame" in text and "meter of the other frame" in text, text
    await browser.close_tab(tab.target_id)


async def test_a_frame_of_another_site_cannot_hide_the_pages_words_with_a_password_field(browser: Browser,
                                                                                       pages) -> None:
    """The password values a frame's walker hid are hidden in every document of the reading: a frame of another site
    (an ad) with a password field holding the page's own words hid them from the model in the page, and find_text said
    no text on the page shows them."""
    tab = await open_page(browser, pages.url("privacy_frame_hides.html"))
    await wait_until(lambda: other_sites_loaded(tab, 1), timeout=20)
    for attempt in ("first", "again"):
        text = (await get_state(browser, tab)).text
        assert "ships from abroad and charges customs on delivery" in text, (attempt, text)
        assert "Buy more socks" in text, text
        said = await find_text(tab, "charges customs on delivery")
        assert said.startswith("Scrolled to place 1 of the 1 place on this page"), (attempt, said)
    await browser.close_tab(tab.target_id)


async def in_other_sites_frames(tab: Tab, expression: str, timeout: float = DEFAULT_TIMEOUT) -> list[object]:
    """`expression`'s value in each frame of another site (through its own session), or the kind of the error it got
    instead (CDPErrorKind.TIMEOUT: the frame answers nothing)."""
    await tab.track_frames()
    answers: list[object] = []
    for frame in list(tab.frames.values()):
        try:
            reply = await frame.session.send("Runtime.evaluate", {"expression": expression, "returnByValue": True},
                                             timeout=timeout)
        except CDPError as exc:
            answers.append(exc.kind)
            continue
        answers.append(reply.get("result", {}).get("value"))
    return answers


async def other_sites_loaded(tab: Tab, count: int) -> bool:
    """`count` frames of other sites have their page's words written (their session's own script ran)."""
    written = await in_other_sites_frames(tab, "!!(document.getElementById('far') || {}).textContent")
    return written.count(True) >= count


async def test_find_text_counts_places_in_reading_order_across_frames_and_shadow_roots(browser: Browser,
                                                                                       pages) -> None:
    """find_text searched the top document and its open shadow roots only, the roots' text after all of the
    document's: words in a frame (the same origin's, another origin of the same site, another site's), or in a
    shadow root inside another, were never found, and a slot's words were counted where the host's child is written,
    not where it is shown. Now the nine places of "compass note" are counted as a person reads them, two frames side
    by side as they stand (the first attaches last), a hidden frame's copy not at all; each one asked for is in the
    page text the model reads next, a frame's far down scrolled to inside the frame."""
    with LocalFiles(PAGES) as same_site:  # another port of 127.0.0.1: another origin, the same site and process
        tab = await open_page(browser, pages.url(f"eyes_find.html?port={same_site.port}"))
        await wait_until(lambda: other_sites_loaded(tab, 3), timeout=20)
        wanted = {2: "A same-site frame: compass note two.", 3: "Far down another origin: compass note three.",
                  5: "slotted compass note five", 6: "Deep compass note six.",
                  7: "Far down another origin: compass note seven.", 8: "Far down another origin: compass note eight.",
                  9: "The last compass note closes the manual."}
        replies = [on_page(lambda b, n=n: {"find_text": {"text": "Compass  NOTE", "occurrence": n}}) for n in wanted]
        with ScriptedLLMServer([*replies, done("found")]) as server:
            agent = Agent(browser, LLMConfig(base_url=server.base_url, model="scripted",
                                             api_key="sk-test-not-real-0000", timeout=5.0, max_retries=1),
                          AgentConfig(step_delay=0))
            result = await agent.execute("Find every compass note.")
    assert result.success, result
    pages_read = [browser_state(r) for r in server.requests]
    assert not any(line in pages_read[0].splitlines() for line in wanted.values()), pages_read[0]
    for step, (n, line) in enumerate(wanted.items(), start=1):
        assert f"Scrolled to place {n} of the 9 places" in history_section(server.requests[step]), n
        assert line in pages_read[step].splitlines(), (n, pages_read[step])
    assert wanted[8] not in pages_read[list(wanted).index(7) + 1].splitlines()  # the first frame, not the first to come
    await browser.close_tab(tab.target_id)


async def test_find_text_tells_nothing_of_a_password_the_page_shows_elsewhere(browser: Browser, pages) -> None:
    """The page text the model reads hides a password field's value wherever the page shows it too (a strength meter:
    'Strength of [password hidden]'), but find_text searched the page's own text: 'Strength of C' was found and
    'Strength of D' not, so the model could tell the password a letter at a time. Now a search sees the page as the
    model does; the page's other words are found as before. Twice: after the page's script changed the password."""
    tab = await open_page(browser, pages.url("privacy_echo.html"))
    for password in ("Correct-Horse-42", "Another-Secret-7"):
        if password != "Correct-Horse-42":
            await tab.evaluate(f"pw.value = {password!r}; pw.dispatchEvent(new Event('input'))")
        assert await tab.evaluate("document.getElementById('echo').textContent") == password  # the page shows it
        for guess in (f"Strength of {password[0]}", f"Strength of {password[:9]}", password, password.lower(),
                      f"{password[-4:]}: weak", "Strength of X"):
            said = await find_text(tab, guess)
            assert said.startswith("No text on this page shows"), (guess, said)
        assert (await find_text(tab, "Strength of")).startswith("Scrolled to place 1 of the 1 place")
        assert (await find_text(tab, ": weak")).startswith("Scrolled to place 1 of the 1 place")
    await browser.close_tab(tab.target_id)


async def test_find_text_and_the_page_text_keep_every_masked_fields_secret(browser: Browser, pages) -> None:
    """A field the page masks as a password (-webkit-text-security) is a secret to the walker whatever its kind, but
    find_text kept only an <input>'s value secret: a masked textarea's value, shown again in the page's preview, and a
    masked contenteditable's own text were found ('Scrolled to place 1'), so the model could guess them a letter at a
    time. Every kind is a secret to the search too, and to the page text; the page's other words are found as before.
    Twice: after the page's script changed each secret."""
    tab = await open_page(browser, pages.url("privacy_masked_kinds.html"))
    for secrets in (("Pin-Input-5521", "Words-Area-7734", "Phrase-Edit-9906"),
                    ("Pin-Input-0173", "Words-Area-2268", "Phrase-Edit-4415")):
        if secrets[0] != "Pin-Input-5521":
            await tab.evaluate(f"pin.value = {secrets[0]!r}; words.value = {secrets[1]!r};"
                               f" phrase.textContent = {secrets[2]!r}; pin.dispatchEvent(new Event('input'))")
        assert await tab.evaluate("document.getElementById('preview').textContent") == " / ".join(secrets)
        for secret in secrets:
            for guess in (secret, secret[:8], secret.lower()):
                said = await find_text(tab, guess)
                assert said.startswith("No text on this page shows"), (guess, said)
        state = await get_state(browser, tab)
        assert not any(secret in state.text or secret[:8] in state.text for secret in secrets), state.text
        # read_text of each field, and a script reading them and the form around them, say none of them either
        fields = [ref for ref in state.elements.values() if ref.tag in ("input", "textarea", "div")]
        assert len(fields) == 3, fields
        for ref in fields:
            try:
                said = await actions.read_text(browser, tab, ref)
            except ActionError as refused:
                said = str(refused)
            assert not any(secret in said or secret[:8] in said for secret in secrets), (ref, said)
        said = await actions.execute_javascript(browser, tab, "[pin.value, words.value, phrase.textContent,"
                                                " document.querySelector('form').innerText].join(' | ')")
        assert not any(secret in said or secret[:8] in said for secret in secrets), said
        assert (await find_text(tab, "Preview:")).startswith("Scrolled to place 1 of the 1 place")
        assert (await find_text(tab, "card ends in 4242")).startswith("Scrolled to place 1 of the 1 place")
    await browser.close_tab(tab.target_id)


async def frames_hung(tab: Tab, count: int) -> bool:
    """`count` frames of other sites answer nothing any more (their renderer is busy for good)."""
    return (await in_other_sites_frames(tab, "1", timeout=1.0)).count(CDPErrorKind.TIMEOUT) >= count


async def test_find_text_answers_in_its_time_when_other_sites_frames_hang(browser: Browser, pages) -> None:
    """A page whose other-site frames hang their renderer: find_text waited 30 s for each of them, one after another
    (four frames: more than 110 s for one search, while the model and the person waited). The frames are searched at
    once, within one search's time; the page's own words are counted and the far one shown, the frames said not to
    have answered. (Once: each search of such a page takes its whole time, 30 s.)"""
    tab = await open_page(browser, pages.url("hostile_busy_frames.html"))
    await wait_until(lambda: frames_hung(tab, 4), timeout=60)
    said = await asyncio.wait_for(find_text(tab, "NEEDLE", 2), 100)  # 4 x 30 s without the fix
    assert said.startswith("Scrolled to place 2 of the 2 places"), said
    assert "(4 frame(s) of the page did not answer and were not searched)" in said, said
    assert await tab.evaluate("(() => { const r = document.getElementById('last').getBoundingClientRect();"
                              " return r.top >= 0 && r.bottom <= innerHeight; })()")  # far down: brought into view
    await browser.close_tab(tab.target_id)
