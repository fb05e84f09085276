"""Starts fast: Chromium spawns the host on demand and waits for its answers, so `hello` and `ping` are
answered before the heavy modules (openai, the agent, pydantic) are imported.

The host runs exactly as Chromium starts it (`python -m tabpilot host <origin>`), with a gate put in
front of the import system (a `sitecustomize` on PYTHONPATH): importing one of the heavy modules
blocks until the test opens the gate. A host that needed one of them to answer would never answer."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import time
from pathlib import Path

import pytest
from native_support import HostProcess, frame

HEAVY = ("openai", "tabpilot.agent", "pydantic")
# Not needed for the first answer: the command line's parser (argparse; shutil, which its help formatter asks
# for the terminal's width); the message catalog (only a message needs it); the local endpoint and secrets (for
# its token): it opens once the first answers are out; the loop and the host itself (asyncio and the host's
# modules: the first hello is answered before they load, native/process.py).
NOT_FOR_HELLO = ("argparse", "shutil", "tabpilot.i18n", "tabpilot.native.endpoint", "secrets",
                 "asyncio", "tabpilot.native.stdio", "tabpilot.native.host")

GATE = '''
import os, sys, time  # not importlib.abc: it imports shutil (through importlib.resources)

HEAVY = tuple(os.environ["TABPILOT_TEST_GATED"].split())
LOG, RELEASE = os.environ["TABPILOT_TEST_GATE_LOG"], os.environ["TABPILOT_TEST_GATE_RELEASE"]


def note(line):
    with open(LOG, "a") as log:
        log.write(line + "\\n")


class Waiting:  # the module's own loader, run once the gate opens
    def __init__(self, name, loader):
        self.name, self.loader = name, loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        note("waits " + self.name)
        while not os.path.exists(RELEASE):
            time.sleep(0.01)
        note("imports " + self.name)
        self.loader.exec_module(module)


class Gate:  # a meta path finder. It waits in the module's loader, not in find_spec: Python calls find_spec
    # holding its global import lock, so waiting there would stop every import of every thread, the host's
    # own (the endpoint's) included, not only those of the gated modules.
    def find_spec(self, name, path, target=None):
        if name not in HEAVY:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                spec.loader = Waiting(name, spec.loader)
                return spec
        return None


sys.meta_path.insert(0, Gate())
'''


def gate_log(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def gated_host(tmp_path: Path, modules: tuple[str, ...]) -> tuple[HostProcess, Path, Path]:
    """The host as Chromium starts it, importing any of `modules` only once `release` exists (noted in `log`)."""
    (tmp_path / "gate").mkdir()
    (tmp_path / "gate" / "sitecustomize.py").write_text(GATE)
    log, release = tmp_path / "gate.log", tmp_path / "release"
    host = HostProcess(
        tmp_path / "home",
        {
            "PYTHONPATH": str(tmp_path / "gate"),
            "TABPILOT_TEST_GATED": " ".join(modules),
            "TABPILOT_TEST_GATE_LOG": str(log),
            "TABPILOT_TEST_GATE_RELEASE": str(release),
        },
    )
    return host, log, release


def test_hello_and_ping_are_answered_before_openai_the_agent_or_pydantic_load(tmp_path):
    host, log, release = gated_host(tmp_path, HEAVY)
    try:
        hello = host.request("hello", extensionVersion="0.1.0")
        assert hello["ok"] and hello["data"]["task"] is None, hello
        assert host.request("ping")["data"] == {"pong": True}
        assert not any(line.startswith("imports") for line in gate_log(log))  # none of them got past the gate

        # Opened: the warm-up that began after the first reply loads them all (so the gate saw them).
        release.touch()
        deadline = time.monotonic() + 60
        while not {f"imports {name}" for name in HEAVY} <= set(gate_log(log)):
            if time.monotonic() > deadline:
                pytest.fail(f"the warm-up never imported all of {HEAVY}; gate log: {gate_log(log)}")
            time.sleep(0.05)
        assert host.request("settings.get")["ok"]  # and the host serves real requests
    finally:
        host.stop()


def test_the_host_answers_hello_before_the_parser_the_catalog_or_the_local_endpoint(tmp_path, monkeypatch):
    # Chromium starts it as `python -m tabpilot host chrome-extension://<id>/`: nothing there for a parser to read.
    host, log, release = gated_host(tmp_path, NOT_FOR_HELLO)
    try:
        hello = host.request("hello", extensionVersion="0.1.0", uiLanguage="zh-CN")
        assert hello["ok"] and hello["data"]["hostVersion"], hello
        assert not any(line.startswith("imports") for line in gate_log(log)), gate_log(log)
        release.touch()
        # the language the hello named is the one the host words its errors in (a message: the catalog loads)
        refused = host.request("task.stop", taskId="no-such-task")
        assert not refused["ok"] and any("\u4e00" <= char <= "\u9fff" for char in refused["error"]["message"]), refused
        # and the endpoint opened: a local client (`tabpilot mcp`) reaches this host
        monkeypatch.setenv("TABPILOT_HOME", str(tmp_path / "home"))
        assert asyncio.run(ping_the_endpoint()) == {"pong": True}
    finally:
        release.touch()
        host.stop()


def test_a_first_frame_that_is_not_a_plain_hello_waits_for_the_host_and_is_answered_by_it(tmp_path):
    # A ping first, then a hello cut in two writes: nothing is answered before the loop is let in, then both are,
    # in order; and a hello whose id cannot be echoed is refused by the host, as it always was.
    host, log, release = gated_host(tmp_path, ("asyncio",))
    try:
        host.send({"type": "ping", "id": "p1"})
        hello = frame({"type": "hello", "id": "h1", "extensionVersion": "0.1.0"})
        host.write(hello[:7])
        time.sleep(0.3)
        host.write(hello[7:])
        deadline = time.monotonic() + 20
        while "waits asyncio" not in gate_log(log):
            assert time.monotonic() < deadline, gate_log(log)
            time.sleep(0.02)
        assert host.frames.empty(), host.frames.get()  # the ping was not answered by the greeting
        release.touch()
        assert host.next_frame() == {"type": "reply", "id": "p1", "ok": True, "data": {"pong": True}}
        answered = host.next_frame()
        assert answered["id"] == "h1" and answered["ok"] and answered["data"]["tasks"] == [], answered
    finally:
        release.touch()
        host.stop()
    unusable = HostProcess(tmp_path / "home")
    try:
        unusable.send({"type": "hello", "id": "x" * 500, "extensionVersion": "0.1.0"})
        refused = unusable.next_frame()
        assert refused["ok"] is False and refused["id"] is None, refused
        assert unusable.request("ping")["data"] == {"pong": True}
    finally:
        unusable.stop()


def test_a_first_hello_without_an_id_is_answered_and_the_host_runs_on(tmp_path):
    # An id is optional on the wire (messages.Request): a first hello without one made the greeting read
    # frame["id"], and the host died of the KeyError before its first answer (no reply, exit status 1).
    host = HostProcess(tmp_path / "home")
    try:
        host.send({"type": "hello", "extensionVersion": "0.1.0"})
        answered = host.next_frame()
        assert answered["id"] is None and answered["ok"] and answered["data"]["tasks"] == [], answered
        assert host.request("ping")["data"] == {"pong": True}
    finally:
        host.stop()


def test_hello_is_answered_without_the_record_when_no_task_in_it_can_be_resumed(tmp_path, monkeypatch):
    # A record with a finished task, as every user who ran one has: the file beside it says nothing can be
    # resumed (store/resumable.py), so neither sqlite3 nor the store is imported (or opened) for the answer.
    monkeypatch.setenv("TABPILOT_HOME", str(tmp_path / "home"))
    from tabpilot.store.tasks import TaskStore

    with TaskStore() as store:
        done = store.start_task("an earlier task", source="popup")
        store.save_run_state(done, {"tabId": 1})
        store.finish_task(done, status="completed", result=None)
        running = store.start_task("a task a host left running", source="popup")
    with sqlite3.connect(store.path) as db:
        db.execute("UPDATE tasks SET owner = '999999999' WHERE id = ?", (running,))  # a host that is gone
    host, log, release = gated_host(tmp_path, ("sqlite3", "tabpilot.store.tasks"))
    try:
        hello = host.request("hello", extensionVersion="0.1.0")
        assert hello["ok"] and hello["data"]["tasks"] == [], hello
        assert not any(line.startswith("imports") for line in gate_log(log)), gate_log(log)
        release.touch()
        # the record opens on first use, marking the task its host left running interrupted before it is read
        listed = host.request("history.list")
        assert listed["ok"], listed
        statuses = {t["taskId"]: t["status"] for t in listed["data"]["tasks"]}
        assert statuses == {done: "completed", running: "interrupted"}, statuses
    finally:
        release.touch()
        host.stop()


async def ping_the_endpoint() -> object:
    from tabpilot.mcp.hostlink import HostLink

    link = HostLink("start-up test", connect_wait=10)
    try:
        return await link.request("ping")
    finally:
        await link.close()


@pytest.mark.parametrize("args", [
    ["host", "chrome-extension://x/", "--bogus"],
    ["chrome-extension://x/", "--parent-window=1", "--bogus"],
    ["host", "chrome-extension://x/", "chrome-extension://y/"],
])
def test_anything_but_the_browsers_own_command_line_is_read_by_the_parser(args, capsys):
    from tabpilot.cli import main

    with pytest.raises(SystemExit) as exited:  # argparse's error, not a host serving this test's stdin
        main(args)
    assert exited.value.code == 2
    assert "usage: tabpilot" in capsys.readouterr().err


def test_started_by_hand_in_a_terminal_it_says_what_it_is_and_ctrl_d_ends_it(tmp_path):
    # It reads framed messages from the browser: run by hand it looked hung, with nothing said.
    from store_support import in_a_terminal

    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env.update(TABPILOT_HOME=str(tmp_path), HOME=str(tmp_path), PYTHONUNBUFFERED="1", LANG="C.UTF-8")
    shown, code = in_a_terminal(["host"], env, timeout=20, answer=(b"Ctrl-D to quit", b"\x04"), answer_after=0.5)
    assert "the helper your browser starts for the tabpilot extension" in shown and code == 0, (code, shown)
    assert "tabpilot install" in shown and "tabpilot doctor" in shown


def test_a_model_test_waits_for_the_warm_up_without_holding_up_the_host(tmp_path):
    # The first Test connection comes while the warm-up is still importing openai. It waits for that import off the
    # loop: ping is answered meanwhile (importing openai on the loop waited there on the warm-up's import lock, and
    # the host answered nothing, not even stdin closing, until openai was loaded: 3-4 s at load 14).
    host, log, release = gated_host(tmp_path, ("openai",))
    try:
        assert host.request("hello", extensionVersion="0.1.0")["ok"]
        deadline = time.monotonic() + 60
        while "waits openai" not in gate_log(log):  # the warm-up thread holds openai's import lock
            if time.monotonic() > deadline:
                pytest.fail(f"the warm-up never began importing openai; gate log: {gate_log(log)}")
            time.sleep(0.05)
        host.send({"type": "settings.test", "id": "first-test", "baseURL": "http://127.0.0.1:9/v1", "model": "m"})
        assert host.request("ping")["data"] == {"pong": True}
        assert "imports openai" not in gate_log(log)
        release.touch()
        tested = host.reply_to("first-test", timeout=60)
        assert tested["ok"] and tested["data"]["ok"] is False, tested  # nothing listens on port 9: said so
    finally:
        host.stop()
