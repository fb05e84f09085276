"""`tabpilot config`: show settings (the API key masked); `set KEY VALUE`; `unset KEY`.

`tabpilot config set api-key` without a value reads the key from stdin (or asks for it without echo),
so it stays out of the shell's history."""

from __future__ import annotations

import argparse
import json
import os
import sys

MASK_KEYS = ("mask-emails", "mask-phones", "mask-cards", "mask-ibans")  # on/off: hidden from the model in page text
KEYS = ("base-url", "model", "api-key", "max-steps", "language", "debug-capture", "model-deadline", "max-reply-mb",
        *MASK_KEYS, "allowed-domains", "blocked-domains", "ask-before", "use-vision")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print the settings (key masked) as JSON")
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    set_parser = actions.add_parser("set", help="change one setting")
    set_parser.add_argument("key", metavar="KEY", help=", ".join(KEYS))
    set_parser.add_argument("value", metavar="VALUE", nargs="?", help="for api-key: omit (or -) to read it from stdin")
    unset_parser = actions.add_parser("unset", help="reset one setting to its default")
    unset_parser.add_argument("key", metavar="KEY", help=", ".join(KEYS))


def _fail(message: str) -> int:
    print(f"tabpilot config: {message}", file=sys.stderr)
    return 1


def _read_secret() -> str:
    if sys.stdin.isatty():
        import getpass

        return getpass.getpass("API key: ")
    return sys.stdin.readline().strip()


def _check_key(key: str) -> str | None:
    if key not in KEYS:
        return f"unknown setting {key!r}; settings are: {', '.join(KEYS)}"
    return None


def _text(value: object) -> str:
    if value is None:
        return "(not set)"
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, list):
        return ", ".join(map(str, value)) or "(none)"
    return str(value)


def _show_value(view: dict[str, object], key: str) -> str:
    wire = {"base-url": "baseURL", "api-key": "apiKeyHint", "max-steps": "maxSteps", "debug-capture": "debugCapture",
            "model-deadline": "modelDeadline", "max-reply-mb": "maxReplyMB", "mask-emails": "maskEmails",
            "mask-phones": "maskPhones", "mask-cards": "maskCards", "mask-ibans": "maskIbans",
            "allowed-domains": "allowedDomains", "blocked-domains": "blockedDomains", "ask-before": "askBefore",
            "use-vision": "useVision"}
    return _text(view[wire.get(key, key)])


def _show(view: dict[str, object], path: str) -> str:
    key_text = view["apiKeyHint"] if view["apiKeySet"] else "(not set)"
    if not view["apiKeySet"] and os.environ.get("OPENAI_API_KEY"):
        key_text = "(not set; OPENAI_API_KEY from the environment is used)"
    base_text = _text(view["baseURL"])
    if view["baseURL"] is None and os.environ.get("OPENAI_BASE_URL"):
        base_text = f"(not set; OPENAI_BASE_URL from the environment is used: {os.environ['OPENAI_BASE_URL']})"
    rows = [
        ("base-url", base_text),
        ("model", _text(view["model"])),
        ("api-key", key_text),
        ("max-steps", _text(view["maxSteps"])),
        ("language", _text(view["language"])),
        ("debug-capture", _text(view["debugCapture"])),
        ("model-deadline", f"{view['modelDeadline']:g} s (one model call, retries included)"),
        ("max-reply-mb", f"{view['maxReplyMB']:g} MB (the largest model reply read)"),
        *((key, _show_value(view, key)) for key in MASK_KEYS),
        ("allowed-domains", _text(view["allowedDomains"]) if view["allowedDomains"] else "(any domain not blocked)"),
        ("blocked-domains", _text(view["blockedDomains"])),
        ("ask-before", f"{view['askBefore']} (never | irreversible | every: when the agent waits for your yes)"),
        ("use-vision", f"{view['useVision']} (screenshots for the model: auto, on or off)"),
    ]
    lines = [f"{name:<16}{value}" for name, value in rows]
    lines.append(f"\nsettings file: {path}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from .. import paths
    from ..store.settings import SettingsError, apply_changes, load_settings, public_view, save_settings

    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(errors="replace")
    action = getattr(args, "action", None)
    try:
        settings = load_settings()
        if action is None:
            view = public_view(settings)
            print(json.dumps(view, indent=2) if args.json else _show(view, str(paths.config_path())))
            return 0
        problem = _check_key(args.key)
        if problem:
            return _fail(problem)
        if action == "set":
            value = args.value
            if args.key == "api-key" and value in (None, "-"):
                value = _read_secret()
                if not value:
                    return _fail("no API key given (expected it on stdin)")
            elif value is None:
                return _fail(f"give a value: tabpilot config set {args.key} VALUE")
            save_settings(apply_changes(settings, {args.key: value}))
            shown = public_view(load_settings())
            print(f"{args.key} set to {_show_value(shown, args.key)}")
            if args.key == "debug-capture" and shown["debugCapture"]:
                print("Raw LLM requests and responses, which hold page content, will now be kept in the task history.")
        elif action == "unset":
            save_settings(apply_changes(settings, {args.key: None}))
            shown = public_view(load_settings())
            print(f"{args.key} reset to {_show_value(shown, args.key)}")
        return 0
    except SettingsError as exc:
        return _fail(str(exc))
    except OSError as exc:
        return _fail(f"cannot save the settings file {paths.config_path()}: {exc.strerror or exc}")
