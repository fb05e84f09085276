"""The filter that keeps the page's passwords out of a script's result, on texts a script could return."""

from __future__ import annotations

import base64
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


# A page's many password fields against a frame's many strings: each value against each string took 23 s on the host's
# event loop (2,000 x 20,000); past LOOKED_UP_FROM values they are looked up by their start. It hides what the plain
# way hides, whatever the values and texts (bench_privacy.py prints the time).
_PIECES = st.text(alphabet="abcAB-1 ", min_size=0, max_size=12)


@settings(max_examples=300, deadline=None)
@given(values=st.lists(st.text(alphabet="abcAB-1", min_size=6, max_size=14), min_size=1, max_size=40, unique=True),
       texts=st.lists(st.lists(st.one_of(_PIECES, st.integers(0, 39)), max_size=8), max_size=6))
def test_many_secret_values_are_hidden_as_the_plain_way_hides_them(values: list[str], texts: list[list[object]]
                                                                   ) -> None:
    from tabpilot.browser.dom.snapshot import secret_hider

    hidden = sorted(values, key=len, reverse=True)
    # texts made of the values themselves, pieces of them and other characters
    made = ["".join(values[p % len(values)] if isinstance(p, int) else str(p) for p in parts) for parts in texts]

    def plainly(text: str) -> str:
        for value in hidden:
            if value in text:
                text = text.replace(value, HIDDEN)
        return text

    hide = secret_hider(hidden)
    assert [hide(text) for text in made] == [plainly(text) for text in made]
