"""`tabpilot run TASK`: run a task in a browser, printing each step as it happens.

Settings come from the settings file, overridden by OPENAI_BASE_URL / OPENAI_API_KEY, overridden by
flags. Every history event goes to the task store the moment it is appended. `--record FILE` saves
the model's replies; `--replay FILE` plays a recording back instead of calling a model."""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from pydantic import ValidationError

    from ..agent.loop import Agent
    from ..agent.types import ExecutionResult
    from ..browser.browser import Browser
    from ..llm import LLMClient, LLMConfig

EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_STOPPED = 130


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("task", help="what the agent should do, in plain words")
    parser.add_argument("--url", help="open this page first")
    parser.add_argument("--headed", action="store_true", help="show the launched browser window")
    parser.add_argument(
        "--cdp-url", metavar="WS", help="work in an already running browser (ws://… or http://host:port)"
    )
    parser.add_argument("--user-data-dir", metavar="DIR",
                        help="launch on this browser profile (its logins and cookies) instead of a temporary one")
    parser.add_argument("--base-url", metavar="B", help="OpenAI-compatible endpoint, e.g. http://localhost:11434/v1")
    parser.add_argument("--model", metavar="M", help="model name")
    parser.add_argument("--api-key", metavar="K",
                        help="API key; other users of this computer can see it in the process list while the task "
                             "runs: prefer `tabpilot config set api-key` or the OPENAI_API_KEY environment variable")
    parser.add_argument("--max-steps", metavar="N", type=_positive_int, help="give up after N steps (default 40)")
    parser.add_argument("--json", action="store_true", help="print only the final result, as JSON")
    parser.add_argument("--record", metavar="FILE", help="save the model's replies to FILE for --replay")
    parser.add_argument("--replay", metavar="FILE", help="play a recording back instead of calling a model")


def _positive_int(text: str) -> int:
    from ..store.settings import MAX_STEPS_LIMIT

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    if value > MAX_STEPS_LIMIT:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_STEPS_LIMIT}")
    return value


def run(args: argparse.Namespace) -> int:
    from ..llm import LLMError
    from ..llm.config import endpoint_config
    from ..llm.replay import RecordingError
    from ..store.settings import SettingsError, load_settings

    if args.user_data_dir and args.cdp_url:
        print("tabpilot: --user-data-dir is for a browser tabpilot launches; with --cdp-url the running "
              "browser's own profile is used", file=sys.stderr)
        return EXIT_USAGE
    try:
        settings = load_settings()
    except SettingsError as exc:
        print(f"tabpilot: {exc}", file=sys.stderr)
        return EXIT_USAGE
    endpoint = endpoint_config(
        settings_base_url=settings.base_url, settings_model=settings.model, settings_api_key=settings.api_key,
        base_url=args.base_url, model=args.model, api_key=args.api_key, environment_first=True,
    )
    job = Job(
        task=args.task,
        url=args.url,
        headed=args.headed,
        cdp_url=args.cdp_url,
        user_data_dir=args.user_data_dir,
        base_url=endpoint.base_url,
        model=endpoint.model,
        api_key=endpoint.api_key,
        key_from_environment=False,
        max_steps=args.max_steps or settings.max_steps,
        language=settings.language,
        debug_capture=settings.debug_capture,
        model_deadline=settings.model_deadline,
        max_reply_bytes=settings.max_reply_bytes,
        json_output=args.json,
        record=args.record,
        replay=args.replay,
    )
    try:
        return asyncio.run(run_job(job))
    except (LLMError, RecordingError) as exc:
        print(f"tabpilot: {exc}", file=sys.stderr)
        return EXIT_USAGE


@dataclass
class Job:
    task: str
    url: str | None = None
    headed: bool = False
    cdp_url: str | None = None
    user_data_dir: str | None = None  # launch on this profile; never deleted
    base_url: str | None = None
    model: str | None = None
    api_key: str | None = None
    key_from_environment: bool = True  # False once the caller chose the key (llm.config.endpoint_config)
    max_steps: int = 40
    language: str = "en-US"
    debug_capture: bool = False
    model_deadline: float | None = None  # the settings' model-deadline / max-reply-mb; None: LLMConfig's default
    max_reply_bytes: int | None = None
    json_output: bool = False
    record: str | None = None
    replay: str | None = None
    source: str = "cli"
    step_delay: float = 0.4
    banner: str | None = None


