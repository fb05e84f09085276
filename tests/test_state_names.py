"""What a person calls a control or a formula the page does not name for screen readers the usual way, read by
both readers (the in-page walker and whole-page DOM snapshots) into the exact lines the model gets, and used
through them (the page's own script records what happened): icons drawn by icon libraries (the name only in a
class, a data-* attribute or the svg's <desc>), fields no label names, fields a label a person sees names, and
formulas drawn by MathJax and KaTeX."""

from __future__ import annotations

import pytest
from state_support import open_page, page_lines

from tabpilot.browser import actions
from tabpilot.browser.browser import Browser
from tabpilot.browser.state import BrowserState, build_state, read_page
from tabpilot.browser.tab import Tab

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]
READERS = pytest.mark.parametrize("snapshot", [False, True], ids=["walker", "snapshot"])


async def read(browser: Browser, tab: Tab, snapshot: bool, previous: BrowserState | None = None) -> BrowserState:
    return build_state(await read_page(browser, tab, snapshot=snapshot), previous)


@READERS
async def test_icons_named_only_by_their_library_are_named(browser: Browser, pages, snapshot: bool) -> None:
    tab = await open_page(browser, pages.url("eyes_icon_libraries.html"))
    state = await read(browser, tab, snapshot)
    expected = [
        "# Icon libraries",
        "[1]<button icon=close>",  # GitHub's octicon-x: a cross is a close button
        "[2]<a role=button icon=close>",  # codicon-close, the set's own prefix left out
        "[3]<button icon=search>",  # lucide lucide-search
        "[4]<button icon=trash>",  # <i data-lucide="trash-2">, before lucide's script draws it
        "[5]<a icon=close>",  # <i data-feather="x">
        "[6]<button icon=close>",  # feather-x-circle
        "[7]<button icon=close>",  # ri-close-line: "line" is Remix's drawing style
        "[8]<button icon=trash>",  # bx bxs-trash
        "[9]<button icon=close>",  # fa fa-times
        "[10]<button icon=delete>",  # <span data-icon="delete">
        '[11]<button icon="cart shopping">',  # Font Awesome's svg: data-icon, its classes say nothing
        "[12]<button>Download the report",  # the svg's <desc>
        "[13]<a icon=twitter href=twitter.com/intent/tweet>",  # the brand's X is a letter, not a close button
        "[14]<button>",  # btn btn-primary and a bare svg.icon: nothing says what it does, nothing is made up
        "none",
    ]
    assert page_lines(state) == expected, state.text
    assert await actions.click(browser, tab, state.elements[1]) == "Clicked [1] button 'close'."
    assert await actions.click(browser, tab, state.elements[4]) == "Clicked [4] button 'trash'."
    assert await actions.click(browser, tab, state.elements[12]) == "Clicked [12] button 'Download the report'."
    assert await tab.evaluate("window.clicks") == ["octicon-x", "lucide-data", "desc"]
    again = await read(browser, tab, snapshot, state)  # a second read names them the same way
    assert page_lines(again) == [*expected[:-1], "clicked octicon-x, lucide-data, desc"], again.text
    await browser.close_tab(tab.target_id)


