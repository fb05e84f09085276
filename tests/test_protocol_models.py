"""The frame models against the bytes: what the host builds with them is the JSON the extension has
always been sent, what the store gives becomes that JSON unchanged, and the peer types replies and
pushes by model (browser-free)."""

from __future__ import annotations

import asyncio
import json

import pytest

from tabpilot.native.codec import ChunkReassembler, FrameDecoder, FrameError, encode_frames
from tabpilot.native.messages import (
    BadRequest,
    CdpAttach,
    CdpBatch,
    CdpCommand,
    CdpDetached,
    CdpEvent,
    CdpSend,
    Chunk,
    Empty,
    ErrorInfo,
    HistoryExportData,
    HistoryGetData,
    HistoryListData,
    HostRequest,
    ReplyError,
    ReplyOk,
    SettingsData,
    TabsCreate,
    TabsEvent,
    TabsQuery,
    TabsQueryData,
    frame_models,
    frame_type,
    parse_incoming,
)
from tabpilot.native.peer import ExtensionError, LinkClosed, LinkClosedNotice, Peer
from tabpilot.native.replies import reply_error, reply_ok
from tabpilot.store.settings import MAX_STEPS_LIMIT, Settings, public_view
from tabpilot.store.tasks import TaskStore


# --- the envelope ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("built", "model"),
    [
        (reply_ok("x1", {"pong": True}), ReplyOk(id="x1", data={"pong": True})),
        (reply_ok(None, {}), ReplyOk(id=None, data={})),
        (
            reply_error("x2", "no such task", "not_found"),
            ReplyError(id="x2", error=ErrorInfo(message="no such task", code="not_found")),
        ),
        (reply_error(None, "bad JSON"), ReplyError(id=None, error=ErrorInfo(message="bad JSON"))),
        (
            reply_error(7, "Target closed", -32000),
            ReplyError(id=7, error=ErrorInfo(message="Target closed", code=-32000)),
        ),
    ],
)
def test_the_pydantic_free_reply_builders_give_exactly_the_models_frames(built, model):
    # hello and ping are answered before pydantic loads, so peer.py builds the envelope itself
    assert built == model.to_frame()
    assert parse_incoming(built) == model


def test_an_error_without_a_code_has_no_code_key_and_a_reply_without_error_still_parses():
    assert ReplyError(id="a", error=ErrorInfo(message="m")).to_frame() == {
        "type": "reply",
        "id": "a",
        "ok": False,
        "error": {"message": "m"},
    }
    reply = parse_incoming({"type": "reply", "id": "a", "ok": False})
    assert isinstance(reply, ReplyError) and reply.error.message


# --- host → extension requests: the JSON the service worker reads -------------------------------------
def test_relay_requests_are_the_frames_the_worker_reads():
    assert CdpSend(tab_id=4, method="Page.navigate", params={"url": "about:blank"}).to_frame() == {
        "type": "cdp.send",
        "tabId": 4,
        "method": "Page.navigate",
        "params": {"url": "about:blank"},
    }  # no sessionId at all for the tab itself: the worker passes {tabId} to chrome.debugger
    assert CdpSend(tab_id=4, session_id="S", method="M").to_frame()["sessionId"] == "S"
    assert CdpAttach(tab_id=4).to_frame() == {"type": "cdp.attach", "tabId": 4}
    assert TabsCreate(url="about:blank").to_frame() == {"type": "tabs.create", "url": "about:blank"}
    assert TabsCreate(active=False).to_frame() == {"type": "tabs.create", "active": False}
    assert TabsQuery().to_frame() == {"type": "tabs.query"}
    batch = CdpBatch(commands=[CdpCommand(tab_id=4, method="A"), CdpCommand(tab_id=4, session_id="S", method="B")])
    assert batch.to_frame() == {"type": "cdp.batch", "commands": [
        {"tabId": 4, "method": "A", "params": {}}, {"tabId": 4, "sessionId": "S", "method": "B", "params": {}}]}
    outcomes = batch.parse_reply({"results": [{"result": {"x": 1}}, {"error": {"message": "no", "code": -32000}}]})
    assert [(o.result, o.error and o.error.code) for o in outcomes.results] == [({"x": 1}, None), (None, -32000)]


def test_every_host_request_names_the_model_of_its_replys_data():
    kinds = {frame_type(model): model._reply_adapter().core_schema["type"] for model in frame_models(HostRequest)}
    assert kinds == {
        "cdp.attach": "model", "cdp.detach": "model", "cdp.send": "dict", "tabs.query": "model",
        "tabs.create": "model", "tabs.activate": "model", "tabs.close": "model",
        "guard.rules": "model", "guard.clear": "model", "cdp.batch": "model", "cdp.input": "model",
    }


