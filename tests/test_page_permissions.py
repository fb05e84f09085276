"""The host's gate for tasks started by web pages (`native/pages.py`), its questions to the user
(`native/approvals.py`) and the allowed-sites feed to the extension (`native/site_feed.py`): the real
host process, spoken to in frames as Chromium does. Browser-free."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from native_support import HostProcess

from tabpilot.native.approvals import Approvals
from tabpilot.native.peer import RequestFailed

ORIGIN = "https://app.example"
OWN_MODEL = {"baseURL": "http://127.0.0.1:9/v1", "model": "page-model", "apiKey": "sk-page-0000000000000000"}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def host(home: Path):
    process = HostProcess(home)
    yield process
    process.stop()


def start(host: HostProcess, **fields: Any) -> dict[str, Any]:
    return host.request("task.start", task="Fill the form", tabId=7, source="page", **fields)


def wait_frame(host: HostProcess, wanted: Any, timeout: float = 20.0) -> dict[str, Any]:
    """The next frame `wanted` accepts, answering any request the host makes of the 'extension' with a
    refusal (no browser here), and keeping replies in `unclaimed`."""
    deadline = time.monotonic() + timeout
    while True:
        message = host.next_frame(max(0.01, deadline - time.monotonic()))
        if wanted(message):
            return message
        if message.get("type") not in ("reply", None) and message.get("id") is not None:
            host.send({"type": "reply", "id": message["id"], "ok": False, "error": {"message": "no browser here"}})
        host.unclaimed.append(message)


def test_a_site_nobody_allowed_starts_nothing_and_is_told_how_to_get_allowed(host: HostProcess) -> None:
    reply = start(host, origin=ORIGIN, config=OWN_MODEL)
    assert reply["error"]["code"] == "not_allowed"
    assert ORIGIN in reply["error"]["message"] and "tabpilot sites allow" in reply["error"]["message"]
    missing = start(host, config=OWN_MODEL)  # a page task must say its origin
    assert missing["error"]["code"] == "bad_request"
    recorded = host.request("history.list")["data"]["tasks"]  # nothing ran: the refusal is on record, for the person
    assert [(t["status"], t["requester"], t["steps"]) for t in recorded] == [("refused", ORIGIN, 0)]


def test_the_users_model_and_all_tabs_each_need_their_own_grant(host: HostProcess) -> None:
    assert host.request("sites.allow", origin=ORIGIN)["ok"]
    no_model = start(host, origin=ORIGIN, config={"apiKey": "x"})
    assert no_model["error"]["code"] == "not_allowed" and "--use-my-model" in no_model["error"]["message"]
    all_tabs = start(host, origin=ORIGIN, config={**OWN_MODEL, "experimentalIncludeAllTabs": True})
    assert all_tabs["error"]["code"] == "not_allowed" and "--all-tabs" in all_tabs["error"]["message"]
    # granted: past the gate (the next refusal is the tab: there is no browser in this test)
    assert host.request("sites.allow", origin=ORIGIN, useMyModel=True, allTabs=True)["ok"]
    host.request("settings.set", baseURL="http://127.0.0.1:9/v1", model="mine")
    host.send({"type": "task.start", "id": "g1", "task": "Fill", "tabId": 7, "source": "page", "origin": ORIGIN,
               "config": {"experimentalIncludeAllTabs": True}})
    reply = wait_frame(host, lambda m: m.get("type") == "reply" and m.get("id") == "g1")
    assert reply["error"]["code"] == "tab", reply


def test_an_ask_site_waits_for_the_user_deny_refuses_always_stops_asking(host: HostProcess) -> None:
    assert host.request("sites.allow", origin=ORIGIN, ask=True)["ok"]
    host.send({"type": "task.start", "id": "s1", "task": "Fill the form", "tabId": 7, "source": "page",
               "origin": ORIGIN, "config": OWN_MODEL})
    asked = wait_frame(host, lambda m: m.get("type") == "approval.request")
    assert {k: asked[k] for k in ("kind", "requester", "task", "tabId")} == {
        "kind": "page", "requester": ORIGIN, "task": "Fill the form", "tabId": 7,
    }
    assert asked["timeoutMs"] > 0 and "apiKey" not in str(asked) and OWN_MODEL["apiKey"] not in str(asked)
    host.send({"type": "approval.answer", "id": "a1", "approvalId": asked["approvalId"], "decision": "deny"})
    refused = wait_frame(host, lambda m: m.get("type") == "reply" and m.get("id") == "s1")
    assert refused["error"]["code"] == "denied" and "declined" in refused["error"]["message"]
    closed = [m for m in host.unclaimed if m.get("type") == "approval.closed"]
    assert closed == [{"type": "approval.closed", "approvalId": asked["approvalId"], "decision": "deny"}]
    late = host.request("approval.answer", approvalId=asked["approvalId"], decision="once")
    assert late["error"]["code"] == "not_found"  # a question answered once stays answered

    host.send({"type": "task.start", "id": "s2", "task": "Again", "tabId": 7, "source": "page",
               "origin": ORIGIN, "config": OWN_MODEL})
    asked = wait_frame(host, lambda m: m.get("type") == "approval.request")
    host.send({"type": "approval.answer", "id": "a2", "approvalId": asked["approvalId"], "decision": "always"})
    passed = wait_frame(host, lambda m: m.get("type") == "reply" and m.get("id") == "s2")
    assert passed["error"]["code"] == "tab"  # past the gate
    assert host.request("sites.list")["data"]["sites"][0]["ask"] is False
    host.send({"type": "task.start", "id": "s3", "task": "Third", "tabId": 7, "source": "page",
               "origin": ORIGIN, "config": OWN_MODEL})
    third = wait_frame(host, lambda m: m.get("type") in ("approval.request", "reply") and m.get("id") in ("s3", None))
    assert third["type"] == "reply" and third["error"]["code"] == "tab"  # not asked again


def test_a_question_whose_page_went_away_is_withdrawn_recorded_and_the_page_may_ask_again(host: HostProcess) -> None:
    """The page that asked was reloaded before the person answered: the extension withdraws its question. It goes
    from every view (approval.closed), the task does not start (`denied`, saying why) and is recorded as not run,
    `withdrawn` (nobody said no: Past tasks must not say the person did);
    a withdrawn question cannot be answered afterwards, and the same page's next task is asked about as usual."""
    assert host.request("sites.allow", origin=ORIGIN, ask=True)["ok"]
    for round_ in (1, 2):  # twice: nothing of the first withdrawal lingers (the requester may ask again)
        host.send({"type": "task.start", "id": f"w{round_}", "task": f"Transfer {round_}00 EUR", "tabId": 7,
                   "source": "page", "origin": ORIGIN, "config": OWN_MODEL})
        asked = wait_frame(host, lambda m: m.get("type") == "approval.request")
        assert host.request("approval.withdraw", approvalId=asked["approvalId"])["ok"]
        reply = wait_frame(host, lambda m, r=round_: m.get("type") == "reply" and m.get("id") == f"w{r}")
        assert reply["error"]["code"] == "denied" and "went away" in reply["error"]["message"], reply
        closed = [m for m in host.unclaimed if m.get("type") == "approval.closed"]
        assert closed[-1] == {"type": "approval.closed", "approvalId": asked["approvalId"], "decision": "deny"}
        late = host.request("approval.answer", approvalId=asked["approvalId"], decision="once")
        assert late["error"]["code"] == "not_found"  # an Allow pressed in a view not yet closed runs nothing
        assert host.request("approval.withdraw", approvalId=asked["approvalId"])["error"]["code"] == "not_found"
    recorded = host.request("history.list")["data"]["tasks"]
    assert [(t["status"], t["requester"], t["task"], t["steps"]) for t in recorded] == [
        ("withdrawn", ORIGIN, "Transfer 200 EUR", 0), ("withdrawn", ORIGIN, "Transfer 100 EUR", 0)]
    why = host.request("history.get", taskId=recorded[0]["taskId"])["data"]["result"]["data"]
    assert "went away" in why and "before the user answered" in why, why
    host.send({"type": "task.start", "id": "w3", "task": "Third", "tabId": 7, "source": "page",
               "origin": ORIGIN, "config": OWN_MODEL})
    asked = wait_frame(host, lambda m: m.get("type") == "approval.request")
    host.send({"type": "approval.answer", "id": "a3", "approvalId": asked["approvalId"], "decision": "once"})
    assert wait_frame(host, lambda m: m.get("type") == "reply" and m.get("id") == "w3")["error"]["code"] == "tab"


