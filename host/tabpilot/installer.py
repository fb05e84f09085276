"""Registering the native messaging host with Chrome, Chromium, Edge and Brave.

A browser finds the host through a manifest, `com.tabpilot.host.json`: in a per-user folder on Linux
and macOS, through an HKCU registry key on Windows, or in `<user-data-dir>/NativeMessagingHosts/` for
one profile (a browser started with `--user-data-dir` reads only that one). The manifest's `path` is a
launcher script that runs the exact Python this package is installed in.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import paths
from .browser.programs import BROWSERS, installed_browsers
from .browser.running import PROC, RunningBrowser, browsers_with_own_profiles
from .i18n import text

HOST_NAME = "com.tabpilot.host"
MANIFEST_NAME = f"{HOST_NAME}.json"
DESCRIPTION = "tabpilot native messaging host: runs the agent for the tabpilot extension"
NO_BROWSER = text("install.no_browser")
# What to do then; `install` says it and `doctor` gives it as the fix (in the user's language: i18n.py).
NO_BROWSER_FIX = text("install.no_browser_fix")

# Folder of each browser's per-user data, relative to ~/.config (Linux) / ~/Library/Application Support (macOS).
LINUX_DIRS = {
    "chrome": "google-chrome",
    "chromium": "chromium",
    "edge": "microsoft-edge",
    "brave": "BraveSoftware/Brave-Browser",
}
MAC_DIRS = {
    "chrome": "Google/Chrome",
    "chromium": "Chromium",
    "edge": "Microsoft Edge",
    "brave": "BraveSoftware/Brave-Browser",
}
WINDOWS_KEYS = {
    "chrome": r"Software\Google\Chrome\NativeMessagingHosts",
    "chromium": r"Software\Chromium\NativeMessagingHosts",
    "edge": r"Software\Microsoft\Edge\NativeMessagingHosts",
    "brave": r"Software\BraveSoftware\Brave-Browser\NativeMessagingHosts",
}


# What to do when the package's own files are missing or damaged.
REINSTALL = text("install.reinstall")


class InstallError(RuntimeError):
    """Something install/uninstall cannot do; the message says what to do instead."""


# --- the extension ------------------------------------------------------------------------------
def extension_dir() -> Path:
    """The unpacked extension to load: the copy an installed wheel carries (`tabpilot/extension/`,
    see setup.py), else `extension/` at the root of the source tree an editable install runs from."""
    package = Path(__file__).resolve().parent
    for folder in (package / "extension", package.parents[1] / "extension"):
        if (folder / "manifest.json").is_file():
            return folder
    return package / "extension"  # neither exists: name where an installed tabpilot keeps it


def extension_id_from_key(key: str) -> str:
    """Chromium's id for an extension whose manifest "key" is `key` (base64 DER public key)."""
    digest = hashlib.sha256(base64.b64decode(key)).hexdigest()[:32]
    return "".join(chr(ord("a") + int(c, 16)) for c in digest)


def bundled_extension_id() -> str:
    manifest = extension_dir() / "manifest.json"
    try:
        key = json.loads(manifest.read_text(encoding="utf-8"))["key"]
        return extension_id_from_key(key)
    except FileNotFoundError as exc:
        raise InstallError(f"the bundled extension is missing ({manifest}); {REINSTALL}") from exc
    except (KeyError, ValueError, TypeError) as exc:
        raise InstallError(f"{manifest} has no usable \"key\" ({exc}); the extension id cannot be computed") from exc


def is_extension_id(value: str) -> bool:
    return len(value) == 32 and all("a" <= c <= "p" for c in value)


def origin(extension_id: str) -> str:
    return f"chrome-extension://{extension_id}/"  # the trailing slash is required


# --- where things go ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Target:
    """One place a browser looks for the host: a manifest file (and on Windows a registry key)."""

    label: str
    manifest: Path
    registry_key: str | None = None
    profile: Path | None = None  # the one profile folder it serves (`install --user-data-dir`)


