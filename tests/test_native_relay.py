"""The relay half of the host against real Chromium: a `Browser` on `ExtensionTabs` runs the browser layer
unchanged over `cdp.*`/`tabs.*` requests, and the host (a real subprocess speaking frames) runs whole tasks on
it — recorded, pushed, stoppable — with the scripted model over HTTP. The extension's part is played
by `relay_support.ExtensionStandIn` over the DevTools websocket (tests/e2e/ runs the real extension)."""

from __future__ import annotations

import asyncio
import json
import re
import socket
import sqlite3
from typing import Any

import pytest
import pytest_asyncio
from relay_support import ExtensionStandIn, HostUnderTest, LoopbackLink

from tabpilot.browser import actions
from tabpilot.browser.state import get_state
from tabpilot.cdp import CDPError
from tabpilot.llm.scripted import Delay, HTTPError, ScriptedLLMServer, Text, ToolCall
from tabpilot.native.debug import DebugAccess, DebugLink
from tabpilot.native.relay import extension_browser

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

API_KEY = "sk-relay-test-key-000000000000wxyz"


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def relay(stand_in):
    relay_browser = await extension_browser(LoopbackLink(stand_in))
    yield relay_browser
    await relay_browser.close()


def element_named(state: Any, name: str) -> Any:
    return next(e for e in state.elements.values() if e.name == name)


# --- the browser layer over the relay (ExtensionTabs) -----------------------------------------------
async def test_state_and_a_trusted_click_over_the_relay(relay, stand_in, pages):
    tab = await relay.new_tab(pages.url("actions_click.html"))
    assert tab.session.session_id == f"tab-{tab.target_id}"  # the tab is its own debuggee
    state = await get_state(relay, tab)
    assert "Click page" in state.text
    result = await actions.click(relay, tab, element_named(state, "Save"))
    assert "Clicked" in result
    events = await tab.evaluate("window.__events")
    assert [(e["type"], e["id"], e["trusted"]) for e in events] == [("click", "save", True)]
    sent = [r for r in stand_in.requests if r["type"] == "cdp.send"]
    methods = {r["method"] for r in sent}
    # the click's input and the page reading behind get_state (whichever CDP calls it uses) all went this way
    assert "Input.dispatchMouseEvent" in methods and methods - {"Input.dispatchMouseEvent"}, methods
    assert all(r["tabId"] == int(tab.target_id) for r in sent if "sessionId" not in r)
    await relay.close_tab(tab.target_id)


async def test_a_link_opening_a_new_tab_is_followed_through_tabs_events(relay, pages):
    tab = await relay.new_tab(pages.url("actions_click.html"))
    relay.drain_new_tab_events()
    state = await get_state(relay, tab)
    await actions.click(relay, tab, element_named(state, "Open in a new tab"))
    assert relay.active is not None and relay.active.target_id != tab.target_id
    assert "from=blank" in await relay.active.url()
    titles = {t.target_id: t.url for t in await relay.tabs()}
    assert relay.active.target_id in titles
    await relay.close_tab(relay.active.target_id)
    await relay.close_tab(tab.target_id)


async def test_cross_site_iframe_is_read_and_clicked_through_its_child_session(relay, pages):
    inner = pages.url("actions_frame_inner.html", host="localhost")
    tab = await relay.new_tab(pages.url(f"actions_frames.html?inner={inner}"))
    cross = None
    for _ in range(40):  # the frame's renderer attaches on its own schedule
        state = await get_state(relay, tab)
        buttons = [e for e in state.elements.values() if e.name == "Inner button"]
        cross = next((b for b in buttons if b.session.session_id != tab.session.session_id), None)
        if cross is not None:
            break
        await asyncio.sleep(0.1)
    assert cross is not None, state.text
    assert not cross.session.session_id.startswith("tab-")  # a real flattened child session id
    await actions.click(relay, tab, cross)
    clicked = await cross.session.send("Runtime.evaluate", {"expression": "window.__events", "returnByValue": True})
    assert [(e["type"], e["trusted"]) for e in clicked["result"]["value"]] == [("click", True)]
    await relay.close_tab(tab.target_id)


