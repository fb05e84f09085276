"""The native messaging host: what Chromium starts when the extension connects.

    codec.py     frames, sans I/O: decode any bytes, encode with chunking under the 1 MiB limit
    messages.py  every frame of PROTOCOL.md, both directions, as a pydantic model; parse_incoming
                 names what is wrong
    replies.py   reply frames and request ids as plain dicts (before pydantic and asyncio load)
    peer.py      requests to the extension and their replies, pushes to listeners (no I/O)
    host.py      routing: every request answered once, bad input answered and survived
    tasks.py     one task at a time: an Agent on a Browser over ExtensionTabs, each event recorded and pushed
    relay.py     CDP over chrome.debugger (RelayTransport) and tabs over chrome.tabs (ExtensionTabs)
    process.py   the process: frames only on stdout, log file, the first hello answered before asyncio loads
    stdio.py     the rest of the I/O: stdin/stdout threads under the loop, exit on EOF
    debug.py     tests only: a loopback socket that gives another process the extension's tabs
"""
