"""`tabpilot run` asks before irreversible actions (ask-before: irreversible, the default): in a terminal it
asks y/n (a real pseudo-terminal here), `--yes` skips asking, and with no terminal and no --yes the action is
refused with what to do. The page's own record (window.shopLog) shows what reached it."""

from __future__ import annotations

import asyncio
import json
import os
import pty
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from agent_support import done, index_of, on_page, step
from store_support import set_language
from test_run_cli import API_KEY

from tabpilot.browser.browser import Browser
from tabpilot.llm.scripted import ScriptedLLMServer

pytestmark = [pytest.mark.browser]

QUESTION = 'The agent wants to click button "Place order" on 127.0.0.1 (its name says "order")'


def order_then_done() -> list:
    return [on_page(lambda b: {"click_element_by_index": {"index": index_of(b, "Place order")}}, goal="order"),
            done("Ordered")]


def run_cli(*args: str, home: Path, answer: str | None = None, stdin: Any = subprocess.DEVNULL,
            env_extra: dict[str, str] | None = None, late_answer: str | None = None) -> tuple[int, str]:
    """`tabpilot run …`; with `answer`, its standard input is a pseudo-terminal and `answer` is typed there once
    the question shows ("": nobody types anything), `late_answer` once the run says it was refused (🚫).
    Returns the exit code and what it printed."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env.update(TABPILOT_HOME=str(home), HOME=str(home), PYTHONUNBUFFERED="1", **(env_extra or {}))
    master = None
    if answer is not None:
        master, slave = pty.openpty()
        stdin = slave
    proc = subprocess.Popen([sys.executable, "-m", "tabpilot", "run", *args], env=env, stdin=stdin,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if master is not None:
        os.close(slave)
    lines: list[str] = []

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if master is not None and answer and ("Allow it?" in line or "允许吗？" in line):
                os.write(master, f"{answer}\n".encode())
            if master is not None and late_answer and "🚫" in line:
                os.write(master, f"{late_answer}\n".encode())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        proc.wait(timeout=120)
    finally:
        proc.kill()
        reader.join(timeout=5)
        if master is not None:
            os.close(master)
    return proc.returncode, "".join(lines)


async def run_order(browser: Browser, url: str, home: Path, replies: list | None = None,
                    **options: Any) -> tuple[int, str, list[dict[str, Any]]]:
    """`tabpilot run "Buy the book"` on `url` in the test's browser with the scripted model (`replies`, by default
    order then done); `options` go to run_cli. Returns the exit code, what it printed, the model's requests."""
    assert browser.launched is not None
    with ScriptedLLMServer(replies or order_then_done()) as server:
        code, out = await asyncio.to_thread(
            run_cli, "Buy the book", "--cdp-url", browser.launched.ws_url, "--url", url, "--base-url",
            server.base_url, "--model", "scripted", "--api-key", API_KEY, home=home, **options)
        return code, out, server.requests


async def shop_log(browser: Browser, url: str) -> list[dict[str, Any]]:
    for info in await browser.tabs():
        if info.url == url:
            return await (await browser.attach(info.target_id)).evaluate("window.shopLog")  # type: ignore[no-any-return]
    raise AssertionError(f"no tab at {url}")


@pytest.mark.parametrize(("answer", "ordered"), [("y", True), ("n", False)])
@pytest.mark.asyncio(loop_scope="module")
async def test_run_asks_in_the_terminal_before_placing_an_order(
    browser: Browser, pages, tmp_path: Path, answer: str, ordered: bool
) -> None:
    assert browser.launched is not None
    url = pages.url(f"guard_shop.html?answer={answer}")
    with ScriptedLLMServer(order_then_done()) as server:
        code, out = await asyncio.to_thread(
            run_cli, "Buy the book", "--cdp-url", browser.launched.ws_url, "--url", url, "--base-url",
            server.base_url, "--model", "scripted", "--api-key", API_KEY, home=tmp_path, answer=answer)
        requests = server.requests
    assert code == 0, out
    assert QUESTION in out, out
    log = await shop_log(browser, url)
    if ordered:
        assert log == [{"event": "click", "id": "order", "trusted": True}], out
        assert "✔ allowed" in out
    else:
        assert log == [], out  # the page never got the click
        denial = 'The user denied this action: click button "Place order" on 127.0.0.1'
        assert f"🚫 {denial}" in out, out
        # told to the model: the next request has it
        assert denial in "\n".join(str(m["content"]) for m in requests[-1]["messages"])


