"""The Chromium-family browsers this user is running now that were started with a profile folder of their own
(`--user-data-dir`): such a browser reads the native host's registration from that folder only, so one registered
in the browsers' usual folders does nothing for it (`tabpilot doctor` and `install` point at it).

Linux only (read from /proc); elsewhere there are none to tell of.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .launcher import PROFILE_PREFIX

PROC = Path("/proc")
# The browser's own program, as /proc/PID/exe names it: the google-chrome, microsoft-edge and brave-browser
# commands are scripts that run these with `exec -a "$0"`, so the command line names the script.
PROGRAMS = frozenset({"chrome", "chromium", "chromium-browser", "msedge", "brave"})


@dataclass(frozen=True)
class RunningBrowser:
    pid: int
    program: str
    profile: Path


def browsers_with_own_profiles(proc_root: Path = PROC) -> list[RunningBrowser]:
    """One for each profile folder in use, but not tabpilot's own throwaway profiles (`tabpilot run`, the demo,
    the tests: they never need the host registered), nor browsers with no extensions, nor those of another user or
    another HOME (another person's, or a test harness's, which sets HOME for each browser it starts). A process
    that cannot be read, or is gone, is left out."""
    try:
        entries = sorted((e for e in proc_root.iterdir() if e.name.isdigit()), key=lambda e: int(e.name))
    except OSError:  # no /proc: macOS, Windows
        return []
    home = os.path.realpath(Path.home())
    found: dict[Path, RunningBrowser] = {}
    for entry in entries:
        try:
            browser = _own_profile_browser(entry, home)
        except OSError:
            continue
        if browser and not browser.profile.name.startswith(PROFILE_PREFIX):
            found.setdefault(browser.profile, browser)
    return list(found.values())


def _own_profile_browser(entry: Path, home: str) -> RunningBrowser | None:
    if entry.stat().st_uid != os.getuid():
        return None
    raw = (entry / "cmdline").read_bytes().rstrip(b"\0")
    argv = [arg.decode(errors="surrogateescape") for arg in raw.split(b"\0")] if raw else []
    # Its renderers, zygotes and utility processes carry --type=, Chromium having rewritten most of their command
    # lines into one string ("/usr/lib/chromium/chromium --type=renderer ...").
    if not argv or any(arg.startswith("--type=") or " --type=" in arg for arg in argv):
        return None
    program = os.readlink(entry / "exe").removesuffix(" (deleted)")  # " (deleted)": upgraded while it runs
    if Path(program).name not in PROGRAMS:
        return None
    folder = user_data_dir_switch(argv)
    # --disable-extensions: no extension runs there to ask for the host (Playwright and Puppeteer start their
    # browsers so, each on a throwaway profile folder of its own)
    if folder is None or "--disable-extensions" in argv or _home_of(entry) not in (None, home):
        return None
    profile = Path(folder)
    if not profile.is_absolute():  # Chromium 156 takes "~/x" too as relative to where it was started: cwd/~/x
        profile = Path(os.readlink(entry / "cwd")) / profile
    return RunningBrowser(int(entry.name), argv[0], Path(os.path.normpath(profile)))


def user_data_dir_switch(argv: list[str]) -> str | None:
    """The profile folder a browser started with `argv` uses, read as Chromium reads its switches: `--user-data-dir=DIR`
    or `-user-data-dir=DIR`, the last one given, none after `--`. None for the browser's usual folder: also for
    `--user-data-dir DIR` with a space, which Chromium 156 reads as an empty switch and a page DIR to open (it then
    used ~/.config/chromium and showed file:///DIR)."""
    value = None
    for arg in argv[1:]:
        if arg == "--":
            break
        for prefix in ("--user-data-dir=", "-user-data-dir="):
            if arg.startswith(prefix):
                value = arg[len(prefix):]
    return value or None


def _home_of(entry: Path) -> str | None:
    for variable in (entry / "environ").read_bytes().split(b"\0"):
        if variable.startswith(b"HOME="):
            return os.path.realpath(variable[5:].decode(errors="surrogateescape"))
    return None
