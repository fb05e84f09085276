"""The agent's language setting reaches the model: `tabpilot run` with `language` zh-CN sends the whole
system prompt in Simplified Chinese, and switching back to en-US sends the English one (a real Chromium,
the scripted model server over HTTP)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from agent_support import done

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
        assert tabpilot("config", "set", "language", language, home=tmp_path).returncode == 0
        with ScriptedLLMServer([done("完成" if language == "zh-CN" else "finished")]) as server:
            run = tabpilot("run", "说完成", "--url", pages.url("agent_form.html"), "--model", "scripted",
                           "--api-key", "sk-test-0123456789abcdefghijklmnop", home=tmp_path,
                           OPENAI_BASE_URL=server.base_url)
        assert run.returncode == 0, run.stderr
        (request,) = server.requests
        system = request["messages"][0]
        assert system == {"role": "system", "content": expected}
