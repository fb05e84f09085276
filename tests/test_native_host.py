"""The native messaging host as a real subprocess, fed frames on stdin as Chromium does."""

from __future__ import annotations

import json
import os
import random
import stat
import subprocess
import sys

import pytest
from native_support import HEADER, HostProcess, frame, split_frames

from tabpilot.native.codec import MAX_FRAME_TO_BROWSER, ChunkReassembler
from tabpilot.store.tasks import TaskStore

SECRET_KEY = "sk-test-SECRETKEY-1234567890-abcd"


@pytest.fixture
def home(tmp_path):
    return tmp_path / "home"


@pytest.fixture
def host(home):
    process = HostProcess(home)
    yield process
    process.stop()


def test_ping_and_hello(host):
    assert host.request("ping") == {"type": "reply", "id": "t1", "ok": True, "data": {"pong": True}}
    hello = host.request("hello", extensionVersion="0.1.0")
    assert hello["ok"] and hello["data"]["hostVersion"] == "0.1.0" and hello["data"]["task"] is None


BAD_FRAMES = [
    (b"{not json", None, "not valid JSON"),
    (b"\xff\xfe\xfd", None, "UTF-8"),
    (b"[1, 2, 3]", None, "JSON object"),
    (b'"just a string"', None, "JSON object"),
    (json.dumps({"id": "a1"}).encode(), "a1", "no 'type'"),
    (json.dumps({"type": "launch.missiles", "id": "a2"}).encode(), "a2", "unknown message type 'launch.missiles'"),
    (json.dumps({"type": "task.start", "id": "a3", "task": "x", "tabId": "abc"}).encode(), "a3", "tabId"),
    (json.dumps({"type": "task.start", "id": "a4", "tabId": 1}).encode(), "a4", "field 'task'"),
    (json.dumps({"type": "history.list", "id": "a5", "limit": 0}).encode(), "a5", "limit"),
    (json.dumps({"type": "history.get", "id": "a6"}).encode(), "a6", "taskId"),
    (json.dumps({"type": "settings.set", "id": "a7", "maxSteps": "many"}).encode(), "a7", "maxSteps"),
    # an id that is no id is not echoed back as one (`true` was answered as id 1, and ok)
    (json.dumps({"type": "ping", "id": True}).encode(), None, "field 'id"),
    (json.dumps({"type": "task.list", "id": {"echo": "me"}}).encode(), None, "field 'id"),
    (json.dumps({"type": "settings.get", "id": 1.5}).encode(), None, "field 'id"),
    # chunking is host → extension only (PROTOCOL.md): the extension never sends a chunk
    (json.dumps({"type": "chunk", "chunkId": "z", "index": 0, "count": 2, "data": ""}).encode(), None,
     "unknown message type 'chunk'"),
]


def test_every_kind_of_bad_frame_gets_a_bad_request_reply_and_the_host_keeps_serving(host):
    for payload, request_id, words in BAD_FRAMES:
        host.write(frame(payload))
        reply = host.next_frame()
        assert reply["type"] == "reply" and reply["ok"] is False, payload
        assert reply["id"] == request_id, payload
        assert reply["error"]["code"] == "bad_request"
        assert words in reply["error"]["message"], (payload, reply)


def test_a_header_announcing_more_than_chromium_sends_ends_the_connection_and_the_log_says_why(host, home):
    # The host read and threw away the 100 MiB such a header announced, then took whatever came after as frames.
    assert host.request("ping")["ok"]
    host.write(HEADER.pack(100 * 1024 * 1024) + frame({"type": "ping", "id": "after"}))
    assert host.proc.wait(timeout=20) == 0  # it ended by itself: its stdin is still open
    assert not [f for f in host.unclaimed + list(host.frames.queue) if f and f.get("id") == "after"]
    log = (home / "log" / "host.log").read_text(encoding="utf-8")
    assert ("a frame header announced 104857600 bytes, over the 67108864 byte limit: the stream is not "
            "native-messaging frames; the host ends the connection") in log
    assert "no more frames; shutting down" in log and "host exited" in log