async def run_job(job: Job, out: TextIO | None = None) -> int:
    """Run one task start to end; returns the exit code. Raises LLMError when no model is configured."""
    from pydantic import ValidationError

    from ..agent.config import AgentConfig
    from ..agent.loop import Agent
    from ..llm import LLMConfig
    from ..llm.scripted import ScriptedLLMServer
    from ..store.tasks import StoreError, TaskStore

    out = out or sys.stdout
    server = None
    if job.replay:
        server = ScriptedLLMServer.from_recording(job.replay).start()
        job.base_url, job.model, job.api_key = server.base_url, "scripted", "replay"
    try:
        try:
            agent_config = AgentConfig(max_steps=job.max_steps, language=job.language, step_delay=job.step_delay)  # type: ignore[arg-type]
        except ValidationError as exc:
            print(f"tabpilot: cannot run with these settings: {_describe(exc)}", file=sys.stderr)
            return EXIT_USAGE
        limits = {"call_deadline": job.model_deadline, "max_reply_bytes": job.max_reply_bytes}
        llm_config = LLMConfig(base_url=job.base_url, model=job.model, api_key=job.api_key,
                               key_from_environment=job.key_from_environment,
                               **{name: value for name, value in limits.items() if value is not None})
        client = _make_client(llm_config, job)  # LLMNotConfigured says how to configure a model
        if job.banner and not job.json_output:
            print(job.banner, file=out, flush=True)
        try:
            browser, tab_url = await _open_browser(job)
        except OpenFailed as exc:
            print(f"tabpilot: {exc}", file=sys.stderr)
            return EXIT_FAILED
        try:
            store = TaskStore(capture_raw=job.debug_capture, secrets=[job.api_key or ""])
        except StoreError as exc:
            await browser.close()
            print(f"tabpilot: {exc}", file=sys.stderr)
            return EXIT_FAILED
        try:
            store.mark_interrupted()
            agent = Agent(browser, client, agent_config)
            task_id = store.start_task(job.task, url=tab_url, model=job.model, source=job.source)
            agent.on("historychange", lambda event: store.append_event(task_id, event.to_wire()))
            if not job.json_output:
                agent.on("historychange", StepPrinter(out))
            result = await _execute(agent, job.task)
            store.finish_task(task_id, status=_final_status(agent.status), result=result.to_wire())
        finally:
            store.close()
            await client.aclose()
            await browser.close()
        _print_result(result, agent.status, job, out)
        if agent.status == "stopped":
            return EXIT_STOPPED
        return 0 if result.success else EXIT_FAILED
    finally:
        if server is not None:
            server.close()


def _describe(exc: ValidationError) -> str:
    """pydantic's errors as one line: `max_steps 800: Input should be less than or equal to 500`."""
    return "; ".join(
        f"{'.'.join(str(part) for part in error['loc'])} {error.get('input')!r}: {error['msg']}"
        for error in exc.errors()
    )


def _make_client(config: LLMConfig, job: Job) -> LLMClient:
    from ..llm import LLMClient

    if not job.record:
        return LLMClient(config)
    from ..llm.replay import Recorder

    return LLMClient(config, on_result=Recorder(job.record, model=job.model, task=job.task).record)


class OpenFailed(Exception):
    """The browser could not be started or reached, or the first page not opened; says which."""


async def _open_browser(job: Job) -> tuple[Browser, str | None]:
    """The browser to work in, with the working tab active; an attached browser is left as it was."""
    from ..browser.actions import normalize_url
    from ..browser.browser import Browser
    from ..browser.errors import BrowserError

    try:
        url = normalize_url(job.url) if job.url else None
    except BrowserError as exc:
        raise OpenFailed(f"--url: {exc}") from None
    try:
        browser = await (Browser.connect(job.cdp_url) if job.cdp_url
                         else Browser.launch(headless=not job.headed, user_data_dir=job.user_data_dir))
    except Exception as exc:
        where = f"reach the browser at {job.cdp_url}" if job.cdp_url else "start a browser"
        raise OpenFailed(f"could not {where}: {exc}") from None
    try:
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
            message = str(exc) if str(exc).startswith("could not open") else f"could not open {url or 'a tab'}: {exc}"
            raise OpenFailed(message) from None
        raise


async def _execute(agent: Agent, task: str) -> ExecutionResult:
    """Run the agent; Ctrl-C stops it cleanly (the result and the record say `stopped`)."""
    loop = asyncio.get_running_loop()
    stopper: set[asyncio.Task[None]] = set()

    def on_interrupt() -> None:
        stopper.add(loop.create_task(agent.stop()))

    # SIGHUP: the terminal was closed; stop like Ctrl-C so the record says `stopped` and the browser closes.
    stop_signals = [signal.SIGINT, signal.SIGTERM, *([signal.SIGHUP] if hasattr(signal, "SIGHUP") else [])]
    try:
        for sig in stop_signals:
            loop.add_signal_handler(sig, on_interrupt)
    except (NotImplementedError, RuntimeError):  # Windows: Ctrl-C ends the process instead
        pass
    try:
        return await agent.execute(task)
    finally:
        for sig in stop_signals:
            try:
                loop.remove_signal_handler(sig)
            except (NotImplementedError, RuntimeError):
                pass


def _final_status(status: str) -> str:
    return status if status in ("completed", "error", "stopped") else "error"


def _print_result(result: ExecutionResult, status: str, job: Job, out: TextIO) -> None:
    from ..store.redact import scrub, without_raw

    if job.json_output:
        wire = result.to_wire()
        if not job.debug_capture:
            wire["history"] = [without_raw(event) for event in wire["history"]]
        print(json.dumps(scrub(wire, [job.api_key or ""]), ensure_ascii=False, indent=2), file=out, flush=True)
        return
    mark = "✅" if result.success else ("⏹" if status == "stopped" else "❌")
    print(f"\n{mark} {status}: {result.data}", file=out, flush=True)


class StepPrinter:
    """Prints each history event as it is appended: step number, next goal, action, result."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def __call__(self, event: Any) -> None:
        kind = event.type
        if kind == "step":
            action = f"{event.action.name} {json.dumps(event.action.input, ensure_ascii=False)}"
            lines = [
                f"step {event.step_index + 1} · {event.reflection.next_goal or '(no goal given)'}",
                f"    action: {_clip(action)}",
                f"    result: {_clip(event.action.output)}",
            ]
        elif kind == "observation":
            lines = [f"  · {_clip(event.content)}"]
        elif kind == "retry":
            lines = [f"  ↻ retry {event.attempt}/{event.max_attempts}: {_clip(event.message)}"]
        elif kind == "error":
            lines = [f"  ✖ {event.message}"]
        elif kind == "user_takeover":
            lines = ["  ✋ you took over"]
        else:
            return
        print("\n".join(lines), file=self.out, flush=True)


def _clip(text: str, limit: int = 300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
