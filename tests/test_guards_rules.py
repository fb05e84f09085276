"""The guards' rules, browser-free: what a domain is and which URLs a policy refuses; which element names
make a click irreversible (English and Chinese); the settings and `tabpilot config` keys."""

from __future__ import annotations

import pytest

from tabpilot.guards.domains import (
    DomainError,
    DomainPolicy,
    normalize_domain,
    parse_domains,
    shown_url,
    start_refusal,
)
from tabpilot.guards.irreversible import name_reason
from tabpilot.store.settings import Settings, SettingsError, apply_changes, public_view


@pytest.mark.parametrize(("text", "domain"), [
    ("Shop.Example", "shop.example"), ("https://shop.example:8443/cart?x=1", "shop.example"),
    ("*.example.com", "example.com"), ("example.com:80", "example.com"), ("127.0.0.1", "127.0.0.1"),
    ("[::1]:8000", "::1"), ("localhost", "localhost"), ("bücher.example", "xn--bcher-kva.example"),
    # as Chromium spells them (tests/test_guards_navigation.py asks its URL parser): ß and ς kept, a capital Σ is σ
    # wherever it stands, the ideographic full stops are dots
    ("straße.de", "xn--strae-oqa.de"), ("ΣΟΦΟΣ-SHOP.gr", "xn---shop-qcea4ac2a.gr"), ("straße。de", "xn--strae-oqa.de"),
    ("https://u:p@STRAßE．de:8443/x", "xn--strae-oqa.de"),
])
def test_a_domain_is_a_host_whatever_it_was_written_as(text: str, domain: str) -> None:
    assert normalize_domain(text) == domain


@pytest.mark.parametrize("text", ["", "  ", "http://", "two words", "exa$mple.com", "not", "com"])
def test_what_is_not_a_domain_is_refused_with_an_example(text: str) -> None:
    with pytest.raises(DomainError, match=r"a host name with a dot \(example\.com\), localhost or an IP address"):
        parse_domains([text]) if text.strip() else normalize_domain(text)


def test_a_domain_covers_its_subdomains_on_any_port_but_not_lookalikes() -> None:
    policy = DomainPolicy.of(allowed=["shop.example"])
    for url in ("https://shop.example/", "http://www.shop.example:8080/x", "wss://api.shop.example/socket"):
        assert policy.refusal(url) is None, url
    for url in ("https://evilshop.example/", "https://shop.example.evil.test/", "http://example/"):
        assert policy.refusal(url) == (
            f"Navigation to {url.split('/')[2]} was blocked: not in this task's allowed domains"), url
    # not a request to a site: nothing to judge
    for url in ("about:blank", "data:text/html,hi", "chrome-error://chromewebdata/", "javascript:void(0)"):
        assert policy.refusal(url) is None


def test_blocked_wins_over_allowed_and_localhost_is_not_127_0_0_1() -> None:
    policy = DomainPolicy.of(allowed=["example.com"], blocked=["pay.example.com", "localhost"])
    assert policy.refusal("https://pay.example.com/x") == (
        "Navigation to pay.example.com was blocked: it is on the blocked domains list")
    assert policy.refusal("https://www.example.com/") is None
    assert DomainPolicy.of(blocked=["localhost"]).refusal("http://127.0.0.1:8000/") is None
    assert DomainPolicy.of(blocked=["localhost"]).refusal("http://localhost:8000/") is not None
    assert not DomainPolicy.of().restricts and DomainPolicy.of(blocked=["x.test"]).restricts


def test_a_blocked_host_is_blocked_in_a_blob_url_and_as_an_ipv4_mapped_address() -> None:
    # A page on a blocked site that moved itself to a blob: URL of its own (an invoice, a generated page) had no
    # host to judge, and [::ffff:127.0.0.1] reaches 127.0.0.1: a task started on either worked on the blocked site.
    policy = DomainPolicy.of(blocked=["127.0.0.1", "bank.example"])
    for url in ("blob:http://127.0.0.1:8000/7c0a2f4e-1b1d-4b9a-9a36-0f9c2e1d5b11", "BLOB:https://www.bank.example/x",
                "filesystem:https://bank.example/temporary/a.html", "http://[::ffff:127.0.0.1]:8000/",
                "http://[::ffff:7f00:1]/"):
        assert policy.refusal(url) is not None, url
        assert start_refusal(policy, url) is not None, url
    assert policy.refusal("blob:https://shop.example/7c0a") is None
    assert policy.refusal("blob:null/7c0a") is None  # an opaque origin's: no site
    assert normalize_domain("[::ffff:10.0.0.1]") == "10.0.0.1" and normalize_domain("::1") == "::1"


