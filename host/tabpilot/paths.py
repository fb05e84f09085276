"""Where tabpilot keeps its files. TABPILOT_HOME puts everything under one folder (tests, portable use);
otherwise the platform's usual per-user folders (platformdirs)."""

from __future__ import annotations

import os
from pathlib import Path

HOME_ENV = "TABPILOT_HOME"


def _dir(kind: str) -> Path:
    home = os.environ.get(HOME_ENV)
    if home:
        path = Path(home) / kind
    else:
        import platformdirs

        path = Path(getattr(platformdirs, f"user_{kind}_dir")("tabpilot", appauthor=False))
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


def config_path() -> Path:
    return config_dir() / "config.json"
