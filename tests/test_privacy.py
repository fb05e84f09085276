"""Secrets and masking without a browser: domain matching, the checksums, the placeholders a task
keeps, what the guard lets through in each direction, and `tabpilot secrets` as users run it."""

from __future__ import annotations

import base64
import html
import json
import os
import stat
from pathlib import Path
from urllib.parse import quote

import pytest
from store_support import tabpilot, tabpilot_process

from tabpilot.agent.tools import InputTextInput, ScriptInput
from tabpilot.privacy.domains import DomainError, domain_matches, normalize_domain
from tabpilot.privacy.guard import PrivacyGuard, Refused
from tabpilot.privacy.masking import MaskRules, PatternTooSlow, find_personal_data, iban_valid, luhn_valid
from tabpilot.privacy.secrets import Secret
from tabpilot.store.settings import Settings, SettingsError, apply_changes, public_view

CARD = "4242 4242 4242 4242"  # Luhn-valid test card
SHOP = "https://shop.example.com/checkout"


# --- domains ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("url, matches", [
    ("https://example.com/login", True),
    ("http://example.com:8443/", True),
    ("https://login.example.com/", True),
    ("https://a.b.example.com/x", True),
    ("https://example.com.evil.test/", False),
    ("https://notexample.com/", False),
    ("https://example.org/", False),
    ("file:///home/example.com/page.html", False),
    ("about:blank", False),
    ("", False),
    (None, False),
])
def test_a_domain_matches_its_host_and_subdomains_on_any_port(url: str | None, matches: bool) -> None:
    assert domain_matches("example.com", url) is matches


def test_localhost_and_127_0_0_1_are_different_domains() -> None:
    assert domain_matches("127.0.0.1", "http://127.0.0.1:8123/form.html")
    assert not domain_matches("127.0.0.1", "http://localhost:8123/form.html")
    assert domain_matches("localhost", "http://localhost:9/")
    assert not domain_matches("localhost", "http://127.0.0.1:9/")


@pytest.mark.parametrize("given", ["Example.COM", "https://example.com:8443/login", "*.example.com", ".example.com"])
def test_a_domain_is_normalised_from_what_users_paste(given: str) -> None:
    assert normalize_domain(given) == "example.com"


@pytest.mark.parametrize("given", ["", "   ", "https://", "exa mple.com", "shop", "not a domain!"])
def test_a_bad_domain_is_refused(given: str) -> None:
    with pytest.raises(DomainError, match=r"a host name with a dot \(example\.com\), localhost or an IP address"):
        normalize_domain(given)


# --- checksums ----------------------------------------------------------------------------------------
def test_luhn() -> None:
    assert luhn_valid("4242424242424242") and luhn_valid("79927398713")
    assert not luhn_valid("4242424242424241") and not luhn_valid("42424242x4242424")


def test_iban_checksum() -> None:
    assert iban_valid("DE89 3704 0044 0532 0130 00") and iban_valid("GB82WEST12345698765432")
    assert not iban_valid("DE89 3704 0044 0532 0130 01") and not iban_valid("DE89")


def test_only_checked_numbers_are_masked() -> None:
    rules = MaskRules(cards=True, ibans=True)
    text = f"Card {CARD}, order 4242 4242 4242 4241, IBAN DE89 3704 0044 0532 0130 00, ref DE89 3704 0044 0532 0130 01"
    assert [(f.kind, f.value) for f in find_personal_data(text, rules)] == [
        ("card", CARD), ("iban", "DE89 3704 0044 0532 0130 00")]


def test_cards_are_found_as_they_are_written() -> None:
    text = ("Visa 4242-4242-4242-4242, Amex 3782 822463 10005, plain 378282246310005, "
            "order 2026 1124 0000 0001, two 5555 5555 5555 4444 4000 0566 5566 5556")
    assert [f.value for f in find_personal_data(text, MaskRules())] == [
        "4242-4242-4242-4242", "3782 822463 10005", "378282246310005", "5555 5555 5555 4444", "4000 0566 5566 5556"]


