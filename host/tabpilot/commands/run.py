"""`tabpilot run TASK`: run a task in a browser, printing each step as it happens.

A thin printer over `taskrun`: settings come from the settings file, overridden by OPENAI_BASE_URL /
OPENAI_API_KEY, overridden by flags (`taskrun.plan`); the run records every event the moment it is
appended, exactly as a task started from the popup is recorded (`taskrun.run`). `--record FILE` saves
the model's replies; `--replay FILE` plays a recording back instead of calling a model."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import io
import os
import signal
import sys
import threading
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ..actionwords import action_words, step_words
from ..i18n import (
    DEFAULT_LANGUAGE,
    STOPPED_MESSAGE,
    Language,
    environment_language,
    event_text,
    language_of,
    result_words,
    step_result,
)
from ..i18n import text as say
from ..textsafety import json_for_people, show_controls
from .output import fail, is_terminal

if TYPE_CHECKING:
    from ..browser.browser import Browser
    from ..taskrun.events import RunFinished, RunUpdate
    from ..taskrun.run import ApprovalMode, TaskRun
    from .controls import TerminalControls
    from .output import CommandOutput

EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_STOPPED = 130
# a result's characters shown; a guard's refusal (~330 characters, its remedy last) is shown whole
RESULT_LIMIT = 600


def configure(parser: argparse.ArgumentParser) -> None:
    from .arguments import TaskText, add_browser_option

    parser.add_argument("task", action=TaskText,
                        help="what the agent should do, in plain words ('-': read it from standard input, "
                             "for a task longer than a command line takes)")
    parser.add_argument("--url", help="open this page first")
    window = parser.add_mutually_exclusive_group()
    window.add_argument("--headed", action="store_true", help="show the launched browser window")
    window.add_argument("--headless", action="store_true", help="launch the browser without a window (the default)")
    parser.add_argument(
        "--cdp-url", metavar="WS", help="work in an already running browser (ws://… or http://host:port)"
    )
    add_browser_option(parser)
    parser.add_argument("--user-data-dir", metavar="DIR",
                        help="launch on this browser profile (its logins and cookies) instead of a temporary one")
    parser.add_argument("--base-url", metavar="B", help="OpenAI-compatible endpoint, e.g. http://localhost:11434/v1")
    parser.add_argument("--model", metavar="M", help="model name")
    parser.add_argument("--api-key", metavar="K",
                        help="API key; other users of this computer can see it in the process list while the task "
                             "runs: prefer `tabpilot config set api-key` or the OPENAI_API_KEY environment variable")
    parser.add_argument("--max-steps", metavar="N", type=_positive_int, help="give up after N steps (default 40)")
    parser.add_argument("--vision", choices=("auto", "on", "off"),
                        help="send the model screenshots with the element numbers drawn on: auto (when the model "
                             "takes images), on, off (default: the use-vision setting, auto)")
    parser.add_argument("--json", action="store_true", help="print only the final result, as JSON")
    parser.add_argument("--record", metavar="FILE", help="save the model's replies to FILE for --replay")
    parser.add_argument("--replay", metavar="FILE", help="play a recording back instead of calling a model")
    parser.add_argument("--allow-domain", metavar="D", action="append", default=[], dest="allow_domains",
                        help="let the agent go only to this domain and its subdomains (repeatable; added to the "
                             "allowed-domains setting); a navigation anywhere else is stopped before it leaves")
    parser.add_argument("--yes", action="store_true",
                        help="do actions that need your approval (ask-before setting: payments, sending, deleting…) "
                             "without asking; without it they are asked in the terminal, or refused when standard "
                             "input is not a terminal")


def _positive_int(text: str) -> int:
    from ..store.settings import MAX_STEPS_LIMIT

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(say("setting.whole_number", terminal_language())) from None
    if value < 1:
        raise argparse.ArgumentTypeError(say("setting.at_least", terminal_language(), limit=1))
    if value > MAX_STEPS_LIMIT:
        raise argparse.ArgumentTypeError(say("setting.at_most", terminal_language(), limit=MAX_STEPS_LIMIT))
    return value


def run(args: argparse.Namespace) -> int:
    from ..llm.replay import RecordingError, check_record_path

    if args.user_data_dir and args.cdp_url:
        language = terminal_language()
        return _refused(args.json, None, say("cli.user_data_dir_with_cdp", language), language, EXIT_USAGE)
    if args.browser and args.cdp_url:  # a browser to launch, and one to attach to instead
        language = terminal_language()
        return _refused(args.json, None, say("cli.browser_with_cdp", language), language, EXIT_USAGE)
    if args.record:
        try:
            check_record_path(args.record)
        except RecordingError as exc:
            language = terminal_language()
            return _refused(args.json, "run", exc.text(language), language, EXIT_USAGE)
    if args.user_data_dir:  # a typo is refused; a new profile is said to be one (its logins are not there)
        from .profile import check_profile

        language = terminal_language()
        refusal = check_profile(args.user_data_dir, language)
        if refusal is not None:
            return _refused(args.json, "run", refusal, language, EXIT_USAGE)
    from_stdin = args.task == "-"
    if from_stdin and sys.stdin.isatty():  # else it waited, saying nothing
        print(say("cli.task_from_terminal", terminal_language()), file=sys.stderr, flush=True)
    job = Job(
        task=sys.stdin.read().strip() if from_stdin else args.task,
        # the task used standard input up: nobody answers a question or takes the controls there
        stdin=io.StringIO() if from_stdin else None,
        url=args.url,
        headed=args.headed,
        cdp_url=args.cdp_url,
        user_data_dir=args.user_data_dir,
        browser=args.browser,
        base_url=args.base_url,
        model=args.model,
        api_key=args.api_key,
        max_steps=args.max_steps,
        vision=args.vision,
        json_output=args.json,
        record=args.record,
        replay=args.replay,
        allow_domains=tuple(args.allow_domains),
        yes=args.yes,
    )
    try:
        return asyncio.run(run_job(job))
    except RecordingError as exc:
        language = terminal_language()
        return _refused(args.json, "run", exc.text(language), language, EXIT_USAGE)


def _refused(json_output: bool, command: str | None, message: object, language: Language, status: int,
             out: TextIO | CommandOutput | None = None) -> int:
    """`fail`, and with --json the result of a task that never ran on stdout (`out`): a script reading it learns
    that it failed, and why, instead of finding nothing there."""
    if json_output:
        result = {"success": False, "data": str(message), "history": []}
        print(json_for_people(result, indent=2), file=out or sys.stdout, flush=True)
    return fail(command, message, language, status)


def _import_soon(name: str) -> None:
    """Import `name` on a thread of its own while the browser starts and the page loads, so the first model call
    finds it imported (openai: ~0.45 s of a one-step run, the browser ~0.3 s). A failed import is left for the
    call that needs it to report."""
    def load() -> None:
        with contextlib.suppress(Exception):
            importlib.import_module(name)

    threading.Thread(target=load, name=f"import {name}").start()


@dataclass
class Job:
    """What the command line asked for; `taskrun.plan` merges it with the settings."""

    task: str
    url: str | None = None
    headed: bool = False
    cdp_url: str | None = None
    user_data_dir: str | None = None  # launch on this profile; never deleted
    browser: str | None = None  # the browser to launch (a kind or a program); found when None
    base_url: str | None = None
    model: str | None = None
    api_key: str | None = None
    max_steps: int | None = None
    vision: str | None = None  # auto | on | off; the settings' when None
    json_output: bool = False
    record: str | None = None
    replay: str | None = None
    source: str = "cli"
    step_delay: float = 0.4
    banner: str | None = None
    stdin: TextIO | None = None  # where the person answers and presses Enter (default: sys.stdin)
    allow_domains: tuple[str, ...] = ()
    yes: bool = False  # actions that need the user's yes run without asking


async def run_job(job: Job, out: TextIO | None = None) -> int:
    """Run one task start to end, printing its run events; returns the exit code."""
    from ..guards.domains import StartRefused
    from ..llm.scripted import ScriptedLLMServer
    from ..store.tasks import StoreError, TaskStore
    from ..taskrun.events import RunFinished
    from ..taskrun.plan import PlanError, TaskOverrides, plan_task
    from ..taskrun.run import TaskRun
    from .controls import TerminalControls
    from .output import EXIT_BROKEN_PIPE, CommandOutput

    output = CommandOutput(out or sys.stdout)
    # the status line ("starting the browser…", "step 2 · thinking…") goes where a person reads, never into JSON
    progress = CommandOutput(sys.stderr) if job.json_output else output
    server = None
    if job.replay:
        server = ScriptedLLMServer.from_recording(job.replay).start()
        job.base_url, job.model, job.api_key = server.base_url, "scripted", "replay"
    signals = _StopSignals()
    tab_claim = contextlib.ExitStack()
    try:
        overrides = TaskOverrides(base_url=job.base_url, model=job.model, api_key=job.api_key,
                                  max_steps=job.max_steps, step_delay=job.step_delay, record=job.record,
                                  allow_domains=job.allow_domains, use_vision=job.vision)
        problem = _endpoint_problem(job.base_url, terminal_language())
        if problem is not None:
            return _refused(job.json_output, None, problem, terminal_language(), EXIT_USAGE, out=output)
        try:
            plan = plan_task(job.task, overrides, source=job.source, language=terminal_language())
        except PlanError as exc:
            return _refused(job.json_output, None, exc, terminal_language(), EXIT_USAGE, out=output)
        language = terminal_language()
        outside = _start_outside_domains(job.url, plan.domains, language)
        if outside is not None:
            return _refused(job.json_output, None, outside, language, EXIT_USAGE, out=output)
        if job.banner and not job.json_output:
            print(job.banner, file=output, flush=True)
        progress.status(say("progress.connecting" if job.cdp_url else "progress.starting_browser", language),
                        say("progress.seconds", language))
        _import_soon("openai")
        try:
            browser, tab_url = await _open_browser(job, progress, language)
        except OpenFailed as exc:
            progress.clear_status()
            return _refused(job.json_output, None, exc, terminal_language(), EXIT_FAILED, out=output)
        except asyncio.CancelledError:
            if not signals.received:
                raise
            progress.clear_status()  # the browser started so far is closed: the task ends before it began
            _print_result(RunFinished("stopped", {"success": False, "data": STOPPED_MESSAGE, "history": []}),
                          job, output, language)
            return EXIT_STOPPED
        if job.cdp_url and not _claim_tab(browser, tab_claim):
            progress.clear_status()
            await browser.close()
            return _refused(job.json_output, None, say("cli.tab_busy", language), language, EXIT_FAILED, out=output)
        try:
            store = TaskStore()
        except StoreError as exc:
            progress.clear_status()
            await browser.close()
            return _refused(job.json_output, None, exc, terminal_language(), EXIT_FAILED, out=output)
        stdin = job.stdin or sys.stdin
        # a person sees the page and can take it back: not when nothing can be typed (stdin is /dev/null)
        visible = (job.headed or bool(job.cdp_url)) and _can_type_into(stdin)
        interactive = visible or is_terminal(stdin)  # … or at least answer questions
        controls: TerminalControls | None = None
        try:
            store.mark_interrupted()
            approvals: ApprovalMode = "allow" if job.yes else ("ask" if is_terminal(stdin) else "refuse")
            task_run = TaskRun(plan, store, browser, can_ask=interactive, can_hand_over=visible, approvals=approvals,
                               nobody_to_approve="approval.remedy.no_terminal")

            async def stop() -> None:
                if controls is not None:
                    await controls.flush()
                await task_run.stop()

            signals.stop = stop
            language = terminal_language()  # read again: `config set language` may have run meanwhile
            printer = RunPrinter(None if job.json_output else output, language, progress=progress)
            task_run.observers.append(printer)
            try:
                await task_run.begin(tab_url)
            except StartRefused as exc:  # the tab it works in (--cdp-url without --url); --url was checked above
                return _refused(job.json_output, None, exc.text(language), language, EXIT_USAGE, out=output)
            if interactive:
                controls = TerminalControls(task_run, progress, stdin=stdin, language=language)
                await controls.start(capture=visible)
            finished = await _execute(task_run, signals, output)
        finally:
            progress.close_status()
            if controls is not None:
                await controls.close()
            store.close()
        printer.flush()
        _print_result(finished, job, output, language)  # dropped when the reader has gone
        if output.gone:
            return EXIT_BROKEN_PIPE
        if finished.status == "stopped":
            return EXIT_STOPPED
        return 0 if finished.success else EXIT_FAILED
    finally:
        tab_claim.close()
        signals.remove()
        if server is not None:
            server.close()


def _claim_tab(browser: Browser, claims: contextlib.ExitStack) -> bool:
    """Claim the tab a task works in, in a browser others may drive too (--cdp-url), for as long as `claims` is
    held: False when another `tabpilot run` works in it (two tasks in one tab each undid the other's work)."""
    from .. import paths
    from ..store.filelock import claimed

    tab = browser.active
    if tab is None:
        return True
    return claims.enter_context(claimed(tab_lock_path(paths.data_dir() / "tabs", tab.target_id)))


def tab_lock_path(folder: Path, target_id: str) -> Path:
    """The lock file in `folder` of the tab `target_id`. The id is the browser's word, and the one at --cdp-url may
    be anyone's: an id that is not a plain name ("../../config/.config.json", "/tmp/x") is hashed, so the lock
    is never made, nor held, outside the folder (one such id locked the settings for as long as the run lasted)."""
    import hashlib
    import re

    if re.fullmatch(r"[A-Za-z0-9_-]{1,128}", target_id) is None:
        target_id = "id-" + hashlib.sha256(target_id.encode("utf-8", "surrogatepass")).hexdigest()
    return folder / f"{target_id}.lock"


def _endpoint_problem(base_url: str | None, language: Language) -> str | None:
    """What is wrong with --base-url (or, without it, OPENAI_BASE_URL), checked as `config set base-url` checks an
    address: any other was called three times over and the failure blamed on the server."""
    from pydantic import TypeAdapter, ValidationError

    from ..i18n import listed_problems
    from ..store.settings import EndpointURL

    name, value = ("--base-url", base_url) if base_url else ("OPENAI_BASE_URL", os.environ.get("OPENAI_BASE_URL"))
    if not value or not value.strip():
        return None
    try:
        TypeAdapter(EndpointURL).validate_python(value.strip())
    except ValidationError as exc:
        return "; ".join(problem.text(language) for problem in listed_problems(exc, name=lambda _where: name))
    return None


def _start_outside_domains(url: str | None, domains: Any, language: Language) -> str | None:
    """Why the start page given with --url is one the task's domains keep the agent from (None: it is not), worded
    for the command line (what to change is a flag or a setting): guards.domains.start_refusal decides."""
    from ..browser.errors import BrowserError
    from ..guards.domains import start_refusal

    if url is None:
        return None
    try:
        address = typed_url(url)
    except (OpenFailed, BrowserError):
        return None  # said where the page is opened
    refused = start_refusal(domains, address)
    if refused is None:
        return None
    # A blocked domain stays blocked whatever is allowed: adding --allow-domain would not help there.
    blocked = refused.key == "start.blocked_domain"
    return say("cli.url_blocked_domain" if blocked else "cli.url_outside_domains", language, url=address,
               host=refused.values["host"], domain=refused.values.get("domain", ""),
               allowed=", ".join(domains.allowed) or "-", blocked=", ".join(domains.blocked) or "-")


def _can_type_into(stream: TextIO) -> bool:
    """Can anybody type a line into `stream`: a terminal, or a pipe or socket another program writes to
    (tests, scripts); not the null device, a file or a closed stdin."""
    import stat

    if is_terminal(stream):
        return True
    try:
        mode = os.fstat(stream.fileno()).st_mode
    except (AttributeError, ValueError, OSError, io.UnsupportedOperation):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


class OpenFailed(Exception):
    """The browser could not be started or reached, or the first page not opened; says which."""


async def open_browser(cdp_url: str | None, **launch: Any) -> Browser:
    """The browser at `cdp_url`, or one launched with `launch`'s options; OpenFailed says in the terminal's
    language why not and what to do (`run` and `state` alike)."""
    from ..browser.browser import Browser
    from ..browser.launcher import WordedBrowserError, reason_of

    language = terminal_language()
    try:
        return await (Browser.connect(cdp_url) if cdp_url else _launch(launch))
    except WordedBrowserError as exc:  # the user's to fix: said in their language
        worded = say(exc.key, language, **exc.values)
        raise OpenFailed(worded if cdp_url else say("browser.cannot_start", language, error=worded)) from None
    except Exception as exc:
        if cdp_url:  # a ws:// address nothing (or no browser) answers at
            raise OpenFailed(say("browser.unreachable", language, address=cdp_url, detail=reason_of(exc))) from None
        raise OpenFailed(say("browser.cannot_start", language, error=exc)) from None


async def _launch(launch: dict[str, Any]) -> Browser:
    """A launched browser, which Ctrl-C while it starts does not leave running: the launch goes on in a thread
    of its own whatever happens to its waiter, so it is waited for and closed."""
    from ..browser.browser import Browser

    starting = asyncio.ensure_future(Browser.launch(**launch))
    try:
        return await asyncio.shield(starting)
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):  # it failed to start: nothing to close
            await (await asyncio.shield(starting)).close()
        raise


