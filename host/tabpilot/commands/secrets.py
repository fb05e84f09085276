"""`tabpilot secrets`: values the agent may type without the model ever seeing them.

`set NAME --domain example.com` reads the value without echo from a terminal, or from stdin when it is
not one (for scripts) · `list` (names and domains only) · `delete NAME`. In a task the model is told,
on a page of that domain, that it may type <secret>NAME</secret>; the real value is put in only there."""

from __future__ import annotations

import argparse
import json
import sys

EPILOG = """\
A domain matches that host and its subdomains on any port: a secret for example.com can be typed on
https://login.example.com:8443 but not on example.org. localhost and 127.0.0.1 are different domains.

examples:
  tabpilot secrets set GITHUB_PASSWORD --domain github.com      (asks for the value, without echo)
  printf %s "$TOKEN" | tabpilot secrets set API_TOKEN --domain api.example.com
  tabpilot secrets list
  tabpilot secrets delete GITHUB_PASSWORD
"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EPILOG
    parser.add_argument("--json", action="store_true", help="print the list as JSON")
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    listing = actions.add_parser("list", help="the secrets' names and domains (the default; never a value)")
    listing.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print the list as JSON")
    setting = actions.add_parser(
        "set", help="store a secret (again: replaces it); the value is read from the terminal or stdin",
        description="Store a secret. Its value is asked for without echo, or read from stdin when that is "
                    "not a terminal; it never goes on the command line.",
    )
    setting.add_argument("name", metavar="NAME", help="what the model calls it, e.g. GITHUB_PASSWORD")
    setting.add_argument("--domain", required=True, metavar="DOMAIN",
                         help="the site it may be typed on (and its subdomains), e.g. github.com")
    delete = actions.add_parser("delete", help="forget a secret")
    delete.add_argument("name", metavar="NAME")


def _fail(message: str) -> int:
    print(f"tabpilot secrets: {message}", file=sys.stderr)
    return 1


def _read_value(name: str) -> str:
    if sys.stdin.isatty():
        import getpass

        return getpass.getpass(f"Value of {name} (not shown): ")
    return sys.stdin.read().rstrip("\r\n")


def run(args: argparse.Namespace) -> int:
    from ..privacy import secrets as store

    try:
        if args.action == "set":
            store.check_name(args.name)
            value = _read_value(args.name)
            if not value:
                return _fail("no value given (type it when asked, or pipe it on stdin)")
            secret = store.set_secret(args.name, args.domain, value)
            print(f"saved {secret.name} for {secret.domain} (and its subdomains) in {store.backend_name()}")
            return 0
        if args.action == "delete":
            if not store.delete_secret(args.name):
                return _fail(f"there is no secret named {args.name} (see `tabpilot secrets list`)")
            print(f"deleted {args.name}")
            return 0
        listed = store.list_secrets()
    except store.SecretError as exc:
        return _fail(str(exc))
    except OSError as exc:
        return _fail(f"cannot save the secrets file {store.secrets_path()}: {exc.strerror or exc}")
    except (KeyboardInterrupt, EOFError):
        return _fail("cancelled; nothing was saved")
    if args.json:
        print(json.dumps([{"name": name, "domain": domain} for name, domain in listed], indent=2))
        return 0
    if not listed:
        print("No secrets. Add one with `tabpilot secrets set NAME --domain example.com`.")
    for name, domain in listed:
        print(f"{name:<24}{domain}")
    return 0
