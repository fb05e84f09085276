"""The agent: page-agent's reflection-before-action loop over a real browser.

Each step: look at the page, note what changed (observations), ask the model for one AgentOutput
(reflection + one action), run the action, append the step to `history`. `history` is the single
source of truth — the memory the prompt is built from and the record the store writes — and every
append is announced at once through the `historychange` event.

A run can be paused between steps (`pause()` / `resume()`): a model call in flight is cancelled and,
once resumed, the page is read again and the model asked again; nothing is dispatched while paused.

Events (pyee): `statuschange(status)`, `historychange(event)` (the event just appended),
`activity(activity)` (transient, for UIs; `paused` / `resumed` too), `dispose(reason)`."""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import json
import logging
import re
import time
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from pyee.asyncio import AsyncIOEventEmitter

from ..browser.errors import ActionError, BrowserError, TabClosed
from ..browser.nodes import shorten
from ..browser.passwords import HIDDEN as PASSWORD_HIDDEN
from ..i18n import STOPPED_MESSAGE, failure_text
from ..i18n import text as say
from ..llm.vision import wants_images
from ..textsafety import short_url
from .config import AgentConfig
from .macro import MACRO_TOOL_DESCRIPTION, MACRO_TOOL_NAME, AgentOutput, macro_parameters, parse_agent_output
from .prompts import stable_prefix, step_tail, system_prompt
from .tools import Tool, ToolContext, assemble_tools
from .types import (
    AgentStatus,
    AnyEvent,
    ErrorActivity,
    ErrorEvent,
    ExecutedActivity,
    ExecutingActivity,
    ExecutionResult,
    GuardKind,
    ObservationEvent,
    PausedActivity,
    ResumedActivity,
    RetryEvent,
    RetryingActivity,
    StepAction,
    StepEvent,
    ThinkingActivity,
    UserTakeoverEvent,
    WaitingActivity,
    WireModel,
)

if TYPE_CHECKING:
    from ..browser.browser import Browser
    from ..browser.screenshot import Screenshot
    from ..browser.state import BrowserState
    from ..llm import LLMClient, LLMConfig

log = logging.getLogger(__name__)

MAX_STEPS_MESSAGE = "Step count exceeded maximum limit"
LOOP_REPEATS = 3  # the same action on an unchanged page this many times in a row is a loop
WAIT_WARNING_SECONDS = 3


class AgentBusy(RuntimeError):
    """execute() was called while a task is already running."""


class _PausedMidThought(Exception):
    """The model call in flight was cancelled by a pause; it is asked again once resumed."""


class _NotAllowed(Exception):
    """`approve_action` said no (the user, or nobody in time): the action was not run; the refusal's words are its
    result."""


