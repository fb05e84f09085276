"""`tabpilot run` against what broke it in the outside attack run (issue 14): a page holding lone UTF-16
surrogates, a model reply holding one, and a run killed with SIGKILL or SIGHUP. Real Chromium, the
scripted model over HTTP, the real SQLite record."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from agent_support import done, index_of, on_page
from test_run_cli import API_KEY, tabpilot

from tabpilot.llm.scripted import Delay, ScriptedLLMServer, ToolCall
from tabpilot.store.tasks import TaskStore

pytestmark = [pytest.mark.browser]


def utf8_clean(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False)
    text.encode("utf-8")  # raises on a lone surrogate
    return text


def test_a_page_with_half_an_emoji_does_not_fail_the_task(pages, tmp_path: Path) -> None:
    replies = [on_page(lambda b: {"click_element_by_index": {"index": index_of(b, "Go")}}, goal="press Go"),
               done("Pressed Go")]
    with ScriptedLLMServer(replies) as server:
        proc = tabpilot("run", "Press Go", "--url", pages.url("surrogate.html"), "--base-url", server.base_url,
                        "--model", "scripted", "--api-key", API_KEY, home=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.rstrip().endswith("✅ completed: Pressed Go")
    assert len(server.requests) == 2  # both steps, the second on the page as the first left it
    for request in server.requests:
        prompt = utf8_clean(request)
        assert "a\ufffdb" in prompt  # the page's text, its half emoji replaced
    [summary] = TaskStore(tmp_path / "data" / "tasks.sqlite3").list_tasks()
    assert summary.status == "completed" and summary.steps == 2


def test_a_model_reply_with_a_lone_surrogate_keeps_its_step(pages, tmp_path: Path) -> None:
    text = json.dumps({"evaluation_previous_goal": "start", "memory": "half \ud83d", "next_goal": "finish \udc00 now",
                       "action": {"done": {"text": "Done \ud800 here", "success": True}}})
    with ScriptedLLMServer([ToolCall("AgentOutput", text)]) as server:
        proc = tabpilot("run", "Finish", "--url", pages.url("basic.html"), "--base-url", server.base_url,
                        "--model", "scripted", "--api-key", API_KEY, home=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    assert "step 1 · finish \ufffd now" in proc.stdout and "completed: Done \ufffd here" in proc.stdout
    store = TaskStore(tmp_path / "data" / "tasks.sqlite3")
    [summary] = store.list_tasks()
    assert summary.status == "completed" and summary.steps == 1
    record = store.get_task(summary.task_id)
    assert record is not None
    [stepped] = [event for event in record.events if event["type"] == "step"]
    assert stepped["reflection"]["memory"] == "half \ufffd"
    assert record.result == {"success": True, "data": "Done \ufffd here"}


def _processes() -> dict[int, tuple[int, str]]:
    """pid → (session id, command line) of every process."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        fields = stat.rpartition(")")[2].split()
        if fields[0] != "Z":
            found[int(entry.name)] = (int(fields[3]), cmdline)
    return found


def _browser_processes(temp: Path, sessions: set[int] | None = None) -> tuple[set[int], set[int]]:
    """(the browser's processes, their sessions): every process using a profile under `temp`, and every
    other process in their sessions (renderers, zygotes)."""
    processes = _processes()
    using = {pid for pid, (_, cmdline) in processes.items() if f"--user-data-dir={temp}" in cmdline}
    sessions = (sessions or set()) | {processes[pid][0] for pid in using}
    return {pid for pid, (sid, _) in processes.items() if sid in sessions}, sessions


