"""Finding and launching the browser: the search order on each system, failures that clean up after
themselves, and `tabpilot state --user-data-dir` running on the user's own profile."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tabpilot.browser import launcher
from tabpilot.browser.browser import Browser
from tabpilot.browser.devtools_tabs import DevToolsTabs
from tabpilot.browser.launcher import BROWSER_ENV, BrowserLaunchError, BrowserNotFound, find_browser


def _fake_executable(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


@pytest.fixture
def no_override(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(BROWSER_ENV, raising=False)


# --- find_browser ----------------------------------------------------------------------------------
def test_env_var_overrides_the_usual_places(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    chosen = _fake_executable(tmp_path / "my-chrome")
    monkeypatch.setenv(BROWSER_ENV, str(chosen))
    assert find_browser() == str(chosen)


def test_explicit_path_beats_the_env_var(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(BROWSER_ENV, str(_fake_executable(tmp_path / "from-env")))
    explicit = _fake_executable(tmp_path / "from-flag")
    assert find_browser(str(explicit)) == str(explicit)


def test_a_name_on_path_is_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_override: None) -> None:
    chosen = _fake_executable(tmp_path / "bin" / "brave-nightly")
    monkeypatch.setenv("PATH", f"{chosen.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    assert find_browser("brave-nightly") == str(chosen)


def test_explicit_path_that_does_not_exist(tmp_path: Path, no_override: None) -> None:
    missing = tmp_path / "nope" / "chrome"
    with pytest.raises(BrowserNotFound, match="does not exist") as info:
        find_browser(str(missing))
    assert str(missing) in str(info.value)


def test_env_var_naming_a_missing_browser_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    missing = tmp_path / "gone"
    monkeypatch.setenv(BROWSER_ENV, str(missing))
    with pytest.raises(BrowserNotFound) as info:
        find_browser()
    assert BROWSER_ENV in str(info.value) and str(missing) in str(info.value)


def test_macos_applications_in_the_home_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                no_override: None) -> None:
    monkeypatch.setattr(sys, "platform", "darwin")
    monkeypatch.setattr(Path, "home", classmethod(lambda cls: tmp_path))
    app = _fake_executable(tmp_path / "Applications" / "Brave Browser.app" / "Contents" / "MacOS" / "Brave Browser")
    assert not Path("/Applications").exists(), "this test expects a machine without /Applications"
    assert find_browser() == str(app)
    chrome = _fake_executable(
        tmp_path / "Applications" / "Google Chrome.app" / "Contents" / "MacOS" / "Google Chrome"
    )
    assert find_browser() == str(chrome)  # Chrome comes before Brave


def test_windows_program_folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_override: None) -> None:
    monkeypatch.setattr(sys, "platform", "win32")
    program_files, local = tmp_path / "Program Files", tmp_path / "AppData" / "Local"
    monkeypatch.setenv("PROGRAMFILES", str(program_files))
    monkeypatch.delenv("PROGRAMFILES(X86)", raising=False)
    monkeypatch.setenv("LOCALAPPDATA", str(local))
    # a per-user Chrome install (no admin rights) lives under LOCALAPPDATA
    chrome = _fake_executable(local / "Google" / "Chrome" / "Application" / "chrome.exe")
    assert find_browser() == str(chrome)
    edge = _fake_executable(program_files / "Microsoft" / "Edge" / "Application" / "msedge.exe")
    assert find_browser() == str(edge)  # a system-wide install comes first


@pytest.mark.parametrize("platform", ["darwin", "win32"])
def test_nothing_found_names_the_env_var(platform: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         no_override: None) -> None:
    monkeypatch.setattr(sys, "platform", platform)
    monkeypatch.setattr(Path, "home", classmethod(lambda cls: tmp_path))
    for var in ("PROGRAMFILES", "PROGRAMFILES(X86)", "LOCALAPPDATA"):
        monkeypatch.setenv(var, str(tmp_path / var))
    with pytest.raises(BrowserNotFound) as info:
        find_browser()
    assert BROWSER_ENV in str(info.value)


# --- shutting down ---------------------------------------------------------------------------------
class _StuckAfterKill(subprocess.Popen):  # type: ignore[type-arg]
    """A process whose exit cannot be waited for in time (as one stuck in the kernel on a hung disk)."""

    def wait(self, timeout: float | None = None) -> int:
        if timeout is not None:
            raise subprocess.TimeoutExpired(self.args, timeout)
        return super().wait()


@pytest.mark.skipif(sys.platform == "win32", reason="process groups")
def test_terminate_group_survives_a_process_that_will_not_be_reaped() -> None:
    process = _StuckAfterKill(
        [sys.executable, "-c",
         "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('ready', flush=True); "
         "time.sleep(60)"],
        start_new_session=True, stdout=subprocess.PIPE,
    )
    try:
        assert process.stdout is not None and process.stdout.readline() == b"ready\n"
        launcher._terminate_group(process, 0.2)  # must not raise TimeoutExpired
        assert process.wait() == -signal.SIGKILL  # it was killed, not left running
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        process.stdout.close()  # type: ignore[union-attr]


def _stand_in_browser() -> subprocess.Popen[bytes]:
    """A process in a session of its own, as the launched browser is (its pid is its group's id)."""
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)


