"""`settings.test` through the real host process: the form's values, falling back to the saved ones."""

from __future__ import annotations

import pytest
from native_support import HostProcess

from tabpilot.llm.scripted import HTTPError, ScriptedLLMServer, Text

KEY = "sk-saved-secret-abcdef123456"


@pytest.fixture
def host(tmp_path):
    process = HostProcess(tmp_path / "home")
    yield process
    process.stop()


def test_settings_test_uses_the_saved_key_for_the_saved_endpoint_and_what_was_typed_over_it(host) -> None:
    with ScriptedLLMServer([Text("OK"), HTTPError(401, "bad key")]) as server:
        assert host.request("settings.set", baseURL=server.base_url, model="scripted", apiKey=KEY)["ok"]
        saved = host.request("settings.test")
        assert saved["ok"] and saved["data"]["ok"] is True, saved
        assert server.headers[0]["authorization"] == f"Bearer {KEY}"
        typed = host.request("settings.test", apiKey="sk-typed-wrong-0000")
        assert typed["data"]["ok"] is False and typed["data"]["problem"] == "key_refused"
        assert server.headers[1]["authorization"] == "Bearer sk-typed-wrong-0000"
        # a model typed but not saved: the endpoint lists what it has
        other = host.request("settings.test", model="gpt-other")
        assert other["data"]["modelListed"] is False and other["data"]["models"] == ["scripted"]
    assert KEY not in str(saved) + str(typed)
    assert host.request("ping")["data"] == {"pong": True}


def test_settings_test_with_fields_of_the_wrong_type_is_a_bad_request(host) -> None:
    reply = host.request("settings.test", model=5)
    assert reply["ok"] is False and reply["error"]["code"] == "bad_request" and "model" in reply["error"]["message"]