def typed_url(url: str) -> str:
    """An address as someone typed it → the URL to open, as the agent's go_to_url opens one (localhost:8000 →
    http://, example.com → https://); OpenFailed, in the terminal's language, for a script or nothing."""
    from ..browser.actions import normalize_url
    from ..browser.errors import BrowserError

    path = Path(os.path.expanduser(url.strip()))
    if url.strip().startswith(("/", "./", "../", "~")) and path.is_file():  # a file of theirs, named by its path
        return path.resolve().as_uri()
    try:
        return normalize_url(url)
    except BrowserError:
        language = terminal_language()
        raise OpenFailed(say("cli.url_script" if url.strip() else "cli.url_empty", language, url=url.strip())) from None


def page_failed(url: str | None, exc: Exception) -> OpenFailed:
    """The first page could not be opened: why, in the terminal's language."""
    from ..browser.errors import NavigationFailed

    language = terminal_language()
    if isinstance(exc, NavigationFailed):
        return OpenFailed(say("page.cannot_open", language, url=exc.url, error=exc.error))
    return OpenFailed(say("page.cannot_open", language, url=url or "a tab", error=exc))


async def _open_browser(job: Job, progress: CommandOutput, language: Language) -> tuple[Browser, str | None]:
    """The browser to work in, with the working tab active; an attached browser is left as it was. The status
    line says when the browser is there and the page is what is awaited (a site that never answers is waited for
    30 s: the line said "starting the browser… 31 s" all that time)."""
    try:
        url = typed_url(job.url) if job.url is not None else None
    except OpenFailed as exc:
        raise OpenFailed(f"--url: {exc}") from None
    browser = await open_browser(job.cdp_url, headless=not job.headed, user_data_dir=job.user_data_dir,
                                 executable=job.browser)
    try:
        if url:
            progress.status(say("progress.opening", language, url=url), say("progress.seconds", language))
        if url and job.cdp_url:
            tab = await browser.new_tab(url)  # leave the user's own tabs alone
        else:
            tab = await browser.current_tab()
            if url:
                await tab.navigate(url)
        return browser, await tab.url()
    except BaseException as exc:
        await browser.close()
        if isinstance(exc, Exception):
            raise page_failed(url, exc) from None
        raise


