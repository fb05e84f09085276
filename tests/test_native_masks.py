"""A task's placeholders outlive its host: a real host subprocess on a real Chromium (the extension's relay played by
`relay_support.ExtensionStandIn`), the scripted model over HTTP, the real SQLite record. The host that goes on with
a task after the service worker restarted, and the one that adds to a takeover what the person did after its host
died, name each address as the task's first host did: one address keeps one placeholder, and no two addresses
share one (privacy/kept.py)."""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest
from relay_support import ExtensionStandIn, HostUnderTest
from test_native_relay import (
    act,
    configure,
    database_rows,
    llm,  # noqa: F401  # the fixture
    open_tab,
    output,
    prompt_of,
)
from test_native_takeover import until

from tabpilot.llm.scripted import Delay, ToolCall

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

ADA = "ada.lovelace@example.org"  # on privacy_form.html
BOB = "bob@example.net"  # put above it while no host runs


async def start_host(home: Path, stand_in: ExtensionStandIn) -> HostUnderTest:
    host = await HostUnderTest.start(home, stand_in)
    assert (await host.request("hello", extensionVersion="0.1.0"))["ok"]  # a task a host suspended is taken up
    return host


async def in_page(stand_in: ExtensionStandIn, tab_id: int, script: str) -> Any:
    """Run `script` in the tab over a DevTools session of its own (as the page itself would change)."""
    session = (await stand_in.cdp("Target.attachToTarget", {"targetId": stand_in._targets[tab_id],
                                                            "flatten": True}))["sessionId"]
    try:
        reply = await stand_in.cdp("Runtime.evaluate", {"expression": script, "returnByValue": True}, session)
        return reply["result"].get("value")
    finally:
        await stand_in.cdp("Target.detachFromTarget", {"sessionId": session})


def kept_masks(home: Path) -> list[str]:
    folder = home / "run" / "masked"
    return sorted(path.name for path in folder.iterdir()) if folder.exists() else []


def kept_action_values(home: Path, task_id: str) -> list[Any]:
    """The values of the takeover under way as the record keeps it (store.keep_open_takeover)."""
    with sqlite3.connect(f"file:{home / 'data' / 'tasks.sqlite3'}?mode=ro", uri=True) as db:
        rows = db.execute("SELECT body FROM takeover_actions WHERE task_id = ? ORDER BY n", (task_id,)).fetchall()
    return [json.loads(body).get("value") for (body,) in rows]


def page_of(body: dict[str, Any]) -> str:
    return prompt_of(body).split("<browser_state>")[-1]


async def test_a_task_resumed_by_the_next_host_names_its_addresses_as_before(
    stand_in, llm, pages, tmp_path  # noqa: F811
):
    """The agent types `[email 1]` (Ada's address, seen on the page); the service worker restarts while it thinks,
    and another address appears above Ada's meanwhile. The next host goes on with the task: Ada's address is still
    `[email 1]`, the new one `[email 2]`, and the model's `[email 1]` types Ada's address again (a host that numbered
    from 1 called the new address `[email 1]` and typed it). Nothing is left kept once the task is over."""
    home = tmp_path / "tabpilot"
    host = await start_host(home, stand_in)
    await configure(host, llm)
    assert (await host.request("settings.set", maskEmails=True))["ok"]
    tab_id = await open_tab(stand_in, pages.url("privacy_form.html"))
    llm.add(act("Notes", "input_text", "Note the contact", text="[email 1]"),
            Delay(60),  # thinking when the host goes away
            act("Copy to", "input_text", "Copy the contact", text="[email 1]"),
            ToolCall("AgentOutput", output("Report", {"done": {"text": "Copied", "success": True}})))
    task_id = (await host.request("task.start", task="Note the contact and send it a copy", tabId=tab_id))[
        "data"]["taskId"]
    await until(lambda: len(llm.requests) == 2)
    assert "Contact: [email 1]" in page_of(llm.requests[0]) and ADA not in json.dumps(llm.requests)
    assert kept_masks(home) == [f"{task_id}.json"]
    await host.close_stdin()  # as Chromium does when the service worker stops: the task is suspended
    await host.stop()
    await in_page(stand_in, tab_id, f"document.body.insertAdjacentHTML('afterbegin', '<p>Also: {BOB}</p>')")

    host = await start_host(home, stand_in)
    try:
        result = await host.wait_push(lambda p: p.get("taskId") == task_id and p["type"] == "task.result")
        assert result["result"]["success"] is True, result
        log = await in_page(stand_in, tab_id, "window.agentLog.map((e) => [e.field, e.value])")
        assert [entry for entry in log if entry[0] == "notes"][-1] == ["notes", ADA], log
        assert [entry for entry in log if entry[0] == "copy"][-1] == ["copy", ADA], log
        resumed = page_of(llm.requests[2])
        assert "Also: [email 2]" in resumed and "Contact: [email 1]" in resumed, resumed
        assert ADA not in json.dumps(llm.requests) and BOB not in json.dumps(llm.requests)
        status, events = database_rows(home, task_id)
        assert status == "completed" and ADA not in json.dumps(events) and BOB not in json.dumps(events)
        await until(lambda: kept_masks(home) == [])
    finally:
        await host.stop()


