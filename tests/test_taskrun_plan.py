"""`taskrun.plan`: one place turns settings + a task's overrides into its plan, for every entry point.
Browser-free; settings files in a temporary TABPILOT_HOME."""

from __future__ import annotations

from pathlib import Path

import pytest

from tabpilot.store.settings import Settings, save_settings
from tabpilot.taskrun.plan import POPUP_NOT_CONFIGURED, PlanError, TaskOverrides, plan_task

FILE_KEY = "sk-file-key-0000000000000000"
ENV_KEY = "sk-env-key-11111111111111111"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TABPILOT_HOME", str(tmp_path))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    return tmp_path


def settings_file(home: Path, **values: object) -> None:
    save_settings(Settings(**values), home / "config" / "config.json")


def test_not_configured_says_what_to_do_where_the_user_is(home: Path) -> None:
    messages = {}
    for source in ("popup", "panel", "page", "cli", "demo"):
        with pytest.raises(PlanError) as info:
            plan_task("x", source=source)
        assert info.value.code == "not_configured"
        messages[source] = str(info.value)
    assert messages["popup"] == messages["panel"] == POPUP_NOT_CONFIGURED  # no CLI flags or variables there
    assert "tabpilot config set model" in messages["cli"] and "Settings" not in messages["cli"]
    assert messages["page"].startswith("PAGE_AGENT_EXT.execute(task, config): no model")  # the page's own words
    assert "baseURL and model in config" in messages["page"] and "tabpilot config" not in messages["page"]


def test_not_configured_advice_is_in_the_users_language(home: Path) -> None:
    with pytest.raises(PlanError) as popup:
        plan_task("x", source="popup", language="zh-CN")
    assert str(popup.value) == "尚未设置模型：请打开“设置”，填写 Base URL、模型和 API 密钥。"
    settings_file(home, model="gpt-test", base_url="https://llm.example/v1")
    with pytest.raises(PlanError) as terminal:
        plan_task("x", source="cli", language="zh-CN")
    assert str(terminal.value) == ("尚未为 https://llm.example/v1 配置 API 密钥。可用 `tabpilot config set api-key`"
                                   "（输入时不显示）、环境变量 OPENAI_API_KEY 或 --api-key 提供一个。")
    with pytest.raises(PlanError) as english:
        plan_task("x", source="cli")
    assert str(english.value) == (
        "No API key is configured for https://llm.example/v1. Give one with `tabpilot config set api-key` "
        "(asked without echo), the OPENAI_API_KEY environment variable, or --api-key.")


def test_a_key_kept_for_another_address_is_said_so_with_how_to_use_it_here(
        home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A new user with a saved key ran --base-url another address and was told to `config set api-key`, which saved
    # the key for the configured address again: the same error for ever.
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    settings_file(home, model="gpt-test", base_url="https://llm.example/v1", api_key="sk-saved-key-0000000000")
    with pytest.raises(PlanError) as elsewhere:
        plan_task("x", TaskOverrides(base_url="https://other.example/v1"), source="cli")
    assert str(elsewhere.value) == (
        "No API key is configured for https://other.example/v1: a saved key (or OPENAI_API_KEY) is only ever sent "
        "to the address it was given for. To keep using https://other.example/v1, save it with its key: `tabpilot "
        "config set base-url https://other.example/v1`, then `tabpilot config set api-key` (asked without echo); or "
        "set OPENAI_BASE_URL=https://other.example/v1 with OPENAI_API_KEY; or give --api-key.")
    with pytest.raises(PlanError) as chinese:
        plan_task("x", TaskOverrides(base_url="https://other.example/v1"), source="cli", language="zh-CN")
    assert str(chinese.value).startswith("尚未为 https://other.example/v1 配置 API 密钥：保存的密钥")


def test_the_terminal_puts_the_environment_first_the_browser_the_settings_file(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings_file(home, base_url="http://127.0.0.1:9/v1", model="file-model", api_key=FILE_KEY, max_steps=7)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8/v1")
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    terminal = plan_task("x", source="cli")
    popup = plan_task("x", source="popup")
    assert (terminal.llm.base_url, terminal.llm.api_key) == ("http://127.0.0.1:8/v1", ENV_KEY)
    assert (popup.llm.base_url, popup.llm.api_key) == ("http://127.0.0.1:9/v1", FILE_KEY)
    assert terminal.agent.max_steps == popup.agent.max_steps == 7
    assert set(popup.secrets) == {FILE_KEY, ENV_KEY}  # every key it knows is kept out of what it writes


def test_a_tasks_overrides_win_and_a_named_endpoint_gets_none_of_the_users_keys(home: Path) -> None:
    settings_file(home, base_url="http://127.0.0.1:9/v1", model="file-model", api_key=FILE_KEY, debug_capture=True)
    overrides = TaskOverrides(base_url="http://127.0.0.1:7/v1", model="page-model", max_steps=3, language="zh-CN",
                              system_instruction="Be brief.", include_all_tabs=True)
    plan = plan_task("x", overrides, source="page")
    assert (plan.llm.base_url, plan.llm.model, plan.llm.api_key) == ("http://127.0.0.1:7/v1", "page-model", None)
    assert (plan.agent.max_steps, plan.agent.language, plan.agent.system_instructions) == (3, "zh-CN", "Be brief.")
    assert plan.capture_raw and plan.include_all_tabs and plan.source == "page"


def test_settings_that_cannot_run_are_refused_with_what_is_wrong(home: Path) -> None:
    settings_file(home, base_url="http://127.0.0.1:9/v1", model="m")
    with pytest.raises(PlanError) as info:
        plan_task("x", TaskOverrides(step_delay=-1), source="cli")
    assert info.value.code == "bad_request" and "step_delay" in str(info.value)
    (home / "config" / "config.json").write_text("{not json")
    with pytest.raises(PlanError) as info:
        plan_task("x", source="popup")
    assert info.value.code == "settings" and "not valid JSON" in str(info.value)


def test_a_page_not_allowed_the_users_model_gets_nothing_of_it_even_naming_the_users_endpoint(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings_file(home, base_url="http://127.0.0.1:9/v1", model="file-model", api_key=FILE_KEY)
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    same_endpoint = TaskOverrides(base_url="http://127.0.0.1:9/v1", model="page-model", use_my_model=False)
    plan = plan_task("x", same_endpoint, source="page")
    assert (plan.llm.base_url, plan.llm.model, plan.llm.api_key) == ("http://127.0.0.1:9/v1", "page-model", None)
    assert FILE_KEY in plan.secrets and ENV_KEY in plan.secrets  # still kept out of what the run writes
    with pytest.raises(PlanError) as info:  # no model of its own: the user's does not exist for it
        plan_task("x", TaskOverrides(use_my_model=False), source="page")
    assert info.value.code == "not_configured"
    granted = plan_task("x", TaskOverrides(), source="page")  # a site allowed the user's model
    assert (granted.llm.model, granted.llm.api_key) == ("file-model", FILE_KEY)