@READERS
async def test_fields_no_label_names_carry_what_says_what_they_are(browser: Browser, pages, snapshot: bool) -> None:
    tab = await open_page(browser, pages.url("eyes_unnamed_fields.html"))
    state = await read(browser, tab, snapshot)
    assert page_lines(state) == [
        "# Checkout",
        "[1]<input id=search-input>",  # no label, no name: its id says what it is
        "[2]<button>Go",
        "[3]<input type=email id=newsletterEmail>",
        "[4]<input>Promo code, if you have one",  # aria-describedby text drawn for screen readers only
        "[5]<input id=email>",  # a hidden error message it is described by is no name
        "[6]<input>",  # id=":r3:": a framework's id says nothing
        "[7]<input>",  # id="input-1234": nor does this one
        "[8]<input type=search name=q>",
        "City",  # a label a person sees stays where it stands, and the id is not added
        "[9]<input>",
        "[10]<input type=number title=Quantity>",
        '[11]<input placeholder="ZIP code">',
    ], state.text
    assert [state.elements[i].name for i in (1, 3, 4, 5)] == [
        "search", "newsletter email", "Promo code, if you have one", "email"]
    said = await actions.input_text(browser, tab, state.elements[1], "shoes")
    assert said.startswith("Typed 'shoes' into [1] input 'search'"), said
    await actions.input_text(browser, tab, state.elements[4], "SPRING")
    assert await tab.evaluate("window.typed") == {"search-input": "shoes", "promo": "SPRING"}
    again = await read(browser, tab, snapshot, state)
    assert page_lines(again)[1] == "[1]<input id=search-input value=shoes>", again.text
    assert page_lines(again)[4] == "[4]<input value=SPRING>Promo code, if you have one", again.text
    await browser.close_tab(tab.target_id)


SHOWN_LABELS = [
    "# Join the reading club",
    "Favourite genre",  # each label a person sees stands on a line of its own, and is not said again
    '[1]<select value="Choose one" options="Choose one|Poetry|History">',
    "Full name",
    '[2]<input placeholder="Your name">',
    "Email (required)",
    '[3]<input type=email title="Where we write to you">',
    "About you",
    "[4]<textarea>",
    "Birthday",
    "[5]<input type=date>",
    "Volume",
    "[6]<input type=range value=50>",
    "Photo",
    "[7]<input type=file>",
    "Club PIN",
    "[8]<input type=password>",
    "Country",
    "[9]<div role=combobox expanded=false>Chile",
    "Size",
    "[10]<div role=listbox>",
    "\t[11]<div role=option>Small",
    "\t[12]<div role=option>Large",
    "Dark mode",
    "[13]<div role=switch checked=false>",
    "Rating",
    "[14]<div role=slider value=3 min=1 max=5>",
    "Note to the club",
    "[15]<div editable>",
    "Phone",
    "Mobile number",
    "[16]<input type=tel>",
    "Query",
    '[17]<input aria-label="Search the catalogue">',
    "[18]<input type=checkbox checked=false>I accept the rules",
    "Monthly letter",
    "[19]<input type=checkbox checked=false>",
    "[20]<span role=checkbox checked=false>",
    "Remember me",
]


