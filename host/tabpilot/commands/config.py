"""`tabpilot config [list]`: show settings (the API key masked); `get KEY`: one of them, as the list shows it;
`set KEY VALUE`; `unset KEY`.

`tabpilot config set api-key` without a value reads the key from stdin (or asks for it without echo),
so it stays out of the shell's history."""

from __future__ import annotations

import argparse
import json
import os
import sys

from ..i18n import Language, column
from ..i18n import text as say
from .output import fail

MASK_KEYS = ("mask-emails", "mask-phones", "mask-cards", "mask-ibans")  # on/off: hidden from the model in page text
KEYS = ("base-url", "model", "api-key", "max-steps", "language", "debug-capture", "model-deadline", "max-reply-mb",
        *MASK_KEYS, "allowed-domains", "blocked-domains", "ask-before", "use-vision")


EPILOG = """\
language (en-US or zh-CN) is the language the agent works in (its instructions, its notes to the model
and so its replies) and the language of these commands' messages (without it: the terminal's LANG). The
extension's popup follows Chrome's own language instead.
"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EPILOG
    parser.add_argument("--json", action="store_true", help="print the settings (key masked) as JSON")
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    listing = actions.add_parser("list", help="every setting and its value (the default)")
    listing.add_argument("--json", action="store_true", default=argparse.SUPPRESS,
                         help="print the settings (key masked) as JSON")
    get_parser = actions.add_parser("get", help="print one setting's value, as the list shows it (the key masked)")
    get_parser.add_argument("key", metavar="KEY", help=", ".join(KEYS))
    set_parser = actions.add_parser("set", help="change one setting")
    set_parser.add_argument("key", metavar="KEY", help=", ".join(KEYS))
    set_parser.add_argument("value", metavar="VALUE", nargs="?", help="for api-key: omit (or -) to read it from stdin")
    unset_parser = actions.add_parser("unset", help="reset one setting to its default")
    unset_parser.add_argument("key", metavar="KEY", help=", ".join(KEYS))



def _read_secret(language: Language) -> str:
    if sys.stdin.isatty():
        import getpass

        try:
            return getpass.getpass(say("config.ask_key", language))
        except (KeyboardInterrupt, EOFError):
            print(file=sys.stderr)  # the message goes under the prompt, not after it
            raise
    return sys.stdin.readline().strip()


def _check_key(key: str, language: Language) -> str | None:
    if key not in KEYS:
        import difflib

        close = difflib.get_close_matches(key.lower().replace("_", "-"), KEYS, n=1, cutoff=0.75)
        if close:
            return say("config.unknown_close", language, key=key, close=close[0])
        return say("config.unknown", language, key=key, keys=", ".join(KEYS))
    return None


def _text(value: object, language: Language) -> str:
    if value is None:
        return say("config.not_set", language)
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, list):
        return ", ".join(map(str, value)) or say("config.none", language)
    return str(value)


def _show_value(view: dict[str, object], key: str, language: Language) -> str:
    wire = {"base-url": "baseURL", "api-key": "apiKeyHint", "max-steps": "maxSteps", "debug-capture": "debugCapture",
            "model-deadline": "modelDeadline", "max-reply-mb": "maxReplyMB", "mask-emails": "maskEmails",
            "mask-phones": "maskPhones", "mask-cards": "maskCards", "mask-ibans": "maskIbans",
            "allowed-domains": "allowedDomains", "blocked-domains": "blockedDomains", "ask-before": "askBefore",
            "use-vision": "useVision"}
    if key == "allowed-domains" and not view["allowedDomains"]:  # no list: no limit (the listing says the same)
        return say("config.any_domain", language)
    return _text(view[wire.get(key, key)], language)


def _rows(view: dict[str, object], language: Language, *, language_chosen: bool = True) -> list[tuple[str, str]]:
    """Each setting's name and its value as shown: an API key only as whether it is set and its last characters;
    a language not chosen as the terminal's (`language`, the one these commands then speak), not the default."""
    key_text = str(view["apiKeyHint"]) if view["apiKeySet"] else say("config.not_set", language)
    if not view["apiKeySet"] and os.environ.get("OPENAI_API_KEY"):
        key_text = say("config.key_from_env", language)
    base_text = _text(view["baseURL"], language)
    if view["baseURL"] is None and os.environ.get("OPENAI_BASE_URL"):
        base_text = say("config.base_from_env", language, url=os.environ["OPENAI_BASE_URL"])
    return [
        ("base-url", base_text),
        ("model", _text(view["model"], language)),
        ("api-key", key_text),
        ("max-steps", _text(view["maxSteps"], language)),
        ("language", _text(view["language"], language) if language_chosen
         else say("config.language_from_terminal", language, value=language)),
        ("debug-capture", _text(view["debugCapture"], language)),
        ("model-deadline", say("config.model_deadline", language, seconds=f"{view['modelDeadline']:g}")),
        ("max-reply-mb", say("config.max_reply", language, mb=f"{view['maxReplyMB']:g}")),
        *((key, _show_value(view, key, language)) for key in MASK_KEYS),
        ("allowed-domains", _show_value(view, "allowed-domains", language)),
        ("blocked-domains", _text(view["blockedDomains"], language)),
        ("ask-before", say("config.ask_before", language, value=view["askBefore"])),
        ("use-vision", say("config.use_vision", language, value=view["useVision"])),
    ]


