"""Settings file and `tabpilot config`: owner-only file, atomic writes, the key never shown whole."""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path

import pytest
from store_support import API_KEY, tabpilot, tabpilot_process

from tabpilot.llm.config import endpoint_config
from tabpilot.store.settings import (
    Settings,
    SettingsError,
    api_key_hint,
    apply_changes,
    load_settings,
    public_view,
    save_settings,
)

owner_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX permission bits")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TABPILOT_HOME", str(tmp_path))
    return tmp_path


def config_here(home: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """`tabpilot config ARGS` in `home`: its exit code, stdout and stderr."""
    done = tabpilot(home, "config", *args, env=env)
    return done.returncode, done.stdout, done.stderr


def config_file(home: Path) -> Path:
    return home / "config" / "config.json"


def test_missing_file_gives_defaults(home: Path) -> None:
    settings = load_settings()
    assert settings == Settings()
    assert (settings.max_steps, settings.language, settings.debug_capture) == (40, "en-US", False)
    assert settings.api_key is None and settings.model is None and settings.base_url is None


@owner_only
def test_saved_file_is_owner_only_camel_case_and_round_trips(home: Path) -> None:
    settings = Settings(baseURL="http://127.0.0.1:9/v1", model="m", apiKey=API_KEY, maxSteps=7, debugCapture=True)
    save_settings(settings)
    path = config_file(home)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert json.loads(path.read_text()) == {
        "baseURL": "http://127.0.0.1:9/v1",
        "model": "m",
        "apiKey": API_KEY,
        "maxSteps": 7,
        "debugCapture": True,
    }  # not the language nobody chose: written, it would be taken for a choice (the CLI stops following LANG)
    assert load_settings() == settings
    assert [p.name for p in path.parent.iterdir()] == ["config.json"]  # no temp file left behind


@owner_only
def test_saving_over_a_world_readable_file_makes_it_owner_only(home: Path) -> None:
    path = config_file(home)
    path.parent.mkdir(parents=True)
    path.write_text("{}")
    path.chmod(0o644)
    save_settings(Settings(apiKey=API_KEY))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_failed_save_leaves_the_old_file_whole(home: Path) -> None:
    save_settings(Settings(model="old"))

    class Unserialisable(Settings):
        def to_file(self) -> dict:
            raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        save_settings(Unserialisable(model="new"))
    assert load_settings().model == "old"


def test_unknown_keys_in_the_file_are_kept(home: Path) -> None:
    path = config_file(home)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"model": "m", "fromNewerVersion": {"a": 1}}))
    save_settings(apply_changes(load_settings(), {"maxSteps": 9}))
    assert json.loads(path.read_text())["fromNewerVersion"] == {"a": 1}


@pytest.mark.parametrize(
    ("content", "message"),
    [("{not json", "not valid JSON"), ("[1, 2]", "JSON object"), ('{"maxSteps": -3}', "max-steps")],
)
def test_a_broken_file_is_reported_clearly(home: Path, content: str, message: str) -> None:
    path = config_file(home)
    path.parent.mkdir(parents=True)
    path.write_text(content)
    with pytest.raises(SettingsError, match=message) as caught:
        load_settings()
    assert str(path) in str(caught.value)


def test_changes_accept_every_spelling_and_none_resets() -> None:
    settings = apply_changes(
        Settings(), {"baseURL": "https://api.example.com/v1/", "max_steps": "12", "api-key": "k" * 20}
    )
    assert settings.base_url == "https://api.example.com/v1"
    assert settings.max_steps == 12
    assert apply_changes(settings, {"maxSteps": None}).max_steps == 40
    assert apply_changes(settings, {"apiKey": ""}).api_key is None


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"base-url": "api.example.com"}, "base-url: must be an http"),
        ({"maxSteps": 0}, "max-steps: must be at least 1"),
        ({"max-steps": "many"}, "max-steps"),
        ({"language": "fr"}, "language: must be one of en-US, zh-CN"),
        ({"debugCapture": "perhaps"}, "debug-capture"),
        ({"colour": "red"}, "unknown setting 'colour'"),
    ],
)
def test_bad_changes_are_refused_with_the_setting_named(changes: dict, message: str) -> None:
    with pytest.raises(SettingsError, match=message):
        apply_changes(Settings(), changes)