class _StopSignals:
    """Ctrl-C, SIGTERM and SIGHUP (the terminal closed) from a run's start to its end. Until `stop` is set (the
    task exists) they cut the start short: the run's task is cancelled and `received` says why, and what was
    launched so far is closed on the way out. Then they call `stop`, which ends the task cleanly."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM, *((signal.SIGHUP,) if hasattr(signal, "SIGHUP") else ()))

    def __init__(self) -> None:
        self.received = False
        self.stop: Callable[[], Coroutine[Any, Any, None]] | None = None
        self._loop = asyncio.get_running_loop()
        self._run = asyncio.current_task()
        self._stopping: set[asyncio.Task[None]] = set()  # held so the loop does not drop them
        try:
            for sig in self.SIGNALS:
                self._loop.add_signal_handler(sig, self.interrupt)
        except (NotImplementedError, RuntimeError):  # Windows: Ctrl-C ends the process instead
            pass

    def interrupt(self) -> None:
        self.received = True
        if self.stop is not None:
            stopping = self._loop.create_task(self.stop())
            self._stopping.add(stopping)
            stopping.add_done_callback(self._stopping.discard)
        elif self._run is not None:
            self._run.cancel()

    def remove(self) -> None:
        for sig in self.SIGNALS:
            try:
                self._loop.remove_signal_handler(sig)
            except (NotImplementedError, RuntimeError):
                pass


async def _execute(task_run: TaskRun, signals: _StopSignals, out: CommandOutput | None = None) -> RunFinished:
    """Run the task; Ctrl-C (or SIGTERM), or the reader of `out` going away (`| head`), stops it cleanly (the
    result and the record say `stopped`; what the user was still typing while they had the controls is kept)."""
    loop = asyncio.get_running_loop()

    def on_reader_gone() -> None:  # called where the write failed: maybe the status line's thread
        if not loop.is_closed():
            loop.call_soon_threadsafe(signals.interrupt)

    if out is not None:
        out.on_gone(on_reader_gone)
    return await task_run.execute()


def terminal_language() -> Language:
    """The language `run` prints in: the settings' language when the user chose one, else the terminal's
    (LANG and friends)."""
    from ..paths import config_path
    from ..store.settings import SettingsError, load_settings

    path = config_path(create=False)  # asked before any command runs: `tabpilot --help` creates no folder
    if not path.exists():
        return environment_language()
    try:
        settings = load_settings(path)
    except SettingsError:
        return environment_language()
    return language_of(settings.language) if "language" in settings.model_fields_set else environment_language()


def _print_result(finished: RunFinished, job: Job, out: TextIO | CommandOutput,
                  language: Language = DEFAULT_LANGUAGE) -> None:
    if job.json_output:  # the ExecutionResult, redacted as recorded
        print(json_for_people(finished.result, indent=2), file=out, flush=True)
        return
    mark = "✅" if finished.success else ("⏹" if finished.status == "stopped" else "❌")
    status = say(f"run.status.{'not_done' if finished.gave_up else finished.status}", language)
    data, remedy = finished.data, None
    if finished.status == "stopped":
        data = result_words(data, language)
    if not finished.success:
        error = _final_error(finished.result)
        if error is not None:
            data, remedy = _error_words(error, language), terminal_remedy(error, language)
    lines = ["", say("run.outcome", language, mark=mark, status=status, data=data)]
    if remedy:
        lines.append(say("run.remedy", language, remedy=remedy))
    print(show_controls("\n".join(lines)), file=out, flush=True)


def _final_error(result: dict[str, Any]) -> dict[str, Any] | None:
    """The error event that ended a failed run (the one whose English message its `data` is), if any."""
    from ..store.timeline import ends_task

    data = str(result.get("data", ""))
    for event in reversed(result.get("history") or []):
        if isinstance(event, dict) and ends_task(event, data):
            return event
    return None


def _error_words(event: dict[str, Any], language: Language) -> str:
    """An error or retry event's message in `language` when it carries a code the catalog words, else as written."""
    return event_text(event, language) or str(event.get("message", ""))


