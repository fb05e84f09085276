"""The Chromium-family browsers tabpilot works with, and where each one's program is installed on each OS.

One list serves both users of it: the launcher starts the first program found (`tabpilot run`, `state`,
`demo`, the tests), and `tabpilot install` registers the native host with every browser whose program
is there, even one that has never been started.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

BROWSERS = ("chrome", "chromium", "edge", "brave")


def program_candidates() -> list[tuple[str | None, str]]:
    """(browser, program path) for every place a program may be, in the order the launcher prefers
    them; the browser is None for a program that has its own settings (Chrome Canary)."""
    if sys.platform == "darwin":
        apps = [("chrome", "Google Chrome"), ("chromium", "Chromium"), ("edge", "Microsoft Edge"),
                ("brave", "Brave Browser"), (None, "Google Chrome Canary")]
        return [
            (browser, str(base / f"{app}.app/Contents/MacOS/{app}"))
            for base in (Path("/Applications"), Path.home() / "Applications")
            for browser, app in apps
        ]
    if sys.platform == "win32":
        roots = [os.environ.get(v, "") for v in ("PROGRAMFILES", "PROGRAMFILES(X86)", "LOCALAPPDATA")]
        # as path parts, not one backslash string, so the list can be checked on any system
        rel = [
            ("chrome", ("Google", "Chrome", "Application", "chrome.exe")),
            ("chromium", ("Chromium", "Application", "chrome.exe")),
            ("edge", ("Microsoft", "Edge", "Application", "msedge.exe")),
            ("brave", ("BraveSoftware", "Brave-Browser", "Application", "brave.exe")),
        ]
        return [(browser, str(Path(root, *parts))) for root in roots if root for browser, parts in rel]
    # Linux and the BSDs. Debian's /usr/bin/chromium is a wrapper script that adds its own flags and
    # prints shell errors, so the real binary behind it comes first.
    found: list[tuple[str | None, str]] = [
        ("chromium", "/usr/lib/chromium/chromium"),
        ("chromium", "/usr/lib/chromium-browser/chromium-browser"),
        ("chrome", "/opt/google/chrome/chrome"),
        ("edge", "/opt/microsoft/msedge/msedge"),
        ("brave", "/opt/brave.com/brave/brave"),
    ]
    on_path = [("chrome", "google-chrome"), ("chrome", "google-chrome-stable"), ("chromium", "chromium"),
               ("chromium", "chromium-browser"), ("edge", "microsoft-edge"), ("edge", "microsoft-edge-stable"),
               ("brave", "brave-browser"), ("brave", "brave")]
    for browser, name in on_path:
        path = shutil.which(name)
        if path:
            found.append((browser, path))
    return found


def is_program(path: str) -> bool:
    return Path(path).is_file() and os.access(path, os.X_OK)


def installed_browsers() -> list[str]:
    """The browsers (of BROWSERS, in that order) whose program is installed on this computer."""
    present = {browser for browser, path in program_candidates() if browser and is_program(path)}
    return [browser for browser in BROWSERS if browser in present]
