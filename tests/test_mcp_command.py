"""`tabpilot mcp` as a user types it, browser-free: the config entry for each MCP client (printed, or
merged into its file keeping everything else), what it says without the MCP SDK installed, flags that
do not go together, and the progress lines a client shows for each kind of event."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tabpilot.mcp.clients import config_path
from tabpilot.mcp.progress import activity_message, event_message


def tabpilot(*args: str, home: Path, python: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(home), "TABPILOT_HOME": str(home / "tp"), "APPDATA": str(home / "AppData")}
    env.pop("XDG_CONFIG_HOME", None)
    return subprocess.run([sys.executable, *(python or ["-m", "tabpilot"]), *args], capture_output=True, text=True,
                          timeout=60, env=env)


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
])
def test_flags_that_do_not_go_together(tmp_path: Path, flags: list[str], said: str) -> None:
    result = tabpilot("mcp", *flags, home=tmp_path)
    assert result.returncode == 2 and said in result.stderr


def test_progress_lines_for_each_kind_of_event() -> None:
    step = {"type": "step", "stepIndex": 2, "reflection": {"next_goal": "Press Sign up"},
            "action": {"name": "click_element_by_index", "input": {"index": 7}, "output": "Clicked  the\nbutton"}}
    assert event_message(step) == 'step 3 · Press Sign up · click_element_by_index {"index": 7} → Clicked the button'
    takeover = {"type": "user_takeover", "actions": [{"kind": "input"}, {"kind": "click"}], "note": "fixed the date"}
    assert event_message(takeover) == "the person took over the tab and did 2 things: fixed the date"
    assert event_message({"type": "user_takeover"}) == "the person took over the tab"
    assert event_message({"type": "observation", "content": "x"}) is None
    assert event_message({"type": "error", "message": "model unreachable"}) == "error: model unreachable"
    assert activity_message({"type": "paused", "reason": "you took over"}) == "paused: you took over"
    assert activity_message({"type": "thinking"}) is None
    long = event_message({**step, "action": {**step["action"], "output": "y" * 1000}})
    assert long is not None and len(long) < 400 and long.endswith("…")


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