@pytest.mark.asyncio(loop_scope="module")
async def test_without_a_terminal_the_action_is_refused_unless_yes(browser: Browser, pages, tmp_path: Path) -> None:
    assert browser.launched is not None
    url = pages.url("guard_shop.html?tty=no")
    replies = [on_page(lambda b: {"click_element_by_index": {"index": index_of(b, "Continue")}}, goal="pay"),
               *order_then_done()]
    with ScriptedLLMServer(replies) as server:
        code, out = await asyncio.to_thread(
            run_cli, "Buy the book", "--cdp-url", browser.launched.ws_url, "--url", url, "--base-url",
            server.base_url, "--model", "scripted", "--api-key", API_KEY, home=tmp_path)
    assert code == 0, out
    assert await shop_log(browser, url) == [], out  # neither the card form nor the order went through
    assert 'click button "Continue" on 127.0.0.1 needs the user\'s approval' in out, out  # a card form's submit
    assert "run it again with --yes" in out, out
    # recorded as not done for want of anyone to ask (the popup's Past tasks), never as the user's own no
    with sqlite3.connect(f"file:{tmp_path / 'data' / 'tasks.sqlite3'}?mode=ro", uri=True) as db:
        guards = [json.loads(body).get("guard") for (body,) in db.execute("SELECT body FROM events")]
    assert "unasked" in guards and "denied" not in guards, guards

    url = pages.url("guard_shop.html?tty=no&yes=1")
    with ScriptedLLMServer(order_then_done()) as server:
        code, out = await asyncio.to_thread(
            run_cli, "Buy the book", "--cdp-url", browser.launched.ws_url, "--url", url, "--yes", "--base-url",
            server.base_url, "--model", "scripted", "--api-key", API_KEY, home=tmp_path)
    assert code == 0, out
    assert await shop_log(browser, url) == [{"event": "click", "id": "order", "trusted": True}], out
    assert "Allow it?" not in out and "needs the user's approval" not in out


@pytest.mark.asyncio(loop_scope="module")
async def test_enter_in_a_card_form_is_asked_too(browser: Browser, pages, tmp_path: Path) -> None:
    assert browser.launched is not None
    url = pages.url("guard_shop.html?enter=1")
    replies = [on_page(lambda b: {"input_text": {"index": index_of(b, "<input"), "text": "4111111111111111"}},
                       goal="type the card"),
               on_page(lambda b: {"send_keys": {"keys": "Enter"}}, goal="submit"),
               done("Stopped before paying")]
    with ScriptedLLMServer(replies) as server:
        code, out = await asyncio.to_thread(
            run_cli, "Pay for the book", "--cdp-url", browser.launched.ws_url, "--url", url, "--base-url",
            server.base_url, "--model", "scripted", "--api-key", API_KEY, home=tmp_path)
    assert code == 0, out
    assert "press Enter on 127.0.0.1 needs the user's approval (ask-before: irreversible)" in out, out
    assert await shop_log(browser, url) == [], out  # the form was not submitted


@pytest.mark.parametrize("language", ["en-US", "zh-CN"])
@pytest.mark.asyncio(loop_scope="module")
async def test_an_approval_nobody_answers_is_denied_in_time(browser: Browser, pages, tmp_path: Path,
                                                            language: str) -> None:
    """A terminal where nobody answers: after the approval timeout (2 s here, through its environment
    variable) the order is not placed, the run says why in its language, the model is told, and it goes on."""
    home = tmp_path / language
    set_language(home, language)
    url = pages.url(f"guard_shop.html?silent={language}")
    code, out, requests = await run_order(browser, url, home, answer="", env_extra={"TABPILOT_APPROVAL_TIMEOUT": "2"})
    assert code == 0, out
    assert await shop_log(browser, url) == [], out  # the page never got the click
    order = 'click button "Place order"'
    expired = {"en-US": f"Nobody answered within 2.0 s whether to allow {order} on 127.0.0.1, so it was not done.",
               "zh-CN": '在 2.0 秒内没有人回答是否允许点击按钮 "Place order"（127.0.0.1），所以它没有执行。'}[language]
    assert f"🚫 {expired}" in out, out
    assert expired in "\n".join(str(m["content"]) for m in requests[-1]["messages"])  # told to the model
    assert len(requests) == 2  # and it went on to its next step


@pytest.mark.asyncio(loop_scope="module")
async def test_a_denial_is_told_in_the_language_setting(browser: Browser, pages, tmp_path: Path) -> None:
    """In zh-CN the terminal asks in Chinese, and the denial the run prints and the model reads is Chinese."""
    set_language(tmp_path, "zh-CN")
    url = pages.url("guard_shop.html?answer=n&language=zh-CN")
    code, out, requests = await run_order(browser, url, tmp_path, answer="n")
    assert code == 0, out
    assert await shop_log(browser, url) == [], out
    denial = '用户拒绝了这个操作：点击按钮 "Place order"（127.0.0.1）。它没有执行'
    assert "✖ 已拒绝" in out and f"🚫 {denial}" in out, out
    assert denial in "\n".join(str(m["content"]) for m in requests[-1]["messages"])


