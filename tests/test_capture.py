"""capture.js in a real page (issue 10): injected over CDP into an isolated world of every frame, as
`tabpilot run` does, and driven by a person: trusted input from a second CDP connection, which nothing
of tabpilot dispatched. It reports semantic actions named as a person would name the element, merges
typing per field, hides password / one-time-code values (the clear value is in no message at all),
works in same- and cross-origin iframes and open shadow DOM, and reports only bare input events while
watching."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from state_support import ids_by_index
from takeover_support import Person, wait_for

from tabpilot.agent.types import describe_action
from tabpilot.browser.capture import PageCapture
from tabpilot.browser.state import get_state
from tabpilot.browser.tab import Tab
from tabpilot.taskrun.takeover import Takeover

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

PASSWORD = "hunter2-Secret"
CODE = "493817"
EMAIL = "document.querySelector('#email')"
SHADOW = "document.querySelector('#shadow').shadowRoot"
SAME_FRAME = "document.querySelector('#same').contentDocument"
CROSS = "document.querySelector('#cross')"
ROUNDS = 20


class Captured:
    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []

    def __call__(self, message: dict[str, Any]) -> None:
        self.messages.append(message)

    @property
    def actions(self) -> list[dict[str, Any]]:
        return [m["action"] for m in self.messages if m["type"] == "capture.action"]

    def brief(self) -> list[tuple[str, str, str | None]]:
        """The actions as the host keeps them (a field reported while typed in, then again, is one action)."""
        kept = Takeover(reason="user", started_at=1)
        kept.add(self.actions)
        return [(a["kind"], a["target"], a.get("value")) for a in kept.actions]


@pytest_asyncio.fixture(loop_scope="module")
async def page(browser, pages):
    tab = await browser.new_tab(pages.url("takeover_form.html"))
    captured = Captured()
    capture = PageCapture(tab, captured)
    await capture.start("watch")
    person = await Person.at(browser.launched.ws_url, tab.target_id)
    # the page and its same-site frame (one session), its cross-site frame (a session of its own)
    await wait_for(lambda: len(capture._contexts) >= 3 and len({session for session, _ in capture._contexts}) == 2)
    yield capture, captured, person, tab
    await person.close()
    await browser.close_tab(tab.target_id)


async def test_what_a_person_does_is_recorded_as_named_actions_and_secrets_never_leave_the_page(page, pages):
    capture, captured, person, tab = page
    assert await capture.set_mode("record") == []
    await person.click(EMAIL)
    await person.type("ada@example.org")
    await person.click("document.querySelector('#password')")
    await person.type(PASSWORD)
    await person.click("document.querySelector('#otp')")
    await person.type(CODE)
    await person.click("document.querySelector('#remember')")
    await person.select("document.querySelector('#plan')", "Team")
    await person.click(f"{SHADOW}.querySelector('#nick')")
    await person.type("adz")
    await person.click(f"{SHADOW}.querySelector('#shadowbtn')")
    await person.click(f"{SHADOW}.querySelector('#shadowcheck')")
    await person.click(f"{SAME_FRAME}.querySelector('#city')")
    await person.type("Paris")
    [cross] = [f for f in tab.frames.values() if "takeover_frame" in f.url]
    await person.click_in_frame(cross.session, CROSS, "document.querySelector('#city')")
    await person.type("Lyon")  # reported up to 0.2 s later: under load after the page's Control+a (kept in order)
    await person.click(EMAIL)
    await person.press("a", 65, modifiers=2, text=None)  # Control+a
    await person.type("grace@example.org")
    await person.enter()  # submits the form: the page pushes #signed-in
    await person.wheel(600, 200, 300)
    await person.wheel(600, 200, 300)  # right of every frame: the page scrolls
    await asyncio.sleep(0.2)
    assert await person.evaluate(EMAIL + ".value") == "grace@example.org"  # the person's input reached the page
    flushed = await capture.set_mode("watch")  # the scroll still pending comes back in the reply
    # as the host keeps them: a field reported while typed in, then again, is one action
    kept = Takeover(reason="user", started_at=1)
    kept.add(captured.actions + flushed)
    actions = kept.actions
    brief = [(a["kind"], a["target"], a.get("value")) for a in actions]
    form_url = pages.url("takeover_form.html")
    assert brief == [
        ("input", 'textbox "Email"', "ada@example.org"),
        ("input", 'textbox "Password"', "•••"),
        ("input", 'textbox "One-time code"', "•••"),
        ("check", 'checkbox "Remember me"', "checked"),
        ("select", 'combobox "Plan"', "Team plan"),
        ("input", 'textbox "Nickname"', "adz"),
        ("click", 'button "Save nickname"', None),
        ("check", 'checkbox "Shadow option"', "checked"),
        ("input", 'textbox "City"', "Paris"),
        ("input", 'textbox "City"', "Lyon"),
        ("key", 'textbox "Email"', "Control+a"),
        ("input", 'textbox "Email"', "grace@example.org"),
        ("key", 'textbox "Email"', "Enter"),
        ("submit", 'form "Login" via button "Sign in"', None),
        # the page's submit handler pushed the address: its script did, after the person's submit (told before)
        ("navigate", "script", form_url + "#signed-in"),
        ("scroll", "page", "down 600px"),
    ], brief
    frames = {a["target"]: a["url"] for a in actions if a["kind"] == "input"}
    assert "takeover_frame.html" in frames['textbox "City"']  # the later one: the cross-site frame
    assert actions[8]["url"].startswith(form_url.split("takeover_form")[0])  # same-site frame, its own URL
    assert actions[9]["url"] != actions[8]["url"]  # cross-site: another origin
    assert all(isinstance(a["at"], int) and a["url"] for a in actions)
    everything = json.dumps(captured.messages) + json.dumps(flushed)
    assert PASSWORD not in everything and CODE not in everything and "hunter2" not in everything


async def recording_in_the_empty_email_field(page: Any) -> tuple[PageCapture, Captured, Person]:
    """The person has the controls (record) and has clicked into the emptied Email field."""
    capture, captured, person, _tab = page
    await person.evaluate(f"{EMAIL}.value = ''")
    await capture.set_mode("record")
    captured.messages.clear()
    await person.click(EMAIL)
    return capture, captured, person


async def test_typing_resumed_after_a_pause_is_reported_as_the_same_fields_action_again(page):
    # A field is reported while it is typed in (a host that dies meanwhile keeps it) and again as the person goes
    # on: marked `again`, so the host keeps one action, and never merges two fields by their names alone.
    capture, captured, person = await recording_in_the_empty_email_field(page)
    await person.type("ada")
    await wait_for(lambda: len(captured.actions) >= 1)  # reported so far
    await person.type("@example.org")
    await person.click("document.querySelector('#docs')")
    await wait_for(lambda: any(a["kind"] == "click" for a in captured.actions))
    inputs = [(a["target"], a["value"], a.get("again")) for a in captured.actions if a["kind"] == "input"]
    assert inputs[0] == ('textbox "Email"', "ada", None), inputs
    assert inputs[-1] == ('textbox "Email"', "ada@example.org", True), inputs
    assert all(target == 'textbox "Email"' and again for target, _, again in inputs[1:]), inputs
    kept = Takeover(reason="user", started_at=1)
    kept.add(captured.actions)
    assert [(a["kind"], a.get("value")) for a in kept.actions][:2] == [("input", "ada@example.org"), ("click", None)]
    await capture.set_mode("watch")


async def test_a_person_typing_on_without_a_pause_is_in_the_record_as_they_type(page):
    # The record gets a field as it is typed, not once typing pauses: a person who types on (a key every 0.1 s, for
    # 2 s) is reported within a fraction of a second of their keys, so a host that dies under them keeps nearly all.
    capture, captured, person = await recording_in_the_empty_email_field(page)
    text = "typing-on-and-on-and-on"
    reported_while_typing: list[str] = []
    for char in text:
        await person.type(char)
        await asyncio.sleep(0.1)
        reported_while_typing += [a["value"] for a in captured.actions if a["kind"] == "input"]
    assert reported_while_typing, "nothing of the field was reported while the person typed"
    assert all(text.startswith(value) for value in reported_while_typing), reported_while_typing
    await capture.set_mode("watch")


async def test_a_field_that_was_a_password_stays_hidden_and_watch_and_off_report_no_values(page):
    capture, captured, person, _tab = page
    await person.evaluate("document.querySelector('#password').value = ''")
    await capture.set_mode("record")
    captured.messages.clear()
    await person.click("document.querySelector('#password')")
    await person.type("abc")
    # reported while typed in (0.2 s after a key), then again once the page shows it as text: under load that
    # split came by chance, and the test, reading the reports as they came, failed on the second one; now always
    await wait_for(lambda: len(captured.actions) >= 1)
    await person.evaluate("document.querySelector('#password').type = 'text'")  # the page's "show password"
    await person.type("def")
    await person.click("document.querySelector('#docs')")
    await wait_for(lambda: any(a["kind"] == "click" for a in captured.actions))
    assert captured.brief()[:2] == [("input", 'textbox "Password"', "•••"), ("click", 'link "Docs"', None)]
    assert "abc" not in json.dumps(captured.messages)
    await capture.set_mode("watch")  # the agent has the controls: bare input events, nothing named
    captured.messages.clear()
    await person.click(EMAIL)
    await person.type("zz")
    await wait_for(lambda: len(captured.messages) >= 4)
    kinds = [m["kind"] for m in captured.messages]
    assert captured.actions == [] and {"pointerdown", "click", "keydown", "input"} <= set(kinds)
    assert all(set(m) == {"type", "kind", "at", "trusted"} and m["trusted"] for m in captured.messages)
    await capture.set_mode("off")
    captured.messages.clear()
    await person.click(EMAIL)
    await person.type("q")
    await asyncio.sleep(0.5)
    assert captured.messages == []
    # the page's own scripts cannot see the capture script or press its mode switch
    assert await person.evaluate("typeof tabpilotCaptureMode + typeof tabpilotCapture") == "undefinedundefined"


async def test_a_reloaded_page_gets_the_script_again_in_the_current_mode(page, pages):
    capture, captured, person, tab = page
    await capture.set_mode("record")
    await tab.navigate(pages.url("takeover_form.html?again"))
    await wait_for(lambda: any(a["kind"] == "navigate" and "again" in a["value"] for a in captured.actions))
    captured.messages.clear()
    await person.click(EMAIL)
    await person.type("second@example.org")
    await person.click("document.querySelector('#docs')")
    await wait_for(lambda: any(a["kind"] == "click" for a in captured.actions))
    assert captured.brief()[:2] == [("input", 'textbox "Email"', "second@example.org"), ("click", 'link "Docs"', None)]
    await capture.set_mode("watch")


async def test_a_reload_while_recording_is_reported_as_one(page, pages):
    # "went to <the URL it was on>" said nothing of what the person did (a new user's takeover record)
    capture, captured, person, tab = page
    await capture.set_mode("record")
    await tab.navigate(pages.url("takeover_form.html?before-reload"))
    await wait_for(lambda: any("before-reload" in (a.get("value") or "") for a in captured.actions))
    captured.messages.clear()
    await person.evaluate("location.reload()")
    await wait_for(lambda: any(a["kind"] == "navigate" for a in captured.actions))
    [reload] = [a for a in captured.actions if a["kind"] == "navigate"]
    assert (reload["target"], reload["value"]) == ("reload", pages.url("takeover_form.html?before-reload"))
    assert describe_action(reload) == f"reloaded the page {pages.url('takeover_form.html?before-reload')}"
    captured.messages.clear()
    # an ordinary navigation still is one; the browser's own (the address bar, here CDP's Page.navigate) has no cause
    # the page could see, so it is told as the tab loading it, not as the person's (a page's script is not either)
    await tab.navigate(pages.url("takeover_form.html?after-reload"))
    await wait_for(lambda: any(a["kind"] == "navigate" for a in captured.actions))
    assert [describe_action(a) for a in captured.actions if a["kind"] == "navigate"] == [
        f"the tab loaded {pages.url('takeover_form.html?after-reload')}"]
    await capture.set_mode("watch")


async def test_record_since_the_first_touch_keeps_what_came_before_the_mode_did(page):
    """Only whoever dispatched the agent's input can tell the user's first touch, so "record" comes after
    it: told since when, capture.js reports what it worked out meanwhile, and not the agent's input before."""
    capture, captured, person, _tab = page
    await person.evaluate(f"{EMAIL}.value = ''; {SHADOW}.querySelector('#nick').value = ''")
    await capture.set_mode("watch")
    await person.click(EMAIL)  # the agent's typing, before the user's first touch
    await person.type("agent")
    # all of it: an input event of the agent's reported after the clear would be taken for the user's first touch
    await wait_for(lambda: sum(m.get("kind") == "input" for m in captured.messages) == len("agent"))
    captured.messages.clear()
    await person.click("document.querySelector('#docs')")  # the user's first touch; then they type on
    await person.click(f"{SHADOW}.querySelector('#nick')")
    await person.type("neo")
    await wait_for(lambda: len(captured.messages) >= 4)
    since = captured.messages[0]["at"]
    assert captured.actions == []  # nothing named while watching
    await capture.set_mode("record", since=since)
    await wait_for(lambda: len(captured.actions) >= 1)
    flushed = await capture.set_mode("watch")
    assert captured.brief() == [("click", 'link "Docs"', None)]
    assert [(a["kind"], a["target"], a.get("value")) for a in flushed] == [("input", 'textbox "Nickname"', "neo")]