def terminal_remedy(event: Mapping[str, Any], language: str | None) -> str | None:
    """What to do about an error event's failure at the terminal, or None when its words say it already (or it
    names no code). A failure after retries is remedied by its last cause."""
    from ..i18n import failure_remedy

    found = failure_remedy(event)
    if found is None:
        return None
    name, values = found
    return say(f"remedy.{name}", language, base_url=values.get("base_url", "the endpoint"))


class RunPrinter:
    """Prints each history event as it is appended (step number, next goal, action, result), a note while
    the model has not answered, and, on a terminal, what the agent is doing now on a status line.

    An error event is not printed: it ends the run, and the outcome line says it once (with its remedy). A
    step's result line waits for the next update: when that is a guard's note saying the same (an action
    refused, denied, not answered in time), the note is printed instead, whole, after the step's action."""

    def __init__(self, out: TextIO | CommandOutput | None, language: Language = DEFAULT_LANGUAGE, *,
                 progress: CommandOutput | None = None) -> None:
        self.out = out
        self.language = language
        self.progress = progress
        self.steps = 0
        self._held: tuple[str, str] | None = None  # the last step's result line and its full text

    def __call__(self, update: RunUpdate) -> None:
        from ..taskrun.events import RunActivity, RunEvent

        event = update.event if isinstance(update, RunEvent) else {}
        guard_repeats = bool(self._held and event.get("type") == "observation" and event.get("guard")
                             and event.get("content") == self._held[1])
        self.flush(keep_result=not guard_repeats)
        if isinstance(update, RunActivity):
            self._on_activity(update.activity)
        if not isinstance(update, RunEvent):
            return
        lines = [] if event.get("type") == "error" else _event_lines(event, self.language)
        if event.get("type") == "step":
            self.steps += 1
            self._held = (lines.pop(), str((event.get("action") or {}).get("output", "")))
        if not update.recorded:
            lines.append(say("run.not_saved", self.language))
        self._print(lines)

    def flush(self, *, keep_result: bool = True) -> None:
        """Print the result line held back (or drop it: a guard's note says it instead)."""
        held, self._held = self._held, None
        if held is not None and keep_result:
            self._print([held[0]])

    def _print(self, lines: list[str]) -> None:
        if lines and self.out is not None:
            print(show_controls("\n".join(lines)), file=self.out, flush=True)

    def _on_activity(self, activity: dict[str, Any]) -> None:
        kind = activity.get("type")
        step = self.steps + 1
        if kind == "waiting":
            seconds = f"{float(activity.get('seconds', 0)):g}"
            if self.out is not None:
                print(say("run.waiting", self.language, seconds=seconds), file=self.out, flush=True)
            kind = "thinking"  # still: say so on the status line again
        if self.progress is None:
            return
        if kind == "thinking":
            self.progress.status(say("progress.thinking", self.language, step=step),
                                 say("progress.seconds", self.language))
        elif kind == "executing":
            tool_input = activity.get("input")
            doing = action_words("acting", str(activity.get("tool")), activity.get("target"),
                                 tool_input.get("seconds") if isinstance(tool_input, dict) else None, self.language)
            self.progress.status(say("progress.acting", self.language, step=step, doing=doing),
                                 say("progress.seconds", self.language))
        elif kind in ("executed", "paused", "error"):
            self.progress.clear_status()


