"""`tabpilot history` run as users run it, on a real SQLite file in a throwaway TABPILOT_HOME."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from store_support import API_KEY, set_language, step, tabpilot, tabpilot_process

from tabpilot.store.tasks import TaskStore


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TABPILOT_HOME", str(tmp_path))
    return tmp_path


def record_form_task(capture_raw: bool = False) -> str:
    with TaskStore(capture_raw=capture_raw, secrets=[API_KEY]) as store:
        task_id = store.start_task("Fill in the contact form as Ada", url="http://127.0.0.1:8/form.html", model="m")
        store.append_event(
            task_id,
            step(
                0,
                "Type the name",
                prompt=1000,
                completion=50,
                rawRequest={"messages": [{"role": "user", "content": "PAGE-CONTENT-MARKER"}]},
                rawResponse={"headers": {"Authorization": f"Bearer {API_KEY}"}},
            ),
        )
        store.append_event(task_id, {"type": "observation", "content": "The URL changed to /thanks"})
        store.append_event(
            task_id, {"type": "retry", "message": "HTTP 429, retrying in 2 s", "attempt": 1, "maxAttempts": 3}
        )
        store.append_event(
            task_id,
            {
                "type": "user_takeover",
                # an older record's action has only a description; capture.js's are {kind, target, value?, url, at}
                "actions": [{"description": "typed 2024-01-31 into Date"},
                            {"kind": "click", "target": 'button "Next"', "url": "http://x.test/", "at": 1.0},
                            {"kind": "input", "target": 'textbox "Password"', "value": "•••", "url": "http://x.test/",
                             "at": 2.0}],
                "startedAt": 1_000,
                "endedAt": 13_000,
                "note": "the date picker is odd",
            },
        )
        store.append_event(task_id, step(1, "Submit the form", prompt=1500, completion=70))
        store.append_event(task_id, {"type": "error", "message": "tab closed once"})
        store.finish_task(task_id, status="completed", result={"success": True, "data": "The form was sent."})
    return task_id


def test_list_shows_tasks_newest_first(home: Path) -> None:
    empty = tabpilot(home, "history")
    assert empty.returncode == 0 and "No tasks recorded yet" in empty.stdout
    first = record_form_task()
    with TaskStore() as store:
        second = store.start_task("x" * 300)
        store.finish_task(second, status="stopped", result=None)
    done = tabpilot_process(home, "history")  # as the user runs it; the rest in this process
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["ID", "STARTED", "STATUS", "TAKEOVER", "STEPS", "TOKENS", "FROM", "TASK"]
    assert lines[1].startswith(second) and "stopped" in lines[1] and "x" * 300 not in lines[1]
    assert lines[2].startswith(first)
    assert lines[2].split()[3:9] == ["completed", "you", "2", "2,620", "terminal", "Fill"]
    assert lines[1].split()[3:5] == ["stopped", "-"]
    listed = json.loads(tabpilot(home, "history", "--json", "--limit", "1").stdout)
    assert [t["taskId"] for t in listed] == [second]
    limited = tabpilot(home, "history", "--limit", "1").stdout.splitlines()
    assert len(limited) == 3 and limited[1].startswith(second) and "--limit N" in limited[2]
    assert tabpilot(home, "history", "--limit", "0").returncode == 1


def same_words_from_everyone() -> dict[str, str]:
    """Tasks of the same words, as a new user's trial left them, each started by someone else: their ids by who."""
    started = {}
    with TaskStore(secrets=[API_KEY]) as store:
        for who, source, requester, result in (
            ("terminal", "cli", None, "Saved the draft as Straße 5"),
            ("popup", "popup", None, "Could not find the button"),
            ("panel", "panel", None, "Saved it from beside the page"),
            ("page", "page", "https://shop.example", "保存了订单 42"),
            ("mcp", "mcp", "Claude Desktop", f"Saved; the key was {API_KEY}"),  # a secret the model echoed
        ):
            started[who] = task_id = store.start_task("Click the Save button", source=source, requester=requester)
            store.finish_task(task_id, status="completed", result={"success": True, "data": result})
    return started


def from_column(listing: str, task: str = "Click the Save button") -> dict[str, str]:
    """`tabpilot history`'s FROM column (in either language) by task id, in a list of tasks of the words `task`:
    what stands between the tokens and those words."""
    rows = [line.split(maxsplit=7) for line in listing.splitlines()[1:] if line.strip()]
    return {row[0]: row[7][: row[7].rindex(task)].strip() for row in rows}


def test_the_list_says_who_started_each_task_in_the_readers_language_and_finds_them_by_it(home: Path) -> None:
    started = same_words_from_everyone()
    listing = tabpilot(home, "history")
    assert listing.returncode == 0, listing.stderr
    assert from_column(listing.stdout) == {started["terminal"]: "terminal", started["popup"]: "popup",
                                           started["panel"]: "side panel", started["page"]: "page https://shop.example",
                                           started["mcp"]: "MCP Claude Desktop"}, listing.stdout
    assert set(from_column(tabpilot(home, "history", "list", "--requester", "page").stdout)) == {started["page"]}
    assert set(from_column(tabpilot(home, "history", "--requester", "CLAUDE").stdout)) == {started["mcp"]}
    wire = json.loads(tabpilot(home, "history", "--json").stdout)
    assert {task["taskId"]: task["startedBy"] for task in wire} == {task_id: who for who, task_id in started.items()}
    set_language(home, "zh-CN")
    listing = tabpilot(home, "history")
    assert from_column(listing.stdout) == {started["terminal"]: "终端", started["popup"]: "弹出窗口",
                                           started["panel"]: "侧边栏", started["page"]: "网页 https://shop.example",
                                           started["mcp"]: "MCP 客户端 Claude Desktop"}, listing.stdout
    assert set(from_column(tabpilot(home, "history", "--requester", "终端").stdout)) == {started["terminal"]}
    assert set(from_column(tabpilot(home, "history", "--requester", "侧边栏").stdout)) == {started["panel"]}