async def test_a_click_right_after_the_page_moved_reaches_the_element_not_the_frame_drawn_there_before(page):
    """The browser sends a press to what it last drew at that point. With the cross-site frame drawn where
    Email comes to be once scrolled back, a press made right after the scroll went into that frame (7 of 30
    in a measurement), and the typing after it was lost (CI saw it in test_capture_extension.py)."""
    _capture, _captured, person, tab = page
    [cross] = [f for f in tab.frames.values() if "takeover_frame" in f.url]
    x, y = await person.centre(EMAIL)
    for _ in range(ROUNDS):
        await person.evaluate(f"document.activeElement.blur(); "
                              f"scrollBy(0, {CROSS}.getBoundingClientRect().top + 40 - {y})")  # 80 px high
        await person.point(cross.session, "document.documentElement", x, y)  # the browser drew the frame there
        await person.click(EMAIL)
        assert await person.evaluate("document.activeElement.id") == "email"


async def test_a_click_that_reaches_no_control_is_told_as_the_spot_it_landed_on_not_as_a_control(browser, pages):
    """The agent's memory of what the person did: a click on a form's padding was "clicked form", on a card's "clicked
    div", as if a control were there to press again. As a class, every click whose target is no control: its words
    when it landed on some (a span a script made a button), else an empty area of the nearest area a person would
    name (a form or a card by its heading, a section by its label, a dialog by its title: tabindex=-1 makes no
    control), or of the page. A control is still told by its name. An area with no name of its own is told by what it
    holds (a form by its first field and its submit button, a dialog, a section, a card by their first words): they
    were told as "an empty area of the page"."""
    async with recording(browser, pages.url("blank_clicks.html")) as (captured, person, _):
        spots = [("document.getElementById('signin')", 8), ("document.getElementById('card')", 8),
                 ("document.getElementById('spacer')", 8), ("document.getElementById('dialog')", 8),
                 ("document.documentElement", 5), ("document.getElementById('save')", None),
                 ("document.getElementById('go')", None), ("document.querySelector('#card h3')", None),
                 ("document.getElementById('subscribe')", 8), ("document.getElementById('unnamed-dialog')", 8),
                 ("document.getElementById('renewal')", 8), ("document.getElementById('plain-card')", 8)]
        await _click_spots(person, spots)
        await wait_for(lambda: len([a for a in captured.actions if a["kind"] == "click"]) >= len(spots))
        clicks = [a for a in captured.actions if a["kind"] == "click"]
        told = [(a["kind"], a["target"], a.get("blank")) for a in clicks]
        assert told == [
            ("click", 'form "Sign in"', True),
            ("click", 'article "Pro plan"', True),
            ("click", 'region "Filters"', True),
            ("click", 'dialog "Confirm"', True),
            ("click", "page", True),
            ("click", 'text "Save"', None),
            ("click", 'button "Go"', None),
            ("click", 'heading "Pro plan"', None),
            ("click", "form", True),
            ("click", "dialog", True),
            ("click", "region", True),
            ("click", "article", True),
        ], told
        assert [a.get("holding") for a in clicks[8:]] == [
            ['textbox "Your email"', 'button "Subscribe"'], ['text "Delete this file?"'],
            ['text "Your plan renews on 1 May."'], ['text "Everything in Free, and more seats, mor…"']]
        assert await person.evaluate("window.clicked") == ["save"]  # the script's button got the person's click
        said = [describe_action(a) for a in clicks]
        assert said[0] == 'clicked an empty area of form "Sign in" (no control there)', said
        assert said[4] == "clicked an empty area of the page (no control there)", said
        assert said[5] == 'clicked text "Save"', said
        assert describe_action(clicks[0], "zh-CN") == '点击了表单 "Sign in" 中的空白处（那里没有控件）'
        assert said[8] == ('clicked an empty area of the form with textbox "Your email" and button "Subscribe" '
                           "(no control there)"), said
        assert said[9] == 'clicked an empty area of the dialog with text "Delete this file?" (no control there)', said
        assert describe_action(clicks[8], "zh-CN") == \
            '点击了含有文本框 "Your email"、按钮 "Subscribe" 的表单中的空白处（那里没有控件）'