def test_a_blocked_ipv4_address_is_blocked_however_the_url_spells_it() -> None:
    # The browser goes to 127.0.0.1 for each of these (the WHATWG URL parser's IPv4 numbers), and NAT64 and 6to4
    # addresses carry it: the model's go_to_url and a task's first page were judged as hosts named "2130706433".
    policy = DomainPolicy.of(blocked=["127.0.0.1", "10.0.0.1"])
    for url in ("http://2130706433/", "http://0x7f.1/", "http://127.1:8000/", "http://0177.0.0.1/",
                "http://0x7f000001/", "http://127.0.0.1./", "http://[64:ff9b::7f00:1]/", "http://[2002:7f00:1::]/",
                "http://[2002:7f00:1:5::9]/", "http://10.1/", "http://10.0.1/", "http://0xa.0.0.1/"):
        assert policy.refusal(url) is not None, url
        assert start_refusal(policy, url) is not None, url
    # not IPv4 numbers (the browser refuses these URLs as invalid, or they are names): judged as written
    for url in ("http://1.2.3.4.5/", "http://256.1.1.1/", "http://09.1/", "http://1e3/", "http://1..2/",
                "http://example.com/", "http://[64:ff9b:1::7f00:1]/"):
        assert policy.refusal(url) is None, url
    assert normalize_domain("0x7f.1") == "127.0.0.1" and normalize_domain("[2002:a00:1::]") == "10.0.0.1"
    allowed = DomainPolicy.of(allowed=["shop.example"])
    assert start_refusal(allowed, "blob:http://127.0.0.1:8000/7c0a") is not None


@pytest.mark.parametrize("name", [
    "Place order", "Buy now", "Pay €12", "Send", "Delete account", "Remove from cart", "Transfer money",
    "Publish post", "Confirm", "Proceed to checkout", "Complete purchase", "Payment", "Sending…",
    "立即购买", "支付", "确认付款", "提交订单", "下单", "发送", "删除", "移除", "转账", "发布", "确认",
])
def test_irreversible_names(name: str) -> None:
    assert name_reason(name) is not None


@pytest.mark.parametrize("name", ["Sign up", "Next", "Save nickname", "Add one", "Search", "Payday loans? No: Sender",
                                  "Ordinary", "购物车", "Does nothing", ""])
def test_ordinary_names(name: str) -> None:
    assert name_reason(name) is None, name


def test_settings_keep_domain_lists_and_ask_before_in_any_spelling() -> None:
    settings = apply_changes(Settings(), {"allowed-domains": "Shop.Example, https://docs.example/x",
                                          "blockedDomains": ["evil.test"], "ask_before": "every"})
    assert settings.allowed_domains == ["shop.example", "docs.example"]
    view = public_view(settings)
    assert (view["allowedDomains"], view["blockedDomains"], view["askBefore"]) == (
        ["shop.example", "docs.example"], ["evil.test"], "every")
    assert Settings().ask_before == "irreversible"  # the default asks before irreversible actions
    assert "allowedDomains" not in Settings().to_file()  # defaults stay out of the file
    with pytest.raises(SettingsError, match="ask-before"):
        apply_changes(Settings(), {"ask-before": "sometimes"})
    with pytest.raises(SettingsError, match=r"allowed-domains: .*not a domain"):
        apply_changes(Settings(), {"allowed-domains": "exa$mple.com"})


