"""The agent's language setting reaches the model: `tabpilot run` with `language` zh-CN sends the whole
system prompt in Simplified Chinese, and every step's user message (step info, history labels, the
agent's own notes and tool results) in it too, and prints the run in Chinese; en-US keeps them English
(a real Chromium, the scripted model server over HTTP)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from agent_support import done, last_user_message, step
from store_support import set_language

from tabpilot.agent.prompts import ENGLISH, SIMPLIFIED_CHINESE
from tabpilot.llm.scripted import ScriptedLLMServer

pytestmark = [pytest.mark.browser]


def tabpilot(*args: str, home: Path, **extra_env: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env.update(TABPILOT_HOME=str(home), HOME=str(home), **extra_env)
    return subprocess.run([sys.executable, "-m", "tabpilot", *args], env=env, capture_output=True, text=True,
                          timeout=120)


def test_the_language_setting_gives_the_model_a_system_prompt_in_that_language(pages, tmp_path: Path) -> None:
    for language, expected in (("zh-CN", SIMPLIFIED_CHINESE), ("en-US", ENGLISH)):
        set_language(tmp_path, language)
        with ScriptedLLMServer([done("完成" if language == "zh-CN" else "finished")]) as server:
            run = tabpilot("run", "说完成", "--url", pages.url("agent_form.html"), "--model", "scripted",
                           "--api-key", "sk-test-0123456789abcdefghijklmnop", home=tmp_path,
                           OPENAI_BASE_URL=server.base_url)
        assert run.returncode == 0, run.stderr
        (request,) = server.requests
        system = request["messages"][0]
        assert system == {"role": "system", "content": expected}


def english_words(text: str, allowed: set[str]) -> list[str]:
    """The English words left in `text` once the tags, the actions' JSON input, URLs and the allowed names
    (tools, fields, the time zone) are taken out."""
    text = re.sub(r"<[^>]*>", " ", text)
    text = re.sub(r"\{[^{}]*\}", " ", text)
    text = re.sub(r"https?://\S+", " ", text)
    return [word for word in re.findall(r"[A-Za-z]{2,}", text) if word not in allowed]


def outside_page(user_message: str) -> str:
    """The user message minus the page itself (<browser_state>: the page's own text and its tab list)."""
    return user_message[: user_message.index("<browser_state>")]


def test_under_zh_cn_the_whole_step_prompt_and_the_printed_run_are_chinese(pages, tmp_path: Path) -> None:
    set_language(tmp_path, "zh-CN")
    replies = [
        step("wait", {"seconds": 3}, evaluation="刚开始", memory="先等一下", goal="等待页面"),
        step("wait", {"seconds": 1}, evaluation="等到了", memory="又等一下", goal="再等一下"),
        done("完成了", evaluation="成功", memory="都做完了", goal="结束"),
    ]
    with ScriptedLLMServer(replies) as server:
        run = tabpilot("run", "等一会儿然后说完成", "--url", pages.url("agent_form.html"), "--model", "scripted",
                       "--api-key", "sk-test-0123456789abcdefghijklmnop", "--max-steps", "6", home=tmp_path,
                       OPENAI_BASE_URL=server.base_url)
    assert run.returncode == 0, run.stderr
    prompts = [outside_page(last_user_message(request)) for request in server.requests]
    assert len(prompts) == 3
    # what the host wrote into them: step info, step labels, its notes, the wait tool's results
    assert "第 2 步，最多 6 步" in prompts[1] and "只剩 5 步了" in prompts[1]
    assert "对上一步的评估: 刚开始" in prompts[1] and "动作结果: ✅ 已等待 3 秒。" in prompts[1]
    assert "你已经连续等待了 4 秒" in prompts[2]
    time_zone = set(re.findall(r"当前日期和时间：\S+ \S+ (\w+)", prompts[0]))
    allowed = {"wait", "done", "seconds", "text", "success"} | time_zone
    for prompt in prompts:
        assert english_words(prompt, allowed) == [], prompt
    # `tabpilot run` printed the same run in Chinese
    out = run.stdout
    assert "第 1 步 · 等待页面" in out and "    动作：等待了 3 秒" in out and "    结果：✅ 已等待 3 秒。" in out
    assert "只剩 5 步了" not in out  # told to the model about its own way of working, not printed for the person
    assert out.rstrip().endswith("✅ 已完成：完成了")
    assert english_words(out, allowed | time_zone) == [], out


def test_under_en_us_the_step_prompt_and_the_printed_run_stay_english(pages, tmp_path: Path) -> None:
    replies = [step("wait", {"seconds": 1}), done("finished")]
    with ScriptedLLMServer(replies) as server:
        run = tabpilot("run", "wait, then say finished", "--url", pages.url("agent_form.html"), "--model",
                       "scripted", "--api-key", "sk-test-0123456789abcdefghijklmnop", "--max-steps", "6",
                       home=tmp_path, OPENAI_BASE_URL=server.base_url)
    assert run.returncode == 0, run.stderr
    second = last_user_message(server.requests[1])
    assert "Step 2 of 6 max possible steps" in second and "Only 5 steps remaining" in second
    assert "Action Results: ✅ Waited for 1 seconds." in second
    assert "step 1 · do wait" in run.stdout and run.stdout.rstrip().endswith("✅ completed: finished")
