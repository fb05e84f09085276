"""`tabpilot mcp` as a user types it, browser-free: the config entry for each MCP client (printed, or
merged into its file keeping everything else), what it says without the MCP SDK installed, flags that
do not go together, and the progress lines a client shows for each kind of event."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from cli_support import tabpilot_here

from tabpilot.mcp.clients import config_path
from tabpilot.mcp.progress import activity_message, control_message, event_message


def tabpilot(*args: str, home: Path, python: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    """`tabpilot ARGS` with `home` as HOME: in this process (cli_support), or `python` as a process of its own."""
    env = {**os.environ, "HOME": str(home), "TABPILOT_HOME": str(home / "tp"), "APPDATA": str(home / "AppData")}
    env.pop("XDG_CONFIG_HOME", None)
    if python is None:
        return tabpilot_here(list(args), env)
    return subprocess.run([sys.executable, *python, *args], capture_output=True, text=True, timeout=60, env=env)


@pytest.mark.parametrize(("client", "key", "typed"), [
    ("claude-desktop", "mcpServers", False), ("cursor", "mcpServers", False), ("vscode", "servers", True),
])
def test_config_prints_the_entry_that_starts_the_server(tmp_path: Path, client: str, key: str, typed: bool) -> None:
    result = tabpilot("mcp", "config", "--client", client, "--launch", "--headless", home=tmp_path)
    assert result.returncode == 0, result.stderr
    entry = json.loads(result.stdout)[key]["tabpilot"]
    assert entry["command"] == sys.executable
    assert entry["args"] == ["-m", "tabpilot", "mcp", "--launch", "--headless"]
    assert ("type" in entry) is typed
    assert "--write" in result.stderr
    # and that command really is this server: it starts and answers --help
    started = subprocess.run([entry["command"], *entry["args"], "--help"], capture_output=True, text=True, timeout=60)
    assert started.returncode == 0 and "--approve" in started.stdout


def test_config_write_merges_into_the_clients_file_keeping_other_entries(tmp_path: Path) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(tmp_path))
        patch.delenv("XDG_CONFIG_HOME", raising=False)
        path = config_path("cursor")
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"mcpServers": {"other": {"command": "other-server"}}, "theme": "dark"}))
    result = tabpilot("mcp", "config", "--client", "cursor", "--write", home=tmp_path)
    assert result.returncode == 0, result.stderr
    assert str(path) in result.stdout and "restart Cursor" in result.stdout
    written = json.loads(path.read_text())
    assert written["theme"] == "dark" and written["mcpServers"]["other"] == {"command": "other-server"}
    assert written["mcpServers"]["tabpilot"]["args"] == ["-m", "tabpilot", "mcp"]
    again = tabpilot("mcp", "config", "--client", "cursor", "--write", "--approve", "always", home=tmp_path)
    assert again.returncode == 0, again.stderr  # use it twice: replaced, not duplicated
    written = json.loads(path.read_text())
    assert sorted(written["mcpServers"]) == ["other", "tabpilot"]
    assert written["mcpServers"]["tabpilot"]["args"][-2:] == ["--approve", "always"]
    same = tabpilot("mcp", "config", "--client", "cursor", "--write", "--approve", "always", home=tmp_path)
    assert same.returncode == 0 and "already among Cursor's MCP servers" in same.stdout, same.stdout
    assert json.loads(path.read_text()) == written  # the same entry a third time: the file is left alone


def test_config_write_leaves_a_broken_file_alone(tmp_path: Path) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(tmp_path))
        patch.delenv("XDG_CONFIG_HOME", raising=False)
        path = config_path("vscode")
    path.parent.mkdir(parents=True)
    path.write_text('{"servers": {"mine": {}},}')  # a trailing comma a person left
    result = tabpilot("mcp", "config", "--client", "vscode", "--write", home=tmp_path)
    assert result.returncode == 1
    assert "is not valid JSON" in result.stderr and "add the entry by hand" in result.stderr
    assert path.read_text() == '{"servers": {"mine": {}},}'


def test_without_the_sdk_it_says_what_to_install(tmp_path: Path) -> None:
    hide_sdk = ["-c", "import sys; sys.modules['mcp'] = None; from tabpilot.cli import main; sys.exit(main())"]
    result = tabpilot("mcp", home=tmp_path, python=hide_sdk)
    assert result.returncode == 2
    assert "pip install 'tabpilot[mcp]'" in result.stderr and "pipx inject tabpilot mcp" in result.stderr
    assert result.stdout == ""  # stdout belongs to the MCP protocol


@pytest.mark.parametrize(("flags", "said"), [
    (["--launch", "--approve", "ask"], "--approve ask needs the tabpilot popup"),
    (["--headless"], "--headless and --browser are for the browser --launch (or --fallback launch) starts"),
    (["--launch", "--fallback", "launch"], "--fallback launch is for tasks in your browser"),
    (["--client", "cursor"], "go with `tabpilot mcp config`"),
    # both were accepted, and --launch silently lost: tasks went to the --cdp-url browser
    (["--launch", "--cdp-url", "http://127.0.0.1:9222"], "--launch starts a browser of its own and --cdp-url works "
                                                        "in one already running: give one of them"),
    (["config", "--client", "cursor", "--launch", "--cdp-url", "http://127.0.0.1:9222"], "give one of them"),
])
def test_flags_that_do_not_go_together(tmp_path: Path, flags: list[str], said: str) -> None:
    result = tabpilot("mcp", *flags, home=tmp_path)
    assert result.returncode == 2 and said in result.stderr
    assert result.stdout == ""


def test_progress_lines_for_each_kind_of_event() -> None:
    step = {"type": "step", "stepIndex": 2, "reflection": {"next_goal": "Press Sign up"},
            "action": {"name": "click_element_by_index", "input": {"index": 7}, "target": "Sign up",
                       "output": "Clicked  the\nbutton"}}
    assert event_message(step) == ('step 3 · Press Sign up · clicked "Sign up" (click_element_by_index {"index": 7}) → '
                                   "Clicked the button")
    failed = {**step, "action": {**step["action"], "notDone": True, "output": "No such element"}}
    assert event_message(failed) == ('step 3 · Press Sign up · clicking "Sign up" (click_element_by_index {"index": 7})'
                                     " → No such element")
    takeover = {"type": "user_takeover", "actions": [{"kind": "input"}, {"kind": "click"}], "note": "fixed the date"}
    assert event_message(takeover) == "the person took over the tab and did 2 things: fixed the date"
    assert event_message({"type": "user_takeover"}) == "the person took over the tab"
    assert event_message({"type": "observation", "content": "x"}) is None
    assert event_message({"type": "error", "message": "model unreachable"}) == "error: model unreachable"
    assert activity_message({"type": "paused", "reason": "you took over"}) == "paused: you took over"
    assert activity_message({"type": "thinking"}) is None
    long = event_message({**step, "action": {**step["action"], "output": "y" * 1000}})
    assert long is not None and len(long) < 400 and long.endswith("…")


def test_a_task_waiting_on_someone_says_so_in_a_progress_line() -> None:
    """Found by a new user: while a task in their browser waited for the person (the agent's question, an action
    waiting for their yes) or a model call was tried again, the MCP client heard nothing at all, for minutes (an
    approval waits 5), where `tabpilot run` prints each. Each wait is said, with where the person answers."""
    retry = {"type": "retry", "message": "HTTP 500: overloaded", "attempt": 2, "maxAttempts": 3}
    assert event_message(retry) == "retry 2/3: HTTP 500: overloaded"
    blocked = {"type": "observation", "guard": "blocked", "content": "Navigation to evil.test was blocked"}
    assert event_message(blocked) == "blocked: Navigation to evil.test was blocked"
    assert event_message({"type": "observation", "guard": "expired", "content": "not answered"}) == (
        "not done: not answered")
    asked = activity_message({"type": "question", "question": "Which e-mail?"})
    assert asked is not None and asked.startswith("the agent asks the person using the browser: Which e-mail?")
    assert "tabpilot popup or side panel" in asked
    assert activity_message({"type": "waiting", "seconds": 30, "message": "x"}) == (
        "the model has not answered for 30 s; still waiting")
    approval = {"action": 'click button "Place order"', "site": "shop.example", "why": 'its name says "order"',
                "whyCode": "name_says", "whyParams": {"word": "order"}}
    line = control_message(approval)
    assert line is not None and 'the agent wants to click button "Place order" on shop.example' in line
    assert '(its name says "order")' in line and "tabpilot popup or side panel" in line
    every = control_message({**approval, "why": "you asked to approve every action", "whyCode": "every_action"})
    assert every is not None and "you asked" not in every and "the person's settings ask before every" in every
    assert control_message(None) is None


def test_a_failed_task_says_what_to_do_where_an_mcp_client_is() -> None:
    """Found by a new user: a dead model endpoint gave an MCP client 'could not reach …' and nothing more, where
    `tabpilot run` says what to do. Every failure the terminal has a remedy for has one for an MCP client too,
    naming the popup's Settings or `tabpilot config set` (never a `tabpilot run` flag)."""
    from tabpilot.i18n import REMEDIES as NAMES
    from tabpilot.mcp.backends import task_result
    from tabpilot.mcp.progress import REMEDIES

    assert set(REMEDIES) == {*NAMES.values(), "context"}
    assert not [words for words in REMEDIES.values() if "--" in words]
    failed = {"type": "error", "message": "The model call still failed after 3 retries", "code": "retries_exhausted",
              "params": {"attempts": 4, "cause": {"code": "unreachable", "params": {
                  "base_url": "http://127.0.0.1:9/v1", "reason": "refused"}}}}
    result = task_result("t1", {"success": False, "data": failed["message"], "history": [failed]})
    assert result["remedy"].startswith("Check that the model server at http://127.0.0.1:9/v1 is running"), result
    assert "tabpilot popup's Settings" in result["remedy"] and "`tabpilot doctor`" in result["remedy"]
    fine = task_result("t2", {"success": True, "data": "done", "history": []})
    assert "remedy" not in fine
    unknown = {"type": "error", "message": "odd", "code": "something_new"}
    assert "remedy" not in task_result("t3", {"success": False, "data": "odd", "history": [unknown]})