def _event_lines(event: dict[str, Any], language: Language = DEFAULT_LANGUAGE) -> list[str]:
    kind = event.get("type")
    if kind == "step":
        action = event.get("action") or {}
        goal = (event.get("reflection") or {}).get("next_goal") or say("run.no_goal", language)
        return [
            say("run.step", language, step=int(event.get("stepIndex", 0)) + 1, goal=goal),
            say("run.action", language, action=_clip(step_words(action, language))),
            say("run.result", language, result=_clip(step_result(action, language), RESULT_LIMIT)),
        ]
    if kind == "observation":  # a guard's (a blocked navigation, a denied action) stands out
        if event.get("nudge"):
            return []  # said to the model about its own way of working ("Do something different"), not to you
        if event.get("guard") == "allowed":
            return []  # the terminal's own question said "✔ allowed" as you answered
        return [f"  {'🚫' if event.get('guard') else '·'} {_clip(event.get('content', ''), RESULT_LIMIT)}"]
    if kind == "retry":
        return [say("run.retry", language, attempt=event.get("attempt"), max_attempts=event.get("maxAttempts"),
                    message=_clip(_error_words(event, language)))]
    if kind == "error":
        return [f"  ✖ {_error_words(event, language)}"]
    if kind == "user_takeover":
        from ..agent.types import UserTakeoverEvent

        try:
            account = UserTakeoverEvent.model_validate(event).to_user(language)
        except ValueError:
            account = say("takeover.user.took_over", language)
        return [f"  ✋ {_clip(account, 1000)}"]
    return []


def _clip(text: str, limit: int = 300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