@READERS
async def test_fields_a_label_a_person_sees_names_are_called_by_it_in_what_actions_say(
        browser: Browser, pages, snapshot: bool) -> None:
    # `tabpilot demo` said "Selected 'Poetry' in [3] select.": the label stood on the line above, the select had no
    # name of its own, so the result, the record and the overlay's step named nothing. Every kind of form control
    # is named as a screen reader names it (aria-labelledby, aria-label, its <label>, then a title or placeholder),
    # in what actions say only: the lines stay as they were (the label is read where it stands).
    tab = await open_page(browser, pages.url("eyes_shown_labels.html"))
    state = await read(browser, tab, snapshot)
    assert page_lines(state) == SHOWN_LABELS, state.text
    assert {index: element.name for index, element in state.elements.items()} == {
        1: "Favourite genre", 2: "Full name",  # the label before the placeholder
        3: "Email (required)",  # words drawn for screen readers only are part of the label; before the title
        4: "About you", 5: "Birthday", 6: "Volume", 7: "Photo", 8: "Club PIN",
        9: "Country",  # aria-labelledby, not the value it shows
        10: "Size", 11: "Small", 12: "Large", 13: "Dark mode", 14: "Rating",
        15: "Note to the club",  # a label[for] on an editor: no browser links them, a person reads them so
        16: "Mobile number",  # aria-labelledby before the label
        17: "Search the catalogue",  # aria-label before the label
        18: "I accept the rules", 19: "Monthly letter",
        20: "Remember me",  # the label around a custom checkbox
    }
    said = [
        await actions.select_option(browser, tab, state.elements[1], "Poetry"),
        await actions.input_text(browser, tab, state.elements[2], "Ada Lovelace"),
        await actions.input_text(browser, tab, state.elements[8], "4321"),
        await actions.click(browser, tab, state.elements[13]),
        await actions.input_text(browser, tab, state.elements[15], "See you Monday"),
        await actions.click(browser, tab, state.elements[19]),
    ]
    told = [
        "Selected 'Poetry' in [1] select 'Favourite genre'.",
        "Typed 'Ada Lovelace' into [2] input 'Full name';",
        "Typed 4 characters into [8] password field 'Club PIN' (a password field; its value is not shown).",
        "Clicked [13] switch 'Dark mode'.",
        "Typed 'See you Monday' into [15] div 'Note to the club';",
        "Clicked [19] checkbox 'Monthly letter'.",
    ]
    assert [line[:len(start)] for line, start in zip(said, told, strict=True)] == told, said
    assert await tab.evaluate("window.typed") == {"genre": "Poetry", "name": "Ada Lovelace", "pin": "4321",
                                                  "note": "See you Monday", "news": "on"}
    assert await tab.evaluate("window.changed") == ["genre=Poetry", "dark", "news=on"]
    again = await read(browser, tab, snapshot, state)  # a second step: same lines but for the values, same names
    assert page_lines(again)[2] == '[1]<select value=Poetry options="Choose one|Poetry|History">', again.text
    assert page_lines(again)[4] == '[2]<input placeholder="Your name" value="Ada Lovelace">', again.text
    assert [again.elements[i].name for i in (1, 2, 8, 13, 15, 19)] == [
        "Favourite genre", "Full name", "Club PIN", "Dark mode", "Note to the club", "Monthly letter"]
    await browser.close_tab(tab.target_id)


@READERS
async def test_formulas_read_as_a_person_reads_them(browser: Browser, pages, snapshot: bool) -> None:
    tab = await open_page(browser, pages.url("eyes_math.html"))
    state = await read(browser, tab, snapshot)
    assert page_lines(state) == [
        "# Formulas",
        "Energy: E = mc^2 in joules.",  # MathJax 3: its assistive MathML, not an empty focusable container
        "x = (−b ± √(b^2 − 4ac))/(2a)",  # displayed: a line of its own
        "Pythagoras: a^2 + b^2 = c^2.",  # MathJax 2
        "Harmonic: a_n = 1/n",  # KaTeX, without its TeX annotation
        "Named: E equals m c squared",  # the container's aria-label
        "[1]<a>See e^(iπ) + 1 = 0",  # a formula in a link names the link
        "Soup: (no MathML).",  # glyphs with nothing to read them by: left out
        "Native: 1/(n + 1) of the sum.",  # MathML the browser draws: in its sentence, not a line per glyph
        "[2]<input type=checkbox checked=false>x > 0",  # a formula after a checkbox is its label
        "[3]<button>Check answer",
        "none",
    ], state.text
    # The formulas far below (MathJax 3 and 2) are no controls either.
    assert "0 interactive elements" in state.text.splitlines()[-1], state.text
    for index in (1, 2, 3):
        await actions.click(browser, tab, state.elements[index])
    assert await tab.evaluate("window.clicks") == ["eq-link", "holds", "check"]
    await tab.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    below = await read(browser, tab, snapshot, state)
    assert "Far below: y and z" in page_lines(below) and not below.elements, below.text
    await browser.close_tab(tab.target_id)