@contextlib.asynccontextmanager
async def recording(browser, url: str) -> AsyncIterator[tuple[Captured, Person, Tab]]:
    """A new tab on `url` whose capture records from the start, a person at it, and the tab."""
    tab = await browser.new_tab(url)
    captured = Captured()
    await PageCapture(tab, captured).start("record")
    person = await Person.at(browser.launched.ws_url, tab.target_id)
    try:
        yield captured, person, tab
    finally:
        await person.close()
        await browser.close_tab(tab.target_id)


async def _click_spots(person: Person, spots: list[tuple[str, int | None]]) -> None:
    """Each spot clicked: an element itself, or a spot inside its padding (`inset` px in), where nothing else is."""
    for expression, inset in spots:
        if inset is None:
            await person.click(expression)
            continue
        await person.evaluate(f"(el => el === document.documentElement ? scrollTo(0, 0)"
                              f" : el.scrollIntoView({{block: 'center'}}))({expression})")
        x, y = await person.evaluate(f"(() => {{ const r = ({expression}).getBoundingClientRect();"
                                     f" return [r.left + {inset}, r.top + {inset}]; }})()")
        await person.point(person.session, expression, x, y)
        await person.press_button(x, y)


async def test_a_click_in_a_part_of_the_page_with_no_name_is_told_as_a_person_calls_that_part(browser, pages):
    """A blank click in an unnamed header, navigation, main, sidebar or footer was told as "an empty area of the page":
    the agent could not tell the menu from the page's margin. Each is told by what a person calls it, a navigation by
    its first links too, in English and Chinese; a header inside an article is the article's, told by its heading."""
    async with recording(browser, pages.url("blank_landmarks.html")) as (captured, person, _):
        spots = [f"document.getElementById('{name}')" for name in
                 ("top", "menu", "content", "tips", "bottom", "notes-header")]
        await _click_spots(person, [(spot, 8) for spot in spots])
        await wait_for(lambda: len([a for a in captured.actions if a["kind"] == "click"]) >= len(spots))
        clicks = [a for a in captured.actions if a["kind"] == "click"]
        assert [(a["target"], a.get("blank"), a.get("holding")) for a in clicks] == [
            ("banner", True, None),
            ("navigation", True, ['link "Home"', 'link "Pricing"', 'link "Blog"']),
            ("main", True, None),
            ("complementary", True, None),
            ("contentinfo", True, None),
            ('article "Release notes"', True, None),
        ], clicks
        assert [describe_action(a) for a in clicks] == [
            "clicked an empty area of the header (no control there)",
            'clicked an empty area of the navigation with links "Home", "Pricing", "Blog" (no control there)',
            "clicked an empty area of the main content (no control there)",
            "clicked an empty area of the sidebar (no control there)",
            "clicked an empty area of the footer (no control there)",
            'clicked an empty area of article "Release notes" (no control there)',
        ]
        assert [describe_action(a, "zh-CN") for a in clicks[:2]] == [
            "点击了页眉中的空白处（那里没有控件）",
            '点击了含有链接 "Home"、"Pricing"、"Blog" 的导航栏中的空白处（那里没有控件）',
        ]
        assert await person.evaluate("location.hash") == ""  # no link was followed


