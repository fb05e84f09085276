"""Issue 14 at the host's edges, on real processes: lone surrogates in frames, settings and command-line
arguments; owner-only logs; a debug-socket client that sends garbage; token counts SQLite cannot hold."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import websockets
from native_support import HostProcess, frame
from store_support import step
from test_native_debug_socket import free_port

from tabpilot.native.debug import DebugAccess
from tabpilot.native.host import MAX_REQUESTS_IN_FLIGHT
from tabpilot.store.settings import load_settings
from tabpilot.store.tasks import TaskStore

LOGGING_TRACEBACK = ("Traceback", "--- Logging error ---")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def test_lone_surrogates_in_hello_and_settings_set_are_replaced_and_nothing_breaks(home: Path) -> None:
    host = HostProcess(home)
    try:
        # the escapes as Chromium's JSON.stringify writes a page's (or a field's) half emoji
        host.write(frame(b'{"type":"hello","id":"h1","extensionVersion":"0.1\\ud800"}'))
        assert host.reply_to("h1")["ok"]
        host.write(frame(b'{"type":"settings.set","id":"s1","model":"gpt \\udc00 mini"}'))
        reply = host.reply_to("s1")
        assert reply["ok"], reply
        assert reply["data"]["model"] == "gpt \ufffd mini"
        assert host.request("ping")["ok"]  # still serving
    finally:
        host.stop()
    assert load_settings(home / "config" / "config.json").model == "gpt \ufffd mini"
    log = (home / "log" / "host.log").read_text(encoding="utf-8")
    assert "hello from extension 0.1\ufffd" in log
    stderr = host.proc.stderr.read().decode() if host.proc.stderr and not host.proc.stderr.closed else ""
    assert not any(marker in log + stderr for marker in LOGGING_TRACEBACK)


def test_a_frame_whose_tab_id_is_true_is_refused_naming_it_and_no_tab_is_touched(home: Path) -> None:
    host = HostProcess(home)
    try:
        assert host.request("hello", extensionVersion="0.1.0")["ok"]
        for wrong in (True, "1"):  # lax parsing read both as tab 1: a task would have attached someone else's tab
            reply = host.request("task.start", task="Sum it up", tabId=wrong)
            assert reply["error"] == {"code": "bad_request",
                                      "message": "invalid task.start: field 'tabId': must be a whole number, e.g. 40"}
        reply = host.request("task.get", tabId=True)
        assert reply["error"]["code"] == "bad_request" and "'tabId'" in reply["error"]["message"]
        assert host.request("ping")["ok"]  # still serving
        assert not [f for f in host.unclaimed if f.get("type") == "cdp.attach"]
    finally:
        host.stop()


def test_a_settings_file_with_a_lone_surrogate_loads_with_u_fffd(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text('{"model": "m\\ud800", "baseURL": "http://127.0.0.1:9/v1"}', encoding="utf-8")
    settings = load_settings(path)
    assert settings.model == "m\ufffd"
    json.dumps(settings.to_file(), ensure_ascii=False).encode("utf-8")


def test_a_command_line_argument_that_is_not_utf8_becomes_u_fffd(home: Path) -> None:
    env = {**os.environ, "TABPILOT_HOME": str(home), "PYTHONIOENCODING": "utf-8"}
    proc = subprocess.run([sys.executable, "-m", "tabpilot", "config", "set", "model", b"caf\xff-model"],
                          capture_output=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr.decode()
    assert b"Traceback" not in proc.stderr
    assert load_settings(home / "config" / "config.json").model == "caf\ufffd-model"


@pytest.mark.skipif(os.name != "posix", reason="file modes are a POSIX thing")
def test_the_host_log_is_owner_only(home: Path) -> None:
    (home / "log").mkdir(parents=True)
    (home / "log" / "host.log").write_text("written by an older version\n")
    (home / "log" / "host.log").chmod(0o644)
    host = HostProcess(home)
    try:
        assert host.request("ping")["ok"]
    finally:
        host.stop()
    assert stat.S_IMODE((home / "log").stat().st_mode) == 0o700
    assert stat.S_IMODE((home / "log" / "host.log").stat().st_mode) == 0o600


def test_a_debug_socket_client_sending_garbage_gets_errors_and_keeps_its_connection(home: Path) -> None:
    access = DebugAccess.new(free_port())
    host = HostProcess(home, access.env())

    async def talk() -> list[dict]:
        async with websockets.connect(f"ws://127.0.0.1:{access.port}", proxy=None, open_timeout=10,
                                      additional_headers={"Authorization": f"Bearer {access.token}"}) as socket:
            answers = []
            for text in ("{not json", "[1, 2]", json.dumps({"id": 7, "type": "settings.get"})):
                await socket.send(text)
                answers.append(json.loads(await asyncio.wait_for(socket.recv(), 10)))
            return answers

    try:
        assert host.request("ping")["ok"]
        not_json, not_object, refused = asyncio.run(talk())
        assert host.request("ping")["ok"]
    finally:
        host.stop()
    assert not_json["ok"] is False and "not a JSON request" in not_json["error"]["message"]
    assert not_object["ok"] is False and "JSON object" in not_object["error"]["message"]
    assert refused["id"] == 7 and "only cdp" in refused["error"]["message"]  # the same connection still answers
    assert "Traceback" not in (home / "log" / "host.log").read_text()


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def _settled_rss_mb(pid: int) -> float:
    last = -1.0
    for _ in range(60):
        time.sleep(1)
        if (now := round(_rss_mb(pid))) == last:
            break
        last = now
    return _rss_mb(pid)


def _cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads the host's memory in /proc (Linux)")
def test_a_peer_that_floods_requests_and_reads_no_answers_cannot_grow_the_host(home: Path) -> None:
    # 200,000 pings whose answers nobody takes: the host used to read them all and queue every answer (+40 MB for
    # 300,000, growing with the flood); it now stops reading while 8 MiB of answers wait, and goes on as they go
    pings = 200_000
    host = HostProcess(home)
    try:
        assert host.request("ping")["ok"]  # which starts the warm-up: the models, record, agent and openai load
        before = _settled_rss_mb(host.proc.pid)
        host.reading.clear()
        sent = [0]
        ids = [f"{n:0128d}" for n in range(pings)]  # the longest id a reply echoes: the biggest answers

        def flood() -> None:
            for start in range(0, pings, 1000):
                host.write(b"".join(frame({"type": "ping", "id": i}) for i in ids[start:start + 1000]))
                sent[0] = start + 1000

        sender = threading.Thread(target=flood, daemon=True)
        sender.start()
        # the host is still when it has taken no more and used no CPU for a second (or took everything)
        still = (-1, -1)
        while sender.is_alive():
            time.sleep(1)
            now = (sent[0], _cpu_ticks(host.proc.pid))
            if now == still:
                break
            still = now
        assert sender.is_alive() and sent[0] < pings, "the host read every request while nobody took its answers"
        grown = _rss_mb(host.proc.pid) - before
        assert grown < 32, f"the host grew {grown:.0f} MB while its answers were not taken"
        host.reading.set()  # the browser takes the answers again: every one comes, in order, and it goes on
        for n in range(pings):
            assert host.next_frame()["id"] == ids[n]
        sender.join(30)
        assert host.request("ping")["ok"]
    finally:
        host.stop()


def test_requests_beyond_those_being_answered_are_refused_busy_at_once(home: Path) -> None:
    # settings.test against a model that never answers holds each request (and its connection) open; 200 at once
    # used to open 200 connections, and a flood of them ran the host out of file descriptors
    silent = socket.create_server(("127.0.0.1", 0), backlog=512)
    host = HostProcess(home)
    try:
        base = f"http://127.0.0.1:{silent.getsockname()[1]}/v1"
        assert host.request("settings.set", baseURL=base, model="m", apiKey="sk-test-000000000000")["ok"]
        host.write(b"".join(frame({"type": "settings.test", "id": f"s{n}"}) for n in range(200)))
        busy = [host.next_frame() for _ in range(200 - MAX_REQUESTS_IN_FLIGHT)]
        assert {reply["id"] for reply in busy} == {f"s{n}" for n in range(MAX_REQUESTS_IN_FLIGHT, 200)}
        assert {reply["error"]["code"] for reply in busy} == {"busy"}
        assert busy[0]["error"]["message"] == (f"{MAX_REQUESTS_IN_FLIGHT} requests are still being answered; "
                                               "send more as their replies come")
        assert host.request("ping")["ok"]  # answered at once, ahead of the ones in flight
    finally:
        host.stop()
        silent.close()


def test_a_step_with_absurd_token_counts_is_stored(tmp_path: Path) -> None:
    with TaskStore(tmp_path / "tasks.sqlite3") as store:
        task_id = store.start_task("count")
        store.append_event(task_id, step(0, prompt=10**30, completion=10**30))
        store.append_event(task_id, step(1, prompt=5, completion=1))
        record = store.get_task(task_id)
    assert record is not None
    assert [event["stepIndex"] for event in record.events] == [0, 1]
    assert record.events[0]["usage"]["promptTokens"] == 10**30  # the event as it came
    assert record.summary.prompt_tokens == 10**12 + 5  # the totals clamped


def test_hostile_values_in_every_settings_and_config_field_get_a_clear_error_and_change_nothing(home: Path) -> None:
    """The real host, fed what a broken or hostile sender could put in the popup's and a page's fields: a
    10 MB string, NUL and other controls, a bidi override, a newline in a key, thousands of entries. Each is
    refused with the field's name and the rule; nothing is saved; the host serves on; a sane value still works."""
    host = HostProcess(home)
    huge = "m" * (10 * 1024 * 1024)
    refused = {
        "model": [huge, "gpt\x00mini", "gpt\u202eini"],
        "baseURL": ["http://127.0.0.1:9/v1\r\nX-Injected: 1", "http://" + "a" * 3000 + ".example", "http://[::1/v1",
                    "http://127.0.0.1:99999/v1", "javascript:alert(1)"],
        "apiKey": ["sk-abc\ndef", "k" * 5000],
        "maskPatterns": [["x" * 2000], [f"word{n}" for n in range(1500)]],
        "allowedDomains": [[f"d{n}.example" for n in range(1500)]],
    }
    try:
        assert host.request("settings.set", model="gpt-good", baseURL="http://127.0.0.1:9/v1")["ok"]
        answers = [(field, host.request("settings.set", timeout=60, **{field: value}))
                   for field, values in refused.items() for value in values]
        page = host.request("task.start", task="t", tabId=1, source="page", origin="https://a.example",
                            config={"baseURL": "http://127.0.0.1:9/v1", "model": "m", "systemInstruction": huge})
        page_url = host.request("task.start", task="t", tabId=1, source="page", origin="https://a.example",
                                config={"baseURL": "javascript:alert(1)", "model": "m"})
        probe = host.request("settings.test", baseURL="http://[::1/v1", model="m")
        site = host.request("sites.allow", origin="https://a\x00b.example")
        assert host.request("ping")["ok"]
    finally:
        host.stop()
    for field, answer in answers:
        assert answer["ok"] is False and answer["error"]["code"] == "bad_request", (field, str(answer)[:300])
        message = answer["error"]["message"]
        assert len(message) < 500 and any(rule in message for rule in ("one line", "at most", "http:// or https://")
                                          ), (field, message)
    assert page["ok"] is False and page["error"]["code"] == "bad_request"
    assert "systemInstruction" in page["error"]["message"] and len(page["error"]["message"]) < 500
    assert site["ok"] is False and "not a web origin" in site["error"]["message"]
    for bad_url in (page_url, probe):  # refused as the field it is, not failing later as an internal error
        assert bad_url["ok"] is False and bad_url["error"]["code"] == "bad_request", bad_url
        assert "baseURL" in bad_url["error"]["message"] and "http:// or https://" in bad_url["error"]["message"]
    settings = load_settings(home / "config" / "config.json")
    assert (settings.model, settings.base_url, settings.api_key) == ("gpt-good", "http://127.0.0.1:9/v1", None)
    assert settings.mask_patterns == [] and settings.allowed_domains == []