def test_public_view_shows_a_hint_never_the_key() -> None:
    view = public_view(Settings(apiKey=API_KEY, model="m"))
    assert view["apiKeySet"] is True
    assert view["apiKeyHint"] == "sk-…stuv"
    assert API_KEY not in json.dumps(view)
    assert "apiKey" not in view
    assert public_view(Settings())["apiKeySet"] is False
    assert public_view(Settings())["apiKeyHint"] is None
    # Short keys: the hint gives away almost nothing.
    assert api_key_hint("abcdefghij") == "…ij"
    assert api_key_hint("abc") == "…"
    assert API_KEY not in repr(Settings(apiKey=API_KEY))


# --- `tabpilot config` as a user runs it --------------------------------------------------------------


def test_config_cli_set_show_unset(tmp_path: Path) -> None:
    assert tabpilot(tmp_path, "config", "set", "model", "gpt-test").returncode == 0
    assert tabpilot(tmp_path, "config", "set", "base-url", "http://127.0.0.1:8000/v1").returncode == 0
    assert tabpilot(tmp_path, "config", "set", "max-steps", "25").returncode == 0
    capture = tabpilot(tmp_path, "config", "set", "debug-capture", "on")
    assert capture.returncode == 0 and "page content" in capture.stdout
    done = tabpilot(tmp_path, "config", "set", "api-key", API_KEY)
    assert done.returncode == 0
    assert API_KEY not in done.stdout + done.stderr
    assert "sk-…stuv" in done.stdout

    shown = tabpilot(tmp_path, "config")
    assert shown.returncode == 0
    assert API_KEY not in shown.stdout
    lines = dict(line.split(None, 1) for line in shown.stdout.splitlines()[:6])
    assert lines == {
        "base-url": "http://127.0.0.1:8000/v1",
        "model": "gpt-test",
        "api-key": "sk-…stuv",
        "max-steps": "25",
        "language": "en-US (not set: the terminal's language)",
        "debug-capture": "on",
    }
    as_json = json.loads(tabpilot(tmp_path, "config", "--json").stdout)
    assert as_json["apiKeySet"] is True and API_KEY not in json.dumps(as_json)

    saved = json.loads(config_file(tmp_path).read_text())
    assert saved["apiKey"] == API_KEY and saved["maxSteps"] == 25 and saved["debugCapture"] is True
    if sys.platform != "win32":
        assert stat.S_IMODE(config_file(tmp_path).stat().st_mode) == 0o600

    assert tabpilot(tmp_path, "config", "unset", "api-key").returncode == 0
    assert tabpilot(tmp_path, "config", "unset", "max-steps").returncode == 0
    saved = json.loads(config_file(tmp_path).read_text())
    assert "apiKey" not in saved and "maxSteps" not in saved and saved["model"] == "gpt-test"


