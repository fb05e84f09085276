"""Key names → CDP key events, and URL clean-up: pure code, no browser."""

from __future__ import annotations

import pytest

from tabpilot.browser import actions
from tabpilot.browser.errors import ActionError
from tabpilot.browser.keys import key_events, parse_chord, parse_keys


def test_named_keys_aliases_and_modifiers() -> None:
    chord = parse_chord("ctrl+Shift+t")
    assert chord.modifiers == ("Control", "Shift") and chord.modifier_bits == 10
    assert chord.key.key == "T" and chord.key.code == "KeyT" and str(chord) == "Control+Shift+T"
    assert parse_chord("esc").key.key == "Escape"
    assert parse_chord("Return").key.key_code == 13
    assert parse_chord("pagedown").key.key == "PageDown"
    assert parse_chord("F5").key.key_code == 116
    assert parse_chord("Control++").key.key == "+"
    assert parse_chord("+").key.key == "+"
    assert [str(c) for c in parse_keys("Control+a Delete")] == ["Control+a", "Delete"]
    assert parse_keys(" ")[0].key.key == " "


def test_events_press_and_release_in_order() -> None:
    events = key_events(parse_chord("Control+a"))
    assert [(e["type"], e["key"], e["modifiers"]) for e in events] == [
        ("rawKeyDown", "Control", 2), ("rawKeyDown", "a", 2), ("keyUp", "a", 2), ("keyUp", "Control", 0)
    ]
    assert "text" not in events[1]  # a shortcut, not typing: no "a" is inserted
    enter = key_events(parse_chord("Enter"))
    assert enter[0]["type"] == "keyDown" and enter[0]["text"] == "\r"
    shifted = key_events(parse_chord("Shift+1"))
    assert shifted[1]["text"] == "!" and shifted[1]["code"] == "Digit1"


@pytest.mark.parametrize(("keys", "message"), [
    ("", "No keys given"),
    ("Control+Hyper", "Unknown key 'Hyper'"),
    ("a+b", "'a' in 'a\\+b' is not a modifier"),
    ("Control+", "Cannot read the key combination"),
])
def test_bad_keys_are_clear_errors(keys: str, message: str) -> None:
    with pytest.raises(ActionError, match=message):
        parse_keys(keys)


def test_normalize_url() -> None:
    assert actions.normalize_url("example.com/a") == "https://example.com/a"
    assert actions.normalize_url("localhost:8000/x") == "http://localhost:8000/x"
    assert actions.normalize_url("127.0.0.1:5000") == "http://127.0.0.1:5000"
    assert actions.normalize_url(" https://a.test ") == "https://a.test"
    assert actions.normalize_url("mailto:someone@example.com") == "mailto:someone@example.com"
    assert actions.normalize_url("about:blank") == "about:blank"
    with pytest.raises(ActionError, match="javascript: URLs"):
        actions.normalize_url("JavaScript:alert(1)")


def test_typing_events_use_real_keys_or_none() -> None:
    from tabpilot.browser.keys import typing_events

    lower = typing_events("q")
    assert [e["type"] for e in lower] == ["keyDown", "keyUp"] and lower[0]["text"] == "q"
    upper = typing_events("Q")
    assert [e["key"] for e in upper] == ["Shift", "Q", "Q", "Shift"] and upper[1]["code"] == "KeyQ"
    assert typing_events("?")[1]["code"] == "Slash"
    assert typing_events(" ")[0]["code"] == "Space"
    assert typing_events("é") is None and typing_events("中") is None and typing_events("\t") is None