@pytest.fixture
def temp() -> Iterator[Path]:
    """A TMPDIR for the run, short: Chromium puts its SingletonSocket under it, and a Unix socket's path
    must stay under 108 bytes (pytest's tmp_path is too long: Chromium aborts)."""
    folder = Path(tempfile.mkdtemp(prefix="tpk-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _start_slow_run(pages, tmp_path: Path, temp: Path, server: ScriptedLLMServer) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env.update(TABPILOT_HOME=str(tmp_path), HOME=str(tmp_path), TMPDIR=str(temp), PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(
        [sys.executable, "-m", "tabpilot", "run", "Wait for a slow model", "--url", pages.url("agent_form.html"),
         "--base-url", server.base_url, "--model", "scripted", "--api-key", API_KEY],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    deadline = time.monotonic() + 60
    while not server.requests and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.1)
    assert server.requests, "the model was never called"
    return proc


def _socket_folders(temp: Path) -> list[Path]:
    return [path for path in temp.iterdir() if path.name.startswith(("org.chromium.", "com.google."))]


def _left_behind(temp: Path, sessions: set[int], seconds: float = 20) -> tuple[set[int], list[Path]]:
    deadline = time.monotonic() + seconds
    while True:
        processes, _ = _browser_processes(temp, sessions)
        # The profile, and the folder Chromium made in $TMPDIR for the profile's singleton socket.
        profiles = list(temp.glob("tabpilot-profile-*")) + _socket_folders(temp)
        if (not processes and not profiles) or time.monotonic() > deadline:
            return processes, profiles
        time.sleep(0.2)


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGHUP], ids=["SIGKILL", "SIGHUP"])
def test_a_killed_run_leaves_no_browser_and_no_profile(pages, tmp_path: Path, temp: Path, sig: signal.Signals
                                                        ) -> None:
    sessions: set[int] = set()
    with ScriptedLLMServer([Delay(120, then=done())]) as server:
        proc = _start_slow_run(pages, tmp_path, temp, server)
        try:
            running, sessions = _browser_processes(temp)
            assert len(running) >= 3 and len(list(temp.glob("tabpilot-profile-*"))) == 1  # a real browser ran
            assert len(_socket_folders(temp)) == 1
            proc.send_signal(sig)
            proc.wait(30)
            left, profiles = _left_behind(temp, sessions)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            _out, err = proc.communicate()
            for session in sessions:  # whatever outlived it, so a failure here leaves nothing running
                with contextlib.suppress(OSError):
                    os.killpg(session, signal.SIGKILL)
    assert left == set(), f"{len(left)} browser processes outlived tabpilot run"
    assert profiles == []
    if sig == signal.SIGHUP:  # handled like Ctrl-C / SIGTERM: a clean stop, recorded
        assert proc.returncode == 130 and "Traceback" not in err, err
        [summary] = TaskStore(tmp_path / "data" / "tasks.sqlite3").list_tasks()
        assert summary.status == "stopped"


def test_a_profile_left_by_a_dead_run_is_removed_at_the_next_start(pages, tmp_path: Path, temp: Path) -> None:
    stale, unmarked_old, unmarked_new, foreign = (temp / f"tabpilot-profile-{name}" for name in
                                                  ("stale", "old", "new", "alive"))
    for folder in (stale, unmarked_old, unmarked_new, foreign):
        (folder / "Default").mkdir(parents=True)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    (stale / "tabpilot-owner").write_text(dead.stdout.strip())  # a pid that has exited
    (foreign / "tabpilot-owner").write_text(str(os.getpid()))  # a live tabpilot's profile: kept
    os.utime(unmarked_old, (time.time() - 7200, time.time() - 7200))
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env.update(TABPILOT_HOME=str(tmp_path), HOME=str(tmp_path), TMPDIR=str(temp))
    with ScriptedLLMServer([done("ok")]) as server:
        proc = subprocess.run(
            [sys.executable, "-m", "tabpilot", "run", "Finish", "--url", pages.url("basic.html"),
             "--base-url", server.base_url, "--model", "scripted", "--api-key", API_KEY],
            env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert sorted(path.name for path in temp.glob("tabpilot-profile-*")) == ["tabpilot-profile-alive",
                                                                           "tabpilot-profile-new"]
    assert _socket_folders(temp) == []  # the run's browser closed: its singleton socket's folder went too