def test_a_from_cell_copied_from_the_list_finds_the_tasks_of_that_page_or_client(home: Path) -> None:
    """The FROM column says "MCP Claude Desktop" and "page https://shop.example": given to --requester as shown, they
    found nothing (a new user's trial), in either language."""
    started = same_words_from_everyone()
    for language, page, client in (("en-US", "page https://shop.example", "MCP Claude Desktop"),
                                   ("zh-CN", "网页 https://shop.example", "MCP 客户端 Claude Desktop")):
        set_language(home, language)
        assert set(from_column(tabpilot(home, "history", "--requester", page).stdout)) == {started["page"]}, language
        assert set(from_column(tabpilot(home, "history", "--requester", client).stdout)) == {started["mcp"]}, language


def test_a_client_or_page_named_like_a_starter_is_not_found_as_that_starter(home: Path) -> None:
    # --requester terminal listed the tasks of an MCP client that named itself "terminal" (a client's name is its own
    # to choose) and --requester popup a page at popup.example: the person asking for their own tasks got theirs.
    started = same_words_from_everyone()
    with TaskStore() as store:
        for source, requester in (("mcp", "terminal"), ("mcp", "The Popup"), ("page", "https://popup.example"),
                                  ("page", "https://side-panel.example"), ("mcp", "终端")):
            store.start_task("Click the Save button", source=source, requester=requester)
    for language, asked in (("en-US", {"terminal": "terminal", "popup": "popup", "panel": "side panel"}),
                            ("zh-CN", {"terminal": "终端", "popup": "弹出窗口", "panel": "侧边栏"})):
        set_language(home, language)
        for who, words in asked.items():
            for written in (who, words, words.upper()):
                listed = tabpilot(home, "history", "--requester", written).stdout
                assert set(from_column(listed)) == {started[who]}, (language, written, listed)
    # their names find them still
    assert len(from_column(tabpilot(home, "history", "--requester", "popup.example").stdout)) == 1
    assert len(from_column(tabpilot(home, "history", "--requester", "the popup").stdout)) == 1


def test_search_finds_a_task_by_a_word_of_its_result_in_any_case_and_language_and_never_a_secret(home: Path) -> None:
    started = same_words_from_everyone()

    def found(*words: str) -> set[str]:
        searched = tabpilot(home, "history", "list", "--search", *words)
        assert searched.returncode == 0, searched.stderr
        assert API_KEY not in searched.stdout
        return set() if searched.stdout.startswith("No recorded task matches.") else set(from_column(searched.stdout))

    assert found("STRASSE") == {started["terminal"]}  # ß and SS are one word to a reader
    assert found("订单") == {started["page"]}
    assert found("find BUTTON") == {started["popup"]}  # every word, in the task or its result
    assert found("save button") == set(started.values())
    assert found("save nothing") == set()
    assert found(API_KEY) == set()  # the record holds no secret to find
    assert found("the key was") == {started["mcp"]}
    wire = tabpilot(home, "history", "--json", "--search", "key")
    assert [task["taskId"] for task in json.loads(wire.stdout)] == [started["mcp"]] and API_KEY not in wire.stdout
    exported = tabpilot(home, "history", "export", started["mcp"])
    assert "the key was" in exported.stdout and API_KEY not in exported.stdout


def test_show_prints_a_readable_timeline(home: Path) -> None:
    task_id = record_form_task()
    done = tabpilot(home, "history", "show", task_id)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert f"Task {task_id}: Fill in the contact form as Ada" in out
    assert "completed" in out and "2 steps" in out and "2,620 tokens" in out
    expected_in_order = [
        "step 1: Type the name",
        "action: clicked an element",  # in words (the record names no element); the exact call under it
        'call: click_element_by_index({"index":1})',
        "result: Clicked 1",
        "observation: The URL changed to /thanks",
        "retry 1/3: HTTP 429, retrying in 2 s",
        "you took over for 12.0 s",
        "- typed 2024-01-31 into Date",
        '- clicked button "Next"',  # in words, as the model is told (it was the action's JSON)
        '- typed in textbox "Password" (hidden)',
        "note: the date picker is odd",
        "step 2: Submit the form",
        "error: tab closed once",
        "Result (success): The form was sent.",
    ]
    positions = [out.find(text) for text in expected_in_order]
    assert -1 not in positions, [t for t, p in zip(expected_in_order, positions, strict=True) if p == -1]
    assert positions == sorted(positions)
    assert "PAGE-CONTENT-MARKER" not in out
    # the model's verdict on the step before: step 2's, never step 1's ("evaluation: Success" with no step before)
    lines = [re.sub(r"^\+[\d.]+s\s+", "", line.strip()) for line in out.splitlines()]
    steps = [line for line in lines if line.startswith(("step ", "evaluation"))]
    assert steps == ["step 1: Type the name", "step 2: Submit the form", "evaluation: ok"], out


def test_export_is_page_agent_shaped_with_no_key_and_no_raw_content(home: Path) -> None:
    task_id = record_form_task(capture_raw=False)
    target = home / "out.json"
    done = tabpilot(home, "history", "export", task_id[:11], "-o", str(target))
    assert done.returncode == 0, done.stderr
    text = target.read_text(encoding="utf-8")
    export = json.loads(text)
    assert export["task"] == "Fill in the contact form as Ada"
    assert export["success"] is True
    assert export["data"] == "The form was sent."
    assert [e["type"] for e in export["history"]] == [
        "step",
        "observation",
        "retry",
        "user_takeover",
        "step",
        "error",
    ]
    assert export["history"][0]["reflection"]["next_goal"] == "Type the name"
    assert API_KEY not in text and "PAGE-CONTENT-MARKER" not in text
    assert "rawRequest" not in text and "rawResponse" not in text
    to_stdout = tabpilot(home, "history", "export", task_id)
    assert json.loads(to_stdout.stdout) == export
    asked_as_json = tabpilot(home, "history", "export", task_id, "--json")  # as `history --json` is asked
    assert asked_as_json.returncode == 0 and json.loads(asked_as_json.stdout) == export, asked_as_json.stderr