@pytest.mark.browser
async def test_mcp_launch_without_a_display_says_there_is_none_and_what_to_do(tmp_path: Path) -> None:
    """`tabpilot mcp --launch` opens a window: with no display its first call says so (and to add --headless),
    where it gave Chromium's bare "exited with code 1"; the server keeps serving."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=sys.executable, args=["-m", "tabpilot", "mcp", "--launch"],
                                   env={"HOME": str(tmp_path), "TABPILOT_HOME": str(tmp_path / "tp"),
                                        "PATH": os.environ["PATH"]})  # no DISPLAY, no WAYLAND_DISPLAY
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        for _ in range(2):
            result = await session.call_tool("list_tabs", {})
            said = result.content[0].text  # type: ignore[union-attr]
            assert result.is_error and "there is no display to show the browser window on" in said, said
            assert "add --headless" in said


async def test_with_no_browser_open_a_call_says_what_to_do(tmp_path: Path) -> None:
    """The MCP client's view when the browser (and so the host) is not running: a tool error with the
    remedy, not a crash; the server keeps serving (the next call says the same)."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    from tabpilot.mcp.hostlink import NO_HOST

    params = StdioServerParameters(command=sys.executable, args=["-m", "tabpilot", "mcp"],
                                   env={"HOME": str(tmp_path), "TABPILOT_HOME": str(tmp_path / "tp"),
                                        "PATH": os.environ["PATH"]})
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        for _ in range(2):
            result = await session.call_tool("list_tabs", {})
            assert result.is_error
            assert NO_HOST in result.content[0].text  # type: ignore[union-attr]


