"""Allowed and blocked domains: a domain is that host and its subdomains, on any port and scheme.

A task's policy is the settings' global lists plus what the task adds (`tabpilot run --allow-domain`, the
page bridge's own origin for a task a web page started). Blocked wins over allowed; with no allowed
domain at all, every domain not blocked is allowed. Only http(s) and ws(s) URLs have a domain to judge:
about:blank, data: and the browser's own pages are not network requests to a site; a blob: or filesystem: URL is
judged by the site's URL inside it (its document is that site's)."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

import idna

from ..i18n import WordedError

NETWORK_SCHEMES = ("http", "https", "ws", "wss")
_DOMAIN = re.compile(r"^(?:[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?\.)+[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?$")
SINGLE_LABEL_HOSTS = ("localhost",)  # the one host name without a dot taken as a domain; "not", "a" are typos
LIST_SEPARATORS = re.compile(r"[\r\n,]+")  # lines and commas, never spaces: "not a domain!" stays one entry


class DomainError(WordedError):
    """Not a domain; the message says what was expected."""


def normalize_domain(text: str) -> str:
    """`https://Shop.Example:8443/cart` → `shop.example`; `*.example.com` → `example.com` (its subdomains
    are in anyway). Raises DomainError for anything that is not a host name with a dot, localhost or an
    IP address."""
    value = text.strip()  # not .lower(): it writes a capital Σ before "-" as ς, which the browser does not
    if "://" in value:
        netloc = urlsplit(value).netloc.rpartition("@")[2]
        value = netloc[1:netloc.index("]")] if netloc.startswith("[") and "]" in netloc else netloc.split(":", 1)[0]
    else:
        value = value.split("/", 1)[0]
        if value.startswith("[") and "]" in value:
            value = value[1:value.index("]")]
        elif value.count(":") == 1:
            value = value.split(":", 1)[0]
    value = value.removeprefix("*.").strip(".")
    if not value:
        raise DomainError("domains.not_domain", text=text.strip())
    try:
        address = ipaddress.ip_address(value)
    except ValueError:
        pass
    else:  # [::ffff:127.0.0.1] is 127.0.0.1 written as IPv6 (the browser shows it as [::ffff:7f00:1]): the same host
        return str(getattr(address, "ipv4_mapped", None) or address)
    try:
        value = browser_spelling(value)
    except UnicodeError:
        raise DomainError("domains.not_domain", text=text.strip()) from None
    if not _DOMAIN.match(value) and value not in SINGLE_LABEL_HOSTS:
        raise DomainError("domains.not_domain", text=text.strip())
    return value


def browser_spelling(host: str) -> str:
    """A host name as the browser sends it (the WHATWG URL parser's domain to ASCII: UTS 46, nontransitional, not
    strict): mapped (case, width, the ideographic full stops), then each label with letters beyond ASCII in
    Punycode. Python's "idna" codec is IDNA 2003, which spells straße.de as strasse.de, another domain (Chromium goes
    to xn--strae-oqa.de): a blocked straße.de did not hold. UnicodeError (idna.IDNAError) for a disallowed one."""
    mapped = idna.uts46_remap(host, std3_rules=False, transitional=False)
    return ".".join(label if label.isascii() else "xn--" + label.encode("punycode").decode("ascii")
                    for label in mapped.split("."))


def parse_domains(value: object) -> list[str]:
    """A list of domains from a list, or from text separated by commas or lines (`tabpilot config set`)."""
    if value is None:
        return []
    items: Iterable[object] = LIST_SEPARATORS.split(value) if isinstance(value, str) else value  # type: ignore[assignment]
    if not isinstance(items, Iterable):
        raise DomainError("domains.not_list")
    return list(dict.fromkeys(normalize_domain(str(item)) for item in items if str(item).strip()))


# A document at blob:https://site/… or filesystem:https://site/… is one of that site's own (its origin, its
# cookies): judged as the site's URL inside.
INNER_URL_SCHEMES = ("blob:", "filesystem:")


def host_of(url: str) -> str | None:
    """The host a network URL goes to, normalized; None for a URL that is no network request to a site."""
    while url[:11].lower().startswith(INNER_URL_SCHEMES):
        url = url.split(":", 1)[1]
    try:
        parts = urlsplit(url)
        if parts.scheme.lower() not in NETWORK_SCHEMES:
            return None
        host = parts.hostname
    except ValueError:
        return None
    if not host:
        return None
    try:
        return normalize_domain(host)
    except DomainError:
        return host.lower()


def matches(host: str, domain: str) -> bool:
    return host == domain or host.endswith("." + domain)


@dataclass(frozen=True)
class DomainPolicy:
    allowed: tuple[str, ...] = ()
    blocked: tuple[str, ...] = ()

    @classmethod
    def of(cls, allowed: Iterable[str] = (), blocked: Iterable[str] = ()) -> DomainPolicy:
        return cls(tuple(dict.fromkeys(allowed)), tuple(dict.fromkeys(blocked)))

    @property
    def restricts(self) -> bool:
        return bool(self.allowed or self.blocked)

    def refusal(self, url: str) -> str | None:
        """Why the agent may not go to `url` (the words the model and the user see), or None if it may."""
        host = host_of(url)
        if host is None:
            return None
        if any(matches(host, domain) for domain in self.blocked):
            return f"Navigation to {host} was blocked: it is on the blocked domains list"
        if self.allowed and not any(matches(host, domain) for domain in self.allowed):
            return f"Navigation to {host} was blocked: not in this task's allowed domains"
        return None


class StartRefused(WordedError):
    """A task may not start on this page: its domains keep the agent from it (the navigation guard only stops the
    agent going somewhere, so the page it starts on is checked once, for every way a task starts)."""


def start_refusal(policy: DomainPolicy | None, url: str | None) -> StartRefused | None:
    """Why a task whose domains are `policy` may not start on (or first open) `url`; None when it may."""
    host = host_of(url) if policy is not None and url else None
    if policy is None or host is None or policy.refusal(str(url)) is None:
        return None
    blocked = next((domain for domain in policy.blocked if matches(host, domain)), None)
    if blocked is not None:  # blocked domains win over allowed ones
        return StartRefused("start.blocked_domain", host=host, domain=blocked)
    return StartRefused("start.outside_domains", host=host, allowed=", ".join(policy.allowed))
