"""Find an installed Chromium-family browser, launch it with a DevTools endpoint, or attach to one."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .programs import is_program, program_candidates

BROWSER_ENV = "TABPILOT_BROWSER"


class WordedBrowserError(RuntimeError):
    """A failure the user fixes: `key` and `values` word it in their language (i18n.py `browser.*`); the
    message is the English."""

    def __init__(self, key: str, **values: str) -> None:
        from ..i18n import text

        super().__init__(text(key, None, **values))
        self.key, self.values = key, values


class BrowserNotFound(WordedBrowserError):
    pass


class BrowserLaunchError(RuntimeError):
    pass


class NoDisplay(WordedBrowserError):
    """A browser window asked for where there is no display: Chromium would only exit with code 1 and leave the
    reason ("Missing X server or $DISPLAY") in its own log."""


class BrowserUnreachable(WordedBrowserError, BrowserLaunchError):
    """Nothing answers as a DevTools endpoint at the address given (`--cdp-url`)."""


def _candidates() -> list[str]:
    return [path for _browser, path in program_candidates()]


def find_browser(explicit: str | None = None) -> str:
    """The browser binary to use: an explicit one, then $TABPILOT_BROWSER, then the usual places. Either may
    name a browser as `tabpilot install --browser` does (chrome, chromium, edge, brave: its program, found in the
    usual places) or be a program's path or name on PATH."""
    from .programs import BROWSERS

    for choice, key in ((explicit, "browser.missing"), (os.environ.get(BROWSER_ENV), "browser.missing_env")):
        if choice and choice.strip().lower() in BROWSERS:
            kind = choice.strip().lower()
            for browser, path in program_candidates():
                if browser == kind and is_program(path):
                    return path
            raise BrowserNotFound("browser.kind_missing", browser=kind)
        if choice:
            resolved = shutil.which(choice) or choice
            if Path(resolved).is_file():
                return resolved
            raise BrowserNotFound(key, variable=BROWSER_ENV, path=repr(choice))
    for path in _candidates():
        if is_program(path):
            return path
    raise BrowserNotFound("browser.not_found", variable=BROWSER_ENV)


BASE_FLAGS = [
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    # WebUIOmnibox*: Chromium 156 draws the address bar's suggestions with pages of its own (chrome://omnibox-popup
    # .top-chrome), loaded in a renderer of their own as the browser starts, whether or not anyone ever types
    # there: ~0.5 s of CPU in the first second and a half, competing with the task's first page, and a process more.
    # Without them the browser uses its built-in popup. Launch to a first state, then three more pages, 9 runs at
    # load ~5: browser CPU 1,490 -> 980 ms, launch to first state 587 -> 477 ms, the three pages 377 -> 239 ms.
    "--disable-features=Translate,OptimizationHints,MediaRouter,WebUIOmniboxPopup,WebUIOmniboxAimPopup",
    "--disable-breakpad",
    "--password-store=basic",
    "--use-mock-keychain",
]


PROFILE_PREFIX = "tabpilot-profile-"
PROFILE_OWNER_FILE = "tabpilot-owner"  # in a temporary profile: which process made it (store/owner.py)
STALE_UNMARKED_AGE = 3600.0  # a temporary profile without an owner file (older tabpilot) counts as stale after this

# The watchdog: a tiny process in its own session that holds the read end of a pipe whose write end only
# tabpilot holds. However tabpilot ends — SIGKILL, SIGHUP from a closed terminal, a crash — the kernel
# closes the write end, the watchdog reads EOF, stops the browser (the main process first, so it can
# save the profile, then its whole process group) and removes a temporary profile. Without it, each
# killed `tabpilot run` left 9 Chromium processes (~950 MB) and the profile folder behind. When tabpilot has
# closed the browser itself it writes to the pipe first, and the watchdog just exits: its checks would wait for
# the browser's helpers to be reaped, which a container's init may take its time over (1.5 s of every
# `tabpilot run` here, the 5 s limit where nothing reaps them).
_WATCHDOG = """from __future__ import annotations
import os, shutil, signal, sys, time
#REMOVE_PROFILE
pid, group, profile = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
users_profile = sys.argv[4] if len(sys.argv) > 4 else ""
released = False
try:
    while os.read(0, 4096):
        released = True
except OSError:
    pass
if released:
    sys.exit(0)
def alive(kill, target):
    try:
        kill(target, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
try:
    os.kill(pid, signal.SIGTERM)
except OSError:
    pass
deadline = time.monotonic() + 5
while alive(os.kill, pid) and time.monotonic() < deadline:
    time.sleep(0.05)
try:
    os.killpg(group, signal.SIGKILL)
except OSError:
    pass
deadline = time.monotonic() + 5
while alive(os.killpg, group) and time.monotonic() < deadline:
    time.sleep(0.05)
if profile:
    remove_temporary_profile(profile)
if users_profile and not alive(os.kill, pid):  # a browser still stuck in exiting keeps its lock
    remove_lock_leftovers(users_profile, pid)
"""


