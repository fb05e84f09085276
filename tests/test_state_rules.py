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
