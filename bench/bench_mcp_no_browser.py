"""`tabpilot mcp` with the browser closed: how long a call takes to fail (the MCP SDK's ClientSession over
stdio, as a client starts the server), with no socket at all and with the socket and token a host killed at
browser exit leaves behind (connecting is refused). Three calls each, the first after the server started.

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


async def calls(home: Path) -> list[float]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=sys.executable, args=["-m", "tabpilot", "mcp"],
                                   env={"HOME": str(home), "TABPILOT_HOME": str(home / "tp"),
                                        "PATH": os.environ["PATH"]})
    seconds = []
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
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


async def main() -> None:
    with tempfile.TemporaryDirectory() as first, tempfile.TemporaryDirectory() as second:
        plain = await calls(Path(first))
        stale_socket(Path(second))
        left = await calls(Path(second))
    print("list_tabs with the browser closed, seconds to the error (3 calls):")
    print("  no socket:            " + "  ".join(f"{s:.2f}" for s in plain))
    print("  socket left behind:   " + "  ".join(f"{s:.2f}" for s in left))


if __name__ == "__main__":
    asyncio.run(main())