def test_config_carries_the_fallback_choice(tmp_path: Path) -> None:
    result = tabpilot("mcp", "config", "--client", "cursor", "--fallback", "launch", "--headless", home=tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["mcpServers"]["tabpilot"]["args"][-3:] == ["--fallback", "launch", "--headless"]


# --- what an MCP client is told about its arguments, browser-free (the real SDK client over stdio) ----------------
@contextlib.asynccontextmanager
async def no_browser_session(tmp_path: Path) -> AsyncIterator[Any]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=sys.executable, args=["-m", "tabpilot", "mcp"],
                                   env={"HOME": str(tmp_path), "TABPILOT_HOME": str(tmp_path / "tp"),
                                        "PATH": os.environ["PATH"]})
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


async def call_text(session: Any, tool: str, arguments: dict[str, Any], **options: Any) -> tuple[bool, str]:
    result = await session.call_tool(tool, arguments, **options)
    return bool(result.is_error), "\n".join(getattr(part, "text", "") for part in result.content)


async def test_task_ids_go_in_under_the_name_run_task_gives_them_and_a_wrong_call_is_told_in_words(
    tmp_path: Path,
) -> None:
    """run_task returns `taskId`: get_task and stop_task take that name (and `task_id`, as before); no argument,
    or one of the wrong type, is answered with the names the tool takes, never pydantic's text."""
    from tabpilot.mcp.hostlink import NO_HOST

    async with no_browser_session(tmp_path) as session:
        schemas = {tool.name: tool.input_schema for tool in (await session.list_tools()).tools}
        for tool in ("get_task", "stop_task"):
            assert {"taskId", "task_id"} <= set(schemas[tool]["properties"]), schemas[tool]
            for name in ("taskId", "task_id"):  # either name reaches the browser (which is not open here)
                is_error, text = await call_text(session, tool, {name: "1m87xvns93hn"})
                assert is_error and NO_HOST in text, text
            is_error, text = await call_text(session, tool, {})
            assert is_error and f"{tool} needs taskId: the taskId run_task reported or returned" in text, text
            is_error, text = await call_text(session, tool, {"taskId": "a", "task_id": "b"})
            assert is_error and "two different task ids" in text, text
        is_error, text = await call_text(session, "run_task", {"url": "https://example.com"})
        assert is_error and "task is missing. run_task takes: task (text, required), url" in text, text
        is_error, text = await call_text(session, "run_task", {"task": "Greet Ada", "new_tab": "sometimes"})
        assert is_error and "new_tab must be true or false" in text, text
        is_error, text = await call_text(session, "get_task", {"taskId": 5})
        assert is_error and "taskId must be text" in text, text
        for told in (await call_text(session, "run_task", {}), await call_text(session, "get_task", {"taskId": 5})):
            assert "pydantic" not in told[1] and "validation error" not in told[1], told


