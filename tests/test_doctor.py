"""`tabpilot doctor` as a user runs it (the command line's own main() here, once a subprocess): a healthy install
passes (a real framed hello went through the launcher), each broken manifest is reported with Chromium's message
and the fix."""

from __future__ import annotations

import http.server
import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import ClassVar

import pytest
from cli_support import tabpilot_here
from llm_support import web_server
from native_support import HostProcess

from tabpilot.installer import bundled_extension_id
from tabpilot.store.settings import Settings, save_settings

BUNDLED_ID = bundled_extension_id()
GOOD_KEY = "sk-doctor-good-key-0000000000"


class ModelsHandler(http.server.BaseHTTPRequestHandler):
    seen: ClassVar[list[str]] = []

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        ModelsHandler.seen.append(f"{self.path} {self.headers.get('Authorization')}")
        ok = self.path == "/v1/models" and self.headers.get("Authorization") == f"Bearer {GOOD_KEY}"
        body = json.dumps({"data": [{"id": "test-model"}]} if ok else {"error": {"message": "bad key"}}).encode()
        self.send_response(200 if ok else 401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def models_server():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), ModelsHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


@pytest.fixture
def setup(tmp_path):
    env = {**os.environ, "HOME": str(tmp_path / "user"), "TABPILOT_HOME": str(tmp_path / "tabpilot")}
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "XDG_CONFIG_HOME"):
        env.pop(name, None)
    profile = tmp_path / "profile"
    run = tabpilot_here(["install", "--user-data-dir", str(profile)], env)
    assert run.returncode == 0, run.stderr
    return env, profile, profile / "NativeMessagingHosts" / "com.tabpilot.host.json"


