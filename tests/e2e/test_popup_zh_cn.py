"""The popup in Simplified Chinese: a Chromium started with --lang=zh-CN shows the whole popup in
Chinese through chrome.i18n (_locales/zh_CN), numbers and dates in that language's format."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from e2e_support import (
    PAGE_LOADED,
    SCREENS,
    Harness,
    PopupPage,
    act_on,
    agent_output,
    configure,
    done,
    popup_task_id,
    start_connected_harness,
    wait_status,
    wait_until,
)
from test_approvals import shop_tab  # noqa: F401  (the shop page with "Place order", as the approval tests open it)
from test_takeover import _async, account_told, controlled_by_user, ended, open_takeover, popup_cards, start
from test_takeover import configure as configure_host
from user_support import open_panel, page_box, press_overlay, screenshot, user_click, wait_overlay

from tabpilot.browser.tab import Tab
from tabpilot.llm.scripted import Delay, HTTPError, ScriptedLLMServer, Text, ToolCall
from tabpilot.localfiles import LocalFiles

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]
HAN = re.compile(r"[\u4e00-\u9fff]")


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def harness(browser_binary: str, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Harness]:
    h = await start_connected_harness(browser_binary, tmp_path_factory.mktemp("e2e-zh"), browser_args=["--lang=zh-CN"])
    yield h
    await h.browser.close()


# what is not the popup's own words: the task, the page's title, the model's and the host's words, commands
NOT_OURS = (".card-line .v, .card-text, #task-title, #past-title, .past-task, .result-text, .result-detail,"
            " #target-tab, #host-down-reason, code, .brand, option, #test-result, script, .origin, .site-name")
NAMES = {"tabpilot", "token", "API", "Base", "URL", "page", "agent", "PageAgentExtUserAuthToken",
         "MCP", "Claude", "Desktop", "Cursor", "IBAN", "Chrome",
         "email", "card"}  # read as they are ("[email 1]", "[card 1]": the placeholders as the model sees them)


async def own_words(popup: PopupPage) -> str:
    """Every word the popup itself puts on its page, shown or hidden."""
    return str(await popup.js(
        f"(() => {{ const copy = document.body.cloneNode(true); copy.querySelectorAll({NOT_OURS!r})"
        ".forEach(e => e.remove()); return copy.textContent; })()"
    ))


async def test_the_host_words_its_advice_in_the_popups_language(harness: Harness) -> None:
    # the worker's hello said the UI is in Chinese; nothing is configured yet in this fresh profile
    error = await harness.sw("await requestHost({type: 'task.start', task: '看看', tabId: 1, source: 'popup'})"
                             ".then(() => null, (e) => ({message: e.message, code: e.code}))")
    assert error == {"code": "not_configured",
                     "message": "尚未设置模型：请打开“设置”，填写 Base URL、模型和 API 密钥。"}


async def test_the_popup_speaks_chinese(harness: Harness, llm: ScriptedLLMServer, form_tab: Tab) -> None:
    popup = await harness.open_popup(form_tab)
    assert [await popup.text(f"#nav-{view}") for view in ("task", "past", "settings")] == ["任务", "历史", "设置"]
    assert await popup.text("#run") == "运行"
    assert (await popup.js("document.getElementById('task-input').placeholder")).startswith("tabpilot 应该")
    assert await popup.text("#target-tab") == "目标：Signup form"
    assert await popup.js("document.documentElement.lang") == "zh-CN"
    await popup.screenshot(SCREENS / "zh-CN-idle.png")

    await popup.click("#nav-settings")
    await popup.wait_for("document.getElementById('settings-form').dataset.loaded === 'true'", "settings to load")
    assert await popup.js("document.getElementById('set-base-url').placeholder") == "例如 https://api.openai.com/v1"
    assert await popup.text("#settings-test") == "测试连接"
    assert await popup.text("[data-i18n='language']") == "智能体和命令行的语言"
    assert await popup.text("[data-i18n='languageHint']") == (
        "智能体用这种语言工作和回答，tabpilot 命令也使用它。这个弹出窗口则跟随 Chrome 的语言。")
    # a key refused, said in Chinese with the remedy
    await popup.fill("#set-base-url", llm.base_url)
    await popup.fill("#set-model", "scripted")
    await popup.fill("#set-api-key", "sk-wrong-key-0000")
    llm.add(HTTPError(401, "Incorrect API key provided", type="invalid_request_error"))
    await popup.click("#settings-test")
    await popup.wait_for("document.getElementById('test-result').dataset.state === 'failed'", "the test's outcome")
    assert await popup.text("#test-headline") == "API 密钥被拒绝（HTTP 401）。"
    assert await popup.text("#test-remedy") == "请为此接口输入正确的 API 密钥，然后再次测试。"
    await popup.screenshot(SCREENS / "zh-CN-settings.png")

    # a task: status, cards and result in Chinese (the model's own words stay as it wrote them)
    await configure(popup, llm.base_url)
    usage = {"prompt_tokens": 1000, "completion_tokens": 234, "total_tokens": 1234}
    llm.add(ToolCall("AgentOutput", done("表单已找到。").arguments, usage=usage))
    await popup.fill("#task-input", "看看这个页面")
    await popup.click("#run")
    assert await wait_status(popup, "completed", "error", "stopped") == "completed"
    assert await popup.text("#task-status") == "已完成"
    labels = await popup.js("[...document.querySelectorAll('#timeline .card-label')].map(e => e.textContent)")
    assert labels == ["第 1 步"], labels  # (a task no longer opens with a "navigated" observation)
    assert await popup.text("#result-text") == "表单已找到。"
    await popup.screenshot(SCREENS / "zh-CN-completed.png")

    await popup.click("#nav-past")
    await popup.wait_for("document.querySelectorAll('#past-list .past-item').length >= 1", "the past tasks")
    meta = await popup.text("#past-list .past-meta")
    assert "1 步" in meta and "1,234 个 token" in meta, meta
    assert re.search(r"\d{4}年\d{1,2}月\d{1,2}日", meta), meta  # the date in Chinese, too
    await popup.click("#past-list .past-item")
    await popup.wait_for("!document.getElementById('past-detail').hidden", "the detail")
    assert await popup.text("#past-rerun") == "在此重新运行"
    await popup.screenshot(SCREENS / "zh-CN-past-detail.png")
    # no English of the popup's own is left on its page
    own = await own_words(popup)
    assert HAN.search(own)
    left_in_english = set(re.findall(r"[A-Za-z]{3,}", own)) - NAMES
    assert not left_in_english, (left_in_english, own)
    await harness.browser.close_tab(popup.tab.target_id)



async def test_a_failed_task_is_said_in_chinese_by_its_code(harness: Harness, llm: ScriptedLLMServer,
                                                          form_tab: Tab) -> None:
    # the model never calls the tool: no cause the popup once recognised in the host's English
    popup = await harness.open_popup(form_tab)
    await configure(popup, llm.base_url)
    llm.add(*[Text("我想我应该点一下什么。")] * 4)
    await popup.fill("#task-input", "勾选条款")
    await popup.click("#run")
    assert await wait_status(popup, "completed", "error", "stopped") == "error"
    assert await popup.text("#task-status") == "出错"
    assert await popup.text("#result-text") == "模型没有按 tabpilot 需要的格式回答。"
    assert await popup.text("#result-remedy") == "请在设置中选择能力更强的模型（支持工具调用的模型），或者再试一次。"
    # each retry's cause in the host's words for this popup's language (the record keeps its English)
    retries = [c["text"] for c in await popup.cards() if c["type"] == "retry"]
    cause = "模型的回复无法使用：回复中没有对工具 AgentOutput 的调用（文本中也没有 JSON）"
    assert len(retries) == 3 and all(cause in text for text in retries), retries
    await popup.screenshot(SCREENS / "zh-CN-error.png", max_height=600)
    await harness.browser.close_tab(popup.tab.target_id)


async def test_a_tab_it_cannot_work_in_is_said_in_chinese_with_what_to_do(harness: Harness, llm: ScriptedLLMServer
                                                                          ) -> None:
    """A browser page (chrome://) cannot be driven: the popup says so in its language before Run, and what to do there;
    a start there all the same is refused by the host in that language too."""
    browser_page = await harness.browser.new_tab("chrome://version/")
    popup = await harness.open_popup(browser_page)
    await configure(popup, llm.base_url)
    await popup.wait_for("!document.getElementById('tab-unworkable').hidden", "the popup to say it cannot work here")
    assert await popup.text("#tab-unworkable-why") == "tabpilot 无法在此标签页中工作：这是浏览器自己的页面。"
    assert (await popup.text("#tab-unworkable-fix")).startswith("请在此标签页中打开一个网页")
    assert await popup.js("document.getElementById('run').disabled")
    await popup.fill("#task-input", "看看这个页面")
    await popup.js("startTask('看看这个页面', ui.targetTabId).catch(startFailed)")
    await popup.wait_for("!document.getElementById('task-error').hidden", "the error")
    said = await popup.text("#task-error")
    # the whole refusal in Chinese, why included: the worker's English reason ("it shows one of the browser's own
    # pages") was spliced into it
    assert said == ("tabpilot 无法在这个标签页中工作：这是浏览器自己的页面。"
                    "请在这个标签页中打开一个网页（http 或 https），或者换一个标签页，然后重新开始任务。"), said
    assert llm.requests == []
    await popup.screenshot(SCREENS / "zh-CN-browser-page.png", max_height=600)
    for tab in (popup.tab, browser_page):
        await harness.browser.close_tab(tab.target_id)


async def test_a_slow_step_counts_its_seconds_in_chinese(harness: Harness, llm: ScriptedLLMServer,
                                                          form_tab: Tab) -> None:
    llm.add(Delay(6, then=done("看过了。")))
    popup = await harness.open_popup(form_tab)
    await configure(popup, llm.base_url)
    await popup.fill("#task-input", "看看这个页面")
    await popup.click("#run")
    activity = "document.getElementById('activity').textContent"
    await popup.wait_for(f"/^第 1 步 · 思考中… [1-9] 秒$/.test({activity})", "the popup to count seconds in Chinese")
    shown = await wait_overlay(form_tab, "the overlay to count them in Chinese",
                               lambda o: re.fullmatch(r"第 1 步 · 思考中… \d+ 秒", o["thinking"]) is not None)
    assert shown["thinking"], shown
    assert await wait_status(popup, "completed", "error", "stopped") == "completed"
    await harness.browser.close_tab(popup.tab.target_id)


async def test_the_action_under_way_and_then_its_step_card_are_said_in_chinese_on_its_element(
    harness: Harness, llm: ScriptedLLMServer, e2e_pages: LocalFiles
) -> None:
    tab = await harness.browser.new_tab(e2e_pages.url("slow_button.html?ms=5000"))  # a click that takes 5 s
    await wait_until(lambda: tab.evaluate(PAGE_LOADED), "the page to load")
    problems: list[str] = []
    llm.add(act_on("Refresh the list", "click_element_by_index", "刷新列表", problems), done("刷新了。"))
    popup = await harness.open_popup(tab)
    await configure(popup, llm.base_url)
    await popup.fill("#task-input", "刷新列表")
    await popup.click("#run")
    activity = "document.getElementById('activity').textContent"
    await popup.wait_for(f"/^第 1 步 · 正在点击“Refresh the list”… [1-9] 秒$/.test({activity})",
                         "the popup to say the click in Chinese, counting", 30)
    await popup.screenshot(SCREENS / "acting-popup-zh.png", max_height=600)
    assert await wait_status(popup, "completed", "error", "stopped") == "completed", problems
    # done, its card says what it did (the popup's card read "操作 click_element_by_index(index: 2)")
    cards = await popup.js("[...document.querySelectorAll('#timeline .card-step .action .v')]"
                           ".map((v) => v.textContent)")
    assert cards == ["点击了“Refresh the list”", "结束了任务"], cards
    await popup.screenshot(SCREENS / "step-cards-zh.png", max_height=600)
    await harness.browser.close_tab(popup.tab.target_id)
    await harness.browser.close_tab(tab.target_id)


async def test_a_bad_setting_value_is_explained_in_chinese_on_the_settings_page(harness: Harness,
                                                                               form_tab: Tab) -> None:
    """What a user mistypes on the Settings page (a base URL the host cannot use, a domain that is none) is
    explained in the popup's language, not in pydantic's English; nothing is saved. (A URL without a scheme
    is stopped by the browser's own check of the url field first.)"""
    popup = await harness.open_popup(form_tab)
    await popup.click("#nav-settings")
    await popup.wait_for("document.getElementById('settings-form').dataset.loaded === 'true'", "settings to load")
    before = await harness.sw("await requestHost({type: 'settings.get'})")
    await popup.fill("#set-base-url", "ftp://api.openai.com/v1")
    await popup.click("#settings-save")
    await popup.wait_for("!document.getElementById('settings-error').hidden", "the settings error")
    assert await popup.text("#settings-error") == (
        "base-url：必须是 http:// 或 https:// 开头的网址，例如 https://api.openai.com/v1")
    await popup.wait_for("document.getElementById('guards').dataset.loaded === 'true'", "the Safety section")
    await popup.fill("#guards-blocked", "ads.example\nnot a domain!")
    await popup.click("#guards-save")
    await popup.wait_for("!document.getElementById('guards-error').hidden", "the safety error")
    # the line is refused whole, as the host splits it (lines and commas, never spaces)
    assert await popup.text("#guards-error") == ("blocked-domains：'not a domain!' 不是域名：请给出带点的主机名"
                                                 "（例如 example.com）、localhost 或 IP 地址")
    await popup.js("document.getElementById('guards-error').scrollIntoView()")
    await popup.screenshot(SCREENS / "zh-CN-settings-bad-value.png")
    assert await harness.sw("await requestHost({type: 'settings.get'})") == before
    await harness.browser.close_tab(popup.tab.target_id)


async def test_a_past_tasks_errors_are_shown_in_chinese_by_their_code(harness: Harness, form_tab: Tab) -> None:
    """Error events recorded with a code (here: the browser failed, then the record could not be saved) are
    shown in the popup's language in the past task's timeline and result box; the record keeps the English."""
    from tabpilot.store.tasks import TaskStore
    from tabpilot.taskrun.run import error_event

    ended = error_event("not_saved", reason="OperationalError: disk I/O error")
    with TaskStore(harness.tabpilot_home / "data" / "tasks.sqlite3") as store:
        task_id = store.start_task("下单", url="http://127.0.0.1:8/shop.html", model="m", source="popup")
        store.append_event(task_id, error_event("browser_failed", detail="Target closed"))
        store.append_event(task_id, ended)
        store.finish_task(task_id, status="error", result={"success": False, "data": ended["message"]})
    popup = await harness.open_popup(form_tab)
    await popup.open_past(task_id)
    cards = await popup.cards("#past-timeline")
    shown_errors = [c["text"] for c in cards if c["type"] == "error"]
    assert shown_errors == ["错误\n浏览器出错：Target closed"], cards
    # the last error is the result: said once, in the result box, in Chinese
    assert await popup.text("#past-result-text") == (
        "无法保存任务历史（OperationalError: disk I/O error），所以任务已停止：此后它做的事没有记录下来。")
    await popup.screenshot(SCREENS / "zh-CN-past-error.png", max_height=600)
    await harness.browser.close_tab(popup.tab.target_id)


async def test_the_approval_card_asks_and_says_why_in_chinese(harness: Harness, llm: ScriptedLLMServer,
                                                             shop_tab: Tab) -> None:  # noqa: F811
    """The agent wants "Place order": the page's overlay and the side panel ask in Chinese, the reason included
    (the host words it in the connection's language); the action stays as the model named it. Deny: nothing
    reaches the page."""
    problems: list[str] = []
    after: list[dict] = []
    llm.add(act_on("Place order", "click_element_by_index", "下单", problems),
            account_told(after, done("用户没有允许下单", success=False)))
    await configure_host(harness, llm)
    task_id = await start(harness, shop_tab, "买下这本书")
    wants = '智能体想在 127.0.0.1 上执行：点击按钮 "Place order"'  # the action in Chinese too (it read 'click button')
    why = "询问原因：它的名称含有“order”。"
    shown = await wait_overlay(shop_tab, "the overlay to ask in Chinese",
                               lambda o: o["state"] == "approval" and wants in o["reason"])
    assert shown["why"] == why, shown
    await screenshot(shop_tab, "zh-CN-approval-overlay.png")
    panel = await open_panel(harness, shop_tab)
    await panel.wait_for(f"document.getElementById('control-reason').innerText.includes({wants!r})",
                         "the side panel to ask")
    assert await panel.text("#control-reason") == f"{wants}\n{why}"
    assert await panel.text("#approve-deny") == "拒绝"
    await panel.screenshot(SCREENS / "zh-CN-approval-panel.png")
    await panel.click("#approve-deny")
    snap = await ended(harness, task_id)
    assert not problems, problems
    assert await shop_tab.evaluate("window.shopLog") == []  # the page never got the click
    assert [e for e in snap["history"] if e.get("guard") == "denied"], snap["history"]
    denied = [c["text"] for c in await panel.cards() if c["type"] == "denied"]
    assert denied == ['你已拒绝\n你拒绝了：在 127.0.0.1 上 点击按钮 "Place order"。它没有执行。'], denied
    await harness.browser.close_tab(panel.tab.target_id)


async def test_while_the_person_has_the_controls_the_status_says_paused_in_chinese(
    harness: Harness, llm: ScriptedLLMServer, form_tab: Tab
) -> None:
    """Take over in the popup: its status says what the page's overlay says (已暂停), not 运行中. Then Stop: the result
    box, the overlay and the task's row in Past tasks say so in Chinese (they said the record's "Task stopped")."""
    popup = await harness.open_popup(form_tab)
    await configure(popup, llm.base_url)
    llm.add(Delay(60))
    await popup.fill("#task-input", "慢慢想")
    await popup.click("#run")
    await wait_status(popup, "running")
    await popup.wait_for("!document.getElementById('takeover').hidden", "the Take over button")
    await popup.click("#takeover")
    await popup.wait_for("!document.getElementById('handback-box').hidden", "the Hand back box")
    assert await popup.text("#task-status") == "已暂停"
    assert await popup.text("#task-status") == await popup.js("chrome.i18n.getMessage('overlay_paused')")
    await popup.screenshot(SCREENS / "zh-CN-paused.png")
    await popup.click("#stop")
    assert await wait_status(popup, "stopped") == "stopped"
    assert await popup.text("#task-status") == "已停止"
    await popup.wait_for("!document.getElementById('result').hidden", "the stop's result")
    assert await popup.text("#result-text") == "任务已停止"
    await wait_overlay(form_tab, "the overlay to say it stopped", lambda o: o["outcome"] == "任务已停止")
    task_id = await popup_task_id(popup)
    await popup.click("#nav-past")
    row = f"#past-list .past-item[data-task-id='{task_id}'] .past-outcome"
    await popup.wait_for(f"!!document.querySelector({json.dumps(row)})", "the task's row in Past tasks")
    assert await popup.text(row) == "任务已停止"
    await harness.browser.close_tab(popup.tab.target_id)


async def test_a_clients_request_says_which_tab_in_chinese_and_a_no_is_in_past_tasks(
    harness: Harness, form_tab: Tab, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The request card names the person's tab by its title and origin, or a new tab and the site it opens, in
    Chinese; what they said no to is listed in Past tasks as 已拒绝, from whom, and how it ended in Chinese."""
    import asyncio
    from urllib.parse import urlsplit

    from tabpilot.mcp.hostlink import HostLink

    origin = "{0.scheme}://{0.netloc}".format(urlsplit(await form_tab.url()))
    popup = await harness.open_popup()
    monkeypatch.setenv("TABPILOT_HOME", str(harness.tabpilot_home))  # the host's socket, as a client finds it
    link = HostLink("a local program")
    try:
        tab_id, answered = await harness.chrome_tab_id(form_tab), []
        for fields, where in (({"tabId": tab_id}, f"在你的标签页“Signup form”（{origin}）中"),
                              ({"newTab": True, "url": f"{origin}/shop"}, f"在一个新标签页中，打开 {origin}")):
            asking = asyncio.ensure_future(link.request("approval.ask", {"requester": "Claude", "task": "填写表单",
                                                                         **fields}))
            card = await popup.wait_for(  # the card of this request: the one answered before may still be going
                "(() => { const li = [...document.querySelectorAll('#approval-list .approval-card')]"
                f".find(c => !{answered!r}.includes(c.dataset.approvalId));"
                # its place is filled a moment after the card shows (the tab's title is asked of Chromium)
                " return li && !li.closest('[hidden]') && li.querySelector('.approval-where').textContent"
                " ? {id: li.dataset.approvalId, text: li.innerText} : null; })()",
                "the request card, with where it would work")
            assert where in card["text"] and "Claude 想要运行：" in card["text"], card
            await popup.screenshot(SCREENS / f"zh-CN-request-{'new-tab' if 'newTab' in fields else 'tab'}.png",
                                   max_height=600)
            approval_id = card["id"]
            answered.append(approval_id)
            await popup.click(f'.approval-card[data-approval-id="{approval_id}"] button[data-decision="deny"]')
            assert (await asking)["decision"] == "deny"
    finally:
        await link.close()
    await popup.click("#nav-past")
    line = await popup.wait_for(
        "(() => { const li = [...document.querySelectorAll('#past-list .past-item')]"
        ".find(i => i.innerText.includes('填写表单')); return li ? li.innerText : null; })()", "the no in Past tasks")
    assert "已拒绝" in line and "来自 MCP 客户端 Claude" in line and "步" not in line, line
    # how it ended, in Chinese as its detail says it (the list's line was the host's English why)
    assert line.endswith("Claude 请求运行此任务，你拒绝了（或未及时回答）。它没有运行。"), line
    denied = await popup.js("[...document.querySelectorAll('#past-list .past-item')]"
                            ".filter(i => i.innerText.includes('填写表单')).length")
    assert denied == 2  # each no of the person's is recorded
    await popup.screenshot(SCREENS / "zh-CN-past-denied.png", max_height=600)
    await popup.click("#past-list .past-item")
    await popup.wait_for("!document.getElementById('past-detail').hidden", "the request's detail")
    assert await popup.text("#past-result-text") == "Claude 请求运行此任务，你拒绝了（或未及时回答）。它没有运行。"
    await popup.screenshot(SCREENS / "zh-CN-past-denied-detail.png", max_height=600)
    await harness.browser.close_tab(popup.tab.target_id)


async def test_a_navigations_card_and_a_takeovers_card_are_said_in_chinese(
    harness: Harness, llm: ScriptedLLMServer, pages: LocalFiles
) -> None:
    """A new user's trial with the popup in Chinese: the card of the page the agent went to said "Page navigated to
    → …" (the model's note, in the agent's English), and the takeover card 点击了 button "close" (the element's role
    in English). Both are said in Chinese; the page's own words (the address, the element's name) stay as they are.
    Twice: a second task."""
    await configure_host(harness, llm)
    tab = await harness.browser.new_tab(pages.url("takeover_icons.html"))
    try:
        for round_ in range(2):
            there = pages.url(f"eyes_icon_libraries.html?round={round_}")
            after: list[dict] = []
            llm.add(ToolCall("AgentOutput", agent_output("打开图标页", {"go_to_url": {"url": there}})),
                    Delay(60), account_told(after, done("关好了")))
            before = len(llm.requests)
            task_id = await start(harness, tab, f"关掉提示（{round_ + 1}）")
            await wait_until(lambda n=before: _async(len(llm.requests) >= n + 2), "the agent to think on the new page")
            await wait_overlay(tab, "the overlay", lambda o: o["state"] == "running")
            await press_overlay(tab, "takeover")
            await controlled_by_user(harness, task_id)
            box = await page_box(tab, "#octicon-x")
            await user_click(tab, box["x"], box["y"])
            await wait_until(lambda: tab.evaluate("window.clicks.length === 1"), "the page to get the click")
            await wait_until(lambda t=task_id: _async('button \\"close\\"' in open_takeover(harness, t)),
                             "the host to have the click")
            await press_overlay(tab, "handback")
            assert (await ended(harness, task_id))["status"] == "completed"
            screen = "zh-CN-navigation-takeover-cards.png" if round_ == 0 else None
            said, shown = await popup_cards(harness, tab, 1, screen)
            assert said == ['点击了按钮 "close"'], said
            cards = {c["type"]: c["text"] for c in shown}
            assert cards["observation"].endswith(f"\n页面跳转到了 {there}"), cards
            await tab.navigate(pages.url("takeover_icons.html"))
    finally:
        await harness.browser.close_tab(tab.target_id)