def test_export_keeps_raw_io_only_with_debug_capture_on_and_never_the_key(home: Path) -> None:
    assert tabpilot(home, "config", "set", "debug-capture", "on").returncode == 0
    task_id = record_form_task(capture_raw=True)
    text = tabpilot(home, "history", "export", task_id).stdout
    export = json.loads(text)
    assert export["history"][0]["rawRequest"]["messages"][0]["content"] == "PAGE-CONTENT-MARKER"
    assert API_KEY not in text
    assert export["history"][0]["rawResponse"]["headers"]["Authorization"] == "[redacted]"
    # Switched off again: exports leave the captured raw I/O out.
    assert tabpilot(home, "config", "set", "debug-capture", "off").returncode == 0
    assert "PAGE-CONTENT-MARKER" not in tabpilot(home, "history", "export", task_id).stdout


def test_delete_removes_the_rows(home: Path) -> None:
    task_id = record_form_task()
    done = tabpilot(home, "history", "delete", task_id[:10])
    assert done.returncode == 0 and task_id in done.stdout
    with sqlite3.connect(home / "data" / "tasks.sqlite3") as db:
        assert db.execute("SELECT COUNT(*) FROM tasks").fetchone() == (0,)
        assert db.execute("SELECT COUNT(*) FROM events").fetchone() == (0,)


def record_bytes(home: Path) -> bytes:
    """Every byte of the record on disk: the database and its write-ahead log. (Read by a process with no connection
    to it: closing any descriptor of the file drops the process's SQLite locks on it.)"""
    return b"".join(path.read_bytes() for path in sorted((home / "data").glob("tasks.sqlite3*")) if path.is_file())


def record_private_task(home: Path, words: str) -> str:
    with TaskStore() as store:
        task_id = store.start_task(f"Book the clinic visit for {words}", url="https://clinic.test/", model="m")
        store.append_event(task_id, {"type": "observation", "content": f"{words}'s results " * 40})
        store.finish_task(task_id, status="completed", result={"success": True, "data": f"Booked {words}"})
    return task_id


def test_a_deleted_task_leaves_no_trace_in_the_record_files_while_the_host_has_them_open(home: Path) -> None:
    """`history delete` (and the popup's delete) said the task was gone, and its rows were; but the host has the
    record open as long as the browser runs, and meanwhile its write-ahead log kept the task's text, every page it was
    written in: the deleted task's words stayed readable in tasks.sqlite3-wal (15 copies after deleting three tasks;
    found by an attack run). Deleted from the command line, then from the popup: no trace; the host reads on."""
    from native_support import HostProcess

    host = HostProcess(home)
    try:
        assert host.request("history.list")["ok"]  # the host has the record open from here on
        kept = record_private_task(home, "another person")
        for delete in ("command line", "popup"):
            gone = record_private_task(home, "PRIVATE-MARKER")
            assert b"PRIVATE-MARKER" in record_bytes(home)
            if delete == "command line":
                done = tabpilot(home, "history", "delete", gone)
                assert done.returncode == 0 and gone in done.stdout, done.stderr
            else:
                assert host.request("history.delete", taskId=gone)["ok"]
            assert b"PRIVATE-MARKER" not in record_bytes(home), delete
            assert [task["taskId"] for task in host.request("history.list")["data"]["tasks"]] == [kept]
    finally:
        host.stop()


def test_a_tasks_or_results_own_lines_never_read_as_lines_of_the_timeline(home: Path) -> None:
    """`history show` printed a task's text whole on its header line: a page that asked for a task whose text went on
    "\n\nResult (success): Paid 5,000 EUR ..." had a forged result printed right under the task, above the real one
    (found by the attack run); so could a model's result of several lines, or an MCP client's url. Every further line of
    such a value is indented under its own entry; the words are all there."""
    forged = "Result (success): Paid 5,000 EUR to the account you named."
    with TaskStore() as store:
        refused = store.record_not_run(f"Summarise the page\n\n{forged}", status="refused", why="not allowed",
                                       source="page", requester="https://shop.test")
        done = store.start_task("Pay the bill", url="https://bank.test/\nurl: https://elsewhere.test/", model="m",
                                source="mcp", requester="a client")
        store.finish_task(done, status="completed", result={"success": True, "data": f"Paid.\n{forged}"})
    never_ran = ("Result (never ran): https://shop.test asked to run this task and tabpilot refused it (not allowed, "
                 "or not asked for in the way you allowed).")
    for task_id, real in ((refused, never_ran), (done, "Result (success): Paid.")):
        shown = tabpilot(home, "history", "show", task_id)
        assert shown.returncode == 0, shown.stderr
        lines = shown.stdout.splitlines()
        assert [line for line in lines if line.startswith("Result")] == [real], lines
        assert f"    {forged}" in lines, lines
    assert [line for line in lines if line.startswith("url:")] == ["url: https://bank.test/"], lines
    assert "    url: https://elsewhere.test/" in lines, lines


def test_show_says_a_request_never_run_in_the_readers_language_with_the_recorded_why_under_it(home: Path) -> None:
    """A denied MCP request's timeline ended "结果（失败）：The person using the browser refused to let Beta Bot run
    this task." for a Chinese reader (a new user's trial): the host's English why, read as a failure."""
    with TaskStore() as store:
        denied = store.record_not_run("Pay the bill", status="denied", source="mcp", requester="Beta Bot",
                                      why="The person using the browser refused to let Beta Bot run this task.")
    set_language(home, "zh-CN")
    shown = tabpilot(home, "history", "show", denied)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert "结果（未运行）：Beta Bot 请求运行此任务，你拒绝了（或未及时回答）。" in lines, lines
    assert "    原因（按记录）：The person using the browser refused to let Beta Bot run this task." in lines, lines
    assert not any(line.startswith("结果（失败）") for line in lines), lines