def test_phones_are_found_but_dates_and_short_numbers_are_not() -> None:
    found = find_personal_data("Call +49 30 1234567 or (030) 123-4567 by 2026-11-24, room 1204.",
                               MaskRules(cards=False, phones=True))
    assert [f.value for f in found] == ["+49 30 1234567", "(030) 123-4567"]


# --- the guard: page → model --------------------------------------------------------------------------
def test_the_same_value_keeps_its_placeholder_across_steps_and_kinds_count_apart() -> None:
    guard = PrivacyGuard(rules=MaskRules(emails=True, cards=True))
    first = guard.conceal(f"Ada: ada@example.com, card {CARD}; Bob: bob@example.com", SHOP)
    second = guard.conceal(f"Reply to bob@example.com and ada@example.com (card {CARD})", SHOP)
    assert first == "Ada: [email 1], card [card 1]; Bob: [email 2]"
    assert second == "Reply to [email 2] and [email 1] (card [card 1])"
    assert PrivacyGuard(rules=MaskRules(emails=True)).conceal("bob@example.com", SHOP) == "[email 1]"  # per task


def test_masking_is_off_by_default_except_card_numbers() -> None:
    rules = MaskRules()
    guard = PrivacyGuard(rules=rules)
    text = f"ada@example.com, +49 30 1234567, DE89 3704 0044 0532 0130 00, {CARD}"
    assert guard.conceal(text, SHOP) == "ada@example.com, +49 30 1234567, DE89 3704 0044 0532 0130 00, [card 1]"
    view = public_view(Settings())
    assert (view["maskEmails"], view["maskPhones"], view["maskCards"], view["maskIbans"]) == (False, False, True, False)


def test_user_patterns_are_regexes_between_slashes_or_literal() -> None:
    guard = PrivacyGuard(rules=MaskRules(cards=False, patterns=("/ACME-\\d{4}/", "Project Falcon")))
    assert guard.conceal("ACME-1234 and ACME-99 for Project Falcon", SHOP) == "[masked 1] and ACME-99 for [masked 2]"


def test_a_user_pattern_stops_at_its_budget_on_text_it_would_backtrack_on_for_days() -> None:
    """/(?:a|a)*$/ passes the nested-repeat check; Python's re took 8.9 s on 24 "a"s and a "!". On 40 it is stopped
    after masking.PATTERN_SECONDS of processor time (without the budget: days), with every part of a text split
    around the task's words together."""
    guard = PrivacyGuard(rules=MaskRules(cards=False, patterns=("Project Falcon", "/(?:a|a)*$/")))
    assert guard.conceal("Project Falcon aaa!", SHOP) == "[masked 1] aaa!"
    hostile = f"{'a' * 40}! the task {'a' * 22}!"
    for keep in ("", "the task"):
        with pytest.raises(PatternTooSlow) as raised:
            guard.conceal(hostile, SHOP, keep=keep)
        assert raised.value.pattern == "/(?:a|a)*$/" and "mask-patterns setting" in str(raised.value)


def test_a_bad_user_pattern_is_a_settings_error_naming_it() -> None:
    with pytest.raises(SettingsError, match=r"mask-patterns: .*/\(unclosed/ is not a valid regular expression"):
        apply_changes(Settings(), {"maskPatterns": ["ok", "/(unclosed/"]})


def test_the_users_task_is_not_masked_but_a_secret_in_it_is_hidden() -> None:
    guard = PrivacyGuard([Secret("PW", "example.com", "hunter2-value")], MaskRules(emails=True))
    task = "Write to ada@example.com"
    text = f"<user_request>{task}</user_request> page: ada@example.com, typed hunter2-value"
    assert guard.conceal(text, SHOP, keep=task) == (
        f"<user_request>{task}</user_request> page: [email 1], typed <secret>PW</secret>")


