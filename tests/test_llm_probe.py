"""Test connection (llm/probe.py) against real HTTP: the scripted OpenAI-compatible server, a closed
port, a server refusing the key, and one that does not know the model."""

from __future__ import annotations

import socket

import pytest

from tabpilot.llm.config import LLMConfig
from tabpilot.llm.probe import probe_endpoint
from tabpilot.llm.scripted import HTTPError, ScriptedLLMServer, Text

pytestmark = pytest.mark.asyncio

KEY = "sk-probe-secret-0123456789"


def config(server_url: str, model: str = "scripted", key: str | None = KEY) -> LLMConfig:
    return LLMConfig(base_url=server_url, model=model, api_key=key, key_from_environment=False)


async def test_a_working_endpoint_says_ok_and_lists_its_models() -> None:
    with ScriptedLLMServer([Text("OK")]) as server:
        result = await probe_endpoint(config(server.base_url))
        assert server.requests and server.requests[0]["model"] == "scripted"  # one tiny completion was asked
        assert server.headers[0]["authorization"] == f"Bearer {KEY}"
    assert result.ok and result.problem is None
    assert result.models == ["scripted"] and result.model_listed is True
    assert result.reply == "OK"
    assert KEY not in str(result.to_wire())


async def test_a_closed_port_is_unreachable() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    result = await probe_endpoint(config(f"http://127.0.0.1:{port}/v1"))
    assert not result.ok and result.problem == "unreachable"
    assert f"127.0.0.1:{port}" in result.message


async def test_a_refused_key_is_named_and_never_echoed() -> None:
    refusal = HTTPError(401, f"Incorrect API key provided: {KEY}", type="invalid_request_error")
    with ScriptedLLMServer([refusal]) as server:
        # the scripted server lists models without checking keys; the completion refuses it
        result = await probe_endpoint(config(server.base_url))
    assert not result.ok and result.problem == "key_refused" and result.status == 401
    assert KEY not in str(result.to_wire())
    assert "***" in (result.detail or "")


async def test_an_unknown_model_is_named_with_what_the_endpoint_offers() -> None:
    missing = HTTPError(404, "The model `gpt-nope` does not exist", code="model_not_found",
                        type="invalid_request_error")
    with ScriptedLLMServer([missing]) as server:
        result = await probe_endpoint(config(server.base_url, model="gpt-nope"))
    assert not result.ok and result.problem == "model_unknown" and result.status == 404
    assert result.model_listed is False and result.models == ["scripted"]
    assert "gpt-nope" in result.message


async def test_a_url_with_no_openai_api_behind_it() -> None:
    with ScriptedLLMServer([]) as server:  # /v1 is its API; the root path answers 404 to everything
        result = await probe_endpoint(config(f"http://127.0.0.1:{server.port}/nothing-here"))
    assert not result.ok and result.problem == "not_openai"


async def test_no_key_for_a_remote_endpoint_is_not_configured() -> None:
    result = await probe_endpoint(config("https://api.example.invalid/v1", key=None))
    assert not result.ok and result.problem == "not_configured"


async def test_a_web_server_where_the_api_should_be_is_said_to_be_no_openai_api() -> None:
    # The popup's Test: Python's http.server answers /models with a 404 page and the completion with 501.
    from llm_support import web_server

    with web_server() as address:
        result = await probe_endpoint(config(f"{address}/v1"))
    assert not result.ok and (result.problem, result.status) == ("not_openai", 501), result
    assert "not as an OpenAI-compatible API" in result.message