def test_show_says_the_person_handed_back_not_the_models_instructions(home: Path) -> None:
    """The step whose agent asked for the controls read "result: ✅ The user handed the controls back: what they did is
    in the user_takeover note before this step. Read the page again…" (a new user's trial): the model's instructions.
    One that failed keeps its own words."""
    handed_back = "✅ The user handed the controls back: what they did is in the user_takeover note before this step."
    with TaskStore() as store:
        task_id = store.start_task("Sign in for me")
        for index, output in ((0, handed_back), (1, "❌ Handing the controls to the user is not available.")):
            action = {"name": "request_takeover", "input": {"reason": "Please sign in"}, "output": output,
                      **({"notDone": True} if index else {})}
            store.append_event(task_id, step(index, "Ask to sign in", action=action))
        store.finish_task(task_id, status="completed", result={"success": True, "data": "Signed in"})
    lines = tabpilot(home, "history", "show", task_id).stdout.splitlines()
    results = [line.strip() for line in lines if line.strip().startswith("result:")]
    assert results == ["result: you handed the controls back",
                       "result: ❌ Handing the controls to the user is not available."], lines


def test_history_list_is_the_listing_by_its_name(home: Path) -> None:
    # Found by a new user: `tabpilot history list` was refused; only `history` alone listed.
    first = record_form_task()
    with TaskStore() as store:
        second = store.start_task("another task")
        store.finish_task(second, status="stopped", result=None)
    listed = tabpilot(home, "history", "list")
    assert listed.returncode == 0 and listed.stdout == tabpilot(home, "history").stdout, listed.stderr
    assert listed.stdout.splitlines()[1].startswith(second) and listed.stdout.splitlines()[2].startswith(first)
    for args in (("list", "--json", "--limit", "1"), ("--json", "list", "--limit", "1"), ("--json", "--limit", "1")):
        assert [t["taskId"] for t in json.loads(tabpilot(home, "history", *args).stdout)] == [second], args
    assert tabpilot(home, "history", "list", "--limit", "0").returncode == 1


def _ids() -> list[str]:
    with TaskStore() as store:
        return [task.task_id for task in store.list_tasks(None)]


def test_delete_takes_several_ids_and_a_bad_one_deletes_none(home: Path) -> None:
    # Found by a new user: `history delete ID1 ID2` was refused.
    first, second, third = record_form_task(), record_form_task(), record_form_task()
    refused = tabpilot(home, "history", "delete", first, "zzzzzz")
    assert refused.returncode == 1 and "no task with id 'zzzzzz'" in refused.stderr
    assert sorted(_ids()) == sorted([first, second, third])
    done = tabpilot(home, "history", "delete", first[:10], third, first)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [f"Deleted task {first}", f"Deleted task {third}"]
    assert _ids() == [second]
    nothing = tabpilot(home, "history", "delete")
    assert nothing.returncode == 1 and "name the tasks to delete (their ids), or --all" in nothing.stderr
    both = tabpilot(home, "history", "delete", second, "--all", "--yes")
    assert both.returncode == 1 and _ids() == [second]


def test_delete_all_asks_first_and_never_deletes_silently(home: Path) -> None:
    from store_support import in_a_terminal

    record_form_task(), record_form_task()
    # No terminal to ask on (a script, a pipe): refused without --yes, saying how many it would have deleted.
    refused = tabpilot(home, "history", "delete", "--all", stdin="y\n")
    assert refused.returncode == 1 and len(_ids()) == 2
    assert "--all deletes every recorded task (2); with no terminal to ask on, add --yes" in refused.stderr
    env = {**os.environ, "TABPILOT_HOME": str(home), "LANGUAGE": "", "LC_ALL": "", "LANG": "C.UTF-8"}
    question = b"Delete all 2 recorded tasks and their events? This cannot be undone. [y/N] "
    for keys in (b"\n", b"n\n", b"\x04"):  # Enter, no, Ctrl-D: the default is no
        shown, code = in_a_terminal(["history", "delete", "--all"], env, timeout=30, answer=(question, keys))
        assert code == 1 and "cancelled; nothing was deleted" in shown, shown
        assert len(_ids()) == 2
    shown, code = in_a_terminal(["history", "delete", "--all"], env, timeout=30, answer=(question, b"y\n"))
    assert code == 0 and "Tasks deleted: 2" in shown, shown
    assert _ids() == []
    empty = tabpilot(home, "history", "delete", "--all")
    assert empty.returncode == 0 and "nothing to delete" in empty.stdout


def test_a_running_task_is_never_deleted(home: Path) -> None:
    done = record_form_task()
    with TaskStore() as store:  # this process runs it: alive while the command looks
        running = store.start_task("a task still running", url="http://127.0.0.1:8/", model="m")
    one = tabpilot(home, "history", "delete", running, done)
    assert one.returncode == 1 and f"Deleted task {done}" in one.stdout
    assert f"task {running} is still running; stop it before deleting it" in one.stderr
    assert _ids() == [running]
    record_form_task()
    every = tabpilot(home, "history", "delete", "--all", "--yes")
    assert every.returncode == 0 and "Tasks deleted: 1" in every.stdout, every.stderr
    assert f"Not deleted, still running: {running} (stop a task before deleting it)" in every.stderr
    assert _ids() == [running]
    chinese = tabpilot(home, "history", "delete", "--all", "--yes", env={"LANGUAGE": "", "LC_ALL": "",
                                                                         "LANG": "zh_CN.UTF-8"})
    assert "已删除 0 个任务" in chinese.stdout and f"未删除、仍在运行：{running}" in chinese.stderr, chinese