def test_config_writes_only_the_settings_the_user_set_and_unset_removes_one(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in (("LANGUAGE", ""), ("LC_ALL", ""), ("LC_MESSAGES", ""), ("LANG", "zh_CN.UTF-8")):
        monkeypatch.setenv(name, value)  # a Chinese terminal
    assert config_here(home, "set", "model", "gpt-test")[0] == 0
    assert json.loads(config_file(home).read_text()) == {"model": "gpt-test"}
    follows = tabpilot_process(home, "config", "set", "max-steps", "7")  # as the user runs it
    assert follows.stdout.strip() == "max-steps 已设为 7"  # still the terminal's language
    assert json.loads(config_file(home).read_text()) == {"model": "gpt-test", "maxSteps": 7}

    assert config_here(home, "set", "language", "en-US")[0] == 0
    chosen = config_here(home, "set", "model", "gpt-other")
    assert chosen[1].strip() == "model set to gpt-other"  # chosen, it wins over LANG
    code, unset, _ = config_here(home, "unset", "language")
    # back to the terminal's language, which these commands speak again, and said so: not the en-US default a new
    # user read under LANG=zh_CN while the CLI spoke Chinese
    assert code == 0
    assert unset.strip() == "language 已恢复为 zh-CN（未设置：沿用终端的语言）"
    assert json.loads(config_file(home).read_text()) == {"model": "gpt-other", "maxSteps": 7}
    listed = config_here(home)[1]
    assert "language        zh-CN（未设置：沿用终端的语言）" in listed and "en-US" not in listed
    monkeypatch.setenv("LANG", "en_GB.UTF-8")
    assert config_here(home, "get", "language")[1].strip() == "en-US (not set: the terminal's language)"
    config_here(home, "set", "language", "zh-CN")
    assert config_here(home, "get", "language")[1].strip() == "zh-CN"  # chosen: as set


def test_config_cli_reads_the_key_from_stdin(tmp_path: Path) -> None:
    done = tabpilot(tmp_path, "config", "set", "api-key", stdin=API_KEY + "\n")
    assert done.returncode == 0, done.stderr
    assert API_KEY not in done.stdout
    assert json.loads(config_file(tmp_path).read_text())["apiKey"] == API_KEY
    empty = tabpilot(tmp_path, "config", "set", "api-key", "-", stdin="")
    assert empty.returncode == 1 and "no API key" in empty.stderr
    assert json.loads(config_file(tmp_path).read_text())["apiKey"] == API_KEY


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("config", "set", "colour", "red"), "unknown setting 'colour'"),
        (("config", "set", "max-steps", "0"), "max-steps: must be at least 1"),
        (("config", "set", "language", "xx"), "language: must be one of"),
        (("config", "set", "base-url", "localhost:8000"), "base-url: must be an http"),
        (("config", "set", "model"), "give a value"),
        # a setting with few values names them all
        (("config", "set", "ask-before"), "give one of never | irreversible | every: tabpilot config set ask-before"),
        (("config", "set", "mask-emails"), "give one of on | off"),
        (("config", "set", "language"), "give one of en-US | zh-CN"),
        (("config", "unset", "nope"), "unknown setting"),
    ],
)
def test_config_cli_refuses_bad_input_and_keeps_the_file(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    save_settings(Settings(model="kept"), config_file(tmp_path))  # set up as `config set model kept` leaves it
    before = config_file(tmp_path).read_text()
    done = tabpilot(tmp_path, *args)
    assert done.returncode == 1
    assert message in done.stderr
    assert "Traceback" not in done.stderr
    assert config_file(tmp_path).read_text() == before


def test_config_cli_reports_a_corrupt_file(tmp_path: Path) -> None:
    config_file(tmp_path).parent.mkdir(parents=True)
    config_file(tmp_path).write_text("{oops")
    done = tabpilot(tmp_path, "config")
    assert done.returncode == 1
    assert "not valid JSON" in done.stderr and "Traceback" not in done.stderr


def test_config_cli_mentions_a_key_from_the_environment_without_showing_it(tmp_path: Path) -> None:
    done = tabpilot(tmp_path, "config", env={"OPENAI_API_KEY": "from-env-should-not-show"})
    assert "OPENAI_API_KEY from the environment" in done.stdout
    assert "from-env-should-not-show" not in done.stdout


def test_config_list_and_get_show_what_config_shows_and_never_the_key(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Found by a new user: `tabpilot config list` and `tabpilot config get KEY` did not exist.
    from tabpilot.commands.config import KEYS

    tmp_path = home
    assert config_here(home, "set", "model", "gpt-test")[0] == 0
    assert config_here(home, "set", "api-key", API_KEY)[0] == 0
    listed = tabpilot_process(tmp_path, "config", "list")  # once as the user runs it
    assert listed.returncode == 0 and listed.stdout == config_here(home)[1], listed.stderr
    assert config_here(home, "list", "--json")[1] == config_here(home, "--json")[1]
    rows = dict(line.split(None, 1) for line in listed.stdout.splitlines() if line and not line.startswith("settings"))
    assert sorted(rows) == sorted(KEYS)
    for key in KEYS:  # each one as the list shows it
        got = config_here(home, "get", key)
        assert got[:2] == (0, rows[key] + "\n"), (key, got)
    _, out, err = config_here(home, "get", "api-key")
    assert out == "sk-…stuv\n" and API_KEY not in out + err
    assert config_here(home, "get", "model")[1] == "gpt-test\n"
    assert config_here(home, "unset", "api-key")[0] == 0
    assert config_here(home, "get", "api-key")[1] == "(not set)\n"
    from_env = config_here(home, "get", "api-key", env={"OPENAI_API_KEY": "from-env-should-not-show"})
    assert from_env[1] == "(not set; OPENAI_API_KEY from the environment is used)\n"

    assert config_here(home, "get", "colour") == (
        1, "", f"tabpilot config: unknown setting 'colour'; settings are: {', '.join(KEYS)}\n")
    with monkeypatch.context() as env:
        for name, value in (("LANGUAGE", ""), ("LC_ALL", ""), ("LANG", "zh_CN.UTF-8")):
            env.setenv(name, value)
        chinese = config_here(home, "get", "colour")
    assert chinese[2].startswith("tabpilot config：没有 'colour' 这项设置；可用的设置有：base-url"), chinese
    # a near miss is named (a new user typed max-step)
    for typed, meant in (("max-step", "max-steps"), ("max_steps", "max-steps"), ("modle", "model")):
        said = f"tabpilot config: unknown setting '{typed}'; did you mean {meant}?\n"
        assert config_here(home, "set", typed, "5") == (1, "", said)


def test_model_deadline_and_reply_limit_are_settings_the_cli_shows_and_changes(tmp_path: Path) -> None:
    proc = tabpilot(tmp_path, "config", "set", "model-deadline", "45")
    assert proc.returncode == 0 and "model-deadline set to 45" in proc.stdout, proc.stderr
    assert tabpilot(tmp_path, "config", "set", "max-reply-mb", "2").returncode == 0
    shown = tabpilot(tmp_path, "config").stdout
    assert "model-deadline  45 s (one model call, retries included)" in shown and "max-reply-mb    2 MB" in shown
    settings = load_settings(tmp_path / "config" / "config.json")
    assert (settings.model_deadline, settings.max_reply_bytes) == (45, 2 * 1024 * 1024)
    refused = tabpilot(tmp_path, "config", "set", "model-deadline", "0")
    assert refused.returncode == 1 and "model-deadline: must be at least 5" in refused.stderr
    config = endpoint_config(settings_base_url=None, settings_model="m", settings_api_key=None,
                             call_deadline=settings.model_deadline, max_reply_bytes=settings.max_reply_bytes)
    assert (config.call_deadline, config.max_reply_bytes) == (45, 2 * 1024 * 1024)


@pytest.mark.parametrize(("language", "words"),
                         [("en-US", "(any domain not blocked)"), ("zh-CN", "（所有未被屏蔽的域名）")])
def test_allowed_domains_reads_the_same_when_reset_as_in_the_listing(tmp_path: Path, language: str, words: str) -> None:
    assert tabpilot(tmp_path, "config", "set", "language", language).returncode == 0
    assert tabpilot(tmp_path, "config", "set", "allowed-domains", "shop.example").returncode == 0
    reset = tabpilot(tmp_path, "config", "unset", "allowed-domains")
    assert reset.returncode == 0, reset.stderr
    assert reset.stdout.strip().endswith(words), reset.stdout
    [listed] = [line for line in tabpilot(tmp_path, "config").stdout.splitlines() if "allowed-domains" in line]
    assert listed.endswith(words), listed
