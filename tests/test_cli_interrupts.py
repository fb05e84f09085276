"""Ctrl-C while a command is still starting its browser, as a user presses it: SIGINT to the real CLI the moment
its Chromium exists, before the task has begun."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from store_support import processes_using

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not Path("/proc").is_dir(), reason="finds the browser in /proc")]


def _interrupted_while_starting(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env.update(TABPILOT_HOME=str(tmp_path / "tabpilot"), HOME=str(tmp_path), TMPDIR=str(tmp_path),
               PYTHONUNBUFFERED="1")
    proc = subprocess.Popen([sys.executable, "-m", "tabpilot", *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not processes_using(tmp_path / "tabpilot-profile-") and time.monotonic() < deadline:
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.01)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


@pytest.mark.parametrize("command", [["demo"], ["run", "x", "--base-url", "http://127.0.0.1:9/v1", "--model", "m"]])
def test_ctrl_c_while_the_browser_starts_stops_in_one_line_and_leaves_nothing(tmp_path: Path, command) -> None:
    proc = _interrupted_while_starting(tmp_path, *command)
    assert proc.returncode == 130, proc.stderr
    assert "Traceback" not in proc.stderr and proc.stderr.strip() == "", proc.stderr
    assert proc.stdout.rstrip().endswith("⏹ stopped: Task stopped"), proc.stdout
    assert "step 1" not in proc.stdout
    assert processes_using(tmp_path) == [], "the browser was left running"
    assert not list(tmp_path.glob("tabpilot-profile-*")), "temporary profile left behind"


def test_state_interrupted_while_the_browser_starts_ends_quietly_and_leaves_nothing(tmp_path: Path) -> None:
    # The page it opens never answers, so it is still starting when Ctrl-C comes however late the test sees its
    # browser: with about:blank, the fresh-clone run at a071ce9 (loaded) read and printed the page first (exit 0).
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        proc = _interrupted_while_starting(tmp_path, "state", f"http://127.0.0.1:{silent.getsockname()[1]}/")
    assert (proc.returncode, proc.stdout, proc.stderr) == (130, "", "")
    assert processes_using(tmp_path) == [], "the browser was left running"
    assert not list(tmp_path.glob("tabpilot-profile-*")), "temporary profile left behind"