class Agent(AsyncIOEventEmitter):
    def __init__(
        self,
        browser: Browser,
        llm: LLMClient | LLMConfig,
        config: AgentConfig | None = None,
    ) -> None:
        super().__init__()
        self.on("error", self._on_listener_error)  # pyee raises unhandled "error" events
        from ..llm import LLMClient  # the openai package loads only when a client is made

        self.browser = browser
        self._owns_llm = not isinstance(llm, LLMClient)  # made here from a config: closed in dispose()
        self.llm: LLMClient = llm if isinstance(llm, LLMClient) else LLMClient(llm)
        self.config = config or AgentConfig()
        self.tools: dict[str, Tool] = assemble_tools(self.config)
        self.task = ""
        self.history: list[AnyEvent] = []
        self.disposed = False
        self._status: AgentStatus = "idle"
        self._observations: list[ObservationEvent] = []
        self._runner: asyncio.Task[ExecutionResult] | None = None
        self._runner_started = asyncio.Event()
        self._stop_requested = False
        self._resumed = asyncio.Event()
        self._resumed.set()
        self._thinking: asyncio.Task[Any] | None = None
        self._acting: asyncio.Future[Any] | None = None
        self._user_has_controls = False  # set by pause(abandon=True) until resume()
        self._previous_state: BrowserState | None = None
        self._last_url: str | None = None  # None: no page seen yet (where a task starts is no navigation)
        # The tab and its document count (Tab.documents) as the agent last knew them, and whether the document was
        # replaced outside its own actions (a reload, the page or the person navigating) since it last read the page.
        self._document: tuple[str, int] | None = None
        self._tab: Any = None  # the tab the agent last looked at
        self._tab_closed_meanwhile = False
        self._replaced_meanwhile = False
        self._total_wait = 0.0
        self._recent_actions: list[tuple[str, str]] = []
        self._loop_reported: str | None = None
        self._vision = False  # this task sends screenshots (decided at its start, off once refused)
        self._vision_confirmed = False
        self._reset_step_state()

    # --- public API ---------------------------------------------------------------------------
    @property
    def status(self) -> AgentStatus:
        return self._status

    @property
    def running(self) -> bool:
        return self._runner is not None and not self._runner.done()

    async def execute(self, task: str, history: list[AnyEvent] | None = None) -> ExecutionResult:
        """Run a task to its end (done, error, max steps or stop) and return the result. With `history` (the
        record of a run a host that went away had begun), the agent goes on from it: that is its memory,
        and its steps count towards max_steps."""
        if self.disposed:
            raise RuntimeError("this agent has been disposed; create a new one")
        if self.running:
            raise AgentBusy("the agent is already running a task; stop it before starting another")
        if not isinstance(task, str) or not task.strip():
            raise ValueError("a task needs some text saying what to do")
        self._runner_started.clear()
        self._stop_requested = False
        self._runner = asyncio.create_task(self._run(task.strip(), list(history or [])))
        try:
            return await asyncio.shield(self._runner)
        except asyncio.CancelledError:
            await self.stop()  # the caller gave up on us: stop the run rather than leave it going
            raise

    async def stop(self) -> None:
        """Cancel the model call or action in flight; returns once the run has settled as `stopped`."""
        runner = self._runner
        if runner is None or runner.done():
            return
        self._stop_requested = True
        await self._runner_started.wait()  # a task cancelled before it ran could not settle as `stopped`
        runner.cancel()
        await asyncio.wait([runner])

    @property
    def paused(self) -> bool:
        return not self._resumed.is_set()

    def pause(self, reason: str | None = None, *, abandon: bool = False) -> bool:
        """Hold the run before its next step; a model call in flight is cancelled (and asked again on
        resume). An action already under way finishes, or with `abandon` (the user took the controls) is
        cancelled where it is and its step says so. May be called before `execute`. False if already
        paused (an action is still abandoned if asked)."""
        if abandon:
            self._user_has_controls = True
            if self._acting is not None:
                self._acting.cancel()
        if self.paused:
            return False
        self._resumed.clear()
        self._activity(PausedActivity(reason=reason))
        if self._thinking is not None:
            self._thinking.cancel()
        return True

    def resume(self) -> bool:
        """Let a paused run go on; False if it was not paused."""
        if not self.paused:
            return False
        self._user_has_controls = False
        self._resumed.set()
        self._activity(ResumedActivity())
        return True

    def push_observation(self, content: str, guard: GuardKind | None = None, *, nudge: bool = False,
                         params: dict[str, str] | None = None) -> None:
        """A note for the model, added to the history before the next step (tools use this); `guard`: a
        guard stopped something (said once while it waits for the next step), `params` what it stopped, for the
        person; `nudge`: about the model's own way of working, for the model only."""
        note = ObservationEvent(content=content, guard=guard, nudge=nudge or None, params=params)
        if guard is None or note not in self._observations:
            self._observations.append(note)

    def push_note(self, key: str, **params: str) -> None:
        """The catalog's note `key` for the model, in the agent's language; the person's card says it in theirs."""
        self._observations.append(ObservationEvent(content=say(key, self.config.language, **params), note=key,
                                                   params=params or None))

    def push_takeover(self, event: UserTakeoverEvent) -> None:
        """Record that the user took the controls (and what they did) in the history."""
        self._append(event)

    async def dispose(self, reason: str | None = None) -> None:
        if self.disposed:
            return
        await self.stop()
        self.disposed = True
        if self._owns_llm:
            await self.llm.aclose()
        self.emit("dispose", reason)
        await self._hook("on_dispose", self, reason)

    # --- the loop -----------------------------------------------------------------------------
    async def _run(self, task: str, history: list[AnyEvent]) -> ExecutionResult:
        self._runner_started.set()
        self.task = task
        self.history = history
        self._observations = []
        self._reset_step_state()
        endpoint = self.llm.endpoint
        self._vision = not self.llm.images_refused and wants_images(self.config.use_vision, endpoint.base_url,
                                                                    endpoint.model)
        self._vision_confirmed = False
        self._set_status("running")
        result: ExecutionResult
        try:
            await self._hook("on_before_task", self)
            result = await self._steps()
        except asyncio.CancelledError:
            if not self._stop_requested:
                raise
            asyncio.current_task().uncancel()  # type: ignore[union-attr]  # we asked for it; finish normally
            result = self._end("stopped", STOPPED_MESSAGE)
        except Exception as exc:  # a model that cannot be reached, a browser gone, a failing hook
            message, code, params = _failure(exc)
            self._activity(ErrorActivity(message=message))
            self._append(ErrorEvent(message=message, code=code, params=params,
                                    raw_response=getattr(exc, "raw_response", None)))
            result = self._end("error", message)
        try:
            await self._hook("on_after_task", self, result)
        except asyncio.CancelledError:
            if not self._stop_requested:
                raise
            asyncio.current_task().uncancel()  # type: ignore[union-attr]  # stopped while the task ended
        except Exception:
            log.exception("on_after_task hook failed")
        self._user_has_controls = False
        self._resumed.set()  # a pause ends with its run: the next execute starts unpaused
        return result

    async def _steps(self) -> ExecutionResult:
        step = sum(isinstance(event, StepEvent) for event in self.history)
        while True:
            await self._hook("on_before_step", self, step)
            tab, state, output, invoked = await self._decide(step)
            target = self._target(output.tool_name, output.tool_input, state)
            action_output, took_over, failed = await self._act(output, tab, state, target)
            self._append(
                StepEvent(
                    step_index=step,
                    reflection=output.reflection,
                    action=StepAction(name=output.tool_name, input=output.input_wire, output=action_output,
                                      target=target, abandoned="took_over" if took_over else None,
                                      not_done=failed or None),
                    usage=invoked.usage.to_step_usage(),
                    raw_response=invoked.raw_response,
                    raw_request=invoked.raw_request,
                )
            )
            await self._hook("on_after_step", self, self.history)
            if output.tool_name == "done":
                done = output.tool_input
                success = bool(getattr(done, "success", True))
                text = str(getattr(done, "text", "") or "no text provided")
                return self._end("completed" if success else "error", text, success=success)
            step += 1
            if step >= self.config.max_steps:
                self._append(ErrorEvent(message=MAX_STEPS_MESSAGE, code="max_steps"))
                return self._end("error", MAX_STEPS_MESSAGE)
            if self.config.step_delay:
                await asyncio.sleep(self.config.step_delay)

    async def _decide(self, step: int) -> tuple[Any, BrowserState, AgentOutput, Any]:
        """Read the page and ask the model for this step's action, once not paused. A pause while the
        model thinks (or just as it answered) discards that answer: once resumed, the page may have
        changed, so it is read again and the model asked again."""
        again = False
        while True:
            await self._resumed.wait()
            tab = await self.browser.current_tab()
            try:
                state = await self._read_page(tab)
            except TabClosed:
                if not tab.closed:
                    raise
                continue  # closed as it was read: back to another tab worked in (or none is left: said then)
            self._notice_document(tab)
            self._observe(step, state, again=again)
            again = True
            if self.paused:  # paused while the page was read: ask nothing until resumed
                continue
            try:
                output, invoked = await self._think(step, state, tab)
            except _PausedMidThought:
                continue
            if not self.paused:
                return tab, state, output, invoked

    async def _read_page(self, tab: Any) -> BrowserState:
        from ..browser.state import get_state

        state = await get_state(self.browser, tab, self._previous_state)
        self._previous_state = state
        return state

    async def _think(self, step: int, state: BrowserState, tab: Any) -> tuple[AgentOutput, Any]:
        from ..llm import ToolSpec

        page_text = state.text
        transform = self.config.transform_page_content
        if transform is not None:
            page_text = await _maybe_await(transform(page_text))
        guard = self.config.privacy
        # A password field's value the page shows elsewhere is hidden in the text; a screenshot would show it.
        hidden_here = PASSWORD_HIDDEN in page_text
        if guard is not None:  # the page → model boundary: no secret or masked value in the page text
            concealed = guard.conceal(page_text, state.url)
            hidden_here = hidden_here or concealed != page_text
            page_text = concealed
        # Cache-friendly order (issue 16): the system prompt, the tool schema and the stable prefix first,
        # byte-identical from step to step; what changes each step (prompts.step_tail) last.
        language = self.config.language
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": system_prompt(language, self.config.custom_system_prompt)},
            {
                "role": "user",
                "content": stable_prefix(task=self.task, history=self.history,
                                         system_instructions=self.config.system_instructions, language=language)
                + step_tail(step_number=step + 1, max_steps=self.config.max_steps, page_text=page_text,
                            page_instructions=self._page_instructions(state.url),
                            page_notes=self._page_notes(state), language=language),
            },
        ]
        if guard is not None:  # nothing the model reads holds a secret or masked value
            messages = guard.conceal_messages(messages, state.url, keep=self.task)
        # A screenshot would show what the page text hides (a typed secret, a card number): none on such a page.
        screenshot = None if hidden_here else await self._screenshot(tab, state)
        if screenshot is not None:  # last: an image changes every step
            messages.append({"role": "user", "content": [
                {"type": "text", "text": say("prompt.screenshot", language)},
                {"type": "image_url", "image_url": {"url": screenshot.data_url(), "detail": "high"}},
            ]})
        spec = ToolSpec(
            name=MACRO_TOOL_NAME, description=MACRO_TOOL_DESCRIPTION, parameters=macro_parameters(self.tools)
        )
        self._activity(ThinkingActivity())
        thinking = self._thinking = asyncio.ensure_future(self.llm.invoke(
            messages, spec, parse=lambda arguments: parse_agent_output(arguments, self.tools), on_retry=self._on_retry,
            on_wait=lambda info: self._activity(WaitingActivity(seconds=info.seconds, message=info.message)),
        ))

        # The tab this step is about, closed while the model thinks (the person closed it): the answer is of no
        # use, so the call is dropped at once and the step starts over: on another tab worked in, or, with none
        # left, the task ends saying the tab was closed (not only once a slow model has answered, and been paid).
        def closed(target_id: str) -> None:
            if target_id == tab.target_id:
                thinking.cancel()

        gone = self.browser.on_tab_gone
        gone.append(closed)
        try:
            invoked = await thinking
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if thinking.cancelled() and current is not None and not current.cancelling():
                raise _PausedMidThought from None  # pause() or the tab's closing cancelled only the call, not the run
            raise
        finally:
            self._thinking = None
            gone.remove(closed)
        if screenshot is not None:
            self._vision_answered()
        return invoked.value, invoked

    async def _screenshot(self, tab: Any, state: BrowserState) -> Screenshot | None:
        """The viewport with the indices drawn on, when this task sends the model images; a screenshot that
        fails is left out of this step only."""
        if not self._vision:
            return None
        from ..browser.screenshot import labelled_screenshot

        try:
            return await labelled_screenshot(tab, state.elements.values())
        except BrowserError as exc:
            log.warning("no screenshot this step: %s", exc)
            return None

    def _vision_answered(self) -> None:
        """The model answered a request with a screenshot: note whether its endpoint took the image. A
        refusal turns screenshots off for the rest of the task, with a note (the task goes on)."""
        from ..llm.vision import remember

        endpoint = self.llm.endpoint
        if self.llm.images_refused:
            self._vision = False
            # at once, not before the next step: a task that ends with this step still says so
            self._append(ObservationEvent(content=say("note.vision_off", self.config.language), note="note.vision_off"))
            remember(endpoint.base_url, endpoint.model, accepted=False)
        elif not self._vision_confirmed:
            self._vision_confirmed = True
            remember(endpoint.base_url, endpoint.model, accepted=True)

    def _target(self, name: str, tool_input: Any, state: BrowserState) -> str | None:
        """What an action is on, as a person names it: the element's name as the model read it (masked as the
        page state was), or the address a go_to_url opens."""
        if name == "go_to_url" and isinstance(getattr(tool_input, "url", None), str):
            return _address(tool_input.url)
        index = getattr(tool_input, "index", None)
        element = state.elements.get(index) if isinstance(index, int) else None
        if element is None or not element.name:
            return None
        name = shorten(element.name)
        return self.config.privacy.conceal(name, state.url) if self.config.privacy is not None else name

    async def _act(self, output: AgentOutput, tab: Any, state: BrowserState,
                   target: str | None) -> tuple[str, bool, bool]:
        """What the action gave, whether it was cut short by the user's taking the controls, and whether it
        was not done otherwise (refused by the user or a guard, or it failed)."""
        name, tool_input = output.tool_name, output.tool_input
        self._activity(ExecutingActivity(tool=name, input=output.input_wire, target=target))
        started = time.monotonic()
        language = self.config.language
        took_over = failed = False
        context = ToolContext(agent=self, browser=self.browser, tab=tab, elements=state.elements)
        self._notice_document(tab)  # replaced while the model thought: not by this action
        acting = self._acting = asyncio.ensure_future(self._execute(name, context, tool_input))
        try:
            result = await acting
            text = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False, default=str)
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if not acting.cancelled() or current is None or current.cancelling():
                raise  # the run is stopping
            took_over = True  # pause(abandon=True) cancelled only the action
        except BrowserError as exc:  # a bad index, a stale element, a closed tab: the model can fix it
            # ... unless the user took the controls meanwhile: then input was refused on purpose
            took_over = self._user_has_controls
            failed = not took_over
            text = "" if took_over else f"❌ {exc}"
        except _NotAllowed as refusal:
            failed, text = True, str(refusal)
        except Exception as exc:  # a custom tool's bug must not end the task
            log.exception("tool %s failed", name)
            failed, text = True, say("result.tool_failed", language, tool=name, error=exc)
        finally:
            self._acting = None
            self._notice_document(tab, by_the_agent=True)
        if took_over:
            text = say("result.took_over", language)
        if self.config.privacy is not None:  # e.g. a typed value read back, or a script's result
            text = self.config.privacy.conceal(text, state.url)
        duration = (time.monotonic() - started) * 1000
        self._activity(ExecutedActivity(tool=name, input=output.input_wire, output=text, duration=round(duration, 1)))
        waited = name == "wait" and not took_over
        self._total_wait = self._total_wait + float(getattr(tool_input, "seconds", 0)) if waited else 0.0
        self._recent_actions.append((f"{name} {json.dumps(output.input_wire, sort_keys=True)}", _page_key(state)))
        del self._recent_actions[:-LOOP_REPEATS]
        return text, took_over, failed

    async def _execute(self, name: str, context: ToolContext, tool_input: Any) -> Any:
        """Run one tool, once the user said yes if `approve_action` asks them (a no: _NotAllowed).
        The model → page boundary: secret names and placeholders in typed text become the real values
        only here, for a page of their site (else `privacy.guard.Refused`), after the question: the
        user is asked about what the model wrote, never shown a secret's value. The typing action is told
        which secrets it holds: those go only into a login field (privacy/fields.py), and in that document
        nothing may carry them on (`check_after_typing`)."""
        approve = self.config.approve_action
        if approve is not None:
            refusal = await _maybe_await(approve(name, tool_input, context))
            if refusal is not None:
                raise _NotAllowed(refusal)
        guard = self.config.privacy
        document: tuple[Hashable, ...] = ((context.tab.target_id, context.tab.documents),)
        if guard is not None and (guard.typed_anywhere or guard.uses(tool_input)):
            # a page gone back to comes back with what its fields held (a secret typed, then go_back: a script
            # copied it from the user-name field into the search box), as another document but at its old entry
            document += ((context.tab.target_id, "entry", await context.tab.history_entry()),)
        if guard is not None:
            guard.check_after_typing(name, tool_input, document)
        if guard is not None and guard.uses(tool_input):
            url = None
            index = getattr(tool_input, "index", None)
            if isinstance(index, int):  # where the text would go: the element's own document (an iframe too)
                from ..browser.nodes import document_url

                url = await document_url(context.tab, context.element(index))
            context.secrets = guard.login_only(name, tool_input)
            tool_input = guard.reveal_input(name, tool_input, url)
        result = await _maybe_await(self.tools[name].execute(context, tool_input))
        if guard is not None and context.secrets:
            guard.typed_secret_in(document)
        return result

    # --- observations -------------------------------------------------------------------------
    def _observe(self, step: int, state: BrowserState, *, again: bool = False) -> None:
        """Notes for the model before it decides. `again`: the same step after a pause, where only what
        may have changed meanwhile (the URL) is noted, not the step's warnings a second time."""

        language = self.config.language
        replaced, self._replaced_meanwhile = self._replaced_meanwhile, False
        if self._tab_closed_meanwhile:
            self._tab_closed_meanwhile = False
            self.push_note("note.tab_closed", url=state.url)
            self._last_url = state.url
        elif self._last_url is None:
            self._last_url = state.url  # where the task starts: not a navigation
        elif state.url != self._last_url:
            # cut where it is said (i18n.URL_LIMIT)
            self.push_note("note.navigated_meanwhile" if replaced else "note.navigated", url=state.url)
            self._last_url = state.url
        elif replaced:
            self.push_note("note.reloaded")
        if again:
            self._flush_observations()
            return
        if self._total_wait >= WAIT_WARNING_SECONDS:
            self.push_observation(say("note.waited", language, seconds=f"{self._total_wait:g}"), nudge=True)
        remaining = self.config.max_steps - step
        if remaining == 5:
            self.push_observation(say("note.steps_left", language, remaining=remaining), nudge=True)
        elif remaining == 2:
            self.push_observation(say("note.steps_critical", language, remaining=remaining), nudge=True)
        loop_note = self._loop_note(state)
        if loop_note:
            self.push_observation(loop_note, nudge=True)
        self._flush_observations()

    def _notice_document(self, tab: Any, *, by_the_agent: bool = False) -> None:
        """Note whether the tab's document was replaced since the agent last looked (a new tab is no
        replacement); one replaced during its own action is the agent's doing, any other is told (`_observe`)."""
        document: tuple[str, int] = (tab.target_id, tab.documents)
        if not by_the_agent and self._tab is not None and self._tab.closed:
            self._tab_closed_meanwhile = True  # since the agent last looked, not during an action of its
        elif not by_the_agent and self._document is not None and self._document[0] == document[0]:
            self._replaced_meanwhile |= self._document[1] != document[1]
        # A tab the agent's own action closed (close_tab, a click that closed a popup) is no news afterwards.
        self._document, self._tab = document, None if by_the_agent and tab.closed else tab

    def _flush_observations(self) -> None:
        for note in self._observations:
            self._append(note)
        self._observations = []

    def _loop_note(self, state: BrowserState) -> str | None:
        """LOOP DETECTION: the last few steps did the same thing on a page that has not changed."""
        recent = self._recent_actions
        if len(recent) < LOOP_REPEATS or len(set(recent)) != 1 or recent[0][1] != _page_key(state):
            self._loop_reported = None
            return None
        action = recent[0][0]
        if self._loop_reported == action:
            return None  # said once per loop; it is repeated if the loop starts again
        self._loop_reported = action
        return say("note.loop", self.config.language, action=action, repeats=LOOP_REPEATS)

    # --- plumbing -----------------------------------------------------------------------------
    def _reset_step_state(self) -> None:
        self._previous_state = None
        self._last_url = None
        self._total_wait = 0.0
        self._recent_actions = []
        self._loop_reported = None

    def _page_instructions(self, url: str) -> str | None:
        callback = self.config.page_instructions
        if callback is None or not url:
            return None
        try:
            return callback(url)
        except Exception:
            log.exception("page_instructions callback failed")
            return None

    def _page_notes(self, state: BrowserState) -> list[str]:
        """Per-page text for the model, placed after the stable prefix, just before the page (see
        prompts.step_tail): the one place for what depends on the current page or its domain, e.g. the
        names of the secrets usable there or a note that masking is on. Never put such text in the
        history or the task: it would break the prompt cache every time the page changes."""
        guard = self.config.privacy
        note = guard.note(state.url, self.config.language) if guard is not None else None
        return [note] if note else []

    def _on_retry(self, info: Any) -> None:
        self._activity(RetryingActivity(attempt=info.attempt, max_attempts=info.max_attempts))
        self._append(RetryEvent(message=info.message, attempt=info.attempt, max_attempts=info.max_attempts,
                                code=getattr(info, "code", None), params=getattr(info, "params", None)))

    def _end(self, status: AgentStatus, data: str, *, success: bool = False) -> ExecutionResult:
        self._set_status(status)
        return ExecutionResult(success=success, data=data, history=list(self.history))

    def _append(self, event: AnyEvent) -> None:
        self.history.append(event)
        self.emit("historychange", event)

    def _activity(self, activity: WireModel) -> None:
        self.emit("activity", activity)

    def _set_status(self, status: AgentStatus) -> None:
        if status != self._status:
            self._status = status
            self.emit("statuschange", status)

    async def _hook(self, name: str, *args: Any) -> None:
        hook: Callable[..., Any] | None = getattr(self.config, name)
        if hook is not None:
            await _maybe_await(hook(*args))

    @staticmethod
    def _on_listener_error(error: BaseException) -> None:
        log.error("an agent event listener failed", exc_info=error)


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