async def test_each_tools_arguments_are_told_as_its_signature_has_them_in_words() -> None:
    """What a wrong call hears a tool takes is read from the tool's own input schema: every tool's argument
    added or renamed is told without a second list to keep in step (task_id, the old name, is taken, not told)."""
    from tabpilot.mcp.server import arguments_taken, build_server

    told = {tool.name: arguments_taken(tool.input_schema) for tool in await build_server(None).list_tools()}
    assert told == {
        "run_task": "task (text, required), url (text), new_tab (true/false)",
        "get_task": "taskId (text: the taskId run_task reported or returned; task_id works too)",
        "stop_task": "taskId (text: the taskId run_task reported or returned; task_id works too)",
        "list_tabs": "none",
        "read_page": "tab (the tabId list_tabs gave, as it gave it)",
    }, told


async def test_an_empty_task_is_told_what_a_task_is_before_anything_is_asked(tmp_path: Path) -> None:
    async with no_browser_session(tmp_path) as session:
        for task in ("", "   "):
            is_error, text = await call_text(session, "run_task", {"task": task})
            assert is_error and "run_task needs a task: say in words what to do in the browser" in text, text
            assert "approval.ask" not in text and NO_HOST_START not in text, text


NO_HOST_START = "tabpilot cannot reach your browser"