def test_a_huge_id_or_type_name_is_not_echoed_back_and_the_host_keeps_serving(host):
    # A 1 MB request id came back whole in the bad_request reply (and a 1 MB type name in its message).
    huge = "x" * 1_000_000
    for message, request_id, words in [
        ({"type": "ping", "id": huge}, None, "field 'id': must be text of at most 128 characters"),
        ({"type": "task.list", "id": huge}, None, "field 'id': must be text of at most 128 characters"),
        ({"type": "hello", "id": 10**300, "extensionVersion": "0.1.0"}, None, "field 'id'"),
        ({"type": huge, "id": "n1"}, "n1", "unknown message type 'xxxx"),
        ({"type": [huge], "id": "n2"}, "n2", "unknown message type a JSON list"),
    ]:
        host.write(frame(json.dumps(message).encode()))
        reply = host.next_frame()
        assert reply.get("type") == "reply" and reply.get("ok") is False, str(reply)[:300]  # not a chunked echo
        assert reply["error"]["code"] == "bad_request"
        assert reply["id"] == request_id and words in reply["error"]["message"], str(reply)[:300]
        assert len(json.dumps(reply)) < 1000, len(json.dumps(reply))
    longest = "y" * 128  # the longest id there is, and the largest number, still answered as themselves
    for request_id in (longest, 2**53 - 1):
        host.send({"type": "ping", "id": request_id})
        assert host.next_frame() == {"type": "reply", "id": request_id, "ok": True, "data": {"pong": True}}
    assert host.request("settings.get")["ok"] is True


def test_host_still_answers_after_garbage(host):
    for payload, _id, _words in BAD_FRAMES:
        host.write(frame(payload))
    assert host.request("ping")["data"] == {"pong": True}
    assert host.request("settings.get")["ok"] is True


def test_settings_round_trip_never_echoes_the_key(host, home):
    reply = host.request("settings.set", apiKey=SECRET_KEY, model="gpt-test", baseURL="http://127.0.0.1:9/v1")
    assert reply["ok"], reply
    data = reply["data"]
    assert data["apiKeySet"] is True and data["model"] == "gpt-test" and data["baseURL"] == "http://127.0.0.1:9/v1"
    assert data["apiKeyHint"].endswith("abcd") and SECRET_KEY not in json.dumps(data)
    again = host.request("settings.get")["data"]
    assert again == data
    bad = host.request("settings.set", baseURL="ftp://nope")
    assert bad["ok"] is False and "base-url" in bad["error"]["message"]
    cleared = host.request("settings.set", apiKey="")["data"]
    assert cleared["apiKeySet"] is False and cleared["model"] == "gpt-test"
    host.request("settings.set", apiKey=SECRET_KEY)
    host.close_stdin()

    config = home / "config" / "config.json"
    # Only what was chosen is written: a default written there (the language) would be taken for a choice, and
    # `tabpilot` commands would stop following the terminal's LANG.
    assert set(json.loads(config.read_text())) == {"apiKey", "model", "baseURL"}
    assert json.loads(config.read_text())["apiKey"] == SECRET_KEY  # kept by the host...
    if os.name == "posix":
        assert stat.S_IMODE(config.stat().st_mode) == 0o600  # ...readable by its owner only
    assert SECRET_KEY.encode() not in bytes(host.raw)  # never sent back
    for log_file in (home / "log").iterdir():
        assert SECRET_KEY not in log_file.read_text()


def test_max_steps_over_the_shared_limit_is_refused_and_nothing_is_saved(host, home):
    from tabpilot.store.settings import MAX_STEPS_LIMIT

    assert host.request("settings.get")["data"]["maxStepsLimit"] == MAX_STEPS_LIMIT
    assert host.request("settings.set", maxSteps=MAX_STEPS_LIMIT, model="m")["ok"]
    for too_many in (MAX_STEPS_LIMIT + 1, 600, 1000):
        reply = host.request("settings.set", maxSteps=too_many, model="other")
        assert reply["ok"] is False and reply["error"]["code"] == "bad_request", reply
        assert "maxSteps" in reply["error"]["message"] and str(MAX_STEPS_LIMIT) in reply["error"]["message"]
    kept = host.request("settings.get")["data"]
    assert (kept["maxSteps"], kept["model"]) == (MAX_STEPS_LIMIT, "m")  # nothing of a refused change saved


