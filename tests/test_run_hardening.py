"""`tabpilot run` against what broke it in the outside attack run (issue 14): a page holding lone UTF-16
surrogates, a model reply holding one, and a run killed with SIGKILL or SIGHUP. Real Chromium, the
scripted model over HTTP, the real SQLite record."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agent_support import done, index_of, on_page
from test_run_cli import API_KEY, tabpilot

from tabpilot.llm.scripted import ScriptedLLMServer, ToolCall
from tabpilot.store.tasks import TaskStore

pytestmark = [pytest.mark.browser]


def utf8_clean(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False)
    text.encode("utf-8")  # raises on a lone surrogate
    return text


def test_a_page_with_half_an_emoji_does_not_fail_the_task(pages, tmp_path: Path) -> None:
    replies = [on_page(lambda b: {"click_element_by_index": {"index": index_of(b, "Go")}}, goal="press Go"),
               done("Pressed Go")]
    with ScriptedLLMServer(replies) as server:
        proc = tabpilot("run", "Press Go", "--url", pages.url("surrogate.html"), "--base-url", server.base_url,
                        "--model", "scripted", "--api-key", API_KEY, home=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.rstrip().endswith("✅ completed: Pressed Go")
    assert len(server.requests) == 2  # both steps, the second on the page as the first left it
    for request in server.requests:
        prompt = utf8_clean(request)
        assert "a\ufffdb" in prompt  # the page's text, its half emoji replaced
    [summary] = TaskStore(tmp_path / "data" / "tasks.sqlite3").list_tasks()
    assert summary.status == "completed" and summary.steps == 2


def test_a_model_reply_with_a_lone_surrogate_keeps_its_step(pages, tmp_path: Path) -> None:
    text = json.dumps({"evaluation_previous_goal": "start", "memory": "half \ud83d", "next_goal": "finish \udc00 now",
                       "action": {"done": {"text": "Done \ud800 here", "success": True}}})
    with ScriptedLLMServer([ToolCall("AgentOutput", text)]) as server:
        proc = tabpilot("run", "Finish", "--url", pages.url("basic.html"), "--base-url", server.base_url,
                        "--model", "scripted", "--api-key", API_KEY, home=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    assert "step 1 · finish \ufffd now" in proc.stdout and "completed: Done \ufffd here" in proc.stdout
    store = TaskStore(tmp_path / "data" / "tasks.sqlite3")
    [summary] = store.list_tasks()
    assert summary.status == "completed" and summary.steps == 1
    record = store.get_task(summary.task_id)
    assert record is not None
    [stepped] = [event for event in record.events if event["type"] == "step"]
    assert stepped["reflection"]["memory"] == "half \ufffd"
    assert record.result == {"success": True, "data": "Done \ufffd here"}