def _address(url: str) -> str:
    """A page's address as a person reads it in 'opened example.com/docs': its host and path, cut short; no scheme,
    "www.", user name or password, query or fragment (the exact call keeps them). Read as the tool opens it: an
    address written without "https://" ("127.0.0.1:8000/a?b", "example.com/a#b") was said whole, query and all."""
    from ..browser.actions import normalize_url  # as tools.py does: the browser's actions load with the first one
    from ..guards.domains import shown_url

    url = url.strip()
    try:
        parts = urlsplit(normalize_url(url))
        host = parts.netloc.rpartition("@")[2].removeprefix("www.")
    except (ActionError, ValueError):  # no address, a script's, "http://[::1" and the like
        host = ""
    if host:
        return short_url(shown_url(host) + parts.path.rstrip("/"), 60)
    if url[:5].lower() == "data:":
        return short_url(url, 60)  # its media type only
    # about:, file:, another program's scheme ("alice:pass@example.com" is one): neither user info, query nor fragment
    return short_url(re.split("[?#]", url, maxsplit=1)[0].rpartition("@")[2], 60)


def _page_key(state: BrowserState) -> str:
    # `*[` marks elements new since the last look; a page that did not change loses them, so ignore them
    text = f"{state.url}\n{state.text}".replace("*[", "[")
    return hashlib.sha1(text.encode("utf-8", "replace")).hexdigest()