def test_a_question_open_when_the_host_goes_away_is_recorded_withdrawn_not_as_the_persons_no(
    host: HostProcess, home: Path
) -> None:
    """The browser closed (or restarted the extension) while a page's question was open: nobody said no. The record,
    `tabpilot history` and its export said "denied" ("the user declined"); they say withdrawn, and why."""
    import json

    from store_support import tabpilot

    assert host.request("sites.allow", origin=ORIGIN, ask=True)["ok"]
    host.send({"type": "task.start", "id": "q1", "task": "Pay the invoice", "tabId": 7, "source": "page",
               "origin": ORIGIN, "config": OWN_MODEL})
    wait_frame(host, lambda m: m.get("type") == "approval.request")
    host.close_stdin()  # what Chromium does when it closes
    listed = tabpilot(home, "history", "list")
    assert listed.returncode == 0 and "withdrawn" in listed.stdout and "denied" not in listed.stdout, listed.stdout
    exported = tabpilot(home, "history", "export", "--all")
    tasks = json.loads(exported.stdout)
    tasks = tasks if isinstance(tasks, list) else [tasks]
    assert [(t["task"], t["status"], t["requester"]) for t in tasks] == [("Pay the invoice", "withdrawn", ORIGIN)]
    assert "helper stopped" in tasks[0]["data"] and "declined" not in tasks[0]["data"], tasks[0]


