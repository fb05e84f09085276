"""Which web sites may start tasks in the user's browser (the page bridge `window.PAGE_AGENT_EXT`).

One JSON file next to the settings, owner-only like them: exact origins (scheme://host[:port], as a
browser writes `location.origin`), each with its grants — `ask` (the user confirms every task),
`useMyModel` (a task without its own baseURL/model may use the user's configured model), `allTabs`
(`experimentalIncludeAllTabs`) — and page-agent's compatibility token (`PageAgentExtUserAuthToken`),
made once and shown in Settings. Beside them, the MCP clients (`tabpilot mcp`) the user answered "Always
allow for this client", by the name the client gives itself. The CLI (`tabpilot sites`), the popup
(through the host) and the host's checks at `task.start` and `approval.ask` all read and write here; the
file is the truth."""

from __future__ import annotations

import json
import re
import secrets
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .. import paths
from ..guards.domains import browser_spelling
from ..i18n import WordedError
from .filelock import changing
from .settings import write_private

TOKEN_NAME = "PageAgentExtUserAuthToken"  # page-agent's localStorage key, kept for compatibility
DEFAULT_PORTS = {"http": 80, "https": 443}
_HOST_NAME = re.compile(r"[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?)*")


class SiteError(WordedError):
    """An origin that cannot be allowed, or a sites file that cannot be read; the message says what to do."""


class SiteGrant(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="ignore")

    origin: str
    ask: bool = False
    use_my_model: bool = Field(default=False, alias="useMyModel")
    all_tabs: bool = Field(default=False, alias="allTabs")
    allowed_at: float = Field(default_factory=time.time, alias="allowedAt")

    def to_wire(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True)


class ClientGrant(BaseModel):
    """An MCP client whose tasks start without asking: its name, as it calls itself, and the program that started the
    `tabpilot mcp` the person said "always" to (`program`, None where the system does not tell it). A name alone is
    anyone's to claim: any other program of the user's could call itself "Claude Desktop"."""

    model_config = ConfigDict(populate_by_name=True, extra="ignore")

    name: str
    program: str | None = None
    allowed_at: float = Field(default_factory=time.time, alias="allowedAt")

    def to_wire(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True)


class SitesFile(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="ignore")

    token: str = Field(default_factory=lambda: secrets.token_urlsafe(24))
    sites: list[SiteGrant] = Field(default_factory=list)
    mcp_clients: list[ClientGrant] = Field(default_factory=list, alias="mcpClients")


def sites_path() -> Path:
    return paths.config_dir() / "sites.json"


def normalize_origin(text: str) -> str:
    """`https://Example.com:443/path` → `https://example.com`: the origin a browser reports for that
    page (the scheme's default port left out). Only http(s); no wildcards, no paths that change it."""
    value = text.strip()
    parts = urlsplit(value)
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS or not parts.netloc:
        raise SiteError("sites.not_origin", text=text)
    if "*" in value:
        raise SiteError("sites.wildcard", text=text)
    if parts.username or parts.password:
        raise SiteError("sites.credentials", text=text)
    host = (parts.hostname or "").lower()
    if not host:
        raise SiteError("sites.no_host", text=text)
    if ":" not in host:  # IPv6 is checked by urlsplit; a name is written as Chromium reports it: punycode
        try:  # UTS 46 as the browser maps it: the "idna" codec (IDNA 2003) made https://straße.de https://strasse.de
            host = browser_spelling(host)
        except UnicodeError:
            raise SiteError("sites.not_origin", text=text) from None
        if not _HOST_NAME.fullmatch(host):
            raise SiteError("sites.not_origin", text=text)
    try:
        port = parts.port
    except ValueError as exc:
        raise SiteError("sites.bad_port", text=text, reason=exc) from None
    if ":" in host:
        host = f"[{host}]"  # IPv6, as browsers write it
    if port is None or port == DEFAULT_PORTS[scheme]:
        return f"{scheme}://{host}"
    return f"{scheme}://{host}:{port}"


def load_sites(path: Path | None = None) -> SitesFile:
    """The saved file; a new one (with a fresh token, saved) when there is none."""
    path = path or sites_path()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        with changing(path):
            if path.exists():  # another process made it meanwhile: its token is the one
                return load_sites(path)
            created = SitesFile()
            save_sites(created, path)
            return created
    except OSError as exc:
        raise SiteError("sites.cannot_read", path=path, reason=exc.strerror or exc) from exc
    try:
        return SitesFile.model_validate(json.loads(text))
    except (json.JSONDecodeError, ValidationError) as exc:
        raise SiteError("sites.damaged", path=path, reason=type(exc).__name__) from exc