@pytest.mark.parametrize("language", ["en-US", "zh-CN"])
@pytest.mark.asyncio(loop_scope="module")
async def test_a_late_yes_after_the_approval_expired_does_nothing_and_says_so(
    browser: Browser, pages, tmp_path: Path, language: str
) -> None:
    """A "y" typed after the question expired (2 s here) is not read as Enter (take the controls): the run says
    the question had expired and nothing was done, the order stays unplaced and the agent goes on unpaused."""
    home = tmp_path / language
    set_language(home, language)
    url = pages.url(f"guard_shop.html?late={language}")
    replies = [*order_then_done()[:1], step("wait", {"seconds": 3}, goal="wait a moment"), done("Not ordered")]
    code, out, requests = await run_order(browser, url, home, replies, answer="", late_answer="y",
                                          env_extra={"TABPILOT_APPROVAL_TIMEOUT": "2"})
    assert code == 0, out
    assert await shop_log(browser, url) == [], out  # the late yes did not place the order
    order = 'click button "Place order"'
    late = {"en-US": f"⌛ Too late: the question whether to allow {order} on 127.0.0.1 had expired, so it was not "
                     "done; your answer changed nothing and the agent goes on without it.",
            "zh-CN": '⌛ 太晚了：是否允许点击按钮 "Place order"（127.0.0.1）的提问已经过期，所以它没有执行；'
                     "你的回答没有改变任何事，智能体会不做它继续。"}[language]
    assert late in out, out
    you_have_them = {"en-US": "You have the controls", "zh-CN": "控制在你手中"}[language]
    assert you_have_them not in out and "user_takeover" not in out, out  # not taken for Enter
    assert len(requests) == 3  # the order, the wait, done: never paused for a takeover
    assert not any("The user took over" in str(m["content"]) or "用户接管了控制" in str(m["content"])
                   for m in requests[-1]["messages"]), requests[-1]["messages"]


@pytest.mark.asyncio(loop_scope="module")
async def test_without_a_terminal_the_refusal_and_its_remedy_are_in_the_language_setting(
    browser: Browser, pages, tmp_path: Path
) -> None:
    """zh-CN, no terminal and no --yes: the refusal the run prints and the model reads, what to do included
    (run again with --yes), is Chinese; the page gets nothing."""
    set_language(tmp_path, "zh-CN")
    url = pages.url("guard_shop.html?tty=no&language=zh-CN")
    code, out, requests = await run_order(browser, url, tmp_path)
    assert code == 0, out
    assert await shop_log(browser, url) == [], out
    refusal = ('点击按钮 "Place order"（127.0.0.1）需要用户批准（ask-before：irreversible），但这里没有人能回答，'
               "所以它没有执行。标准输入不是终端，tabpilot run 无法询问你：请加上 --yes 再运行一次，"
               "让智能体不经询问执行这类操作（或者 `tabpilot config set ask-before never`）。")
    assert f"🚫 {refusal}" in out, out
    assert "Standard input" not in out and "needs the user's approval" not in out, out
    assert refusal in "\n".join(str(m["content"]) for m in requests[-1]["messages"])  # told to the model


@pytest.mark.parametrize("language", ["en-US", "zh-CN"])
@pytest.mark.asyncio(loop_scope="module")
async def test_the_terminal_asks_and_says_why_in_the_language_setting(browser: Browser, pages, tmp_path: Path,
                                                                      language: str) -> None:
    """The question and its reason, for a card form's submit and for an order button, in the language setting;
    the action stays as the model named it. Denied both times: the page gets nothing."""
    home = tmp_path / language
    set_language(home, language)
    url = pages.url(f"guard_shop.html?asked={language}")
    replies = [on_page(lambda b: {"click_element_by_index": {"index": index_of(b, "Continue")}}, goal="pay"),
               *order_then_done()]
    code, out, _ = await run_order(browser, url, home, replies, answer="n")
    assert code == 0, out
    assert await shop_log(browser, url) == [], out
    asked = {"en-US": ['⚠  The agent wants to click button "Continue" on 127.0.0.1 (it submits a form with payment '
                       'fields).', f"⚠  {QUESTION}."],
             "zh-CN": ['⚠  智能体想在 127.0.0.1 上执行：点击按钮 "Continue"（它会提交一个含有支付字段的表单）。',
                       '⚠  智能体想在 127.0.0.1 上执行：点击按钮 "Place order"（它的名称含有“order”）。']}[language]
    for question in asked:
        assert question in out, out
    assert ("The agent wants" in out) is (language == "en-US"), out