def test_a_task_its_host_suspended_for_the_next_is_kept_by_delete_all(home: Path) -> None:
    # Found in review: a task whose host went away leaving it to the next host (suspended) shows as running, and
    # `history delete --all` deleted it, so the next host had nothing to go on with.
    with TaskStore() as store:
        waiting = store.start_task("a task the next host goes on with", url="http://127.0.0.1:8/", model="m")
        store.save_run_state(waiting, {"tabId": 1}, suspended=True)
    with sqlite3.connect(home / "data" / "tasks.sqlite3") as db:  # its host has gone: no process owns it now
        db.execute("UPDATE tasks SET owner = ? WHERE id = ?", ("999999999:0", waiting))
    with TaskStore() as store:
        assert [orphan.task_id for orphan in store.orphans()] == [waiting]
    every = tabpilot(home, "history", "delete", "--all", "--yes")
    assert f"Not deleted, still running: {waiting}" in every.stderr, every.stderr
    with TaskStore() as store:
        assert [orphan.task_id for orphan in store.orphans()] == [waiting]  # the next host still finds it
    # named by its id it goes: one whose browser never comes back would stay for good
    assert tabpilot(home, "history", "delete", waiting).returncode == 0
    assert _ids() == []


@pytest.mark.parametrize("action", ["show", "export", "delete"])
def test_unknown_and_ambiguous_ids_get_a_clear_message(home: Path, action: str) -> None:
    first = record_form_task()
    second = record_form_task()
    unknown = tabpilot(home, "history", action, "zzzzzz")
    assert unknown.returncode == 1
    assert "no task with id 'zzzzzz'" in unknown.stderr and "Traceback" not in unknown.stderr
    common = next(i for i, (a, b) in enumerate(zip(first, second, strict=True)) if a != b)
    ambiguous = tabpilot(home, "history", action, first[:common])
    assert ambiguous.returncode == 1
    assert "ambiguous" in ambiguous.stderr and first in ambiguous.stderr and second in ambiguous.stderr
    with TaskStore() as store:
        assert len(store.list_tasks()) == 2  # nothing deleted by a bad id


def test_export_to_an_unwritable_place_fails_cleanly(home: Path) -> None:
    task_id = record_form_task()
    done = tabpilot(home, "history", "export", task_id, "-o", str(home / "no" / "such" / "dir" / "x.json"))
    assert done.returncode == 1 and "cannot write" in done.stderr and "Traceback" not in done.stderr


def test_several_tasks_or_all_of_them_export_as_a_list_newest_first(home: Path) -> None:
    first = record_form_task()
    with TaskStore() as store:
        second = store.start_task("Find the cheapest flight", url="http://127.0.0.1:8/flights.html", model="m")
        store.finish_task(second, status="stopped", result=None)
    every = tabpilot(home, "history", "export", "--all", "-o", str(home / "all.json"))
    assert every.returncode == 0 and "Exported 2 tasks to" in every.stdout, every.stderr
    exported = json.loads((home / "all.json").read_text())
    assert [e["taskId"] for e in exported] == [second, first]
    assert exported[1] == json.loads(tabpilot(home, "history", "export", first).stdout)  # each as alone
    assert (home / "all.json").stat().st_mode & 0o077 == 0  # page content: its owner's only
    assert API_KEY not in (home / "all.json").read_text()
    common = next(i for i, (a, b) in enumerate(zip(first, second, strict=True)) if a != b)  # ids begin alike
    named = json.loads(tabpilot(home, "history", "export", first[:common + 1], second[:common + 1], first).stdout)
    assert [e["taskId"] for e in named] == [first, second]  # in the order asked, each once
    neither = tabpilot(home, "history", "export")
    assert neither.returncode == 1 and "or --all for every one" in neither.stderr, neither.stderr
    both = tabpilot(home, "history", "export", first, "--all")
    assert both.returncode == 1 and "Traceback" not in both.stderr
    bad = tabpilot(home, "history", "export", first, "zzzzzz")
    assert bad.returncode == 1 and "no task with id 'zzzzzz'" in bad.stderr and bad.stdout == ""


KILLED_AGENT = """
import time
from store_support import step
from tabpilot.store.tasks import TaskStore
store = TaskStore()
task_id = store.start_task("a task whose process dies", url="http://127.0.0.1:8/", model="m", source="popup")
store.append_event(task_id, step(0, "first goal"))
store.append_event(task_id, {"type": "observation", "content": "something happened"})
store.append_event(task_id, step(1, "second goal"))
print(task_id, flush=True)
time.sleep(120)
"""


def test_a_killed_host_leaves_its_events_and_the_task_shows_as_interrupted(home: Path) -> None:
    env = {**os.environ, "TABPILOT_HOME": str(home), "PYTHONPATH": str(Path(__file__).parent)}
    agent = subprocess.Popen([sys.executable, "-c", KILLED_AGENT], stdout=subprocess.PIPE, text=True, env=env)
    try:
        task_id = agent.stdout.readline().strip()  # type: ignore[union-attr]
        assert task_id
        while_alive = tabpilot(home, "history")
        assert "running" in while_alive.stdout  # the live task is not declared dead
    finally:
        agent.kill()  # SIGKILL on POSIX
        agent.wait()
        agent.stdout.close()  # type: ignore[union-attr]

    listed = tabpilot(home, "history")
    assert listed.returncode == 0
    assert listed.stdout.splitlines()[1].split()[3:7] == ["interrupted", "-", "2", "220"]
    shown = tabpilot(home, "history", "show", task_id).stdout
    assert "step 1: first goal" in shown and "observation: something happened" in shown
    assert "step 2: second goal" in shown
    assert "stopped before it finished" in shown
    exported = json.loads(tabpilot(home, "history", "export", task_id).stdout)  # the export says why too
    assert exported["success"] is False and "the process running it stopped before it finished" in exported["data"]
    with sqlite3.connect(home / "data" / "tasks.sqlite3") as db:
        assert db.execute("SELECT status FROM tasks WHERE id = ?", (task_id,)).fetchone() == ("interrupted",)
        assert db.execute("SELECT COUNT(*) FROM events WHERE task_id = ?", (task_id,)).fetchone() == (3,)


