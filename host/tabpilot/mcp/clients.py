"""`tabpilot mcp config`: the entry that starts this MCP server, in the shape each client's config file
wants, and merging it into that file (other servers and settings kept as they are)."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import paths

SERVER_NAME = "tabpilot"


@dataclass(frozen=True)
class ClientConfig:
    label: str
    servers_key: str  # the object in the file that maps server names to entries
    typed: bool  # VS Code's entries name their transport ("type": "stdio")

    def entry(self, command: str, args: list[str], env: dict[str, str] | None = None) -> dict[str, Any]:
        entry: dict[str, Any] = {"type": "stdio"} if self.typed else {}
        entry.update(command=command, args=args)
        if env:
            entry["env"] = env
        return entry


CLIENTS: dict[str, ClientConfig] = {
    "claude-desktop": ClientConfig("Claude Desktop", "mcpServers", typed=False),
    "cursor": ClientConfig("Cursor", "mcpServers", typed=False),
    "vscode": ClientConfig("VS Code", "servers", typed=True),
}


class ConfigFileError(Exception):
    """The client's config file cannot be merged into; says why and leaves it untouched."""


def config_path(client: str) -> Path:
    """Where the client reads its MCP servers (the user-wide file)."""
    home = Path.home()
    if sys.platform == "darwin":
        app_support = home / "Library" / "Application Support"
    elif sys.platform == "win32":
        app_support = Path(os.environ.get("APPDATA", home / "AppData" / "Roaming"))
    else:
        app_support = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
    if client == "claude-desktop":
        return app_support / "Claude" / "claude_desktop_config.json"
    if client == "cursor":
        return home / ".cursor" / "mcp.json"
    if client == "vscode":
        return app_support / "Code" / "User" / "mcp.json"
    raise ValueError(f"unknown MCP client {client!r} (known: {', '.join(CLIENTS)})")


def server_command(options: list[str]) -> tuple[str, list[str]]:
    """This installation's Python running `tabpilot mcp` (works in a venv or pipx without PATH)."""
    return sys.executable, ["-m", "tabpilot", "mcp", *options]


def server_env() -> dict[str, str]:
    """The environment the server needs from its entry: TABPILOT_HOME when it is set here, so the server the client
    starts (which gets the client's environment, not this shell's) keeps its settings and tasks in the same folder
    as the rest of this tabpilot. Absolute: the client starts it from a folder of its own choosing."""
    home = os.environ.get(paths.HOME_ENV)
    return {paths.HOME_ENV: os.path.abspath(os.path.expanduser(home))} if home else {}


def snippet(client: str, options: list[str]) -> dict[str, Any]:
    """The part of the client's config file that starts this server."""
    config = CLIENTS[client]
    command, args = server_command(options)
    return {config.servers_key: {SERVER_NAME: config.entry(command, args, server_env())}}


def merge_into(path: Path, client: str, options: list[str]) -> bool:
    """Add (or replace) the tabpilot entry in the file; everything else in it is kept. False when the entry was
    there already, as it would be written (the file is then left as it is)."""
    config = CLIENTS[client]
    existing: dict[str, Any] = {}
    if path.exists():
        text = path.read_text(encoding="utf-8")
        if text.strip():
            try:
                existing = json.loads(text)
            except ValueError as exc:
                raise ConfigFileError(f"{path} is not valid JSON ({exc}); fix it, or add the entry by hand") from exc
        if not isinstance(existing, dict):
            raise ConfigFileError(f"{path} does not hold a JSON object; add the entry by hand")
    servers = existing.setdefault(config.servers_key, {})
    if not isinstance(servers, dict):
        raise ConfigFileError(f"{path}: {config.servers_key!r} is not an object; add the entry by hand")
    entry = snippet(client, options)[config.servers_key][SERVER_NAME]
    if servers.get(SERVER_NAME) == entry:
        return False
    servers[SERVER_NAME] = entry
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tabpilot-tmp")
    temporary.write_text(json.dumps(existing, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(temporary, path)
    return True
