"""Each command's own output and errors follow the language setting (zh-CN → Chinese, en-US → English),
run through the command line's own main() as a user's `tabpilot …` would (store_support.tabpilot), in a throwaway
home."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from store_support import set_language, step, tabpilot

from tabpilot.store.tasks import TaskStore

HAN = re.compile(r"[\u4e00-\u9fff]")
# names and technical tokens that stay as they are in Chinese output
NAMES = {"tabpilot", "sites", "list", "allow", "http", "https", "app", "example", "com", "page", "agent", "revoke",
         "client", "NAME", "MCP", "limit", "history", "json", "ghost", "PageAgentExtUserAuthToken", "secrets",
         "set", "domain", "stdin", "GITHUB_PASSWORD", "GITHUB", "PASSWORD", "github", "NOPE", "config",
         "model", "VALUE", "debug", "capture", "off", "LLM", "chrome", "extensions", "doctor", "Chromium",
         "Chrome", "HKCU", "uninstall", "install", "mcp", "write", "Cursor", "cursor", "claude", "desktop", "vscode",
         "profile",  # installer.py labels a --user-data-dir target "profile DIR" (not a command's own words)
         "language", "never", "irreversible", "every", "auto",  # a setting and its values, typed as they are
         "localhost"}  # the one host name without a dot a domain setting takes


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TABPILOT_HOME", str(tmp_path))
    return tmp_path


def leftover_english(output: str) -> set[str]:
    """Words of three or more Latin letters that are not a name, a token, a flag or a path."""
    words = set(re.findall(r"(?<![\w/.-])[A-Za-z]{3,}(?![\w/.-])", output))
    ids = {w for w in words if re.fullmatch(r"[0-9a-f]+|[a-p]{32}", w)}  # task ids, extension ids
    return words - ids - NAMES


def chinese(result_text: str) -> None:
    assert HAN.search(result_text), result_text
    assert not leftover_english(result_text), (leftover_english(result_text), result_text)


def test_sites_speaks_the_language_setting(home: Path) -> None:
    set_language(home, "zh-CN")
    empty = tabpilot(home, "sites")
    assert "目前没有网站可以启动任务" in empty.stdout
    chinese(empty.stdout)
    allowed = tabpilot(home, "sites", "allow", "https://app.example.com", "--ask", "--all-tabs")
    assert allowed.stdout.strip() == "已允许 https://app.example.com：每个任务前先询问、所有标签页"
    listing = tabpilot(home, "sites", "list")
    assert "https://app.example.com  （每个任务前先询问、所有标签页）" in listing.stdout
    assert "page-agent 令牌（" in listing.stdout
    chinese(listing.stdout)
    assert tabpilot(home, "sites", "revoke", "https://app.example.com").stdout.strip() == \
        "已撤销 https://app.example.com"
    gone = tabpilot(home, "sites", "revoke", "https://app.example.com")
    assert gone.returncode == 1 and "本来就未被允许" in gone.stderr
    chinese(gone.stderr)
    ghost = tabpilot(home, "sites", "revoke-client", "ghost")
    assert ghost.returncode == 1 and "MCP 客户端 'ghost' 本来就不是“始终允许”" in ghost.stderr
    chinese(ghost.stderr)
    assert "新的 page-agent 令牌" in tabpilot(home, "sites", "new-token").stdout

    for origin, words in [
        ("app.example.com", "不是网站来源；请写成 scheme://host[:port]"),
        ("https://*.example.com", "不允许使用通配符"),
        ("https://u:p@example.com", "不能包含用户名或密码"),
    ]:
        refused = tabpilot(home, "sites", "allow", origin)
        assert refused.returncode == 1 and words in refused.stderr, refused.stderr
    sites_file = next(home.rglob("sites.json"))
    sites_file.write_text("{", encoding="utf-8")
    damaged = tabpilot(home, "sites")
    assert damaged.returncode == 1 and f"允许网站文件 {sites_file} 已损坏" in damaged.stderr, damaged.stderr
    assert "请修正或删除它（删除会撤销所有网站）" in damaged.stderr
    sites_file.unlink()

    set_language(home, "en-US")
    assert "is not a web origin" in tabpilot(home, "sites", "allow", "app.example.com").stderr
    assert "No site may start tasks." in tabpilot(home, "sites").stdout
    allowed = tabpilot(home, "sites", "allow", "https://app.example.com", "--use-my-model")
    assert allowed.stdout.strip() == "allowed https://app.example.com: may use your model"
    assert "https://app.example.com  (may use your model)" in tabpilot(home, "sites").stdout
    assert "was not always allowed" in tabpilot(home, "sites", "revoke-client", "ghost").stderr
    assert not HAN.search(tabpilot(home, "sites").stdout)


def test_history_speaks_the_language_setting(home: Path) -> None:
    with TaskStore() as store:
        first = store.start_task("first", url="http://127.0.0.1:8/", model="m")
        second = store.start_task("second", url="http://127.0.0.1:8/", model="m")
        for task_id in (first, second):
            store.finish_task(task_id, status="completed", result={"success": True, "data": "done"})
    set_language(home, "zh-CN")
    bad_limit = tabpilot(home, "history", "--limit", "0")
    assert bad_limit.returncode == 1 and "--limit 至少为 1" in bad_limit.stderr
    more = tabpilot(home, "history", "--limit", "1")
    assert "（最新的 1 个；`tabpilot history --limit N` 可显示更多）" in more.stdout
    out = home / "out.json"
    exported = tabpilot(home, "history", "export", first, "-o", str(out))
    assert exported.stdout.strip() == f"已将任务 {first} 导出到 {out}"
    chinese(exported.stdout)
    nowhere = tabpilot(home, "history", "export", first, "-o", str(home / "no" / "dir" / "x.json"))
    assert nowhere.returncode == 1 and "无法写入" in nowhere.stderr
    deleted = tabpilot(home, "history", "delete", first)
    assert deleted.stdout.strip() == f"已删除任务 {first}"

    set_language(home, "en-US")
    assert "--limit must be at least 1" in tabpilot(home, "history", "--limit", "0").stderr
    assert tabpilot(home, "history", "delete", second).stdout.strip() == f"Deleted task {second}"


def on_screen(line: str, part: str) -> int:
    """The terminal column where `part` starts in `line`: each Chinese character before it takes two."""
    before = line[: line.index(part)]
    return len(before) + len(HAN.findall(before)) + before.count("，")


def record_timeline_task(task: str) -> tuple[str, str]:
    """A finished task with one event of each kind the timeline words, and one still running."""
    with TaskStore() as store:
        task_id = store.start_task(task, url="http://127.0.0.1:8/form.html", model="m")
        store.append_event(task_id, step(0, "Type the name", prompt=1000, completion=50))
        store.append_event(task_id, {"type": "observation", "content": "The URL changed to /thanks"})
        store.append_event(task_id, {"type": "retry", "message": "HTTP 429: slow down", "attempt": 1,
                                     "maxAttempts": 3, "code": "timeout", "params": {"timeout": 30}})
        store.append_event(task_id, {"type": "user_takeover", "actions": [{"description": "clicked Next"}] * 22,
                                     "startedAt": 1_000, "endedAt": 73_000, "note": "odd picker"})
        store.append_event(task_id, {"type": "error", "message": "tab closed once"})
        store.finish_task(task_id, status="completed", result={"success": True, "data": "The form was sent."})
        running = store.start_task("still going", url="http://127.0.0.1:8/", model="m")
    return task_id, running


def test_history_table_and_timeline_speak_the_language_setting(home: Path) -> None:
    set_language(home, "zh-CN")
    empty = tabpilot(home, "history")
    assert empty.stdout.strip() == "还没有记录任何任务。可用 `tabpilot run TASK` 或在扩展的弹出窗口中运行一个。"
    task_id, running = record_timeline_task("Fill in the form")
    table = tabpilot(home, "history").stdout.splitlines()
    assert table[0].split() == ["编号", "开始时间", "状态", "接管", "步数", "令牌数", "来自", "任务"]
    assert table[1].startswith(running) and "运行中" in table[1]
    assert table[2].startswith(task_id) and table[2].split()[3:7] == ["已完成", "你", "1", "1,050"]
    # the columns line up as a terminal shows them: each header starts where its values start
    assert on_screen(table[0], "任务") == on_screen(table[2], "Fill in the form") == on_screen(table[1], "still")
    assert on_screen(table[0], "状态") == on_screen(table[2], "已完成")
    chinese("\n".join(table[:1]))

    shown = tabpilot(home, "history", "show", task_id)
    assert shown.returncode == 0, shown.stderr
    expected_in_order = [
        f"任务 {task_id}：Fill in the form",
        "已完成 · 开始于 ",
        " · 用时 ",
        " · 1 步 · 1,050 个令牌（提示 1,000，补全 50）",
        "页面：http://127.0.0.1:8/form.html",
        "模型：m",
        "第 1 步：Type the name",
        "操作：点击了元素",  # in words (the record names no element); the exact call under it
        "调用：click_element_by_index(",
        "结果：Clicked 1",
        "观察：The URL changed to /thanks",
        "重试 1/3：30 秒内没有回复（超时）",  # the cause in the reader's language, not the stored English
        "你接管了控制，共 1 分 12 秒",
        "……另有 2 项",
        "备注：odd picker",
        "错误：tab closed once",
        "结果（成功）：The form was sent.",
    ]
    positions = [shown.stdout.find(line) for line in expected_in_order]
    assert -1 not in positions, ([t for t, p in zip(expected_in_order, positions, strict=True) if p == -1],
                                 shown.stdout)
    assert positions == sorted(positions)
    still = tabpilot(home, "history", "show", running).stdout
    assert "运行中 · " in still and "（没有记录任何事件）" in still and "结果：暂无：任务仍在运行。" in still

    for args, words in [
        (("show", "zzzz"), "没有 ID 为 'zzzz' 的任务"),
        (("show", " "), "没有给出任务 ID"),
        (("show", ""), "没有给出任务 ID"),
        (("delete", running), f"任务 {running} 仍在运行；请先停止它再删除"),
    ]:
        failed = tabpilot(home, "history", *args)
        assert failed.returncode == 1 and words in failed.stderr, failed.stderr

    set_language(home, "en-US")
    assert f"task {running} is still running; stop it before deleting it" in tabpilot(
        home, "history", "delete", running).stderr
    assert "no task with id 'zzzz'" in tabpilot(home, "history", "show", "zzzz").stderr
    table = tabpilot(home, "history").stdout.splitlines()
    assert table[0].split() == ["ID", "STARTED", "STATUS", "TAKEOVER", "STEPS", "TOKENS", "FROM", "TASK"]
    assert "running" in table[1]
    shown = tabpilot(home, "history", "show", task_id).stdout
    assert "retry 1/3: no reply within 30 s (timeout)" in shown and "you took over for 1 min 12 s" in shown
    assert "\nurl: http://127.0.0.1:8/form.html\nmodel: m\n" in shown, shown
    assert "- … and 2 more" in shown and "Result (success): The form was sent." in shown
    assert "Result: none yet: the task is still running." in tabpilot(home, "history", "show", running).stdout
    assert not HAN.search(shown)


@pytest.mark.parametrize("language", ["zh-CN", "en-US"])
def test_timeline_of_odd_unicode_prints_in_each_language(home: Path, language: str) -> None:
    odd = "Book 🛫✈️ \u05e9\u05dc\u05d5\u05dd \u202eevil\u202c lone \ud800 end"
    set_language(home, language)
    task_id, _ = record_timeline_task(odd)
    with TaskStore() as store:  # from a page: JSON may carry a lone surrogate, which UTF-8 cannot store
        store.append_event(task_id, {"type": "observation", "content": f"page says {odd}"})
    table = tabpilot(home, "history")
    shown = tabpilot(home, "history", "show", task_id)
    for result in (table, shown):
        assert result.returncode == 0, result.stderr
        assert "🛫✈️ \u05e9\u05dc\u05d5\u05dd" in result.stdout and "lone" in result.stdout
    assert ("任务 " if language == "zh-CN" else "Task ") + task_id in shown.stdout
    assert "lone \ufffd end" in shown.stdout and "page says Book" in shown.stdout


@pytest.mark.parametrize(
    ("content", "chinese_words", "english_words"),
    [
        ('{"model": ', "不是有效的 JSON（第 1 行：", "is not valid JSON (line 1: "),
        ("[1, 2]", "必须是一个 JSON 对象；请修正或删除它", "must hold a JSON object; fix it or delete it"),
        ('{"maxSteps": 0}', "中有错误的值：max-steps：不能小于 1", "has a bad value: max-steps: must be at least 1"),
    ],
)
def test_a_damaged_settings_file_is_reported_in_the_terminals_language(
    home: Path, content: str, chinese_words: str, english_words: str
) -> None:
    """The language setting cannot be read from a damaged file: `run` and `config` use the terminal's."""
    from tabpilot import paths

    settings_file = paths.config_path()
    settings_file.parent.mkdir(parents=True, exist_ok=True)
    settings_file.write_text(content, encoding="utf-8")
    chinese_terminal = {"LANGUAGE": "", "LC_ALL": "", "LC_MESSAGES": "", "LANG": "zh_CN.UTF-8"}
    for command in (("config",), ("run", "open the page")):
        shown = tabpilot(home, *command, env=chinese_terminal)
        assert shown.returncode != 0 and f"设置文件 {settings_file} " in shown.stderr, shown.stderr
        assert chinese_words in shown.stderr
        english = tabpilot(home, *command, env={**chinese_terminal, "LANG": "en_US.UTF-8"})
        assert f"the settings file {settings_file} " in english.stderr and english_words in english.stderr
        assert not HAN.search(english.stderr)