# --- reply data from the store: unchanged on the wire -------------------------------------------------
def test_history_replies_carry_the_stores_json_unchanged(tmp_path):
    with TaskStore(tmp_path / "tasks.sqlite3") as store:
        done = store.start_task("fill the form", url="http://example.test/", model="m", source="popup")
        store.append_event(done, {"type": "observation", "content": "é \u202e"})
        store.finish_task(done, status="completed", result={"success": True, "data": "ok"})
        running = store.start_task("still going", url=None, model=None)
        listed = {"tasks": [summary.to_wire() for summary in store.list_tasks(10)]}
        records = [store.get_task(task_id) for task_id in (done, running)]
        exports = [store.export_task(task_id) for task_id in (done, running)]
    assert HistoryListData.model_validate(listed).to_frame() == listed
    for record in records:
        assert record is not None
        assert HistoryGetData.model_validate(record.to_wire()).to_frame() == record.to_wire()
    for export in exports:
        assert HistoryExportData.model_validate(export).to_frame() == export


def test_settings_replies_carry_the_public_view_unchanged():
    for settings in (Settings(), Settings(baseURL="http://127.0.0.1:9/v1", model="m", apiKey="sk-0123456789abcdef")):
        view = {**public_view(settings), "maxStepsLimit": MAX_STEPS_LIMIT}
        assert SettingsData.model_validate(view).to_frame() == view


# --- chunks ---------------------------------------------------------------------------------------------
def test_chunk_frames_are_chunk_models_and_a_malformed_one_is_named():
    message = {"type": "reply", "id": "big", "ok": True, "data": {"text": "x" * 700_000}}
    pieces = [item for frame in encode_frames(message) for item in FrameDecoder().feed(frame)]
    assert len(pieces) == 2 and all(Chunk.model_validate(piece).to_frame() == piece for piece in pieces)
    joiner = ChunkReassembler()
    assert joiner.accept(pieces[0]) is None and joiner.accept(pieces[1]) == message
    broken = ChunkReassembler().accept({"type": "chunk", "chunkId": "q", "index": "0", "count": 2, "data": ""})
    assert isinstance(broken, FrameError) and "chunk 'q'" in broken.message and "index" in broken.message


# --- the peer: typed replies, pushes by model --------------------------------------------------------------
async def test_the_peer_types_replies_and_delivers_pushes_by_model():
    sent: list[dict] = []
    peer = Peer(sent.append)
    query = peer.request_future(TabsQuery())
    attach = peer.request_future(CdpAttach(tab_id=3))
    send = peer.request_future(CdpSend(tab_id=3, method="Runtime.evaluate"))
    broken = peer.request_future(TabsQuery())
    assert [frame["type"] for frame in sent] == ["tabs.query", "cdp.attach", "cdp.send", "tabs.query"]
    ids = [frame["id"] for frame in sent]
    tab = {"tabId": 3, "url": "http://a.test/", "title": "A", "active": True}
    peer.resolve(parse_incoming(reply_ok(ids[0], {"tabs": [tab]})))
    peer.resolve(parse_incoming(reply_ok(ids[1], {})))
    peer.resolve(parse_incoming(reply_error(ids[2], "Cannot find context", -32000)))
    peer.resolve(parse_incoming(reply_ok(ids[3], {"tabs": [{"url": "no tabId"}]})))
    assert await query == TabsQueryData.model_validate({"tabs": [tab]})
    assert await attach == Empty()
    with pytest.raises(ExtensionError) as failed:
        await send
    assert (failed.value.code, failed.value.error_message) == (-32000, "Cannot find context")
    with pytest.raises(ExtensionError, match=r"unusable reply.*tabId"):
        await broken

    heard: list[object] = []
    peer.on(CdpEvent, heard.append)
    peer.on(LinkClosedNotice, heard.append)
    event = parse_incoming({"type": "cdp.event", "tabId": 3, "method": "Page.loadEventFired", "params": {}})
    peer.deliver(event)
    peer.deliver(parse_incoming({"type": "cdp.detached", "tabId": 3, "reason": "target_closed"}))  # nobody listens
    await asyncio.sleep(0)
    assert heard == [event]
    pending = peer.request_future(TabsQuery())
    peer.close("gone")
    assert heard == [event, LinkClosedNotice("gone")]
    with pytest.raises(LinkClosed):
        await pending


def test_pushes_from_the_extension_parse_into_their_models():
    detached = parse_incoming({"type": "cdp.detached", "tabId": 9, "reason": "canceled_by_user"})
    assert isinstance(detached, CdpDetached) and detached.reason == "canceled_by_user"
    removed = parse_incoming({"type": "tabs.event", "event": "removed", "tab": {"tabId": 9}})
    assert isinstance(removed, TabsEvent) and removed.tab.tab_id == 9
    assert json.loads(json.dumps(removed.to_frame()))["tab"]["tabId"] == 9


