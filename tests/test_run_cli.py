"""`tabpilot run` and `tabpilot demo` as a user runs them: the command line's own main() (subprocesses for runs side
by side and what only a process shows) with TABPILOT_HOME in a temporary folder, a real Chromium, the scripted model
server over HTTP, rows in the real SQLite store."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from actions_support import wait_until
from agent_support import done, index_of, on_page, step
from cli_support import tabpilot_here
from store_support import set_language

from tabpilot.browser.browser import Browser
from tabpilot.cdp import CDPError
from tabpilot.llm.scripted import Delay, ScriptedLLMServer
from tabpilot.store.settings import Settings, save_settings
from tabpilot.store.tasks import TaskStore

pytestmark = [pytest.mark.browser]

API_KEY = "sk-test-0123456789abcdefghijklmnop"


def tabpilot(*args: str, home: Path, **extra_env: str) -> subprocess.CompletedProcess[str]:
    """`tabpilot ARGS` in this process (cli_support), with `home` as its HOME and TABPILOT_HOME."""
    return tabpilot_here(list(args), _environment(home, extra_env))


def tabpilot_process(*args: str, home: Path, timeout: float = 120, **extra_env: str
                     ) -> subprocess.CompletedProcess[str]:
    """`python -m tabpilot ARGS` as a process of its own: for runs side by side, and what only a process shows."""
    return subprocess.run([sys.executable, "-m", "tabpilot", *args], env=_environment(home, extra_env),
                          capture_output=True, text=True, timeout=timeout)


def _environment(home: Path, extra_env: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env.update(TABPILOT_HOME=str(home), HOME=str(home), PYTHONUNBUFFERED="1", **extra_env)
    return env


def form_replies() -> list:
    return [
        on_page(lambda b: {"input_text": {"index": index_of(b, "Your name"), "text": "Grace Hopper"}},
                goal="type the name"),
        on_page(lambda b: {"input_text": {"index": index_of(b, "you@example.com"), "text": "grace@example.com"}},
                goal="type the email"),
        done("Typed Grace's name and email"),
    ]


def test_run_prints_each_step_and_records_the_task(pages, tmp_path: Path) -> None:
    # settings file < environment < flags: the file's base URL leads nowhere, the environment's is the model
    settings = Settings(base_url="http://127.0.0.1:9/v1", model="scripted", api_key="sk-from-the-file-0000000000",
                        max_steps=6)
    save_settings(settings, tmp_path / "config" / "config.json")
    with ScriptedLLMServer(form_replies()) as server:
        proc = tabpilot("run", "Type Grace Hopper and grace@example.com", "--url", pages.url("agent_form.html"),
                        "--api-key", API_KEY, home=tmp_path, OPENAI_BASE_URL=server.base_url)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "step 1 · type the name" in out and "step 2 · type the email" in out
    assert 'action: typed into "Full name"' in out and 'action: typed into "Email"' in out
    assert "result: " in out and "Page navigated to" not in out  # nothing navigated
    # Told the model ("Only 5 steps remaining"), which is about its own way of working: not printed for the user.
    assert any("Only 5 steps remaining" in json.dumps(body) for body in server.requests)
    assert "steps remaining" not in out, out
    assert out.rstrip().endswith("✅ completed: Typed Grace's name and email")
    assert out.index("step 1") < out.index("step 2") < out.index("step 3")
    assert "Step 1 of 6" in server.requests[0]["messages"][1]["content"]
    offered = json.dumps(server.requests[0]["tools"])  # nobody to answer or take the controls: not offered
    assert "request_takeover" not in offered and "ask_user" not in offered
    assert {k.lower(): v for k, v in server.headers[0].items()}["authorization"] == f"Bearer {API_KEY}"

    store = TaskStore(tmp_path / "data" / "tasks.sqlite3")
    [summary] = store.list_tasks()
    assert summary.status == "completed" and summary.steps == 3 and summary.source == "cli"
    assert summary.url == pages.url("agent_form.html") and summary.model == "scripted"
    record = store.get_task(summary.task_id)
    assert record is not None
    types = [e["type"] for e in record.events]
    assert types.count("step") == 3 and types[0] == "step"  # no false "navigated" note first
    assert record.events[0]["action"]["input"]["text"] == "Grace Hopper"
    assert "rawRequest" not in record.events[0]  # debug capture is off
    assert record.result == {"success": True, "data": "Typed Grace's name and email"}
    store.close()
    assert API_KEY.encode() not in (tmp_path / "data" / "tasks.sqlite3").read_bytes()


def test_run_says_what_each_step_did_in_words_in_english_and_in_chinese(pages, tmp_path: Path) -> None:
    # A new user's trial read 'action: click_element_by_index {"index": 3}'. The words are the extension's
    # (host/tabpilot/actionwords.py), in the language setting; the record keeps the element's name; the exact call
    # stays in `tabpilot history show`.
    def replies() -> list:
        return [
            on_page(lambda b: {"input_text": {"index": index_of(b, "Your name"), "text": "Grace Hopper"}},
                    goal="type the name"),
            on_page(lambda b: {"click_element_by_index": {"index": index_of(b, "Does nothing")}}, goal="click it"),
            step("go_to_url", {"url": thanks + "?token=not-for-the-headline"}, goal="go on"),
            done("Typed and clicked"),
        ]

    thanks = pages.url("agent_thanks.html")
    address = thanks.split("://", 1)[1]
    for language, typed, clicked, opened, finished in (
        ("en-US", 'action: typed into "Full name"', 'action: clicked "Does nothing"', f"action: opened {address}",
         "action: ended the task"),
        ("zh-CN", "动作：在“Full name”中输入了文字", "动作：点击了“Does nothing”", f"动作：打开了 {address}",
         "动作：结束了任务"),
    ):
        set_language(tmp_path, language)
        with ScriptedLLMServer(replies()) as server:
            proc = tabpilot("run", "Type Grace Hopper, then click", "--url", pages.url("agent_form.html"),
                            "--base-url", server.base_url, "--model", "scripted", "--api-key", API_KEY, home=tmp_path)
        assert proc.returncode == 0, proc.stderr
        lines = proc.stdout.splitlines()
        for words in (typed, clicked, opened, finished):
            assert f"    {words}" in lines, (language, proc.stdout)
        assert "input_text" not in proc.stdout and "click_element_by_index" not in proc.stdout, proc.stdout

    store = TaskStore(tmp_path / "data" / "tasks.sqlite3")
    latest = store.list_tasks()[0].task_id
    record = store.get_task(latest)
    store.close()
    assert record is not None
    targets = [e["action"].get("target") for e in record.events if e["type"] == "step"]
    assert targets == ["Full name", "Does nothing", address, None]
    shown = tabpilot("history", "show", latest, home=tmp_path).stdout
    assert "操作：点击了“Does nothing”" in shown, shown
    assert re.search(r"调用：click_element_by_index\(\{\"index\":\d+\}\)", shown), shown


def test_an_address_written_without_its_scheme_is_said_by_its_host_and_path_only(pages, tmp_path: Path) -> None:
    # 'opened …' names a page by its host and path: no user name, password, query or fragment. An address the model
    # wrote without "http://" (the tool opens "127.0.0.1:8000/a?b" all the same) was said whole: its query and
    # fragment, or the password of "alice:hunter2@host", in the run's lines, `history show` and the record's target.
    thanks = pages.url("agent_thanks.html")
    bare = thanks.split("://", 1)[1]  # 127.0.0.1:PORT/agent_thanks.html

    def replies() -> list:
        return [
            step("go_to_url", {"url": f"{bare}?fullname=Ada+Query#Fragment"}, goal="open it"),
            step("go_to_url", {"url": f"alice:pass@{bare}"}, goal="open it as alice"),
            on_page(lambda b: {"done": {"text": "Signed up" if "You are signed up, Ada Query" in b["messages"]
                                        [-1]["content"] else "The page did not open", "success": True}}),
        ]

    for attempt in ("first", "again"):  # a second run in the same home says its steps the same way
        with ScriptedLLMServer(replies()) as server:
            proc = tabpilot("run", "Open the thanks page", "--url", pages.url("agent_form.html"), "--base-url",
                            server.base_url, "--model", "scripted", "--api-key", API_KEY, home=tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert "✅ completed: Signed up" in proc.stdout, proc.stdout  # the page opened, its query read by its script
        said = [line for line in proc.stdout.splitlines() if line.startswith("    action: ")]
        assert said == [f"    action: opened {bare}", f'    action: opening {bare}', "    action: ended the task"], (
            attempt, proc.stdout)
    store = TaskStore(tmp_path / "data" / "tasks.sqlite3")
    latest = store.list_tasks()[0].task_id
    record = store.get_task(latest)
    store.close()
    assert record is not None
    assert [e["action"].get("target") for e in record.events if e["type"] == "step"] == [bare, bare, None]
    shown = tabpilot("history", "show", latest, home=tmp_path).stdout
    assert [line.strip() for line in shown.splitlines() if line.strip().startswith("action: ")] == [
        f"action: opened {bare}", f"action: opening {bare}", "action: ended the task"], shown
    assert "Ada+Query#Fragment" in shown  # the exact call keeps what the model wrote, on its 'call:' line


def test_what_goes_on_inside_a_run_is_logged_to_a_file_not_printed_between_its_steps(pages, tmp_path: Path) -> None:
    # A provider that counts tokens oddly makes the client warn. With no handler, Python printed that warning on
    # the terminal between the task's steps, as it was (unformatted, unredacted); it goes to cli.log, one line.
    odd = done("Looked at the form")
    odd.usage = {"prompt_tokens": -7, "completion_tokens": 3, "total_tokens": -4}
    with ScriptedLLMServer([odd]) as server:
        # a process of its own: here pytest's logging handlers would take in what a process prints on stderr
        proc = tabpilot_process("run", "Look at the form", "--url", pages.url("agent_form.html"), "--api-key", API_KEY,
                        "--model", "scripted",
                        home=tmp_path, OPENAI_BASE_URL=server.base_url)
    assert proc.returncode == 0, proc.stderr
    assert "token count" not in proc.stderr + proc.stdout, proc.stderr
    assert proc.stdout.rstrip().endswith("✅ completed: Looked at the form")
    logged = (tmp_path / "log" / "cli.log").read_text()
    assert "the provider reported a token count of -7; counted as 0" in logged, logged
    if os.name == "posix":
        assert (tmp_path / "log" / "cli.log").stat().st_mode & 0o077 == 0


def test_run_json_records_and_a_replay_gives_the_same_result(pages, tmp_path: Path) -> None:
    recording = tmp_path / "run.json"
    with ScriptedLLMServer(form_replies()) as server:
        proc = tabpilot("run", "Type Grace", "--url", pages.url("agent_form.html"), "--json",
                        "--base-url", server.base_url, "--model", "scripted", "--api-key", API_KEY,
                        "--record", str(recording), home=tmp_path)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)  # only the ExecutionResult: nothing else on stdout
    assert result["success"] is True and result["data"] == "Typed Grace's name and email"
    steps = [e for e in result["history"] if e["type"] == "step"]
    assert [s["action"]["name"] for s in steps] == ["input_text", "input_text", "done"]
    assert set(steps[0]) == {"type", "stepIndex", "reflection", "action", "usage"}
    assert API_KEY not in proc.stdout + proc.stderr

    document = json.loads(recording.read_text())
    assert document["format"] == "tabpilot-recording" and len(document["replies"]) == 3
    assert API_KEY not in recording.read_text()

    replay = tabpilot("run", "Type Grace", "--url", pages.url("agent_form.html"), "--json",
                      "--replay", str(recording), home=tmp_path)
    assert replay.returncode == 0, replay.stderr
    replayed = json.loads(replay.stdout)
    assert replayed["data"] == result["data"]
    assert [s["action"] for s in replayed["history"] if s["type"] == "step"] == [s["action"] for s in steps]
    assert len(TaskStore(tmp_path / "data" / "tasks.sqlite3").list_tasks()) == 2


def test_ctrl_c_stops_the_task_and_the_record_says_stopped(pages, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env.update(TABPILOT_HOME=str(tmp_path), HOME=str(tmp_path), PYTHONUNBUFFERED="1")
    with ScriptedLLMServer([Delay(120, then=done())]) as server:
        proc = subprocess.Popen(
            [sys.executable, "-m", "tabpilot", "run", "Wait for a slow model", "--url", pages.url("agent_form.html"),
             "--base-url", server.base_url, "--model", "scripted", "--api-key", API_KEY],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        try:
            deadline = time.monotonic() + 60
            while not server.requests and time.monotonic() < deadline and proc.poll() is None:
                time.sleep(0.1)
            assert server.requests, "the model was never called"
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert proc.returncode == 130, err
    assert "stopped: Task stopped" in out and "Traceback" not in err
    [summary] = TaskStore(tmp_path / "data" / "tasks.sqlite3").list_tasks()
    assert summary.status == "stopped"


def test_run_without_a_model_says_exactly_how_to_configure_one(tmp_path: Path) -> None:
    proc = tabpilot("run", "anything", home=tmp_path)
    assert proc.returncode == 2
    assert "No model is configured" in proc.stderr
    assert "tabpilot config set model" in proc.stderr and "OPENAI_API_KEY" in proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""


def test_run_rejects_bad_flags_and_a_bad_recording_clearly(tmp_path: Path) -> None:
    proc = tabpilot("run", "x", "--max-steps", "0", home=tmp_path)
    assert proc.returncode == 2 and "--max-steps" in proc.stderr and "at least 1" in proc.stderr
    (tmp_path / "bad.json").write_text("{not json")
    proc = tabpilot("run", "x", "--replay", str(tmp_path / "bad.json"), home=tmp_path)
    assert proc.returncode == 2 and "bad.json" in proc.stderr and "Traceback" not in proc.stderr
    proc = tabpilot("run", "x", "--url", "http://127.0.0.1:1/", "--base-url", "http://127.0.0.1:9/v1",
                    "--model", "m", home=tmp_path)
    assert proc.returncode == 1 and "could not open http://127.0.0.1:1/" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_run_json_says_on_stdout_that_a_task_that_never_started_failed(tmp_path: Path) -> None:
    # A script reading --json's stdout found nothing there when the task could not start: each start-up refusal
    # (before the task: the flags, the model settings, the start page) now leaves the result of a failed task.
    refusals = [
        (("--user-data-dir", str(tmp_path / "p"), "--cdp-url", "http://127.0.0.1:9"), 2, "--user-data-dir"),
        ((), 2, "No model is configured"),
        (("--url", "http://127.0.0.1:1/", "--base-url", "http://127.0.0.1:9/v1", "--model", "m"), 1,
         "could not open http://127.0.0.1:1/"),
    ]
    for flags, status, words in refusals:
        proc = tabpilot("run", "x", "--json", *flags, home=tmp_path)
        assert proc.returncode == status, proc.stderr
        result = json.loads(proc.stdout)
        assert result["success"] is False and result["history"] == []
        assert words in result["data"] and words in proc.stderr  # said on stderr as before, for a person
        assert "Traceback" not in proc.stderr


def test_max_steps_over_the_limit_is_one_clear_line_from_the_flag_and_from_the_settings_file(tmp_path: Path) -> None:
    proc = tabpilot("run", "x", "--max-steps", "501", "--base-url", "http://127.0.0.1:9/v1", "--model", "m",
                    home=tmp_path)
    assert proc.returncode == 2 and "--max-steps: must be at most 500" in proc.stderr
    assert "Traceback" not in proc.stderr
    config = tmp_path / "config" / "config.json"
    config.parent.mkdir(parents=True)
    config.write_text(json.dumps({"baseURL": "http://127.0.0.1:9/v1", "model": "m", "maxSteps": 800}))
    proc = tabpilot("run", "x", home=tmp_path)
    assert proc.returncode == 2 and proc.stderr.startswith("tabpilot: ") and "Traceback" not in proc.stderr
    assert "800" in proc.stderr or "max-steps" in proc.stderr.lower() or "max_steps" in proc.stderr
    assert "500" in proc.stderr


def _authorization(server: ScriptedLLMServer) -> list[str]:
    return [{k.lower(): v for k, v in headers.items()}["authorization"] for headers in server.headers]


def test_each_key_goes_only_to_the_endpoint_it_was_given_for(tmp_path: Path) -> None:
    file_key, env_key, flag_key = "sk-file-key-000000000000", "sk-env-key-1111111111111", "sk-flag-key-22222222222"
    with ScriptedLLMServer([done()] * 2) as users, ScriptedLLMServer([done()] * 3) as other:
        save_settings(Settings(base_url=users.base_url, model="scripted", api_key=file_key),
                      tmp_path / "config" / "config.json")
        assert tabpilot("run", "x", home=tmp_path).returncode == 0  # the file's key, to the file's endpoint
        assert _authorization(users) == [f"Bearer {file_key}"]
        proc = tabpilot("run", "x", "--base-url", other.base_url, home=tmp_path)  # named without a key
        assert proc.returncode == 0, proc.stderr
        (tmp_path / "config" / "config.json").unlink()
        proc = tabpilot("run", "x", "--base-url", other.base_url, "--model", "scripted", home=tmp_path,
                        OPENAI_BASE_URL=users.base_url, OPENAI_API_KEY=env_key)
        assert proc.returncode == 0, proc.stderr
        assert _authorization(other) == ["Bearer not-needed", "Bearer not-needed"]  # no key of the user's
        proc = tabpilot("run", "x", "--base-url", other.base_url, "--model", "scripted", "--api-key", flag_key,
                        home=tmp_path, OPENAI_BASE_URL=users.base_url, OPENAI_API_KEY=env_key)
        assert proc.returncode == 0, proc.stderr
        assert _authorization(other)[-1] == f"Bearer {flag_key}"  # a key given with the override goes with it
        proc = tabpilot("run", "x", "--model", "scripted", home=tmp_path,
                        OPENAI_BASE_URL=users.base_url, OPENAI_API_KEY=env_key)
        assert proc.returncode == 0, proc.stderr
        assert _authorization(users) == [f"Bearer {file_key}", f"Bearer {env_key}"]


@pytest.mark.asyncio(loop_scope="module")
async def test_run_attached_works_in_the_current_tab_and_leaves_the_browser_open(
    browser: Browser, pages, tmp_path: Path
) -> None:
    assert browser.launched is not None
    for info in await browser.tabs():  # one page only, so "the current tab" is unambiguous
        await browser.close_tab(info.target_id)
    tab = await browser.new_tab(pages.url("agent_form.html"))
    with ScriptedLLMServer(form_replies()) as server:
        proc = await asyncio.to_thread(
            tabpilot_process, "run", "Type Grace", "--cdp-url", browser.launched.ws_url,
            "--base-url", server.base_url, "--model", "scripted", "--api-key", API_KEY, home=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert await tab.evaluate("document.getElementById('fullname').value") == "Grace Hopper"
    assert [t.target_id for t in await browser.tabs()] == [tab.target_id]  # still open, nothing added
    await tab.evaluate("sessionStorage.clear()")


async def _only_tabs(browser: Browser, *urls: str) -> list:
    for info in await browser.tabs():
        await browser.close_tab(info.target_id)
    tabs = [await browser.new_tab(url) for url in urls]
    for tab in tabs:  # the test's own sessions must not make every tab look shown (Tab.render_as_if_shown)
        await tab.send("Emulation.setFocusEmulationEnabled", {"enabled": False})
    return tabs


def _attached(browser: Browser) -> tuple[str, ...]:
    """`run`'s flags to work in the test's browser, the user's tab, with the scripted model (its --base-url apart)."""
    assert browser.launched is not None
    return ("--cdp-url", browser.launched.ws_url, "--model", "scripted", "--api-key", API_KEY)


