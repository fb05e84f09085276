"""The host's message catalog: every language holds the same keys with the same placeholders, and a
language tag from Chrome, a page or the terminal's locale picks the right table (English otherwise)."""

from __future__ import annotations

import re
import string

import pytest

from tabpilot.agent.types import UserTakeoverEvent
from tabpilot.i18n import CATALOG, EN_US, environment_language, language_of, text


def placeholders(message: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(message) if name}


HAN = re.compile(r"[\u4e00-\u9fff]")


@pytest.mark.parametrize("language", sorted(CATALOG))
def test_every_language_has_every_message_with_the_same_placeholders(language: str) -> None:
    table = CATALOG[language]  # type: ignore[index]
    assert table.keys() == EN_US.keys()
    for key, english in EN_US.items():
        assert placeholders(table[key]) == placeholders(english), key


def test_language_tags_from_chrome_pages_and_locales() -> None:
    for tag in ("zh-CN", "zh_CN", "zh", "zh-Hans", "zh_CN.UTF-8", "ZH-cn"):
        assert language_of(tag) == "zh-CN", tag
    for tag in (None, "", "en", "en-US", "en_GB.UTF-8", "fr", "C.UTF-8", "zh-TW", "zh-Hant"):
        assert language_of(tag) == "en-US", tag
    assert environment_language({"LANG": "zh_CN.UTF-8"}) == "zh-CN"
    assert environment_language({"LANGUAGE": "en_US:zh_CN", "LANG": "zh_CN.UTF-8"}) == "en-US"
    assert environment_language({}) == "en-US"


def test_a_message_falls_back_to_english_for_an_unknown_language() -> None:
    assert text("run.status.completed", "fr-FR") == "completed"
    assert text("run.status.completed", "zh-CN") == "已完成"


def test_the_takeover_account_is_worded_in_the_agents_language() -> None:
    event = UserTakeoverEvent(
        reason="agent_request", started_at=1000, ended_at=6000, url_after="http://x/done",
        actions=[{"kind": "input", "target": 'textbox "Code"', "value": "•••"},
                 {"kind": "click", "target": 'button "Verify"'},
                 {"kind": "tab", "target": "docs", "value": "opened"}],
        note="好了",
    )
    assert event.to_prompt(language="zh-CN") == (
        '<user_takeover>用户接管了控制 5 秒（是你请求的）：在文本框 "Code" 中输入了（隐藏的值）；'
        '点击了按钮 "Verify"；打开了标签页 docs；页面现在是 http://x/done。他们的留言：好了</user_takeover>'
    )
    assert event.to_prompt().startswith("<user_takeover>The user took over for 5 s (you asked them to): typed in")


def test_the_terminal_controls_speak_the_runs_language() -> None:
    from tabpilot.commands.controls import _took_over_text

    asked = {"reason": "agent_request", "message": "请输入验证码"}
    assert _took_over_text(asked, "zh-CN") == (
        "🙋 智能体请你接管控制：请输入验证码\n   请在浏览器中完成，然后在这里按 Enter 交还控制。\n"
        "   想给智能体留言，就在按这个 Enter 之前输入。"
    )
    assert _took_over_text({"reason": "implicit"}).startswith("✋ You touched the page: the agent paused.")


def test_every_failure_code_has_its_words_in_every_language_with_the_same_placeholders() -> None:
    from tabpilot.i18n import FAILURE_CODES

    for code, forms in FAILURE_CODES.items():
        keys = ["error.no_model", "error.no_api_key"] if code == "not_configured" else [
            f"failure.{code}.{form}" if form else f"failure.{code}" for form in forms]
        for key in keys:
            for language, table in CATALOG.items():
                assert key in table, (language, key)
                assert placeholders(table[key]) == placeholders(EN_US[key]), (language, key)
    worded = {key for key in EN_US if key.startswith("failure.")}
    listed = {f"failure.{code}.{form}" if form else f"failure.{code}"
              for code, forms in FAILURE_CODES.items() for form in forms if code != "not_configured"}
    assert worded == listed  # no wording for a code nobody sends


