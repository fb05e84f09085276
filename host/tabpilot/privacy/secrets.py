"""The user's secrets: a name, the domain it may be typed on, and a value the model never sees.

The names and domains live in `secrets.json` in the config folder (owner-only, written atomically).
The values live there too, unless the `keyring` package is installed and has a usable backend (the OS
keychain): then they go to the keychain under the service "tabpilot". With TABPILOT_HOME set
(tests, portable use) everything stays in the file, and TABPILOT_SECRETS_BACKEND=file forces that too.

A secret goes only into a login field (privacy/fields.py) unless it was stored with `any_field` (an API key
typed into a settings page): an entry's `"any_field": true`."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import paths
from ..i18n import WordedError
from ..store.settings import write_private
from .domains import DomainError, normalize_domain

KEYRING_SERVICE = "tabpilot"
BACKEND_ENV = "TABPILOT_SECRETS_BACKEND"  # "file" keeps values in the file even with a keychain at hand
NAME_PATTERN = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,63}$")
MIN_VALUE_LENGTH = 4  # shorter values would be found (and hidden) in too much unrelated text


class SecretError(WordedError):
    """A secret that cannot be stored, found or read; the message says what to do."""


@dataclass(frozen=True)
class Secret:
    name: str
    domain: str
    value: str = field(repr=False)
    any_field: bool = False  # typed into any text field of its domain, not only a login field


@dataclass(frozen=True)
class Listed:
    """A secret as `list_secrets` shows it: never its value."""

    name: str
    domain: str
    any_field: bool = False

    def as_json(self) -> dict[str, Any]:
        """As `secrets list --json` prints it and the popup gets it."""
        return {"name": self.name, "domain": self.domain, "anyField": self.any_field}


def secrets_path() -> Path:
    return paths.config_dir() / "secrets.json"


def check_name(name: str) -> str:
    if not NAME_PATTERN.match(name or ""):
        raise SecretError("secrets.bad_name", name=name)
    return name


def check_domain(domain: str) -> str:
    """The domain a secret may be typed on, normalized; the allowed domains' rule and words."""
    try:
        return normalize_domain(domain)
    except DomainError as exc:
        raise SecretError(exc.key, **exc.values) from exc


def _keyring() -> Any | None:
    """The keyring module when it can really store values here, else None (the file keeps them)."""
    if os.environ.get(paths.HOME_ENV) or os.environ.get(BACKEND_ENV, "").lower() == "file":
        return None
    try:
        import keyring  # type: ignore[import-not-found]
        from keyring.backends import fail  # type: ignore[import-not-found]
    except Exception:
        return None
    try:
        backend = keyring.get_keyring()
    except Exception:
        return None
    if isinstance(backend, fail.Keyring) or getattr(backend, "priority", 0) <= 0:
        return None
    return keyring


def backend_name() -> str:
    return "the system keychain" if _keyring() is not None else f"the owner-only file {secrets_path()}"


def _read(path: Path) -> list[dict[str, Any]]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise SecretError("secrets.cannot_read", path=path, reason=exc.strerror or exc) from exc
    try:
        data = json.loads(text) if text.strip() else {}
        entries = data.get("secrets", []) if isinstance(data, dict) else None
        if not isinstance(entries, list) or not all(
            isinstance(e, dict) and isinstance(e.get("name"), str) and isinstance(e.get("domain"), str)
            for e in entries
        ):
            raise ValueError("unexpected shape")
    except ValueError as exc:
        raise SecretError("secrets.damaged", path=path, reason=exc) from exc
    return entries


def _write(path: Path, entries: list[dict[str, Any]]) -> None:
    write_private(path, json.dumps({"secrets": entries}, indent=2, ensure_ascii=False) + "\n", prefix=".secrets-")


def _any_field(entry: dict[str, Any]) -> bool:
    return entry.get("any_field") is True  # only as `set_secret` writes it: anything else keeps the safe default


def list_secrets(path: Path | None = None) -> list[Listed]:
    """Every secret, by name; never a value."""
    entries = _read(path or secrets_path())
    return sorted((Listed(e["name"], e["domain"], _any_field(e)) for e in entries), key=lambda s: s.name)


def set_secret(
    name: str, domain: str, value: str, path: Path | None = None, *, any_field: bool | None = None
) -> Secret:
    """Store (or replace) the secret `name`, typed only on `domain` and its subdomains, into a login field
    there (or any text field with `any_field`; None keeps what a secret saved again had: a new value for an API
    key must not quietly turn it back into a login-only secret)."""
    check_name(name)
    domain = check_domain(domain)
    value = value.rstrip("\r\n")
    if len(value) < MIN_VALUE_LENGTH:
        raise SecretError("secrets.too_short", length=MIN_VALUE_LENGTH)
    path = path or secrets_path()
    stored = _read(path)
    if any_field is None:
        any_field = any(e["name"] == name and _any_field(e) for e in stored)
    entries = [e for e in stored if e["name"] != name]
    entry: dict[str, Any] = {"name": name, "domain": domain}
    if any_field:
        entry["any_field"] = True
    keyring = _keyring()
    if keyring is not None:
        try:
            keyring.set_password(KEYRING_SERVICE, name, value)
        except Exception as exc:
            raise SecretError("secrets.keychain_refused", reason=exc, variable=BACKEND_ENV) from exc
    else:
        entry["value"] = value
    _write(path, [*entries, entry])
    return Secret(name, domain, value, any_field)


def delete_secret(name: str, path: Path | None = None) -> bool:
    """False if there was no such secret."""
    path = path or secrets_path()
    entries = _read(path)
    kept = [e for e in entries if e["name"] != name]
    if len(kept) == len(entries):
        return False
    _write(path, kept)
    keyring = _keyring()
    if keyring is not None:
        try:
            keyring.delete_password(KEYRING_SERVICE, name)
        except Exception:
            pass  # it was kept in the file, or is already gone
    return True


def load_secrets(path: Path | None = None) -> list[Secret]:
    """Every secret with its value (for a task's guard; never shown)."""
    keyring = _keyring()
    loaded = []
    for entry in _read(path or secrets_path()):
        value = entry.get("value")
        if value is None and keyring is not None:
            try:
                value = keyring.get_password(KEYRING_SERVICE, entry["name"])
            except Exception:
                value = None
        if isinstance(value, str) and value:
            loaded.append(Secret(entry["name"], entry["domain"], value, _any_field(entry)))
    return loaded
