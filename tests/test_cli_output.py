"""What the command line prints where: into a pipe whose reader goes away, on a terminal (a pty) while a
slow model thinks, into a pipe or as --json (no status line, nothing but the result), with no one at
standard input, and once per message. Subprocesses with TABPILOT_HOME in a temporary folder, a real
Chromium, the scripted model server over HTTP (slowed with Delay), rows in the real SQLite store."""

from __future__ import annotations

import asyncio
import http.server
import json
import os
import pty
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from agent_support import browser_state, done, index_of, on_page, step
from store_support import in_a_terminal, set_language
from test_run_cli import API_KEY, tabpilot

from tabpilot.browser.browser import Browser
from tabpilot.llm.scripted import Delay, ScriptedLLMServer
from tabpilot.store.tasks import TaskStore

pytestmark = [pytest.mark.browser]

SLOW = 2.5  # seconds the scripted model takes per step: long enough to see the status line turn


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env.update(TABPILOT_HOME=str(home), HOME=str(home), PYTHONUNBUFFERED="1")
    return env


def _slow_replies(seconds: float = SLOW) -> list:
    """A first step the model thinks `seconds` about (the status line counts them); the second is shown too,
    however fast its answer."""
    return [Delay(seconds, then=step("wait", {"seconds": 1}, goal="wait a moment")), done("Greeted Ada")]


def _in_a_terminal(args: list[str], home: Path, timeout: float = 90) -> tuple[str, int]:
    return in_a_terminal(args, _env(home), timeout=timeout)