def manifest_targets(browser: str = "all", *, user_data_dir: Path | None = None) -> list[Target]:
    """Every place the named browser(s) would read the host from (whether or not anything is there)."""
    if user_data_dir is not None:
        directory = Path(user_data_dir).expanduser().resolve()
        return [Target(f"profile {directory}", directory / "NativeMessagingHosts" / MANIFEST_NAME, profile=directory)]
    names = BROWSERS if browser == "all" else (browser,)
    targets = []
    for name in names:
        if sys.platform == "win32":
            manifest = paths.data_dir() / "native-host" / name / MANIFEST_NAME
            targets.append(Target(name, manifest, f"{WINDOWS_KEYS[name]}\\{HOST_NAME}"))
        else:
            targets.append(Target(name, settings_dir(name) / "NativeMessagingHosts" / MANIFEST_NAME))
    return targets


def registered_profiles() -> list[Target]:
    """The profile folders `install --user-data-dir` registered the host in and that still have its
    manifest: plain `tabpilot doctor` checks them along with the browsers' own folders."""
    targets = []
    for folder in _profile_folders():
        target = manifest_targets(user_data_dir=Path(folder))[0]
        if target.manifest.exists():
            targets.append(target)
    return targets


def profiles_in_use(proc_root: Path = PROC) -> list[tuple[RunningBrowser, Target]]:
    """The browsers running now with a profile folder of their own, each with the one place it reads the host from."""
    return [(browser, manifest_targets(user_data_dir=browser.profile)[0])
            for browser in browsers_with_own_profiles(proc_root)]


def install_command(browser: str = "all", user_data_dir: Path | None = None) -> str:
    """The `tabpilot install` that registers for `browser` or the profile folder, as the user's shell takes it."""
    words = ["tabpilot", "install"]
    if user_data_dir:
        words += ["--user-data-dir", str(user_data_dir)]
    elif browser != "all":
        words += ["--browser", browser]
    return subprocess.list2cmdline(words) if sys.platform == "win32" else shlex.join(words)


