"""`tabpilot doctor` and `install` on the browsers running now: one started with its own --user-data-dir reads the
host's registration from that folder only. Here the processes are a made-up /proc (so nothing else running on the
machine counts); tests/e2e/test_host_missing.py proves it on a real Chromium."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tabpilot.browser.running import browsers_with_own_profiles
from tabpilot.commands.doctor import diagnose
from tabpilot.installer import bundled_extension_id, install


class FakeProc:
    def __init__(self, root: Path, home: Path) -> None:
        self.root, self.home = root, home
        root.mkdir()
        (root / "self").mkdir()  # not a process: skipped

    def process(self, pid: int, *argv: str, cwd: Path | None = None, home: Path | None = None,
                joined: bool = False, exe: str | None = None) -> None:
        entry = self.root / str(pid)
        entry.mkdir()
        raw = " ".join(argv).encode() if joined else b"".join(arg.encode() + b"\0" for arg in argv)
        (entry / "cmdline").write_bytes(raw)
        (entry / "environ").write_bytes(b"LANG=C\0HOME=" + str(home or self.home).encode() + b"\0")
        os.symlink(cwd or "/", entry / "cwd")
        os.symlink(exe or argv[0].split(" ")[0], entry / "exe")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("TABPILOT_HOME", str(tmp_path / "tabpilot"))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    return home


def test_the_browser_processes_and_the_folder_each_reads_as_chromium_does(tmp_path: Path, home: Path) -> None:
    proc = FakeProc(tmp_path / "proc", home)
    work = tmp_path / "work"
    proc.process(100, "/usr/lib/chromium/chromium", "--no-first-run", "--user-data-dir=/srv/a b")
    # its renderer and zygote: Chromium rewrites their command line into one string; a helper may also not
    proc.process(101, "/usr/lib/chromium/chromium", "--type=renderer", "--user-data-dir=/srv/a b", joined=True)
    proc.process(102, "/usr/lib/chromium/chromium", "--type=zygote", "--user-data-dir=/srv/a b")
    proc.process(110, "/opt/google/chrome/chrome", "--user-data-dir=rel/p", cwd=work)  # relative to its cwd
    # Google's google-chrome script runs chrome with `exec -a "$0"`; an upgrade while it runs deletes its program
    proc.process(120, "google-chrome", "--user-data-dir=/srv/chrome", exe="/opt/google/chrome/chrome (deleted)")
    proc.process(111, "/opt/microsoft/msedge/msedge", "--user-data-dir=/srv/old", "-user-data-dir=/srv/edge")
    proc.process(112, "/opt/brave.com/brave/brave", "--", "--user-data-dir=/srv/page")  # after --: a page to open
    proc.process(113, "/usr/bin/chromium-browser", "--user-data-dir", "/srv/spaced")  # Chromium: an empty switch
    proc.process(114, "/usr/lib/chromium/chromium", "--user-data-dir=/tmp/tabpilot-profile-x1y2")  # tabpilot's own
    proc.process(115, "/usr/lib/chromium/chromium", "--user-data-dir=/srv/theirs", home=tmp_path / "test-home")
    proc.process(116, "/usr/bin/python3", "tool.py", "--user-data-dir=/srv/python")  # not a browser
    proc.process(117, "/usr/lib/chromium/chromium")  # the usual folder: doctor checks that one anyway
    proc.process(121, "/ms-playwright/chromium-1200/chrome-linux/chrome", "--disable-extensions",
                 "--user-data-dir=/tmp/playwright_chromiumdev_profile-x1")  # no extension there needs the host
    proc.process(118, "/usr/lib/chromium/chromium", "--user-data-dir=/srv/a b")  # the same folder again
    (proc.root / "119").mkdir()  # gone while being read

    found = [(b.pid, b.program, str(b.profile)) for b in browsers_with_own_profiles(proc.root)]
    assert found == [
        (100, "/usr/lib/chromium/chromium", "/srv/a b"),
        (110, "/opt/google/chrome/chrome", str(work / "rel" / "p")),
        (111, "/opt/microsoft/msedge/msedge", "/srv/edge"),
        (120, "google-chrome", "/srv/chrome"),
    ]
    assert browsers_with_own_profiles(tmp_path / "no-proc") == []  # macOS, Windows


def test_doctor_names_the_folder_and_the_fix_and_is_clean_once_it_is_done(tmp_path: Path, home: Path) -> None:
    proc = FakeProc(tmp_path / "proc", home)
    profile = tmp_path / "my profile"
    profile.mkdir()
    proc.process(200, "/usr/lib/chromium/chromium", f"--user-data-dir={profile}")

    (problem,) = [f for f in diagnose("all", None, check_llm_endpoint=False, proc_root=proc.root)
                  if str(profile) in f.what]
    assert problem.level == "fail"
    assert problem.what == (f"a running browser (pid 200, /usr/lib/chromium/chromium) uses its own profile folder "
                            f"{profile}: the native host is not registered there")
    assert 'Chromium says: "Specified native messaging host not found."' in (problem.detail or "")
    assert problem.fix == f"tabpilot install --user-data-dir '{profile}'"
    (chinese,) = [f for f in diagnose("all", None, check_llm_endpoint=False, language="zh-CN", proc_root=proc.root)
                  if str(profile) in f.what]
    assert chinese.what == (f"正在运行的浏览器（pid 200，/usr/lib/chromium/chromium）使用自己的配置文件夹 {profile}："
                            "本机主机（native host）尚未在那里注册")
    assert chinese.fix == problem.fix
    # only asked about one profile, or one browser, doctor says nothing of it
    for browser, folder in (("all", tmp_path / "other"), ("chrome", None)):
        assert not [f for f in diagnose(browser, folder, check_llm_endpoint=False, proc_root=proc.root)
                    if str(profile) in f.what]

    install(user_data_dir=profile)
    mentioned = [f for f in diagnose("all", None, check_llm_endpoint=False, proc_root=proc.root)
                 if str(profile) in f.what]
    assert [f.level for f in mentioned] == ["ok", "ok"], mentioned  # its manifest, and its launcher's hello
    assert "answered a framed hello" in (mentioned[1].detail or "")


def test_a_wrong_registration_in_that_folder_is_checked_like_any_other_and_its_fix_names_the_folder(
    tmp_path: Path, home: Path
) -> None:
    """A manifest `install --user-data-dir` did not write (another copy of tabpilot, an old one, by hand): doctor
    has no record of it but reads it because a browser uses the folder."""
    proc = FakeProc(tmp_path / "proc", home)
    profile = tmp_path / "profile"
    hosts = profile / "NativeMessagingHosts"
    hosts.mkdir(parents=True)
    (hosts / "com.tabpilot.host.json").write_text(json.dumps({
        "name": "com.tabpilot.host", "type": "stdio", "path": "/nowhere/tabpilot-host",
        "allowed_origins": [f"chrome-extension://{bundled_extension_id()}/"]}))
    proc.process(300, "/usr/lib/chromium/chromium", f"--user-data-dir={profile}")

    problems = [f for f in diagnose("all", None, check_llm_endpoint=False, proc_root=proc.root)
                if str(profile) in f.what and f.level == "fail"]
    assert [(f.detail, f.fix) for f in problems] == [(
        'the launcher /nowhere/tabpilot-host does not exist. Chromium says: "Native host has exited."',
        f"run `tabpilot install --user-data-dir {profile}` again to rewrite it",
    )]
