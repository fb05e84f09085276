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
    address = _ip_address(value)
    if address is not None:
        return str(address)
    try:
        value = browser_spelling(value)
    except UnicodeError:
        raise DomainError("domains.not_domain", text=text.strip()) from None
    if not _DOMAIN.match(value) and value not in SINGLE_LABEL_HOSTS:
        raise DomainError("domains.not_domain", text=text.strip())
    return value


# IPv6 addresses that carry an IPv4 one: NAT64's well-known prefix (RFC 6052) reaches it through a translator.
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def _ip_address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address `host` spells, as the browser reads it, with an IPv4 address carried in IPv6 given as itself:
    the browser goes to 127.0.0.1 for 2130706433, 0x7f.1, 0177.0.0.1 and 127.1 alike (the WHATWG URL parser's IPv4
    numbers), and [::ffff:7f00:1], [64:ff9b::7f00:1] and [2002:7f00:1::] (6to4) reach it too. A blocked 127.0.0.1
    held for none of these. None for a host name."""
    try:
        address: ipaddress.IPv4Address | ipaddress.IPv6Address = ipaddress.ip_address(host)
    except ValueError:
        parsed = _whatwg_ipv4(host)
        if parsed is None:
            return None
        address = parsed
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return address.ipv4_mapped
        if address.sixtofour is not None:
            return address.sixtofour
        if address in _NAT64:
            return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return address


_DIGITS = {10: frozenset("0123456789"), 8: frozenset("01234567"), 16: frozenset("0123456789abcdefABCDEF")}


def _whatwg_ipv4(host: str) -> ipaddress.IPv4Address | None:
    """The WHATWG URL standard's IPv4 parser: up to four dot-separated numbers, each decimal, 0x hex or 0-led
    octal, the last filling the bytes left. None when the host is not one (a name, or no valid number)."""
    parts = host.split(".")
    if parts[-1] == "" and len(parts) > 1:
        parts.pop()
    if not 1 <= len(parts) <= 4:
        return None
    numbers = []
    for part in parts:
        if part[:2].lower() == "0x":
            base, digits = 16, part[2:]
        elif len(part) > 1 and part[0] == "0":
            base, digits = 8, part[1:]
        else:
            base, digits = 10, part
        if not part or not set(digits) <= _DIGITS[base]:
            return None
        numbers.append(int(digits, base) if digits else 0)
    last = numbers.pop()
    if any(n > 255 for n in numbers) or last >= 256 ** (4 - len(numbers)):
        return None
    return ipaddress.IPv4Address(sum(n << (8 * (3 - i)) for i, n in enumerate(numbers)) + last)


def browser_spelling(host: str) -> str:
    """A host name as the browser sends it (the WHATWG URL parser's domain to ASCII: UTS 46, nontransitional, not
    strict): mapped (case, width, the ideographic full stops), then each label with letters beyond ASCII in
    Punycode. Python's "idna" codec is IDNA 2003, which spells straße.de as strasse.de, another domain (Chromium goes
    to xn--strae-oqa.de): a blocked straße.de did not hold. UnicodeError (idna.IDNAError) for a disallowed one."""
    mapped = idna.uts46_remap(host, std3_rules=False, transitional=False)
    return ".".join(label if label.isascii() else "xn--" + label.encode("punycode").decode("ascii")
                    for label in mapped.split("."))


def shown_host(host: str) -> str:
    """A host as a person is asked to trust or judge it (an approval question, a guard's card, a step's address): as
    the browser spells it, every label with letters beyond ASCII in Punycode. "аpple.com" with a Cyrillic а reads as
    apple.com; its xn--pple-43d.com does not (Chromium's address bar shows a host of mixed scripts so too). A host the
    browser would refuse has each such label encoded all the same: it is never shown in letters that pass for others."""
    if host.isascii():
        return host
    try:
        return browser_spelling(host)
    except UnicodeError:
        return ".".join(label if label.isascii() else "xn--" + label.lower().encode("punycode").decode("ascii")
                        for label in host.split("."))


# A URL's (or an address's without a scheme) host: after the scheme and any user name, up to a port or the path
_URL_HOST = re.compile(r"^((?:[a-zA-Z][a-zA-Z0-9+.-]*://)?(?:[^/?#@\s]*@)?)([^/?#:@\s\[\]]+)")


def shown_url(url: str) -> str:
    """`url` with its host as shown_host shows it; the rest as it is."""
    if url.isascii():
        return url
    return _URL_HOST.sub(lambda found: found.group(1) + shown_host(found.group(2)), url, count=1)


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
        return shown_host(host.lower())


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
