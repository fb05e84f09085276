"""The host's words in each language it speaks: one table per language, looked up by key.

Everything a person or the model reads that the host writes itself (the per-step prompt's labels and
notes, `tabpilot run`'s lines, the errors and remedies the popup shows) comes from here, so a language
is added in one place and both tables are checked to hold the same keys and placeholders
(tests/test_i18n.py). Tags, tool and field names, URLs and the user's or the page's own text stay as
they are in every language."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Literal

Language = Literal["en-US", "zh-CN"]
DEFAULT_LANGUAGE: Language = "en-US"

EN_US: dict[str, str] = {
    # --- the per-step user message (agent/prompts.py, memory.py, types.py) ---------------------------
    "prompt.step_info": "Step {step} of {max_steps} max possible steps",
    "prompt.now": "Current date and time: {now}",
    "history.condensed": "Steps {first}–{last} are condensed. Your memory after step {last}: {memory}",
    "history.no_memory": "(none recorded)",
    "step.evaluation": "Evaluation of Previous Step",
    "step.memory": "Memory",
    "step.next_goal": "Next Goal",
    "step.action": "Action",
    "step.results": "Action Results",
    "takeover.took_over": "The user took over",
    "takeover.for_seconds": " for {seconds} s",
    "takeover.asked": " (you asked them to)",
    "takeover.implicit": " (they used the page while you were working)",
    "takeover.did_nothing": ": they did nothing you can see",
    "takeover.page_now": "; page is now {url}",
    "takeover.note": ". Their note: {note}",
    "takeover.list_start": ": ",
    "takeover.list_separator": "; ",
    "did.clicked": "clicked {target}",
    "did.typed": "typed in {target} → {value}",
    "did.typed_hidden": "typed in {target} (hidden)",
    "did.chose": "chose {value} in {target}",
    "did.checked": "checked {target}",
    "did.unchecked": "unchecked {target}",
    "did.submitted": "submitted {target}",
    "did.pressed": "pressed {key}",
    "did.pressed_in": "pressed {key} in {target}",
    "did.went_to": "went to {url}",
    "did.scrolled": "scrolled {target} {how}",
    "did.the_page": "the page",
    "did.tab": "{what} {target}",
    "did.switched_to": "switched to",
    "did.tab_opened": "opened",
    "did.tab_closed": "closed",
    # --- the agent's own notes to the model (agent/loop.py, tools.py) --------------------------------
    "note.navigated": "Page navigated to → {url}",
    "note.waited": "You have waited {seconds} seconds in a row. Do not wait any longer unless you have a good reason.",
    "note.steps_left": "⚠️ Only {remaining} steps remaining. Wrap up, or call done with partial results.",
    "note.steps_critical": "⚠️ Critical: only {remaining} steps left! Finish the task or call done now.",
    "note.loop": (
        "LOOP DETECTED: you have done `{action}` {repeats} times in a row and the page has not changed. "
        "It is not working. Do something different: another element, scroll, go back, wait, "
        "or call done with what you have."
    ),
    "result.took_over": (
        "⏸ The user took the controls before this action finished, so it was abandoned (not an error). "
        "What they did is in their takeover note; read the page as it is now before going on."
    ),
    "result.done": "Task completed",
    "result.waited": "✅ Waited for {seconds} seconds.",
    "result.user_answered": "User answered: {answer}",
    "result.handed_back": "✅ The user handed the controls back. {account}. Read the page again: it may have changed.",
    "result.tool_failed": "❌ {tool} failed: {error}",
    # --- `tabpilot run`'s printed lines (commands/run.py) ---------------------------------------------
    "run.step": "step {step} · {goal}",
    "run.no_goal": "(no goal given)",
    "run.action": "    action: {action}",
    "run.result": "    result: {result}",
    "run.retry": "  ↻ retry {attempt}/{max_attempts}: {message}",
    "run.waiting": "  … the model has not answered for {seconds} s",
    "run.not_saved": "    (this could not be saved to the task history)",
    "run.outcome": "{mark} {status}: {data}",
    "run.status.completed": "completed",
    "run.status.error": "error",
    "run.status.stopped": "stopped",
    "controls.help": (
        "⌨  Press Enter here to take the controls of the browser; press it again when you are done to hand them back."
    ),
    "controls.ask_note": "Note for the agent: what you did, or what it should do next (Enter for none):",
    "controls.question": "❓ The agent asks: {question}\n   Type your answer and press Enter:",
    "controls.no_reason": "(no reason given)",
    "controls.agent_asks_takeover": (
        "🙋 The agent asks you to take the controls: {reason}\n"
        "   Do it in the browser, then press Enter here to hand back."
    ),
    "controls.touched": "✋ You touched the page: the agent paused. Press Enter here when you are done to hand back.",
    "controls.you_have_them": (
        "✋ You have the controls: the agent is paused. Press Enter here when you are done to hand back."
    ),
    # --- errors and remedies ----------------------------------------------------------------------------
    "error.popup_not_configured": "No model set: open Settings and enter the base URL, model and API key.",
    "error.page_not_configured": "{message} In the popup: open Settings.",
    "error.no_model": "No model is configured.",
    "error.no_api_key": "No API key is configured for {base_url}.",
    "error.how_to_configure_terminal": (
        "Configure one with `tabpilot config set model <name>` (and `tabpilot config set api-key <key>`, "
        "`tabpilot config set base-url <url>` for a provider other than OpenAI), or set the environment "
        "variables OPENAI_API_KEY / OPENAI_BASE_URL, or pass --model / --base-url / --api-key."
    ),
}

ZH_CN: dict[str, str] = {
    "prompt.step_info": "第 {step} 步，最多 {max_steps} 步",
    "prompt.now": "当前日期和时间：{now}",
    "history.condensed": "第 {first}–{last} 步已压缩。你在第 {last} 步之后的记忆：{memory}",
    "history.no_memory": "（没有记录）",
    "step.evaluation": "对上一步的评估",
    "step.memory": "记忆",
    "step.next_goal": "下一个目标",
    "step.action": "动作",
    "step.results": "动作结果",
    "takeover.took_over": "用户接管了控制",
    "takeover.for_seconds": " {seconds} 秒",
    "takeover.asked": "（是你请求的）",
    "takeover.implicit": "（你工作时他们使用了页面）",
    "takeover.did_nothing": "：没有你能看到的操作",
    "takeover.page_now": "；页面现在是 {url}",
    "takeover.note": "。他们的留言：{note}",
    "takeover.list_start": "：",
    "takeover.list_separator": "；",
    "did.clicked": "点击了 {target}",
    "did.typed": "在 {target} 中输入了 {value}",
    "did.typed_hidden": "在 {target} 中输入了（隐藏的值）",
    "did.chose": "在 {target} 中选择了 {value}",
    "did.checked": "勾选了 {target}",
    "did.unchecked": "取消勾选了 {target}",
    "did.submitted": "提交了 {target}",
    "did.pressed": "按下了 {key}",
    "did.pressed_in": "在 {target} 中按下了 {key}",
    "did.went_to": "打开了 {url}",
    "did.scrolled": "滚动了{target} {how}",
    "did.the_page": "页面",
    "did.tab": "{what} {target}",
    "did.switched_to": "切换到",
    "did.tab_opened": "打开了标签页",
    "did.tab_closed": "关闭了标签页",
    "note.navigated": "页面已跳转到 → {url}",
    "note.waited": "你已经连续等待了 {seconds} 秒。除非有充分的理由，不要再等待。",
    "note.steps_left": "⚠️ 只剩 {remaining} 步了。请收尾，或者带着部分结果调用 done。",
    "note.steps_critical": "⚠️ 紧急：只剩 {remaining} 步了！现在就完成任务或调用 done。",
    "note.loop": (
        "检测到循环：你已经连续 {repeats} 次执行 `{action}`，页面却没有变化。这样行不通。换一种做法："
        "换一个元素、滚动、返回、等待，或者用已有的结果调用 done。"
    ),
    "result.took_over": (
        "⏸ 这个动作完成之前用户接管了控制，所以它被放弃了（不是错误）。用户做了什么见他们的接管记录；"
        "继续之前，先阅读页面现在的样子。"
    ),
    "result.done": "任务已完成",
    "result.waited": "✅ 已等待 {seconds} 秒。",
    "result.user_answered": "用户的回答：{answer}",
    "result.handed_back": "✅ 用户交还了控制。{account}。请重新阅读页面：它可能已经变化。",
    "result.tool_failed": "❌ {tool} 执行失败：{error}",
    "run.step": "第 {step} 步 · {goal}",
    "run.no_goal": "（没有给出目标）",
    "run.action": "    动作：{action}",
    "run.result": "    结果：{result}",
    "run.retry": "  ↻ 重试 {attempt}/{max_attempts}：{message}",
    "run.waiting": "  … 模型已经 {seconds} 秒没有回应",
    "run.not_saved": "    （这一条没能保存到任务历史）",
    "run.outcome": "{mark} {status}：{data}",
    "run.status.completed": "已完成",
    "run.status.error": "出错",
    "run.status.stopped": "已停止",
    "controls.help": "⌨  在这里按 Enter 接管浏览器的控制；完成后再按一次，把控制交还给智能体。",
    "controls.ask_note": "给智能体的留言：你做了什么，或者它接下来该做什么（直接按 Enter 表示没有）：",
    "controls.question": "❓ 智能体问：{question}\n   输入你的回答并按 Enter：",
    "controls.no_reason": "（没有给出原因）",
    "controls.agent_asks_takeover": (
        "🙋 智能体请你接管控制：{reason}\n   请在浏览器中完成，然后在这里按 Enter 交还控制。"
    ),
    "controls.touched": "✋ 你操作了页面：智能体已暂停。完成后在这里按 Enter 交还控制。",
    "controls.you_have_them": "✋ 控制在你手中：智能体已暂停。完成后在这里按 Enter 交还控制。",
    "error.popup_not_configured": "尚未设置模型：请打开“设置”，填写 Base URL、模型和 API 密钥。",
    "error.page_not_configured": "{message} 在弹出窗口中：请打开“设置”。",
    "error.no_model": "尚未配置模型。",
    "error.no_api_key": "尚未为 {base_url} 配置 API 密钥。",
    "error.how_to_configure_terminal": (
        "用 `tabpilot config set model <name>` 配置一个（使用 OpenAI 以外的服务商时，还要 "
        "`tabpilot config set api-key <key>` 和 `tabpilot config set base-url <url>`），或者设置环境变量 "
        "OPENAI_API_KEY / OPENAI_BASE_URL，或者传入 --model / --base-url / --api-key。"
    ),
}

CATALOG: dict[Language, dict[str, str]] = {"en-US": EN_US, "zh-CN": ZH_CN}


def language_of(value: str | None) -> Language:
    """A language tag as the host knows it: any Chinese except the traditional scripts → zh-CN, anything
    else (None, "en", "fr-FR", "C.UTF-8") → en-US. Accepts Chrome's `zh_CN` and POSIX `zh_CN.UTF-8`."""
    tag = (value or "").split(".")[0].replace("_", "-").lower()
    if tag == "zh" or tag.startswith(("zh-cn", "zh-hans", "zh-sg")):
        return "zh-CN"
    return DEFAULT_LANGUAGE


def environment_language(environ: Mapping[str, str] | None = None) -> Language:
    """The terminal's language from the POSIX locale variables, in their order of precedence."""
    environ = os.environ if environ is None else environ
    for name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"):
        value = environ.get(name)
        if value:
            return language_of(value.split(":")[0])
    return DEFAULT_LANGUAGE


def text(key: str, language: str | None = None, /, **values: object) -> str:
    """The message `key` in `language` (English for a language or key the catalog lacks), filled in."""
    return CATALOG[language_of(language)].get(key, EN_US[key]).format(**values)
