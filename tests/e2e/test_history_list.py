"""`tabpilot history` says how each task ended and whether the person took the controls, as Past tasks does: a new
user's trial found the list without a mark for their takeover and too wide for an 80-column terminal. Tasks run for
real (the popup, the host Chromium started, the scripted model): one done, one the agent could not do, one stopped,
one the person took over; the list is read on a real terminal (a pty) of 80 columns, and of 160."""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import pty
import struct
import subprocess
import sys
import termios

import pytest
from e2e_support import (
    Harness,
    agent_output,
    done,
    popup_task_id,
    run_in_popup,
    start_task,
    wait_status,
    wait_until,
)

from tabpilot.browser.tab import Tab
from tabpilot.i18n import shown_width
from tabpilot.llm.scripted import Delay, ScriptedLLMServer, ToolCall

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]


def history_on_terminal(harness: Harness, columns: int) -> str:
    """`tabpilot history` as typed in a terminal `columns` wide: what it printed there."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    env = {key: value for key, value in os.environ.items() if key not in ("COLUMNS", "LINES")}
    env.update(TABPILOT_HOME=str(harness.tabpilot_home), TERM="xterm")
    process = subprocess.Popen([sys.executable, "-m", "tabpilot", "history"], stdin=follower, stdout=follower,
                               stderr=subprocess.PIPE, env=env)
    os.close(follower)
    printed = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal's other end closed: the command ended
            break
        if not chunk:
            break
        printed += chunk
    os.close(leader)
    assert process.wait(timeout=60) == 0, process.stderr.read() if process.stderr else ""
    return printed.decode("utf-8").replace("\r\n", "\n")


def history_json(harness: Harness) -> dict[str, dict[str, object]]:
    env = {**os.environ, "TABPILOT_HOME": str(harness.tabpilot_home)}
    listed = subprocess.run([sys.executable, "-m", "tabpilot", "history", "--json"], env=env, capture_output=True,
                            text=True, timeout=60, check=True)
    return {row["taskId"]: row for row in json.loads(listed.stdout)}


def rows_of(listing: str, task_ids: list[str]) -> dict[str, str]:
    """Each task's row by its id, with the line under it where the row goes on there (a narrow terminal)."""
    lines = listing.splitlines()
    rows = {}
    for number, line in enumerate(lines):
        if line.split()[:1] and line.split()[0] in task_ids:
            under = lines[number + 1] if number + 1 < len(lines) and lines[number + 1].startswith("  ") else ""
            rows[line.split()[0]] = f"{line}\n{under}".rstrip()
    return rows


async def test_the_list_says_how_each_task_ended_and_where_the_person_took_over_on_80_columns(
    harness: Harness, llm: ScriptedLLMServer, form_tab: Tab
) -> None:
    llm.add(done("Saved the draft."))
    popup = await start_task(harness, form_tab, llm, "Save the draft as it is")
    assert await wait_status(popup, "completed", "error", "stopped") == "completed"
    finished = await popup_task_id(popup)

    llm.add(done("The Save button is greyed out.", success=False))
    not_done = await run_in_popup(popup, "Save the draft to the archive folder")
    assert await wait_status(popup, "completed", "error", "stopped") == "error"

    llm.add(Delay(30, then=done("Never said")))
    stopped = await run_in_popup(popup, "Save the draft, thinking it over first")
    # stopped while the model is asked (a stop before the request left the held reply to the next task)
    await wait_until(lambda: llm.remaining == 0, "the model to be asked (its reply held)")
    await popup.click("#stop")
    assert await wait_status(popup, "stopped", "completed", "error") == "stopped"

    llm.add(ToolCall("AgentOutput", agent_output("Wait for the page", {"wait": {"seconds": 10}})))
    llm.add(done("Saved it after you looked."))
    taken_over = await run_in_popup(popup, "Save the draft once I have looked at it")
    await popup.wait_for("document.getElementById('activity').dataset.type === 'executing'", "the wait action")
    await popup.click("#takeover")
    await popup.wait_for("!document.getElementById('handback-box').hidden", "Hand back")
    await popup.click("#handback")
    assert await wait_status(popup, "completed", "error", "stopped") == "completed"

    ids = [finished, not_done, stopped, taken_over]
    ended = {finished: "completed", not_done: "not done", stopped: "stopped", taken_over: "completed"}
    tasks = {finished: "Save the draft as it is", not_done: "Save the draft to the archive folder",
             stopped: "Save the draft, thinking it over first", taken_over: "Save the draft once I have looked at it"}
    for columns in (80, 160):
        listing = await asyncio.to_thread(history_on_terminal, harness, columns)
        assert all(shown_width(line) <= columns for line in listing.splitlines()), listing
        header = listing.splitlines()[0].split()
        assert header[:6] == ["ID", "STARTED", "STATUS", "TAKEOVER", "STEPS", "TOKENS"], listing
        rows = rows_of(listing, ids)
        assert set(rows) == set(ids), listing
        for task_id in ids:
            cells = rows[task_id].split("\n")[0].split("  ")
            cells = [cell.strip() for cell in cells if cell.strip()]
            took_over = "you" if task_id == taken_over else "-"
            assert cells[2:4] == [ended[task_id], took_over], (columns, rows[task_id])
            assert tasks[task_id] in rows[task_id], (columns, rows[task_id])
        if columns == 80:  # too narrow for the task beside the rest: it goes under its row, who started it first
            assert all(rows[task_id].split("\n")[1].split() == ["popup", *tasks[task_id].split()] for task_id in ids)
        else:
            assert all("\n" not in rows[task_id] for task_id in ids), listing
    wire = await asyncio.to_thread(history_json, harness)
    assert {task_id: (wire[task_id]["status"], wire[task_id]["gaveUp"], wire[task_id]["tookOver"])
            for task_id in ids} == {finished: ("completed", False, False), not_done: ("error", True, False),
                                    stopped: ("stopped", False, False), taken_over: ("completed", False, True)}
    await harness.browser.close_tab(popup.tab.target_id)