async def test_a_socket_left_by_a_closed_browser_is_told_at_once(tmp_path: Path) -> None:
    """The browser closed and its host's socket (and token) stayed behind: connecting is refused. A client that
    times a call out after a few seconds (as MCP clients do) hears the remedy, not its own timeout: the server
    does not wait for a host that was never there as it waits for one being respawned."""
    import socket as sockets

    from tabpilot.mcp.hostlink import NO_HOST
    from tabpilot.native.endpoint import EndpointAddress

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TABPILOT_HOME", str(tmp_path / "tp"))
        address = EndpointAddress.for_this_user()
    left = sockets.socket(sockets.AF_UNIX)
    left.bind(address.socket)
    left.close()  # the file stays; nobody listens
    address.token_file.write_text("a-dead-hosts-token")
    async with no_browser_session(tmp_path) as session:
        for _ in range(2):
            is_error, text = await call_text(session, "list_tabs", {}, read_timeout_seconds=5)
            assert is_error and NO_HOST in text, text


def test_started_by_hand_in_a_terminal_ctrl_c_quits_as_it_says(tmp_path: Path) -> None:
    # The SDK reads standard input in a thread: Ctrl-C left the server waiting for the next line typed.
    pytest.importorskip("mcp")
    from store_support import in_a_terminal

    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env.update(TABPILOT_HOME=str(tmp_path), HOME=str(tmp_path), PYTHONUNBUFFERED="1", LANG="C.UTF-8")
    # Typed once it serves (reads its standard input), as a person reading the message would.
    shown, code = in_a_terminal(["mcp"], env, timeout=20, answer=(b"Ctrl-C to quit", b"\x03"), answer_after=2.0)
    assert "Press Ctrl-C to quit" in shown and code == 130, (code, shown)


# --- what a new user found: the server's own advice, start-up checks, a client that goes away, its config ---------
def server_env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "XDG_CONFIG_HOME")}
    env.update({"HOME": str(home), "TABPILOT_HOME": str(home / "tp"), "LANG": "C.UTF-8", **extra})
    return env


def message(request_id: int | None, method: str, params: dict[str, Any] | None = None) -> bytes:
    sent: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if request_id is not None:
        sent["id"] = request_id
    if params is not None:
        sent["params"] = params
    return (json.dumps(sent) + "\n").encode()


INITIALIZE = message(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                       "clientInfo": {"name": "a test client", "version": "1"}})


async def test_an_unreachable_cdp_url_is_told_in_the_servers_own_flags(tmp_path: Path) -> None:
    """`tabpilot mcp --cdp-url` whose browser is not there said to "leave out --cdp-url and tabpilot starts a browser
    of its own", `tabpilot run`'s advice: without it this server works in the user's browser through the extension.
    It names --launch, in the server's entry in the MCP client's config; for an http:// and a ws:// address alike."""
    import socket as sockets

    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    with sockets.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]  # nothing listens there once it is closed
    for address in (f"http://127.0.0.1:{port}", f"ws://127.0.0.1:{port}/devtools/browser/gone"):
        params = StdioServerParameters(command=sys.executable, args=["-m", "tabpilot", "mcp", "--cdp-url", address],
                                       env=server_env(tmp_path))
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            is_error, text = await call_text(session, "list_tabs", {})
        assert is_error and f"could not reach the browser at {address}" in text, text
        assert "put --launch there instead of --cdp-url and tabpilot mcp starts a browser of its own" in text, text
        assert "in your MCP client's config (--cdp-url http://127.0.0.1:9222)" in text, text
        assert "leave out --cdp-url" not in text and "tabpilot run" not in text, text


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a display is asked for on Linux only")
@pytest.mark.parametrize(("flags", "flag"), [(["--launch"], "--launch"),
                                             (["--fallback", "launch"], "--fallback launch")])