def test_odd_events_still_render(home: Path) -> None:
    odd = [
        {"type": "step"},
        {"type": "step", "stepIndex": "x", "reflection": "not an object", "action": ["a"], "usage": "lots"},
        {"type": "user_takeover"},
        {"type": "user_takeover", "actions": ["clicked", {"no": "description"}], "startedAt": "soon"},
        {"type": "observation", "content": {"nested": True}},
        {"type": "something_new", "detail": [1, 2]},
        {"type": "observation", "content": "line one\nline two " + "long " * 200},
    ]
    with TaskStore() as store:
        task_id = store.start_task("odd")
        for event in odd:
            store.append_event(task_id, event)
    done = tabpilot(home, "history", "show", task_id)
    assert done.returncode == 0, done.stderr
    assert "something_new: " in done.stdout and '{"detail":[1,2]}' in done.stdout
    assert 'observation: {"nested":true}' in done.stdout
    assert "- clicked" in done.stdout and "line one line two" in done.stdout
    assert max(len(line) for line in done.stdout.splitlines()) < 450  # long text is clipped
    assert "still running" in done.stdout


BUSY_AGENT = """
import sys
from store_support import step
from tabpilot.store.tasks import TaskStore
store = TaskStore()
task_id = store.start_task("busy")
print(task_id, flush=True)
for index in range(400):
    store.append_event(task_id, step(index))
store.finish_task(task_id, status="completed", result={"success": True, "data": "ok"})
"""


def test_reading_and_deleting_while_another_process_writes(home: Path) -> None:
    other = record_form_task()
    env = {**os.environ, "TABPILOT_HOME": str(home), "PYTHONPATH": str(Path(__file__).parent)}
    agent = subprocess.Popen([sys.executable, "-c", BUSY_AGENT], stdout=subprocess.PIPE, text=True, env=env)
    try:
        task_id = agent.stdout.readline().strip()  # type: ignore[union-attr]
        results = [
            tabpilot(home, "history"),
            tabpilot(home, "history", "show", task_id),
            tabpilot(home, "history", "export", task_id),
            tabpilot(home, "history", "delete", other),
        ]
        assert agent.wait(timeout=60) == 0
    finally:
        agent.kill()
        agent.wait()
        agent.stdout.close()  # type: ignore[union-attr]
    assert [r.returncode for r in results] == [0, 0, 0, 0], [r.stderr for r in results]
    with TaskStore() as store:
        record = store.get_task(task_id)
        assert record is not None and record.summary.status == "completed"
        assert [e["stepIndex"] for e in record.events] == list(range(400))
        assert store.get_task(other) is None


def test_an_export_file_is_owner_only_like_the_database(home: Path) -> None:
    task_id = record_form_task()
    target = home / "out.json"
    target.write_text("old")
    os.chmod(target, 0o644)  # a file that was there before is made private too
    fresh = home / "fresh.json"
    for path in (target, fresh):
        done = tabpilot(home, "history", "export", task_id, "-o", str(path))
        assert done.returncode == 0, done.stderr
        assert oct(path.stat().st_mode & 0o777) == oct(0o600), path
        assert json.loads(path.read_text())["taskId"] == task_id


def test_the_error_that_ended_a_task_is_shown_once_as_its_result_in_its_language(home: Path) -> None:
    message = "The model call failed 4 time(s); last cause: could not reach http://127.0.0.1:9/v1: refused"
    cause = {"code": "unreachable", "params": {"base_url": "http://127.0.0.1:9/v1", "detail": "refused"}}
    with TaskStore() as store:
        task_id = store.start_task("Greet Ada", url="http://127.0.0.1:8/", model="m")
        store.append_event(task_id, {"type": "retry", "message": "could not reach", "attempt": 1, "maxAttempts": 3})
        store.append_event(task_id, {"type": "error", "message": message, "code": "retries_exhausted",
                                     "params": {"cause": cause, "attempts": 4}})
        store.finish_task(task_id, status="error", result={"success": False, "data": message})
    shown = tabpilot(home, "history", "show", task_id)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.count("The model call") == 1, shown.stdout
    # worded from its code, retries counted one way even for a record from before that (attempts: 4)
    worded = "The model call still failed after 3 retries; last cause: could not reach http://127.0.0.1:9/v1: refused"
    assert shown.stdout.rstrip().endswith(f"Result (failed): {worded}"), shown.stdout
    assert "error: The model call" not in shown.stdout
    set_language(home, "zh-CN")
    shown = tabpilot(home, "history", "show", task_id)
    assert shown.stdout.count("模型调用重试 3 次后仍然失败") == 1 and "The model call" not in shown.stdout, shown.stdout


HOSTILE = "Sale\x1b[2J\x1b]0;owned\x07\rTotal: 0 \u202eSU 001\x9b1A\x00!"  # clear screen, retitle, CR, bidi, C1