def test_a_url_password_a_token_or_an_api_key_in_a_logged_text_is_redacted_in_the_log(home: Path) -> None:
    """Found by an attack run: the host logs outside text (a hello's version, a blocked navigation's URL, which may
    be an OAuth redirect holding a token) as it came; the log kept URL passwords, tokens and API keys."""
    host = HostProcess(home)
    told = "1.0 https://ann:pw-in-log-77@mail.example/cb?access_token=tok-in-log-123 sk-proj-0123456789abcdefghijkl"
    try:
        assert host.request("hello", extensionVersion=told)["ok"]
    finally:
        host.stop()
    log = (home / "log" / "host.log").read_text(encoding="utf-8")
    assert "https://ann:[redacted]@mail.example/cb?access_token=[redacted]" in log, log
    assert not any(leak in log for leak in ("pw-in-log-77", "tok-in-log-123", "sk-proj-0123456789abcdefghijkl"))


def test_text_from_outside_can_neither_forge_a_log_line_nor_act_on_a_terminal_reading_the_log(home: Path) -> None:
    host = HostProcess(home)
    forged = "1.0\n2026-01-01 00:00:00,000 1 INFO tabpilot.native.host: task started by the user\x1b]0;owned\x07"
    try:
        assert host.request("hello", extensionVersion=forged)["ok"]
        assert host.request("ping")["ok"]
    finally:
        host.stop()
    log = (home / "log" / "host.log").read_text(encoding="utf-8")
    assert "\x1b" not in log and "\x07" not in log
    assert not any(line.startswith("2026-01-01") for line in log.splitlines())
    assert "hello from extension 1.0\\n2026-01-01" in log and "\\x1b]0;owned\\x07" in log


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="a folder of another user's needs root")
def test_a_folder_another_user_made_in_tabpilot_home_is_refused_and_nothing_is_written_there(tmp_path: Path) -> None:
    """TABPILOT_HOME in a shared, world-writable place, where another user made `config`, `data` and `log` first:
    settings, the record (and the native host's launcher the browser runs) went into folders that user owns, who
    could read the record or swap the settings' base URL, to get the API key. Refused, in words, by every command and
    by the host; nothing is written there. A folder of one's own is made owner-only (found by the attack run)."""
    from store_support import tabpilot

    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    for kind in ("config", "data", "log"):
        (shared / kind).mkdir()
        (shared / kind).chmod(0o777)
        os.chown(shared / kind, 65534, -1)  # nobody's
    for command in (["config", "set", "model", "gpt-4o-mini"], ["history"], ["run", "Say hi"]):
        refused = tabpilot(shared, *command)
        assert refused.returncode == 1 and "Traceback" not in refused.stderr, refused.stderr
        assert refused.stderr.endswith(f"{shared / 'config'} belongs to another user; set TABPILOT_HOME to a folder "
                                       "of yours\n"), refused.stderr
    host = HostProcess(shared)
    assert host.proc.wait(timeout=20) == 1
    said = host.proc.stderr.read().decode() if host.proc.stderr else ""
    assert said == f"tabpilot host: {shared / 'log'} belongs to another user; set TABPILOT_HOME to a folder of yours\n"
    host.stop()
    assert not [path for kind in ("config", "data", "log") for path in (shared / kind).iterdir()]

    own = tmp_path / "own"
    assert tabpilot(own, "config", "set", "model", "gpt-4o-mini").returncode == 0
    assert tabpilot(own, "history").returncode == 0
    assert {kind: stat.S_IMODE((own / kind).stat().st_mode) for kind in ("config", "data")} == {
        "config": 0o700, "data": 0o700}
