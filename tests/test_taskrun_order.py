"""A task run's record stays in order at its edges (found by a review of the writer and the open takeover): the
person's Hand back and Stop racing the run's end record one takeover, before the end; a resumed task whose first
note the store refuses ends saying so instead of waiting for ever. The record is the real SQLite store; the browser
is a stand-in with one tab whose URL read can be made slow (a busy page), which is all these runs touch."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from tabpilot.store.settings import Settings
from tabpilot.store.tasks import TaskStore
from tabpilot.taskrun.plan import plan_task
from tabpilot.taskrun.run import TaskRun

SETTINGS = Settings.model_validate({"baseURL": "http://127.0.0.1:9/v1", "model": "scripted"})  # never asked


class _InputLog:
    refused = None


class _Tab:
    closed = False

    def __init__(self) -> None:
        self.input_log = _InputLog()
        self.slow = False

    async def address(self) -> str:
        if self.slow:
            await asyncio.sleep(1.0)
        return "https://shop.test/cart"


class _Browser:
    def __init__(self) -> None:
        self.tab = _Tab()
        self.slow = False  # finding the tab (a busy relay) takes a second

    async def current_tab(self) -> _Tab:
        if self.slow:
            await asyncio.sleep(1.0)
        return self.tab

    async def close(self) -> None:
        pass

    async def guard_navigation(self, guard: Any) -> None:
        pass


async def test_hand_back_then_stop_while_the_page_is_busy_records_one_takeover_before_the_end(tmp_path: Path):
    # Hand back reads the tab's URL (slow on a busy page); Stop ended the run meanwhile, whose end settled the open
    # takeover as cut short, and Hand back's own event was then written after the end: two takeovers.
    store = TaskStore(tmp_path / "tasks.sqlite3")
    browser = _Browser()
    run = TaskRun(plan_task("Buy socks", source="popup", settings=SETTINGS), store, browser, recipe={"tabId": 1})
    task_id = await run.begin("https://shop.test/")
    assert await run.take_over("user")
    run.add_takeover_actions([{"kind": "click", "target": 'button "Add"', "url": "https://shop.test/cart", "at": 1}])
    executing = asyncio.ensure_future(run.execute())
    await asyncio.sleep(0.2)
    browser.tab.slow = True
    handing = asyncio.ensure_future(run.hand_back("added the socks"))
    await asyncio.sleep(0.1)
    await run.stop()
    finished = await executing
    await handing
    record = store.get_task(task_id)
    assert record is not None and record.summary.status == "stopped"
    takeovers = [e for e in record.events if e["type"] == "user_takeover"]
    assert len(takeovers) == 1, record.events
    assert takeovers[0]["note"] == "added the socks" and [a["kind"] for a in takeovers[0]["actions"]] == ["click"]
    assert [e["type"] for e in finished.result["history"]] == [e["type"] for e in record.events]
    store.close()


async def test_hand_back_while_the_takeover_is_still_finding_the_tab_leaves_the_agent_its_hands(tmp_path: Path):
    # Taking the controls shows "You have the controls" at once, then finds the tab to refuse the agent's input
    # there. A Hand back meanwhile (a quick person, a busy browser) ended the takeover; then the takeover found the
    # tab and refused its input: the agent, running again, had every action refused for the rest of the task.
    store = TaskStore(tmp_path / "tasks.sqlite3")
    browser = _Browser()
    run = TaskRun(plan_task("Buy socks", source="popup", settings=SETTINGS), store, browser, recipe={"tabId": 1})
    task_id = await run.begin("https://shop.test/")
    browser.slow = True
    taking = asyncio.ensure_future(run.take_over("user"))
    await asyncio.sleep(0.1)
    assert run.control is not None  # the person sees that they have the controls
    browser.slow = False
    assert await run.hand_back("nothing to do") is not None
    assert await taking
    assert browser.tab.input_log.refused is None, "the agent's input stays refused after Hand back"
    assert run.control is None
    await run.stop()
    await run.execute()
    record = store.get_task(task_id)
    assert record is not None and [e["type"] for e in record.events].count("user_takeover") == 1, record.events
    store.close()


class _RefusingStore(TaskStore):
    def append_event(self, task_id: str, event: dict[str, Any]) -> None:
        raise OSError("disk full")


async def test_a_resumed_task_whose_first_note_is_refused_ends_saying_so(tmp_path: Path):
    store = _RefusingStore(tmp_path / "tasks.sqlite3")
    task_id = TaskStore.start_task(store, "Find the best deal")
    run = TaskRun(plan_task("Find the best deal", source="cli", settings=SETTINGS), store, _Browser(),
                  recipe={"tabId": 1})
    cut_short = {"unfinishedAction": {"tool": "click_element_by_index", "input": {"index": 3}}}
    await run.continue_from(task_id, [], cut_short)
    await asyncio.sleep(0.2)  # the refusal is known before the run goes on
    finished = await asyncio.wait_for(run.execute(), 10)  # it waited for ever
    assert finished.status == "error" and "could not be saved" in finished.result["data"], finished
    store.close()


async def test_the_takeover_kept_as_it_grows_is_redacted_as_its_event_would_be(tmp_path: Path, monkeypatch):
    # Its actions are redacted once each as they come (redoing them all at every batch held the event loop ~340 ms
    # at 2,000 actions: bench/bench_takeover_record.py); what is kept must still be what a whole redaction gives.
    import json

    from tabpilot.privacy.secrets import set_secret

    monkeypatch.setenv("TABPILOT_HOME", str(tmp_path))
    set_secret("SHOP_KEY", "shop.test", "sk-shop-1234567890", path=tmp_path / "config" / "secrets.json")
    store = TaskStore(tmp_path / "tasks.sqlite3")
    run = TaskRun(plan_task("Buy socks", source="popup", settings=SETTINGS), store, _Browser(), recipe={"tabId": 1})
    task_id = await run.begin("https://shop.test/")
    assert await run.take_over("user")
    executing = asyncio.ensure_future(run.execute())

    def typed(value: str, field: str = "Key", again: bool = False) -> dict[str, Any]:
        return {"kind": "input", "target": f'textbox "{field}"', "value": value, "url": "https://shop.test/", "at": 1,
                **({"again": True} if again else {})}

    run.add_takeover_actions([typed("sk-shop-12")])
    run.add_takeover_actions([typed("sk-shop-1234567890", again=True), typed("ada@example.org", "Email")])
    run.add_takeover_actions([{"kind": "click", "target": 'button "Save sk-shop-1234567890"', "url": "x", "at": 2}])
    # reported last, done first (a scroll is reported a second after its last wheel): it goes before the others
    run.add_takeover_actions([{"kind": "scroll", "target": 'region "sk-shop-1234567890"', "value": "down 100px",
                               "url": "x", "at": 0}])
    await run._writer.drained()
    kept = store.open_takeover(task_id)
    assert kept is not None
    assert run._takeover is not None
    assert kept == run._shown(run._takeover.unfinished().to_wire())  # the same as redacting it whole
    text = json.dumps(kept)
    assert "sk-shop-1234567890" not in text, text
    assert text.count("<secret>SHOP_KEY</secret>") == 3, text  # the typed value (its latest), the button, the region
    assert [a["kind"] for a in kept["actions"]][:2] == ["scroll", "input"], kept
    # Hand back records the takeover's event with the actions already redacted while it was kept (the last one
    # typed on since is redone): again what redacting it whole gives.
    run.add_takeover_actions([typed("ada@example.org sk-shop-1234567890", "Email", again=True)])
    whole = run._shown(run._takeover.event(url_after="https://shop.test/cart", note="paid sk-shop-1234567890")
                       .to_wire())
    assert await run.hand_back("paid sk-shop-1234567890") is not None
    await run.stop()
    await executing
    record = store.get_task(task_id)
    assert record is not None
    [handed_back] = [e for e in record.events if e["type"] == "user_takeover"]
    assert {**handed_back, "endedAt": None} == {**whole, "endedAt": None}
    assert "sk-shop-1234567890" not in json.dumps(record.events)
    store.close()


async def test_a_runs_keys_are_kept_out_of_the_record_while_it_runs_and_let_go_when_it_ends(tmp_path: Path):
    # Every run added its keys (a page's own apiKey each task) to one set the store kept for the host's life: after
    # 10,000 page tasks each event's write scanned 10,000 keys (344 ms an append, measured) and held every key.
    from tabpilot.taskrun.plan import TaskOverrides

    store = TaskStore(tmp_path / "tasks.sqlite3", secrets=["sk-USER-KEY-000000"])
    for number in range(30):
        key = f"page-own-key-{number:04d}-abcdef"
        overrides = TaskOverrides(base_url="http://127.0.0.1:9/v1", model="m", api_key=key, use_my_model=False)
        run = TaskRun(plan_task(f"Task {number}", overrides, source="page", settings=SETTINGS), store, _Browser(),
                      recipe={"tabId": 1})
        task_id = await run.begin("https://shop.test/")
        store.append_event(task_id, {"type": "observation", "content": f"the page echoed {key}"})  # another writer
        assert await run.take_over("user")
        executing = asyncio.ensure_future(run.execute())
        await asyncio.sleep(0)
        await run.stop()
        await executing
        record = store.get_task(task_id)
        assert record is not None and key not in str(record.events) and "[redacted]" in str(record.events)
        for _ in range(100):  # let go once the run's last write is done (on the writer's thread)
            if store.held_secrets() == 1:
                break
            await asyncio.sleep(0.01)
        assert store.held_secrets() == 1, number  # the store's own; this run's went with it
    store.close()


async def test_a_batch_of_the_persons_actions_writes_as_much_at_a_thousand_actions_as_at_ten(tmp_path: Path):
    # What SQLite appends to its write-ahead log for one batch (automatic checkpoints off, so the log only grows):
    # kept whole at every batch, a takeover of 1,000 actions wrote ~290 KiB a batch against ~22 KiB at 10
    # (bench/bench_takeover_record.py), and a long takeover wrote quadratically much.
    store = TaskStore(tmp_path / "tasks.sqlite3")
    store._db.execute("PRAGMA wal_autocheckpoint=0")

    def wal() -> int:  # its size
        return Path(f"{store.path}-wal").stat().st_size

    def field(i: int, typed: str = "") -> dict[str, Any]:
        return {"kind": "input", "target": f'textbox "Field {i}"', "value": f"value {i}{typed}", "url": "x", "at": i,
                **({"again": True} if typed else {})}

    written: dict[int, int] = {}
    for length in (10, 1000):
        run = TaskRun(plan_task(f"{length} actions", source="popup", settings=SETTINGS), store, _Browser(),
                      recipe={"tabId": 1})
        task_id = await run.begin("https://shop.test/")
        assert await run.take_over("user")
        executing = asyncio.ensure_future(run.execute())
        for start in range(0, length, 5):
            run.add_takeover_actions([field(i) for i in range(start, start + 5)])
        await run._writer.drained()
        before = wal()
        run.add_takeover_actions([field(length - 1, " typed on"), *(field(length + i) for i in range(5))])
        await run._writer.drained()
        written[length] = wal() - before
        kept = store.open_takeover(task_id)
        assert kept is not None and len(kept["actions"]) == length + 5 + 1, kept  # and the note: cut short
        assert kept["actions"][length - 1]["value"] == f"value {length - 1} typed on"
        await run.stop()
        await executing
    page = 4096 + 24  # a page and its frame header in the log
    assert written[1000] <= written[10] + page, written