def _profile_folders() -> list[str]:
    try:
        folders = json.loads(_profiles_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [f for f in folders if isinstance(f, str)] if isinstance(folders, list) else []


def _profiles_file() -> Path:
    return paths.data_dir() / "native-host" / "profiles.json"


def _remember_profile(user_data_dir: Path, registered: bool) -> None:
    folder = str(Path(user_data_dir).expanduser().resolve())
    folders = [f for f in _profile_folders() if f != folder] + ([folder] if registered else [])
    _profiles_file().parent.mkdir(parents=True, exist_ok=True)
    _profiles_file().write_text(json.dumps(folders, indent=2) + "\n", encoding="utf-8")


def _made_file() -> Path:
    """The folders `install` created (for a manifest or launcher, and the folders above them it had to make):
    `uninstall` removes these, once empty, and no other."""
    return paths.data_dir() / "native-host" / "made.json"


def _made_folders() -> list[str]:
    try:
        folders = json.loads(_made_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [f for f in folders if isinstance(f, str)] if isinstance(folders, list) else []


def _record_made(made: list[str], gone: list[str] | None = None) -> None:
    kept = [f for f in _made_folders() if f not in (gone or [])]
    folders = kept + [f for f in made if f not in kept]
    if folders == _made_folders():
        return
    _made_file().parent.mkdir(parents=True, exist_ok=True)
    _made_file().write_text(json.dumps(folders, indent=2) + "\n", encoding="utf-8")


def _make_folder(folder: Path) -> list[str]:
    """Create `folder` and the folders above it that are missing; returns those it created (absolute)."""
    missing = []
    for level in (folder, *folder.parents):
        if level.exists():
            break
        missing.append(str(level))
    folder.mkdir(parents=True, exist_ok=True)
    return missing


def _remove_made(folders: list[Path], report: InstallReport) -> None:
    """Of `folders` and the folders above them, those `install` created: each removed once it is empty (deepest
    first; one a browser or the user has put something in stays), and forgotten once gone."""
    made = set(_made_folders())
    ours = {str(level) for folder in folders for level in (folder, *folder.parents) if str(level) in made}
    gone = []
    for folder in sorted(ours, key=lambda f: (-len(Path(f).parts), f)):
        try:
            Path(folder).rmdir()
        except FileNotFoundError:
            gone.append(folder)
        except OSError:  # not empty (or not ours to remove after all): left, and remembered
            continue
        else:
            gone.append(folder)
            report.removed.append(folder)
    if gone:
        _record_made([], gone)


def settings_dir(browser: str) -> Path:
    """The browser's per-user settings folder on Linux and macOS (the folder it creates at first start)."""
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / MAC_DIRS[browser]
    config_home = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return config_home / LINUX_DIRS[browser]


def has_settings(folder: Path) -> bool:
    """Whether the browser's settings folder is there, as a browser's: not when it holds only a NativeMessagingHosts
    folder (a browser's first start writes "Local State" and a profile there). That alone is what a host's installer
    made (this one's `install --browser NAME` for a browser not installed, or another program's), left empty by an
    uninstall: counting it registered the host for a browser that is not there."""
    try:
        return {entry.name for entry in folder.iterdir()} != {"NativeMessagingHosts"}
    except OSError:  # no such folder (or not a folder, or unreadable)
        return False


def install_targets(browser: str = "all", *, user_data_dir: Path | None = None) -> list[Target]:
    """Where `tabpilot install` registers: the named browser or profile; by default every browser whose
    program is installed or that has a settings folder for this user (one never started has none yet:
    install creates the folder it needs). On Windows the registry keys serve every browser alike."""
    if user_data_dir is not None or browser != "all" or sys.platform == "win32":
        return manifest_targets(browser, user_data_dir=user_data_dir)
    present = set(installed_browsers()) | {name for name in BROWSERS if has_settings(settings_dir(name))}
    targets = [t for t in manifest_targets("all") if t.label in present]
    if not targets:
        raise InstallError(f"{NO_BROWSER}. To fix: {NO_BROWSER_FIX}")
    return targets


def launcher_path(user_data_dir: Path | None = None) -> Path:
    name = "tabpilot-host.cmd" if sys.platform == "win32" else "tabpilot-host"
    if user_data_dir is not None:
        return Path(user_data_dir).expanduser().resolve() / "NativeMessagingHosts" / name
    return paths.data_dir() / "native-host" / name


# --- writing ------------------------------------------------------------------------------------
def launcher_text() -> str:
    """Runs `<this python> -m tabpilot host <args>`; the browser's environment passes through."""
    home = os.environ.get(paths.HOME_ENV)
    if sys.platform == "win32":
        lines = ["@echo off", "rem Written by `tabpilot install`: the tabpilot native messaging host."]
        if home:
            lines.append(f'if not defined {paths.HOME_ENV} set "{paths.HOME_ENV}={home}"')
        lines.append(f'"{sys.executable}" -m tabpilot host %*')
        return "\r\n".join(lines) + "\r\n"
    lines = ["#!/bin/sh", "# Written by `tabpilot install`: the tabpilot native messaging host."]
    if home:  # installed with TABPILOT_HOME set: keep using that folder unless the browser says otherwise
        lines.append(f": \"${{{paths.HOME_ENV}:={shlex.quote(home)}}}\"; export {paths.HOME_ENV}")
    lines.append(f"exec {shlex.quote(sys.executable)} -m tabpilot host \"$@\"")
    return "\n".join(lines) + "\n"


def host_manifest(launcher: Path, extension_ids: list[str]) -> dict[str, Any]:
    return {
        "name": HOST_NAME,
        "description": DESCRIPTION,
        "path": str(launcher),
        "type": "stdio",
        "allowed_origins": [origin(i) for i in extension_ids],
    }


@dataclass
class InstallReport:
    extension_ids: list[str]
    launchers: list[Path] = field(default_factory=list)
    manifests: list[Target] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)


def _extension_ids(extra_ids: list[str] | None) -> list[str]:
    ids = [bundled_extension_id()]
    for value in extra_ids or []:
        value = value.strip().removeprefix("chrome-extension://").rstrip("/")
        if not is_extension_id(value):
            raise InstallError(f"{value!r} is not an extension id (32 letters a-p, as chrome://extensions shows)")
        if value not in ids:
            ids.append(value)
    return ids


def install(
    browser: str = "all", *, user_data_dir: Path | None = None, extra_ids: list[str] | None = None
) -> InstallReport:
    ids = _extension_ids(extra_ids)
    launcher = launcher_path(user_data_dir)
    targets = install_targets(browser, user_data_dir=user_data_dir)
    report = InstallReport(ids)
    made = _make_folder(launcher.parent)
    if user_data_dir is None:  # tabpilot's own data folder (where these records are kept too): not the user's
        made = []
    launcher.write_text(launcher_text(), encoding="utf-8", newline="")
    launcher.chmod(0o755)
    report.launchers.append(launcher)
    text = json.dumps(host_manifest(launcher, ids), indent=2) + "\n"
    for target in targets:
        made += _make_folder(target.manifest.parent)
        target.manifest.write_text(text, encoding="utf-8")
        if target.registry_key:
            _set_registry(target.registry_key, str(target.manifest))
        report.manifests.append(target)
    _record_made(made)
    if user_data_dir is not None:
        _remember_profile(user_data_dir, registered=True)
    return report


def is_ours(manifest: Path) -> bool:
    try:
        manifest_json = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(manifest_json, dict) and manifest_json.get("name") == HOST_NAME


def uninstall(browser: str = "all", *, user_data_dir: Path | None = None) -> InstallReport:
    report = InstallReport([])
    targets = manifest_targets(browser, user_data_dir=user_data_dir)
    for target in targets:
        if target.registry_key and _delete_registry(target.registry_key):
            report.removed.append(f"HKCU\\{target.registry_key}")
        if target.manifest.exists() and is_ours(target.manifest):
            target.manifest.unlink()
            report.removed.append(str(target.manifest))
    launcher = launcher_path(user_data_dir)
    still_used = user_data_dir is None and browser != "all" and any(
        t.manifest.exists() for t in manifest_targets("all")
    )
    if launcher.exists() and not still_used:
        launcher.unlink()
        report.removed.append(str(launcher))
    if user_data_dir is not None:
        _remember_profile(user_data_dir, registered=False)
    # the folders install made (a profile folder, a NativeMessagingHosts folder, a browser's settings folder), once
    # nothing else is in them: left empty, the last made the next install register a browser that is not there
    _remove_made([t.manifest.parent for t in targets] + [launcher.parent], report)
    return report


# --- Windows registry ---------------------------------------------------------------------------
def _set_registry(key: str, value: str) -> None:
    # if/else on sys.platform: mypy checks each branch only for its own platform (winreg's stubs are
    # Windows-only), so no type: ignore is needed on either.
    if sys.platform == "win32":
        import winreg

        with winreg.CreateKey(winreg.HKEY_CURRENT_USER, key) as handle:
            winreg.SetValueEx(handle, "", 0, winreg.REG_SZ, value)
    else:
        raise OSError(f"there is no Windows registry on {sys.platform}")


def _delete_registry(key: str) -> bool:
    if sys.platform == "win32":
        import winreg

        try:
            winreg.DeleteKey(winreg.HKEY_CURRENT_USER, key)
        except FileNotFoundError:
            return False
        return True
    else:
        return False


def read_registry(key: str) -> str | None:
    if sys.platform == "win32":
        import winreg

        try:
            with winreg.OpenKey(winreg.HKEY_CURRENT_USER, key) as handle:
                return str(winreg.QueryValueEx(handle, "")[0])
        except FileNotFoundError:
            return None
    else:
        return None
