"""The test-only debug socket is no way in for a web page or a stranger: the host, a real subprocess,
refuses a handshake that carries an Origin (every page's WebSocket does) or lacks the token."""

from __future__ import annotations

import asyncio
import json
import socket

import pytest
import websockets
from native_support import HostProcess

from tabpilot.native.debug import PORT_ENV, DebugAccess, DebugLink


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def access(tmp_path):
    """A host listening on its debug socket (open once the host answers a ping)."""
    chosen = DebugAccess.new(free_port())
    process = HostProcess(tmp_path / "home", chosen.env())
    try:
        assert process.request("ping")["ok"]
        yield chosen
    finally:
        process.stop()


async def handshake_status(port: int, headers: dict[str, str], origin: str | None = None) -> int:
    """101 when the socket let the client in, else the HTTP status it answered with."""
    try:
        async with websockets.connect(
            f"ws://127.0.0.1:{port}", additional_headers=headers, origin=origin, proxy=None, open_timeout=10
        ):
            return 101
    except websockets.InvalidStatus as refused:
        return refused.response.status_code


def test_a_client_with_the_token_and_no_origin_gets_in(access):
    async def talk() -> None:
        link = await DebugLink.connect(access)
        await link.close()
        # in, and answered: anything but a host → extension request is refused with a reply naming it
        async with websockets.connect(
            f"ws://127.0.0.1:{access.port}", additional_headers={"Authorization": f"Bearer {access.token}"}, proxy=None
        ) as raw:
            await raw.send(json.dumps({"type": "settings.get", "id": "q1"}))
            reply = json.loads(await asyncio.wait_for(raw.recv(), 10))
        assert reply["id"] == "q1" and reply["ok"] is False and reply["error"]["code"] == "bad_request"
        assert "only cdp.* and tabs.* requests here" in reply["error"]["message"]
        assert "'settings.get'" in reply["error"]["message"]

    asyncio.run(talk())


def test_a_browser_page_is_refused_even_with_the_token(access):
    bearer = {"Authorization": f"Bearer {access.token}"}
    for origin in ("http://127.0.0.1:8000", "https://evil.example", "null"):
        assert asyncio.run(handshake_status(access.port, bearer, origin=origin)) == 403, origin


def test_a_client_without_the_right_token_is_refused(access):
    for headers in ({}, {"Authorization": "Bearer wrong-token-wrong-token"}, {"Authorization": access.token}):
        assert asyncio.run(handshake_status(access.port, headers)) == 401, headers


def test_without_a_token_in_the_environment_no_socket_opens(tmp_path):
    port = free_port()
    process = HostProcess(tmp_path / "home", {PORT_ENV: str(port)})
    try:
        assert process.request("ping")["ok"]  # the host serves the extension as usual
        with socket.socket() as probe:
            assert probe.connect_ex(("127.0.0.1", port)) != 0  # but nothing listens
    finally:
        process.stop()


def test_the_setting_is_checked():
    assert DebugAccess.parse("8123:abcdefghijklmnopqrst") == DebugAccess(8123, "abcdefghijklmnopqrst")
    for bad in ("8123", "8123:short", "port:abcdefghijklmnopqrst", "70000:abcdefghijklmnopqrst"):
        with pytest.raises(ValueError, match=PORT_ENV):
            DebugAccess.parse(bad)