def remove_temporary_profile(profile: str | Path) -> None:
    """Remove a temporary profile, and the folder Chromium made in the temporary directory for its singleton
    socket (org.chromium.Chromium.XXXXXX, one a launch, named by the profile's SingletonSocket link): left
    behind, ~1,200 of them had piled up in this machine's /tmp. (The watchdog runs this too, without tabpilot.)"""
    import os
    import shutil

    try:
        socket_folder = os.path.dirname(os.readlink(os.path.join(profile, "SingletonSocket")))
    except OSError:
        socket_folder = ""
    shutil.rmtree(profile, ignore_errors=True)
    try:
        if socket_folder and all(name.startswith("Singleton") for name in os.listdir(socket_folder)):
            shutil.rmtree(socket_folder, ignore_errors=True)
    except OSError:
        pass


def remove_lock_leftovers(profile: str | Path, pid: int) -> None:
    """After the browser tabpilot launched on a profile of the user's (`--user-data-dir`) has exited: the lock
    links it left there (SingletonLock, SingletonSocket, SingletonCookie; a browser stopped with SIGTERM leaves
    them) and its socket's folder in the temporary directory (org.chromium.Chromium.XXXXXX). Only when the lock
    names that browser (`<host>-<pid>`): another browser's lock, or one on another computer, is left alone.
    (The watchdog runs this too, without tabpilot.)"""
    import os
    import shutil
    import socket

    try:
        if os.readlink(os.path.join(profile, "SingletonLock")) != f"{socket.gethostname()}-{pid}":
            return
    except OSError:
        return
    try:
        socket_folder = os.path.dirname(os.readlink(os.path.join(profile, "SingletonSocket")))
    except OSError:
        socket_folder = ""
    for name in ("SingletonSocket", "SingletonCookie", "SingletonLock"):  # the lock last: it says whose they are
        link = os.path.join(profile, name)
        try:
            if os.path.islink(link):
                os.unlink(link)
        except OSError:
            pass
    try:
        if socket_folder and all(name.startswith("Singleton") for name in os.listdir(socket_folder)):
            shutil.rmtree(socket_folder, ignore_errors=True)
    except OSError:
        pass


def _watchdog_source() -> str:
    """The watchdog's script, with `remove_temporary_profile` and `remove_lock_leftovers` as defined here (where
    tabpilot runs without its sources, from compiled files only: one that removes the profile alone, as before)."""
    import inspect
    import textwrap

    try:
        removing = "\n".join(textwrap.dedent(inspect.getsource(function))
                             for function in (remove_temporary_profile, remove_lock_leftovers))
    except (OSError, TypeError):
        removing = ("def remove_temporary_profile(profile):\n    shutil.rmtree(profile, ignore_errors=True)\n"
                    "def remove_lock_leftovers(profile, pid):\n    pass\n")
    return _WATCHDOG.replace("#REMOVE_PROFILE", removing)