def test_the_users_task_with_a_secret_or_a_url_password_in_it_is_still_not_masked() -> None:
    # What is hidden in the task (a saved secret, a URL's password or token) is hidden in the text too: the task is
    # still found there, and only the page's part is masked.
    guard = PrivacyGuard([Secret("PW", "example.com", "hunter2-value")], MaskRules(emails=True))
    task = "Write to ada@example.com from https://ada:pw-1234567@mail.example/?token=t0k3n as hunter2-value"
    text = f"<user_request>{task}</user_request> page: ada@example.com"
    assert guard.conceal(text, SHOP, keep=task) == (
        "<user_request>Write to ada@example.com from https://ada:[redacted]@mail.example/?token=[redacted] as "
        "<secret>PW</secret></user_request> page: [email 1]")


def test_the_note_names_only_the_secrets_of_the_current_domain() -> None:
    guard = PrivacyGuard([Secret("SHOP_PW", "example.com", "s3cret-shop"), Secret("BANK_PIN", "bank.test", "9911-22")])
    note = guard.note(SHOP)
    assert "<secret>SHOP_PW</secret>" in note and "BANK" not in note and "s3cret" not in note
    assert guard.note("https://other.test/") == ""  # nothing of them elsewhere
    assert "<secret>BANK_PIN</secret>" in guard.note("https://www.bank.test/login", "zh-CN")


def test_hide_replaces_secret_values_everywhere_in_a_record() -> None:
    guard = PrivacyGuard([Secret("PW", "example.com", "hunter2-value")])
    event = {"type": "step", "action": {"output": "Typed 'hunter2-value'"}, "list": ["x hunter2-value y", 3]}
    assert json.dumps(guard.hide(event)).count("hunter2-value") == 0
    assert guard.hide(event)["action"]["output"] == "Typed '<secret>PW</secret>'"


# --- the guard: model → page --------------------------------------------------------------------------
@pytest.mark.parametrize("facts, kind", [
    ({"tag": "input", "type": "password"}, "password"),
    ({"tag": "input", "type": "text", "autocomplete": "current-password"}, "password"),  # "show password" is on
    ({"tag": "input", "type": "text", "autocomplete": "one-time-code"}, "one-time code"),
    ({"tag": "input", "type": "text", "autocomplete": "username webauthn"}, "user name"),  # a passkey-ready login
    ({"tag": "input", "type": "email"}, "user name"),
    ({"tag": "input", "type": "text", "name": "loginfmt"}, "user name"),  # identifier first, no hint
    ({"tag": "input", "type": "text", "id": "user_name"}, "user name"),
    ({"tag": "input", "type": "text", "name": "cust", "pairedWithPassword": True}, "user name"),
    ({"tag": "input", "type": "text", "name": "q"}, None),
    ({"tag": "input", "type": "search", "autocomplete": "off"}, None),
    ({"tag": "input", "type": "text", "name": "username-search-results"}, None),
    ({"tag": "textarea", "type": "", "name": "password"}, None),  # a comment box, whatever it is called
    ({"tag": "div", "type": "", "autocomplete": "current-password"}, None),  # an editable area
])
def test_a_secret_belongs_only_in_a_login_field(facts: dict[str, object], kind: str | None) -> None:
    from tabpilot.privacy.fields import credential_field

    assert credential_field(facts) == kind


def test_the_secrets_a_typing_action_may_put_only_into_a_login_field() -> None:
    guard = PrivacyGuard([Secret("PW", "example.com", "hunter2-value"),
                          Secret("KEY", "example.com", "sk-key-value", any_field=True)])
    typed = InputTextInput(index=3, text="<secret>PW</secret> <secret>KEY</secret> <secret>PW</secret>")
    assert guard.login_only("input_text", typed) == ("PW",)
    assert guard.login_only("input_text", InputTextInput(index=3, text="<secret>KEY</secret>")) == ()
    assert "them: <secret>KEY</secret> (any field), <secret>PW</secret>. To type" in guard.note(SHOP)