async def test_what_the_person_did_after_the_host_died_names_an_address_as_its_run_did(
    stand_in, llm, pages, tmp_path  # noqa: F811
):
    """The person takes over and types Ada's address, which the model was told as `[email 1]`; the host is killed.
    The next host adds what they did meanwhile (Ada's address again, and Bob's, which no model saw) to the cut-short
    takeover: Ada's is `[email 1]` there too, not her address under a second name beside it; Bob's is as typed,
    as a run keeps a value its model never saw. What was kept goes when that host exits."""
    home = tmp_path / "tabpilot"
    host = await start_host(home, stand_in)
    await configure(host, llm)
    assert (await host.request("settings.set", maskEmails=True))["ok"]
    url = pages.url("privacy_form.html")
    tab_id = await open_tab(stand_in, url)
    llm.add(Delay(60))  # thinking when the person takes over
    task_id = (await host.request("task.start", task="Fill in the details", tabId=tab_id))["data"]["taskId"]
    await until(lambda: len(llm.requests) == 1)
    assert "Contact: [email 1]" in page_of(llm.requests[0])
    assert (await host.request("task.takeover", taskId=task_id, reason="user"))["ok"]

    def typed(target: str, value: str, at: int) -> dict[str, Any]:
        return {"kind": "input", "target": f'textbox "{target}"', "value": value, "url": url, "at": at}

    assert (await host.request("takeover.actions", taskId=task_id, actions=[typed("Notes", ADA, 1)]))["ok"]
    await until(lambda: kept_action_values(home, task_id) == ["[email 1]"])
    assert kept_masks(home) == [f"{task_id}.json"]  # written before it, on the same writer
    host.process.kill()  # a crash: nothing said, nothing suspended
    await host.stop()

    host = await start_host(home, stand_in)
    try:
        late = [typed("Copy to", ADA, 2), typed("Send a copy to", BOB, 3)]
        assert (await host.request("takeover.actions", taskId=task_id, actions=late))["ok"]
        status, events = database_rows(home, task_id)
        [takeover] = [e for e in events if e["type"] == "user_takeover"]
        values = [(a.get("target"), a.get("value")) for a in takeover["actions"] if a["kind"] == "input"]
        assert status == "interrupted" and values == [
            ('textbox "Notes"', "[email 1]"), ('textbox "Copy to"', "[email 1]"), ('textbox "Send a copy to"', BOB),
        ], takeover["actions"]
        assert ADA not in json.dumps(events)
    finally:
        await host.stop()
    assert kept_masks(home) == []


def typed(url: str, target: str, value: str, at: int) -> dict[str, Any]:
    return {"kind": "input", "target": f'textbox "{target}"', "value": value, "url": url, "at": at}


