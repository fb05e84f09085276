"""User takeover through the host (issue 10), a real host subprocess on a real Chromium, the extension's
relay played by `relay_support.ExtensionStandIn`, the model the scripted server over HTTP: the user
takes the controls (the action under way is abandoned, the model call in flight hung up), the actions
the extension sends are kept, Hand back appends ONE user_takeover event (stored, pushed) and the next
model request carries the account; Stop while taken over records it; the model's request_takeover and
ask_user go through the protocol."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import pytest_asyncio
from relay_support import HostUnderTest
from test_native_relay import configure, database_rows, open_tab, output, prompt_of

from tabpilot.llm.scripted import Delay, ScriptedLLMServer, ToolCall

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

HIDDEN = "•••"


@pytest_asyncio.fixture(loop_scope="module")
async def host(stand_in, tmp_path):
    running = await HostUnderTest.start(tmp_path / "tabpilot", stand_in)
    yield running
    await running.stop()


@pytest.fixture
def llm():
    server = ScriptedLLMServer([]).start()
    yield server
    server.close()


def step(goal: str, action: dict[str, Any]) -> ToolCall:
    return ToolCall("AgentOutput", output(goal, action))


def done(text: str) -> ToolCall:
    return step("Report", {"done": {"text": text, "success": True}})


def actions(url: str) -> list[dict[str, Any]]:
    """What capture.js reports for a person signing in (see test_capture.py for the script itself)."""
    return [
        {"kind": "click", "target": 'link "Sign in"', "url": url, "at": 1_700_000_000_000},
        {"kind": "input", "target": 'textbox "Email"', "value": "ada@example.org", "url": url, "at": 1_700_000_001_000},
        {"kind": "input", "target": 'textbox "Password"', "value": HIDDEN, "url": url, "at": 1_700_000_002_000},
        {"kind": "key", "target": 'textbox "Password"', "value": "Enter", "url": url, "at": 1_700_000_003_000},
    ]


def of(host: HostUnderTest, task_id: str, kind: str) -> list[dict[str, Any]]:
    return [p for p in host.pushes if p.get("taskId") == task_id and p["type"] == kind]


async def until(predicate: Any, timeout: float = 30.0) -> None:
    for _ in range(int(timeout / 0.05)):
        if predicate():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("timed out")


async def test_take_over_act_hand_back_twice_then_the_model_reads_the_account(host, stand_in, llm, pages, tmp_path):
    await configure(host, llm)
    url = pages.url("agent_form.html")
    tab_id = await open_tab(stand_in, url)
    llm.add(step("Wait for the page", {"wait": {"seconds": 10}}),  # under way when the user takes over
            Delay(60, then=done("never")),  # in flight when they take over the second time
            done("Signed in"))
    task_id = (await host.request("task.start", task="Sign in", tabId=tab_id))["data"]["taskId"]
    await host.wait_push(lambda p: p.get("taskId") == task_id and p.get("activity", {}).get("tool") == "wait")

    # 1st takeover: the wait under way is abandoned, and its step says the user took over (no error)
    assert (await host.request("task.takeover", taskId=task_id, reason="user"))["ok"]
    control = (await host.wait_push(lambda p: p["type"] == "task.control" and p["control"]))
    assert control["taskId"] == task_id and control["control"]["by"] == "user"
    assert control["control"]["reason"] == "user" and control["control"]["startedAt"] > 0
    snapshot = (await host.request("task.get", taskId=task_id))["data"]["task"]
    assert snapshot["status"] == "running" and snapshot["control"]["reason"] == "user"
    assert snapshot["question"] is None
    first_step = await host.wait_push(lambda p: p.get("taskId") == task_id and p["type"] == "task.event"
                                      and p["event"]["type"] == "step")
    assert "took the controls before this action finished" in first_step["event"]["action"]["output"]
    assert "❌" not in first_step["event"]["action"]["output"]
    await asyncio.sleep(0.5)
    assert len(llm.requests) == 1  # nothing asked while the user has the controls

    sent = actions(url)
    assert (await host.request("takeover.actions", taskId=task_id, actions=sent[:2]))["ok"]  # in batches
    assert (await host.request("takeover.actions", taskId=task_id, actions=sent[2:]))["ok"]
    assert (await host.request("task.handback", taskId=task_id, note="I signed in; check the inbox"))["ok"]
    event = (await host.wait_push(lambda p: p.get("taskId") == task_id and p["type"] == "task.event"
                                  and p["event"]["type"] == "user_takeover"))["event"]
    # as sent, each with its description for the reader (the popup shows it)
    assert [{k: v for k, v in a.items() if k != "description"} for a in event["actions"]] == sent
    assert event["actions"][0]["description"] == 'clicked link "Sign in"', event["actions"]
    assert event["reason"] == "user" and event["note"] == "I signed in; check the inbox"
    assert event["urlBefore"] == url and event["urlAfter"] == url and event["endedAt"] >= event["startedAt"]
    assert of(host, task_id, "task.control")[-1]["control"] is None
    late = await host.request("takeover.actions", taskId=task_id, actions=sent[:1])  # after Hand back: refused
    assert late["ok"] is False and late["error"]["code"] == "bad_request" and "controls" in late["error"]["message"]

    # 2nd takeover, this time while the model thinks: the call is hung up, asked again after Hand back
    await until(lambda: len(llm.requests) == 2)
    account = prompt_of(llm.requests[1])
    assert 'typed in textbox "Email" → "ada@example.org"' in account
    assert 'typed in textbox "Password" (hidden)' in account and "pressed Enter" in account
    assert "I signed in; check the inbox" in account and f"page is now {url}" in account
    history, page = account.split("<browser_state>")
    assert "<user_takeover>The user took over" in history and "user_takeover" not in page  # outside the page
    assert (await host.request("task.takeover", taskId=task_id, reason="implicit"))["ok"]
    await until(lambda: llm.dropped == [1])
    assert (await host.request("task.handback", taskId=task_id))["ok"]
    result = await host.wait_push(lambda p: p.get("taskId") == task_id and p["type"] == "task.result")
    assert result["result"]["success"] is True and len(llm.requests) == 3

    status, stored = database_rows(tmp_path / "tabpilot", task_id)
    takeovers = [e for e in stored if e["type"] == "user_takeover"]
    assert status == "completed" and len(takeovers) == 2
    assert takeovers[0]["actions"] == sent and takeovers[1]["reason"] == "implicit" and takeovers[1]["actions"] == []
    not_taken = await host.request("task.handback", taskId=task_id)
    assert not_taken["ok"] is False and not_taken["error"]["code"] == "bad_request"


async def test_stop_while_taken_over_records_the_takeover_then_ends_stopped(host, stand_in, llm, pages, tmp_path):
    await configure(host, llm)
    url = pages.url("agent_form.html?stop")
    tab_id = await open_tab(stand_in, url)
    llm.add(Delay(60, then=done("never")))
    task_id = (await host.request("task.start", task="Sign in", tabId=tab_id))["data"]["taskId"]
    await until(lambda: llm.requests)
    assert (await host.request("task.takeover", taskId=task_id, reason="user"))["ok"]
    assert (await host.request("takeover.actions", taskId=task_id, actions=actions(url)))["ok"]
    assert (await host.request("task.stop", taskId=task_id, timeout=15))["ok"]
    result = await host.wait_push(lambda p: p.get("taskId") == task_id and p["type"] == "task.result")
    assert result["result"]["success"] is False
    status, stored = database_rows(tmp_path / "tabpilot", task_id)
    takeovers = [e for e in stored if e["type"] == "user_takeover"]
    assert status == "stopped" and len(takeovers) == 1 and takeovers[0]["actions"] == actions(url)
    assert of(host, task_id, "task.status")[-1]["status"] == "stopped"


async def test_the_model_asks_the_user_to_take_over_and_to_answer_a_question(host, stand_in, llm, pages, tmp_path):
    await configure(host, llm)
    url = pages.url("agent_form.html?ask")
    tab_id = await open_tab(stand_in, url)
    llm.add(step("Get logged in", {"request_takeover": {"reason": "Please log in, then hand back"}}),
            step("Ask for the plan", {"ask_user": {"question": "Which plan do you want?"}}),
            done("Logged in, Team plan"))
    task_id = (await host.request("task.start", task="Buy a plan", tabId=tab_id))["data"]["taskId"]
    control = (await host.wait_push(lambda p: p.get("taskId") == task_id and p["type"] == "task.control"
                                    and p["control"]))["control"]
    assert control["reason"] == "agent_request" and control["message"] == "Please log in, then hand back"
    paused = await host.wait_push(lambda p: p.get("taskId") == task_id
                                  and p.get("activity", {}).get("type") == "paused")
    assert paused["activity"]["reason"] == "agent_request"
    assert (await host.request("takeover.actions", taskId=task_id, actions=actions(url)))["ok"]
    assert (await host.request("task.handback", taskId=task_id, note="done, I am in"))["ok"]

    question = await host.wait_push(lambda p: p.get("taskId") == task_id and p.get("activity", {}).get("type")
                                    == "question")
    assert question["activity"]["question"] == "Which plan do you want?"
    assert (await host.request("task.get", taskId=task_id))["data"]["task"]["question"] == "Which plan do you want?"
    assert of(host, task_id, "task.control")[-1] == {"type": "task.control", "taskId": task_id, "control": None,
                                                     "question": "Which plan do you want?", "approval": None}
    assert (await host.request("task.answer", taskId=task_id, answer="The Team plan"))["ok"]
    result = await host.wait_push(lambda p: p.get("taskId") == task_id and p["type"] == "task.result")
    assert result["result"]["success"] is True

    schema = str(llm.requests[0]["tools"])
    assert "request_takeover" in schema and "ask_user" in schema  # offered by default
    second, third = prompt_of(llm.requests[1]), prompt_of(llm.requests[2])
    assert "The user handed the controls back" in second and "(you asked them to)" in second
    # told once: the takeover's note in the history; the step's result points there
    assert second.count('typed in textbox "Email" → "ada@example.org"') == 1 and second.count("done, I am in") == 1
    assert "User answered: The Team plan" in third
    status, stored = database_rows(tmp_path / "tabpilot", task_id)
    assert status == "completed" and [e["reason"] for e in stored if e["type"] == "user_takeover"] == ["agent_request"]
    none_pending = await host.request("task.answer", taskId=task_id, answer="again")
    assert none_pending["ok"] is False and none_pending["error"]["code"] == "bad_request"


async def test_bad_takeover_requests_get_clear_errors_and_the_host_keeps_serving(host, stand_in, llm, pages):
    await configure(host, llm)
    no_list = await host.request("takeover.actions", taskId="x", actions={"kind": "click", "target": "", "at": 1})
    assert no_list["ok"] is False and no_list["error"]["code"] == "bad_request"
    assert "actions" in no_list["error"]["message"]
    no_task = await host.request("takeover.actions", taskId="x", actions=[{"kind": "dance", "target": "", "at": 1}])
    assert no_task["ok"] is False and no_task["error"]["code"] == "not_found"
    unknown = await host.request("task.takeover", taskId="nope", reason="user")
    assert unknown["ok"] is False and unknown["error"]["code"] == "not_found"
    assert (await host.request("ping"))["ok"]


async def signing_in_twice_taken_over(host, stand_in, llm, pages) -> tuple[str, list[dict[str, Any]]]:
    """A sign-in task whose model thinks long enough for two takeovers, and the actions of a person signing in there."""
    await configure(host, llm)
    url = pages.url("agent_form.html")
    tab_id = await open_tab(stand_in, url)
    llm.add(Delay(60, then=done("never")), Delay(60, then=done("never")), done("Signed in"))
    task_id = (await host.request("task.start", task="Sign in", tabId=tab_id))["data"]["taskId"]
    return task_id, actions(url)


async def test_an_action_that_is_none_is_left_out_and_the_rest_of_its_batch_kept(host, stand_in, llm, pages, tmp_path):
    # One action in a batch that was no action (an unknown kind, a time that is no number) refused the whole batch:
    # the person's valid actions in it were lost with it. Now they are kept, each bad one is left out with a line in the
    # log naming where it was wrong (never its value: it may be what the person typed), and the reply says how many,
    # so the extension does not send it again. Twice, and for what a slow page gives late as well.
    task_id, sent = await signing_in_twice_taken_over(host, stand_in, llm, pages)
    typed = "correct horse battery"
    bad_kind = {**sent[1], "kind": "dance", "value": typed}
    bad_at = {**sent[1], "at": "soon", "value": typed}

    await until(lambda: len(llm.requests) == 1)
    assert (await host.request("task.takeover", taskId=task_id, reason="user"))["ok"]
    reply = await host.request("takeover.actions", taskId=task_id, actions=[sent[0], bad_kind, sent[1], bad_at])
    assert reply["ok"] and reply["data"] == {"dropped": 2}, reply
    reply = await host.request("takeover.actions", taskId=task_id, actions=["click", sent[2], sent[3]])
    assert reply["ok"] and reply["data"] == {"dropped": 1}, reply
    assert (await host.request("task.handback", taskId=task_id))["ok"]
    event = (await host.wait_push(lambda p: p.get("taskId") == task_id and p["type"] == "task.event"
                                  and p["event"]["type"] == "user_takeover"))["event"]
    assert [{k: v for k, v in a.items() if k != "description"} for a in event["actions"]] == sent

    await until(lambda: len(llm.requests) == 2)
    assert (await host.request("task.takeover", taskId=task_id, reason="user"))["ok"]
    handed = await host.request("task.handback", taskId=task_id, pageSilent=True)
    assert handed["ok"], handed
    late = await host.request("takeover.late", taskId=task_id, startedAt=handed["data"]["startedAt"],
                              actions=[{**sent[1], "kind": None}, sent[0]])
    assert late["ok"] and late["data"] == {"dropped": 1}, late
    amended = (await host.wait_push(lambda p: p.get("taskId") == task_id and p["type"] == "task.amended"))["event"]
    assert [a.get("target") for a in amended["actions"] if a["kind"] != "note"] == [sent[0]["target"]], amended

    log = (tmp_path / "tabpilot" / "log" / "host.log").read_text(encoding="utf-8")
    left_out = [line for line in log.splitlines() if "left out" in line]
    assert len(left_out) == 4, left_out
    assert "action 1: field 'kind'" in left_out[0] and "action 3: field 'at'" in left_out[1], left_out
    assert "action 0: not an object" in left_out[2] and "takeover.late: left out action 0: field 'kind'" in left_out[3]
    assert typed not in log and "dance" not in log and "soon" not in log


async def test_a_late_answer_for_an_earlier_takeover_never_lands_in_the_one_under_way(host, stand_in, llm, pages):
    # What a page gives late names its takeover ({taskId, startedAt}). An answer naming an earlier takeover of the same
    # task, one that did not end waiting for the page, is refused: added to the takeover under way, the earlier one's
    # actions would be told to the model as done in this one (a page's late frame across two takeovers of one task).
    task_id, sent = await signing_in_twice_taken_over(host, stand_in, llm, pages)
    first_began, second_began = 1_700_000_000_000, 1_700_000_100_000

    await until(lambda: len(llm.requests) == 1)
    assert (await host.request("task.takeover", taskId=task_id, reason="user", startedAt=first_began))["ok"]
    assert (await host.request("takeover.actions", taskId=task_id, actions=[sent[0]]))["ok"]
    assert (await host.request("task.handback", taskId=task_id))["ok"]
    await until(lambda: len(llm.requests) == 2)
    assert (await host.request("task.takeover", taskId=task_id, reason="user", startedAt=second_began))["ok"]
    late = await host.request("takeover.late", taskId=task_id, startedAt=first_began, actions=[sent[1]])
    assert late["ok"] is False and late["error"]["code"] == "bad_request", late
    assert (await host.request("takeover.actions", taskId=task_id, actions=[sent[3]]))["ok"]
    assert (await host.request("task.handback", taskId=task_id))["ok"]

    def ended(began: int) -> list[dict[str, Any]]:
        return [p["event"] for p in of(host, task_id, "task.event")
                if p["event"]["type"] == "user_takeover" and p["event"]["startedAt"] == began]

    await until(lambda: ended(second_began))
    assert [a["target"] for a in ended(second_began)[0]["actions"]] == [sent[3]["target"]]
    assert [a["target"] for a in ended(first_began)[0]["actions"]] == [sent[0]["target"]]
    assert not of(host, task_id, "task.amended")