def _show(view: dict[str, object], path: str, language: Language, *, language_chosen: bool = True) -> str:
    lines = [f"{column(name, 16)}{value}" for name, value in _rows(view, language, language_chosen=language_chosen)]
    lines.append("\n" + say("config.file", language, path=path))
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from .. import paths
    from ..store.settings import SettingsError, choices, load_settings, public_view, update_settings
    from .run import terminal_language

    language = terminal_language()

    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(errors="replace")
    action = getattr(args, "action", None)
    try:
        settings = load_settings()
        if action in (None, "list"):
            view = public_view(settings)
            chosen = "language" in settings.model_fields_set
            print(json.dumps(view, indent=2) if args.json
                  else _show(view, str(paths.config_path()), language, language_chosen=chosen))
            return 0
        problem = _check_key(args.key, language)
        if problem:
            return fail("config", problem, language)
        if action == "get":
            chosen = "language" in settings.model_fields_set
            print(dict(_rows(public_view(settings), language, language_chosen=chosen))[args.key])
            return 0
        if action == "set":
            value = args.value
            if args.key == "api-key" and value in (None, "-"):
                asked = sys.stdin.isatty()
                value = _read_secret(language)
                if not value:
                    return fail("config", say("config.no_key_typed" if asked else "config.no_key", language), language)
            elif value is None:
                listed = choices(args.key)
                missing = (say("config.give_choice", language, key=args.key, choices=" | ".join(listed)) if listed
                           else say("config.give_value", language, key=args.key))
                return fail("config", missing, language)
            update_settings({args.key: value})
            shown = public_view(load_settings())
            language = terminal_language()  # `config set language zh-CN` answers in the language just chosen
            print(say("config.set", language, key=args.key, value=_show_value(shown, args.key, language)))
            if args.key == "debug-capture" and shown["debugCapture"]:
                print(say("config.debug_on", language))
        elif action == "unset":
            update_settings({args.key: None})
            shown = public_view(load_settings())
            language = terminal_language()
            value = (say("config.language_from_terminal", language, value=language) if args.key == "language"
                     else _show_value(shown, args.key, language))
            print(say("config.reset", language, key=args.key, value=value))
        return 0
    except SettingsError as exc:
        return fail("config", exc.text(language), language)
    except (KeyboardInterrupt, EOFError):  # Ctrl-C or Ctrl-D at the API key's prompt
        return fail("config", say("config.cancelled", language), language)
    except BrokenPipeError:  # the reader of stdout has gone: not a file it could not save (cli.main)
        raise
    except OSError as exc:
        reason = exc.strerror or exc
        return fail("config", say("config.cannot_save", language, path=paths.config_path(), reason=reason), language)