def test_a_failures_message_is_the_catalogs_english_and_its_words_follow_the_language() -> None:
    from tabpilot.agent.loop import MAX_STEPS_MESSAGE
    from tabpilot.i18n import failure_text
    from tabpilot.llm.errors import LLMAuthError, LLMNotConfigured, LLMRetriesExhausted

    refused = LLMAuthError(code="key_refused", params={"status": 401, "base_url": "http://x/v1", "detail": "nope"})
    assert refused.message.startswith("The provider refused the API key (HTTP 401 from http://x/v1: nope).")
    assert refused.describe("zh-CN").startswith("服务商拒绝了 API 密钥（HTTP 401，来自 http://x/v1：nope）。")
    cause = {"code": "timeout", "params": {"timeout": "60"}}
    gave_up = LLMRetriesExhausted(code="retries_exhausted", params={"cause": cause}, attempts=4)
    assert gave_up.message == "The model call still failed after 3 retries; last cause: no reply within 60 s (timeout)"
    assert gave_up.last_cause == "no reply within 60 s (timeout)"
    assert gave_up.describe("zh-CN") == "模型调用重试 3 次后仍然失败；最后一次的原因：60 秒内没有回复（超时）"
    missing = LLMNotConfigured(missing="api_key", base_url="https://api.example.com/v1")
    assert missing.message.startswith(
        "No API key is configured for https://api.example.com/v1. Give one with `tabpilot config set api-key`")
    assert missing.describe("zh-CN").startswith("尚未为 https://api.example.com/v1 配置 API 密钥。")
    assert failure_text("max_steps") == MAX_STEPS_MESSAGE


@pytest.mark.parametrize(("language", "words", "actions"), [
    ("en-US", ["it submits a form with payment and password fields", "you asked to approve every action"],
     ['click button "Pay"', "go back"]),
    ("zh-CN", ["它会提交一个含有支付和密码字段的表单", "你要求每个操作都先经你批准"],
     ['点击按钮 "Pay"', "返回上一页"]),
])
def test_an_approvals_reason_reaches_a_reader_in_their_language_and_stays_english_on_the_record(
    language: str, words: list[str], actions: list[str]
) -> None:
    """Its reason and what the action does (a new user's trial: the approval question said "click button" in the
    Chinese popup); the element's name is the page's, in every language."""
    from tabpilot.guards.irreversible import PendingAction
    from tabpilot.i18n import approval_for_reader

    form = PendingAction("click", {"target": 'button "Pay"'}, "shop.example", "form_fields",
                         {"kinds": ["payment", "password"]})
    every = PendingAction("go_back", {}, "", "every_action")
    for pending, worded, action in zip((form, every), words, actions, strict=True):
        wire = pending.to_wire()
        assert wire["why"] == pending.why("en-US") and wire["why"].isascii()  # the record and logs: English
        assert wire["action"] == pending.action and wire["action"].isascii()
        assert approval_for_reader(wire, language) == {**wire, "whyText": worded, "actionText": action}
        assert PendingAction.from_wire(wire) == pending
        assert action in pending.sentence(language)
    older = {"action": "click", "site": "", "why": "its name says \"order\""}  # an older host's approval
    assert approval_for_reader(older, language) == older


def test_a_value_is_set_into_a_chinese_sentence_with_a_space_only_next_to_latin_text() -> None:
    from tabpilot.i18n import Words, text

    latin = text("doctor.not_registered_for", "zh-CN", where="chrome")
    assert latin == "本机主机（native host）尚未为 chrome 注册"
    worded = text("doctor.not_registered_for", "zh-CN", where=Words("doctor.where_profile", profile="/tmp/x"))
    assert worded == "本机主机（native host）尚未为配置文件夹 /tmp/x 注册"
    anywhere = text("doctor.not_registered_for", "zh-CN", where="任何浏览器")
    assert anywhere == "本机主机（native host）尚未为任何浏览器注册"
    assert text("error.no_api_key", "en-US", base_url="配置") == "No API key is configured for 配置."  # English as is