def test_stdout_carries_only_whole_valid_frames(host):
    host.request("hello", extensionVersion="x")
    for payload, _id, _words in BAD_FRAMES:
        host.write(frame(payload))
    host.request("history.list")
    host.request("settings.set", model="m")
    host.close_stdin()
    payloads = split_frames(bytes(host.raw))
    assert len(payloads) == 3 + len(BAD_FRAMES)
    for payload in payloads:
        assert isinstance(json.loads(payload.decode("utf-8")), dict)


def test_exits_within_one_second_of_stdin_eof(host):
    host.request("ping")
    assert host.close_stdin() < 1.0
    assert host.proc.returncode == 0


def test_a_reply_over_1_mib_arrives_chunked_and_reassembles(host, home):
    big_text = "page text " * 250_000  # 2.5 MB
    with TaskStore(home / "data" / "tasks.sqlite3") as store:
        task_id = store.start_task("read a long page", url="http://example.test/", model="m")
        store.append_event(task_id, {"type": "observation", "content": big_text})
        store.finish_task(task_id, status="completed", result={"success": True, "data": "done"})
    host.send({"type": "history.get", "id": "big", "taskId": task_id})
    joiner = ChunkReassembler()
    chunks = 0
    while True:
        message = host.next_frame()
        assert message["type"] == "chunk"
        chunks += 1
        whole = joiner.accept(message)
        if whole is not None:
            break
    assert chunks >= 3
    assert whole["id"] == "big" and whole["ok"] is True
    assert whole["data"]["events"][0]["content"] == big_text
    host.close_stdin()
    for payload in split_frames(bytes(host.raw)):
        assert len(payload) <= MAX_FRAME_TO_BROWSER


def test_history_list_get_export_delete(host, home):
    with TaskStore(home / "data" / "tasks.sqlite3") as store:
        task_id = store.start_task("fill the form", url="http://example.test/form", model="m", source="popup")
        store.append_event(task_id, {"type": "observation", "content": "hello"})
        store.finish_task(task_id, status="completed", result={"success": True, "data": "ok"})
    listed = host.request("history.list", limit=10)["data"]["tasks"]
    assert [t["taskId"] for t in listed] == [task_id] and listed[0]["status"] == "completed"
    got = host.request("history.get", taskId=task_id[:8])["data"]
    assert got["task"]["task"] == "fill the form" and got["events"] == [{"type": "observation", "content": "hello"}]
    exported = host.request("history.export", taskId=task_id)["data"]
    assert exported["success"] is True and exported["history"][0]["content"] == "hello"
    assert host.request("history.delete", taskId=task_id)["ok"] is True
    missing = host.request("history.get", taskId=task_id)
    assert missing["ok"] is False and missing["error"]["code"] == "not_found" and task_id in missing["error"]["message"]
    assert host.request("history.list")["data"]["tasks"] == []


def test_a_task_left_running_by_a_dead_host_is_interrupted_at_start(home):
    database = home / "data" / "tasks.sqlite3"
    script = (
        "import sys; from tabpilot.store.tasks import TaskStore; s = TaskStore(sys.argv[1]); "
        "t = s.start_task('long job', url=None, model='m'); "
        "s.append_event(t, {'type': 'observation', 'content': 'x'}); "
        "print(t)"
    )
    task_id = subprocess.run(
        [sys.executable, "-c", script, str(database)], check=True, capture_output=True, text=True
    ).stdout.strip()
    process = HostProcess(home)
    try:
        tasks = process.request("history.list")["data"]["tasks"]
        assert [(t["taskId"], t["status"]) for t in tasks] == [(task_id, "interrupted")]
        assert process.request("history.get", taskId=task_id)["data"]["events"] == [
            {"type": "observation", "content": "x"}
        ]
    finally:
        process.stop()