def test_the_watchdog_leaves_a_browser_tabpilot_closed_itself_alone_and_stops_one_it_did_not(tmp_path: Path) -> None:
    # Released (tabpilot closed the browser the ordinary way): it exits at once and touches nothing. It used to
    # stop the browser again and wait for its helpers to be reaped, which took 1.5 s of every `tabpilot run` here.
    browser, profile = _stand_in_browser(), tmp_path / "released"
    profile.mkdir()
    try:
        watchdog = launcher._Watchdog(browser, profile)
        watchdog.release()
        assert watchdog.process is None  # it exited
        assert browser.poll() is None and profile.is_dir()
    finally:
        browser.kill()
        browser.wait()
    # Not released (tabpilot was killed: the kernel closes its end of the pipe): it stops the browser's whole
    # group and removes the temporary profile.
    browser, profile = _stand_in_browser(), tmp_path / "left"
    profile.mkdir()
    watchdog = launcher._Watchdog(browser, profile)
    assert watchdog.process is not None
    os.close(watchdog._write_end)
    assert browser.wait(15) is not None  # reaped here, as a dead tabpilot's browser is by init
    watchdog.process.wait(15)
    assert not profile.exists()


@pytest.mark.browser
async def test_a_failed_start_closes_the_launched_browser(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[Browser] = []
    start = DevToolsTabs.start

    async def fails_while_starting(self: DevToolsTabs, browser: Browser) -> None:
        started.append(browser)
        await start(self, browser)
        raise RuntimeError("start-up failed")

    monkeypatch.setattr(DevToolsTabs, "start", fails_while_starting)
    with pytest.raises(RuntimeError, match="start-up failed"):
        await Browser.launch(headless=True, env={"HOME": str(tmp_path)})
    (browser,) = started
    assert browser.launched is not None
    try:
        assert browser.launched.process.poll() is not None, "the launched Chromium was left running"
        assert not browser.launched.user_data_dir.exists(), "its temporary profile was left behind"
    finally:
        browser.launched.close()  # a no-op once closed; otherwise the test must not leak it either


@pytest.mark.browser
async def test_a_launched_browser_loads_no_pages_of_its_own_ui(tmp_path: Path) -> None:
    # Chromium's WebUI omnibox popup loaded as the browser started, ~0.5 s of CPU beside the task's first page
    # (launcher.BASE_FLAGS): a browser nobody types an address into does without it.
    browser = await Browser.launch(headless=True, env={"HOME": str(tmp_path)})
    try:
        await browser.current_tab()
        targets = (await browser.connection.root.send("Target.getTargets"))["targetInfos"]
        assert [t["url"] for t in targets if t["type"] != "page"] == []
    finally:
        await browser.close()


@pytest.mark.browser
def test_a_long_temporary_directory_does_not_stop_the_browser(pages, tmp_path: Path) -> None:
    # Chromium aborted at start-up (-6) when $TMPDIR was over ~61 characters: its lock socket's path is too long.
    long_temp = tmp_path / ("t" * 80)
    long_temp.mkdir()
    result = _run_state([pages.url("basic.html")], tmp_path, temp=long_temp)
    assert result.returncode == 0, result.stderr
    assert "[end of page]" in result.stdout


# --- tabpilot state --user-data-dir ----------------------------------------------------------------
def _run_state(args: list[str], tmp_path: Path, temp: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(tmp_path), "TMPDIR": str(temp or tmp_path),
           "TABPILOT_HOME": str(tmp_path / "tabpilot")}
    return subprocess.run([sys.executable, "-m", "tabpilot", "state", *args],
                          capture_output=True, text=True, timeout=120, env=env)


@pytest.mark.browser
def test_state_runs_on_the_given_profile_and_keeps_it(pages, tmp_path: Path) -> None:
    profile = tmp_path / "my profile"
    profile.mkdir()
    (profile / "mine.txt").write_text("the user's own file")
    url = pages.url("actions_profile.html")

    first = _run_state([url, "--user-data-dir", str(profile)], tmp_path)
    assert first.returncode == 0, first.stderr
    assert "First visit" in first.stdout
    second = _run_state([url, "--user-data-dir", str(profile)], tmp_path)
    assert second.returncode == 0, second.stderr
    assert "Welcome back" in second.stdout  # the page's own storage from the first run was there

    assert (profile / "mine.txt").read_text() == "the user's own file"
    assert (profile / "Default").is_dir()  # Chromium kept its profile data there
    assert not list(tmp_path.glob("tabpilot-profile-*")), "a temporary profile was made instead"


def test_state_user_data_dir_with_cdp_url_is_a_clear_error(tmp_path: Path) -> None:
    result = _run_state(["--cdp-url", "http://127.0.0.1:9", "--user-data-dir", str(tmp_path)], tmp_path)
    assert result.returncode == 2
    assert "--user-data-dir" in result.stderr and "--cdp-url" in result.stderr


def test_run_user_data_dir_with_cdp_url_is_a_clear_error(tmp_path: Path) -> None:
    env = {**os.environ, "HOME": str(tmp_path), "TABPILOT_HOME": str(tmp_path / "tabpilot")}
    result = subprocess.run(
        [sys.executable, "-m", "tabpilot", "run", "say hi", "--cdp-url", "http://127.0.0.1:9",
         "--user-data-dir", str(tmp_path)], capture_output=True, text=True, timeout=60, env=env)
    assert result.returncode == 2
    assert "--user-data-dir" in result.stderr and "--cdp-url" in result.stderr


# --- launch failures ---------------------------------------------------------------------------------
@pytest.mark.skipif(sys.platform == "win32", reason="a shell script as the browser")
@pytest.mark.parametrize("script", ["#!/bin/sh\nexit 3\n", "not a program at all\n"])
def test_a_browser_that_fails_to_start_leaves_no_temporary_profile(
    script: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = tmp_path / "bin" / "chrome"
    fake.parent.mkdir()
    fake.write_text(script)
    fake.chmod(0o755)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    with pytest.raises(BrowserLaunchError, match=str(fake)):
        launcher.launch_browser(executable=str(fake), startup_timeout=10)
    assert list(scratch.iterdir()) == []


@pytest.mark.skipif(sys.platform == "win32", reason="a shell script as the browser")
def test_a_start_that_never_opens_its_endpoint_is_tried_once_more(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                                   ) -> None:
    # The first start stays up without writing DevToolsActivePort (seen once on CI); the second writes it.
    starts = tmp_path / "starts"
    fake = tmp_path / "bin" / "chrome"
    fake.parent.mkdir()
    fake.write_text(
        "#!/bin/sh\n"
        'for a in "$@"; do case "$a" in --user-data-dir=*) dir="${a#--user-data-dir=}";; esac; done\n'
        f'if [ -s "{starts}" ]; then printf \'4242\\n/devtools/browser/second\\n\' > "$dir/DevToolsActivePort"; fi\n'
        f'echo "start $$" >> "{starts}"; echo "stuck on something" >&2\n'
        "exec sleep 60\n"
    )
    fake.chmod(0o755)
    monkeypatch.setattr(launcher, "STALLED_START", 1.0)
    launched = launcher.launch_browser(executable=str(fake), user_data_dir=tmp_path / "profile", startup_timeout=10,
                                       log_path=tmp_path / "browser.log")
    try:
        assert launched.ws_url == "ws://127.0.0.1:4242/devtools/browser/second"
        first, second = (int(line.split()[1]) for line in starts.read_text().splitlines())
        with pytest.raises(ProcessLookupError):
            os.kill(first, 0)  # the stalled start was stopped
        assert launched.process.pid == second
    finally:
        launched.close()

    # Neither start opening it is an error after both, with what the browser said.
    starts.write_text("")
    (tmp_path / "profile" / "DevToolsActivePort").unlink()
    fake.write_text(fake.read_text().replace('[ -s "', '[ -e "/nonexistent'))
    began = time.monotonic()
    with pytest.raises(BrowserLaunchError, match=r"within 2 s; its log ends:\n  stuck on something"):
        launcher.launch_browser(executable=str(fake), user_data_dir=tmp_path / "profile", startup_timeout=2,
                                log_path=tmp_path / "browser.log")
    assert len(starts.read_text().splitlines()) == 2 and time.monotonic() - began < 10


@pytest.mark.browser
def test_a_profile_in_use_is_a_clear_error_and_is_kept(tmp_path: Path) -> None:
    profile = tmp_path / "profile"
    running = launcher.launch_browser(user_data_dir=profile, env={"HOME": str(tmp_path)})
    try:
        with pytest.raises(BrowserLaunchError, match="already using the profile"):
            launcher.launch_browser(user_data_dir=profile, env={"HOME": str(tmp_path)}, startup_timeout=15)
        assert running.process.poll() is None  # the browser already on it is left alone
        # and so is its lock: the failed start cleans up only what it left itself
        assert os.readlink(profile / "SingletonLock") == f"{socket.gethostname()}-{running.process.pid}"
        assert (profile / "SingletonSocket").is_symlink()
    finally:
        running.close()
    assert (profile / "Default").is_dir()


def test_the_watchdog_still_starts_where_tabpilot_runs_without_its_sources(monkeypatch: pytest.MonkeyPatch) -> None:
    # Installed from compiled files only, inspect cannot read the function the watchdog shares: it removes the
    # profile alone then, rather than every launch failing.
    import inspect

    def no_source(_function: object) -> str:
        raise OSError("could not get source code")

    monkeypatch.setattr(inspect, "getsource", no_source)
    source = launcher._watchdog_source()
    compile(source, "watchdog", "exec")
    assert "def remove_temporary_profile(profile):" in source and "#REMOVE_PROFILE" not in source


# --- what a launch on the user's own profile leaves behind, and a mistyped one ---------------------------------------
def _singletons(profile: Path) -> list[str]:
    return sorted(p.name for p in profile.iterdir() if p.name.startswith("Singleton"))


@pytest.fixture
def short_temp() -> Iterator[Path]:
    """A temporary directory short enough for the browser's socket path (`launcher._browser_env`), its own."""
    folder = Path(tempfile.mkdtemp(prefix="tp-", dir="/tmp" if os.path.isdir("/tmp") else None))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_lock_leftovers_go_only_when_the_lock_names_the_browser_that_left_them(tmp_path: Path) -> None:
    profile, socket_folder = tmp_path / "profile", tmp_path / "org.chromium.Chromium.aB3dE6"
    profile.mkdir()
    socket_folder.mkdir()
    (socket_folder / "SingletonSocket").write_text("")
    (profile / "SingletonSocket").symlink_to(socket_folder / "SingletonSocket")
    (profile / "SingletonCookie").symlink_to("1234567890")
    (profile / "SingletonLock").symlink_to(f"{socket.gethostname()}-4242")
    launcher.remove_lock_leftovers(profile, 4243)  # another browser's lock: not ours to touch
    assert _singletons(profile) == ["SingletonCookie", "SingletonLock", "SingletonSocket"] and socket_folder.is_dir()
    (profile / "SingletonLock").unlink()
    (profile / "SingletonLock").symlink_to("another-computer-4242")
    launcher.remove_lock_leftovers(profile, 4242)  # the same pid on another computer (a shared folder): not ours
    assert len(_singletons(profile)) == 3
    (profile / "SingletonLock").unlink()
    (profile / "SingletonLock").symlink_to(f"{socket.gethostname()}-4242")
    launcher.remove_lock_leftovers(profile, 4242)
    assert _singletons(profile) == [] and not socket_folder.exists()


@pytest.mark.browser
def test_a_browser_on_the_users_profile_leaves_no_lock_nor_socket_folder(tmp_path: Path, short_temp: Path) -> None:
    """Stopped by tabpilot (SIGTERM), Chromium left SingletonLock/Socket/Cookie in the user's profile and its
    org.chromium.Chromium.XXXXXX folder in $TMPDIR, one more each run; as when tabpilot itself is killed (the
    watchdog stops the browser)."""
    profile = tmp_path / "profile"
    env = {"HOME": str(tmp_path), "TMPDIR": str(short_temp)}
    launched = launcher.launch_browser(user_data_dir=profile, env=env)
    try:
        assert _singletons(profile) == ["SingletonCookie", "SingletonLock", "SingletonSocket"]
        (socket_folder,) = short_temp.iterdir()
        assert socket_folder.name.startswith("org.chromium.Chromium.")
    finally:
        launched.close()
    assert _singletons(profile) == [] and list(short_temp.iterdir()) == []
    assert (profile / "Default").is_dir()  # the profile itself is kept, as it is

    killed = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from tabpilot.browser import launcher; "
         f"launcher.launch_browser(user_data_dir=sys.argv[1], env={env!r}); print('up', flush=True); time.sleep(60)",
         str(profile)], stdout=subprocess.PIPE)
    try:
        assert killed.stdout is not None and killed.stdout.readline() == b"up\n"
        assert _singletons(profile) != []
    finally:
        killed.kill()
        killed.wait()
        killed.stdout.close()  # type: ignore[union-attr]
    deadline = time.monotonic() + 20
    while (_singletons(profile) or list(short_temp.iterdir())) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _singletons(profile) == [] and list(short_temp.iterdir()) == []


