"""`tabpilot history [list]`: list past tasks; `show ID` as a timeline; `export ID... | --all [-o FILE]`;
`delete ID... | --all [--yes]` (--all asks first on a terminal, and without one needs --yes; a running task is
kept). An id may be shortened to any unambiguous prefix, as with git."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..i18n import Language
from ..i18n import text as say
from ..store.search import STARTERS
from ..textsafety import json_for_people
from .output import fail, silence_stdout, terminal_width

if TYPE_CHECKING:
    from ..store.tasks import TaskStore


SEARCH_HELP = "only the tasks with every one of WORDS in their text or their result (any case, any language)"
# the starters are search.STARTERS; the FROM column's words for them in the reader's language are taken too (_requester)
REQUESTER_HELP = ("only the tasks started by WHO: popup, panel, terminal, page, mcp, or a part of the "
                  "page's origin or the MCP client's name that asked for them")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--limit", type=int, default=50, help="how many tasks to list (default 50)")
    parser.add_argument("--json", action="store_true", help="list as JSON")
    parser.add_argument("--search", metavar="WORDS", help=SEARCH_HELP)
    parser.add_argument("--requester", metavar="WHO", help=REQUESTER_HELP)
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    listing = actions.add_parser("list", help="list past tasks, newest first (the default)")
    # as `history --json` takes them, after `list` too; not given there, the ones before `list` stand
    listing.add_argument("--limit", type=int, default=argparse.SUPPRESS, help="how many tasks to list (default 50)")
    listing.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="list as JSON")
    listing.add_argument("--search", metavar="WORDS", default=argparse.SUPPRESS, help=SEARCH_HELP)
    listing.add_argument("--requester", metavar="WHO", default=argparse.SUPPRESS, help=REQUESTER_HELP)
    show = actions.add_parser("show", help="print one task as a timeline")
    show.add_argument("task_id", metavar="ID")
    show.add_argument("--json", action="store_true", help="print the stored task and its events as JSON")
    export = actions.add_parser("export", help="write tasks as page-agent-shaped JSON: one task as an object, "
                                                 "several (or --all) as a list, newest first")
    export.add_argument("task_ids", metavar="ID", nargs="*")
    export.add_argument("--all", action="store_true", help="every recorded task")
    export.add_argument("-o", "--output", type=Path, metavar="FILE", help="write to FILE instead of stdout")
    # as `history --json` and `show --json` take it: asked of export too, where JSON is all there is
    export.add_argument("--json", action="store_true", help="JSON (what export always writes)")
    delete = actions.add_parser("delete", help="delete tasks and their events: the ones named, or --all")
    delete.add_argument("task_ids", metavar="ID", nargs="*")
    delete.add_argument("--all", action="store_true",
                        help="every recorded task but a running one (asks first; without a terminal, needs --yes)")
    delete.add_argument("--yes", action="store_true", help="with --all: delete without asking")



def _requester(who: str | None, language: Language) -> str | None:
    """--requester as the store asks it: who started a task named as the FROM column names them ("终端", "terminal")
    is that starter; a page's or a client's cell as the column shows it ("MCP Claude Desktop", "网页 https://a.example"),
    that origin or name: copied from the list, it found nothing (a new user's trial); anything else, a part of a
    page's origin or a client's name."""
    wanted = (who or "").strip()
    for starter in STARTERS:
        shown = say(f"timeline.by.{starter}", language, requester="").strip().casefold()
        if wanted.casefold() == shown:
            return starter
        if starter in ("page", "mcp") and wanted.casefold().startswith(f"{shown} "):
            return wanted[len(shown):].strip()
    return who


def _write_owner_only(path: Path, text: str) -> None:
    """An export holds page content: readable by its owner only, as recordings and the database are."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as file:
        if hasattr(os, "fchmod"):
            os.fchmod(file.fileno(), 0o600)  # a file that was there before keeps its mode otherwise
        file.write(text)


def _export(store: TaskStore, args: argparse.Namespace, language: Language) -> int:
    """One task as its export; several, or every recorded one, as a list of them (newest first)."""
    if args.all == bool(args.task_ids):
        return fail("history", say("history.export_what", language), language)
    if args.all:
        task_ids = [task.task_id for task in store.list_tasks(None)]
    else:  # each id once, in the order given
        task_ids = list(dict.fromkeys(store.resolve_id(prefix) for prefix in args.task_ids))
    exports = [store.export_task(task_id) for task_id in task_ids]
    one = len(args.task_ids) == 1
    text = json_for_people(exports[0] if one else exports, indent=2) + "\n"
    if args.output is None:
        sys.stdout.write(text)
        return 0
    try:
        _write_owner_only(args.output, text)
    except OSError as exc:
        return fail("history", say("history.cannot_write", language, path=args.output, reason=exc.strerror or exc),
                    language)
    if one:
        print(say("history.exported", language, task_id=task_ids[0], path=args.output))
    else:
        print(say("history.exported_many", language, count=len(exports), path=args.output))
    return 0


def _confirmed(count: int, language: Language) -> bool:
    """The person at the terminal said yes to deleting every one of `count` tasks."""
    try:
        answer = input(say("history.confirm_delete_all", language, count=count))
    except (EOFError, KeyboardInterrupt):
        print(file=sys.stderr)  # the message goes under the question, not after it
        return False
    return answer.strip().lower() in ("y", "yes", say("history.yes", language))


def _delete(store: TaskStore, args: argparse.Namespace, language: Language) -> int:
    """Delete the tasks named (each resolved first: a bad id deletes none), or every recorded one with --all, which
    is asked first on a terminal and needs --yes without one. A running task is kept and said so."""
    from ..store.tasks import StoreError

    if args.all == bool(args.task_ids):
        return fail("history", say("history.delete_what", language), language)
    if args.all:
        task_ids = [task.task_id for task in store.list_tasks(None)]
        if not task_ids:
            print(say("history.nothing_to_delete", language))
            return 0
        if not args.yes:
            if not sys.stdin.isatty():
                return fail("history", say("history.delete_all_needs_yes", language, count=len(task_ids)), language)
            if not _confirmed(len(task_ids), language):
                return fail("history", say("history.delete_cancelled", language), language)
    else:  # each id once, in the order given
        task_ids = list(dict.fromkeys(store.resolve_id(prefix) for prefix in args.task_ids))
    deleted, running, failed = 0, [], False
    for task_id in task_ids:
        try:
            gone = store.delete_task(task_id, keep_suspended=args.all)
        except StoreError as exc:
            if exc.key != "history.still_running":
                raise
            running.append(task_id)
            if not args.all:
                fail("history", exc.text(language), language)
                failed = True
            continue
        if gone:
            deleted += 1
            if not args.all:
                print(say("history.deleted", language, task_id=task_id))
        elif not args.all:  # deleted meanwhile, between resolving its id and now
            fail("history", say("history.no_task", language, task_id=task_id), language)
            failed = True
    if args.all:
        print(say("history.deleted_many", language, count=deleted))
        if running:
            print(say("history.kept_running", language, ids=", ".join(running)), file=sys.stderr)
    return 1 if failed else 0


def run(args: argparse.Namespace) -> int:
    from ..store.search import TaskQuery
    from ..store.settings import SettingsError, load_settings
    from ..store.tasks import StoreError, TaskStore
    from ..store.timeline import task_table, timeline
    from .run import terminal_language

    language = terminal_language()

    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(errors="replace")  # "…" and "·" on a console that cannot show them
    try:
        capture_raw = load_settings().debug_capture
    except SettingsError:
        capture_raw = False  # a broken settings file must not hide the record; `tabpilot config` reports it
    try:
        store = TaskStore(capture_raw=capture_raw)
    except StoreError as exc:
        return fail("history", exc.text(language), language)
    if store.set_aside is not None:
        print(say("history.set_aside", language, path=store.set_aside), file=sys.stderr)
    try:
        store.mark_interrupted()
        action = getattr(args, "action", None)
        if action in (None, "list"):
            if args.limit < 1:
                return fail("history", say("history.limit", language), language)
            searched = args.search is not None or args.requester is not None
            query = TaskQuery.of(args.search, _requester(args.requester, language)) if searched else None
            tasks = store.list_tasks(args.limit, query)
            if args.json:
                print(json_for_people([t.to_wire(language) for t in tasks], indent=2))
            elif searched and not tasks:
                print(say("history.no_match", language))
            else:
                print(task_table(tasks, language=language, width=terminal_width()))
                if len(tasks) == args.limit:
                    print(say("history.more", language, limit=args.limit))
            return 0
        if action == "export":
            return _export(store, args, language)
        if action == "delete":
            return _delete(store, args, language)
        task_id = store.resolve_id(args.task_id)
        record = store.get_task(task_id)
        if record is None:  # deleted between resolving and reading
            return fail("history", say("history.no_task", language, task_id=task_id), language)
        if args.json:
            print(json_for_people(record.to_wire(), indent=2))
        else:
            print(timeline(record, language))
        return 0
    except StoreError as exc:
        return fail("history", exc.text(language), language)
    except BrokenPipeError:  # `tabpilot history show ID | head`
        silence_stdout()
        return 0
    finally:
        store.close()