def test_secrets_speaks_the_language_setting(home: Path) -> None:
    set_language(home, "zh-CN")
    none = tabpilot(home, "secrets")
    assert "还没有机密" in none.stdout
    chinese(none.stdout)
    saved = tabpilot(home, "secrets", "set", "GITHUB_PASSWORD", "--domain", "github.com", stdin="hunter2-secret")
    assert saved.returncode == 0 and "已将 GITHUB_PASSWORD 保存到" in saved.stdout
    assert "可在 github.com（及其子域名）上使用" in saved.stdout
    chinese(saved.stdout)
    empty = tabpilot(home, "secrets", "set", "NOPE", "--domain", "github.com", stdin="")
    assert empty.returncode == 1 and "没有给出值" in empty.stderr
    chinese(empty.stderr)
    unknown = tabpilot(home, "secrets", "delete", "NOPE")
    assert unknown.returncode == 1 and "没有名为 NOPE 的机密" in unknown.stderr
    chinese(unknown.stderr)
    assert tabpilot(home, "secrets", "delete", "GITHUB_PASSWORD").stdout.strip() == "已删除 GITHUB_PASSWORD"

    set_language(home, "en-US")
    assert "No secrets." in tabpilot(home, "secrets").stdout
    saved = tabpilot(home, "secrets", "set", "GITHUB_PASSWORD", "--domain", "github.com", stdin="hunter2-secret")
    assert "saved GITHUB_PASSWORD for github.com (and its subdomains) in " in saved.stdout
    assert "there is no secret named NOPE" in tabpilot(home, "secrets", "delete", "NOPE").stderr


