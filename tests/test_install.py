"""`tabpilot install / uninstall / extension-path` as subprocesses, into temporary folders."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from native_support import HEADER, frame

from tabpilot.installer import bundled_extension_id, extension_dir, extension_id_from_key

REPO = Path(__file__).resolve().parents[1]
BUNDLED_ID = bundled_extension_id()


def tabpilot(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tabpilot", *args], capture_output=True, text=True, env=env, timeout=60
    )


@pytest.fixture
def env(tmp_path):
    home = tmp_path / "user"
    home.mkdir()
    environment = {**os.environ, "HOME": str(home), "TABPILOT_HOME": str(tmp_path / "tabpilot")}
    environment.pop("XDG_CONFIG_HOME", None)
    return environment


def test_extension_id_is_computed_from_the_manifest_key_like_chromium():
    key = json.loads((REPO / "extension" / "manifest.json").read_text())["key"]
    digest = hashlib.sha256(base64.b64decode(key)).hexdigest()[:32]
    assert extension_id_from_key(key) == digest.translate(str.maketrans("0123456789abcdef", "abcdefghijklmnop"))
    assert extension_id_from_key(key) == BUNDLED_ID and len(BUNDLED_ID) == 32


def test_extension_path_prints_the_bundled_folder(env):
    result = tabpilot("extension-path", env=env)
    assert result.returncode == 0
    assert Path(result.stdout.strip()) == REPO / "extension" == extension_dir()


def test_install_into_a_profile_writes_manifest_and_launcher_and_uninstall_removes_them(tmp_path, env):
    profile = tmp_path / "profile"
    extra = "abcdefghijklmnopabcdefghijklmnop"
    result = tabpilot("install", "--user-data-dir", str(profile), "--extension-id", extra, env=env)
    assert result.returncode == 0, result.stderr
    hosts = profile / "NativeMessagingHosts"
    manifest = json.loads((hosts / "com.tabpilot.host.json").read_text())
    launcher = Path(manifest["path"])
    assert manifest == {
        "name": "com.tabpilot.host",
        "description": manifest["description"],
        "path": str(launcher),
        "type": "stdio",
        "allowed_origins": [f"chrome-extension://{BUNDLED_ID}/", f"chrome-extension://{extra}/"],
    }
    assert launcher.is_absolute() and launcher.parent == hosts
    assert stat.S_IMODE(launcher.stat().st_mode) == 0o755
    assert str(Path(sys.executable)) in launcher.read_text()  # the exact interpreter tabpilot is installed in
    assert sorted(p.name for p in hosts.iterdir()) == ["com.tabpilot.host.json", "tabpilot-host"]

    removed = tabpilot("uninstall", "--user-data-dir", str(profile), env=env)
    assert removed.returncode == 0 and "removed" in removed.stdout
    assert list(hosts.iterdir()) == []
    again = tabpilot("uninstall", "--user-data-dir", str(profile), env=env)
    assert again.returncode == 0 and "nothing to remove" in again.stdout


def test_the_launcher_starts_a_host_that_answers_frames_with_the_browsers_environment(tmp_path, env):
    profile = tmp_path / "profile"
    assert tabpilot("install", "--user-data-dir", str(profile), env=env).returncode == 0
    launcher = json.loads((profile / "NativeMessagingHosts" / "com.tabpilot.host.json").read_text())["path"]
    browser_home = tmp_path / "home-from-browser"
    process = subprocess.run(
        [launcher, f"chrome-extension://{BUNDLED_ID}/"],
        input=frame({"type": "ping", "id": "p"}),
        capture_output=True,
        env={**env, "TABPILOT_HOME": str(browser_home)},  # the browser's environment wins
        timeout=30,
    )
    (length,) = HEADER.unpack(process.stdout[:4])
    reply = json.loads(process.stdout[4 : 4 + length])
    assert reply == {"type": "reply", "id": "p", "ok": True, "data": {"pong": True}}
    assert (browser_home / "log" / "host.log").exists()


def test_install_per_browser_on_this_os(tmp_path, env):
    home = Path(env["HOME"])
    result = tabpilot("install", "--browser", "chromium", env=env)
    assert result.returncode == 0, result.stderr
    if sys.platform.startswith("linux"):
        manifest = home / ".config" / "chromium" / "NativeMessagingHosts" / "com.tabpilot.host.json"
    elif sys.platform == "darwin":
        support = home / "Library" / "Application Support"
        manifest = support / "Chromium" / "NativeMessagingHosts" / "com.tabpilot.host.json"
    else:
        pytest.skip("Windows registers through the registry")
    data = json.loads(manifest.read_text())
    assert data["allowed_origins"] == [f"chrome-extension://{BUNDLED_ID}/"]
    launcher = Path(data["path"])
    assert launcher.is_relative_to(Path(env["TABPILOT_HOME"]))  # per-user data folder, not a profile
    # "all" writes only for browsers this user has; chromium's folder now exists, google-chrome's does not.
    (home / ".config" / "microsoft-edge").mkdir(parents=True)
    result = tabpilot("install", env=env)
    assert "chromium" in result.stdout and "edge" in result.stdout and "google-chrome" not in result.stdout
    assert not (home / ".config" / "google-chrome").exists()
    tabpilot("uninstall", "--browser", "chromium", env=env)
    assert not manifest.exists() and launcher.exists()  # edge still uses the launcher
    tabpilot("uninstall", env=env)
    assert not launcher.exists()
    assert not (home / ".config" / "microsoft-edge" / "NativeMessagingHosts" / "com.tabpilot.host.json").exists()


def test_bad_extension_id_is_refused_clearly(tmp_path, env):
    result = tabpilot("install", "--user-data-dir", str(tmp_path / "p"), "--extension-id", "not-an-id", env=env)
    assert result.returncode == 1 and "not an extension id" in result.stderr
    assert not (tmp_path / "p" / "NativeMessagingHosts" / "com.tabpilot.host.json").exists()


def test_install_with_no_browser_folder_says_what_to_do(env):
    result = tabpilot("install", env=env)
    assert result.returncode == 1 and "--user-data-dir" in result.stderr


def test_manifest_locations_and_launcher_on_macos_and_windows(monkeypatch, tmp_path):
    from tabpilot import installer

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("TABPILOT_HOME", str(tmp_path / "tabpilot"))
    monkeypatch.setattr(sys, "platform", "darwin")
    mac = {t.label: t.manifest for t in installer.manifest_targets("all")}
    support = tmp_path / "Library" / "Application Support"
    assert mac == {
        "chrome": support / "Google/Chrome/NativeMessagingHosts/com.tabpilot.host.json",
        "chromium": support / "Chromium/NativeMessagingHosts/com.tabpilot.host.json",
        "edge": support / "Microsoft Edge/NativeMessagingHosts/com.tabpilot.host.json",
        "brave": support / "BraveSoftware/Brave-Browser/NativeMessagingHosts/com.tabpilot.host.json",
    }
    monkeypatch.setattr(sys, "platform", "win32")
    (edge,) = installer.manifest_targets("edge")
    assert edge.registry_key == r"Software\Microsoft\Edge\NativeMessagingHosts\com.tabpilot.host"
    assert edge.manifest.is_relative_to(tmp_path / "tabpilot")
    assert installer.launcher_path().name == "tabpilot-host.cmd"
    text = installer.launcher_text()
    assert text.startswith("@echo off\r\n") and f'"{sys.executable}" -m tabpilot host %*\r\n' in text
    assert "TABPILOT_HOME" in text  # installed with TABPILOT_HOME set: the launcher keeps that folder
