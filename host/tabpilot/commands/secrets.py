"""`tabpilot secrets`: values the agent may type without the model ever seeing them.

`set NAME --domain example.com [--any-field]` reads the value without echo from a terminal, or from stdin when
it is not one (for scripts) · `list` (names, domains, any-field marks; never a value) · `delete NAME`. In a task the
model is told, on a page of that domain, that it may type <secret>NAME</secret>; the real value is put in only
there, and only into a login field unless the secret was stored with --any-field (privacy/fields.py)."""

from __future__ import annotations

import argparse
import ipaddress
import json
import sys

from ..i18n import Language, column
from ..i18n import text as say
from .output import fail

EPILOG = """\
A domain matches that host and its subdomains on any port: a secret for example.com can be typed on
https://login.example.com:8443 but not on example.org. localhost and 127.0.0.1 are different domains.
It is typed only into a login field there (a password, user name or e-mail, or one-time-code field), never
into a search box, a comment or any other field, unless it is stored with --any-field (e.g. an API key
for a settings page).

examples:
  tabpilot secrets set GITHUB_PASSWORD --domain github.com      (asks for the value, without echo)
  printf %s "$TOKEN" | tabpilot secrets set API_TOKEN --domain api.example.com --any-field
  tabpilot secrets list
  tabpilot secrets delete GITHUB_PASSWORD
"""


def _is_address(domain: str) -> bool:
    """An IP address (127.0.0.1, ::1) is a host of its own: it has no subdomains."""
    try:
        ipaddress.ip_address(domain)
    except ValueError:
        return False
    return True


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
    setting.add_argument("--any-field", action=argparse.BooleanOptionalAction, default=None,
                         help="type it into any text field there, not only a login field (e.g. an API key); "
                              "--no-any-field: login fields only; saved again with neither, it keeps its setting")
    delete = actions.add_parser("delete", help="forget a secret")
    delete.add_argument("name", metavar="NAME")



def _read_value(name: str, language: Language) -> str:
    if sys.stdin.isatty():
        import getpass

        try:
            return getpass.getpass(say("secrets.ask_value", language, name=name))
        except (KeyboardInterrupt, EOFError):
            print(file=sys.stderr)  # the message goes under the prompt, not after it
            raise
    return sys.stdin.read().rstrip("\r\n")


def _backend(language: Language) -> str:
    """Where secrets are kept, in the user's words (privacy/secrets.py names it in English)."""
    from ..privacy import secrets as store

    path = store.secrets_path()
    if str(path) in store.backend_name():
        return say("secrets.backend.file", language, path=path)
    return say("secrets.backend.keychain", language)


def run(args: argparse.Namespace) -> int:
    from ..privacy import secrets as store
    from .run import terminal_language

    language = terminal_language()

    try:
        if args.action == "set":
            store.check_name(args.name)
            store.check_domain(args.domain)  # before asking for the value, not after it was typed
            value = _read_value(args.name, language)
            if not value:
                return fail("secrets", say("secrets.no_value", language), language)
            secret = store.set_secret(args.name, args.domain, value, any_field=args.any_field)
            saved = "secrets.saved_address" if _is_address(secret.domain) else "secrets.saved"  # no subdomains
            print(say(saved, language, name=secret.name, domain=secret.domain, backend=_backend(language)))
            return 0
        if args.action == "delete":
            if not store.delete_secret(args.name):
                return fail("secrets", say("secrets.unknown", language, name=args.name), language)
            print(say("secrets.deleted", language, name=args.name))
            return 0
        listed = store.list_secrets()
    except store.SecretError as exc:
        return fail("secrets", exc.text(language), language)
    except BrokenPipeError:  # the reader of stdout has gone: not a file it could not save (cli.main)
        raise
    except OSError as exc:
        reason = exc.strerror or exc
        return fail("secrets", say("secrets.cannot_save", language, path=store.secrets_path(), reason=reason), language)
    except (KeyboardInterrupt, EOFError):
        return fail("secrets", say("secrets.cancelled", language), language)
    if args.json:
        print(json.dumps([entry.as_json() for entry in listed], indent=2))
        return 0
    if not listed:
        print(say("secrets.none", language))
    for entry in listed:
        fields = say("secrets.any_field" if entry.any_field else "secrets.login_fields", language)
        print(f"{column(entry.name, 24)}{column(entry.domain, 24)}{fields}")
    return 0
