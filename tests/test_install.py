"""`tabpilot install / uninstall / extension-path` into temporary folders: through the command line's own main(),
each once as a subprocess."""

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
from cli_support import tabpilot_here
from native_support import HEADER, frame

from tabpilot.installer import bundled_extension_id, extension_dir, extension_id_from_key

REPO = Path(__file__).resolve().parents[1]
BUNDLED_ID = bundled_extension_id()


def tabpilot(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`tabpilot ARGS` with exactly `env`, in this process (cli_support)."""
    return tabpilot_here(list(args), env)


def tabpilot_process(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
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
    result = tabpilot_process("extension-path", env=env)  # as the user runs it
    assert result.returncode == 0
    assert Path(result.stdout.strip()) == REPO / "extension" == extension_dir()


def test_install_into_a_profile_writes_manifest_and_launcher_and_uninstall_removes_them(tmp_path, env):
    profile = tmp_path / "profile"
    extra = "abcdefghijklmnopabcdefghijklmnop"
    result = tabpilot_process("install", "--user-data-dir", str(profile), "--extension-id", extra, env=env)
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

    removed = tabpilot_process("uninstall", "--user-data-dir", str(profile), env=env)
    assert removed.returncode == 0 and "removed" in removed.stdout
    assert not hosts.exists() and not profile.exists()  # the folders install made, empty now, go too
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
    # "all" also writes for a browser that has a settings folder of this user, even with no program found
    (home / ".config" / "microsoft-edge").mkdir(parents=True)
    result = tabpilot("install", env={**env, "PATH": str(tmp_path / "empty")})
    assert "registered for chromium" in result.stdout and "registered for edge" in result.stdout
    tabpilot("uninstall", "--browser", "chromium", env=env)
    assert not manifest.exists() and launcher.exists()  # edge still uses the launcher
    tabpilot("uninstall", env=env)
    assert not launcher.exists()
    assert not (home / ".config" / "microsoft-edge" / "NativeMessagingHosts" / "com.tabpilot.host.json").exists()


def test_bad_extension_id_is_refused_clearly(tmp_path, env):
    result = tabpilot("install", "--user-data-dir", str(tmp_path / "p"), "--extension-id", "not-an-id", env=env)
    assert result.returncode == 1 and "not an extension id" in result.stderr
    assert not (tmp_path / "p" / "NativeMessagingHosts" / "com.tabpilot.host.json").exists()


def fake_program(path: Path) -> Path:
    """An executable where a browser's program would be (it is only looked at, never run)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(0o755)
    return path


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux program locations and settings folders")
def test_first_run_install_registers_every_installed_browser_creating_its_folder(tmp_path, env):
    """A user whose browsers were never started has no settings folders yet: doctor's fix is install, and
    install registers every browser whose program is there (here Chrome and Edge found on PATH)."""
    bin_dir = tmp_path / "bin"
    fake_program(bin_dir / "google-chrome")
    fake_program(bin_dir / "microsoft-edge")
    env = {**env, "PATH": str(bin_dir)}
    config = Path(env["HOME"]) / ".config"
    assert not config.exists()

    before = tabpilot("doctor", "--skip-llm", env=env)
    assert before.returncode == 1 and "the native host is not registered for any browser" in before.stdout
    fix = next(line.strip() for line in before.stdout.splitlines() if line.strip().startswith("fix: tabpilot install"))
    assert "chrome" in fix and "edge" in fix

    result = tabpilot("install", env=env)
    assert result.returncode == 0, result.stderr
    for label, folder in (("chrome", "google-chrome"), ("edge", "microsoft-edge")):
        manifest = config / folder / "NativeMessagingHosts" / "com.tabpilot.host.json"
        assert f"registered for {label}: {manifest}" in result.stdout
        assert json.loads(manifest.read_text())["allowed_origins"] == [f"chrome-extension://{BUNDLED_ID}/"]
    if not Path("/opt/brave.com/brave/brave").exists():
        assert "brave" not in result.stdout and not (config / "BraveSoftware").exists()

    after = tabpilot("doctor", "--skip-llm", env=env)
    assert after.returncode == 0, after.stdout
    assert "not registered" not in after.stdout and "answered a framed hello" in after.stdout
    # a second install is the same install
    again = tabpilot("install", env=env)
    assert again.returncode == 0 and again.stdout == result.stdout
    # one installed browser left unregistered: doctor warns, and its fix is the same install
    assert tabpilot("uninstall", "--browser", "edge", env=env).returncode == 0
    partly = tabpilot("doctor", "--skip-llm", env=env)
    assert partly.returncode == 0 and "WARN  edge: the native host is not registered for it" in partly.stdout
    assert "fix: tabpilot install\n" in partly.stdout


@pytest.mark.skipif(sys.platform == "darwin", reason="a real Mac has real programs in /Applications")
def test_with_no_browser_at_all_install_and_doctor_give_the_same_remedy(monkeypatch, tmp_path, capsys):
    """Simulated macOS (its programs live in /Applications and ~/Applications, so nothing here is found)."""
    import argparse

    from tabpilot import installer
    from tabpilot.browser.launcher import find_browser
    from tabpilot.commands import doctor
    from tabpilot.commands import install as install_command

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("TABPILOT_HOME", str(tmp_path / "tabpilot"))
    monkeypatch.delenv("TABPILOT_BROWSER", raising=False)
    monkeypatch.setattr(sys, "platform", "darwin")
    args = argparse.Namespace(browser="all", user_data_dir=None, extension_id=[])
    assert install_command.run(args) == 1
    said = capsys.readouterr().err
    assert installer.NO_BROWSER in said and installer.NO_BROWSER_FIX in said
    findings = doctor.diagnose("all", None, check_llm_endpoint=False)
    (problem,) = [f for f in findings if f.level == "fail"]
    assert problem.fix == installer.NO_BROWSER_FIX  # doctor says what install says

    # The user installs Brave: the launcher and install find the same program, install creates its folder.
    brave = fake_program(tmp_path / "home/Applications/Brave Browser.app/Contents/MacOS/Brave Browser")
    assert find_browser() == str(brave)
    assert install_command.run(args) == 0
    support = tmp_path / "home/Library/Application Support"
    manifest = support / "BraveSoftware/Brave-Browser/NativeMessagingHosts/com.tabpilot.host.json"
    assert f"registered for brave: {manifest}" in capsys.readouterr().out
    assert [p.name for p in support.iterdir()] == ["BraveSoftware"]  # only the browser that is there
    assert not [f for f in doctor.diagnose("all", None, check_llm_endpoint=False) if f.level != "ok"]


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


def test_a_mistyped_profile_folder_is_refused_and_nothing_is_created(tmp_path, env):
    typo = tmp_path / "no-such-parent" / "profile"
    result = tabpilot("install", "--user-data-dir", str(typo), env=env)
    assert result.returncode == 1, result.stdout
    assert f"{typo} does not exist, nor does the folder it would go in ({typo.parent})" in result.stderr
    assert result.stderr.count("does not exist") == 1 and result.stdout == ""
    assert not typo.parent.exists()


def test_a_new_profile_folder_is_named_doctor_is_pointed_at_it_and_uninstall_removes_what_install_made(tmp_path, env):
    profile = tmp_path / "profile"
    result = tabpilot("install", "--user-data-dir", str(profile), env=env)
    assert result.returncode == 0, result.stderr
    assert f"created the profile folder {profile} (start the browser with --user-data-dir={profile})" in result.stdout
    assert f"`tabpilot doctor --user-data-dir {profile}` checks it all." in result.stdout
    doctor = tabpilot("doctor", "--user-data-dir", str(profile), "--skip-llm", env=env)
    assert doctor.returncode == 0, doctor.stdout
    # plain `tabpilot doctor` checks the profiles install registered too (it used to fail "not registered
    # for any browser" while that browser worked), the host's hello through its launcher included
    plain = tabpilot("doctor", "--skip-llm", env=env)
    assert plain.returncode == 0, plain.stdout
    assert f"profile {profile}: {profile / 'NativeMessagingHosts' / 'com.tabpilot.host.json'}" in plain.stdout
    assert str(profile / "NativeMessagingHosts" / "tabpilot-host") in plain.stdout, plain.stdout
    removed = tabpilot("uninstall", "--user-data-dir", str(profile), env=env)
    assert removed.returncode == 0, removed.stderr
    assert str(profile) not in tabpilot("doctor", "--skip-llm", env=env).stdout
    assert f"removed {profile / 'NativeMessagingHosts'}\nremoved {profile}\n" in removed.stdout
    assert not profile.exists()

    profile.mkdir()  # a profile the browser already uses keeps everything but what install wrote
    (profile / "Local State").write_text("{}")
    assert tabpilot("install", "--user-data-dir", str(profile), env=env).returncode == 0
    assert tabpilot("uninstall", "--user-data-dir", str(profile), env=env).returncode == 0
    assert sorted(p.name for p in profile.iterdir()) == ["Local State"]


def test_uninstall_removes_only_the_folders_install_made_in_a_profile(tmp_path, env):
    """`uninstall --user-data-dir` removed the profile folder itself whenever it was empty, one the person had made
    (for a browser yet to start on it) included: now only what install recorded it made goes."""
    theirs = tmp_path / "their profile"
    theirs.mkdir()  # made by the person, empty: the browser has not started on it yet
    assert tabpilot("install", "--user-data-dir", str(theirs), env=env).returncode == 0
    removed = tabpilot("uninstall", "--user-data-dir", str(theirs), env=env)
    assert removed.returncode == 0, removed.stderr
    assert f"removed {theirs / 'NativeMessagingHosts'}\n" in removed.stdout  # install made that one
    assert theirs.is_dir() and list(theirs.iterdir()) == [], removed.stdout
    assert f"removed {theirs}\n" not in removed.stdout

    # Installed where nothing was recorded (an earlier tabpilot): only tabpilot's own files inside are removed.
    made = tmp_path / "made by install"
    assert tabpilot("install", "--user-data-dir", str(made), env=env).returncode == 0
    (Path(env["TABPILOT_HOME"]) / "data" / "native-host" / "made.json").unlink()
    assert tabpilot("uninstall", "--user-data-dir", str(made), env=env).returncode == 0
    assert made.is_dir() and list((made / "NativeMessagingHosts").iterdir()) == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux settings folders")
def test_uninstall_leaves_no_empty_browser_folder_and_install_does_not_count_one(tmp_path, env):
    """`install --browser chrome` with no Chrome made ~/.config/google-chrome/NativeMessagingHosts; uninstall left it
    empty, and the next plain `install` said "registered for chrome" for a browser that is not there."""
    if Path("/opt/google/chrome/chrome").exists():
        pytest.skip("Chrome is installed here")
    env = {**env, "PATH": str(tmp_path / "empty")}  # no google-chrome on PATH
    config = Path(env["HOME"]) / ".config"
    (config / "chromium" / "Default").mkdir(parents=True)  # a browser that has been used: its folder stays
    assert tabpilot("install", "--browser", "chrome", env=env).returncode == 0
    assert (config / "google-chrome" / "NativeMessagingHosts" / "com.tabpilot.host.json").exists()
    removed = tabpilot("uninstall", env=env)
    assert removed.returncode == 0, removed.stderr
    assert not (config / "google-chrome").exists(), removed.stdout  # install made it: gone with what was in it
    assert f"removed {config / 'google-chrome' / 'NativeMessagingHosts'}\n" in removed.stdout
    assert (config / "chromium" / "Default").is_dir() and config.is_dir()

    # A NativeMessagingHosts folder alone (another program's, or an earlier tabpilot's) is not a browser.
    (config / "google-chrome" / "NativeMessagingHosts").mkdir(parents=True)
    result = tabpilot("install", env=env)
    assert "registered for chrome" not in result.stdout, result.stdout
    assert "registered for chromium" in result.stdout, result.stdout  # its settings folder has been used
    assert list((config / "google-chrome" / "NativeMessagingHosts").iterdir()) == []