@dataclass
class LaunchedBrowser:
    process: subprocess.Popen[bytes]
    ws_url: str
    user_data_dir: Path
    owns_profile: bool
    log_path: Path | None = None
    watchdog: _Watchdog | None = field(default=None, repr=False)
    _closed: bool = field(default=False, repr=False)

    @property
    def http_url(self) -> str:
        host_port = self.ws_url.split("/")[2]
        return f"http://{host_port}"

    def close(self, timeout: float = 5.0) -> None:
        """Terminate the whole process group, then remove a temporary profile (or, from the user's profile, the
        lock links this browser left)."""
        if self._closed:
            return
        self._closed = True
        _terminate_group(self.process, timeout)
        if self.owns_profile:
            remove_temporary_profile(self.user_data_dir)
        elif self.process.poll() is not None:
            remove_lock_leftovers(self.user_data_dir, self.process.pid)
        if self.watchdog is not None:
            self.watchdog.release()


class _Watchdog:
    """tabpilot's end of the watchdog: `release()` when the browser is closed the ordinary way."""

    def __init__(self, browser: subprocess.Popen[bytes], profile: Path | None, users_profile: Path | None = None
                 ) -> None:
        read_end, self._write_end = os.pipe()  # both non-inheritable: the browser gets neither
        try:
            self.process: subprocess.Popen[bytes] | None = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", _watchdog_source(), str(browser.pid), str(browser.pid),
                 str(profile or ""), str(users_profile or "")],
                stdin=read_end, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                start_new_session=True,  # the terminal's SIGHUP or a kill of tabpilot's group spares it
            )
        except OSError:
            os.close(self._write_end)
            raise
        finally:
            os.close(read_end)

    def release(self) -> None:
        """Tell the watchdog the browser was closed the ordinary way and close tabpilot's end: it exits."""
        if self.process is None:
            return
        try:
            os.write(self._write_end, b"released")
        finally:
            os.close(self._write_end)
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process = None


def remove_stale_profiles(folder: Path | None = None) -> list[Path]:
    """Temporary profiles whose tabpilot is gone and that no running browser uses (a run killed before
    it could clean up, before the watchdog existed or when it could not run): removed; returns them."""
    from ..store.owner import owner_alive

    removed = []
    for profile in Path(folder or tempfile.gettempdir()).glob(PROFILE_PREFIX + "*"):
        try:
            if not profile.is_dir() or profile.is_symlink() or profile.stat().st_uid != os.getuid():
                continue
            marker = profile / PROFILE_OWNER_FILE
            if marker.exists():
                if owner_alive(marker.read_text().strip()):
                    continue
            elif time.time() - profile.stat().st_mtime < STALE_UNMARKED_AGE:
                continue
            if _browser_alive(profile):
                continue
        except OSError:
            continue
        remove_temporary_profile(profile)
        removed.append(profile)
    return removed


