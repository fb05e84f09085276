"""Which pages a secret or a masked value belongs to: a domain matches that host and its subdomains, on
any port and scheme; `localhost` and `127.0.0.1` are different domains. Only web pages (http, https)
match: about:blank, file:, data: and the browser's own pages never do. What a domain is (and the error for
what is not one) is guards/domains.py's, the same rule as the allowed and blocked domains."""

from __future__ import annotations

from urllib.parse import urlsplit

from ..guards.domains import DomainError, matches, normalize_domain

__all__ = ["DomainError", "domain_matches", "normalize_domain", "page_host"]

WEB_SCHEMES = ("http", "https")


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
    return host is not None and matches(host, domain)