async def test_custom_controls_and_editors_are_told_by_the_label_a_person_reads_not_by_what_they_hold(browser, pages):
    """An editor a <label for> names was told by its own words (what the person wrote in it: `textbox "Hi all"`), a
    custom checkbox inside a <label> with no name at all: each is told by its label, as the page's state names them
    (test_state_names), and as native fields already were."""
    async with recording(browser, pages.url("eyes_shown_labels.html")) as (captured, person, _):
        await person.click("document.getElementById('note')")
        await person.type("Hi all")
        await person.click("document.getElementById('remember')")
        await person.click("document.getElementById('name')")
        await person.type("Ada")
        await person.select("document.getElementById('genre')", "Poetry")
        await wait_for(lambda: [a["kind"] for a in captured.actions][-1:] == ["select"])
        assert [kept for kept in captured.brief() if kept[0] != "navigate"] == [
            ("input", 'textbox "Note to the club"', "Hi all"),
            ("click", 'checkbox "Remember me"', None),
            ("input", 'textbox "Full name"', "Ada"),
            ("select", 'combobox "Favourite genre"', "Poetry"),
        ], captured.actions
        assert await person.evaluate("window.typed.note") == "Hi all"


# takeover_icons.html: controls that show no words, by what names each; the icon-library pages of test_state_names
ICON_CONTROLS = {
    "takeover_icons.html": ["delete", "settings", "home", "share", "trash", "archive", "star", "reply", "search",
                            "print", "close", "flag", "twitter"],
    "eyes_icon_libraries.html": ["octicon-x", "codicon", "lucide-svg", "lucide-data", "feather-data", "feather-svg",
                                 "remix", "boxicons", "fa-times", "data-icon", "fa-svg", "desc", "twitter-x"],
}


