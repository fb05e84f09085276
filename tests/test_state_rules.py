"""The browser state's rules as plain functions: no browser needed."""

from __future__ import annotations

from tabpilot.browser.dom import rules


def test_short_href_keeps_what_tells_the_model_something() -> None:
    page = "https://shop.example.com/cart/items?x=1"
    assert rules.short_href("/help/account?tab=privacy", page) == "/help/account?tab=privacy"
    assert rules.short_href("details.html", page) == "/cart/details.html"  # relative: resolved
    assert rules.short_href("https://docs.example.org/guide/start/", page) == "docs.example.org/guide/start"
    assert rules.short_href("javascript:void(0)", page) is None
    assert rules.short_href("#top", page) is None
    assert rules.short_href("mailto:ann@example.com", page) == "mailto:ann@example.com"
    long = rules.short_href("/" + "a" * 100, page)
    assert long is not None and len(long) == rules.ATTRIBUTE_LIMIT and long.endswith("…")


def test_password_fields_are_recognised_by_type_and_by_autocomplete() -> None:
    assert rules.is_password_input("input", {"type": "password"})
    assert rules.is_password_input("input", {"type": "PASSWORD"})
    assert rules.is_password_input("input", {"type": "text", "autocomplete": "current-password"})
    assert rules.is_password_input("input", {"autocomplete": "new-password"})
    assert not rules.is_password_input("input", {"type": "email"})
    assert not rules.is_password_input("textarea", {"autocomplete": "current-password"})


def test_interactive_role_from_markup() -> None:
    assert rules.interactive_role("button", {}) == "button"
    assert rules.interactive_role("a", {"href": "/x"}) == "a"
    assert rules.interactive_role("a", {}) is None  # a bare anchor needs a listener or a pointer cursor
    assert rules.interactive_role("input", {"type": "hidden"}) is None
    assert rules.interactive_role("div", {"role": "switch"}) == "switch"
    assert rules.interactive_role("div", {"role": "presentation"}) is None
    assert rules.interactive_role("div", {"contenteditable": ""}) == "textbox"
    assert rules.interactive_role("div", {"contenteditable": "false"}) is None
    assert rules.interactive_role("div", {"tabindex": "0"}) == "focusable"
    assert rules.interactive_role("div", {"tabindex": "-1"}) is None
    assert rules.interactive_role("div", {"tabindex": "x"}) is None


def test_values_are_quoted_only_when_needed_and_shortened() -> None:
    assert rules.quote("Chile") == "Chile"
    assert rules.quote("a|b|c") == "a|b|c"
    assert rules.quote("two words") == '"two words"'
    assert rules.quote('say "hi"') == "\"say 'hi'\""
    assert rules.shorten("  many   spaces\nand lines ", 100) == "many spaces and lines"
    assert rules.shorten("x" * 10, 5) == "xxxx…"


def test_an_icons_meaningful_words_leave_out_hashes_sizes_and_generic_words() -> None:
    assert rules.file_words("http://cdn.example.com/a/scrolls_logo_150.png?v=2") == ["scrolls", "logo"]
    assert rules.file_words("/static/img/factorio-logo.png") == ["factorio", "logo"]
    assert rules.file_words("/pic/4224.gif") == []  # a number says nothing
    assert rules.file_words("/p/d6e62af173e2.jpg") == []  # nor does a hash
    assert rules.file_words("data:image/png;base64,iVBORw0KGgo=") == []
    assert rules.file_words("https://medium.com/m/signin?redirect=x") == ["signin"]
    assert rules.fragment_words("/icons.svg#icon-search") == ["search"]
    assert rules.fragment_words("#facebook-icon-default") == ["facebook"]
    assert rules.meaningful_words("icon-menu-mobile") == ["menu"]  # the menu button of a narrow layout
    assert rules.meaningful_words("btnSendMail") == ["send", "mail"]


def test_icon_sets_prefixes_and_styles_say_nothing_and_a_lone_cross_is_close() -> None:
    assert rules.meaningful_words("lucide-search") == ["search"]
    assert rules.meaningful_words("ri-close-line") == ["close"]  # Remix's drawing style
    assert rules.meaningful_words("bxs-trash") == ["trash"]  # a Boxicons set
    for cross in ("octicon-x", "feather-x-circle", "fa-times", "fa-circle-xmark", "heroicon-outline-x-mark", "XMark"):
        assert rules.meaningful_words(cross) == ["close"], cross
    assert rules.meaningful_words("icon-twitter-x") == ["twitter"]  # beside other words, the brand's letter
    assert rules.meaningful_words("fa-calendar-times") == ["calendar", "times"]
    assert rules.meaningful_words("x-logo") == ["logo"]


def test_a_control_inside_a_control_is_told_by_tag_or_role() -> None:
    assert rules.is_inner_control("button", {})
    assert rules.is_inner_control("a", {"href": "#"}) and not rules.is_inner_control("a", {})
    assert rules.is_inner_control("span", {"role": "Button pressed"})
    assert not rules.is_inner_control("svg", {"role": "img"}) and not rules.is_inner_control("img", {})