def _browser_alive(profile: Path) -> bool:
    """Chromium's SingletonLock names `host-pid` while a browser uses the profile."""
    try:
        target = os.readlink(profile / "SingletonLock")
    except OSError:
        return False
    pid_text = target.rpartition("-")[2]
    if not pid_text.isdigit():
        return True  # cannot tell: leave it
    try:
        os.kill(int(pid_text), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _terminate_group(process: subprocess.Popen[bytes], timeout: float) -> None:
    if process.poll() is not None:
        return
    try:
        # Only the browser process: it then shuts down like a closed window and saves the profile
        # (cookies, site storage). Signalling the whole group kills its storage helpers first.
        process.terminate()
        process.wait(timeout)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        pass
    if process.poll() is None:
        try:
            if sys.platform == "win32":
                process.kill()
            else:
                os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:  # stuck in the kernel (e.g. a hung disk): nothing more we can do
            pass
    elif sys.platform != "win32":
        # the browser's helpers (renderers, zygote) may outlive the main process briefly
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


# Chromium on Linux and macOS puts its profile lock's socket in $TMPDIR/.org.chromium.Chromium.XXXXXX/SingletonSocket
# and aborts (exit code -6) when that path is over the 107 bytes a Unix socket path may have: a TMPDIR of
# more than 61 characters (seen with pytest's temporary directories).
SOCKET_PATH_MAX = 107
SINGLETON_SOCKET = "/.org.chromium.Chromium.XXXXXX/SingletonSocket"


def _browser_env(env: dict[str, str]) -> dict[str, str]:
    """The browser's environment, with a temporary directory short enough for its socket paths."""
    if sys.platform == "win32":
        return env
    temp = env.get("TMPDIR") or tempfile.gettempdir()
    if len(os.fsencode(temp)) + len(SINGLETON_SOCKET) > SOCKET_PATH_MAX and os.path.isdir("/tmp"):
        return {**env, "TMPDIR": "/tmp"}
    return env


def needs_display(headless: bool, env: Mapping[str, str] | None = None) -> bool:
    """Whether a browser window is asked for where there is none: on Linux, neither DISPLAY nor WAYLAND_DISPLAY in
    `env` (default: this process's environment) when the browser is not headless. The one check `launch_browser`
    makes (`run --headed`, `state --headed`) and `tabpilot mcp --launch` makes at start-up."""
    seen = os.environ if env is None else env
    return not headless and sys.platform.startswith("linux") and not (seen.get("DISPLAY") or
                                                                     seen.get("WAYLAND_DISPLAY"))


def launch_browser(
    *,
    executable: str | None = None,
    headless: bool = True,
    user_data_dir: str | Path | None = None,
    extension_dir: str | Path | None = None,
    extra_args: list[str] | None = None,
    env: dict[str, str] | None = None,
    window_size: tuple[int, int] = (1280, 800),
    log_path: str | Path | None = None,
    startup_timeout: float = 30.0,
) -> LaunchedBrowser:
    """Start a browser with a DevTools endpoint on a free port and wait until it answers."""
    binary = find_browser(executable)
    if needs_display(headless, {**os.environ, **(env or {})}):
        raise NoDisplay("browser.no_display")
    owns_profile = user_data_dir is None
    if owns_profile and sys.platform != "win32":
        remove_stale_profiles()
    profile = Path(user_data_dir or tempfile.mkdtemp(prefix=PROFILE_PREFIX)).expanduser().absolute()
    profile.mkdir(parents=True, exist_ok=True)
    if owns_profile:
        from ..store.owner import current_owner

        (profile / PROFILE_OWNER_FILE).write_text(current_owner())
    port_file = profile / "DevToolsActivePort"
    port_file.unlink(missing_ok=True)
    args = [
        binary,
        *BASE_FLAGS,
        f"--user-data-dir={profile}",
        "--remote-debugging-port=0",
        f"--window-size={window_size[0]},{window_size[1]}",
    ]
    if headless:
        args += ["--headless=new", "--disable-gpu"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        args.append("--no-sandbox")  # Chromium refuses to start as root otherwise
    if extension_dir:
        ext = str(Path(extension_dir).resolve())
        args += [f"--load-extension={ext}", f"--disable-extensions-except={ext}"]
    args += extra_args or []
    args.append("about:blank")
    env_for_browser = _browser_env({**os.environ, **(env or {})})
    in_use_hint = "" if owns_profile else f" (is another browser already using the profile {profile}?)"
    log = Path(log_path) if log_path else None
    # The first start gets STALLED_START seconds, then one more the whole startup_timeout (see STALLED_START).
    limits = [STALLED_START, startup_timeout] if startup_timeout > STALLED_START else [startup_timeout]
    for attempt, limit in enumerate(limits, 1):
        process = _spawn(args, env_for_browser, log, binary, profile if owns_profile else None)
        watchdog = None
        try:
            if sys.platform != "win32":
                watchdog = _Watchdog(process, *((profile, None) if owns_profile else (None, profile)))
            ws_url = _wait_for_endpoint(process, port_file, binary, limit, in_use_hint=in_use_hint, log=log)
        except _Stalled as stalled:
            _terminate_group(process, 5)
            _remove_what_it_left(process, profile, owns_profile)
            if watchdog is not None:
                watchdog.release()
            if attempt < len(limits):
                continue
            if owns_profile:
                remove_temporary_profile(profile)
            raise BrowserLaunchError(str(stalled)) from None
        except BaseException:
            _terminate_group(process, 5)
            if owns_profile:  # a profile the user gave is theirs: never removed
                remove_temporary_profile(profile)
            _remove_what_it_left(process, profile, owns_profile)
            if watchdog is not None:
                watchdog.release()
            raise
        return LaunchedBrowser(process, ws_url, profile, owns_profile, log, watchdog=watchdog)
    raise AssertionError("unreachable: the last attempt returns or raises")


def _remove_what_it_left(process: subprocess.Popen[bytes], profile: Path, owns_profile: bool) -> None:
    """A start that failed on the user's profile: the lock links that browser left there, once it has exited."""
    if not owns_profile and process.poll() is not None:
        remove_lock_leftovers(profile, process.pid)


# One start in many never opens its DevTools endpoint: seen as the suite's first launch on a freshly set-up CI
# machine, where the browser stayed up 30 s (it then answered SIGTERM, exit code 0) without writing its
# DevToolsActivePort. Starts take 0.2-0.6 s here (60 in a row, with the extension, both cores busy), so one
# that has written nothing after STALLED_START seconds is stopped and started once more, with the whole timeout.
STALLED_START = 15.0
LOG_TAIL_LINES = 6


class _Stalled(Exception):
    """The browser is running but has not opened its DevTools endpoint in time."""


def _spawn(args: list[str], env: dict[str, str], log: Path | None, binary: str,
           temporary_profile: Path | None) -> subprocess.Popen[bytes]:
    log_file = open(log, "ab") if log else subprocess.DEVNULL  # noqa: SIM115
    try:
        return subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=log_file,
            stderr=log_file,
            env=env,
            start_new_session=sys.platform != "win32",
        )
    except OSError as exc:  # not executable, not a program for this system
        if temporary_profile is not None:
            shutil.rmtree(temporary_profile, ignore_errors=True)
        raise BrowserLaunchError(f"could not start {binary}: {exc}") from exc
    finally:
        if log:
            log_file.close()  # type: ignore[union-attr]


def _wait_for_endpoint(
    process: subprocess.Popen[bytes], port_file: Path, binary: str, timeout: float, *, in_use_hint: str,
    log: Path | None,
) -> str:
    """The browser's DevTools websocket URL, once it has written it to the profile's DevToolsActivePort."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise BrowserLaunchError(f"{binary} exited with code {process.returncode} during start-up{in_use_hint}"
                                     f"{_said(log)}")
        try:
            lines = port_file.read_text().splitlines()
        except OSError:
            lines = []
        if len(lines) >= 2:
            return f"ws://127.0.0.1:{lines[0].strip()}{lines[1].strip()}"
        time.sleep(0.03)
    raise _Stalled(f"{binary} did not open its DevTools endpoint within {timeout:g} s{_said(log)}")


def _said(log: Path | None) -> str:
    """The end of the browser's own log, for an error about its start ("" without a log)."""
    try:
        lines = [line for line in log.read_text(errors="replace").splitlines() if line.strip()] if log else []
    except OSError:
        return ""
    if not lines:
        return ""
    return "; its log ends:\n  " + "\n  ".join(line[:300] for line in lines[-LOG_TAIL_LINES:])


def reason_of(exc: BaseException) -> str:
    """What went wrong, without urllib's wrapping ("<urlopen error [Errno 111] Connection refused>")."""
    reason = getattr(exc, "reason", None)
    reason = getattr(reason, "strerror", None) or reason or getattr(exc, "strerror", None) or exc
    return str(reason) or type(exc).__name__


def _http_get_json(url: str, timeout: float) -> object:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(url, timeout=timeout) as response:
        return json.loads(response.read())


async def resolve_ws_url(cdp_url: str, timeout: float = 10.0) -> str:
    """Accept ws://…/devtools/browser/… as is, or http(s)://host:port and ask it for its websocket."""
    if cdp_url.startswith(("ws://", "wss://")):
        return cdp_url
    base = cdp_url.rstrip("/")
    if not base.startswith(("http://", "https://")):
        base = "http://" + base
    try:
        info = await asyncio.to_thread(_http_get_json, base + "/json/version", timeout)
    except (urllib.error.HTTPError, ValueError) as exc:  # a web server, but no browser's: 404, or not JSON
        raise BrowserUnreachable("browser.not_devtools", address=base) from exc
    except Exception as exc:
        raise BrowserUnreachable("browser.unreachable", address=base, detail=reason_of(exc)) from exc
    if not isinstance(info, dict) or "webSocketDebuggerUrl" not in info:
        raise BrowserUnreachable("browser.not_devtools", address=base)
    return str(info["webSocketDebuggerUrl"])
