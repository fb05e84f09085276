"""`tabpilot sites`: which web sites may start tasks in this browser through `window.PAGE_AGENT_EXT`, and
which MCP clients (`tabpilot mcp`) run tasks without asking.

`list` · `allow ORIGIN [--ask] [--use-my-model] [--all-tabs]` · `revoke ORIGIN` · `revoke-client NAME` ·
`new-token` (page-agent's token scheme: pages holding the old token lose access). A browser that is
running picks a change up at once (its host watches the file)."""

from __future__ import annotations

import argparse
import json
import sys
import time


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print the list as JSON")
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    listing = actions.add_parser("list", help="the allowed sites and their grants (the default)")
    listing.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print the list as JSON")
    allow = actions.add_parser("allow", help="let one origin start tasks (again: replaces its grants)")
    allow.add_argument("origin", metavar="ORIGIN", help="exactly scheme://host[:port], e.g. https://app.example.com")
    allow.add_argument("--ask", action="store_true", help="ask in the browser before each task")
    allow.add_argument("--use-my-model", action="store_true",
                       help="a task that names no model of its own may use yours (your key stays with your endpoint)")
    allow.add_argument("--all-tabs", action="store_true",
                       help="the site may ask for all your tabs (experimentalIncludeAllTabs)")
    revoke = actions.add_parser("revoke", help="take a site's permission away")
    revoke.add_argument("origin", metavar="ORIGIN")
    revoke_client = actions.add_parser("revoke-client",
                                       help="ask an always-allowed MCP client again before its next task")
    revoke_client.add_argument("name", metavar="NAME", help="the client's name, as `tabpilot sites list` shows it")
    actions.add_parser("new-token", help="replace page-agent's token: pages holding the old one lose access")


def _flags(site: dict[str, object]) -> str:
    names = [("ask", "ask before each task"), ("useMyModel", "may use your model"), ("allTabs", "all tabs")]
    shown = [label for key, label in names if site.get(key)]
    return ", ".join(shown) or "runs without asking, brings its own model, its own tab(s) only"


def run(args: argparse.Namespace) -> int:
    from ..store import sites as store

    try:
        if args.action == "allow":
            grant = store.allow(args.origin, ask=args.ask, use_my_model=args.use_my_model, all_tabs=args.all_tabs)
            print(f"allowed {grant.origin}: {_flags(grant.to_wire())}")
            return 0
        if args.action == "revoke":
            origin = store.normalize_origin(args.origin)
            if not store.revoke(origin):
                print(f"tabpilot sites: {origin} was not allowed (see `tabpilot sites list`)", file=sys.stderr)
                return 1
            print(f"revoked {origin}")
            return 0
        if args.action == "revoke-client":
            if not store.revoke_client(args.name):
                print(f"tabpilot sites: the MCP client {args.name!r} was not always allowed "
                      "(see `tabpilot sites list`)", file=sys.stderr)
                return 1
            print(f"{args.name} will be asked again before its next task")
            return 0
        if args.action == "new-token":
            print(f"new page-agent token ({store.TOKEN_NAME}): {store.new_token()}")
            return 0
        view = store.public_view(store.load_sites())
    except store.SiteError as exc:
        print(f"tabpilot sites: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(view, indent=2))
        return 0
    if not view["sites"]:
        print("No site may start tasks. Allow one with `tabpilot sites allow https://app.example.com`.")
    for site in view["sites"]:
        print(f"{site['origin']}  ({_flags(site)})")
    if view["mcpClients"]:
        print("MCP clients that run tasks without asking (revoke with `tabpilot sites revoke-client NAME`):")
    for client in view["mcpClients"]:
        since = time.strftime("%Y-%m-%d %H:%M", time.localtime(client["allowedAt"]))
        print(f"  {client['name']}  (since {since})")
    print(f"page-agent token ({view['tokenName']}): {view['token']}")
    return 0
