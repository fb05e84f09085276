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

from .arguments import add_browser_option, positive_seconds

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
    add_browser_option(parser, "with --launch or --fallback launch: the browser to launch: chrome, chromium, edge, "
                               "brave, or the path of its program (default: found)")
    parser.add_argument("--approve", choices=["always", "ask"],
                        help="ask: the person allows each new MCP client in the tabpilot popup (default in your "
                             "browser); always: run without asking (the default, and the only choice, with "
                             "--launch/--cdp-url, which have no popup to ask in)")
    parser.add_argument("--approve-timeout", type=positive_seconds, metavar="S",
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
    if args.launch and args.cdp_url:
        return "mcp.launch_with_cdp_url"
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
    _say_if_no_display(args)
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
            backend = FallbackBackend(in_users_browser, LaunchBackend(headless=args.headless, executable=args.browser,
                                                                      flag="--fallback launch"))
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
    except BaseExceptionGroup as errors:  # the SDK's task group: a write to a client that has gone
        if errors.split(CLIENT_GONE)[1] is not None:
            raise
        return _client_gone()
    except CLIENT_GONE:
        return _client_gone()
    return 0


# Writing to (or reading from) a client that has gone: it was killed, or crashed, without closing its end first.
CLIENT_GONE = (BrokenPipeError, ConnectionResetError)


def _client_gone() -> int:
    """The MCP client went away mid-conversation: one line on stderr (if anyone still reads it), no traceback,
    and nothing more written to the closed stdout (Python's own flush at exit included). Its tasks were stopped
    and a browser this server launched was closed on the way out (`serve`)."""
    from ..i18n import text as say
    from .output import silence_stdout
    from .run import terminal_language

    silence_stdout()
    try:
        print(say("mcp.client_gone", terminal_language()), file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass
    return 0


def _say_if_no_display(args: argparse.Namespace) -> None:
    """A browser window asked for (--launch, --fallback launch, without --headless) where there is no display:
    said on stderr at start-up, where MCP clients show a server's log (stdout is the protocol), instead of first at
    a task. The server still starts: each call that needs that browser says the same to the client."""
    from ..browser.launcher import needs_display
    from ..i18n import text as say
    from ..mcp.backends import no_display
    from .run import terminal_language

    flag = "--launch" if args.launch else "--fallback launch" if args.fallback == "launch" else None
    if flag is not None and needs_display(args.headless):
        language = terminal_language()
        print(say("cli.error", language, command="mcp", message=no_display(flag, language)), file=sys.stderr,
              flush=True)


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
    from ..logfile import log_to_file

    log_to_file("mcp.log", quiet=("mcp",))