def test_a_pipe_whose_reader_goes_away_ends_the_command_quietly_and_the_task_is_stopped(tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "tabpilot", "demo"], env=_env(tmp_path),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stderr is not None
    first = [proc.stdout.readline() for _ in range(3)]  # `tabpilot demo | head -3`
    assert first[0].startswith("tabpilot demo")
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=90) == 141, err  # as a shell reports a program SIGPIPE ended
    assert "Traceback" not in err and "observer failed" not in err and "BrokenPipe" not in err, err
    store = TaskStore(tmp_path / "data" / "tasks.sqlite3")
    [summary] = store.list_tasks()
    assert summary.status == "stopped"  # stopped cleanly at once, not left running to its end
    store.close()

    for args in (["state", "about:blank", "--json"], ["history", "--json"], ["config"], ["--help"]):
        proc = subprocess.Popen([sys.executable, "-m", "tabpilot", *args], env=_env(tmp_path),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert proc.stdout is not None
        proc.stdout.close()  # gone before the command wrote anything
        err = proc.communicate(timeout=60)[1].decode()
        assert "Traceback" not in err and "BrokenPipe" not in err, (args, err)
        assert proc.returncode in (0, 141), (args, proc.returncode, err)


def test_on_a_terminal_the_browser_start_and_a_slow_model_show_on_a_status_line(pages, tmp_path: Path) -> None:
    with ScriptedLLMServer(_slow_replies()) as server:
        shown, code = _in_a_terminal(["run", "Greet Ada", "--url", pages.url("agent_form.html"), "--base-url",
                                      server.base_url, "--model", "scripted", "--api-key", API_KEY], tmp_path)
    assert code == 0, shown
    assert "starting the browser…" in shown
    first_step = shown.index("step 1 · wait a moment")
    thinking = shown.index("step 1 · thinking…")
    assert shown.index("starting the browser…") < thinking < first_step
    assert "step 1 · thinking… 2 s" in shown[:first_step]  # the seconds count while the model thinks
    assert "step 1 · waiting 1 s…" in shown[thinking:first_step]  # then its action, in words (it said "wait…")
    assert "step 2 · thinking…" in shown[first_step:shown.index("✅ completed: Greeted Ada")]
    # the status line is replaced, never left behind: each printed line starts clean
    assert "\r\x1b[Kstep 1 · wait a moment" in shown


def test_on_a_terminal_a_page_slow_to_answer_is_named_on_the_status_line(pages, tmp_path: Path) -> None:
    # the status line said "starting the browser…" until the first page answered: 31 s for a site that never did
    class SlowToAnswer(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            time.sleep(SLOW)
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(b"<title>Late</title><p>here at last</p>")

        def log_message(self, *args: object) -> None:
            pass

    site = http.server.ThreadingHTTPServer(("127.0.0.1", 0), SlowToAnswer)
    threading.Thread(target=site.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{site.server_address[1]}/late"
    try:
        with ScriptedLLMServer([done("Read it")]) as server:
            shown, code = _in_a_terminal(["run", "Read the page", "--url", url, "--base-url", server.base_url,
                                          "--model", "scripted", "--api-key", API_KEY], tmp_path)
    finally:
        site.shutdown()
    assert code == 0, shown
    opening = shown.index(f"opening {url}…")
    assert shown.index("starting the browser…") < opening < shown.index("step 1 · thinking…")
    assert f"opening {url}… 2 s" in shown  # its seconds count while the site takes its time


def test_piped_and_json_output_carry_no_status_line(pages, tmp_path: Path) -> None:
    with ScriptedLLMServer(_slow_replies(1.2)) as server:
        piped = tabpilot("run", "Greet Ada", "--url", pages.url("agent_form.html"), "--base-url", server.base_url,
                         "--model", "scripted", "--api-key", API_KEY, home=tmp_path)
    assert piped.returncode == 0, piped.stderr
    assert "thinking" not in piped.stdout and "\x1b" not in piped.stdout and "\r" not in piped.stdout
    assert "starting the browser" not in piped.stdout + piped.stderr
    assert piped.stdout.startswith("step 1 · wait a moment\n"), piped.stdout

    with ScriptedLLMServer(_slow_replies(1.2)) as server:
        shown, code = _in_a_terminal(["run", "Greet Ada", "--json", "--url", pages.url("agent_form.html"),
                                      "--base-url", server.base_url, "--model", "scripted", "--api-key", API_KEY],
                                     tmp_path)
    # on a terminal --json still shows progress (stderr), and the JSON itself is whole after it
    assert code == 0, shown
    assert "step 1 · thinking…" in shown
    result = json.loads(shown[shown.index("{"):].replace("\r\n", "\n"))
    assert result["success"] is True and result["data"] == "Greeted Ada"


@pytest.mark.asyncio(loop_scope="module")
async def test_with_nothing_at_standard_input_no_one_is_told_to_press_enter(
    browser: Browser, pages, tmp_path: Path
) -> None:
    assert browser.launched is not None
    for info in await browser.tabs():
        await browser.close_tab(info.target_id)
    await browser.new_tab(pages.url("agent_form.html"))

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "tabpilot", "run", "Just finish", "--cdp-url", browser.launched.ws_url,  # type: ignore[union-attr]
             "--base-url", server.base_url, "--model", "scripted", "--api-key", API_KEY],
            env=_env(tmp_path), stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=90)

    with ScriptedLLMServer([done("Nothing to do")]) as server:
        proc = await asyncio.to_thread(run)
    assert proc.returncode == 0, proc.stderr
    assert "Press Enter" not in proc.stdout + proc.stderr, proc.stdout
    offered = json.dumps(server.requests[0]["tools"])  # nobody to hand the controls back: not offered either
    assert "request_takeover" not in offered and "ask_user" not in offered


def test_a_refused_action_is_said_once_with_its_whole_remedy(pages, tmp_path: Path) -> None:
    replies = [on_page(lambda b: {"click_element_by_index": {"index": index_of(b, "Place order")}},
                       goal="place the order"),
               done("Could not order")]
    with ScriptedLLMServer(replies) as server:
        proc = subprocess.run(
            [sys.executable, "-m", "tabpilot", "run", "Order it", "--url", pages.url("guard_shop.html"),
             "--base-url", server.base_url, "--model", "scripted", "--api-key", API_KEY],
            env=_env(tmp_path), stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=90)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("needs the user's approval") == 1, proc.stdout  # not as the result and again as 🚫
    lines = proc.stdout.splitlines()
    refused = next(i for i, line in enumerate(lines) if "needs the user's approval" in line)
    assert lines[refused - 1] == '    action: clicking "Place order"', proc.stdout  # what it was doing: not done
    assert lines[refused].startswith('  🚫 click button "Place order"'), proc.stdout  # the guard's note, whole
    assert lines[refused].endswith("run it again with --yes to let the agent do such actions without asking (or "
                                   "`tabpilot config set ask-before never`)."), proc.stdout
    assert lines[refused + 1] == "step 2 · do done"


def test_tabpilot_mcp_started_by_hand_on_a_terminal_says_what_it_is(tmp_path: Path) -> None:
    pid, fd = pty.fork()
    if pid == 0:
        os.execve(sys.executable, [sys.executable, "-m", "tabpilot", "mcp"], _env(tmp_path))
    shown = b""
    try:
        deadline = time.monotonic() + 60
        while b"Ctrl-C" not in shown and time.monotonic() < deadline:
            if select.select([fd], [], [], 1)[0]:
                shown += os.read(fd, 4096)
    finally:
        os.kill(pid, signal.SIGINT)
        os.waitpid(pid, 0)
        os.close(fd)
    text = shown.decode()
    assert "tabpilot mcp serves MCP on its standard input and output" in text, text
    assert "tabpilot mcp config --client claude-desktop|cursor|vscode" in text
    assert text.count("serves MCP") == 1

    # started by a client (stdin a pipe), it says nothing: stdout is the protocol, stderr the client's log
    proc = subprocess.run([sys.executable, "-m", "tabpilot", "mcp"], env=_env(tmp_path), input=b"",
                          capture_output=True, timeout=60)
    assert b"serves MCP" not in proc.stdout + proc.stderr


def test_without_a_model_the_remedy_does_not_promise_one_from_the_environment(tmp_path: Path) -> None:
    proc = tabpilot("run", "anything", home=tmp_path, OPENAI_API_KEY=API_KEY, OPENAI_BASE_URL="http://127.0.0.1:9/v1")
    assert proc.returncode == 2 and proc.stdout == ""
    said = proc.stderr.strip()
    assert said.startswith("tabpilot: No model is configured. Name one with `tabpilot config set model <name>` "
                           "or --model"), said
    assert "give the key and the endpoint, never the model" in said
    assert "or set the environment variables" not in said and said.count("No model") == 1


def test_the_status_line_speaks_the_language_setting(pages, tmp_path: Path) -> None:
    set_language(tmp_path, "zh-CN")
    with ScriptedLLMServer(_slow_replies()) as server:
        shown, code = _in_a_terminal(["run", "Greet Ada", "--url", pages.url("agent_form.html"), "--base-url",
                                      server.base_url, "--model", "scripted", "--api-key", API_KEY], tmp_path)
    assert code == 0, shown
    assert "正在启动浏览器…" in shown and "第 1 步 · 思考中… 2 秒" in shown, shown
    assert "thinking" not in shown and " 2 s" not in shown


def test_an_element_named_with_terminal_controls_is_shown_on_the_status_line_never_obeyed(
        pages, tmp_path: Path) -> None:
    # The status line says what the step is doing on which element ('step 1 · clicking "Sign in"…'), and the element's
    # name is the page's: a page that named its button with an escape sequence retitled the terminal's window, cleared
    # the screen and reversed the line while the click ran (the status line was written as it came; every printed
    # line goes through textsafety.show_controls).
    def replies() -> list:
        return [
            on_page(lambda b: {"click_element_by_index": {"index": index_of(b, "Sign in")}}, goal="sign in"),
            on_page(lambda b: {"done": {"text": "The page said: clicked" if "clicked" in browser_state(b)
                                        else "The page never saw the click", "success": True}}),
        ]

    for attempt in ("first", "again"):  # twice: the second run in a home that has the first one's record
        with ScriptedLLMServer(replies()) as server:
            shown, code = _in_a_terminal(["run", "Sign in", "--url", pages.url("hostile_action_names.html"),
                                          "--base-url", server.base_url, "--model", "scripted", "--api-key",
                                          API_KEY], tmp_path)
        assert code == 0, (attempt, shown)
        assert "✅ completed: The page said: clicked" in shown, (attempt, shown)
        assert "step 1 · clicking \"Sign in \\x1b]0;PWNED\\x07\\x1b[2J\\x9b31m\\u202eexe.gnp\"…" in shown, shown
        for obeyed in ("\x1b]0;", "\x07", "\x1b[2J", "\x9b", "\u202e"):
            assert obeyed not in shown, (attempt, obeyed, shown)
