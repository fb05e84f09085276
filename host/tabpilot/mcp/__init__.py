"""`tabpilot mcp`: an MCP server over stdio that lets other AI agents (Claude Desktop, Cursor, VS Code,
any MCP client) hand whole tasks to tabpilot, with a progress notification for every step.

- `server.py`: the MCP tools (run_task, get_task, stop_task, list_tabs, read_page) on the official SDK.
- `backends.py`: where tasks run — in the user's browser through the host the extension keeps running
  (`hostlink.py`: its local endpoint), or in a Chromium of its own (`--launch`, `--cdp-url`).
- `progress.py`: a task's events → the progress messages an MCP client shows.
- `clients.py`: `tabpilot mcp config`: the entry that starts this server in each MCP client's config.

Only `server.py` needs the `mcp` package (the `tabpilot[mcp]` extra)."""
