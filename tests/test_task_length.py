"""A task is words saying what to do, never megabytes: found by a new user, a 3 MB task (a file piped to `run -`, an
MCP client's run_task) went whole to the model at every step, and the person's popup, asked about such a task,
stopped answering for over 30 s drawing it. Every way a task starts refuses one over the limit, saying what to do,
before anything is asked, opened or recorded. Browser-free; the MCP client's case is in tests/e2e/test_mcp.py."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from store_support import tabpilot

from tabpilot.native.approvals import Approvals
from tabpilot.native.messages import parse_incoming
from tabpilot.native.peer import RequestFailed
from tabpilot.taskrun.plan import MAX_TASK_CHARS, PlanError, TaskOverrides, plan_task

MODEL = TaskOverrides(base_url="http://127.0.0.1:9/v1", model="m", api_key="k")


def test_a_task_over_the_limit_is_refused_before_it_is_planned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                               ) -> None:
    monkeypatch.setenv("TABPILOT_HOME", str(tmp_path))
    assert plan_task("x" * MAX_TASK_CHARS, MODEL, source="cli").task == "x" * MAX_TASK_CHARS  # the limit itself runs
    for source in ("cli", "popup", "page", "mcp"):
        with pytest.raises(PlanError) as refused:
            plan_task("y" * (MAX_TASK_CHARS + 1), MODEL, source=source)
        assert refused.value.code == "bad_request"
        assert f"is {MAX_TASK_CHARS + 1:,} characters long, and a task may have at most {MAX_TASK_CHARS:,}" in str(
            refused.value)


def test_the_popups_and_a_pages_task_start_takes_the_same_limit_as_every_other_way() -> None:
    # The wire's own limit was 20,000: a task of 20,001 to 200,000 characters ran from `run` and MCP but was refused
    # from the popup and pages as "invalid task.start: field 'task': String should have at most 20000 characters".
    frame = {"type": "task.start", "requestId": "r1", "tabId": 7, "source": "popup"}
    assert parse_incoming({**frame, "task": "x" * MAX_TASK_CHARS}).task == "x" * MAX_TASK_CHARS
    with pytest.raises(PlanError, match="a task may have at most 200,000"):  # over it: the one worded refusal
        plan_task(parse_incoming({**frame, "task": "x" * (MAX_TASK_CHARS + 1)}).task, MODEL, source="popup")


def test_run_refuses_a_huge_task_from_standard_input_and_records_nothing(tmp_path: Path) -> None:
    for _attempt in range(2):
        said = tabpilot(tmp_path, "run", "-", "--json", "--base-url", "http://127.0.0.1:9/v1", "--model", "m",
                        "--api-key", "k", stdin="é😀" * 1_500_000, env={"LANG": "C.UTF-8"})
        assert said.returncode == 2, said.stderr[-500:]
        assert "and a task may have at most 200,000" in said.stderr and "put long material in a page" in said.stderr
        assert json.loads(said.stdout)["success"] is False
    listed = tabpilot(tmp_path, "history", "--json")
    assert listed.returncode == 0 and json.loads(listed.stdout) == []
    chinese = tabpilot(tmp_path, "run", "-", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--api-key", "k",
                       stdin="x" * 200_001, env={"LANG": "zh_CN.UTF-8"})
    assert chinese.returncode == 2 and "而一个任务最多 200,000 个字符" in chinese.stderr, chinese.stderr


def test_the_person_is_never_asked_about_a_task_that_could_not_run() -> None:
    pushed: list[dict[str, Any]] = []

    async def ask() -> None:
        approvals = Approvals(pushed.append)
        for kind in ("mcp", "page"):
            with pytest.raises(RequestFailed) as refused:
                await approvals.ask(kind, "Big Agent", "z" * (MAX_TASK_CHARS + 1), new_tab=True, timeout=5)  # type: ignore[arg-type]
            assert refused.value.code == "bad_request" and "at most 200,000" in str(refused.value)
        assert approvals.pending() == []

    asyncio.run(ask())
    assert pushed == []  # no card, no notification