def test_a_secret_for_a_one_word_domain_is_refused_with_the_domain_settings_words(home: Path) -> None:
    """`shop` is a typo, not a site: refused as the allowed domains refuse it, and nothing is stored."""
    set_language(home, "zh-CN")
    refused = tabpilot(home, "secrets", "set", "SHOP_PIN", "--domain", "shop", stdin="1234-5678")
    assert refused.returncode == 1
    assert refused.stderr.strip() == \
        "tabpilot secrets：'shop' 不是域名：请给出带点的主机名（例如 example.com）、localhost 或 IP 地址"
    set_language(home, "en-US")
    refused = tabpilot(home, "secrets", "set", "SHOP_PIN", "--domain", "shop", stdin="1234-5678")
    assert refused.returncode == 1
    assert "'shop' is not a domain: give a host name with a dot (example.com), localhost or an IP address" \
        in refused.stderr
    assert "SHOP_PIN" not in tabpilot(home, "secrets").stdout
    for domain in ("localhost", "127.0.0.1", "Shop.Example:8443"):
        assert tabpilot(home, "secrets", "set", "SHOP_PIN", "--domain", domain, stdin="1234-5678").returncode == 0
    assert "shop.example" in tabpilot(home, "secrets").stdout


def test_a_secret_for_an_ip_address_is_not_said_to_cover_subdomains(home: Path) -> None:
    set_language(home, "en-US")
    saved = tabpilot(home, "secrets", "set", "LOCAL_TOKEN", "--domain", "127.0.0.1", stdin="tok-123")
    assert saved.returncode == 0 and "saved LOCAL_TOKEN for 127.0.0.1 (that address only) in " in saved.stdout
    assert "subdomains" not in saved.stdout
    set_language(home, "zh-CN")
    saved = tabpilot(home, "secrets", "set", "LOCAL_TOKEN", "--domain", "127.0.0.1", stdin="tok-123")
    assert "仅可在 127.0.0.1 这个地址上使用" in saved.stdout and "子域名" not in saved.stdout, saved.stdout