def test_a_domain_list_is_split_on_lines_and_commas_only_and_one_word_names_are_refused() -> None:
    """A line "not a domain!" is refused whole (it once became "not", "a", "domain!" and only the last was
    refused); a single word without a dot is a typo, except localhost; IP addresses stay domains."""
    with pytest.raises(SettingsError) as refused:
        apply_changes(Settings(), {"blocked-domains": "ads.example\nnot a domain!"})
    assert str(refused.value) == ("blocked-domains: 'not a domain!' is not a domain: give a host name with a dot "
                                  "(example.com), localhost or an IP address")
    for typo in ("not", "a", "example.", "ads.example intranet"):
        with pytest.raises(SettingsError, match=f"'{typo}' is not a domain"):
            apply_changes(Settings(), {"blockedDomains": ["evil.test", typo]})
    settings = apply_changes(Settings(), {"blocked-domains": "ads.example\r\nLocalhost, 127.0.0.1\n[::1]\n\n*.x.org"})
    assert settings.blocked_domains == ["ads.example", "localhost", "127.0.0.1", "::1", "x.org"]


def test_a_task_a_page_started_may_go_only_to_that_pages_domain_and_the_allowed_ones() -> None:
    from tabpilot.native.messages import TaskStart
    from tabpilot.native.tasks import _overrides
    from tabpilot.taskrun.plan import plan_task

    settings = Settings(base_url="http://127.0.0.1:9/v1", model="m", api_key="sk-0123456789abcdef",
                        allowed_domains=["docs.example"], blocked_domains=["evil.test"])
    page = TaskStart.model_validate({"type": "task.start", "id": "1", "task": "t", "tabId": 3, "source": "page",
                                     "origin": "https://App.Example:8443"})
    plan = plan_task("t", _overrides(page), source="page", settings=settings)
    assert plan.domains == DomainPolicy(allowed=("docs.example", "app.example"), blocked=("evil.test",))
    assert plan.domains.refusal("https://www.app.example/next") is None
    assert plan.domains.refusal("https://elsewhere.example/") is not None
    popup = TaskStart.model_validate({"type": "task.start", "id": "2", "task": "t", "tabId": 3, "source": "popup"})
    plan = plan_task("t", _overrides(popup), source="popup", settings=Settings(
        base_url="http://127.0.0.1:9/v1", model="m", api_key="sk-0123456789abcdef"))
    assert plan.domains is None  # nothing restricted: no guard is installed at all


def test_tabpilot_config_sets_shows_and_refuses_the_guard_settings(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from test_config import tabpilot

    done = tabpilot(tmp_path, "config", "set", "allowed-domains", "Shop.Example, https://docs.example/help")
    assert done.returncode == 0 and "allowed-domains set to shop.example, docs.example" in done.stdout, done
    assert tabpilot(tmp_path, "config", "set", "blocked-domains", "evil.test").returncode == 0
    bad = tabpilot(tmp_path, "config", "set", "ask-before", "sometimes")
    assert bad.returncode == 1 and "ask-before" in bad.stderr and "never" in bad.stderr, bad
    shown = tabpilot(tmp_path, "config").stdout
    assert "allowed-domains shop.example, docs.example" in shown and "blocked-domains evil.test" in shown, shown
    assert "ask-before      irreversible" in shown, shown
    reset = tabpilot(tmp_path, "config", "unset", "allowed-domains")
    assert "allowed-domains reset to (any domain not blocked)" in reset.stdout, reset  # as the listing says it


@pytest.mark.parametrize(("url", "shown"), [
    ("https://\u0430pple.com/login?next=\u00fc", "https://xn--pple-43d.com/login?next=\u00fc"),  # a Cyrillic а
    ("\u0430pple.com:8443/a", "xn--pple-43d.com:8443/a"),  # as the model may write it, no scheme
    ("http://ada@stra\u00dfe.de/", "http://ada@xn--strae-oqa.de/"),  # UTS 46 as the browser: not strasse.de
    ("https://example.com/\u00fcber", "https://example.com/\u00fcber"),  # an ASCII host: as it is
    ("http://[::1]:8000/\u00fc", "http://[::1]:8000/\u00fc"),
    ("http://a\u202eb.com/", "http://xn--ab-g4t.com/"),  # a host the browser refuses: no letters that pass for others
])
def test_a_site_is_shown_for_a_trust_decision_as_the_browser_spells_it(url: str, shown: str) -> None:
    assert shown_url(url) == shown
