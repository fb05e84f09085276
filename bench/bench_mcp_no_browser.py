"""`tabpilot mcp` with the browser closed: how long a call takes to fail (the MCP SDK's ClientSession over
stdio, as a client starts the server), with no socket at all, with the socket and token a host killed at
browser exit leaves behind (connecting is refused), and once a real browser (headless Chromium with extension/
loaded and the host installed, as tests/e2e/ does) that the server had reached was closed. Three calls each,
the first after the server started (after its one call that reached the browser).

    .venv/bin/python bench/bench_mcp_no_browser.py

TABPILOT_HOME and HOME in temporary folders. Prints numbers; asserts nothing.
"""

from __future__ import annotations

import asyncio
import os
import socket
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


async def calls(home: Path, tabpilot_home: Path | None = None, harness: Any = None) -> list[float]:
    """With `harness`: its browser is reached once, then closed, before the timed calls."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=sys.executable, args=["-m", "tabpilot", "mcp"],
                                   env={"HOME": str(home), "TABPILOT_HOME": str(tabpilot_home or home / "tp"),
                                        "PATH": os.environ["PATH"]})
    seconds = []
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        if harness is not None:
            assert not (await session.call_tool("list_tabs", {})).is_error
            await harness.browser.close()
        for _ in range(3):
            began = time.perf_counter()
            result = await session.call_tool("list_tabs", {})
            seconds.append(time.perf_counter() - began)
            assert result.is_error
    return seconds


def stale_socket(home: Path) -> None:
    os.environ["TABPILOT_HOME"] = str(home / "tp")
    from tabpilot.native.endpoint import EndpointAddress

    address = EndpointAddress.for_this_user()
    left = socket.socket(socket.AF_UNIX)
    left.bind(address.socket)
    left.close()
    address.token_file.write_text("a-dead-hosts-token")


async def closed_after_reached(base: Path) -> list[float]:
    sys.path.insert(0, str(ROOT / "tests"))  # e2e_support imports tests/required.py
    sys.path.insert(0, str(ROOT / "tests" / "e2e"))
    from e2e_support import start_connected_harness

    from tabpilot.browser.launcher import find_browser

    harness = await start_connected_harness(find_browser(), base)
    try:
        return await calls(harness.home, harness.tabpilot_home, harness)
    finally:
        await harness.browser.close()


async def main() -> None:
    with tempfile.TemporaryDirectory() as first, tempfile.TemporaryDirectory() as second, \
            tempfile.TemporaryDirectory() as third:
        plain = await calls(Path(first))
        stale_socket(Path(second))
        left = await calls(Path(second))
        reached = await closed_after_reached(Path(third))
    print("list_tabs with the browser closed, seconds to the error (3 calls):")
    print("  no socket:            " + "  ".join(f"{s:.2f}" for s in plain))
    print("  socket left behind:   " + "  ".join(f"{s:.2f}" for s in left))
    print("  closed after reached: " + "  ".join(f"{s:.2f}" for s in reached))


if __name__ == "__main__":
    asyncio.run(main())