def test_config_speaks_the_language_setting(home: Path) -> None:
    switched = tabpilot(home, "config", "set", "language", "zh-CN")
    assert switched.stdout.strip() == "language 已设为 zh-CN"  # answered in the language just chosen
    shown = tabpilot(home, "config", env={"OPENAI_API_KEY": ""})
    assert "model           （未设置）" in shown.stdout and "设置文件：" in shown.stdout
    assert "（一次模型调用，含重试）" in shown.stdout and "（所有未被屏蔽的域名）" in shown.stdout
    unknown = tabpilot(home, "config", "set", "colour", "red")
    assert unknown.returncode == 1 and "没有 'colour' 这项设置" in unknown.stderr
    no_value = tabpilot(home, "config", "set", "model")
    assert no_value.returncode == 1 and "请给出一个值：tabpilot config set model VALUE" in no_value.stderr
    chinese(no_value.stderr)
    debug = tabpilot(home, "config", "set", "debug-capture", "on")
    assert "会保存在任务历史中" in debug.stdout
    chinese(debug.stdout)
    assert tabpilot(home, "config", "unset", "debug-capture").stdout.strip() == "debug-capture 已恢复为 off"

    switched = tabpilot(home, "config", "set", "language", "en-US")
    assert switched.stdout.strip() == "language set to en-US"
    shown = tabpilot(home, "config", env={"OPENAI_API_KEY": ""})
    assert "model           (not set)" in shown.stdout and "settings file: " in shown.stdout
    assert "give a value: tabpilot config set model VALUE" in tabpilot(home, "config", "set", "model").stderr