def _run(args: list[str], tmp_path: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env.update({"HOME": str(tmp_path), "TABPILOT_HOME": str(tmp_path / "tabpilot"), **extra})
    return subprocess.run([sys.executable, "-m", "tabpilot", *args], capture_output=True, text=True, timeout=120,
                          env=env)


@pytest.mark.parametrize("command", [["run", "say hi"], ["state", "about:blank"]])
def test_a_mistyped_user_data_dir_is_refused_and_nothing_is_made(tmp_path: Path, command: list[str]) -> None:
    # A launched browser made the whole path: a new, empty profile, where the person's logins seemed lost.
    typo = tmp_path / "no-such-folder" / "profile"
    result = _run([*command, "--user-data-dir", str(typo)], tmp_path)
    assert result.returncode == 2, result.stderr
    assert f"{typo} does not exist, nor does the folder it would go in ({typo.parent}): is the path mistyped?" in (
        result.stderr)
    assert not typo.parent.exists()


@pytest.mark.browser
def test_run_on_a_missing_profile_folder_says_it_is_a_new_profile(tmp_path: Path, short_temp: Path) -> None:
    recording = tmp_path / "done.json"
    recording.write_text(json.dumps({"format": "tabpilot-recording", "version": 1, "replies": [
        {"tool": "AgentOutput", "arguments": {"evaluation_previous_goal": "Started", "memory": "", "next_goal": "end",
                                              "action": {"done": {"text": "said hi", "success": True}}}}]}))
    profile = tmp_path / "new profile"
    first = _run(["run", "say hi", "--user-data-dir", str(profile), "--replay", str(recording)], tmp_path,
                 TMPDIR=str(short_temp))
    assert first.returncode == 0, first.stderr
    new = f"{profile} does not exist yet: the browser starts a new, empty profile there (no logins or cookies)."
    assert first.stderr.count(new) == 1, first.stderr
    assert (profile / "Default").is_dir() and _singletons(profile) == [] and list(short_temp.iterdir()) == []
    again = _run(["run", "say hi", "--user-data-dir", str(profile), "--replay", str(recording)], tmp_path,
                 TMPDIR=str(short_temp))
    assert again.returncode == 0, again.stderr
    assert "does not exist" not in again.stderr
