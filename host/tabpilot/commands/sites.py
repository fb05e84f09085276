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
from collections.abc import Mapping
from pathlib import PureWindowsPath

from ..i18n import Language
from ..i18n import text as say
from ..textsafety import show_controls
from .output import fail


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


_FLAG_OPTIONS = {"ask": "--ask", "useMyModel": "--use-my-model", "allTabs": "--all-tabs"}


def _flags(site: Mapping[str, object], language: Language) -> str:
    names = [("ask", "sites.flag.ask"), ("useMyModel", "sites.flag.use_my_model"), ("allTabs", "sites.flag.all_tabs")]
    shown = [say(label, language) for key, label in names if site.get(key)]
    return ("、" if language == "zh-CN" else ", ").join(shown) or say("sites.flag.none", language)


def run(args: argparse.Namespace) -> int:
    from ..store import sites as store
    from .run import terminal_language

    language = terminal_language()
    try:
        if args.action == "allow":
            before = store.find(store.load_sites(), store.normalize_origin(args.origin))
            grant = store.allow(args.origin, ask=args.ask, use_my_model=args.use_my_model, all_tabs=args.all_tabs)
            print(say("sites.allowed", language, origin=grant.origin, flags=_flags(grant.to_wire(), language)))
            # allowing again replaces the grants: one given in the popup and not named again goes, and says so
            dropped = {key: True for key, on in (before.to_wire() if before else {}).items()
                       if key in _FLAG_OPTIONS and on is True and not grant.to_wire().get(key)}
            if dropped:
                print(say("sites.dropped", language, flags=_flags(dropped, language),
                          options=" ".join(_FLAG_OPTIONS[key] for key in dropped)))
            return 0
        if args.action == "revoke":
            origin = store.normalize_origin(args.origin)
            if not store.revoke(origin):
                print(say("sites.not_allowed", language, origin=origin), file=sys.stderr)
                return 1
            print(say("sites.revoked", language, origin=origin))
            return 0
        if args.action == "revoke-client":
            if not store.revoke_client(args.name):
                print(say("sites.client_not_allowed", language, name=args.name), file=sys.stderr)
                return 1
            print(say("sites.client_revoked", language, name=args.name))
            return 0
        if args.action == "new-token":
            print(say("sites.new_token", language, name=store.TOKEN_NAME, token=store.new_token()))
            return 0
        view = store.public_view(store.load_sites())
    except store.SiteError as exc:
        return fail("sites", exc.text(language), language)
    if args.json:
        print(json.dumps(view, indent=2))
        return 0
    if not view["sites"]:
        print(say("sites.none", language))
    for site in view["sites"]:
        print(f"{site['origin']}  {say('sites.site_flags', language, flags=_flags(site, language))}")
    if view["mcpClients"]:
        print(say("sites.clients", language))
    for client in view["mcpClients"]:  # a grant is the client's name and the program that started it: both shown
        since = time.strftime("%Y-%m-%d %H:%M", time.localtime(client["allowedAt"]))
        path = client.get("program")
        line = say("sites.client", language, name=client["name"], program=PureWindowsPath(path).name, path=path,
                   since=since) if path else say("sites.client_program_unknown", language, name=client["name"],
                                                 since=since)
        print(show_controls(line))  # a name is the client's own
    print(say("sites.token", language, name=view["tokenName"], token=view["token"]))
    return 0