def test_install_and_uninstall_speak_the_language_setting(home: Path, tmp_path: Path) -> None:
    profile = tmp_path / "profile"
    profile.mkdir()
    set_language(home, "zh-CN")
    installed = tabpilot(home, "install", "--browser", "chromium", "--user-data-dir", str(profile))
    assert installed.returncode == 0, installed.stderr
    assert "启动程序：" in installed.stdout and "已为 " in installed.stdout and "允许的扩展：" in installed.stdout
    assert "点击“加载已解压的扩展程序”" in installed.stdout and "“立即重新连接”" in installed.stdout
    chinese(installed.stdout)
    removed = tabpilot(home, "uninstall", "--browser", "chromium", "--user-data-dir", str(profile))
    assert removed.stdout.startswith("已删除 ")
    chinese(removed.stdout)
    again = tabpilot(home, "uninstall", "--browser", "chromium", "--user-data-dir", str(profile))
    assert again.stdout.strip() == "没有可删除的内容：主机没有在那里注册"

    set_language(home, "en-US")
    installed = tabpilot(home, "install", "--browser", "chromium", "--user-data-dir", str(profile))
    assert "launcher: " in installed.stdout and 'click "Load unpacked"' in installed.stdout
    assert tabpilot(home, "uninstall", "--browser", "chromium", "--user-data-dir", str(profile)).stdout.startswith(
        "removed ")


def test_mcp_config_speaks_the_language_setting(home: Path, tmp_path: Path) -> None:
    user_home = {"HOME": str(tmp_path / "user"), "XDG_CONFIG_HOME": str(tmp_path / "user" / ".config")}
    set_language(home, "zh-CN")
    which = tabpilot(home, "mcp", "config", env=user_home)
    assert "tabpilot mcp config：请指明客户端：--client " in which.stderr
    chinese(which.stderr)
    printed = tabpilot(home, "mcp", "config", "--client", "cursor", env=user_home)
    assert printed.returncode == 0 and "或加上 --write 再运行一次" in printed.stderr
    written = tabpilot(home, "mcp", "config", "--client", "cursor", "--write", env=user_home)
    assert written.returncode == 0 and "已把 tabpilot 加入 Cursor 的 MCP 服务器" in written.stdout
    assert "重启 Cursor 后即可使用" in written.stdout
    chinese(written.stdout)

    again = tabpilot(home, "mcp", "config", "--client", "cursor", "--write", env=user_home)
    assert "tabpilot 已经在 Cursor 的 MCP 服务器" in again.stdout and "没有改动" in again.stdout
    chinese(again.stdout)

    set_language(home, "en-US")
    written = tabpilot(home, "mcp", "config", "--client", "cursor", "--write", "--approve", "always", env=user_home)
    assert "Added tabpilot to Cursor's MCP servers in " in written.stdout
    assert "restart Cursor to use it." in written.stdout


