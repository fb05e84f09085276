"""`tabpilot install`: register the native messaging host with your browsers (or one profile)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..i18n import text as say
from .output import fail

BROWSER_CHOICES = ("chrome", "chromium", "edge", "brave", "all")


def add_target_options(parser: argparse.ArgumentParser, *, default_browsers: str, profile: str) -> None:
    """--browser and --user-data-dir, worded for the command (`install`, `uninstall`, `doctor`)."""
    parser.add_argument(
        "--browser",
        choices=BROWSER_CHOICES,
        default="all",
        help=f"which browser (default: {default_browsers})",
    )
    parser.add_argument(
        "--user-data-dir",
        type=Path,
        metavar="DIR",
        help=f"{profile} the one profile folder a browser was started with (--user-data-dir=DIR)",
    )


def configure(parser: argparse.ArgumentParser) -> None:
    add_target_options(
        parser,
        default_browsers="every one installed on this computer or with a settings folder for this user",
        profile="register for",
    )
    parser.add_argument(
        "--extension-id",
        action="append",
        default=[],
        metavar="ID",
        help="also allow this extension id (e.g. a copy loaded from another folder); repeatable",
    )


def run(args: argparse.Namespace) -> int:
    from ..installer import InstallError, extension_dir, install, install_command, is_ours, profiles_in_use
    from .profile import mistyped, profile_folder
    from .run import terminal_language

    language = terminal_language()
    profile = profile_folder(args.user_data_dir) if args.user_data_dir else None
    created = profile is not None and not profile.exists()
    refusal = mistyped(profile, language) if profile is not None else None
    if refusal is not None:  # a typo: never make a whole new path
        return fail("install", refusal, language)
    try:
        report = install(args.browser, user_data_dir=args.user_data_dir, extra_ids=args.extension_id)
    except (InstallError, OSError) as exc:
        return fail("install", exc, language)
    if created:
        print(say("install.created_profile", language, path=profile))
    print(say("install.launcher", language, path=report.launchers[0]))
    for target in report.manifests:
        where = say("install.registry", language, key=target.registry_key) if target.registry_key else ""
        print(say("install.registered", language, label=target.label, path=target.manifest, where=where))
    print(say("install.allowed_ids", language, ids=", ".join(report.extension_ids)))
    if profile is None and args.browser == "all":
        for running, target in profiles_in_use():
            if not is_ours(target.manifest):
                print(say("install.in_use", language, pid=running.pid, program=running.program,
                          profile=running.profile, command=install_command("all", running.profile)))
    if profile is not None:  # doctor checks that one profile only when told it
        print("\n" + say("install.next_profile", language, folder=extension_dir(), profile=profile))
    else:
        print("\n" + say("install.next", language, folder=extension_dir()))
    return 0