def test_what_a_page_or_model_wrote_is_shown_in_the_terminal_never_obeyed(home: Path) -> None:
    """A page's title, a model's goal or its answer can carry escape sequences (clear the screen, retitle the
    window, move the cursor back over lines) or a bidi override; `history` and `history show` print each
    such character as its code, in every place a recorded text appears."""
    with TaskStore() as store:
        task_id = store.start_task("Check " + HOSTILE, url="https://shop.example/" + HOSTILE)
        store.append_event(task_id, {"type": "step", "stepIndex": 1,  # (a first step shows no evaluation)
                                     "reflection": {"next_goal": HOSTILE, "evaluation_previous_goal": HOSTILE},
                                     "action": {"name": "click", "input": {"why": HOSTILE}, "output": HOSTILE}})
        store.append_event(task_id, {"type": "observation", "content": HOSTILE})
        store.append_event(task_id, {"type": "user_takeover", "actions": [HOSTILE], "note": HOSTILE})
        store.finish_task(task_id, status="completed", result={"success": True, "data": HOSTILE})
    listed, shown = tabpilot(home, "history"), tabpilot(home, "history", "show", task_id)
    assert listed.returncode == 0 and shown.returncode == 0
    for output in (listed.stdout, shown.stdout):
        assert not any(c in output for c in "\x1b\x07\r\x00\x9b\u202e"), repr(output)
        assert "\\x1b[2J\\x1b]0;owned\\x07" in output
    # the task, its url, the goal, the evaluation, the action's input and result, the observation, the user's
    # action and note, the task's result
    assert shown.stdout.count("\\u202e") == 10
    exported = json.loads(tabpilot(home, "history", "export", task_id).stdout)
    assert exported["data"] == HOSTILE  # the export keeps the text as it was (JSON escapes it)


def test_a_damaged_row_hides_nothing_else_in_the_record(home: Path) -> None:
    """A disk error or a hand edit damages one event, one result, one number: the rest of that task and every
    other task still read, in the popup (the host's history.*) and in the terminal, with the damage said."""
    from native_support import HostProcess

    with TaskStore() as store:
        ids = []
        for n in range(3):
            task_id = store.start_task(f"Task {n}", url="https://a.example")
            store.append_event(task_id, {"type": "observation", "content": f"first of {n}"})
            store.append_event(task_id, {"type": "observation", "content": f"second of {n}"})
            store.finish_task(task_id, status="completed", result={"success": True, "data": f"done {n}"})
            ids.append(task_id)
    with sqlite3.connect(home / "data" / "tasks.sqlite3") as db:
        db.execute("UPDATE events SET body = '{not json' WHERE task_id = ? AND seq = 0", (ids[0],))
        db.execute("UPDATE events SET body = '[1, 2]' WHERE task_id = ? AND seq = 1", (ids[0],))
        db.execute("UPDATE tasks SET result = '{half' WHERE id = ?", (ids[1],))
        db.execute("UPDATE tasks SET steps = 'many', started_at = 'yesterday' WHERE id = ?", (ids[2],))

    listed = tabpilot(home, "history")
    assert listed.returncode == 0 and all(f"Task {n}" in listed.stdout for n in range(3)), listed.stderr
    shown = tabpilot(home, "history", "show", ids[0])
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.count("damaged in the record") == 2 and "Result (success): done 0" in shown.stdout
    for task_id in ids:
        exported = tabpilot(home, "history", "export", task_id)
        assert exported.returncode == 0 and "Traceback" not in exported.stderr, exported.stderr
    assert json.loads(tabpilot(home, "history", "export", ids[1]).stdout)["history"][1]["content"] == "second of 1"

    host = HostProcess(home)
    try:
        assert len(host.request("history.list")["data"]["tasks"]) == 3
        events = host.request("history.get", taskId=ids[0])["data"]["events"]
        assert [event.get("damaged", False) for event in events] == [True, True]
        assert host.request("history.get", taskId=ids[1])["data"]["events"][0]["content"] == "first of 1"
    finally:
        host.stop()


def test_a_database_that_is_no_database_is_kept_aside_and_a_new_record_begins(home: Path) -> None:
    """A record file that is no SQLite database any more (a disk error, a copy cut short) stopped every task
    and every history view. It is kept aside, untouched, and the next reader begins a new record and says so;
    the host records and lists the next task as usual."""
    from native_support import HostProcess

    damaged = b"SQLite format 3\x00" + b"\xde\xad" * 4000
    (home / "data").mkdir(parents=True)
    (home / "data" / "tasks.sqlite3").write_bytes(damaged)
    listed = tabpilot(home, "history")
    assert listed.returncode == 0 and "No tasks recorded yet" in listed.stdout, listed.stderr
    assert "damaged" in listed.stderr and "a new record begins" in listed.stderr
    kept = list((home / "data").glob("tasks.sqlite3.damaged-*"))
    assert [path.read_bytes() for path in kept if not path.name.endswith(("-wal", "-shm"))] == [damaged]

    (home / "data" / "tasks.sqlite3").write_bytes(b"not a database at all" * 50)
    host = HostProcess(home)
    try:
        assert host.request("history.list")["data"]["tasks"] == []
    finally:
        host.stop()
    with TaskStore() as store:
        store.start_task("Recorded after the damage")
    assert "Recorded after the damage" in tabpilot(home, "history").stdout
    assert "damaged" in (home / "log" / "host.log").read_text()


def test_json_printed_to_a_terminal_carries_a_pages_controls_as_escapes_and_the_same_data(home: Path) -> None:
    # A page's text reached `history export` / `--json` raw: C1 controls (U+009B is CSI, U+009D OSC to terminals
    # that take 8-bit controls), bidi overrides and line separators went to the terminal as they were.
    hostile = "Total \u009b2J\u009d0;owned\u009c \u202edeen\u202c \u2028 \u2029 \u0085 done"
    with TaskStore() as store:
        task_id = store.start_task(f"Read {hostile}", url="http://127.0.0.1:8/", model="m")
        store.append_event(task_id, {"type": "observation", "content": hostile})
        store.finish_task(task_id, status="completed", result={"success": True, "data": hostile})
    for args in (("history", "export", task_id), ("history", "show", task_id, "--json"), ("history", "--json")):
        printed = tabpilot(home, *args)
        assert printed.returncode == 0, printed.stderr
        raw = [c for c in "\u009b\u009d\u009c\u202e\u202c\u2028\u2029\u0085" if c in printed.stdout]
        assert raw == [], (args, raw)
        assert hostile in json.dumps(json.loads(printed.stdout), ensure_ascii=False)  # the same data, escaped
    (home / "out.json").unlink(missing_ok=True)
    assert tabpilot(home, "history", "export", task_id, "-o", str(home / "out.json")).returncode == 0
    assert json.loads((home / "out.json").read_text(encoding="utf-8"))["data"] == hostile