def test_a_page_that_stopped_answering_is_not_called_a_browser_crash() -> None:
    # Seen in the attack run: a click on a `while (true) {}` button ended the task ~90 s later with "The browser
    # closed or crashed under the task", the browser being fine.
    from tabpilot.agent.loop import _failure
    from tabpilot.browser.errors import BrowserError
    from tabpilot.cdp import CDPConnectionClosed, CDPTimeout
    from tabpilot.commands.run import terminal_remedy

    def ended_by(cause: Exception) -> tuple[str | None, str | None]:
        try:
            try:
                raise cause
            except Exception as exc:
                raise BrowserError(f"could not read the page: {exc}") from exc
        except BrowserError as failure:
            message, code, params = _failure(failure)
        return code, terminal_remedy({"type": "error", "message": message, "code": code, "params": params}, "en-US")

    assert ended_by(CDPTimeout("Runtime.callFunctionOn", 30)) == (
        "page_busy", "The page is busy (a script that never ends, or a dialog that stays open): reload or close it, "
                     "then run the task again.")
    assert ended_by(CDPConnectionClosed("Runtime.callFunctionOn", "the browser exited")) == (
        "browser_failed", "The browser closed or crashed under the task: run it again.")


@pytest.mark.parametrize("language", ["en-US", "zh-CN"])
def test_each_tab_tabpilot_cannot_work_in_is_refused_in_the_persons_words_with_advice_that_fits_it(language):
    # The worker names only the kind (extension/lib/tabs.js Tabs.unworkable); the host words the whole refusal. The
    # Web Store is an https page itself: "open a web page (http or https)" was no advice there (a new user's trial).
    from tabpilot.browser.errors import TabUnworkable

    for kind in (*sorted(TabUnworkable.KINDS), "a-newer-kind"):
        refused = TabUnworkable("7", kind)
        said = text("error.tab_unworkable", language, why=refused.why, fix=refused.fix)
        assert said and "{" not in said and "unworkable." not in said, (kind, said)
        if language == "zh-CN":
            latin = said.replace("tabpilot", "").replace("https", "").replace("http", "")
            assert not any("a" <= char.lower() <= "z" for char in latin), (kind, said)
        if kind == "store":
            assert "http" not in said, said


def test_every_action_that_waits_for_a_yes_is_worded_in_every_language() -> None:
    """Each action the person may be asked about (guards/irreversible.py PAGE_ACTIONS) has its words, with its
    element's role, in each language: none reaches the Chinese popup in English."""
    from tabpilot.guards.irreversible import ACTION_CODES, PAGE_ACTIONS
    from tabpilot.i18n import APPROVAL_ACTIONS, approval_action

    for tool in PAGE_ACTIONS:
        code = ACTION_CODES.get(tool, tool)
        assert code in APPROVAL_ACTIONS, tool
        params = {"target": 'link "Home"', "option": "Poetry", "keys": "Enter", "url": "https://shop.example/"}
        chinese = approval_action(code, params, "zh-CN")
        assert HAN.search(chinese) and "link" not in chinese, (tool, chinese)


def test_a_takeovers_account_names_each_role_in_the_readers_language() -> None:
    """The takeover card in the Chinese popup said 点击了 button "Delete": the role a person's action is on is worded
    (in the card and, with a Chinese agent, for the model); the name stays the page's. English is as it was."""
    from tabpilot.agent.types import describe_action

    actions = [
        {"kind": "click", "target": 'button "Delete"'},
        {"kind": "input", "target": 'textbox "Email"', "value": "ada@example.org"},
        {"kind": "submit", "target": 'form "Login" via button "Sign in"'},
        {"kind": "click", "target": "form", "blank": True, "holding": ['textbox "Email"', 'button "Sign in"']},
        {"kind": "click", "target": 'text "a button here"'},
        {"kind": "scroll", "target": "page", "value": "down 600px, right 20px"},
        {"kind": "click", "target": "navigation", "blank": True, "holding": ['link "Home"', 'link "Pricing"']},
        {"kind": "click", "target": "page", "blank": True},
    ]
    assert [describe_action(a, "zh-CN") for a in actions] == [
        '点击了按钮 "Delete"',
        '在文本框 "Email" 中输入了 "ada@example.org"',
        '提交了表单 "Login" via 按钮 "Sign in"',
        '点击了含有文本框 "Email"、按钮 "Sign in" 的表单中的空白处（那里没有控件）',
        '点击了文字 "a button here"',
        "滚动了页面向下 600px、向右 20px",
        '点击了含有链接 "Home"、"Pricing" 的导航栏中的空白处（那里没有控件）',
        "点击了页面上的空白处（那里没有控件）",
    ]
    assert [describe_action(a, "en-US") for a in actions] == [
        'clicked button "Delete"',
        'typed in textbox "Email" → "ada@example.org"',
        'submitted form "Login" via button "Sign in"',
        'clicked an empty area of the form with textbox "Email" and button "Sign in" (no control there)',
        'clicked text "a button here"',
        "scrolled page down 600px, right 20px",
        'clicked an empty area of the navigation with links "Home", "Pricing" (no control there)',
        "clicked an empty area of the page (no control there)",
    ]


