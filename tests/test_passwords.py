"""The filter that keeps the page's passwords out of a script's result, on texts a script could return."""

from __future__ import annotations

import base64
import json

import pytest

from tabpilot.browser.passwords import HIDDEN, WITHHELD, withhold

SECRET = "hunter2-Correct-Horse"


@pytest.mark.parametrize("text", [
    SECRET.upper(),
    SECRET.lower(),
    " ".join(SECRET),
    ", ".join(SECRET),
    SECRET[::-1],
    " ".join(SECRET[::-1]).upper(),
])
def test_a_password_spaced_out_in_another_case_or_reversed_is_hidden_in_place(text: str) -> None:
    hidden = withhold(f"before {text} after", {SECRET})
    assert hidden == f"before {HIDDEN} after"


@pytest.mark.parametrize("text", [
    base64.b64encode(SECRET.encode()).decode(),
    base64.b64encode(f"user=ann&pw={SECRET}".encode()).decode(),
    "token-" + base64.urlsafe_b64encode(SECRET.encode()).decode().rstrip("="),
    SECRET.encode().hex(),
    json.dumps([ord(c) for c in SECRET]),
    " ".join(hex(ord(c)) for c in SECRET),
    "%" + "%".join(f"{ord(c):02X}" for c in SECRET),
])
def test_a_password_in_an_encoded_form_withholds_the_whole_result(text: str) -> None:
    assert withhold(f'{{"result": "{text}"}}', {SECRET}) == WITHHELD


@pytest.mark.parametrize("text", [
    "nothing secret here: [1, 2, 3], aGVsbG8gd29ybGQ=, 0xff, deadbeef",
    "hunter, correct, horse",
    "",
])
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert withhold(text, {SECRET}) == text


def test_very_short_values_are_not_treated_as_passwords() -> None:
    assert withhold("a b", {"ab"}) == "a b"


def test_url_escapes_of_a_password_with_symbols_withhold_the_result() -> None:
    secret = "p@ss w0rd!"
    assert withhold("https://example.com/?q=p%40ss%20w0rd%21", {secret}) == WITHHELD
