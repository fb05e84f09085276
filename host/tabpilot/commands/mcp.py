"""`tabpilot mcp`: an MCP server over stdio (started by an MCP client, not by you), and
`tabpilot mcp config --client claude-desktop|cursor|vscode [--write]`: the entry that starts it.

By default tasks run in your own browser through the tabpilot extension (the browser must be open;
with `--fallback launch` a Chromium of its own stands in while it is not); `--launch` always starts a
Chromium of its own (headed, `--headless` for servers), `--cdp-url` attaches to a running one. The MCP
SDK is an optional extra: `pip install 'tabpilot[mcp]'`."""

from __future__ import annotations

import argparse
import json
import os
import sys

MISSING_SDK = (
    "tabpilot mcp needs the MCP Python SDK, which is not installed. Install it with\n"
    "    pip install 'tabpilot[mcp]'\n"
    "(or, for a pipx install: pipx inject tabpilot mcp)"
)
EXIT_USAGE = 2


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", nargs="?", choices=["config"],
                        help="config: print (or --write) the entry that starts this server in an MCP client")
    parser.add_argument("--client", choices=["claude-desktop", "cursor", "vscode"],
                        help="with config: which MCP client's config file")
    parser.add_argument("--write", action="store_true",
                        help="with config: merge the entry into that client's config file (other entries kept)")
    parser.add_argument("--launch", action="store_true",
                        help="run tasks in a Chromium of its own instead of your browser (no extension needed)")
    parser.add_argument("--fallback", choices=["launch"],
                        help="launch: when your browser is not reachable (not open, no tabpilot host), run the "
                             "task in a Chromium of its own instead of failing")
    parser.add_argument("--headless", action="store_true",
                        help="with --launch or --fallback launch: no browser window")
    parser.add_argument("--cdp-url", metavar="WS", help="run tasks in the browser at this DevTools endpoint")
    parser.add_argument("--browser", metavar="PATH",
                        help="with --launch or --fallback launch: the browser binary (default: found)")
    parser.add_argument("--approve", choices=["always", "ask"],
                        help="ask: the person allows each new MCP client in the tabpilot popup (default in your "
                             "browser); always: run without asking (the default, and the only choice, with "
                             "--launch/--cdp-url, which have no popup to ask in)")
    parser.add_argument("--approve-timeout", type=float, metavar="S",
                        help="with --approve ask: refuse when nobody answered within S seconds (default 120)")


def _server_options(args: argparse.Namespace) -> list[str]:
    """The flags the config entry passes on to `tabpilot mcp`."""
    options = []
    if args.launch:
        options.append("--launch")
    if args.fallback:
        options += ["--fallback", args.fallback]
    if args.headless:
        options.append("--headless")
    if args.cdp_url:
        options += ["--cdp-url", args.cdp_url]
    if args.browser:
        options += ["--browser", args.browser]
    if args.approve:
        options += ["--approve", args.approve]
    if args.approve_timeout is not None:
        options += ["--approve-timeout", str(args.approve_timeout)]
    return options


def _misuse(args: argparse.Namespace) -> str | None:
    """The catalog key that says which options given do not go together, if any."""
    own_browser = args.launch or bool(args.cdp_url)
    if (args.headless or args.browser) and not (args.launch or args.fallback):
        return "mcp.headless_without_launch"
    if args.fallback and own_browser:
        return "mcp.fallback_with_own_browser"
    if own_browser and args.approve == "ask":
        return "mcp.ask_without_popup"
    if args.action != "config" and (args.client or args.write):
        return "mcp.client_without_config"
    return None


def run(args: argparse.Namespace) -> int:
    misuse = _misuse(args)
    if misuse is not None:
        from ..i18n import text as say
        from .output import fail
        from .run import terminal_language

        language = terminal_language()
        return fail("mcp", say(misuse, language), language, EXIT_USAGE)
    if args.action == "config":
        return _config(args)
    try:
        import mcp  # noqa: F401
    except ImportError:
        print(MISSING_SDK, file=sys.stderr)
        return EXIT_USAGE
    if sys.stdin.isatty():  # started by hand: say what it is, or it looks hung (a client never has a terminal here)
        import signal

        from ..i18n import text as say
        from .run import EXIT_STOPPED, terminal_language

        print(say("mcp.on_a_terminal", terminal_language()), file=sys.stderr, flush=True)
        # Ctrl-C, as it says: the SDK reads standard input in a thread nothing can interrupt, so the interrupted
        # server waited for the next line typed. Nothing is left behind: a browser it launched has its watchdog.
        signal.signal(signal.SIGINT, lambda *_: os._exit(EXIT_STOPPED))
    _log_to_file()
    import anyio

    from ..mcp.backends import Backend, FallbackBackend, HostBackend, LaunchBackend
    from ..mcp.hostlink import HostLink
    from ..mcp.server import build_server

    backend: Backend
    if args.launch or args.cdp_url:
        backend = LaunchBackend(headless=args.headless, cdp_url=args.cdp_url, executable=args.browser)
    else:
        in_users_browser = HostBackend(HostLink(f"tabpilot mcp (pid {os.getpid()})"), approve=args.approve or "ask",
                                       approve_timeout=args.approve_timeout)
        backend = in_users_browser
        if args.fallback:
            backend = FallbackBackend(in_users_browser, LaunchBackend(headless=args.headless, executable=args.browser))
    server = build_server(backend)

    async def serve() -> None:
        try:
            await server.run_stdio_async()
        finally:
            with anyio.CancelScope(shield=True):
                await backend.close()

    try:
        anyio.run(serve)
    except KeyboardInterrupt:
        pass
    return 0


def _config(args: argparse.Namespace) -> int:
    from ..i18n import text as say
    from ..mcp.clients import CLIENTS, ConfigFileError, config_path, merge_into, snippet
    from .output import fail
    from .run import terminal_language

    language = terminal_language()

    if not args.client:
        print(say("mcp_config.which_client", language, clients="|".join(CLIENTS)), file=sys.stderr)
        return EXIT_USAGE
    options = _server_options(args)
    if not args.write:
        print(json.dumps(snippet(args.client, options), indent=2))
        print("\n" + say("mcp_config.add_this", language, path=config_path(args.client)), file=sys.stderr)
        return 0
    path = config_path(args.client)
    try:
        changed = merge_into(path, args.client, options)
    except (ConfigFileError, OSError) as exc:
        return fail("mcp config", exc, language)
    print(say("mcp_config.added" if changed else "mcp_config.already", language, client=CLIENTS[args.client].label,
              path=path))
    return 0


def _log_to_file() -> None:
    """stdout carries the MCP protocol: log lines go to a file (and warnings to stderr, which MCP
    clients show in their server logs)."""
    import logging.handlers

    from .. import paths

    handler = logging.handlers.RotatingFileHandler(paths.log_dir() / "mcp.log", maxBytes=1_000_000,
                                                   backupCount=2, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    for chatty in ("httpx", "httpx2", "openai", "websockets", "mcp"):
        logging.getLogger(chatty).setLevel(logging.WARNING)