@pytest.mark.parametrize("page_name", list(ICON_CONTROLS))
async def test_a_click_on_an_icon_only_control_is_told_by_the_name_the_agents_page_state_gives_it(
        browser, pages, page_name):
    """A new user's trial: a person's click on an icon button (<button aria-label="Delete"><svg>, an icon font's
    <i class="fa fa-trash">, an SVG's <title>, aria-labelledby, a tooltip, a sprite, ...) was told with no name, or by
    words the page hides, while the agent's page state names it (walker.js). As a class: the record names every
    control with the page state's own rules (extension/content/names.js), so the model reads the same name in both;
    clicked twice, the second time after a reload."""
    controls = ICON_CONTROLS[page_name]
    async with recording(browser, pages.url(page_name)) as (captured, person, tab):
        for round_ in range(2):
            state = await get_state(browser, tab)
            named = {element: state.elements[index].name for index, element in (await ids_by_index(state)).items()}
            for control in controls:
                await person.click(f"document.getElementById('{control}')")
            await wait_for(lambda: len([a for a in captured.actions if a["kind"] == "click"]) >= len(controls))
            assert await person.evaluate("window.clicks") == controls  # the page got each click
            clicks = [a for a in captured.actions if a["kind"] == "click"]
            told = [a["target"] for a in clicks]
            assert all(named[control] for control in controls), named  # the page state names each
            # each told by its role (capture.js's) and the name the page state gives it
            roles = [target.split(" ")[0] for target in told]
            assert told == [f'{role} "{named[c]}"' for role, c in zip(roles, controls, strict=True)], (told, named)
            assert all('"' in target for target in told), told  # none told without a name ("clicked button")
            captured.messages.clear()
            if round_ == 0:
                await tab.navigate(pages.url(page_name))  # a new document: the script comes again
                await wait_for(lambda: any(a["kind"] == "navigate" for a in captured.actions))