async def test_cdp_errors_come_back_as_cdp_errors(relay, pages):
    tab = await relay.new_tab(pages.url("basic.html"))
    with pytest.raises(CDPError) as info:
        await tab.session.send("Nope.doesNotExist")
    assert info.value.code == -32601 and "Nope.doesNotExist" in str(info.value)
    with pytest.raises(CDPError, match="Session with given id not found"):
        await relay.connection.session("not-a-session").send("Runtime.evaluate", {"expression": "1"})
    with pytest.raises(CDPError, match="no browser-level session"):
        await relay.connection.root.send("Target.getTargets")
    await relay.close_tab(tab.target_id)


async def test_cancel_on_the_infobar_detaches_and_closes_the_tab_object(relay, stand_in, pages):
    tab = await relay.new_tab(pages.url("basic.html"))
    seen: list[tuple[int, str]] = []
    relay.on_detached.append(lambda tab_id, reason: seen.append((tab_id, reason)))
    await stand_in.detach_by_user(int(tab.target_id))
    await asyncio.sleep(0.05)
    assert seen == [(tab.target_id, "canceled_by_user")]
    assert tab.closed and relay.detached_reason == "canceled_by_user"
    again = await relay.attach(tab.target_id)  # a new task may attach again
    assert again is not tab and await again.title() == "Basic page"
    relay.on_detached.clear()
    await relay.close_tab(tab.target_id)


