"""The host's local endpoint (what `tabpilot mcp` connects to), browser-free: a real NativeHost with its
frames to the extension collected, a real Unix socket in an owner-only folder, and the MCP side's real
`HostLink`. Who may connect, who gets in without the token (nobody), the latest host owning the socket,
a call in flight when the host goes away, the next call reaching the new host, and MCP consent."""

from __future__ import annotations

import asyncio
import os
import shutil
import stat
import struct
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from actions_support import wait_until

from tabpilot.mcp.hostlink import BROWSER_CLOSED, NO_HOST, HostGone, HostLink, HostRefused, HostUnavailable
from tabpilot.native.codec import FrameDecoder, encode_frame
from tabpilot.native.endpoint import EndpointAddress, LocalEndpoint, program_of
from tabpilot.native.host import NativeHost
from tabpilot.native.tasks import REFUSALS_RECORDED
from tabpilot.store.settings import Settings, save_settings
from tabpilot.store.sites import allow_client, revoke_client

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="Unix sockets (the Windows pipe is untested)")


class Extension:
    """The extension's side of the host's stdout: the frames the host wrote, decoded."""

    def __init__(self) -> None:
        self.decoder = FrameDecoder()
        self.frames: list[dict[str, Any]] = []

    def write(self, data: bytes) -> None:
        self.frames.extend(f for f in self.decoder.feed(data) if isinstance(f, dict))

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        return [f for f in self.frames if f.get("type") == kind]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TABPILOT_HOME", str(tmp_path / "tp"))
    return tmp_path / "tp"


async def start_host(extension: Extension) -> tuple[NativeHost, LocalEndpoint]:
    host = NativeHost(extension.write)
    endpoint = LocalEndpoint(host)
    await endpoint.start()
    return host, endpoint


@pytest_asyncio.fixture
async def running(home: Path) -> AsyncIterator[tuple[Extension, NativeHost, LocalEndpoint]]:
    extension = Extension()
    host, endpoint = await start_host(extension)
    yield extension, host, endpoint
    await endpoint.close()


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def exists(path: str | Path) -> bool:
    return os.path.exists(path)


async def raw_exchange(path: str, frame: dict[str, Any]) -> tuple[dict[str, Any] | None, bool]:
    """Send one frame on a fresh connection: (the reply, whether the host then closed the connection)."""
    reader, writer = await asyncio.open_unix_connection(path)
    writer.write(encode_frame(frame))
    await writer.drain()
    decoder, replies = FrameDecoder(), []
    closed = False
    try:
        while not replies:
            data = await asyncio.wait_for(reader.read(1 << 16), 5)
            if not data:
                closed = True
                break
            replies += decoder.feed(data)
        if replies and not closed:
            closed = await asyncio.wait_for(reader.read(1), 5) == b""
    finally:
        writer.close()
    return (replies[0] if replies else None), closed


async def test_only_the_owner_can_open_it(running: tuple[Extension, NativeHost, LocalEndpoint]) -> None:
    _, _, endpoint = running
    socket_path, token_file = Path(endpoint.address.socket), endpoint.address.token_file
    assert mode(socket_path.parent) == 0o700
    assert mode(socket_path) == 0o600 and stat.S_ISSOCK(os.stat(socket_path).st_mode)
    assert mode(token_file) == 0o600
    assert len(endpoint.address.read_token()) >= 40


async def test_without_the_token_nothing_gets_through(running: tuple[Extension, NativeHost, LocalEndpoint]) -> None:
    extension, _, endpoint = running
    path = endpoint.address.socket
    for first in ({"type": "hello", "id": 1, "token": "guessed"}, {"type": "task.list", "id": 1},
                  {"type": "hello", "id": 1}):
        reply, closed = await raw_exchange(path, first)
        assert reply is not None and reply["ok"] is False and reply["error"]["code"] == "unauthorized", reply
        assert str(endpoint.address.token_file) in reply["error"]["message"]
        assert closed
    assert extension.frames == []  # nothing reached the extension


async def test_a_client_with_the_token_speaks_the_popups_requests(
    running: tuple[Extension, NativeHost, LocalEndpoint],
) -> None:
    link = HostLink("unit test", connect_wait=2)
    try:
        assert await link.request("ping") == {"pong": True}
        assert (await link.request("task.list")) == {"tasks": []}
        assert (await link.request("task.get")) == {"task": None}
        with pytest.raises(HostRefused) as refused:  # only what a local client needs, not the extension's
            await link.request("history.delete", {"taskId": "x"})
        assert refused.value.code == "bad_request" and "not for local clients" in str(refused.value)
        with pytest.raises(HostRefused) as bad:
            await link.request("task.start", {"task": "", "tabId": 1})
        assert bad.value.code == "bad_request" and "task" in str(bad.value)
        assert await link.request("ping") == {"pong": True}  # and it keeps serving
    finally:
        await link.close()


async def test_the_latest_host_owns_the_socket_and_a_host_removes_only_its_own(home: Path) -> None:
    old_extension, new_extension = Extension(), Extension()
    _, old = await start_host(old_extension)
    _, new = await start_host(new_extension)  # an extension reload: the new host starts before the old exits
    link = HostLink("unit test", connect_wait=2)
    try:
        await ask_in_new_tab(link, {"task": "t", "timeout": 0.05})
        assert len(new_extension.of_type("approval.request")) == 1 and old_extension.frames == []
        await old.close()
        assert exists(new.address.socket) and exists(new.address.token_file)
        assert await link.request("ping") == {"pong": True}
    finally:
        await link.close()
        await new.close()
    assert not exists(new.address.socket) and not exists(new.address.token_file)


async def test_a_call_in_flight_fails_when_the_host_goes_and_the_next_reaches_the_new_host(home: Path) -> None:
    _, first = await start_host(Extension())
    link = HostLink("unit test", connect_wait=5)
    try:
        waiting = asyncio.ensure_future(ask_in_new_tab(link, {"task": "t", "timeout": 30}))
        await asyncio.sleep(0.2)
        await first.close()  # the browser closed, or the extension reloaded
        with pytest.raises(HostGone) as gone:
            await waiting
        assert "went away" in str(gone.value) and "Call again once the browser is back" in str(gone.value)
        _, second = await start_host(Extension())
        try:
            assert await link.request("ping") == {"pong": True}  # same link: nothing restarted
        finally:
            await second.close()
    finally:
        await link.close()