def test_a_secret_is_put_in_only_on_its_domain() -> None:
    guard = PrivacyGuard([Secret("PW", "example.com", "hunter2-value")])
    typed = InputTextInput(index=3, text="<secret>PW</secret>")
    assert guard.reveal_input("input_text", typed, SHOP).text == "hunter2-value"
    assert typed.text == "<secret>PW</secret>"  # the model's own input (recorded) is unchanged
    with pytest.raises(Refused, match=r"may not be typed on evil\.test.*Nothing was typed"):
        guard.reveal_input("input_text", typed, "https://evil.test/")
    with pytest.raises(Refused, match="no secret named NOPE"):
        guard.reveal_input("input_text", InputTextInput(index=3, text="<secret>NOPE</secret>"), SHOP)
    with pytest.raises(Refused, match="only be typed with input_text"):
        guard.reveal_input("execute_javascript", ScriptInput(script="x = '<secret>PW</secret>'"), SHOP)


def test_a_placeholder_typed_back_is_the_real_value_on_the_site_it_was_seen_on() -> None:
    guard = PrivacyGuard(rules=MaskRules(emails=True))
    guard.conceal("Contact: ada@example.com", "https://crm.example.com/contacts")
    assert guard.reveal("To: [email 1]", "https://crm.example.com/mail") == "To: ada@example.com"
    assert guard.reveal("[email 7]", "https://crm.example.com/") == "[email 7]"  # not one it made
    with pytest.raises(Refused, match=r"\[email 1\] may not be typed on evil.test"):
        guard.reveal("[email 1]", "https://evil.test/")


def test_a_guard_that_goes_on_from_another_names_and_types_back_as_it_did() -> None:
    before = PrivacyGuard(rules=MaskRules(emails=True, cards=True))
    before.conceal(f"Ada: ada@example.com, card {CARD}", "https://crm.example.com/contacts")
    kept = json.loads(json.dumps(before.masks()))  # as kept between hosts
    after = PrivacyGuard(rules=MaskRules(emails=True, cards=True))
    after.go_on_from([*kept, "not an entry", {"placeholder": "[email 9]"}, {"placeholder": "mine", "value": "x",
                                                                             "hosts": []}])
    assert after.conceal("Bob: bob@example.com; Ada: ada@example.com", SHOP) == "Bob: [email 2]; Ada: [email 1]"
    assert after.hide({"typed": f"ada@example.com, {CARD}"}) == {"typed": "[email 1], [card 1]"}
    assert after.reveal("To: [email 1]", "https://crm.example.com/mail") == "To: ada@example.com"  # its site kept
    with pytest.raises(Refused, match=r"\[email 2\] may not be typed on crm.example.com"):
        after.reveal("[email 2]", "https://crm.example.com/mail")
    assert after.reveal("[email 9]", SHOP) == "[email 9]"  # the damaged entries were left out


def test_a_value_that_looks_like_a_tag_is_not_expanded_again() -> None:
    guard = PrivacyGuard([Secret("A", "example.com", "<secret>B</secret>"), Secret("B", "example.com", "bbbb-value")])
    assert guard.reveal("<secret>A</secret>", SHOP) == "<secret>B</secret>"