# --- the host: whole tasks over the relay -----------------------------------------------------------
def prompt_of(body: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content")) for m in body["messages"] if m.get("role") == "user")


def act(label: str, tool: str, goal: str, **fields: Any) -> Any:
    """A scripted reply that reads the element's index off the prompt, as a model would."""

    def reply(body: dict[str, Any]) -> Any:
        for line in prompt_of(body).splitlines():
            if label in line and (found := re.search(r"\[(\d+)\]", line)):
                action = {tool: {"index": int(found.group(1)), **fields}}
                return ToolCall("AgentOutput", output(goal, action))
        return Text(f"no {label} in the prompt")

    return reply


def output(goal: str, action: dict[str, Any]) -> dict[str, Any]:
    return {"evaluation_previous_goal": "Success", "memory": goal, "next_goal": goal, "action": action}


DONE = ToolCall("AgentOutput", output("Report", {"done": {"text": "Signed up", "success": True}}))


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


async def open_tab(stand_in: ExtensionStandIn, url: str) -> int:
    target = await stand_in.cdp("Target.createTarget", {"url": url})
    tab_id = stand_in.tab_id(target["targetId"])
    for _ in range(100):  # until the fixture page has loaded
        targets = (await stand_in.cdp("Target.getTargets"))["targetInfos"]
        if any(t["targetId"] == target["targetId"] and t["url"] == url and t["title"] for t in targets):
            break
        await asyncio.sleep(0.05)
    return tab_id


async def configure(host: HostUnderTest, llm: ScriptedLLMServer) -> None:
    # not about approvals: the form's "Sign up" (an e-mail field) runs without asking (test_guards_approval_*)
    reply = await host.request("settings.set", baseURL=llm.base_url, model="scripted", apiKey=API_KEY, maxSteps=8,
                               askBefore="never")
    assert reply["ok"], reply


def database_rows(host_home: Any, task_id: str) -> tuple[str, list[dict[str, Any]]]:
    with sqlite3.connect(f"file:{host_home / 'data' / 'tasks.sqlite3'}?mode=ro", uri=True) as db:
        status = db.execute("SELECT status FROM tasks WHERE id = ?", (task_id,)).fetchone()[0]
        events = [json.loads(r[0]) for r in db.execute("SELECT body FROM events WHERE task_id = ? ORDER BY seq",
                                                       (task_id,))]
    return status, events


def as_recorded(event: dict[str, Any]) -> dict[str, Any]:
    """An event a reader got as the record keeps it: a note without its words for the reader."""
    return {k: v for k, v in event.items() if not (k == "text" and "note" in event)}


async def test_a_task_runs_over_the_relay_recorded_and_pushed_as_it_happens(host, stand_in, llm, pages, tmp_path):
    await configure(host, llm)
    tab_id = await open_tab(stand_in, pages.url("agent_form.html"))
    llm.add(
        act("Your name", "input_text", "Type the name", text="Ada Lovelace"),
        act("Sign up", "click_element_by_index", "Submit"),
        DONE,
    )
    reply = await host.request("task.start", task="Sign up as Ada Lovelace", tabId=tab_id, source="popup")
    assert reply["ok"], reply
    task_id = reply["data"]["taskId"]
    result = await host.wait_push(lambda p: p["type"] == "task.result")
    assert result["taskId"] == task_id and result["result"]["success"] is True
    assert result["result"]["data"] == "Signed up"

    ours = [p for p in host.pushes if p.get("taskId") == task_id]
    kinds = [p["type"] if p["type"] != "task.status" else f"status:{p['status']}" for p in ours]
    assert kinds[0] == "status:running" and kinds[-2:] == ["status:completed", "task.result"]
    steps = [p["event"] for p in ours if p["type"] == "task.event" and p["event"]["type"] == "step"]
    assert [s["action"]["name"] for s in steps] == ["input_text", "click_element_by_index", "done"]
    activities = {p["activity"]["type"] for p in ours if p["type"] == "task.activity"}
    assert {"thinking", "executing", "executed"} <= activities

    # The record holds every event pushed, in order, and no key. A push also words a keyed note for its reader
    # (`text`, in the reader's language); the record keeps the key, not the words.
    status, events = database_rows(tmp_path / "tabpilot", task_id)
    assert status == "completed"
    pushed = [p["event"] for p in ours if p["type"] == "task.event"]
    assert [e.get("text") for e in pushed if e.get("note") == "note.navigated"] == [
        "The page went to " + events[2]["params"]["url"]], pushed
    assert events == [as_recorded(e) for e in pushed]
    assert API_KEY not in json.dumps(events) and API_KEY not in json.dumps(host.pushes)
    # The page's own script saw trusted typing and a trusted click, then the form went through.
    attached = [r for r in stand_in.requests if r["type"] == "cdp.attach" and r["tabId"] == tab_id]
    assert attached
    target = stand_in._targets[tab_id]
    session = (await stand_in.cdp("Target.attachToTarget", {"targetId": target, "flatten": True}))["sessionId"]
    page_log = await stand_in.cdp(
        "Runtime.evaluate", {"expression": "sessionStorage.getItem('agentLog')", "returnByValue": True}, session
    )
    log = json.loads(page_log["result"]["value"])
    assert {"event": "click", "field": "submit", "trusted": True} in log
    assert any(e["event"] == "input" and e["value"] == "Ada Lovelace" and e["trusted"] for e in log)
    # The model never saw the key either, and a reopened popup gets the finished task.
    assert all(API_KEY not in json.dumps(body) for body in llm.requests)
    snapshot = (await host.request("task.get"))["data"]["task"]
    assert snapshot["taskId"] == task_id and snapshot["status"] == "completed"
    assert [as_recorded(e) for e in snapshot["history"]] == events
    assert API_KEY not in (tmp_path / "tabpilot" / "log" / "host.log").read_text()
    # The debugger was let go of when the task ended.
    assert any(r["type"] == "cdp.detach" and r["tabId"] == tab_id for r in stand_in.requests)
    await stand_in.cdp("Target.closeTarget", {"targetId": target})


async def thinking_after_a_step(host: HostUnderTest, task_id: str) -> None:
    """Wait until the task has done one step and is waiting for the model again."""

    def ready(_push: dict[str, Any]) -> bool:
        ours = [p for p in host.pushes if p.get("taskId") == task_id]
        steps = [i for i, p in enumerate(ours) if p["type"] == "task.event" and p["event"]["type"] == "step"]
        return bool(steps) and any(
            p["type"] == "task.activity" and p["activity"]["type"] == "thinking" for p in ours[steps[0] :]
        )

    await host.wait_push(ready)


async def test_stop_busy_and_a_running_snapshot(host, stand_in, llm, pages, tmp_path):
    await configure(host, llm)
    tab_id = await open_tab(stand_in, pages.url("agent_form.html"))
    llm.add(act("Your name", "input_text", "Type", text="Grace"), Delay(30))
    task_id = (await host.request("task.start", task="Type Grace, then think", tabId=tab_id))["data"]["taskId"]
    await thinking_after_a_step(host, task_id)
    busy = await host.request("task.start", task="another", tabId=tab_id)
    assert busy["ok"] is False and busy["error"]["code"] == "busy" and task_id in busy["error"]["message"]
    snapshot = (await host.request("task.get"))["data"]["task"]
    assert snapshot["taskId"] == task_id and snapshot["status"] == "running"
    assert "step" in [e["type"] for e in snapshot["history"]]

    assert (await host.request("task.stop", timeout=10))["ok"] is True
    status = await host.wait_push(lambda p: p.get("taskId") == task_id and p.get("status") in ("stopped", "error"),
                                  timeout=10)
    assert status["status"] == "stopped"
    status, events = database_rows(tmp_path / "tabpilot", task_id)
    assert status == "stopped" and "step" in [e["type"] for e in events]
    await stand_in.cdp("Target.closeTarget", {"targetId": stand_in._targets[tab_id]})


async def test_cancel_on_the_infobar_stops_the_task(host, stand_in, llm, pages, tmp_path):
    await configure(host, llm)
    tab_id = await open_tab(stand_in, pages.url("agent_form.html"))
    llm.add(Delay(30))
    task_id = (await host.request("task.start", task="Think for a long time", tabId=tab_id))["data"]["taskId"]
    await host.wait_push(lambda p: p.get("taskId") == task_id and p["type"] == "task.activity")
    await stand_in.detach_by_user(tab_id)
    result = await host.wait_push(lambda p: p.get("taskId") == task_id and p["type"] == "task.result", timeout=10)
    assert result["result"]["success"] is False and "Cancel" in result["result"]["data"]
    assert database_rows(tmp_path / "tabpilot", task_id)[0] == "stopped"
    await stand_in.cdp("Target.closeTarget", {"targetId": stand_in._targets[tab_id]})


@pytest.mark.parametrize("source", ["popup", "panel"])
async def test_stdin_eof_mid_task_suspends_it_recorded_and_exits_within_a_second(host, stand_in, llm, pages, tmp_path,
                                                                                 source):
    """Stdin closes when the service worker restarts: a popup's or a side panel's task is left for the next host to
    go on with (`running`, its run state suspended), with every event it pushed recorded."""
    await configure(host, llm)
    tab_id = await open_tab(stand_in, pages.url("agent_form.html"))
    llm.add(act("Your name", "input_text", "Type", text="Linus"), Delay(30))
    started = await host.request("task.start", task="Type, then think", tabId=tab_id, source=source)
    task_id = started["data"]["taskId"]
    await thinking_after_a_step(host, task_id)
    pushed = [p["event"] for p in host.pushes if p.get("taskId") == task_id and p["type"] == "task.event"]
    assert await host.close_stdin() < 1.0
    status, events = database_rows(tmp_path / "tabpilot", task_id)
    assert status == "running" and events == pushed and "step" in [e["type"] for e in events]
    with sqlite3.connect(f"file:{tmp_path / 'tabpilot' / 'data' / 'tasks.sqlite3'}?mode=ro", uri=True) as db:
        assert db.execute("SELECT suspended FROM run_states WHERE task_id = ?", (task_id,)).fetchone() == (1,)
    await stand_in.cdp("Target.closeTarget", {"targetId": stand_in._targets[tab_id]})


async def allow_page_origin(host, pages) -> str:
    """Let the fixture pages' origin start tasks (as `tabpilot sites allow` would); returns it."""
    from urllib.parse import urlsplit

    parts = urlsplit(pages.url("agent_form.html"))
    origin = f"{parts.scheme}://{parts.netloc}"
    assert (await host.request("sites.allow", origin=origin))["ok"]
    return origin


async def test_a_page_config_overrides_settings_and_its_key_goes_nowhere(host, stand_in, llm, pages, tmp_path):
    assert (await host.request("settings.set", baseURL="http://127.0.0.1:9/v1", model="unused"))["ok"]
    tab_id = await open_tab(stand_in, pages.url("agent_form.html"))
    page_key = "sk-page-provided-key-0000000000lmno"
    llm.add(ToolCall("AgentOutput", output("Report", {"done": {"text": f"echo {page_key}", "success": True}})))
    config = {"baseURL": llm.base_url, "model": "scripted", "apiKey": page_key, "includeInitialTab": True}
    origin = await allow_page_origin(host, pages)
    reply = await host.request(
        "task.start", task="Say done", tabId=tab_id, config=config, source="page", origin=origin
    )
    assert reply["ok"], reply
    task_id = reply["data"]["taskId"]
    result = await host.wait_push(lambda p: p.get("taskId") == task_id and p["type"] == "task.result")
    assert result["result"]["success"] is True
    assert llm.headers[-1]["authorization"] == f"Bearer {page_key}"  # the page's endpoint and key were used
    assert page_key not in json.dumps(host.pushes)  # not even the model's echo of it
    exported = (await host.request("history.export", taskId=task_id))["data"]
    assert exported["status"] == "completed" and page_key not in json.dumps(exported)
    assert page_key not in (tmp_path / "tabpilot" / "config" / "config.json").read_text()
    await stand_in.cdp("Target.closeTarget", {"targetId": stand_in._targets[tab_id]})


async def test_the_users_key_never_goes_to_an_endpoint_a_task_names_without_its_own_key(
    host, stand_in, llm, pages, tmp_path
):
    await configure(host, llm)  # the user's key is configured for the user's endpoint (llm)
    other = ScriptedLLMServer([ToolCall("AgentOutput", output("Report", {"done": {"text": "ok", "success": True}}))])
    other.start()
    try:
        tab_id = await open_tab(stand_in, pages.url("agent_form.html"))
        config = {"baseURL": other.base_url, "model": "scripted"}  # e.g. a web page's choice, no key
        origin = await allow_page_origin(host, pages)
        reply = await host.request(
            "task.start", task="Say done", tabId=tab_id, config=config, source="page", origin=origin
        )
        assert reply["ok"], reply
        task_id = reply["data"]["taskId"]
        await host.wait_push(lambda p: p.get("taskId") == task_id and p["type"] == "task.result")
        assert other.headers, "the task's own endpoint was asked"
        assert all(API_KEY not in json.dumps(h) for h in other.headers)
        assert not llm.requests  # and the user's endpoint was not used for it
    finally:
        other.close()
    await stand_in.cdp("Target.closeTarget", {"targetId": stand_in._targets[tab_id]})


async def test_the_persons_key_refused_under_a_pages_model_is_the_persons_to_fix(host, stand_in, llm, pages):
    """A page allowed the person's model names only its model (or the person's own base URL): the key sent is the
    person's, from their Settings. Refused, it was said to be the page's to fix ("check the apiKey in its execute()
    config", params.chosen page: the popup told the person the site's owner had to), a key the page never gave."""
    await configure(host, llm)
    origin = await allow_page_origin(host, pages)
    assert (await host.request("sites.allow", origin=origin, useMyModel=True))["ok"]
    tab_id = await open_tab(stand_in, pages.url("agent_form.html"))
    for config in ({"model": "scripted"}, {"baseURL": llm.base_url, "model": "scripted"}):
        llm.add(HTTPError(401, "Incorrect API key provided", type="invalid_request_error"))
        reply = await host.request("task.start", task="Say done", tabId=tab_id, config=config, source="page",
                                   origin=origin)
        assert reply["ok"], reply
        task_id = reply["data"]["taskId"]
        result = await host.wait_push(lambda p, task_id=task_id: p.get("taskId") == task_id
                                      and p["type"] == "task.result")
        assert llm.headers[-1]["authorization"] == f"Bearer {API_KEY}"  # the person's key was the one refused
        said = result["result"]["data"]
        assert "in the extension's Settings" in said and "execute() config" not in said, (config, said)
        errors = [p["event"] for p in host.pushes if p.get("taskId") == task_id and p["type"] == "task.event"
                  and p["event"]["type"] == "error"]
        assert errors and all("chosen" not in (e.get("params") or {}) for e in errors), errors
    await stand_in.cdp("Target.closeTarget", {"targetId": stand_in._targets[tab_id]})


async def test_a_tab_that_cannot_be_debugged_is_refused_and_nothing_is_recorded(host, llm):
    await configure(host, llm)
    reply = await host.request("task.start", task="Do it", tabId=999999)
    assert reply["ok"] is False and reply["error"]["code"] == "tab" and "999999" in reply["error"]["message"]
    said = reply["error"]["message"]
    assert said.startswith("tabpilot cannot work in this tab (tab 999999: ") and "Open a web page" in said, said
    assert (await host.request("history.list"))["data"]["tasks"] == []
    assert (await host.request("task.get"))["data"]["task"] is None
    assert (await host.request("ping"))["ok"]


async def test_the_debug_socket_gives_a_test_a_relay_browser_through_the_host(stand_in, pages, tmp_path):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    access = DebugAccess(port, "relay-test-debug-token-0123")
    running = await HostUnderTest.start(tmp_path / "tabpilot", stand_in, access.env())
    try:
        assert (await running.request("ping"))["ok"]  # the socket is open once the host answers
        link = await DebugLink.connect(access)
        debug_relay = await extension_browser(link)
        tab = await debug_relay.new_tab(pages.url("basic.html"))
        assert await tab.title() == "Basic page"  # CDP through host → stand-in → Chromium and back
        await debug_relay.close_tab(tab.target_id)
        await debug_relay.close()
        await link.close()
    finally:
        await running.stop()


async def test_without_all_tabs_the_agent_sees_only_its_own_tabs(stand_in, pages):
    users_tab = await open_tab(stand_in, pages.url("basic.html"))  # the user's other tab
    task_tab = await open_tab(stand_in, pages.url("actions_click.html"))
    scoped = await extension_browser(LoopbackLink(stand_in), all_tabs=False)
    tab = await scoped.activate(str(task_tab), focus=False)
    state = await get_state(scoped, tab)
    assert "Basic page" not in state.text and "basic.html" not in state.text
    assert [t.target_id for t in await scoped.tabs()] == [str(task_tab)]
    await actions.click(scoped, tab, element_named(state, "Open in a new tab"))  # a tab the task opens is its own
    assert scoped.active is not None and scoped.active.target_id != str(task_tab)
    assert {t.target_id for t in await scoped.tabs()} == {str(task_tab), scoped.active.target_id}
    everything = await extension_browser(LoopbackLink(stand_in))
    assert str(users_tab) in {t.target_id for t in await everything.tabs()}
    await scoped.close_tab(scoped.active.target_id)
    await scoped.close()
    await everything.close()
    for tab_id in (users_tab, task_tab):
        await stand_in.cdp("Target.closeTarget", {"targetId": stand_in._targets[tab_id]})


async def test_stop_pressed_right_after_run_ends_the_task_before_it_starts(host, stand_in, llm, pages, tmp_path):
    await configure(host, llm)
    tab_id = await open_tab(stand_in, pages.url("agent_form.html"))
    start, stop = await asyncio.gather(
        host.request("task.start", task="Never mind", tabId=tab_id), host.request("task.stop")
    )
    assert start["ok"] and stop["ok"]
    task_id = start["data"]["taskId"]
    result = await host.wait_push(lambda p: p.get("taskId") == task_id and p["type"] == "task.result", timeout=15)
    assert result["result"]["success"] is False
    assert database_rows(tmp_path / "tabpilot", task_id)[0] == "stopped"
    assert llm.requests == []  # the model was never asked
    await stand_in.cdp("Target.closeTarget", {"targetId": stand_in._targets[tab_id]})