async def taken_over_with_ada_typed(host: HostUnderTest, llm: Any, stand_in: ExtensionStandIn,  # noqa: F811
                                    pages: Any) -> tuple[str, str]:
    """A task whose model was told Ada's address as `[email 1]`, taken over, Ada's address typed in Notes (the
    takeover keeps it as `[email 1]`): its id and the page's address."""
    await configure(host, llm)
    assert (await host.request("settings.set", maskEmails=True))["ok"]
    url = pages.url("privacy_form.html")
    tab_id = await open_tab(stand_in, url)
    task_id = (await host.request("task.start", task="Fill in the details", tabId=tab_id))["data"]["taskId"]
    await until(lambda: len(llm.requests) == 1)
    assert "Contact: [email 1]" in page_of(llm.requests[0])
    # what a page gave late, for a task no takeover of which waits for it: refused, said so, the host goes on
    refused = await host.request("takeover.late", taskId=task_id, actions=[typed(url, "Notes", ADA, 1)])
    assert not refused["ok"] and refused["error"]["code"] == "bad_request", refused
    assert (await host.request("task.takeover", taskId=task_id, reason="user"))["ok"]
    assert (await host.request("takeover.actions", taskId=task_id, actions=[typed(url, "Notes", ADA, 1)]))["ok"]
    return task_id, url


def takeover_values(home: Path, task_id: str) -> tuple[list[tuple[Any, Any]], Any, str]:
    """The recorded takeover's typed (target, value)s, its last action, and the task's recorded events as JSON."""
    _status, events = database_rows(home, task_id)
    [takeover] = [e for e in events if e["type"] == "user_takeover"]
    values = [(a.get("target"), a.get("value")) for a in takeover["actions"] if a["kind"] == "input"]
    return values, takeover["actions"][-1], json.dumps(events)


ANSWERED_LATE = "the page answered late when the controls came back: what the user did in it last is recorded above"


async def test_what_a_slow_page_gives_after_hand_back_is_masked_as_what_it_gave_in_time(
    stand_in, llm, pages, tmp_path  # noqa: F811
):
    """The page did not answer Hand back in time; it gives Ada's address (typed in Copy to) and Bob's a moment later
    (`takeover.late`): the takeover handed back gets them, Ada's as `[email 1]` as the run named it, in the record
    and in what the model reads next; Bob's, which no model saw, as typed."""
    home = tmp_path / "tabpilot"
    host = await start_host(home, stand_in)
    gate = threading.Event()

    def held(_body: dict[str, Any]) -> Any:
        gate.wait(60)
        return ToolCall("AgentOutput", output("Wait", {"wait": {"seconds": 1}}))

    llm.add(Delay(60), held, ToolCall("AgentOutput", output("Report", {"done": {"text": "Done", "success": True}})))
    try:
        task_id, url = await taken_over_with_ada_typed(host, llm, stand_in, pages)
        late = [typed(url, "Copy to", ADA, 2), typed(url, "Send a copy to", BOB, 3)]
        assert (await host.request("task.handback", taskId=task_id, pageSilent=True))["ok"]
        assert (await host.request("takeover.late", taskId=task_id, actions=late))["ok"]
        amended = await host.wait_push(lambda p: p.get("taskId") == task_id and p["type"] == "task.amended")
        gate.set()
        result = await host.wait_push(lambda p: p.get("taskId") == task_id and p["type"] == "task.result")
        assert result["result"]["success"] is True, result
        values, last, events = takeover_values(home, task_id)
        assert values == [('textbox "Notes"', "[email 1]"), ('textbox "Copy to"', "[email 1]"),
                          ('textbox "Send a copy to"', BOB)], values
        assert last == {"kind": "note", "description": f"({ANSWERED_LATE})"} and ADA not in events
        told = prompt_of(llm.requests[-1])
        assert 'textbox "Copy to" → "[email 1]"' in told and ANSWERED_LATE in told, told[-3000:]
        assert ADA not in json.dumps(llm.requests)
        # views are told the takeover as amended, masked as the record has it
        assert amended["event"]["actions"][-1] == last and ADA not in json.dumps(amended), amended
        shown = [(a.get("target"), a.get("value")) for a in amended["event"]["actions"] if a["kind"] == "input"]
        assert shown == values, shown
    finally:
        gate.set()
        await host.stop()