def test_a_window_with_no_display_is_said_on_stderr_at_start_up(tmp_path: Path, flags: list[str], flag: str) -> None:
    """It was said only at the first task. Now at start-up, on stderr (an MCP client shows it in the server's log;
    stdout is the protocol), naming the flag to add. The server still serves: each call says the same."""
    pytest.importorskip("mcp")
    started = subprocess.run([sys.executable, "-m", "tabpilot", "mcp", *flags], input=INITIALIZE, capture_output=True,
                             timeout=60, env=server_env(tmp_path))
    said = started.stderr.decode()
    assert started.returncode == 0, said
    assert said.startswith("tabpilot mcp: there is no display to show the browser window on"), said
    assert f"tabpilot mcp {flag} opens one, so every task would fail: add --headless" in said, said
    assert f"`tabpilot mcp config --client … {flag} --headless`" in said, said
    assert json.loads(started.stdout.decode().splitlines()[0])["id"] == 1  # stdout: the protocol's answer only
    headless = subprocess.run([sys.executable, "-m", "tabpilot", "mcp", *flags, "--headless"], input=INITIALIZE,
                              capture_output=True, timeout=60, env=server_env(tmp_path))
    assert headless.returncode == 0 and headless.stderr == b"", headless.stderr  # no window: nothing to say
    with_display = subprocess.run([sys.executable, "-m", "tabpilot", "mcp", *flags], input=INITIALIZE,
                                  capture_output=True, timeout=60, env=server_env(tmp_path, DISPLAY=":99"))
    assert with_display.returncode == 0 and with_display.stderr == b"", with_display.stderr


def test_a_client_that_goes_away_ends_the_server_quietly(tmp_path: Path) -> None:
    """Closing standard input (EOF: how an MCP client shuts its server down) ends it with code 0 and nothing on
    stderr; a client killed mid-conversation (its end of stdout closed too, so the next answer cannot be written)
    printed a traceback of the SDK's task group: now one line, code 0."""
    pytest.importorskip("mcp")
    closed = subprocess.run([sys.executable, "-m", "tabpilot", "mcp"], input=INITIALIZE, capture_output=True,
                            timeout=60, env=server_env(tmp_path))
    assert closed.returncode == 0 and closed.stderr == b"", closed.stderr

    server = subprocess.Popen([sys.executable, "-m", "tabpilot", "mcp"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=server_env(tmp_path))
    assert server.stdin is not None and server.stdout is not None and server.stderr is not None
    try:
        server.stdin.write(INITIALIZE)
        server.stdin.flush()
        assert json.loads(server.stdout.readline())["id"] == 1
        server.stdout.close()  # the client is gone: what it was sent next goes nowhere
        server.stdin.write(message(None, "notifications/initialized") + message(2, "tools/list"))
        server.stdin.flush()
        server.stdin.close()
        code = server.wait(30)
        said = server.stderr.read().decode()
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
        server.stderr.close()
    assert code == 0, said
    # One line when the server tried to answer tools/list into the closed pipe; none when it read the end of its input
    # first and never wrote (the CI run at 9c1178b: stderr empty, code 0). Never a traceback.
    assert "Traceback" not in said and len(said.splitlines()) <= 1, said
    assert not said or "the MCP client went away" in said, said


@pytest.mark.parametrize("client", ["claude-desktop", "cursor", "vscode"])
def test_config_carries_tabpilot_home_so_the_client_started_server_uses_the_same_one(tmp_path: Path,
                                                                                     client: str) -> None:
    """An MCP client starts the server with its own environment, not the shell's: a TABPILOT_HOME set where `mcp
    config` ran goes in the entry's "env" (absolute, as the client starts it from a folder of its own), printed and
    written alike; without one, the entry has no "env"."""
    key = "servers" if client == "vscode" else "mcpServers"
    env = server_env(tmp_path, TABPILOT_HOME="my-home")  # relative, as a person may type it
    printed = subprocess.run([sys.executable, "-m", "tabpilot", "mcp", "config", "--client", client],
                             capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path)
    assert printed.returncode == 0, printed.stderr
    entry = json.loads(printed.stdout)[key]["tabpilot"]
    assert entry["env"] == {"TABPILOT_HOME": str(tmp_path / "my-home")}, entry
    written = subprocess.run([sys.executable, "-m", "tabpilot", "mcp", "config", "--client", client, "--write"],
                             capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path)
    assert written.returncode == 0, written.stderr
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(tmp_path))
        patch.delenv("XDG_CONFIG_HOME", raising=False)
        path = config_path(client)
    assert json.loads(path.read_text())[key]["tabpilot"] == entry
    # the client starts the command with that env: the server it starts keeps its files in that folder
    started = subprocess.run([entry["command"], *entry["args"]], input=INITIALIZE, capture_output=True, timeout=60,
                             env={**server_env(tmp_path / "elsewhere"), **entry["env"]})
    if importlib.util.find_spec("mcp") is not None:
        assert started.returncode == 0, started.stderr
        assert (tmp_path / "my-home" / "log" / "mcp.log").exists()

    unset = {k: v for k, v in env.items() if k != "TABPILOT_HOME"}
    plain = subprocess.run([sys.executable, "-m", "tabpilot", "mcp", "config", "--client", client],
                           capture_output=True, text=True, timeout=60, env=unset)
    assert plain.returncode == 0, plain.stderr
    assert "env" not in json.loads(plain.stdout)[key]["tabpilot"]