# --- tabpilot secrets ---------------------------------------------------------------------------------
def test_secrets_cli_set_list_delete_with_stdin_and_an_owner_only_file(tmp_path: Path) -> None:
    domain = "https://Shop.Example.com:8443/"
    # the value read from a real pipe, as a script gives it; the rest in this process
    saved = tabpilot_process(tmp_path, "secrets", "set", "SHOP_PW", "--domain", domain, stdin="pa55-word\n")
    assert saved.returncode == 0, saved.stderr
    assert "saved SHOP_PW for shop.example.com" in saved.stdout and "pa55-word" not in saved.stdout
    # an API key for a settings page may go into any field there: said when it is stored, shown in the list
    any_field = tabpilot(tmp_path, "secrets", "set", "BANK", "--domain", "bank.test", "--any-field", stdin="1234-5678")
    assert any_field.returncode == 0, any_field.stderr
    path = tmp_path / "config" / "secrets.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert not [p for p in path.parent.iterdir() if p.name.startswith(".secrets-")]  # no temp file left
    listed = tabpilot(tmp_path, "secrets", "list")
    assert listed.stdout.splitlines() == ["BANK                    bank.test               any field",
                                          "SHOP_PW                 shop.example.com        login fields only"]
    assert json.loads(tabpilot(tmp_path, "secrets", "list", "--json").stdout) == [
        {"name": "BANK", "domain": "bank.test", "anyField": True},
        {"name": "SHOP_PW", "domain": "shop.example.com", "anyField": False}]
    assert "pa55-word" not in listed.stdout + listed.stderr

    from tabpilot.privacy.secrets import load_secrets
    os.environ["TABPILOT_HOME"] = str(tmp_path)
    try:
        assert {s.name: (s.value, s.any_field) for s in load_secrets()} == {
            "SHOP_PW": ("pa55-word", False), "BANK": ("1234-5678", True)}
    finally:
        del os.environ["TABPILOT_HOME"]

    # a new value for it (a key rotated) keeps it for any field; --no-any-field makes it a login field's again
    again = tabpilot(tmp_path, "secrets", "set", "BANK", "--domain", "bank.test", stdin="8765-4321")
    assert again.returncode == 0, again.stderr
    assert tabpilot(tmp_path, "secrets", "list").stdout.splitlines()[0].endswith("any field")
    tabpilot(tmp_path, "secrets", "set", "BANK", "--domain", "bank.test", "--no-any-field", stdin="8765-4321")
    assert tabpilot(tmp_path, "secrets", "list").stdout.splitlines()[0].endswith("login fields only")

    assert tabpilot(tmp_path, "secrets", "delete", "BANK").stdout.strip() == "deleted BANK"
    missing = tabpilot(tmp_path, "secrets", "delete", "BANK")
    assert missing.returncode == 1 and "no secret named BANK" in missing.stderr
    assert tabpilot(tmp_path, "secrets").stdout.split() == ["SHOP_PW", "shop.example.com", "login", "fields", "only"]


@pytest.mark.parametrize("args, stdin, error", [
    (["set", "PW", "--domain", "example.com"], "", "no value given"),
    (["set", "PW", "--domain", "example.com"], "abc", "at least 4 characters"),
    (["set", "PW", "--domain", "not a domain"], "long-value", "host name with a dot (example.com)"),
    (["set", "PW", "--domain", "shop"], "long-value", "host name with a dot (example.com)"),
    (["set", "1PW", "--domain", "example.com"], "long-value", "not a usable secret name"),
])
def test_secrets_cli_bad_input_says_what_to_do(tmp_path: Path, args: list[str], stdin: str, error: str) -> None:
    result = tabpilot(tmp_path, "secrets", *args, stdin=stdin)
    assert result.returncode == 1 and error in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "config" / "secrets.json").exists()


def test_a_damaged_secrets_file_is_named_with_the_fix(tmp_path: Path) -> None:
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "secrets.json").write_text("{not json")
    result = tabpilot(tmp_path, "secrets", "list")
    assert result.returncode == 1 and "is damaged" in result.stderr and "delete it" in result.stderr


def test_masking_settings_are_shown_and_changed_with_tabpilot_config(tmp_path: Path) -> None:
    shown = tabpilot(tmp_path, "config").stdout
    assert "mask-emails     off" in shown and "mask-cards      on" in shown
    assert tabpilot(tmp_path, "config", "set", "mask-emails", "on").stdout.strip() == "mask-emails set to on"
    assert tabpilot(tmp_path, "config", "set", "mask-cards", "off").returncode == 0
    saved = json.loads((tmp_path / "config" / "config.json").read_text())
    assert (saved["maskEmails"], saved["maskCards"]) == (True, False)
    bad = tabpilot(tmp_path, "config", "set", "mask-ibans", "maybe")
    assert bad.returncode == 1 and "mask-ibans: must be on or off" in bad.stderr
    assert tabpilot(tmp_path, "config", "unset", "mask-cards").stdout.strip() == "mask-cards reset to on"