def test_every_role_capture_js_names_has_its_words_in_every_language() -> None:
    """The roles capture.js tells an element by (roleOf, its controls' and areas' roles, the page's parts): each is
    worded in every language, so no role of a Chinese account is English."""
    from tabpilot.i18n import CATALOG
    from tabpilot.installer import extension_dir

    script = (extension_dir() / "content" / "capture.js").read_text(encoding="utf-8")
    roles = set(re.findall(r'return "(\w+)"', script[script.index("function roleOf"):script.index("function clean")]))
    for name in ("CONTROL_ROLES", "LANDMARKS"):
        listed = re.search(rf"const {name} = new Set\(\[(.*?)\]\)", script, re.S)
        assert listed, name
        roles |= set(re.findall(r'"(\w+)"', listed.group(1)))
    areas = re.search(r"const AREA_ROLES = \{(.*?)\};", script, re.S)
    assert areas
    roles |= set(re.findall(r': "(\w+)"', areas.group(1)))
    roles |= {"text", "page"}  # a click on words (`text "Save"`), a key or scroll on no element
    assert len(roles) > 30, roles
    for language, words in CATALOG.items():
        missing = sorted(role for role in roles if f"role.{role}" not in words)
        assert not missing, (language, missing)


def test_a_note_the_model_was_given_is_worded_for_the_person_in_their_language() -> None:
    """The card of a navigation said "Page navigated to → …" in the Chinese popup: the model's note (in the agent's
    language) goes to a reader with its card's words in theirs. Every note the host gives with a key has them."""
    from pathlib import Path

    from tabpilot.i18n import CATALOG, for_reader

    url = "http://127.0.0.1:8000/next.html"
    note = {"type": "observation", "content": f"Page navigated to → {url}", "note": "note.navigated",
            "params": {"url": url}}
    assert for_reader(note, "zh-CN")["text"] == f"页面跳转到了 {url}"
    assert for_reader(note, "en-US")["text"] == f"The page went to {url}"
    assert for_reader({"type": "observation", "content": "older"}, "zh-CN") == {"type": "observation",
                                                                                 "content": "older"}
    host = Path(__file__).resolve().parents[1] / "host" / "tabpilot"
    source = "\n".join(path.read_text(encoding="utf-8") for path in host.rglob("*.py"))
    keys = set(re.findall(r'push_note\(\s*"(note\.\w+)"', source)) | set(re.findall(r'note="(note\.\w+)"', source))
    keys |= set(re.findall(r'push_note\("(note\.\w+)" if \w+ else "(note\.\w+)"', source)[0])
    assert len(keys) >= 5, keys
    for language, words in CATALOG.items():
        assert all(f"card.{key}" in words for key in keys), (language, sorted(keys))
    # a note the person's card shows goes with its key: only one for the model alone (a nudge) may go without
    lines = source.splitlines()
    calls = [" ".join(lines[i:i + 2]) for i, line in enumerate(lines)  # a call and the line it may go on to
             if re.search(r'(push_observation|ObservationEvent)\((content=)?say\("note\.', line)]
    unkeyed = [call for call in calls if "nudge=True" not in call and "note=" not in call]
    assert not unkeyed, unkeyed
