"""Which pages a secret or a masked value belongs to: a domain matches that host and its subdomains, on
any port and scheme; `localhost` and `127.0.0.1` are different domains. Only web pages (http, https)
match: about:blank, file:, data: and the browser's own pages never do."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

WEB_SCHEMES = ("http", "https")
_HOST = re.compile(r"^[a-z0-9._:-]+$")


class DomainError(ValueError):
    """Not a domain a secret can be tied to; the message says what to give instead."""


def normalize_domain(text: str) -> str:
    """`example.com` from `Example.COM`, `https://example.com:8443/login`, `*.example.com` or `.example.com`."""
    value = text.strip().lower()
    value = value.removeprefix("*.").lstrip(".")
    host = urlsplit(value if "://" in value else f"//{value}").hostname or ""
    host = host.rstrip(".")
    if not host or not _HOST.match(host):
        raise DomainError(f"{text!r} is not a domain; give a host name such as example.com")
    return host


def page_host(url: str | None) -> str | None:
    """The lower-case host of a web page's URL; None for anything that is not an http(s) page."""
    if not url:
        return None
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        return None
    if parts.scheme.lower() not in WEB_SCHEMES or not host:
        return None
    return host.rstrip(".")


def domain_matches(domain: str, url: str | None) -> bool:
    """True if the page at `url` is on `domain` or one of its subdomains."""
    host = page_host(url)
    if host is None:
        return False
    return host == domain or host.endswith(f".{domain}")