# --- the host's secrets.* requests (the popup's Privacy section) --------------------------------------
def test_the_host_keeps_a_secret_from_the_popup_and_never_sends_its_value_back(tmp_path: Path) -> None:
    from native_support import HostProcess

    host = HostProcess(tmp_path)
    try:
        added = host.request("secrets.set", name="SHOP_PW", domain="https://shop.example.com/", value="pa55-word-x")
        assert added["ok"], added
        listed = [{"name": "SHOP_PW", "domain": "shop.example.com", "anyField": False}]
        assert added["data"]["secrets"] == listed
        assert host.request("secrets.list")["data"]["secrets"] == listed
        bad = host.request("secrets.set", name="SHOP PW", domain="shop.example.com", value="pa55-word-x")
        assert bad["ok"] is False and bad["error"]["code"] == "bad_request" and "secret name" in bad["error"]["message"]
        short = host.request("secrets.set", name="PIN", domain="bank.test", value="12")
        assert short["ok"] is False and "at least 4 characters" in short["error"]["message"]
        missing = host.request("secrets.delete", name="NOPE")
        assert missing["ok"] is False and missing["error"]["code"] == "not_found"
        assert host.request("ping")["data"] == {"pong": True}  # still answering
        assert host.request("secrets.delete", name="SHOP_PW")["data"]["secrets"] == []
        again = host.request("secrets.set", name="SHOP_PW", domain="shop.example.com", value="pa55-word-y")
        assert again["ok"], again  # use it twice: set again after a delete
        host.close_stdin()
    finally:
        host.proc.wait(10)
    assert b"pa55-word" not in bytes(host.raw)  # never sent back
    for log_file in (tmp_path / "log").iterdir():
        assert "pa55-word" not in log_file.read_text()
    assert json.loads((tmp_path / "config" / "secrets.json").read_text())["secrets"][0]["value"] == "pa55-word-y"


def test_a_secret_a_page_shows_altered_is_hidden_too() -> None:
    # Seen in the attack run: a page echoed a typed secret reversed, spaced out and in capitals, and the model read
    # each. Short values are only hidden as typed: "1234" would take every date and price with it.
    guard = PrivacyGuard([Secret("LOGIN", "example.com", "s3cretValue-xyz-777"), Secret("PIN", "example.com", "1234")])
    page = ("Welcome s3cretValue-xyz-777 | 777-zyx-eulaVterc3s | S3CRETVALUE-XYZ-777 | s 3 c r e t V a l u e - x y z "
            "- 7 7 7 | PIN 1234, 4321, order 12 34")
    assert guard.conceal(page, "https://example.com/") == (
        "Welcome <secret>LOGIN</secret> | <secret>LOGIN</secret> | <secret>LOGIN</secret> | <secret>LOGIN</secret> | "
        "PIN <secret>PIN</secret>, 4321, order 12 34")
    assert guard.hide({"text": page})["text"] == guard.conceal(page, "https://example.com/")  # the record too