BAD_VALUES = [  # (setting, value, Chinese words, English words): the common kinds of bad value
    ("max-steps", "many", "max-steps：必须是整数，例如 40", "max-steps: must be a whole number, e.g. 40"),
    ("max-steps", "0", "max-steps：不能小于 1", "max-steps: must be at least 1"),
    ("model-deadline", "9999", "model-deadline：不能大于 3600", "model-deadline: must be at most 3600"),
    ("max-reply-mb", "0", "max-reply-mb：必须大于 0", "max-reply-mb: must be more than 0"),
    ("model-deadline", "soon", "model-deadline：必须是数字，例如 120", "model-deadline: must be a number, e.g. 120"),
    ("debug-capture", "maybe", "debug-capture：必须是 on 或 off", "debug-capture: must be on or off"),
    ("ask-before", "sometimes", "ask-before：必须是以下之一：never, irreversible, every",
     "ask-before: must be one of never, irreversible, every"),
    ("language", "fr", "language：必须是以下之一：en-US, zh-CN", "language: must be one of en-US, zh-CN"),
    ("base-url", "api.openai.com/v1", "base-url：必须是 http:// 或 https:// 开头的网址，例如 https://api.openai.com/v1",
     "base-url: must be an http:// or https:// URL, e.g. https://api.openai.com/v1"),
    ("allowed-domains", "shop.example, b!", "allowed-domains：'b!' 不是域名：请给出带点的主机名（例如 example.com）、"
     "localhost 或 IP 地址", "allowed-domains: 'b!' is not a domain: give a host name with a dot (example.com), "
     "localhost or an IP address"),
]


@pytest.mark.parametrize(("key", "value", "chinese_words", "english_words"), BAD_VALUES,
                         ids=[f"{key}={value}" for key, value, *_ in BAD_VALUES])
def test_a_bad_setting_value_is_explained_in_the_language_setting(
    home: Path, key: str, value: str, chinese_words: str, english_words: str
) -> None:
    set_language(home, "zh-CN")
    refused = tabpilot(home, "config", "set", key, value)
    assert refused.returncode == 1 and refused.stderr.strip() == f"tabpilot config：{chinese_words}", refused.stderr
    chinese(refused.stderr.replace(value, ""))  # the value as typed is the user's own
    set_language(home, "en-US")
    refused = tabpilot(home, "config", "set", key, value)
    assert refused.returncode == 1 and refused.stderr.strip() == f"tabpilot config: {english_words}", refused.stderr


