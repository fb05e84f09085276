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
        path.mkdir(parents=True, exist_ok=True)
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


def runtime_dir() -> Path:
    """Where the running host's local endpoint lives (its socket and token): the platform's per-user
    runtime folder (platformdirs; /run/user/<uid>/tabpilot on Linux), `<TABPILOT_HOME>/run` with
    TABPILOT_HOME. Owner-only (0700): only this user can reach what is in it."""
    home = os.environ.get(HOME_ENV)
    if home:
        path = Path(home) / "run"
    else:
        import warnings

        import platformdirs

        with warnings.catch_warnings():  # no XDG_RUNTIME_DIR: platformdirs falls back to /tmp/runtime-<uid>
            warnings.simplefilter("ignore")
            path = Path(platformdirs.user_runtime_dir("tabpilot", appauthor=False))
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    if os.name != "nt":
        if path.stat().st_uid != os.getuid():  # e.g. a /tmp folder someone else made first
            raise PermissionError(f"{path} belongs to another user; set TABPILOT_HOME to a folder of yours")
        os.chmod(path, 0o700)  # mkdir's mode is cut by the umask, and an existing folder keeps its own
    return path