# --- strict types: a wrong type is refused, never coerced into another tab, task or count --------------
@pytest.mark.parametrize(
    ("frame", "field", "problem"),
    [
        ({"type": "task.start", "id": "s", "task": "t", "tabId": True}, "tabId", "whole number"),
        ({"type": "task.start", "id": "s", "task": "t", "tabId": "12"}, "tabId", "whole number"),
        ({"type": "task.start", "id": "s", "task": "t", "tabId": 12.5}, "tabId", "whole number"),
        ({"type": "task.start", "id": "s", "task": "t", "tabId": 3, "config": {"maxSteps": "5"}},
         "config.maxSteps", "whole number"),
        ({"type": "task.start", "id": "s", "task": "t", "tabId": 3, "config": {"includeInitialTab": "false"}},
         "config.includeInitialTab", "true or false"),
        ({"type": "task.start", "id": "s", "task": "t", "tabId": 3, "config": {"experimentalIncludeAllTabs": 1}},
         "config.experimentalIncludeAllTabs", "true or false"),
        ({"type": "task.get", "id": "g", "tabId": False}, "tabId", "whole number"),
        ({"type": "history.list", "id": "h", "limit": True}, "limit", "whole number"),
        ({"type": "history.list", "id": "h", "limit": "20"}, "limit", "whole number"),
        ({"type": "sites.allow", "id": "a", "origin": "https://a.test", "allTabs": "yes"}, "allTabs", "true or false"),
        ({"type": "settings.set", "id": "x", "maskCards": 0}, "maskCards", "true or false"),
        ({"type": "settings.set", "id": "x", "maxSteps": 7.0001}, "maxSteps", "whole number"),
        ({"type": "task.takeover", "id": "k", "taskId": "t1", "startedAt": "5"}, "startedAt", "whole number"),
        ({"type": "cdp.detached", "tabId": True, "reason": "canceled_by_user"}, "tabId", "whole number"),
        ({"type": "cdp.event", "tabId": "4", "method": "Page.loadEventFired"}, "tabId", "whole number"),
        ({"type": "tabs.event", "event": "removed", "tab": {"tabId": True}}, "tab.tabId", "whole number"),
    ],
)
def test_a_field_of_the_wrong_type_is_refused_and_named_not_coerced(frame, field, problem):
    with pytest.raises(BadRequest) as refused:
        parse_incoming(frame)
    message = str(refused.value)
    assert f"'{field}'" in message and problem in message, message
    assert refused.value.request_id == frame.get("id")


def test_what_a_page_makes_too_long_in_a_recorded_action_is_cut_not_refused():
    # A page at a 30,000-character address, a list whose script selected every long option: refused, one such
    # action lost the person's whole batch. Each text is kept up to its limit; an action with what is not text where
    # text is due is left out, the rest of its batch kept; a batch larger than the host takes is still refused whole.
    frame = {"type": "takeover.actions", "id": "k", "taskId": "t1", "actions": [
        {"kind": "select", "target": "listbox " + "L" * 5000, "value": "option, " * 10_000,
         "url": "https://a.test/?q=" + "x" * 30_000, "at": 1, "holding": ["h" * 900]},
        {"kind": "click", "target": 'button "Save"', "url": "https://a.test/", "at": 2},
    ]}
    long, save = parse_incoming(frame).actions
    assert long.url.startswith("https://a.test/?q=xxx") and len(long.url) == 10_000
    assert len(long.value or "") == 20_000 and len(long.target) == 1000 and long.holding == ["h" * 300]
    assert save.target == 'button "Save"' and save.url == "https://a.test/"
    frame["actions"][1]["at"] = "2"
    batch = parse_incoming(frame)
    assert [a.kind for a in batch.actions] == ["select"] and batch.dropped == ["action 1: field 'at' (float_type)"]
    frame["actions"] = [save.model_dump(by_alias=True)] * 1001
    with pytest.raises(BadRequest, match=r"'actions'.*1000"):
        parse_incoming(frame)


def test_whole_numbers_sent_as_json_numbers_still_parse_where_a_number_is_due():
    action = parse_incoming({"type": "takeover.actions", "id": "k", "taskId": "t1",
                             "actions": [{"kind": "click", "at": 1700000000000}]})
    assert action.actions[0].at == 1.7e12
    assert parse_incoming({"type": "task.start", "id": "s", "task": "t", "tabId": 3}).tab_id == 3


async def test_a_reply_from_the_extension_with_a_tab_id_of_the_wrong_type_is_unusable():
    sent: list[dict] = []
    peer = Peer(sent.append)
    query = peer.request_future(TabsQuery())
    peer.resolve(parse_incoming(reply_ok(sent[0]["id"], {"tabs": [{"tabId": "3", "url": "http://a.test/"}]})))
    with pytest.raises(ExtensionError, match=r"unusable reply.*tabId"):
        await query
