"""`tabpilot state [URL] [--json] [--headed | --headless] [--cdp-url WS] [--user-data-dir DIR]`: print a page
exactly as the model sees it.

Without --cdp-url a headless Chromium is launched on a temporary profile, or on the --user-data-dir
profile (kept as it is), and shut down afterwards: it has no page of its own, so the URL is needed. With
--cdp-url the running browser is used as is: no URL means its current tab, a URL opens in a new tab that is
closed again afterwards."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import TYPE_CHECKING

from ..textsafety import json_for_people, show_controls
from .arguments import add_browser_option, positive_seconds

if TYPE_CHECKING:
    from ..privacy.guard import PrivacyGuard


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("url", nargs="?", metavar="URL",
                        help="the page to open (needed, but with --cdp-url: without it, that browser's current tab)")
    parser.add_argument("--json", action="store_true",
                        help="print {url, title, text, elements: [{index, tag, name, ...}]} as JSON")
    window = parser.add_mutually_exclusive_group()
    window.add_argument("--headed", action="store_true", help="show the launched browser window")
    window.add_argument("--headless", action="store_true", help="launch the browser without a window (the default)")
    parser.add_argument("--cdp-url", metavar="WS", help="use a running browser's DevTools endpoint (ws:// or http://)")
    add_browser_option(parser)
    parser.add_argument("--user-data-dir", metavar="DIR",
                        help="launch on this browser profile (its logins and cookies) instead of a temporary one")
    parser.add_argument("--timeout", type=positive_seconds, default=30.0, metavar="S",
                        help="page load timeout (default 30)")


def run(args: argparse.Namespace) -> int:
    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(errors="replace")
    if (args.user_data_dir or args.browser) and args.cdp_url:
        from ..i18n import text as say
        from .output import fail
        from .run import EXIT_USAGE, terminal_language

        language = terminal_language()
        key = "cli.user_data_dir_with_cdp" if args.user_data_dir else "cli.browser_with_cdp"
        return fail("state", say(key, language), language, EXIT_USAGE)
    from ..i18n import text as say
    from .output import fail
    from .run import EXIT_USAGE, OpenFailed, terminal_language, typed_url

    if args.user_data_dir:  # as `run` does: a typo is refused, a new profile is said to be one
        from .profile import check_profile

        language = terminal_language()
        refusal = check_profile(args.user_data_dir, language)
        if refusal is not None:
            return fail("state", refusal, language, EXIT_USAGE)
    if args.url is None and not args.cdp_url:  # a browser launched for it has only about:blank to show
        language = terminal_language()
        return fail("state", say("state.url_needed", language), language, EXIT_USAGE)
    from ..privacy.guard import guard_for
    from ..privacy.masking import PatternTooSlow
    from ..privacy.secrets import SecretError
    from ..store.settings import SettingsError, load_settings

    try:  # what a task's model may see of the page: the stored secrets hidden, personal data masked as set
        guard = guard_for(load_settings())
    except (SettingsError, SecretError) as exc:
        language = terminal_language()
        return fail("state", exc.text(language), language)
    try:
        url = typed_url(args.url) if args.url is not None else None
        output = asyncio.run(_read(url, args, guard))
    except KeyboardInterrupt:
        return 130
    except OpenFailed as exc:
        return fail("state", exc, terminal_language())
    except PatternTooSlow as exc:
        language = terminal_language()
        return fail("state", exc.text(language), language)
    except Exception as exc:  # every failure becomes one readable line, never a traceback
        language = terminal_language()
        return fail("state", say("state.failed", language, error=exc), language)
    print(output)
    return 0


async def _read(url: str | None, args: argparse.Namespace, guard: PrivacyGuard) -> str:
    from ..browser.state import get_state
    from .run import open_browser, page_failed

    browser = await open_browser(args.cdp_url, executable=args.browser, headless=not args.headed,
                                 user_data_dir=args.user_data_dir)
    opened = None
    try:
        try:
            if url and args.cdp_url:
                tab = opened = await browser.new_tab()
                await tab.navigate(url, timeout=args.timeout)
            elif url:  # our own fresh browser: its one blank tab
                tab = await browser.current_tab()
                await tab.navigate(url, timeout=args.timeout)
            else:
                tab = await browser.current_tab()
                await tab.wait_for_load(timeout=args.timeout)
        except Exception as exc:
            raise page_failed(url, exc) from None
        state = await get_state(browser, tab)
        text = guard.conceal(state.text, state.url)
        if args.json:
            return json_for_people(guard.hide({**state.to_json(), "text": text}), indent=2)
        return show_controls(text)
    finally:
        if opened is not None and args.cdp_url:
            try:
                await browser.close_tab(opened.target_id)
            except Exception:  # the browser is not ours: leaving a tab open is the worst case
                pass
        await browser.close()
