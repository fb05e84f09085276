"""Where tabpilot keeps its files. TABPILOT_HOME puts everything under one folder (tests, portable use);
otherwise the platform's usual per-user folders (platformdirs)."""

from __future__ import annotations

import os
from pathlib import Path

HOME_ENV = "TABPILOT_HOME"


def _dir(kind: str, create: bool = True) -> Path:
    home = os.environ.get(HOME_ENV)
    if home:
        path = Path(home) / kind
    else:
        import platformdirs

        path = Path(getattr(platformdirs, f"user_{kind}_dir")("tabpilot", appauthor=False))
    if create:
        _private_folder(path)
    return path


def data_dir() -> Path:
    return _dir("data")


def config_dir() -> Path:
    return _dir("config")


def log_dir() -> Path:
    return _dir("log")


def database_path() -> Path:
    return data_dir() / "tasks.sqlite3"


def config_path(create: bool = True) -> Path:
    """The settings file; `create=False` for a reader that must not leave an empty folder behind (--help)."""
    return _dir("config", create) / "config.json"


def installation_key() -> str:
    """This installation's name among the others of the same user: a digest of its config and data folders. Two
    HOMEs (or XDG_CONFIG_HOME / XDG_DATA_HOME, or TABPILOT_HOME) under one uid — containers, test sandboxes, a
    second profile — are two installations, each with its own settings, record and host."""
    import hashlib

    where = "\0".join(str(_dir(kind, create=False).resolve()) for kind in ("config", "data"))
    return hashlib.sha256(where.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def runtime_dir(short: bool = False) -> Path:
    """Where this installation's running host keeps its local endpoint (its socket and token):
    `<TABPILOT_HOME>/run` with TABPILOT_HOME; otherwise, and with `short` always (a Unix socket path has ~104
    bytes), a folder named by `installation_key()` in the platform's per-user runtime folder (platformdirs:
    /run/user/<uid>/tabpilot/<key> on Linux). Never one folder for the whole uid: a program of one installation
    must not reach the host, the browser and the record of another. Owner-only (0700)."""
    home = os.environ.get(HOME_ENV)
    if home and not short:
        path = Path(home) / "run"
        _private_folder(path)
        return path
    import warnings

    import platformdirs

    with warnings.catch_warnings():  # no XDG_RUNTIME_DIR: platformdirs falls back to /tmp/runtime-<uid>
        warnings.simplefilter("ignore")
        base = Path(platformdirs.user_runtime_dir("tabpilot", appauthor=False))
    _private_folder(base)
    path = base / installation_key()
    _private_folder(path)
    return path


class NotYours(PermissionError):
    """A folder tabpilot keeps its files in belongs to another user."""


def _private_folder(path: Path) -> None:
    """Every folder tabpilot writes in (settings, secrets, the record, logs, the native host's launcher, the socket):
    the user's own and owner-only. One that another user made first (a shared or world-writable TABPILOT_HOME) is
    refused: its owner could read what is written there, or swap the settings or the launcher the browser runs."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    if os.name != "nt":
        if path.stat().st_uid != os.getuid():  # e.g. a /tmp folder someone else made first
            raise NotYours(f"{path} belongs to another user; set TABPILOT_HOME to a folder of yours")
        os.chmod(path, 0o700)  # mkdir's mode is cut by the umask, and an existing folder keeps its own