async def test_what_a_slow_page_gives_after_stop_is_masked_as_what_it_gave_in_time(
    stand_in, llm, pages, tmp_path  # noqa: F811
):
    """As after Hand back, for a task stopped while the person had the controls: its run is over, and Ada's address
    the page gives late is `[email 1]` in the record all the same, not her address."""
    home = tmp_path / "tabpilot"
    host = await start_host(home, stand_in)
    llm.add(Delay(60))
    try:
        task_id, url = await taken_over_with_ada_typed(host, llm, stand_in, pages)
        stopped = await host.request("task.stop", taskId=task_id, pageSilent=True, timeout=15)
        assert stopped["ok"] and stopped["data"]["startedAt"], stopped  # which takeover ended waiting for the page
        late = [typed(url, "Copy to", ADA, 2)]
        assert (await host.request("takeover.late", taskId=task_id, actions=late,
                                   startedAt=stopped["data"]["startedAt"]))["ok"]
        values, last, events = takeover_values(home, task_id)
        assert values == [('textbox "Notes"', "[email 1]"), ('textbox "Copy to"', "[email 1]")], values
        assert last == {"kind": "note", "description": f"({ANSWERED_LATE})"} and ADA not in events
        snapshot = (await host.request("task.get", taskId=task_id))["data"]["task"]
        assert [e for e in snapshot["history"] if e["type"] == "user_takeover"][-1]["actions"][-1] == last
    finally:
        await host.stop()


def record_bytes(home: Path) -> bytes:
    """Every byte of the record on disk: the database and its write-ahead log (a row's text lives there first)."""
    return b"".join(path.read_bytes() for path in sorted((home / "data").glob("tasks.sqlite3*")) if path.is_file())


async def test_a_takeover_under_way_when_the_host_suspends_its_task_keeps_no_masked_value_in_the_record(
    stand_in, llm, pages, tmp_path  # noqa: F811
):
    """The person has the controls and typed Ada's address (the model knows it as `[email 1]`) when the service worker
    restarts: the host suspends the task and saves what the next host needs to go on, the takeover under way too.
    That saved state held the person's actions as typed, so Ada's address was in the SQLite file while the task
    waited, though every event and kept takeover row says `[email 1]` (found by an attack run). The next host goes on
    with the takeover and records it as `[email 1]` all the same."""
    home = tmp_path / "tabpilot"
    host = await start_host(home, stand_in)
    llm.add(Delay(60))
    try:
        task_id, _url = await taken_over_with_ada_typed(host, llm, stand_in, pages)
        await until(lambda: kept_action_values(home, task_id) == ["[email 1]"])
        await host.close_stdin()  # as Chromium does when the service worker stops: the task is suspended
    finally:
        await host.stop()
    with sqlite3.connect(f"file:{home / 'data' / 'tasks.sqlite3'}?mode=ro", uri=True) as db:
        [(state,)] = db.execute("SELECT body FROM run_states WHERE task_id = ? AND suspended", (task_id,)).fetchall()
    saved = json.loads(state)["takeover"]["actions"]
    assert [(a.get("target"), a.get("value")) for a in saved] == [('textbox "Notes"', "[email 1]")], saved
    assert ADA.encode() not in record_bytes(home)

    llm.add(ToolCall("AgentOutput", output("Report", {"done": {"text": "Done", "success": True}})))
    host = await start_host(home, stand_in)
    try:
        assert (await host.request("task.handback", taskId=task_id))["ok"]
        result = await host.wait_push(lambda p: p.get("taskId") == task_id and p["type"] == "task.result")
        assert result["result"]["success"] is True, result
        values, _last, events = takeover_values(home, task_id)
        assert values == [('textbox "Notes"', "[email 1]")] and ADA not in events, values
        assert ADA not in json.dumps(llm.requests)
    finally:
        await host.stop()