@READERS
async def test_a_custom_control_named_by_a_label_a_person_sees_is_not_named_again_on_its_line(
        browser: Browser, pages, snapshot: bool) -> None:
    # A switch named by aria-labelledby read "Dark mode" then "[13]<div role=switch checked=false>Dark mode": the
    # label's words twice in every step. Whatever path names it (aria-labelledby to one label or two, a <label for>,
    # a <label> around it), a label a person sees is read where it stands, and names the control in what the model is
    # told of its actions; words drawn for screen readers only still name it on its line.
    tab = await open_page(browser, pages.url("eyes_label_once.html"))
    state = await read(browser, tab, snapshot)
    expected = [
        "# Reader settings",
        "Night reading",
        "[1]<div role=switch checked=false>",
        "Font size",
        "in points",
        "[2]<div role=spinbutton value=12>",
        "Notes for the librarian",
        "[3]<div role=textbox>",
        "Sync my shelf",
        "[4]<div role=switch checked=false>",
        "[5]<span role=radio checked=false>",
        "Audio books first",
        "[6]<div role=slider value=2 min=1 max=3>Reading speed",
    ]
    assert page_lines(state) == expected, state.text
    assert {index: element.name for index, element in state.elements.items()} == {
        1: "Night reading", 2: "Font size in points", 3: "Notes for the librarian", 4: "Sync my shelf",
        5: "Audio books first", 6: "Reading speed"}
    said = [await actions.click(browser, tab, state.elements[1]),
            await actions.input_text(browser, tab, state.elements[3], "Quiet corner"),
            await actions.click(browser, tab, state.elements[4])]
    told = ["Clicked [1] switch 'Night reading'.", "Typed 'Quiet corner' into [3] textbox 'Notes for the librarian'",
            "Clicked [4] switch 'Sync my shelf'."]
    assert [line[:len(start)] for line, start in zip(said, told, strict=True)] == told, said
    assert await tab.evaluate("window.changed") == ["night", "sync"]
    assert await tab.evaluate("window.typed") == {"notes": "Quiet corner"}
    again = await read(browser, tab, snapshot, state)  # a second step reads the label once again
    expected[2] = "[1]<div role=switch checked=true>"
    expected[9] = "[4]<div role=switch checked=true>"
    assert [line.lstrip("*") for line in page_lines(again)] == [
        *expected[:7], "[3]<div role=textbox>Quiet corner", *expected[8:]], again.text
    await browser.close_tab(tab.target_id)


@READERS
async def test_a_tables_row_is_read_as_one_line_and_its_controls_are_used_from_it(
    browser: Browser, pages, snapshot: bool
) -> None:
    # A cell's words in a paragraph or a div (docs tables, many sites' data tables) made every cell a line of its
    # own: the model could not tell which values share a row, nor which row's Remove a button is. A <br> ran the
    # words on either side together ("12 Main StSpringfield").
    tab = await open_page(browser, pages.url("eyes_tables.html"))
    state = await read(browser, tab, snapshot)
    assert page_lines(state) == [
        "# Operators",
        "Operation | Result | Notes",
        "x or y | if x is false, then y else x | (1)",
        "not x | if x is false, then True",
        "Pick | Name | Plan",
        "[1]<input type=checkbox checked=false> | Ada | Pro $12 | [2]<button>Remove</button>",
        "[3]<input type=checkbox checked=false> | Bob | Free | [4]<button>Remove</button>",
        "Ship to",
        "12 Main St",
        "Springfield",
        "Read [5]<a>the terms</a> first.",  # a <br> inside a link's name is a space
        "## Menu",  # a page laid out in a table: the tall cell's blocks are lines of their own
        "Home",
        "Help",
        "Last line",
    ], state.text
    await actions.click(browser, tab, state.elements[3])
    await actions.click(browser, tab, state.elements[4])
    await actions.click(browser, tab, state.elements[5])
    assert await tab.evaluate("[window.clicks, document.getElementById('pick-bob').checked]") == [
        ["remove-bob", "terms"], True]
    again = await read(browser, tab, snapshot, state)
    assert "[3]<input type=checkbox checked=true> | Bob | Free | [4]<button>Remove</button>" in page_lines(again)
