"""`tabpilot uninstall`: remove the host registration (and launcher) that `tabpilot install` wrote."""

from __future__ import annotations

import argparse

from ..i18n import text as say
from .install import add_target_options
from .output import fail


def configure(parser: argparse.ArgumentParser) -> None:
    add_target_options(parser, default_browsers="all of them", profile="remove it from")


def run(args: argparse.Namespace) -> int:
    from ..installer import uninstall
    from .run import terminal_language

    language = terminal_language()

    try:
        report = uninstall(args.browser, user_data_dir=args.user_data_dir)
    except OSError as exc:
        return fail("uninstall", exc, language)
    for removed in report.removed:
        print(say("uninstall.removed", language, path=removed))
    if not report.removed:
        print(say("uninstall.nothing", language))
    return 0