def test_only_a_pages_question_can_be_withdrawn() -> None:
    """An MCP client's question is not the page bridge's to withdraw (its client goes away another way)."""
    pushed: list[dict[str, Any]] = []

    async def scenario() -> str:
        approvals = Approvals(pushed.append, timeout=5)
        asking = asyncio.ensure_future(approvals.ask("mcp", "claude-desktop", "Book a table"))
        await asyncio.sleep(0.01)
        approval_id = pushed[0]["approvalId"]
        assert approvals.withdraw(approval_id) is False and approvals.withdraw("a9-unknown") is False
        assert approvals.answer(approval_id, "once")
        return await asking

    assert asyncio.run(scenario()) == "once"


def test_no_answer_in_time_is_a_clear_no() -> None:
    pushed: list[dict[str, Any]] = []

    async def scenario() -> RequestFailed:
        approvals = Approvals(pushed.append, timeout=0.2)
        with pytest.raises(RequestFailed) as info:
            await approvals.ask("mcp", "claude-desktop", "Book a table")
        assert approvals.pending() == []
        return info.value

    refusal = asyncio.run(scenario())
    assert refusal.code == "denied" and "did not answer within 0.2 s" in str(refusal)
    assert "claude-desktop" in str(refusal)
    assert [m["type"] for m in pushed] == ["approval.request", "approval.closed"]
    assert pushed[0]["kind"] == "mcp" and pushed[1]["decision"] == "deny"