def test_task_start_without_a_model_says_how_to_configure_one(host):
    assert host.request("sites.allow", origin="https://app.example", useMyModel=True)["ok"]
    reply = host.request("task.start", task="do something", tabId=1, source="page", origin="https://app.example")
    assert reply["ok"] is False and reply["error"]["code"] == "not_configured"
    assert "model" in reply["error"]["message"].lower() and "Settings" in reply["error"]["message"]
    # from the popup: only what to do in the popup, none of the CLI's commands or variables
    reply = host.request("task.start", task="do something", tabId=1, source="popup")
    assert reply["error"] == {
        "message": "No model set: open Settings and enter the base URL, model and API key.",
        "code": "not_configured",
    }
    host.request("settings.set", model="gpt-test")  # a model but no key: the same advice
    reply = host.request("task.start", task="do something", tabId=1, source="popup")
    assert reply["error"]["code"] == "not_configured" and "tabpilot" not in reply["error"]["message"]
    assert host.request("task.get")["data"] == {"task": None}
    assert host.request("task.stop")["ok"] is True  # nothing running: a no-op, not an error


def test_an_extension_in_chinese_gets_the_hosts_advice_in_chinese(host, home):
    # the popup's language as the worker sends it: its zh_CN strings' own `locale`
    assert host.request("hello", extensionVersion="0.1.0", uiLanguage="zh-CN")["ok"]
    reply = host.request("task.start", task="做点什么", tabId=1, source="popup")
    assert reply["error"] == {"message": "尚未设置模型：请打开“设置”，填写 Base URL、模型和 API 密钥。",
                              "code": "not_configured"}
    assert host.request("sites.allow", origin="https://app.example", useMyModel=True)["ok"]
    reply = host.request("task.start", task="做点什么", tabId=1, source="page", origin="https://app.example")
    assert reply["error"]["code"] == "not_configured"
    # said to the page's author: what to give in execute()'s config, or ask the user to set in Settings
    assert reply["error"]["message"].startswith("PAGE_AGENT_EXT.execute(task, config)：没有可用于此任务的模型。")
    assert "baseURL 和 model" in reply["error"]["message"] and "“设置”" in reply["error"]["message"]
    # an English extension on the next connection is answered in English again
    host.stop()
    english = HostProcess(home)
    try:
        assert english.request("hello", extensionVersion="0.1.0", uiLanguage="en")["ok"]
        reply = english.request("task.start", task="do something", tabId=1, source="popup")
        assert reply["error"]["message"] == "No model set: open Settings and enter the base URL, model and API key."
    finally:
        english.stop()


def test_past_retries_and_errors_are_read_in_the_popups_language_and_recorded_in_english(home):
    """A retry's or error's cause is worded by the catalog for the reader (its code); the record keeps the English."""
    script = (
        "import sys; from tabpilot.store.tasks import TaskStore; s = TaskStore(sys.argv[1]); "
        "t = s.start_task('flaky', url=None, model='m'); "
        "s.append_event(t, {'type': 'retry', 'message': 'no reply within 30 s (timeout)', 'attempt': 1, "
        "'maxAttempts': 3, 'code': 'timeout', 'params': {'timeout': 30}}); "
        "s.append_event(t, {'type': 'retry', 'message': 'an older record', 'attempt': 2, 'maxAttempts': 3}); "
        "from tabpilot.taskrun.run import error_event; "
        "s.append_event(t, error_event('browser_failed', detail='Target closed')); "
        "s.append_event(t, {'type': 'error', 'message': 'an older error'}); "
        "print(t)"
    )
    task_id = subprocess.run([sys.executable, "-c", script, str(home / "data" / "tasks.sqlite3")], check=True,
                             capture_output=True, text=True).stdout.strip()
    for language, worded, failed in (("zh-CN", "30 秒内没有回复（超时）", "浏览器出错：Target closed"),
                                     ("en", "no reply within 30 s (timeout)", "The browser failed: Target closed")):
        process = HostProcess(home)
        try:
            assert process.request("hello", extensionVersion="0.1.0", uiLanguage=language)["ok"]
            timed_out, older, browser_failed, older_error = process.request("history.get", taskId=task_id)["data"][
                "events"]
            assert timed_out["text"] == worded and timed_out["message"] == "no reply within 30 s (timeout)"
            assert "text" not in older and "text" not in older_error  # no code: the popup shows its message
            assert browser_failed["text"] == failed
            assert browser_failed["message"] == "The browser failed: Target closed"
            exported = process.request("history.export", taskId=task_id)["data"]
            assert "text" not in exported["history"][0]
        finally:
            process.stop()