async def _typed_name(tab) -> str:
    return await tab.evaluate("document.getElementById('fullname').value")


@pytest.mark.asyncio(loop_scope="module")
async def test_run_attached_works_in_the_tab_the_user_is_looking_at_without_switching(
    browser: Browser, pages, tmp_path: Path
) -> None:
    assert browser.launched is not None
    tabs = await _only_tabs(browser, *(pages.url(f"agent_form.html?tab={n}") for n in (1, 2, 3)))
    await browser.connection.root.send("Target.activateTarget", {"targetId": tabs[1].target_id})
    with ScriptedLLMServer(form_replies()) as server:
        proc = await asyncio.to_thread(
            tabpilot_process, "run", "Type Grace", "--cdp-url", browser.launched.ws_url,
            "--base-url", server.base_url, "--model", "scripted", "--api-key", API_KEY, home=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "agent_form.html?tab=2" in server.requests[0]["messages"][1]["content"]
    assert [await _typed_name(tab) for tab in tabs] == ["", "Grace Hopper", ""]
    assert [await tab.evaluate("document.visibilityState") for tab in tabs] == ["hidden", "visible", "hidden"]
    assert sorted(t.target_id for t in await browser.tabs()) == sorted(t.target_id for t in tabs)
    for tab in tabs:
        await tab.evaluate("sessionStorage.clear()")


@pytest.mark.asyncio(loop_scope="module")
async def test_a_second_run_in_the_tab_a_run_works_in_is_refused_until_it_ends(
    browser: Browser, pages, tmp_path: Path
) -> None:
    # Two `run --cdp-url` in the tab the user looks at each undid the other's typing, unaware of each other.
    assert browser.launched is not None
    [tab] = await _only_tabs(browser, pages.url("agent_form.html"))
    flags = _attached(browser)
    with ScriptedLLMServer([Delay(4, then=form_replies()[0]), *form_replies()[1:]]) as first_model, \
            ScriptedLLMServer(form_replies()) as second_model:
        first = asyncio.ensure_future(asyncio.to_thread(
            tabpilot_process, "run", "Type Grace", *flags, "--base-url", first_model.base_url, home=tmp_path))

        async def first_at_work() -> bool:
            return bool(first_model.requests)

        await wait_until(first_at_work, timeout=60)
        second = await asyncio.to_thread(
            tabpilot_process, "run", "Type Grace", *flags, "--base-url", second_model.base_url, home=tmp_path)
        assert second.returncode == 1
        assert "another tabpilot task is working in this tab" in second.stderr and "--url" in second.stderr
        assert second_model.requests == []  # refused before any model call
        assert (await first).returncode == 0
        third = await asyncio.to_thread(  # the tab is free again once the first run has ended
            tabpilot, "run", "Type Grace", *flags, "--base-url", second_model.base_url, home=tmp_path)
    assert third.returncode == 0, third.stderr
    assert await _typed_name(tab) == "Grace Hopper"
    store = TaskStore(tmp_path / "data" / "tasks.sqlite3")
    assert [s.status for s in store.list_tasks()] == ["completed", "completed"]  # the refused run left no task
    store.close()
    assert list((tmp_path / "data" / "tabs").iterdir()) == []  # no lock file left behind per tab worked in
    await tab.evaluate("sessionStorage.clear()")


@pytest.mark.asyncio(loop_scope="module")
async def test_run_attached_refuses_a_blob_page_of_a_blocked_site(browser: Browser, pages, tmp_path: Path) -> None:
    # A page on a blocked site that moved itself to a blob: URL (its own document, its origin and cookies) had no
    # host to judge: the task typed into it.
    assert browser.launched is not None
    [tab] = await _only_tabs(browser, pages.url("agent_form.html"))
    await tab.evaluate("setTimeout(() => location.href = URL.createObjectURL(new Blob("
                       "[document.documentElement.outerHTML], {type: 'text/html'})), 0)")

    async def on_blob() -> bool:
        try:
            return (await tab.url()).startswith("blob:http://127.0.0.1") and await tab.evaluate(
                "document.readyState === 'complete' && !!document.getElementById('fullname')")
        except CDPError:  # asked as the document was replaced (a CI run at 71230fe): asked again
            return False

    await wait_until(on_blob, timeout=10)
    save_settings(Settings(blocked_domains=["127.0.0.1"]), tmp_path / "config" / "config.json")
    with ScriptedLLMServer(form_replies()) as server:
        proc = await asyncio.to_thread(tabpilot_process, "run", "Type Grace", *_attached(browser), "--base-url",
                                       server.base_url, home=tmp_path)
        assert server.requests == []
    assert proc.returncode == 2 and "127.0.0.1 is on the blocked domains list" in proc.stderr, proc.stdout
    assert await _typed_name(tab) == ""


@pytest.mark.asyncio(loop_scope="module")
async def test_a_target_id_from_the_cdp_endpoint_never_names_a_lock_outside_the_tabs_folder(
    browser: Browser, pages, tmp_path: Path
) -> None:
    # The tab's lock file was named by the target id the endpoint gave: a remote one (a browser grid) that said
    # "../../config/.config.json" had the run lock the settings for its whole life (`config set` waited on it).
    import websockets

    from tabpilot.store.filelock import claimed

    assert browser.launched is not None
    [tab] = await _only_tabs(browser, pages.url("agent_form.html"))
    real, told = tab.target_id, "../../config/.config.json"

    async def lying(client: websockets.ServerConnection) -> None:  # the real browser, but for the one id
        async with websockets.connect(browser.launched.ws_url, max_size=None, proxy=None) as upstream:
            async def up() -> None:
                async for message in client:
                    await upstream.send(message.replace(told, real))

            async def down() -> None:
                async for message in upstream:
                    await client.send(message.replace(real, told))

            # Either side closing ends both: the browser keeps its side open after the run has gone, and a handler
            # still relaying it held the server's closing (the test timed out under load).
            relays = [asyncio.ensure_future(up()), asyncio.ensure_future(down())]
            await asyncio.wait(relays, return_when=asyncio.FIRST_COMPLETED)
            for relay in relays:
                relay.cancel()
            await asyncio.gather(*relays, return_exceptions=True)

    settings_lock = tmp_path / "config" / ".config.json.lock"
    async with websockets.serve(lying, "127.0.0.1", 0, max_size=None) as endpoint:
        port = endpoint.sockets[0].getsockname()[1]
        with ScriptedLLMServer([Delay(4, then=done("Looked"))]) as server:
            run = asyncio.ensure_future(asyncio.to_thread(
                tabpilot_process, "run", "Look", "--cdp-url", f"ws://127.0.0.1:{port}/devtools/browser/lying",
                "--model", "scripted", "--api-key", API_KEY, "--base-url", server.base_url, home=tmp_path))

            async def asked() -> bool:
                return len(server.requests) == 1

            await wait_until(asked, timeout=60)
            with claimed(settings_lock) as free:
                assert free  # the settings are not held by the run
            [lock] = (tmp_path / "data" / "tabs").iterdir()  # the run's, while it works
            assert lock.name.endswith(".lock") and "config" not in lock.name
            proc = await run
    assert proc.returncode == 0, proc.stderr
    assert list((tmp_path / "data" / "tabs").iterdir()) == []  # and gone with it


@pytest.mark.asyncio(loop_scope="module")
async def test_run_attached_refuses_to_work_in_a_tab_its_domains_keep_it_from(
    browser: Browser, pages, tmp_path: Path
) -> None:
    # --url was checked, the tab the user looks at was not: the task typed into a page on a blocked domain.
    assert browser.launched is not None
    [tab] = await _only_tabs(browser, pages.url("agent_form.html"))
    save_settings(Settings(blocked_domains=["127.0.0.1"]), tmp_path / "config" / "config.json")
    flags = _attached(browser)
    with ScriptedLLMServer(form_replies()) as server:
        blocked = await asyncio.to_thread(tabpilot_process, "run", "Type Grace", *flags, "--base-url", server.base_url,
                                          "--json", home=tmp_path)
        (tmp_path / "config" / "config.json").unlink()
        outside = await asyncio.to_thread(tabpilot_process, "run", "Type Grace", *flags, "--base-url", server.base_url,
                                          "--allow-domain", "example.org", home=tmp_path)
        assert server.requests == []  # refused before the model was asked anything
    assert blocked.returncode == 2 and "127.0.0.1 is on the blocked domains list" in blocked.stderr
    assert json.loads(blocked.stdout)["success"] is False
    assert outside.returncode == 2 and "not among this task's allowed domains (example.org)" in outside.stderr
    assert "Traceback" not in blocked.stderr + outside.stderr
    assert await _typed_name(tab) == ""
    if (tmp_path / "data" / "tasks.sqlite3").exists():
        with TaskStore(tmp_path / "data" / "tasks.sqlite3") as store:
            assert store.list_tasks() == []  # nothing recorded


@pytest.mark.asyncio(loop_scope="module")
async def test_run_attached_with_a_url_opens_its_own_tab_and_leaves_the_users_tabs_alone(
    browser: Browser, pages, tmp_path: Path
) -> None:
    assert browser.launched is not None
    users = await _only_tabs(browser, pages.url("agent_form.html?mine=1"), pages.url("basic.html"))
    with ScriptedLLMServer(form_replies()) as server:
        proc = await asyncio.to_thread(
            tabpilot_process, "run", "Type Grace", "--cdp-url", browser.launched.ws_url, "--url",
            pages.url("agent_form.html"), "--base-url", server.base_url, "--model", "scripted", "--api-key", API_KEY,
            home=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert browser.launched.process.poll() is None  # the user's browser keeps running
    open_tabs = {t.target_id: t.url for t in await browser.tabs()}
    assert open_tabs[users[0].target_id] == pages.url("agent_form.html?mine=1")
    assert open_tabs[users[1].target_id] == pages.url("basic.html")
    assert await _typed_name(users[0]) == ""
    [(new_id, new_url)] = [(k, v) for k, v in open_tabs.items() if k not in {u.target_id for u in users}]
    assert new_url == pages.url("agent_form.html")
    new_tab = await browser.attach(new_id)
    assert await _typed_name(new_tab) == "Grace Hopper"
    await new_tab.evaluate("sessionStorage.clear()")


def test_demo_speaks_the_language_setting_and_says_what_to_do_without_a_browser(tmp_path: Path) -> None:
    """zh-CN: the demo's banner, steps and result are Chinese; a browser it cannot find is said in Chinese
    with what to do. en-US says the same in English."""
    set_language(tmp_path, "zh-CN")
    proc = tabpilot("demo", home=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("tabpilot 演示 — 脚本演示模型，不涉及任何 AI\n任务：")
    assert "第 1 步 · " in proc.stdout and "✅ 已完成：" in proc.stdout
    missing = tabpilot("demo", home=tmp_path, TABPILOT_BROWSER="/nowhere/chrome")
    assert missing.returncode == 1
    assert missing.stderr.strip() == ("tabpilot：无法启动浏览器：TABPILOT_BROWSER '/nowhere/chrome' 不存在"
                                      "（请给出 Chrome、Chromium、Edge 或 Brave 可执行文件的路径）"), missing.stderr
    set_language(tmp_path, "en-US")
    missing = tabpilot("demo", home=tmp_path, TABPILOT_BROWSER="/nowhere/chrome")
    assert missing.stderr.strip() == ("tabpilot: could not start a browser: TABPILOT_BROWSER '/nowhere/chrome' does "
                                      "not exist (give the path of a Chrome, Chromium, Edge or Brave executable)")


def test_demo_runs_without_any_key_and_says_it_is_scripted(tmp_path: Path) -> None:
    proc = tabpilot("demo", home=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "scripted demo model — no AI involved" in proc.stdout
    assert "step 1 · " in proc.stdout and "✅ completed" in proc.stdout
    store = TaskStore(tmp_path / "data" / "tasks.sqlite3")
    [summary] = store.list_tasks()
    assert summary.source == "demo" and summary.status == "completed" and summary.steps == 5
    record = store.get_task(summary.task_id)
    assert record is not None
    outputs = [e["action"]["output"] for e in record.events if e["type"] == "step"]
    assert "its value is now 'Ada Lovelace'" in outputs[0]  # the recorded actions really worked on the page
    assert not any(output.startswith("❌") for output in outputs)