def test_the_extension_hears_of_a_change_made_in_a_terminal(host: HostProcess, home: Path) -> None:
    listed = host.request("sites.list")["data"]
    assert listed["sites"] == [] and listed["tokenName"] == "PageAgentExtUserAuthToken" and listed["token"]
    subprocess.run([sys.executable, "-m", "tabpilot", "sites", "allow", "http://127.0.0.1:8123", "--ask"],
                   env={**os.environ, "TABPILOT_HOME": str(home)}, check=True, capture_output=True, timeout=60)
    changed = wait_frame(host, lambda m: m.get("type") == "sites.changed", timeout=10)
    assert [(s["origin"], s["ask"]) for s in changed["sites"]] == [("http://127.0.0.1:8123", True)]
    assert changed["token"] == listed["token"]
    revoked = host.request("sites.revoke", origin="http://127.0.0.1:8123")
    assert revoked["ok"] and revoked["data"]["sites"] == []
    pushed = [m for m in host.unclaimed if m.get("type") == "sites.changed"]  # at once, before the reply
    assert pushed[-1]["sites"] == []
    bad = host.request("sites.allow", origin="https://*.example.com")
    assert bad["error"]["code"] == "bad_request" and "wildcards" in bad["error"]["message"]


def test_page_agents_token_counts_as_allowed_with_no_further_grant(host: HostProcess) -> None:
    token = host.request("sites.list")["data"]["token"]
    wrong = start(host, origin=ORIGIN, config=OWN_MODEL, pageToken=token[:-1] + ("x" if token[-1] != "x" else "y"))
    assert wrong["error"]["code"] == "not_allowed"
    for odd in ("jeton-é", "\u202e" + token, "\x00"):  # a page's token is any text: refused, not a crash
        assert start(host, origin=ORIGIN, config=OWN_MODEL, pageToken=odd)["error"]["code"] == "not_allowed"
    no_model = start(host, origin=ORIGIN, config={}, pageToken=token)
    assert no_model["error"]["code"] == "not_allowed" and "--use-my-model" in no_model["error"]["message"]
    host.send({"type": "task.start", "id": "k1", "task": "Fill", "tabId": 7, "source": "page", "origin": ORIGIN,
               "config": OWN_MODEL, "pageToken": token})
    passed = wait_frame(host, lambda m: m.get("type") == "reply" and m.get("id") == "k1")
    assert passed["error"]["code"] == "tab"  # past the gate
    assert host.request("sites.list")["data"]["sites"] == []  # nothing was added to the list
    renewed = host.request("sites.rotate")["data"]["token"]
    assert renewed != token and [m for m in host.unclaimed if m.get("type") == "sites.changed"][-1]["token"] == renewed
    old = start(host, origin=ORIGIN, config=OWN_MODEL, pageToken=token)
    assert old["error"]["code"] == "not_allowed"  # pages holding the old token lost access


def test_one_question_per_requester_at_a_time() -> None:
    """A page or a local program that asks again before its question is answered is told `busy`: the person
    is not buried under cards and notifications. Another requester is asked as usual, and once answered the
    first may ask again."""
    pushed: list[dict[str, Any]] = []

    async def answer_all(approvals: Approvals) -> None:
        await asyncio.sleep(0.05)
        for request in [m for m in pushed if m["type"] == "approval.request"]:
            approvals.answer(request["approvalId"], "once")

    async def scenario() -> RequestFailed:
        approvals = Approvals(pushed.append, timeout=5)
        first = asyncio.ensure_future(approvals.ask("page", ORIGIN, "One"))
        other = asyncio.ensure_future(approvals.ask("page", "https://other.example", "Mine"))
        await asyncio.sleep(0.05)
        with pytest.raises(RequestFailed) as again:
            await approvals.ask("page", ORIGIN, "Two")
        await answer_all(approvals)
        assert await asyncio.gather(first, other) == ["once", "once"]
        third = asyncio.ensure_future(approvals.ask("page", ORIGIN, "Three"))
        await answer_all(approvals)
        assert await third == "once"
        return again.value

    busy = asyncio.run(scenario())
    assert busy.code == "busy" and ORIGIN in str(busy) and "one at a time" in str(busy)
    assert [m["task"] for m in pushed if m["type"] == "approval.request"] == ["One", "Mine", "Three"]