def doctor(env: dict[str, str], profile: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """`tabpilot doctor` in this process (cli_support); the host it pings is a process of its own all the same."""
    return tabpilot_here(["doctor", "--user-data-dir", str(profile), *extra], env)


def doctor_process(env: dict[str, str], profile: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tabpilot", "doctor", "--user-data-dir", str(profile), *extra],
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
    )


def configure_llm(env: dict[str, str], base_url: str, key: str) -> None:
    config = Path(env["TABPILOT_HOME"]) / "config" / "config.json"
    save_settings(Settings(base_url=base_url, model="test-model", api_key=key), config)


def test_healthy_install_is_ok_and_the_ping_really_went_through(setup, models_server):
    env, profile, _manifest = setup
    configure_llm(env, models_server, GOOD_KEY)
    result = doctor_process(env, profile)  # as the user runs it
    assert result.returncode == 0, result.stdout
    assert "FAIL" not in result.stdout and "all good" in result.stdout
    assert "answered a framed hello" in result.stdout
    # The host the doctor started wrote its own log line, naming the origin Chromium would pass.
    log = (Path(env["TABPILOT_HOME"]) / "log" / "host.log").read_text()
    assert f"starting for chrome-extension://{BUNDLED_ID}/" in log
    assert f"/v1/models Bearer {GOOD_KEY}" in ModelsHandler.seen
    assert GOOD_KEY not in result.stdout


def test_missing_trailing_slash(setup):
    env, profile, manifest = setup
    data = json.loads(manifest.read_text())
    data["allowed_origins"] = [o.rstrip("/") for o in data["allowed_origins"]]
    manifest.write_text(json.dumps(data))
    result = doctor(env, profile, "--skip-llm")
    assert result.returncode == 1
    assert "lacks the trailing slash" in result.stdout
    assert "Specified native messaging host not found." in result.stdout
    assert f"fix: run `tabpilot install --user-data-dir {profile}` again" in result.stdout


def test_wrong_extension_id(setup):
    env, profile, manifest = setup
    data = json.loads(manifest.read_text())
    data["allowed_origins"] = ["chrome-extension://abcdefghijklmnopabcdefghijklmnop/"]
    manifest.write_text(json.dumps(data))
    result = doctor(env, profile, "--skip-llm")
    assert result.returncode == 1
    assert f"the bundled extension ({BUNDLED_ID}) is not in allowed_origins" in result.stdout
    assert "Access to the specified native messaging host is forbidden." in result.stdout


def test_wrong_and_relative_path(setup):
    env, profile, manifest = setup
    data = json.loads(manifest.read_text())
    data["path"] = "/nowhere/tabpilot-host"
    manifest.write_text(json.dumps(data))
    result = doctor(env, profile, "--skip-llm")
    assert result.returncode == 1 and "the launcher /nowhere/tabpilot-host does not exist" in result.stdout
    data["path"] = "tabpilot-host"
    manifest.write_text(json.dumps(data))
    result = doctor(env, profile, "--skip-llm")
    assert "is not absolute" in result.stdout and "Specified native messaging host not found." in result.stdout


@pytest.mark.skipif(os.name != "posix", reason="executable bits are a POSIX thing")
def test_launcher_not_executable(setup):
    env, profile, manifest = setup
    launcher = Path(json.loads(manifest.read_text())["path"])
    launcher.chmod(0o644)
    result = doctor(env, profile, "--skip-llm")
    assert result.returncode == 1
    assert f"the launcher {launcher} is not executable" in result.stdout
    assert "Native host has exited." in result.stdout
    assert f"fix: chmod 755 {launcher}" in result.stdout


def test_name_mismatch_and_broken_json(setup):
    env, profile, manifest = setup
    data = json.loads(manifest.read_text())
    data["name"] = "com.example.other"
    manifest.write_text(json.dumps(data))
    assert "\"name\" is 'com.example.other'" in doctor(env, profile, "--skip-llm").stdout
    manifest.write_text("{ not json")
    result = doctor(env, profile, "--skip-llm")
    assert result.returncode == 1 and "cannot read it as JSON" in result.stdout


def test_a_launcher_whose_host_dies_is_caught_by_the_ping(setup):
    env, profile, manifest = setup
    launcher = Path(json.loads(manifest.read_text())["path"])
    launcher.write_text("#!/bin/sh\necho 'broken on purpose' >&2\nexit 3\n")
    result = doctor(env, profile, "--skip-llm")
    assert result.returncode == 1
    assert "no framed reply to hello" in result.stdout and "broken on purpose" in result.stdout


def test_not_installed(tmp_path, setup):
    env, _profile, _manifest = setup
    result = doctor(env, tmp_path / "empty-profile", "--skip-llm")
    assert result.returncode == 1 and "not registered" in result.stdout
    assert "fix: tabpilot install --user-data-dir" in result.stdout


def test_llm_endpoint_problems(setup, models_server):
    env, profile, _manifest = setup
    configure_llm(env, models_server, "sk-wrong-key-000000000000")
    result = doctor(env, profile)
    assert result.returncode == 1 and "the API key was refused (HTTP 401)" in result.stdout
    assert "sk-wrong-key-000000000000" not in result.stdout
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    configure_llm(env, f"http://127.0.0.1:{closed_port}/v1", GOOD_KEY)
    result = doctor(env, profile)
    assert result.returncode == 1 and "cannot reach it" in result.stdout
    with web_server() as address:  # a plain web server where the model API should be: a page for /models
        configure_llm(env, f"{address}/v1", GOOD_KEY)
        result = doctor(env, profile)
    assert result.returncode == 1, result.stdout
    assert "it answers with web pages (HTTP 404 for /models), not as an OpenAI-compatible API" in result.stdout
    (Path(env["TABPILOT_HOME"]) / "config" / "config.json").unlink()
    result = doctor(env, profile)
    assert "No model is configured" in result.stdout and "tabpilot config set model" in result.stdout



def test_doctor_speaks_the_language_setting(setup, models_server):
    """With the language set to zh-CN the doctor's own words (levels, findings, fixes, the summary) are
    Chinese; Chromium's quoted messages, paths and commands stay as they are. en-US stays English."""
    env, profile, manifest = setup
    configure_llm(env, models_server, "sk-wrong-key-000000000000")
    assert tabpilot_here(["config", "set", "language", "zh-CN"], env).returncode == 0
    result = doctor(env, profile)
    assert result.returncode == 1
    assert "  正常  扩展文件夹 " in result.stdout and "（ID " in result.stdout
    assert "  失败  模型端点 " in result.stdout and "API 密钥被拒绝（HTTP 401）" in result.stdout
    assert "修复：tabpilot config set api-key（它会提示输入密钥，输入时不显示；或在弹出窗口的“设置”中填写）" \
        in result.stdout
    assert "毫秒内回复了分帧的 hello" in result.stdout and result.stdout.rstrip().endswith("发现 1 个问题")
    for english in ("refused", "fix:", "problem(s)", "answered a framed hello"):
        assert english not in result.stdout, result.stdout
    manifest.write_text(manifest.read_text().replace('"stdio"', '"pipe"'))
    broken = doctor(env, profile, "--skip-llm")
    # Chromium's message is quoted as Chromium says it; the words around it are the reader's
    assert '"type" 是 \'pipe\'，而不是 "stdio"。Chromium 的报错："Specified native messaging host not found."' \
        in broken.stdout, broken.stdout
    assert f"修复：再次运行 `tabpilot install --user-data-dir {profile}` 以重写它" in broken.stdout

    assert tabpilot_here(["config", "set", "language", "en-US"], env).returncode == 0
    english = doctor(env, profile, "--skip-llm")
    assert '"type" is \'pipe\', not "stdio".' in english.stdout and "1 problem(s) found" in english.stdout
    assert "fix: run `tabpilot install" in english.stdout


def test_a_model_the_endpoint_does_not_list_is_a_problem_not_all_good(setup, models_server):
    env, profile, _manifest = setup
    config = Path(env["TABPILOT_HOME"]) / "config" / "config.json"
    save_settings(Settings(base_url=models_server, model="no-such-model", api_key=GOOD_KEY), config)
    result = doctor(env, profile)
    assert result.returncode == 1, result.stdout  # a task would fail with "not found"
    assert "it does not list 'no-such-model' (it has: test-model)" in result.stdout
    assert "fix: tabpilot config set model <one of those>" in result.stdout
    assert "all good" not in result.stdout and result.stdout.rstrip().endswith("1 problem(s) found")


def test_a_warning_is_never_summed_up_as_all_good(setup):
    from tabpilot.llm.scripted import ScriptedLLMServer

    env, profile, _manifest = setup
    with ScriptedLLMServer([]) as server:  # no /models under this base URL: the model cannot be checked (a warning)
        configure_llm(env, f"http://127.0.0.1:{server.port}/elsewhere/v1", GOOD_KEY)
        result = doctor(env, profile)
    assert result.returncode == 0, result.stdout
    assert "WARN" in result.stdout and "the model name could not be checked" in result.stdout, result.stdout
    assert "all good" not in result.stdout
    assert result.stdout.rstrip().splitlines()[-1] == "no problems, 1 warning(s): see WARN above"


def test_a_key_or_address_only_this_terminal_has_is_a_warning_that_says_how_to_save_it(setup, models_server):
    # The doctor's own check sees OPENAI_API_KEY; the helper a browser started from the desktop does not, and the
    # popup's tasks would fail for want of a key while the doctor said all good.
    env, profile, _manifest = setup
    configure_llm(env, models_server, "")
    result = doctor({**env, "OPENAI_API_KEY": GOOD_KEY}, profile)
    assert result.returncode == 0, result.stdout
    assert "reachable, key accepted" in result.stdout, result.stdout
    assert "OPENAI_API_KEY from this terminal's environment, not saved" in result.stdout, result.stdout
    assert "save it for the browser too: tabpilot config set api-key" in result.stdout
    assert "all good" not in result.stdout and GOOD_KEY not in result.stdout
    configure_llm(env, models_server, GOOD_KEY)  # saved: the environment's copy changes nothing
    result = doctor({**env, "OPENAI_API_KEY": GOOD_KEY}, profile)
    assert "all good" in result.stdout and "environment" not in result.stdout, result.stdout


def test_doctor_leaves_the_running_browsers_host_reachable_for_mcp(setup, models_server):
    # The host the doctor started to ping took the socket `tabpilot mcp` reaches the browser's host on, and removed
    # it as it exited: with the browser open, every MCP call then said no tabpilot host was running.
    env, profile, _manifest = setup
    configure_llm(env, models_server, GOOD_KEY)
    browsers_host = HostProcess(Path(env["TABPILOT_HOME"]), {"HOME": env["HOME"]})
    try:
        assert browsers_host.request("hello", extensionVersion="0.1.0")["ok"]
        endpoint = Path(env["TABPILOT_HOME"]) / "run" / "host.sock"
        deadline = time.monotonic() + 20
        while not endpoint.exists():  # it opens once the hello's answer is written
            assert time.monotonic() < deadline, "the browser's host opened no endpoint"
            time.sleep(0.05)
        for _ in range(2):
            result = doctor(env, profile)
            assert result.returncode == 0, result.stdout
            assert "answered a framed hello" in result.stdout
            with socket.socket(socket.AF_UNIX) as client:
                client.connect(str(endpoint))  # refused or missing without the fix
        assert browsers_host.proc.poll() is None
    finally:
        browsers_host.stop()