def random_value(rng: random.Random, depth: int = 0) -> object:
    choices = [
        None, True, False, 0, -1, 2**63, 10**30, 3.5, "", "x" * rng.randint(0, 50), "chrome-extension://", "\u202e",
        "\ud7ff€𝄞", [], {},
    ]
    if depth < 3 and rng.random() < 0.3:
        if rng.random() < 0.5:
            return [random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
        return {rng.choice(FIELD_NAMES): random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))}
    return rng.choice(choices)


FIELD_NAMES = ["id", "type", "task", "tabId", "config", "limit", "taskId", "apiKey", "baseURL", "model", "maxSteps",
               "language", "extensionVersion", "ok", "data", "error", "method", "params", "sessionId", "chunkId",
               "index", "count", "reason", "event", "tab", "source"]
KNOWN = ["hello", "ping", "task.start", "task.stop", "task.get", "settings.get", "settings.set", "history.list",
         "history.get", "history.export", "history.delete", "reply", "cdp.event", "cdp.detached", "tabs.event",
         "chunk", "nope", ""]


def fuzz_frames(seed: int, count: int) -> list[bytes]:
    rng = random.Random(seed)
    frames = []
    for n in range(count):
        roll = rng.random()
        if roll < 0.15:
            payload = rng.randbytes(rng.randint(0, 200))
        elif roll < 0.3:
            payload = json.dumps(random_value(rng)).encode()
        else:
            message = {name: random_value(rng) for name in rng.sample(FIELD_NAMES, rng.randint(0, 6))}
            message["type"] = rng.choice(KNOWN)
            if rng.random() < 0.7:
                message["id"] = f"f{n}"
            payload = json.dumps(message).encode()
        frames.append(frame(payload))
    return frames


def test_fuzzed_frames_never_crash_the_host(host):
    for seed in range(3):
        host.write(b"".join(fuzz_frames(seed, 150)))
        assert host.request("ping", timeout=30)["data"] == {"pong": True}, f"seed {seed}"
    host.close_stdin()
    assert host.proc.returncode == 0
    for payload in split_frames(bytes(host.raw)):
        message = json.loads(payload)
        assert message["type"] in ("reply", "chunk"), message
        if message["type"] == "reply" and message["ok"] is False:
            assert message["error"]["message"]
            assert message["error"].get("code") != "internal", message  # an unexpected crash in a handler
    assert b"Traceback" not in host.proc.stderr.read()