# A browser as far as the host can tell: the process that starts it with pipes, says hello, and holds them.
_BROWSER = """import os, struct, subprocess, sys, time
host = subprocess.Popen([sys.executable, '-m', 'tabpilot', 'host', 'chrome-extension://testextension/'],
                        stdin=subprocess.PIPE, stdout=subprocess.PIPE)
hello = b'{"type": "hello", "id": "h", "extensionVersion": "x"}'
host.stdin.write(struct.pack('=I', len(hello)) + hello)
host.stdin.flush()
time.sleep(600)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="who spawned the host is asked on Linux only")
async def test_a_call_in_flight_when_the_browser_closes_says_it_closed_and_what_to_do(home: Path) -> None:
    # The call was told the host "went away" and to call again once the browser is back, where no host can come back
    # (a fresh-clone CI run at cef835b, test_mcp_browser_closed: asked before this end had read the end of the
    # connection): it is told the browser was closed, and what to do, as a call made later is.
    browser = await asyncio.create_subprocess_exec(sys.executable, "-c", _BROWSER)
    link = HostLink("unit test", connect_wait=5)
    try:
        # Its host is up (a first call waits only a second for a host that never was: under load 25 two Python
        # start-ups took longer, and the call was told no host runs).
        address = EndpointAddress.for_this_user()

        async def up() -> bool:
            return exists(address.socket) and exists(address.token_file)

        await wait_until(up, timeout=60)
        assert await link.request("ping") == {"pong": True}
        waiting = asyncio.ensure_future(ask_in_new_tab(link, {"task": "t", "timeout": 30}))
        await asyncio.sleep(0.3)
        browser.kill()  # its host's stdin closes with it
        await browser.wait()
        with pytest.raises(HostUnavailable) as closed:
            await waiting
        assert not isinstance(closed.value, HostGone) and str(closed.value) == BROWSER_CLOSED, closed.value
    finally:
        if browser.returncode is None:
            browser.kill()
        await link.close()


async def test_no_host_says_what_to_do(home: Path) -> None:
    link = HostLink("unit test", connect_wait=0.3)
    with pytest.raises(HostUnavailable) as missing:
        await link.request("ping")
    assert str(missing.value) == NO_HOST
    assert "tabpilot mcp --launch" in NO_HOST and "tabpilot doctor" in NO_HOST and "--fallback launch" in NO_HOST


async def test_a_host_that_does_not_come_back_is_waited_for_saying_so_then_said(home: Path) -> None:
    """The host went away and its browser (here: this process, the host's parent) still runs: a call waits for
    the next host, telling `waiting` at once, and then says the host did not come back and what to do."""
    _, first = await start_host(Extension())
    link = HostLink("unit test", connect_wait=0.6)
    told: list[str] = []

    async def waiting(message: str) -> None:
        told.append(message)

    try:
        assert await link.request("ping", waiting=waiting) == {"pong": True}
        assert told == []  # reached at once: nothing to say
        await first.close()
        await asyncio.sleep(0.2)  # the link reads the end of the connection
        for _ in range(2):
            told.clear()
            with pytest.raises(HostUnavailable) as missing:
                await link.request("ping", waiting=waiting)
            assert told == ["tabpilot's host in your browser stopped (killed, crashed or restarted): waiting up to "
                            "0.6 s for the browser to start a new one"]
            said = str(missing.value)
            assert "did not start a new one within 0.6 s" in said and "Open the tabpilot popup" in said, said
    finally:
        await link.close()


# --- consent -------------------------------------------------------------------------------------------------
def ask_in_new_tab(link: HostLink, fields: dict[str, Any]) -> Any:
    """approval.ask for a task that works in a tab the client opens for it (no tab of the person's is named)."""
    return link.request("approval.ask", {"newTab": True, **fields})


async def answer_from_extension(host: NativeHost, extension: Extension, decision: str, seen: int) -> dict[str, Any]:
    """Answer the next approval.request (after `seen` of them) as the popup would: an approval.answer
    request to the host."""
    for _ in range(250):
        if len(extension.of_type("approval.request")) > seen:
            break
        await asyncio.sleep(0.02)
    request = extension.of_type("approval.request")[-1]
    host.receive({"type": "approval.answer", "id": "p1", "approvalId": request["approvalId"], "decision": decision})
    await asyncio.sleep(0.05)
    return request


async def test_consent_asks_the_extension_and_remembers_always(
    running: tuple[Extension, NativeHost, LocalEndpoint],
) -> None:
    extension, host, _ = running
    link = HostLink("unit test", connect_wait=2)
    try:
        asking = asyncio.ensure_future(ask_in_new_tab(link, {"requester": "Agent A", "task": "Book it"}))
        request = await answer_from_extension(host, extension, "deny", 0)
        assert (request["kind"], request["requester"], request["task"]) == ("mcp", "Agent A", "Book it")
        verdict = await asking
        assert verdict["decision"] == "deny" and "refused to let Agent A" in verdict["message"]

        asking = asyncio.ensure_future(ask_in_new_tab(link, {"requester": "Agent A", "task": "Again"}))
        await answer_from_extension(host, extension, "always", 1)
        assert (await asking)["decision"] == "always"
        asked = len(extension.of_type("approval.request"))
        assert (await ask_in_new_tab(link, {"requester": "Agent A", "task": "Third"}))["decision"] == "always"
        assert len(extension.of_type("approval.request")) == asked  # not asked again
        asking = asyncio.ensure_future(ask_in_new_tab(link, {"requester": "Agent B", "task": "Other"}))
        await answer_from_extension(host, extension, "once", 2)
        assert (await asking)["decision"] == "once"  # another client is asked for itself
        replies = [f for f in extension.of_type("reply") if f["id"] == "p1"]
        assert replies and all(r["ok"] for r in replies)
    finally:
        await link.close()


SPOOFER = """
import asyncio, json
from tabpilot.mcp.hostlink import HostLink

async def main():
    link = HostLink("Agent A", connect_wait=2)
    try:
        verdict = await link.request("approval.ask", {"requester": "Agent A", "task": "Read my bank", "newTab": True})
        print(json.dumps(verdict["decision"]))
    finally:
        await link.close()

asyncio.run(main())
"""


async def test_always_holds_for_the_program_it_was_given_to_not_for_another_taking_its_name(
    running: tuple[Extension, NativeHost, LocalEndpoint], tmp_path: Path,
) -> None:
    # "Always allow" was kept by the client's name alone, which a client says itself: any other program of the user
    # (it can read the token) that called itself "Agent A" ran tasks unasked and read every tab of the person's.
    extension, host, _ = running
    link = HostLink("Agent A", connect_wait=2)
    try:
        asking = asyncio.ensure_future(ask_in_new_tab(link, {"requester": "Agent A", "task": "Book it"}))
        await answer_from_extension(host, extension, "always", 0)
        assert (await asking)["decision"] == "always"
        assert (await ask_in_new_tab(link, {"requester": "Agent A", "task": "Again"}))["decision"] == "always"
        assert len(extension.of_type("approval.request")) == 1  # the same program: not asked again
        # a client started by another program (a copy of sh: a program file of its own) under the same name is asked
        other = tmp_path / "another-program"
        shutil.copy("/bin/sh", other)
        spoofer = await asyncio.create_subprocess_exec(
            other, "-c", f'"{sys.executable}" -c "$0"; exit $?', SPOOFER, stdout=asyncio.subprocess.PIPE)
        request = await answer_from_extension(host, extension, "deny", 1)
        assert (request["requester"], request["task"]) == ("Agent A", "Read my bank")
        out, _ = await asyncio.wait_for(spoofer.communicate(), 30)
        assert out.decode().strip() == '"deny"'
    finally:
        await link.close()


async def test_always_outlives_the_host_is_listed_with_the_sites_and_a_revoke_asks_again(home: Path) -> None:
    """"Always allow for this client" is kept in the allowed-sites file: a new host process (a browser
    restart) does not ask that client again; it is listed where the popup's Settings and `tabpilot sites`
    read the sites, and revoking it there (`clients.revoke`) asks again at the very next task."""
    extension = Extension()
    host, endpoint = await start_host(extension)
    link = HostLink("unit test", connect_wait=2)
    try:
        host.receive({"type": "sites.list", "id": "s0"})  # the extension asks once, then hears changes
        asking = asyncio.ensure_future(ask_in_new_tab(link, {"requester": "Agent K", "task": "One"}))
        await answer_from_extension(host, extension, "always", 0)
        assert (await asking)["decision"] == "always"
        changed = extension.of_type("sites.changed")
        assert changed and [c["name"] for c in changed[-1]["mcpClients"]] == ["Agent K"]
    finally:
        await link.close()
        await endpoint.close()

    extension = Extension()  # the browser restarted: a new host, nothing in memory
    host, endpoint = await start_host(extension)
    link = HostLink("unit test", connect_wait=2)
    try:
        assert (await ask_in_new_tab(link, {"requester": "Agent K", "task": "Two"}))["decision"] == "always"
        assert extension.of_type("approval.request") == []  # nobody was asked
        host.receive({"type": "sites.list", "id": "s1"})
        await asyncio.sleep(0.05)
        listed = next(f for f in extension.of_type("reply") if f["id"] == "s1")["data"]
        assert [c["name"] for c in listed["mcpClients"]] == ["Agent K"] and listed["mcpClients"][0]["allowedAt"] > 0

        host.receive({"type": "clients.revoke", "id": "r1", "name": "Agent K"})
        await asyncio.sleep(0.05)
        revoked = next(f for f in extension.of_type("reply") if f["id"] == "r1")
        assert revoked["ok"] and revoked["data"]["mcpClients"] == []
        assert extension.of_type("sites.changed")[-1]["mcpClients"] == []
        asking = asyncio.ensure_future(ask_in_new_tab(link, {"requester": "Agent K", "task": "Three"}))
        request = await answer_from_extension(host, extension, "deny", 0)
        assert request["task"] == "Three" and (await asking)["decision"] == "deny"
    finally:
        await link.close()
        await endpoint.close()


async def test_consent_is_the_shared_approval_question_and_every_view_of_it_closes(
    running: tuple[Extension, NativeHost, LocalEndpoint],
) -> None:
    """MCP consent asks through the page bridge's approvals (the one approval model the extension's
    UI knows): the question says how long it stays open, carries no tab, and its close is pushed."""
    extension, host, _ = running
    link = HostLink("unit test", connect_wait=2)
    try:
        asking = asyncio.ensure_future(ask_in_new_tab(link, {"requester": "Agent D", "task": "Look",
                                                                     "timeout": 30}))
        request = await answer_from_extension(host, extension, "once", 0)
        assert (await asking)["decision"] == "once"
    finally:
        await link.close()
    assert request["kind"] == "mcp" and request["timeoutMs"] == 30_000 and "tabId" not in request
    assert extension.of_type("approval.closed") == [
        {"type": "approval.closed", "approvalId": request["approvalId"], "decision": "once"}
    ]
    assert host.approvals.pending() == []


async def test_consent_with_nobody_answering_is_a_deny_that_says_what_to_do(
    running: tuple[Extension, NativeHost, LocalEndpoint],
) -> None:
    extension, host, _ = running
    link = HostLink("unit test", connect_wait=2)
    try:
        verdict = await ask_in_new_tab(link, {"requester": "Agent C", "task": "t", "timeout": 0.2})
    finally:
        await link.close()
    assert verdict["decision"] == "deny"
    assert "Nobody allowed Agent C" in verdict["message"] and "--approve always" in verdict["message"]
    host.receive({"type": "approval.answer", "id": "late", "approvalId": extension.of_type("approval.request")[0][
        "approvalId"], "decision": "once"})
    await asyncio.sleep(0.05)
    late = next(f for f in extension.of_type("reply") if f["id"] == "late")
    assert late["ok"] is False and late["error"]["code"] == "not_found"  # too late: clearly refused


def test_endpoint_address_lives_in_the_runtime_folder(home: Path) -> None:
    address = EndpointAddress.for_this_user()
    assert Path(address.socket) == home / "run" / "host.sock" and address.token_file == home / "run" / "host.token"


PLATFORM_DIRS = ("TABPILOT_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME")


def as_installation(patch: pytest.MonkeyPatch, home: Path, runtime: Path) -> dict[str, str]:
    """This process (and a host given the returned environment) as an installation with the platform's folders
    under `home`, and `runtime` as the user's runtime folder (XDG_RUNTIME_DIR, shared by all of this uid)."""
    for name in PLATFORM_DIRS:
        patch.delenv(name, raising=False)
    patch.setenv("HOME", str(home))
    patch.setenv("XDG_RUNTIME_DIR", str(runtime))
    return {"HOME": str(home), "XDG_RUNTIME_DIR": str(runtime)}


@pytest.fixture
def runtime() -> Iterator[Path]:
    """A user runtime folder as short as /run/user/<uid> (a pytest folder is too deep for a Unix socket path)."""
    import shutil
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="tp-run-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


async def model_seen_by(link: HostLink) -> str:
    return str((await link.request("settings.get", {}))["model"])


async def test_two_homes_of_one_user_never_reach_each_others_host(tmp_path: Path, runtime: Path) -> None:
    """Found by an attack run: the socket was one per uid (the runtime folder), not one per installation. Two HOMEs
    of one user (containers, test sandboxes, a second profile) shared it: `tabpilot mcp` of one reached the other's
    host, its browser and its record. Each installation's programs reach its own host only, and say none runs."""
    from native_support import HostProcess

    homes = {name: tmp_path / name for name in ("alice", "sandbox")}
    hosts: dict[str, HostProcess] = {}
    try:
        with pytest.MonkeyPatch.context() as patch:
            env = as_installation(patch, homes["alice"], runtime)
            hosts["alice"] = HostProcess(None, env)
            assert hosts["alice"].request("settings.set", model="alice-model")["ok"]
            link = HostLink("Alice's agent", connect_wait=5)
            try:
                assert await model_seen_by(link) == "alice-model"
            finally:
                await link.close()
        with pytest.MonkeyPatch.context() as patch:
            env = as_installation(patch, homes["sandbox"], runtime)
            stranger = HostLink("the sandbox's agent", connect_wait=1)
            try:
                with pytest.raises(HostUnavailable):  # no host of its own: not Alice's
                    await stranger.request("settings.get", {})
            finally:
                await stranger.close()
            hosts["sandbox"] = HostProcess(None, env)
            assert hosts["sandbox"].request("settings.set", model="sandbox-model")["ok"]
            link = HostLink("the sandbox's agent", connect_wait=5)
            try:
                assert await model_seen_by(link) == "sandbox-model"
            finally:
                await link.close()
            sandbox_socket = EndpointAddress.for_this_user().socket
        with pytest.MonkeyPatch.context() as patch:
            as_installation(patch, homes["alice"], runtime)
            assert EndpointAddress.for_this_user().socket != sandbox_socket
            link = HostLink("Alice's agent", connect_wait=5)
            try:
                assert await model_seen_by(link) == "alice-model"  # the later host did not take Alice's socket
            finally:
                await link.close()
        for folder in [runtime / "tabpilot", *(runtime / "tabpilot").iterdir()]:
            assert mode(folder) == 0o700, folder
    finally:
        for host in hosts.values():
            host.stop()


async def test_a_home_too_deep_for_a_unix_socket_still_gets_its_own_endpoint(
    tmp_path: Path, runtime: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A TABPILOT_HOME whose `run/host.sock` passes the ~104 bytes of a Unix socket path (a deep sandbox or test
    folder) was refused ("too long"): no `tabpilot mcp` at all there. Its endpoint goes to the user's runtime folder,
    under a name of its own, and its programs reach it."""
    deep = tmp_path.joinpath(*["a-rather-long-folder-name"] * 5) / "tp"
    monkeypatch.setenv("TABPILOT_HOME", str(deep))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    extension = Extension()
    _, endpoint = await start_host(extension)
    try:
        assert len(os.fsencode(endpoint.address.socket)) < 104 and endpoint.address.socket.startswith(str(runtime))
        save_settings(Settings(model="deep-model"))
        link = HostLink("deep agent", connect_wait=5)
        try:
            assert await model_seen_by(link) == "deep-model"
        finally:
            await link.close()
        monkeypatch.setenv("TABPILOT_HOME", str(deep.parent / "other"))  # another deep home: another endpoint
        assert EndpointAddress.for_this_user().socket != endpoint.address.socket
    finally:
        await endpoint.close()


# --- what a local program may do without the person ----------------------------------------------------------
async def extension_request(extension: Extension, kind: str, seen: int = 0) -> dict[str, Any]:
    """The next request of `kind` the host sent the extension (after `seen` of them)."""
    for _ in range(250):
        if len(extension.of_type(kind)) > seen:
            return extension.of_type(kind)[seen]
        await asyncio.sleep(0.02)
    raise AssertionError(f"the host sent no {kind}: {extension.frames}")


async def test_a_local_program_starts_only_a_task_the_person_allowed_and_once_per_yes(
    running: tuple[Extension, NativeHost, LocalEndpoint],
) -> None:
    """Any program of this user can read the token; the person's yes is checked by the host, not left to the
    client: a task.start without it (or for another task, or over all tabs) never reaches the browser."""
    extension, host, _ = running
    save_settings(Settings(base_url="http://127.0.0.1:9/v1", model="m"))  # nothing but consent stops a task
    link = HostLink("Quiet Tool", connect_wait=2)
    try:
        with pytest.raises(HostRefused) as silent:
            await link.request("task.start", {"task": "Send my files", "tabId": 7})
        assert silent.value.code == "not_allowed" and "approval.ask" in str(silent.value)
        asking = asyncio.ensure_future(link.request("approval.ask", {"requester": "Quiet Tool", "task": "Read news",
                                                                     "tabId": 7}))
        await answer_from_extension(host, extension, "once", 0)
        assert (await asking)["decision"] == "once"
        with pytest.raises(HostRefused) as other:  # the yes was for another task
            await link.request("task.start", {"task": "Send my files", "tabId": 7})
        assert other.value.code == "not_allowed"
        with pytest.raises(HostRefused) as all_tabs:
            await link.request("task.start", {"task": "Read news", "tabId": 7,
                                              "config": {"experimentalIncludeAllTabs": True}})
        assert all_tabs.value.code == "not_allowed" and "experimentalIncludeAllTabs" in str(all_tabs.value)
        assert extension.of_type("cdp.attach") == []  # none of it reached the browser

        starting = asyncio.ensure_future(link.request("task.start", {"task": "Read news", "tabId": 7}))
        attach = await extension_request(extension, "cdp.attach")  # the allowed one goes to the browser
        assert attach["tabId"] == 7
        host.receive({"type": "reply", "id": attach["id"], "ok": False, "error": {"message": "No tab with id: 7."}})
        with pytest.raises(HostRefused) as gone:
            await starting
        assert gone.value.code == "tab"
        with pytest.raises(HostRefused) as spent:  # one yes, one task
            await link.request("task.start", {"task": "Read news", "tabId": 7})
        assert spent.value.code == "not_allowed"
    finally:
        await link.close()
    assert len(extension.of_type("cdp.attach")) == 1


async def test_a_local_program_stops_and_closes_only_what_it_started(
    running: tuple[Extension, NativeHost, LocalEndpoint],
) -> None:
    extension, host, _ = running
    link = HostLink("Quiet Tool", connect_wait=2)
    try:
        for fields in ({}, {"taskId": "someone-elses"}):
            with pytest.raises(HostRefused) as stop:
                await link.request("task.stop", fields)
            assert stop.value.code == "not_allowed" and "only its own tasks" in str(stop.value)
        with pytest.raises(HostRefused) as close:
            await link.request("tabs.close", {"tabId": 3})
        assert close.value.code == "not_allowed" and "only the tabs it opened" in str(close.value)
        for url in ("file:///etc/passwd", "javascript:alert(1)", "chrome://settings", "view-source:https://a.test"):
            with pytest.raises(HostRefused) as opened:  # a program's tab is a web page, as the model's are
                await link.request("tabs.create", {"url": url})
            assert opened.value.code == "not_allowed" and "web pages only" in str(opened.value)
        assert extension.frames == []

        creating = asyncio.ensure_future(link.request("tabs.create", {"url": "about:blank"}))
        create = await extension_request(extension, "tabs.create")
        host.receive({"type": "reply", "id": create["id"], "ok": True,
                      "data": {"tab": {"tabId": 12, "url": "about:blank", "title": "", "active": True}}})
        assert (await creating)["tab"]["tabId"] == 12
        before = len(extension.frames)
        for wrong in ("12", 12.0, True):  # its own tab's id, of the wrong type: refused, never read as 12 (or 1)
            with pytest.raises(HostRefused) as typed:
                await link.request("tabs.close", {"tabId": wrong})
            assert typed.value.code == "bad_request" and "'tabId': must be a whole number" in str(typed.value)
        assert len(extension.frames) == before
        closing = asyncio.ensure_future(link.request("tabs.close", {"tabId": 12}))
        close_request = await extension_request(extension, "tabs.close")
        host.receive({"type": "reply", "id": close_request["id"], "ok": True, "data": {}})
        assert await closing == {}
        assert close_request["tabId"] == 12
    finally:
        await link.close()


async def test_a_stranger_is_never_buffered_large_nor_kept_waiting_on(
    running: tuple[Extension, NativeHost, LocalEndpoint],
) -> None:
    """Before its hello a connection may send nothing large (a 50 MB frame is refused at its header, not
    read into memory), and one that says nothing is closed: neither holds the host's memory or a handler."""
    extension, _, endpoint = running
    reader, writer = await asyncio.open_unix_connection(endpoint.address.socket)
    try:
        writer.write(struct.pack("=I", 50 * 1024 * 1024) + b"{" * 4096)
        await writer.drain()
        reply = FrameDecoder().feed(await asyncio.wait_for(reader.read(1 << 16), 5))[0]
        assert isinstance(reply, dict) and reply["error"]["code"] == "unauthorized"
        assert await asyncio.wait_for(reader.read(1), 5) == b""  # and closed
    finally:
        writer.close()

    endpoint.hello_within = 0.3
    reader, writer = await asyncio.open_unix_connection(endpoint.address.socket)
    try:
        assert await asyncio.wait_for(reader.read(1), 5) == b""  # said nothing: closed
    finally:
        writer.close()
    assert extension.frames == []


async def test_a_clients_name_in_the_question_is_one_visible_line_and_its_wait_is_bounded(
    running: tuple[Extension, NativeHost, LocalEndpoint],
) -> None:
    """The person decides by the name and the task the question shows: controls, bidi overrides and zero-width
    characters cannot make one client read as another (they are dropped from a name) nor a task read other than
    it is (shown as their codes); a client's absurd timeout is kept to an hour."""
    extension, host, _ = running
    link = HostLink("unit test", connect_wait=2)
    try:
        asking = asyncio.ensure_future(ask_in_new_tab(
            link, {"requester": "Evil\u202e\u200bedualC\x00\n Tool", "task": "Read news\u202e lla eteled\n2",
                   "timeout": 1e300}))
        request = await answer_from_extension(host, extension, "deny", 0)
        assert (await asking)["decision"] == "deny"
    finally:
        await link.close()
    assert request["requester"] == "EviledualC Tool"
    assert request["task"] == "Read news\\u202e lla eteled\n2"  # the card reads as the text the agent gets
    assert request["timeoutMs"] == 3_600_000


async def test_an_id_that_is_no_id_is_not_echoed_back(running: tuple[Extension, NativeHost, LocalEndpoint]) -> None:
    _, _, endpoint = running
    reader, writer = await asyncio.open_unix_connection(endpoint.address.socket)
    decoder, replies = FrameDecoder(), []
    try:
        writer.write(encode_frame({"type": "hello", "id": "h", "token": endpoint.address.read_token()}))
        for odd in ({"echo": "x" * 1000}, True, [1]):
            writer.write(encode_frame({"type": "task.list", "id": odd}))
        while len(replies) < 4:
            replies += decoder.feed(await asyncio.wait_for(reader.read(1 << 16), 5))
    finally:
        writer.close()
    assert replies[0]["ok"] and replies[0]["id"] == "h"
    assert [(r["id"], r["ok"], r["error"]["code"]) for r in replies[1:]] == [(None, False, "bad_request")] * 3


async def test_a_header_over_the_limit_from_a_client_is_said_and_ends_its_connection_only(
    running: tuple[Extension, NativeHost, LocalEndpoint],
) -> None:
    # After its hello a client's header announcing 100 MiB was skipped byte by byte, the connection kept open.
    _, _, endpoint = running
    reader, writer = await asyncio.open_unix_connection(endpoint.address.socket)
    decoder, replies = FrameDecoder(), []
    try:
        writer.write(encode_frame({"type": "hello", "id": "h", "token": endpoint.address.read_token()}))
        writer.write(struct.pack("=I", 100 * 1024 * 1024) + encode_frame({"type": "task.list", "id": "after"}))
        while data := await asyncio.wait_for(reader.read(1 << 16), 5):  # until the host closes it
            replies += decoder.feed(data)
    finally:
        writer.close()
    assert [(r["id"], r["ok"]) for r in replies] == [("h", True), (None, False)], replies
    assert replies[1]["error"]["message"].endswith("the stream is not native-messaging frames")
    reader, writer = await asyncio.open_unix_connection(endpoint.address.socket)  # the endpoint itself goes on
    try:
        writer.write(encode_frame({"type": "hello", "id": "again", "token": endpoint.address.read_token()}))
        [again] = FrameDecoder().feed(await asyncio.wait_for(reader.read(1 << 16), 5))
    finally:
        writer.close()
    assert isinstance(again, dict) and again["id"] == "again" and again["ok"]


async def test_a_client_asking_again_before_its_answer_is_told_busy_not_refused(
    running: tuple[Extension, NativeHost, LocalEndpoint],
) -> None:
    extension, host, _ = running
    link = HostLink("Eager Tool", connect_wait=2)
    try:
        first = asyncio.ensure_future(ask_in_new_tab(link, {"task": "One"}))
        await extension_request(extension, "approval.request")
        with pytest.raises(HostRefused) as again:
            await ask_in_new_tab(link, {"task": "Two"})
        assert again.value.code == "busy" and "one at a time" in str(again.value)
        await answer_from_extension(host, extension, "once", 0)
        assert (await first)["decision"] == "once"
    finally:
        await link.close()
    assert [r["task"] for r in extension.of_type("approval.request")] == ["One"]


async def test_a_client_flooding_requests_is_told_busy_past_its_share(
    running: tuple[Extension, NativeHost, LocalEndpoint],
) -> None:
    """One connection cannot pile up unbounded work in the host (each request is a task, each tabs.* a request
    to the extension): past 32 unanswered, a request is refused at once as busy, and answered ones free room."""
    extension, host, endpoint = running
    reader, writer = await asyncio.open_unix_connection(endpoint.address.socket)
    decoder, replies = FrameDecoder(), []

    async def read_until(count: int) -> None:
        while len(replies) < count:
            replies.extend(decoder.feed(await asyncio.wait_for(reader.read(1 << 16), 5)))

    try:
        writer.write(encode_frame({"type": "hello", "id": "h", "token": endpoint.address.read_token()}))
        writer.write(b"".join(encode_frame({"type": "tabs.query", "id": f"q{n}"}) for n in range(40)))
        await read_until(9)
        assert [r["id"] for r in replies[1:]] == [f"q{n}" for n in range(32, 40)]
        assert all(r["error"]["code"] == "busy" for r in replies[1:])
        asked = await extension_request(extension, "tabs.query", 31)
        assert len(extension.of_type("tabs.query")) == 32
        host.receive({"type": "reply", "id": asked["id"], "ok": True, "data": {"tabs": []}})
        await read_until(10)
        writer.write(encode_frame({"type": "tabs.query", "id": "again"}))
        await extension_request(extension, "tabs.query", 32)  # room again
    finally:
        writer.close()


async def test_a_local_program_reads_the_persons_own_tabs_only_when_always_allowed(
    running: tuple[Extension, NativeHost, LocalEndpoint],
) -> None:
    """page.read hands over a tab's text (their mail, their bank): a tab the client neither opened nor ran a
    task in is read only for a client the person always allows, and a revoke counts at once."""
    extension, host, _ = running
    link = HostLink("Curious Tool", connect_wait=2)
    try:
        with pytest.raises(HostRefused) as named:
            await link.request("page.read", {"tabId": 5})
        assert named.value.code == "not_allowed" and "always allows it" in str(named.value)
        reading = asyncio.ensure_future(link.request("page.read"))  # the active tab: found, then refused
        query = await extension_request(extension, "tabs.query")
        host.receive({"type": "reply", "id": query["id"], "ok": True, "data": {"tabs": [
            {"tabId": 9, "url": "https://mail.example/inbox", "title": "Inbox", "active": True}]}})
        with pytest.raises(HostRefused) as active:
            await reading
        assert active.value.code == "not_allowed" and "tab 9" in str(active.value)
        assert extension.of_type("cdp.attach") == []  # no tab was touched

        allow_client("Curious Tool", program_of(os.getpid()))  # the person chose "Always allow for this client"
        assert (await ask_in_new_tab(link, {"task": "anything"}))["decision"] == "always"
        reading = asyncio.ensure_future(link.request("page.read", {"tabId": 5}))
        attach = await extension_request(extension, "cdp.attach")
        assert attach["tabId"] == 5
        host.receive({"type": "reply", "id": attach["id"], "ok": False, "error": {"message": "No tab with id: 5."}})
        with pytest.raises(HostRefused) as gone:
            await reading
        assert gone.value.code == "tab"
        revoke_client("Curious Tool")
        with pytest.raises(HostRefused) as revoked:
            await link.request("page.read", {"tabId": 5})
        assert revoked.value.code == "not_allowed"
    finally:
        await link.close()


async def answer_tabs_query(host: NativeHost, extension: Extension, seen: int, tabs: list[dict[str, Any]]) -> None:
    query = await extension_request(extension, "tabs.query", seen)
    host.receive({"type": "reply", "id": query["id"], "ok": True, "data": {"tabs": tabs}})


async def test_a_local_program_sees_only_its_own_tabs_and_tasks_unless_always_allowed(
    running: tuple[Extension, NativeHost, LocalEndpoint],
) -> None:
    """Any program that reads the token could list every tab (titles, URLs) and every task (its text, its result)
    of the person and of other clients: it sees the tabs it opened and the tasks it started; a client the person
    always allows sees all, as before, and a revoke counts at once."""
    extension, host, _ = running
    persons = host.store.start_task("Pay the rent from my bank", url="https://bank.example/", source="popup")
    host.store.finish_task(persons, status="completed", result={"success": True, "data": "Paid 1200 EUR"})
    everyone = [{"tabId": 5, "url": "https://bank.example/", "title": "My bank", "active": True},
                {"tabId": 12, "url": "about:blank", "title": "", "active": False}]
    link = HostLink("Curious Tool", connect_wait=2)
    try:
        creating = asyncio.ensure_future(link.request("tabs.create", {"url": "about:blank"}))
        create = await extension_request(extension, "tabs.create")
        host.receive({"type": "reply", "id": create["id"], "ok": True, "data": {"tab": everyone[1]}})
        await creating
        listing = asyncio.ensure_future(link.request("tabs.query", {"requester": "Curious Tool"}))
        await answer_tabs_query(host, extension, 0, everyone)
        assert [tab["tabId"] for tab in (await listing)["tabs"]] == [12]  # the tab it opened, not the bank
        for kind, task_id in (("task.get", persons), ("history.get", persons), ("history.get", persons[:6])):
            with pytest.raises(HostRefused) as refused:
                await link.request(kind, {"taskId": task_id})
            assert refused.value.code == "not_allowed" and "only the tasks it started" in str(refused.value), kind
            assert "Always allow" in str(refused.value)
        with pytest.raises(HostRefused) as tab:
            await link.request("task.get", {"tabId": 5})
        assert tab.value.code == "not_allowed" and "tab 5" in str(tab.value)
        assert (await link.request("task.get")) == {"task": None}  # the latest task is the person's
        assert (await link.request("task.list")) == {"tasks": []}

        allow_client("Curious Tool", program_of(os.getpid()))  # the person chose "Always allow for this client"
        listing = asyncio.ensure_future(link.request("tabs.query", {"requester": "Curious Tool"}))  # as it asks
        await answer_tabs_query(host, extension, 1, everyone)
        assert [tab["tabId"] for tab in (await listing)["tabs"]] == [5, 12]
        record = await link.request("history.get", {"taskId": persons[:6]})
        assert record["task"]["taskId"] == persons and record["result"]["data"] == "Paid 1200 EUR"

        revoke_client("Curious Tool")
        with pytest.raises(HostRefused) as revoked:
            await link.request("history.get", {"taskId": persons})
        assert revoked.value.code == "not_allowed"
    finally:
        await link.close()


async def test_the_person_is_asked_about_a_task_where_it_will_work_and_it_starts_only_there(
    running: tuple[Extension, NativeHost, LocalEndpoint],
) -> None:
    """The question names the tab the task will work in (the one the person is looking at, found by the host)
    or says it gets a new tab and which page it opens; the yes holds for that place only."""
    extension, host, _ = running
    save_settings(Settings(base_url="http://127.0.0.1:9/v1", model="m"))
    link = HostLink("Quiet Tool", connect_wait=2)
    try:
        asking = asyncio.ensure_future(link.request("approval.ask", {"requester": "Quiet Tool", "task": "Sum it up"}))
        await answer_tabs_query(host, extension, 0, [
            {"tabId": 4, "url": "chrome-extension://abc/popup.html", "title": "tabpilot", "active": True},
            {"tabId": 9, "url": "https://news.example/today", "title": "Today's news", "active": True}])
        request = await answer_from_extension(host, extension, "once", 0)
        assert (request["tabId"], request["newTab"], request.get("url")) == (9, False, None)
        assert (await asking)["tabId"] == 9  # the client learns the tab it was allowed in
        for elsewhere in ({"tabId": 5}, {"tabId": 9, "url": "https://bank.example/"}):
            with pytest.raises(HostRefused) as refused:
                await link.request("task.start", {"task": "Sum it up", **elsewhere})
            assert refused.value.code == "not_allowed" and "another tab or page" in str(refused.value)

        for wrong in ("true", 1):  # asked as a new tab in words JSON does not use: refused, not asked about their tab
            with pytest.raises(HostRefused) as typed:
                await link.request("approval.ask", {"task": "Book it", "newTab": wrong})
            assert typed.value.code == "bad_request" and "newTab must be true or false" in str(typed.value)
        assert len(extension.of_type("tabs.query")) == 1 and len(extension.of_type("approval.request")) == 1
        asking = asyncio.ensure_future(ask_in_new_tab(link, {"task": "Book it", "url": "https://shop.example/a"}))
        request = await answer_from_extension(host, extension, "once", 1)
        assert (request.get("tabId"), request["newTab"], request["url"]) == (None, True, "https://shop.example/a")
        assert "tabId" not in await asking
        with pytest.raises(HostRefused) as not_opened:  # a tab of the person's is no new tab
            await link.request("task.start", {"task": "Book it", "tabId": 9, "url": "https://shop.example/a"})
        assert not_opened.value.code == "not_allowed"
        assert extension.of_type("cdp.attach") == []

        starting = asyncio.ensure_future(link.request("task.start", {"task": "Sum it up", "tabId": 9}))
        attach = await extension_request(extension, "cdp.attach")  # where the person was shown: it goes ahead
        assert attach["tabId"] == 9
        host.receive({"type": "reply", "id": attach["id"], "ok": False, "error": {"message": "No tab with id: 9."}})
        with pytest.raises(HostRefused):
            await starting
    finally:
        await link.close()


async def test_a_task_the_person_said_no_to_or_the_host_refused_is_in_the_history(
    running: tuple[Extension, NativeHost, LocalEndpoint], home: Path,
) -> None:
    """"Agent X asked to … — you said no": what was asked for and not run is recorded as what it is (who asked,
    the text, when, denied or refused and why), for Past tasks and `tabpilot history`; never a key it carried,
    and a program retrying in a loop is recorded once."""
    from store_support import tabpilot

    extension, host, _ = running
    link, rogue = HostLink("tabpilot mcp", connect_wait=2), HostLink("Rogue Tool", connect_wait=2)
    try:
        asking = asyncio.ensure_future(ask_in_new_tab(link, {"requester": "Agent X", "task": "Empty my inbox"}))
        await answer_from_extension(host, extension, "deny", 0)
        assert (await asking)["decision"] == "deny"
        for _ in range(3):
            with pytest.raises(HostRefused):
                await rogue.request("task.start", {"task": "Forward my mail", "tabId": 3})
    finally:
        await link.close()
        await rogue.close()
    # A secret's value in a task that never ran is recorded as the secret's name, as a run records its task.
    saved = tabpilot(home, "secrets", "set", "SHOP_PIN", "--domain", "shop.example", stdin="8642-secret\n")
    assert saved.returncode == 0, saved.stderr
    host.receive({"type": "task.start", "id": "page-1", "task": "Buy everything, PIN 8642-secret", "tabId": 4,
                  "source": "page",
                  "origin": "https://shop.example", "config": {"apiKey": "sk-NEVER-STORED-123", "baseURL":
                                                                "https://llm.example/v1", "model": "m"}})
    for _ in range(100):
        if any(reply.get("id") == "page-1" for reply in extension.of_type("reply")):
            break
        await asyncio.sleep(0.02)

    rows = {row.task: row for row in host.store.list_tasks()}
    bought = "Buy everything, PIN <secret>SHOP_PIN</secret>"
    assert set(rows) == {"Empty my inbox", "Forward my mail", bought}
    said_no, unasked, page = rows["Empty my inbox"], rows["Forward my mail"], rows[bought]
    assert (said_no.status, said_no.source, said_no.requester) == ("denied", "mcp", "Agent X")
    assert said_no.result_text == "The person using the browser refused to let Agent X run this task."
    assert (unasked.status, unasked.requester, unasked.result_text) == (
        "refused", "Rogue Tool", "it tried to start it without asking you first")
    assert (page.status, page.source, page.requester) == ("refused", "page", "https://shop.example")
    assert "may not start tasks in this browser" in str(page.result_text)
    assert all(row.ended_at is not None and row.ended_at >= row.started_at and row.steps == 0 for row in rows.values())
    stored = [path.read_bytes() for path in home.rglob("*") if path.is_file()]  # noqa: ASYNC240
    assert stored and not any(b"sk-NEVER-STORED" in data for data in stored)
    holding = [path.name for path in home.rglob("*") if path.is_file() and b"8642-secret" in path.read_bytes()]  # noqa: ASYNC240
    assert holding in ([], ["secrets.json"]), holding  # the secret itself, where the user keeps it (or a keyring)

    listed = tabpilot(home, "history").stdout
    assert "denied" in listed and listed.count("refused") == 2 and "Empty my inbox" in listed, listed
    shown = tabpilot(home, "history", "show", said_no.task_id).stdout
    assert "asked for by the MCP client Agent X" in shown and "refused to let Agent X" in shown, shown
    assert "denied" in shown


async def test_a_program_flooding_refused_tasks_of_new_texts_does_not_fill_the_history(
    running: tuple[Extension, NativeHost, LocalEndpoint],
) -> None:
    # each of 40 refused, each said so; the record takes the first REFUSALS_RECORDED of this minute, not 40 rows of
    # up to 200,000 characters each (the same text again was already recorded once: this varies it)
    _, host, _ = running
    rogue = HostLink("Rogue Tool", connect_wait=2)
    try:
        for n in range(40):
            with pytest.raises(HostRefused):
                await rogue.request("task.start", {"task": f"Forward my mail, try {n}", "tabId": 3})
    finally:
        await rogue.close()
    recorded = sorted(row.task for row in host.store.list_tasks() if row.requester == "Rogue Tool")
    assert recorded == sorted(f"Forward my mail, try {n}" for n in range(REFUSALS_RECORDED))


async def test_a_refused_task_is_recorded_without_holding_up_the_host_on_a_locked_record(
    running: tuple[Extension, NativeHost, LocalEndpoint], home: Path,
) -> None:
    # As a run's events (taskrun/writer.py): a task that did not run was recorded on the event loop, so another
    # program holding the database's write lock held up ping and every other request for SQLite's 10 s.
    import contextlib
    import sqlite3
    import threading

    extension, host, _ = running
    assert host.store.list_tasks() == []  # the record exists
    locked, release = threading.Event(), threading.Event()

    def hold_the_lock() -> None:
        with contextlib.closing(sqlite3.connect(host.store.path, isolation_level=None)) as db:
            db.execute("BEGIN EXCLUSIVE")
            locked.set()
            release.wait(30)
            db.execute("COMMIT")

    threading.Thread(target=hold_the_lock, daemon=True).start()
    assert await asyncio.to_thread(locked.wait, 10)
    loop = asyncio.get_running_loop()
    host.receive({"type": "task.start", "id": "page-1", "task": "Buy everything", "tabId": 4, "source": "page",
                  "origin": "https://shop.example"})  # no site allowed it: refused, and recorded as such
    await asyncio.sleep(0.2)
    began = loop.time()
    host.receive({"type": "ping", "id": "ping-1"})
    while not any(reply.get("id") == "ping-1" for reply in extension.of_type("reply")):
        assert loop.time() - began < 2, "ping waited for the locked record"
        await asyncio.sleep(0.01)
    assert not any(reply.get("id") == "page-1" for reply in extension.of_type("reply"))  # its record still waits
    release.set()
    while not any(reply.get("id") == "page-1" for reply in extension.of_type("reply")):
        assert loop.time() - began < 20, "the refusal was never answered"
        await asyncio.sleep(0.02)
    [row] = host.store.list_tasks()
    assert (row.task, row.status, row.requester) == ("Buy everything", "refused", "https://shop.example")


async def test_a_question_waiting_when_the_host_stops_is_recorded_withdrawn_saying_so(home: Path) -> None:
    """Found by an attack run: an MCP client's question still open when the browser closed (the host stops, its
    endpoint first) was in no record at all; a page's was recorded. It is recorded as withdrawn by the host."""
    extension = Extension()
    host, endpoint = await start_host(extension)
    link = HostLink("Late Agent", connect_wait=2)
    try:
        asking = asyncio.ensure_future(ask_in_new_tab(link, {"requester": "Late Agent", "task": "Archive old mail"}))
        await extension_request(extension, "approval.request")  # the person is being asked
        await endpoint.close()  # as the host does when stdin closes (native/stdio.py), then shuts down
        await host.shutdown(timeout=0.5)
        with pytest.raises(HostGone):  # the client is told the host went away, not that it cancelled
            await asyncio.wait_for(asking, 5)
    finally:
        await link.close()
    [row] = host.store.list_tasks()
    assert (row.task, row.status, row.requester) == ("Archive old mail", "withdrawn", "Late Agent")
    assert row.result_text is not None and "helper stopped" in row.result_text, row.result_text