def _failure(exc: BaseException) -> tuple[str, str | None, dict[str, Any] | None]:
    """What ended the task: its English message (page-agent's `message`) and the code and params
    (i18n.FAILURE_CODES) a reader words it by in their language."""
    from ..llm import LLMError
    from ..privacy.masking import PatternTooSlow

    if isinstance(exc, LLMError):
        return exc.message, exc.code or None, exc.params if exc.code else None
    if isinstance(exc, PatternTooSlow):
        return str(exc), "mask_too_slow", dict(exc.values)
    code, params = (("tab_closed", {}) if isinstance(exc, TabClosed)
                    else (_page_or_browser(exc), {"detail": str(exc)}) if isinstance(exc, BrowserError)
                    else ("crashed", {"kind": type(exc).__name__, "detail": str(exc)}))
    return failure_text(code, params, "en-US"), code, params


def _page_or_browser(exc: BaseException) -> str:
    """page_busy when what failed was a command the page never answered (a script that never ends, an alert in a
    loop: the browser itself is fine), else browser_failed."""
    from ..cdp import CDPError, CDPErrorKind

    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, CDPError) and cause.kind is CDPErrorKind.TIMEOUT:
            return "page_busy"
        cause = cause.__cause__ or cause.__context__
    return "browser_failed"