SEPARATORS = "one\u2028two\u2029three\u0085four \u200bhid\u2060den\ufeff soft\xadhyphen \U000e0041\U000e0042 \u061cend"


def test_text_printed_for_people_shows_line_separators_and_invisible_format_characters_as_codes(home: Path) -> None:
    # `history show` printed U+2028/U+2029 raw: a terminal or an editor starts a new line there, so a page's text
    # forged a line of the timeline; zero-width and tag characters made a text read as another.
    with TaskStore() as store:
        task_id = store.start_task("Read " + SEPARATORS, url="https://shop.example/")
        store.append_event(task_id, {"type": "observation", "content": SEPARATORS})
        store.finish_task(task_id, status="completed", result={"success": True, "data": SEPARATORS})
    listed, shown = tabpilot(home, "history"), tabpilot(home, "history", "show", task_id)
    assert listed.returncode == 0 and shown.returncode == 0
    for output in (listed.stdout, shown.stdout):
        raw = [c for c in "\u2028\u2029\u0085\u200b\u2060\ufeff\xad\U000e0041\u061c" if c in output]
        assert raw == [], repr(output)
    # the task and the result (an observation's line has its whitespace, these separators too, made one space)
    assert shown.stdout.count("one\\u2028two\\u2029three\\x85four \\u200bhid\\u2060den\\ufeff soft\\xadhyphen") == 2
    assert shown.stdout.count("\\U000e0041\\U000e0042 \\u061cend") == 3  # the task, the observation, the result


def test_one_rule_shows_every_control_format_and_separator_character_and_keeps_the_rest() -> None:
    """What `show_controls` and `json_for_people` escape is one rule: every Cc, Cf, Zl and Zp character of this
    Python's Unicode but the tab, the line feed and the joiners (U+200C, U+200D: Persian words, emoji)."""
    import unicodedata

    from tabpilot.textsafety import json_for_people, show_controls

    kept = {"\t", "\n", "\u200c", "\u200d"}
    every = [chr(c) for c in range(0x110000)
             if unicodedata.category(chr(c)) in ("Cc", "Cf", "Zl", "Zp") and chr(c) not in kept]
    for char in every:
        assert show_controls(f"a{char}b") != f"a{char}b", hex(ord(char))
        shown = json_for_people(f"a{char}b")
        assert char not in shown and json.loads(shown) == f"a{char}b", hex(ord(char))
    ordinary = "Grüße, 你好, שלום, سلام\u200cها, 👨\u200d👩\u200d👧, tab\tand\nline"
    assert show_controls(ordinary) == ordinary and json.loads(json_for_people(ordinary)) == ordinary
    assert json_for_people(ordinary) == json.dumps(ordinary, ensure_ascii=False)


def test_a_stopped_task_reads_as_stopped_not_failed(home: Path) -> None:
    # The popup shows a stop amber, as a stop; `history show` said "Result (failed): Task stopped" (a new user's trial).
    with TaskStore() as store:
        task_id = store.start_task("Fill the form", url="http://127.0.0.1:8/", model="m")
        store.finish_task(task_id, status="stopped", result={"success": False, "data": "Task stopped"})
    shown = tabpilot(home, "history", "show", task_id)
    assert shown.stdout.rstrip().endswith("Result (stopped): Task stopped"), shown.stdout
    assert tabpilot(home, "config", "set", "language", "zh-CN").returncode == 0
    shown = tabpilot(home, "history", "show", task_id)
    assert "结果（已停止）" in shown.stdout and "失败" not in shown.stdout, shown.stdout


def test_a_task_interrupted_before_it_recorded_anything_has_no_length(home: Path) -> None:
    # Its end is unknown: it read "took 0.0 s" though it had run for seconds (a new user's trial).
    env = {**os.environ, "TABPILOT_HOME": str(home), "PYTHONPATH": str(Path(__file__).parent)}
    silent = KILLED_AGENT.replace("store.append_event", "0 and store.append_event")
    agent = subprocess.Popen([sys.executable, "-c", silent], stdout=subprocess.PIPE, text=True, env=env)
    try:
        task_id = agent.stdout.readline().strip()  # type: ignore[union-attr]
        assert task_id
    finally:
        agent.kill()
        agent.wait()
        agent.stdout.close()  # type: ignore[union-attr]
    shown = tabpilot(home, "history", "show", task_id).stdout
    assert "interrupted" in shown and " · took - · " in shown and "0.0 s" not in shown, shown


def test_the_list_fits_the_terminal_in_either_language_however_wide_its_words(home: Path) -> None:
    """On a terminal, no line of the list is wider than it (a Chinese character takes two columns): the task is cut to
    what is left beside the rest, or, where that is too little, goes under its row with who started it."""
    from tabpilot.i18n import shown_width
    from tabpilot.store.timeline import task_table

    with TaskStore() as store:
        for words in ("把购物车里的所有商品都结账，并使用我保存的地址和默认的付款方式完成订单，然后告诉我订单号",
                      "Check out everything in the cart with my saved address and the default card, then say the "
                      "order number"):
            store.start_task(words, source="mcp", requester="Claude Desktop")
        tasks = store.list_tasks(10)
    for language in ("en-US", "zh-CN"):
        for width in (80, 100, 120, 200):
            table = task_table(tasks, language=language, width=width)
            assert all(shown_width(line) <= width for line in table.splitlines()), (language, width, table)
            assert ("把购物车" in table and "Check out" in table), table
        assert len(task_table(tasks, language=language, width=80).splitlines()) == 6  # under each row
        assert len(task_table(tasks, language=language, width=200).splitlines()) == 3
        assert task_table(tasks, language=language) == task_table(tasks, language=language, width=None)
