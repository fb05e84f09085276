"""The host over many tasks (issue 16, item 5): nothing of a task outlives it but what `task.get` shows.

The host's own task manager in this process, on a real Chromium through the extension's relay (played by
`relay_support.ExtensionStandIn`), the model the scripted server. bench/bench_memory.py measures the RSS; these
check the two causes it found, on the real classes: an ended task kept for `task.get` held its whole run (browser,
CDP connection, agent, page state, model client), and each task's garbage waited for Python's next full collection.
"""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from relay_support import ExtensionStandIn, LoopbackLink
from test_native_relay import API_KEY, DONE, open_tab

from tabpilot.llm.scripted import ScriptedLLMServer
from tabpilot.native import memory
from tabpilot.native.messages import TaskStart
from tabpilot.native.relay import ExtensionTabs
from tabpilot.native.tasks import TaskManager
from tabpilot.store.tasks import TaskStore
from tabpilot.taskrun.run import TaskRun

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]


@pytest.fixture
def llm() -> Iterator[ScriptedLLMServer]:
    server = ScriptedLLMServer([]).start()
    yield server
    server.close()


@pytest.fixture
def manager(stand_in: ExtensionStandIn, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[TaskManager]:
    monkeypatch.setenv("TABPILOT_HOME", str(tmp_path / "tabpilot"))
    store = TaskStore(tmp_path / "tasks.sqlite3")
    pushes: list[dict[str, Any]] = []
    yield TaskManager(LoopbackLink(stand_in), lambda: store, pushes.append)
    store.close()


@pytest.fixture(autouse=True)
def unfrozen() -> Iterator[None]:
    """What the host froze (native/memory.py: all this process's objects, here) given back to the collector after."""
    try:
        yield
    finally:
        gc.unfreeze()
        memory._frozen = False


@pytest.fixture
def collector_off() -> Iterator[None]:
    """Python's own collections off: garbage left behind stays until someone collects it."""
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


async def one_task(manager: TaskManager, tab_id: int, llm: ScriptedLLMServer, number: int) -> list[weakref.ref[Any]]:
    """Run a one-step task to its end; weak references to its run, agent, browser, CDP connection and the relay under
    it (its transport listens to the link's pushes until it is closed)."""
    llm.add(DONE)
    config = {"baseURL": llm.base_url, "model": "scripted", "apiKey": API_KEY}
    task_id = await manager.start(TaskStart.model_validate(
        {"type": "task.start", "id": f"r{number}", "task": f"Task {number}: sign up", "tabId": tab_id,
         "config": config}))
    entry = manager._tasks[task_id]
    run = entry.run
    assert isinstance(run, TaskRun) and run.agent is not None and entry.runner is not None
    backend = run.browser.backend
    assert isinstance(backend, ExtensionTabs)
    objects = [weakref.ref(o) for o in (run, run.agent, run.browser, run.browser.connection, backend,
                                        backend.transport)]
    del backend
    del run
    await asyncio.wait([entry.runner])
    await asyncio.sleep(0)  # the runner's done callbacks
    return objects


async def test_an_ended_task_keeps_what_task_get_shows_and_lets_its_run_go(manager, stand_in, llm, pages):
    tab_id = await open_tab(stand_in, pages.url("form.html"))
    llm.add(DONE)
    config = {"baseURL": llm.base_url, "model": "scripted", "apiKey": API_KEY}
    task_id = await manager.start(TaskStart.model_validate(
        {"type": "task.start", "id": "r1", "task": "Sign up", "tabId": tab_id, "config": config}))
    run = manager._tasks[task_id].run
    assert isinstance(run, TaskRun)
    gone = weakref.ref(run)
    browser = weakref.ref(run.browser)
    del run
    runner = manager._tasks[task_id].runner
    assert runner is not None
    await asyncio.wait([runner])
    gc.collect()
    assert gone() is None and browser() is None, "the ended task's run (and its browser) are still kept"
    shown = manager.get(task_id)
    assert shown is not None and shown["status"] == "completed"
    assert shown["result"]["success"] is True and shown["result"]["data"] == "Signed up"
    assert [event["type"] for event in shown["history"]] == ["step"]
    assert manager.get(tab_id=tab_id) == shown  # the popup reopened on that tab
    assert not manager.is_running(task_id)


async def test_a_tasks_objects_go_when_it_ends_not_at_pythons_next_full_collection(
        manager, stand_in, llm, pages, collector_off):
    tab_id = await open_tab(stand_in, pages.url("form.html"))
    left = []
    for number in range(1, 6):
        objects = await one_task(manager, tab_id, llm, number)
        left.append([type(o()).__name__ for o in objects if o() is not None])
        assert manager.get(tab_id=tab_id)["status"] == "completed"
    assert left == [[]] * 5, f"still alive after each task ended: {left}"