def save_sites(sites: SitesFile, path: Path | None = None) -> None:
    path = path or sites_path()
    try:
        write_private(path, json.dumps(sites.model_dump(by_alias=True), indent=2) + "\n", prefix=".sites-")
    except OSError as exc:
        raise SiteError("sites.cannot_save", path=path, reason=exc.strerror or exc) from exc


def find(sites: SitesFile, origin: str) -> SiteGrant | None:
    return next((site for site in sites.sites if site.origin == origin), None)


def allow(origin: str, *, ask: bool = False, use_my_model: bool = False, all_tabs: bool = False,
          path: Path | None = None) -> SiteGrant:
    """Allow (or re-allow with new grants) one origin; returns its grant."""
    origin = normalize_origin(origin)
    with changing(path := path or sites_path()):
        sites = load_sites(path)
        grant = SiteGrant(origin=origin, ask=ask, use_my_model=use_my_model, all_tabs=all_tabs)
        sites.sites = [site for site in sites.sites if site.origin != origin] + [grant]
        save_sites(sites, path)
        return grant


def revoke(origin: str, *, path: Path | None = None) -> bool:
    """Remove one site's grant by its origin: the site loses the bridge. False if there was none."""
    with changing(path := path or sites_path()):
        sites = load_sites(path)
        origin = normalize_origin(origin)
        kept = [grant for grant in sites.sites if grant.origin != origin]
        removed, sites.sites = len(kept) < len(sites.sites), kept
        if removed:
            save_sites(sites, path)
        return removed


def revoke_client(name: str, *, path: Path | None = None) -> bool:
    """Forget an MCP client's "always allow" by its name (from every program it was given to): it is asked again
    before its next task. False if there was none."""
    with changing(path := path or sites_path()):
        sites = load_sites(path)
        kept = [grant for grant in sites.mcp_clients if grant.name != name]
        removed, sites.mcp_clients = len(kept) < len(sites.mcp_clients), kept
        if removed:
            save_sites(sites, path)
        return removed


def stop_asking(origin: str, path: Path | None = None) -> None:
    """The user answered "always" to a site's prompt: its tasks start without asking from now on."""
    with changing(path := path or sites_path()):
        sites = load_sites(path)
        grant = find(sites, origin)
        if grant is not None and grant.ask:
            grant.ask = False
            save_sites(sites, path)


def client_allowed(name: str, program: str | None, path: Path | None = None) -> bool:
    """Whether the user always allows this MCP client, by its name and the program that started it (read afresh: a
    revoke counts at once). A grant kept before programs were (none named) is asked again, once."""
    return any(client.name == name and client.program == program for client in load_sites(path).mcp_clients)


def allow_client(name: str, program: str | None, path: Path | None = None) -> None:
    """The user answered "Always allow for this client": its tasks start without asking from now on, when they come
    from the same program."""
    with changing(path := path or sites_path()):
        sites = load_sites(path)
        if not any(client.name == name and client.program == program for client in sites.mcp_clients):
            sites.mcp_clients.append(ClientGrant(name=name, program=program))
            save_sites(sites, path)


def new_token(path: Path | None = None) -> str:
    """Replace page-agent's token: every page that held the old one loses the bridge."""
    with changing(path := path or sites_path()):
        sites = load_sites(path)
        sites.token = SitesFile().token
        save_sites(sites, path)
        return sites.token


def public_view(sites: SitesFile) -> dict[str, Any]:
    """The `sites.list` reply: the grants, the MCP clients always allowed, and the token page-agent apps
    store in localStorage."""
    return {"sites": [site.to_wire() for site in sites.sites],
            "mcpClients": [client.to_wire() for client in sites.mcp_clients],
            "token": sites.token, "tokenName": TOKEN_NAME}


__all__ = ["ClientGrant", "SiteError", "SiteGrant", "SitesFile", "allow", "allow_client", "client_allowed",
           "find", "load_sites", "new_token", "normalize_origin", "public_view", "revoke", "revoke_client",
           "save_sites", "sites_path", "stop_asking"]