def test_once_the_host_owns_stdout_stray_prints_go_to_stderr():
    script = (
        "import os, sys\n"
        "from tabpilot.native.process import take_stdout\n"
        "frames = take_stdout()\n"
        "print('a stray print')\n"
        "sys.stdout.write('library chatter\\n'); sys.stdout.flush()\n"
        "os.write(1, b'C-level write\\n')\n"
        "os.write(frames, b'FRAMES ONLY')\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=30)
    assert result.returncode == 0, result.stderr
    assert result.stdout == b"FRAMES ONLY"
    assert b"a stray print" in result.stderr and b"library chatter" in result.stderr
    assert b"C-level write" in result.stderr


@pytest.mark.skipif(os.name != "posix", reason="closing a descriptor through the shell")
def test_the_host_works_without_any_stderr(tmp_path):
    command = f"exec {sys.executable} -m tabpilot host chrome-extension://x/ 2>&-"
    result = subprocess.run(
        ["/bin/sh", "-c", command],
        input=frame({"type": "ping", "id": "p"}),
        capture_output=True,
        env={**os.environ, "TABPILOT_HOME": str(tmp_path)},
        timeout=30,
    )
    assert result.returncode == 0
    assert [json.loads(p) for p in split_frames(result.stdout)] == [
        {"type": "reply", "id": "p", "ok": True, "data": {"pong": True}}
    ]


def test_the_popups_errors_from_the_host_are_in_its_language(host, home):
    """Errors the popup can meet (a secret deleted elsewhere, a question answered already, a task that has
    ended) come in the popup's language; an English extension still reads them in English."""
    assert host.request("hello", extensionVersion="0.1.0", uiLanguage="zh-CN")["ok"]
    gone = host.request("secrets.delete", name="NOPE")["error"]
    assert gone == {"message": "没有名为 NOPE 的机密", "code": "not_found"}
    closed = host.request("approval.answer", approvalId="a-1", decision="once")["error"]
    assert closed["message"] == "这个问题已经关闭（已经回答过，或已超时）", closed
    ended = host.request("task.answer", taskId="t-ended", answer="是")["error"]
    assert ended["message"] == "此主机上没有任务 't-ended'（它可能早已结束）", ended
    assert host.request("hello", extensionVersion="0.1.0", uiLanguage="en")["ok"]
    assert host.request("secrets.delete", name="NOPE")["error"]["message"] == "there is no secret named NOPE"


def test_worded_errors_of_settings_sites_and_history_reach_the_popup_in_its_language(host, home):
    """The errors that carry the catalog's words (a bad setting value, a refused origin, an unknown task id,
    a damaged settings file) are sent in the popup's language, the English to an English popup."""
    assert host.request("hello", extensionVersion="0.1.0", uiLanguage="zh-CN")["ok"]
    # the Settings page's fields as typed: a base URL without its scheme, a domain that is none
    bad = host.request("settings.set", baseURL="api.openai.com/v1", allowedDomains=["b!"])["error"]
    assert bad["code"] == "bad_request"
    assert bad["message"] == ("base-url：必须是 http:// 或 https:// 开头的网址，例如 https://api.openai.com/v1；"
                              "allowed-domains：'b!' 不是域名：请给出带点的主机名（例如 example.com）、"
                              "localhost 或 IP 地址"), bad
    refused = host.request("sites.allow", origin="app.example.com")["error"]
    assert "不是网站来源" in refused["message"], refused
    unknown = host.request("history.get", taskId="zzzz")["error"]
    assert unknown == {"message": "没有 ID 为 'zzzz' 的任务", "code": "not_found"}
    short = host.request("secrets.set", name="PIN", domain="github.com", value="123")["error"]
    assert short == {"message": "机密的值至少需要 4 个字符", "code": "bad_request"}
    settings_file = home / "config" / "config.json"
    settings_file.parent.mkdir(parents=True, exist_ok=True)
    settings_file.write_text('{"maxSteps": "many"}', encoding="utf-8")
    damaged = host.request("settings.get")["error"]
    assert damaged["message"] == f"设置文件 {settings_file} 中有错误的值：max-steps：必须是整数，例如 40", damaged

    assert host.request("hello", extensionVersion="0.1.0", uiLanguage="en")["ok"]
    assert host.request("settings.get")["error"]["message"] == (
        f"the settings file {settings_file} has a bad value: max-steps: must be a whole number, e.g. 40")
    settings_file.unlink()
    bad = host.request("settings.set", maskPatterns=["/[/"])["error"]
    assert bad["message"].startswith("mask-patterns: /[/ is not a valid regular expression: "), bad
    assert host.request("history.get", taskId="zzzz")["error"]["message"] == "no task with id 'zzzz'"


def test_a_value_the_sender_chose_comes_back_cut_short_and_readable_in_replies_and_the_log(host, home):
    """The attack run sent a secret's name of 100,000 characters and a 10 KB domain: each came back whole in the error
    the popup shows, and an extension's 100 KB version went whole into the log. Now a message repeats at most 100
    characters of such a value (textsafety.quoted), its controls as codes, and still says what to do, in either
    language; a log line is cut at 2,000 characters."""
    name, domain = "N" * 100_000, "\u202e\x1b[2J" + "d" * 10_000
    assert host.request("hello", extensionVersion="V" * 100_000)["ok"]
    bad_name = host.request("secrets.set", name=name, domain="github.com", value="12345")["error"]["message"]
    assert bad_name == (f"'{'N' * 99}…' is not a usable secret name: use a letter, then letters, digits, _ . or - "
                        "(up to 64), e.g. GITHUB_PASSWORD"), bad_name
    bad_domain = host.request("settings.set", allowedDomains=[domain])["error"]["message"]
    assert bad_domain == (f"allowed-domains: '\\u202e\\x1b[2J{'d' * 94}…' is not a domain: give a host name with a "
                          "dot (example.com), localhost or an IP address"), bad_domain
    unknown = host.request("secrets.delete", name=name)["error"]["message"]
    assert unknown == f"there is no secret named {'N' * 99}…", unknown
    no_task = host.request("history.get", taskId="z" * 10_000)["error"]["message"]
    assert no_task == f"no task with id '{'z' * 99}…'", no_task
    assert host.request("hello", extensionVersion="0.1.0", uiLanguage="zh-CN")["ok"]
    bad_name = host.request("secrets.set", name=name, domain="github.com", value="12345")["error"]["message"]
    assert bad_name == (f"'{'N' * 99}…' 不能用作机密名称：请以字母开头，后面是字母、数字、_ . 或 -（最多 64 个），"
                        "例如 GITHUB_PASSWORD"), bad_name
    assert host.request("ping")["ok"]
    host.stop()
    lines = (home / "log" / "host.log").read_text(encoding="utf-8").splitlines()
    [hello] = [line for line in lines if "hello from extension VVV" in line]
    assert hello.endswith("V…") and max(map(len, lines)) < 2100, max(map(len, lines))


def test_a_task_without_text_is_refused_in_the_popups_language(host):
    host.request("settings.set", model="m", baseURL="http://127.0.0.1:9/v1", apiKey="k")
    assert host.request("hello", extensionVersion="0.1.0", uiLanguage="zh-CN")["ok"]
    assert host.request("task.start", task="  ", tabId=1, source="popup")["error"] == {
        "message": "任务需要一段文字说明要做什么", "code": "bad_request"}
    assert host.request("hello", extensionVersion="0.1.0", uiLanguage="en")["ok"]
    assert host.request("task.start", task="  ", tabId=1, source="popup")["error"]["message"] == (
        "a task needs some text saying what to do")
    assert host.request("history.list")["data"]["tasks"] == []


def test_a_message_field_out_of_bounds_is_refused_in_the_popups_language(host):
    """A page's config with maxSteps over the shared limit (or a field of the wrong kind) is refused in the
    extension's language, not in pydantic's English; the host keeps serving."""
    assert host.request("hello", extensionVersion="0.1.0", uiLanguage="zh-CN")["ok"]
    over = host.request("task.start", task="t", tabId=1, source="page", config={"maxSteps": 9999})["error"]
    assert over == {"message": "无效的 task.start：字段 'config.maxSteps'：不能大于 500", "code": "bad_request"}, over
    odd = host.request("task.start", task="t", tabId="one")["error"]["message"]
    assert odd == "无效的 task.start：字段 'tabId'：必须是整数，例如 40", odd
    bad = host.request("settings.set", maskPatterns=["/a**/"])["error"]["message"]
    assert bad == "mask-patterns：/a**/ 不是有效的正则表达式：连续出现了两个重复符号（第 4 个字符处）", bad
    assert host.request("hello", extensionVersion="0.1.0", uiLanguage="en")["ok"]
    over = host.request("task.start", task="t", tabId=1, source="page", config={"maxSteps": 9999})["error"]
    assert over["message"] == "invalid task.start: field 'config.maxSteps': must be at most 500", over
    bad = host.request("settings.set", maskPatterns=["/a**/"])["error"]["message"]
    assert bad == "mask-patterns: /a**/ is not a valid regular expression: two repeats in a row at character 4", bad
    # A repeat of a repeat froze the host on a page of 34 "a"s and a "!" (the attack run): refused when set.
    bad = host.request("settings.set", maskPatterns=["/(a+)+$/"])["error"]["message"]
    assert bad == ("mask-patterns: /(a+)+$/ is not a valid regular expression: a repeat of something that repeats "
                   "without end, like (a+)+: it can take forever on some pages; write it with one repeat"), bad
    assert host.request("settings.set", maskPatterns=["/(\\d{3}-)+\\d{4}/"])["ok"]  # a fixed-width part repeated
    assert host.request("settings.get")["data"]["maskPatterns"] == ["/(\\d{3}-)+\\d{4}/"]
    assert host.request("ping")["ok"]


def test_a_task_that_cannot_go_on_after_a_restart_says_why_in_the_popups_language(home):
    """A task its host suspended whose record lacks its tab ends `error` when the next host starts; the popup
    reads why in its language (the reason too, not only the sentence around it); the record keeps English."""
    script = (
        "import sys; from tabpilot.store.tasks import TaskStore; s = TaskStore(sys.argv[1]); "
        "t = s.start_task('long job', url=None, model='m', source='popup'); "
        "s.save_run_state(t, {'source': 'popup', 'browser': 999999999}, suspended=True); print(t)"
    )
    task_id = subprocess.run([sys.executable, "-c", script, str(home / "data" / "tasks.sqlite3")], check=True,
                             capture_output=True, text=True).stdout.strip()
    english = "The task could not go on after tabpilot's extension restarted: its record is incomplete"
    for language, worded in (("zh-CN", "tabpilot 的扩展重启后，任务无法继续：它的记录不完整"), ("en", english)):
        process = HostProcess(home)
        try:
            assert process.request("hello", extensionVersion="0.1.0", uiLanguage=language)["ok"]
            [error] = process.request("history.get", taskId=task_id)["data"]["events"]
            assert (error["type"], error["text"], error["message"]) == ("error", worded, english), error
            assert error["params"] == {"form": "cause", "cause": {"code": "record_incomplete", "params": {}}}
            [summary] = process.request("history.list")["data"]["tasks"]
            assert summary["status"] == "error"
        finally:
            process.stop()


def test_a_database_locked_by_another_program_holds_up_only_the_history_request(host, home):
    # Another program holds the task database's write lock (a long history delete, a backup tool): the host
    # still answers ping at once, and the delete goes through once the lock is let go. Never locked free: "busy".
    import sqlite3
    import time

    path = home / "data" / "tasks.sqlite3"
    with TaskStore(path) as store:
        task_id = store.start_task("an old task", source="popup")
        store.finish_task(task_id, status="completed", result={"success": True, "data": "ok"})
    assert host.request("history.list")["data"]["tasks"][0]["taskId"] == task_id
    locker = sqlite3.connect(path, isolation_level=None)
    locker.execute("BEGIN IMMEDIATE")
    try:
        host.send({"type": "history.delete", "id": "delete", "taskId": task_id})
        time.sleep(0.2)
        asked = time.monotonic()
        assert host.request("ping")["data"] == {"pong": True}
        answered = time.monotonic() - asked
    finally:
        locker.execute("ROLLBACK")
        locker.close()
    assert answered < 2.0, f"ping waited {answered:.1f} s for the locked database"
    assert host.reply_to("delete")["ok"] is True
    assert host.request("history.list")["data"]["tasks"] == []
