"""`tabpilot run` says a failed model call in the run's language: the catalog's words for the error event's
code, once, on the final line (with what to do where the words lack it); the record keeps the English
message with the code. Subprocesses with TABPILOT_HOME in a temporary folder, a real Chromium, the scripted
model server over HTTP (or a closed port), rows in the real SQLite store."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from store_support import set_language
from test_run_cli import tabpilot

from tabpilot.llm.scripted import HTTPError, ScriptedLLMServer
from tabpilot.store.tasks import TaskStore

pytestmark = [pytest.mark.browser]

API_KEY = "sk-wrong-0123456789abcdefghijkl"


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"  # nothing listens there once the socket is closed


def run_refused(home: Path, language: str) -> tuple[str, str, list[dict]]:
    set_language(home, language)
    with ScriptedLLMServer([HTTPError(401, "Incorrect API key provided", type="invalid_request_error")]) as server:
        proc = tabpilot("run", "Tick the terms box", "--base-url", server.base_url, "--model", "scripted",
                        "--api-key", API_KEY, home=home)
        base_url = server.base_url
    assert proc.returncode == 1, proc.stderr
    store = TaskStore(home / "data" / "tasks.sqlite3")
    record = store.get_task(store.list_tasks()[0].task_id)
    store.close()
    assert record is not None
    return proc.stdout, base_url, record.events


def test_a_refused_key_is_said_in_chinese_under_zh_cn_and_as_before_under_en_us(tmp_path: Path) -> None:
    out, base_url, events = run_refused(tmp_path / "zh", "zh-CN")
    said = (f"服务商拒绝了 API 密钥（HTTP 401，来自 {base_url}：Incorrect API key provided）。请检查密钥："
            "在扩展的“设置”中，或用 `tabpilot config set api-key`、环境变量 OPENAI_API_KEY，或者 --api-key。")
    assert out.rstrip().endswith(f"❌ 出错：{said}"), out
    assert out.count(said) == 1 and "✖" not in out, out  # said once, not as an event and again as the outcome
    assert "refused" not in out, out
    # the record keeps page-agent's English message, with the code that words it
    [error] = [event for event in events if event["type"] == "error"]
    assert error["code"] == "key_refused" and error["message"].startswith("The provider refused the API key (HTTP 401")
    assert error["params"]["status"] == 401 and error["params"]["base_url"] == base_url

    out, base_url, _ = run_refused(tmp_path / "en", "en-US")
    english = (f"The provider refused the API key (HTTP 401 from {base_url}: Incorrect API key provided). Check the "
               "key: in the extension's Settings, or `tabpilot config set api-key`, the OPENAI_API_KEY environment "
               "variable, or --api-key.")
    assert out.rstrip().endswith(f"❌ error: {english}"), out
    assert out.count(english) == 1 and "✖" not in out, out
    assert API_KEY not in out


def test_an_unreachable_endpoint_is_said_in_chinese_under_zh_cn_counting_retries_as_the_retry_lines_do(
    tmp_path: Path,
) -> None:
    set_language(tmp_path, "zh-CN")
    where = closed_port_url()
    proc = tabpilot("run", "Tick the terms box", "--base-url", where, "--model", "scripted", home=tmp_path)
    assert proc.returncode == 1, proc.stderr
    outcome, remedy = proc.stdout.rstrip().splitlines()[-2:]
    # counted page-agent's way, as the "↻ 重试 n/3" lines count (not "failed 4 times" after "retry 3/3")
    assert outcome.startswith(f"❌ 出错：模型调用重试 3 次后仍然失败；最后一次的原因：无法连接 {where}："), proc.stdout
    assert "could not reach" not in outcome and "The model call" not in outcome, outcome
    assert proc.stdout.count("模型调用重试 3 次后仍然失败") == 1, proc.stdout  # once: no "✖" line repeating it
    # what to do, in the terminal's words: the server and the base URL, and how to check them
    assert remedy == (f"   → 请确认 {where} 上的服务器正在运行，并且接口地址正确（--base-url，或 "
                      "`tabpilot config set base-url <url>`）；`tabpilot doctor` 可以检查它。"), remedy
    retries = [line for line in proc.stdout.splitlines() if line.startswith("  ↻")]
    assert [line.split("：")[0] for line in retries] == ["  ↻ 重试 1/3", "  ↻ 重试 2/3", "  ↻ 重试 3/3"], retries
    assert all(f"无法连接 {where}：" in line for line in retries), retries  # the cause, in Chinese too


def test_an_unreachable_endpoint_and_the_step_limit_say_what_to_do_in_english(pages, tmp_path: Path) -> None:
    from agent_support import step

    set_language(tmp_path, "en-US")
    where = closed_port_url()
    proc = tabpilot("run", "Tick the terms box", "--base-url", where, "--model", "scripted", home=tmp_path)
    assert proc.returncode == 1, proc.stderr
    retries = [line.split(":")[0] for line in proc.stdout.splitlines() if line.startswith("  ↻")]
    assert retries == ["  ↻ retry 1/3", "  ↻ retry 2/3", "  ↻ retry 3/3"], proc.stdout
    outcome, remedy = proc.stdout.rstrip().splitlines()[-2:]
    said = f"❌ error: The model call still failed after 3 retries; last cause: could not reach {where}"
    assert outcome.startswith(said), proc.stdout
    assert remedy == (f"   → Check that the server at {where} is running and that the base URL is right (--base-url, "
                      "or `tabpilot config set base-url <url>`); `tabpilot doctor` checks it."), proc.stdout
    assert proc.stdout.count("The model call still failed") == 1, proc.stdout

    with ScriptedLLMServer([step("wait", {"seconds": 1}), step("wait", {"seconds": 1})]) as server:
        proc = tabpilot("run", "Wait twice", "--url", pages.url("agent_form.html"), "--base-url", server.base_url,
                        "--model", "scripted", "--api-key", API_KEY, "--max-steps", "2", home=tmp_path)
    assert proc.returncode == 1, proc.stderr
    outcome, remedy = proc.stdout.rstrip().splitlines()[-2:]
    assert outcome == "❌ error: Step count exceeded maximum limit", proc.stdout
    assert remedy == ("   → Raise the limit with --max-steps N (or `tabpilot config set max-steps N`), or split the "
                      "task into smaller ones."), proc.stdout
    assert proc.stdout.count("Step count exceeded") == 1, proc.stdout