def test_a_secret_a_page_shows_encoded_is_hidden_too() -> None:
    # Left by the last attack run: a page showing a stored secret in base64 or hex (an Authorization header it
    # prints, a token) sent it to the model provider. Found wherever it starts in what was encoded; the whole run
    # is hidden (its edges carry bits of the value too). Unrelated base64 and hex stay.
    guard = PrivacyGuard([Secret("LOGIN", "example.com", "hunter2-Secret")])
    login = "<secret>LOGIN</secret>"
    for before in ("", "u", "us", "user:"):
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            shown = encode(f"{before}hunter2-Secret".encode()).decode()
            assert guard.conceal(f"Authorization: Basic {shown} (sent)") == f"Authorization: Basic {login} (sent)"
    hexed = b"hunter2-Secret".hex()
    assert guard.conceal(f"id {hexed.upper()}; key=0x{hexed}.") == f"id {login}; key={login}."
    unrelated = f"hello {base64.b64encode(b'hello world').decode()} and cafe0123456789ab"
    assert guard.conceal(unrelated) == unrelated
    header = f"Basic {base64.b64encode(b'me:hunter2-Secret').decode()}"
    assert guard.hide({"text": header}) == {"text": f"Basic {login}"}


def test_a_secret_a_page_shows_escaped_is_hidden_too() -> None:
    # Found by an attack run: a stored secret a page showed URL-escaped (a connection string), JSON-escaped (Go's
    # encoder writes & as \u0026), as HTML source (&amp;), as a list of its codes or in base64 of UTF-16 reached the
    # model and the record, in the page text, an attribute and a dialog's message alike.
    value = "Tr0ub4dor&3x"
    guard = PrivacyGuard([Secret("DB", "example.com", value)])
    login = "<secret>DB</secret>"
    shown = [quote(value, safe=""), "".join(f"%{b:02X}" for b in value.encode()), value.replace("&", "\\u0026"),
             "".join(f"\\u{ord(c):04x}" for c in value), html.escape(value), "".join(f"&#{ord(c)};" for c in value),
             "".join(f"&#x{ord(c):x};" for c in value), ",".join(str(ord(c)) for c in value),
             ":".join(f"{b:02x}" for b in value.encode()), "".join(f"\\x{b:02x}" for b in value.encode()),
             base64.b64encode(value.encode("utf-16-le")).decode(), base64.b64encode(value.encode("utf-16-be")).decode()]
    for text in shown:
        assert guard.conceal(f"postgres://app:{text}@db (copy)") == f"postgres://app:{login}@db (copy)", text
        assert guard.hide({"memory": f"saw {text}"}) == {"memory": f"saw {login}"}, text
    ordinary = ("Order 84 114 48 on 2024-01-02 at &#38; 0x54, %26 off, \\u0026 total $123.45; "
                "Tr0ub4dor&4x and Tr0ub4dor%264x are other values")
    assert guard.conceal(ordinary) == ordinary


def test_after_a_secret_was_typed_its_page_refuses_copying_and_scripts_until_it_is_replaced() -> None:
    from tabpilot.agent.tools import SendKeysInput

    guard = PrivacyGuard([Secret("PW", "example.com", "hunter2-value")])
    # each page by its document and its history entry: the next page is another of both; the page gone back to is
    # another document at the entry the secret was typed at
    page, next_page, back = [("tab", 1), ("entry", 7)], [("tab", 2), ("entry", 8)], [("tab", 3), ("entry", 7)]
    guard.typed_secret_in(page)
    for keys in ("Control+c", "Meta+X", "Control+a Control+x", "Control+Insert", "Shift+Delete"):
        with pytest.raises(Refused, match="copies or cuts text"):
            guard.check_after_typing("send_keys", SendKeysInput(keys=keys), page)
    with pytest.raises(Refused, match="execute_javascript does not run here"):
        guard.check_after_typing("execute_javascript", ScriptInput(script="1"), page)
    for keys in ("Control+a", "Enter", "Delete", "Control+v", "Control+Nope"):
        guard.check_after_typing("send_keys", SendKeysInput(keys=keys), page)  # nothing of the value leaves
    guard.check_after_typing("send_keys", SendKeysInput(keys="Control+c"), next_page)
    guard.check_after_typing("execute_javascript", ScriptInput(script="1"), next_page)
    with pytest.raises(Refused, match="execute_javascript does not run here"):
        guard.check_after_typing("execute_javascript", ScriptInput(script="1"), back)