def test_a_task_without_text_is_refused_in_the_language_setting_before_a_browser_starts(home: Path) -> None:
    configured = {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
    set_language(home, "zh-CN")
    assert tabpilot(home, "config", "set", "model", "m").returncode == 0
    for task in (" ", ""):
        refused = tabpilot(home, "run", task, env=configured)
        assert refused.returncode == 2 and refused.stderr.strip() == "tabpilot：任务需要一段文字说明要做什么", refused
        chinese(refused.stderr)
    assert "还没有记录任何任务" in tabpilot(home, "history").stdout  # nothing recorded
    set_language(home, "en-US")
    refused = tabpilot(home, "run", " ", env=configured)
    assert refused.returncode == 2 and refused.stderr.strip() == "tabpilot: a task needs some text saying what to do"


def test_error_events_are_read_in_the_language_setting_and_recorded_in_english(home: Path) -> None:
    """An error event names its cause by code: `history show` words it in the reader's language, the record
    and the export keep page-agent's English `message`; an older row without a code keeps its text."""
    from tabpilot.agent.types import ErrorEvent
    from tabpilot.llm.errors import LLMAuthError
    from tabpilot.taskrun.run import error_event

    refused = LLMAuthError(code="key_refused", params={"status": 401, "base_url": "http://x/v1", "detail": "nope"})
    with TaskStore() as store:
        task_id = store.start_task("Fill in the form", url="http://127.0.0.1:8/form.html", model="m")
        store.append_event(task_id, ErrorEvent(message=refused.message, code=refused.code,
                                               params=refused.params).to_wire())
        store.append_event(task_id, error_event("not_saved", reason="OperationalError: disk I/O error"))
        store.append_event(task_id, {"type": "error", "message": "an older record said this"})
        store.finish_task(task_id, status="error", result={"success": False, "data": "stopped"})
    set_language(home, "zh-CN")
    shown = tabpilot(home, "history", "show", task_id)
    assert "错误：服务商拒绝了 API 密钥（HTTP 401，来自 http://x/v1：nope）。" in shown.stdout, shown.stdout
    assert "错误：无法保存任务历史（OperationalError: disk I/O error），所以任务已停止" in shown.stdout
    assert "错误：an older record said this" in shown.stdout
    errors = [line for line in shown.stdout.splitlines() if "错误：" in line]
    chinese("\n".join(errors[1:2]).replace("OperationalError: disk I/O error", ""))
    exported = json.loads(tabpilot(home, "history", "export", task_id).stdout)
    messages = [event["message"] for event in exported["history"] if event["type"] == "error"]
    assert messages[1] == ("The task's history could not be saved (OperationalError: disk I/O error), so the task "
                           "was stopped: what it did after that point is not in the record.")
    assert messages[0].startswith("The provider refused the API key (HTTP 401 from http://x/v1: nope).")
    set_language(home, "en-US")
    shown = tabpilot(home, "history", "show", task_id)
    assert "error: The task's history could not be saved (OperationalError: disk I/O error)" in shown.stdout
    assert not HAN.search(shown.stdout)


def test_a_refused_secret_is_explained_in_the_language_setting(home: Path) -> None:
    set_language(home, "zh-CN")
    refused = [tabpilot(home, "secrets", "set", "1PW", "--domain", "github.com", stdin="long-value"),
               tabpilot(home, "secrets", "set", "PIN", "--domain", "github.com", stdin="123"),
               tabpilot(home, "secrets", "set", "PIN", "--domain", "x y!", stdin="long-value")]
    assert [r.returncode for r in refused] == [1, 1, 1]
    assert refused[0].stderr.strip() == ("tabpilot secrets：'1PW' 不能用作机密名称：请以字母开头，后面是字母、数字、"
                                         "_ . 或 -（最多 64 个），例如 GITHUB_PASSWORD")
    assert refused[1].stderr.strip() == "tabpilot secrets：机密的值至少需要 4 个字符"
    assert refused[2].stderr.strip() == \
        "tabpilot secrets：'x y!' 不是域名：请给出带点的主机名（例如 example.com）、localhost 或 IP 地址"
    for result in refused:
        chinese(result.stderr)
    set_language(home, "en-US")
    short = tabpilot(home, "secrets", "set", "PIN", "--domain", "github.com", stdin="123")
    assert short.stderr.strip() == "tabpilot secrets: a secret's value needs at least 4 characters"


def test_a_bad_allow_domain_for_one_run_is_explained_in_the_language_setting(home: Path) -> None:
    """`tabpilot run --allow-domain` with something that is no domain: refused before any browser starts, the
    reason (not only the words around it) in the language setting."""
    run = ("run", "Buy the book", "--allow-domain", "shop", "--model", "m", "--base-url", "http://127.0.0.1:9/v1",
           "--api-key", "sk-0123456789abcdef")
    set_language(home, "zh-CN")
    refused = tabpilot(home, *run)
    assert refused.returncode == 2 and refused.stderr.strip() == (
        "tabpilot：允许的域名：'shop' 不是域名：请给出带点的主机名（例如 example.com）、localhost 或 IP 地址"), refused
    chinese(refused.stderr.replace("'shop'", ""))
    set_language(home, "en-US")
    refused = tabpilot(home, *run)
    assert refused.returncode == 2 and refused.stderr.strip() == (
        "tabpilot: allowed domain: 'shop' is not a domain: give a host name with a dot (example.com), localhost "
        "or an IP address"), refused


def test_help_and_argparse_errors_speak_the_language_setting(home: Path) -> None:
    set_language(home, "zh-CN")
    overview = tabpilot(home, "--help")
    assert overview.returncode == 0 and overview.stdout.startswith("用法：tabpilot"), overview.stdout
    assert "\n选项：\n" in overview.stdout and "显示此帮助信息并退出" in overview.stdout
    assert "在浏览器中运行一个任务，并打印每一步" in overview.stdout
    commands = {"COMMAND", "state", "run", "demo", "history", "secrets", "sites", "host", "Base", "URL", "API",
                "Claude", "Desktop", "Cursor", "Code"}  # the commands' names and the products named
    assert not leftover_english(overview.stdout) - commands, leftover_english(overview.stdout) - commands
    run_help = " ".join(tabpilot(home, "run", "--help").stdout.split())  # argparse wraps to the terminal's width
    assert "智能体要做什么，用平常的话说" in run_help and "不经询问就执行需要你批准的操作" in run_help, run_help
    config_help = tabpilot(home, "config", "--help").stdout
    assert "扩展的弹出窗口则跟随 Chrome 自己的语言" in config_help, config_help

    unknown = tabpilot(home, "config", "fetch", "model")
    assert unknown.returncode == 2
    said = "tabpilot config：错误：参数 ACTION：无效的选择：'fetch'（可选：'list', 'get', 'set', 'unset'）"
    assert said in unknown.stderr, unknown.stderr
    missing = tabpilot(home, "run")
    assert "tabpilot run：错误：缺少以下必需参数：task" in missing.stderr and "用法：" in missing.stderr, missing.stderr
    steps = tabpilot(home, "run", "x", "--max-steps", "lots")
    assert "tabpilot run：错误：参数 --max-steps：必须是整数，例如 40" in steps.stderr, steps.stderr
    assert "usage" not in missing.stderr + steps.stderr + unknown.stderr

    set_language(home, "en-US")
    overview = tabpilot(home, "--help")
    assert overview.stdout.startswith("usage: tabpilot") and "\noptions:\n" in overview.stdout
    assert "run a task in a browser, printing each step" in overview.stdout
    unknown = tabpilot(home, "config", "fetch", "model")
    said = "tabpilot config: error: argument ACTION: invalid choice: 'fetch' (choose from 'list', 'get', 'set', " \
           "'unset')"
    assert said in unknown.stderr, unknown.stderr
    steps = tabpilot(home, "run", "x", "--max-steps", "lots")
    assert "tabpilot run: error: argument --max-steps: must be a whole number, e.g. 40" in steps.stderr, steps.stderr


def test_doctor_and_a_missing_recording_speak_the_language_setting(home: Path) -> None:
    set_language(home, "zh-CN")
    nowhere = home / "nowhere"
    doctor = tabpilot(home, "doctor", "--user-data-dir", str(nowhere), "--skip-llm")
    # a value that begins in Chinese takes no space before it in a Chinese sentence; a path keeps its spaces
    assert f"本机主机（native host）尚未为配置文件夹 {nowhere} 注册" in doctor.stdout, doctor.stdout
    assert 'Chromium 的报错："Specified native messaging host not found."' in doctor.stdout, doctor.stdout
    missing = tabpilot(home, "run", "x", "--replay", str(home / "nope.json"))
    assert missing.returncode == 2
    assert missing.stderr.strip() == f"tabpilot run：{home / 'nope.json'}：没有这个录制文件", missing.stderr
    gone = tabpilot(home, "history", "show", "zzzz")
    assert gone.stderr.startswith("tabpilot history："), gone.stderr  # the same colon as every other command's

    set_language(home, "en-US")
    doctor = tabpilot(home, "doctor", "--user-data-dir", str(nowhere), "--skip-llm")
    assert f"the native host is not registered for profile {nowhere}" in doctor.stdout, doctor.stdout
    assert 'Chromium says: "Specified native messaging host not found."' in doctor.stdout, doctor.stdout
    missing = tabpilot(home, "run", "x", "--replay", str(home / "nope.json"))
    assert missing.stderr.strip() == f"tabpilot run: {home / 'nope.json'}: no such recording file", missing.stderr


def test_options_that_do_not_go_together_are_said_in_the_language_setting(home: Path) -> None:
    set_language(home, "zh-CN")
    for args, said in [
        (("state", "--cdp-url", "ws://127.0.0.1:9", "--user-data-dir", "d"),
         "tabpilot state：--user-data-dir 用于 tabpilot 启动的浏览器"),
        (("run", "x", "--cdp-url", "ws://127.0.0.1:9", "--user-data-dir", "d"),
         "tabpilot：--user-data-dir 用于 tabpilot 启动的浏览器"),
        (("mcp", "--headless"), "tabpilot mcp：--headless 和 --browser 用于 --launch（或 --fallback launch）"),
        (("mcp", "--launch", "--approve", "ask"), "tabpilot mcp：--approve ask 需要你浏览器中的 tabpilot 弹出窗口"),
        (("mcp", "--client", "cursor"), "tabpilot mcp：--client 和 --write 要与 `tabpilot mcp config` 一起使用"),
    ]:
        refused = tabpilot(home, *args)
        assert refused.returncode == 2 and refused.stderr.startswith(said), refused.stderr
    set_language(home, "en-US")
    refused = tabpilot(home, "run", "x", "--cdp-url", "ws://127.0.0.1:9", "--user-data-dir", "d")
    assert refused.stderr.startswith("tabpilot: --user-data-dir is for a browser tabpilot launches"), refused.stderr
