"""`tabpilot mcp` once the user's browser has closed: a call is told at once that the browser was closed and
what to do, instead of waiting 10 s for a host the closed browser will never start again. Its own module: the
test closes the module's browser. Real Chromium with the real extension and host; the MCP SDK's own client."""

from __future__ import annotations

import asyncio
import time

import pytest
from e2e_support import Harness, wait_until
from test_mcp import mcp_client

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]


async def test_a_call_after_the_browser_closed_is_told_so_at_once(harness: Harness) -> None:
    async with mcp_client(harness, "--approve", "always") as client:
        # the server has reached the browser's host, and --approve always lets this client see the person's tabs
        # from its first call
        is_error, tabs = await client.call("list_tabs")
        assert not is_error and tabs["tabs"], tabs
        await harness.browser.close()  # the user closes the browser: its host goes with it
        # (a call while the host is still on its way out is told it "went away", the browser closing named first)
        # The host is gone: it exited once its stdin closed, or it went with the browser's processes before it could
        # say so in its log (the test's browser is killed as a group: 3 runs in 12 never logged "host exited").
        await wait_until(lambda: asyncio.to_thread(lambda: not harness.host_pids()), "the host to be gone", 10)
        for tool, arguments in (("run_task", {"task": "Anything"}), ("run_task", {"task": "Again"}),
                                ("list_tabs", {})):
            asked = time.monotonic()
            is_error, text = await client.call(tool, **arguments)
            # measured, not asserted (bench/ times things): about 1 s, where it waited 10 s for a respawn
            print(f"{tool}: told after {time.monotonic() - asked:.1f} s")
            assert is_error and "tabpilot cannot reach your browser: it was closed" in text, text
            assert "Open Chrome/Chromium" in text and "--fallback launch" in text, text
        assert not [message for _, message in client.progress if "waiting" in (message or "")], client.progress