def test_a_url_that_is_no_web_page_is_refused_in_an_mcp_clients_words() -> None:
    """Found by a new user: run_task with url chrome://settings failed with "the tab was closed" once the person had
    been asked (chrome.debugger may not attach there), and javascript: was told to "use execute_javascript", a tool
    of tabpilot's own model that no MCP client has. Both are refused first, saying what to give instead."""
    from tabpilot.mcp.backends import TaskFailed, first_page

    for url in ("javascript:alert(1)", "chrome://settings", "CHROME://extensions", "about:config",
                "view-source:https://example.com", "edge://settings", "chrome-extension://abc/popup.html"):
        with pytest.raises(TaskFailed) as refused:
            first_page(url, None)
        said = str(refused.value)
        assert "not a web page a task can work in: give the address of a web page" in said, said
        assert "execute_javascript" not in said
    assert first_page("https://example.com/a", None) == "https://example.com/a"
    assert first_page("about:blank", None) == "about:blank"
    assert first_page("localhost:8000", None) == "http://localhost:8000"


async def test_the_servers_log_is_owner_only_and_keeps_no_password_or_token_of_a_task(tmp_path: Path) -> None:
    """mcp.log was written as the umask left it (0644, in a 0755 folder: any user of the machine read it) and
    as it came: the task an MCP client gave, with a URL's password and token and an API key in it, was there whole
    (found by an attack run). It is written as host.log is (logfile.py): owner-only, redacted, one line each."""
    import stat

    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    task = ("Sign in at https://ada:hunter2@bank.test/?token=SECRETTOKEN with sk-abcdefghijklmnopqrstuvwxyz0123, "
            "then\nsay done")
    params = StdioServerParameters(command=sys.executable, args=["-m", "tabpilot", "mcp", "--fallback", "launch",
                                                                 "--headless"],
                                   env=server_env(tmp_path))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        for _ in range(2):  # no model set: each run fails saying so, after the fallback is logged
            is_error, _text = await call_text(session, "run_task", {"task": task})
            assert is_error
    folder = tmp_path / "tp" / "log"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE((folder / "mcp.log").stat().st_mode) == 0o600
    logged = (folder / "mcp.log").read_text(encoding="utf-8")
    assert logged.count("https://ada:[redacted]@bank.test/?token=[redacted] with [redacted]") == 2, logged
    assert not any(secret in logged for secret in ("hunter2", "SECRETTOKEN", "sk-abc")), logged
    assert all(line[:4].isdigit() for line in logged.splitlines()), logged  # one line per message
