"""`tabpilot run --headed` (no extension) under Xvfb: the person at the terminal presses Enter to take
the controls, acts in the browser window, presses Enter to hand back with a note; answers the agent's
question in the terminal; touches the page while the agent waits (implicit takeover: the agent's own
typing just before never counts); and acts when the agent asks for it (request_takeover). The person's
input comes from a second CDP connection to the launched browser (its DevToolsActivePort), which
tabpilot did not dispatch. Each takeover is one user_takeover event in the record, the next model
request carries the account, and the password typed is in no request, no stored row and no output."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agent_support import done, index_of, on_page, step
from e2e_support import VirtualScreen
from takeover_support import Person, wait_for

from tabpilot.llm.scripted import ScriptedLLMServer
from tabpilot.store.tasks import TaskRecord, TaskStore

pytestmark = [pytest.mark.browser, pytest.mark.asyncio]

API_KEY = "sk-test-headed-0123456789abcdef"
PASSWORD = "correct-Horse-77"
EMAIL = "document.querySelector('#email')"


@pytest.fixture(scope="module")
def screen() -> Iterator[VirtualScreen]:
    display = VirtualScreen()
    yield display
    display.close()


class Terminal:
    """`tabpilot run` in a subprocess, its stdin a pipe the test types into, its output collected."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.output: list[str] = []
        self.reader = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        assert self.process.stdout is not None
        while line := await self.process.stdout.readline():
            self.output.append(line.decode("utf-8", "replace"))

    @property
    def text(self) -> str:
        return "".join(self.output)

    async def shows(self, text: str, timeout: float = 60.0) -> None:
        try:
            await wait_for(lambda: text in self.text, timeout=timeout)
        except TimeoutError:
            raise AssertionError(f"the terminal never showed {text!r}:\n{self.text}") from None

    async def type(self, line: str = "") -> None:
        assert self.process.stdin is not None
        self.process.stdin.write((line + "\n").encode())
        await self.process.stdin.drain()

    @classmethod
    async def run(cls, screen: VirtualScreen, tmp_path: Path, server: ScriptedLLMServer, task: str, url: str,
                  *more: str) -> Terminal:
        """`tabpilot run --headed TASK --url URL`, its browser profile and data under tmp_path."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
        env.update(TABPILOT_HOME=str(tmp_path / "home"), HOME=str(tmp_path / "home"), PYTHONUNBUFFERED="1",
                   DISPLAY=screen.display)
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "tabpilot", "run", task, "--url", url, "--headed",
            "--user-data-dir", str(tmp_path / "profile"), "--base-url", server.base_url, "--model", "scripted",
            "--api-key", API_KEY, *more,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env)
        return cls(process)

    async def end(self, person: Person | None) -> None:
        """Shown when the test fails: the terminal's text; then the person's connection and the run go."""
        print(self.text)
        if person is not None:
            await person.close()
        if self.process.returncode is None:
            self.process.kill()
            await self.process.wait()
        await self.reader


async def person_in(profile: Path, url_part: str) -> Person:
    port_file = profile / "DevToolsActivePort"
    await wait_for(lambda: port_file.exists() and len(port_file.read_text().splitlines()) >= 2, timeout=60)
    port, path = port_file.read_text().splitlines()[:2]
    ws_url = f"ws://127.0.0.1:{port}{path}"
    from tabpilot.cdp import CDPConnection, WebSocketTransport

    probe = CDPConnection(await WebSocketTransport.connect(ws_url))
    try:
        targets: list[dict[str, Any]] = []

        async def find() -> None:
            targets[:] = (await probe.root.send("Target.getTargets"))["targetInfos"]

        for _ in range(200):
            await find()
            if any(t["type"] == "page" and url_part in t["url"] for t in targets):
                break
            await asyncio.sleep(0.1)
        target = next(t for t in targets if t["type"] == "page" and url_part in t["url"])
    finally:
        await probe.close()
    return await Person.at(ws_url, target["targetId"])


async def take_the_controls(terminal: Terminal, server: ScriptedLLMServer, tmp_path: Path) -> Person:
    """Enter in the terminal once the agent's first step is under way; the person, at the task's page."""
    await terminal.shows("Press Enter here to take the controls")
    person = await person_in(tmp_path / "profile", "takeover_form.html")
    await wait_for(lambda: len(server.requests) == 1, timeout=60)
    await terminal.type()
    await terminal.shows("You have the controls")
    return person


def the_record(tmp_path: Path) -> TaskRecord:
    """The one task `tabpilot run` recorded."""
    store = TaskStore(tmp_path / "home" / "data" / "tasks.sqlite3")
    [summary] = store.list_tasks()
    record = store.get_task(summary.task_id)
    store.close()
    assert record is not None
    return record


async def test_enter_in_the_terminal_takes_over_and_hands_back_and_the_agent_knows_what_happened(
    screen: VirtualScreen, pages, tmp_path: Path
) -> None:
    replies = [
        step("wait", {"seconds": 8}, goal="Wait for the sign-in form"),  # under way when Enter is pressed
        step("ask_user", {"question": "Which plan do you want?"}, goal="Ask for the plan"),
        on_page(lambda b: {"input_text": {"index": index_of(b, "type=email"), "text": "ada.l@example.org"}},
                goal="Fix the email"),  # the agent's own typing: never a takeover
        step("wait", {"seconds": 8}, goal="Wait again"),  # the person touches the page meanwhile
        step("request_takeover", {"reason": "Please confirm the payment, then hand back"}, goal="Payment"),
        done("Signed in, Team plan, paid"),
    ]
    profile = tmp_path / "profile"
    with ScriptedLLMServer(replies) as server:
        url = pages.url("takeover_form.html")
        terminal = await Terminal.run(screen, tmp_path, server, "Sign in and choose a plan", url, "--max-steps", "10")
        process = terminal.process
        person: Person | None = None
        try:
            await terminal.shows("Press Enter here to take the controls")
            person = await person_in(profile, "takeover_form.html")

            # 1. Enter: the person takes the controls while the agent's wait is under way
            await wait_for(lambda: len(server.requests) == 1, timeout=60)
            await asyncio.sleep(1.0)
            await terminal.type()
            await terminal.shows("You have the controls")
            await person.click(EMAIL)
            await person.type("ada@example.org")
            await person.click("document.querySelector('#password')")
            await person.type(PASSWORD)
            await person.enter()
            assert (await person.evaluate("location.hash")) == "#signed-in"  # the page took the person's input
            await terminal.type()  # hand back…
            await terminal.shows("Note for the agent")
            await terminal.type("Signed in as Ada")  # …with a note
            await terminal.shows("✋ You took the controls")  # said to the user, not as the model reads it

            # 2. the agent's question, answered in the terminal
            await terminal.shows("The agent asks: Which plan do you want?")
            await terminal.type("The Team plan")

            # 3. the agent types (its own input), then waits; the person touches the page: implicit takeover
            await wait_for(lambda: len(server.requests) == 4, timeout=60)
            await asyncio.sleep(1.0)
            assert "You touched the page" not in terminal.text  # the agent's typing did not count
            await person.click("document.querySelector('#remember')")
            await terminal.shows("You touched the page")
            await person.select("document.querySelector('#plan')", "Team")
            await terminal.type()
            await terminal.type()  # no note

            # 4. the agent asks the person to act
            await terminal.shows("The agent asks you to take the controls: Please confirm the payment")
            await person.click("document.querySelector('#shadow').shadowRoot.querySelector('#shadowbtn')")
            opened = await person.connection.root.send("Target.createTarget", {"url": pages.url("basic.html")})
            await asyncio.sleep(1.0)
            await person.connection.root.send("Target.closeTarget", {"targetId": opened["targetId"]})
            await asyncio.sleep(0.5)
            await terminal.type()
            await terminal.type("Paid")
            assert await asyncio.wait_for(process.wait(), 120) == 0, terminal.text
        finally:
            await terminal.end(person)
        stderr = (await process.stderr.read()).decode() if process.stderr else ""
        requests = ["\n".join(str(m.get("content")) for m in body["messages"]) for body in server.requests]
        everything_sent = json.dumps(server.requests, ensure_ascii=False)

    out = terminal.text
    assert "✅ completed: Signed in, Team plan, paid" in out, out + stderr
    # the model was asked again after each takeover, with the account
    after_enter = requests[1]
    assert 'typed in textbox "Email" → "ada@example.org"' in after_enter
    assert "(hidden)" in after_enter and "Signed in as Ada" in after_enter and "pressed Enter" in after_enter
    assert "took the controls before this action finished" in after_enter  # the wait was abandoned
    assert "User answered: The Team plan" in requests[2]
    assert "they used the page while you were working" in requests[4]
    assert 'chose "Team plan" in combobox "Plan"' in requests[4]
    assert "The user handed the controls back" in requests[5] and "Save nickname" in requests[5]
    assert "Paid" in requests[5]
    basic = pages.url("basic.html")
    assert f'opened tab "{basic}"' in requests[5] and f'closed tab "{basic}"' in requests[5]  # tabs, from the host
    # the password is nowhere: not in any request, the output, or the record
    assert PASSWORD not in everything_sent and PASSWORD not in out and PASSWORD not in stderr
    store = TaskStore(tmp_path / "home" / "data" / "tasks.sqlite3")
    [summary] = store.list_tasks()
    record = store.get_task(summary.task_id)
    store.close()
    assert record is not None and summary.status == "completed"
    takeovers = [e for e in record.events if e["type"] == "user_takeover"]
    assert [t["reason"] for t in takeovers] == ["user", "implicit", "agent_request"]
    assert takeovers[0]["note"] == "Signed in as Ada" and takeovers[0]["urlBefore"] == url
    assert [(a["kind"], a["target"], a.get("value")) for a in takeovers[0]["actions"]][:3] == [
        ("input", 'textbox "Email"', "ada@example.org"), ("input", 'textbox "Password"', "•••"),
        ("key", 'textbox "Password"', "Enter")]
    assert takeovers[0]["urlAfter"].endswith("#signed-in")
    # the agent's own typing just before the implicit takeover is not the person's
    assert all("ada.l@example.org" not in str(a.get("value")) for t in takeovers for a in t["actions"])
    assert PASSWORD.encode() not in (tmp_path / "home" / "data" / "tasks.sqlite3").read_bytes()


async def test_a_note_typed_on_the_hand_back_line_goes_to_the_agent_without_a_second_prompt(
    screen: VirtualScreen, pages, tmp_path: Path
) -> None:
    """What a person types before the Enter that hands back is their note: it was dropped, and the
    "Note for the agent" prompt came only after it. A bare Enter still asks for the note."""
    replies = [step("wait", {"seconds": 8}, goal="Wait"), step("wait", {"seconds": 8}, goal="Wait again"),
               done("Signed in")]
    with ScriptedLLMServer(replies) as server:
        terminal = await Terminal.run(screen, tmp_path, server, "Sign in", pages.url("takeover_form.html"),
                                      "--max-steps", "5")
        process = terminal.process
        person: Person | None = None
        try:
            person = await take_the_controls(terminal, server, tmp_path)
            assert "To leave the agent a note, type it before that Enter" in terminal.text
            await person.click(EMAIL)
            await person.type("ada@example.org")
            await terminal.type("Signed in as Ada")  # the note and the hand-back in one line
            await terminal.shows("✋ You took the controls")
            await wait_for(lambda: len(server.requests) == 2, timeout=60)
            assert "Note for the agent" not in terminal.text

            await terminal.type()  # the second time: a bare Enter hands back after asking for the note
            await wait_for(lambda: terminal.text.count("You have the controls") == 2, timeout=60)
            await terminal.type()
            await terminal.shows("Note for the agent")
            await terminal.type("Nothing else to do")
            assert await asyncio.wait_for(process.wait(), 120) == 0, terminal.text
        finally:
            await terminal.end(person)
        requests = ["\n".join(str(m.get("content")) for m in body["messages"]) for body in server.requests]
    assert "Signed in as Ada" in requests[1] and 'typed in textbox "Email" → "ada@example.org"' in requests[1]
    assert "Nothing else to do" in requests[2]
    record = the_record(tmp_path)
    assert record.summary.status == "completed"
    assert [e["note"] for e in record.events if e["type"] == "user_takeover"] == [
        "Signed in as Ada", "Nothing else to do"]


async def test_ctrl_c_while_the_user_has_the_controls_records_the_takeover_then_ends_stopped(
    screen: VirtualScreen, pages, tmp_path: Path
) -> None:
    with ScriptedLLMServer([step("wait", {"seconds": 10}, goal="Wait")]) as server:
        terminal = await Terminal.run(screen, tmp_path, server, "Sign in", pages.url("takeover_form.html"))
        process = terminal.process
        person: Person | None = None
        try:
            person = await take_the_controls(terminal, server, tmp_path)
            await person.click(EMAIL)
            await person.type("half-typed@example.org")  # still in the field, never left: pending in the page
            await asyncio.sleep(0.3)
            process.send_signal(signal.SIGINT)
            assert await asyncio.wait_for(process.wait(), 60) == 130, terminal.text
        finally:
            await terminal.end(person)
    record = the_record(tmp_path)
    assert record.summary.status == "stopped"
    [takeover] = [e for e in record.events if e["type"] == "user_takeover"]
    assert takeover["reason"] == "user"
    assert [(a["kind"], a["target"], a.get("value")) for a in takeover["actions"]] == [
        ("input", 'textbox "Email"', "half-typed@example.org")]
    assert "✋ You took the controls" in terminal.text and "⏹ stopped" in terminal.text
