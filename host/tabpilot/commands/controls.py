"""The person at the terminal of `tabpilot run`: Enter takes the controls of the browser and hands them
back (with the note typed before it; a bare Enter asks for one), the agent's `ask_user` questions are
answered here, and touching the page while the agent works pauses it by itself (implicit takeover).

What the user does in the page is recorded by capture.js, injected over CDP into every frame of the
task's tab (`browser.capture.PageCapture`); the host knows its own input (`Tab.input_log`), so any
trusted input capture.js reports that the host did not dispatch is the user's."""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import time
from typing import TYPE_CHECKING, Any, TextIO

from ..i18n import approval_for_reader
from ..i18n import text as say
from ..textsafety import show_controls

if TYPE_CHECKING:
    from ..browser.capture import PageCapture
    from ..browser.tab import Tab
    from ..taskrun.events import RunUpdate
    from ..taskrun.run import TaskRun
    from .output import CommandOutput


YES_ANSWERS = ("y", "yes", "是", "允许")
# What a person types to answer an approval: after it expired, such a line is told so and does nothing else.
LATE_ANSWERS = (*YES_ANSWERS, "n", "no", "否", "拒绝", "t", "take", "take over")


class TerminalControls:
    def __init__(
        self, run: TaskRun, out: TextIO | CommandOutput, *, stdin: TextIO | None = None, language: str | None = None
    ) -> None:
        self.language = language  # what it says is worded in: `run`'s language
        self.run = run
        self.out = out
        self.stdin = stdin or sys.stdin
        self.tab: Tab | None = None
        self.capture: PageCapture | None = None
        self._lines: asyncio.Queue[str | None] = asyncio.Queue()
        self._reader: asyncio.Task[None] | None = None
        self._awaiting_note = False
        self._recording = False
        self._shown_question: str | None = None
        self._shown_approval: dict[str, str] | None = None
        self._answered_approval = False  # the user answered the approval shown (else it went away unanswered)
        self._expired_approval: dict[str, str] | None = None  # one that went unanswered: a late answer is for it
        self._work: set[asyncio.Task[Any]] = set()
        self._opened: dict[str, dict[str, Any]] = {}  # target id → the `tab` action of a tab the user opened

    async def start(self, *, capture: bool) -> None:
        """Listen to the terminal; with `capture`, record what the user does in the task's tab."""
        loop = asyncio.get_running_loop()
        if capture:
            from ..browser.capture import PageCapture

            self.tab = await self.run.browser.current_tab()
            self.capture = PageCapture(self.tab, self._on_capture)
            await self.capture.start("watch")
            root = self.run.browser.connection.root
            root.on("Target.targetCreated", lambda params: self._on_tab(params, "opened"))
            root.on("Target.targetDestroyed", lambda params: self._on_tab(params, "closed"))
            root.on("Target.targetInfoChanged", self._on_tab_changed)
            self._say(say("controls.help", self.language))
        self.run.observers.append(self._on_update)
        threading.Thread(target=self._read_lines, args=(loop,), name="terminal", daemon=True).start()
        self._reader = loop.create_task(self._handle_lines())

    async def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
        if self.capture is not None:
            try:
                await self.capture.set_mode("off")
            except Exception:
                pass  # the browser is gone

    # --- the terminal ------------------------------------------------------------------------------
    def _read_lines(self, loop: asyncio.AbstractEventLoop) -> None:
        try:
            for line in self.stdin:
                loop.call_soon_threadsafe(self._lines.put_nowait, line.rstrip("\r\n"))
        except (ValueError, OSError, RuntimeError):
            pass  # stdin closed, or the loop is gone: nobody to answer any more
        try:
            loop.call_soon_threadsafe(self._lines.put_nowait, None)
        except RuntimeError:
            pass

    async def _handle_lines(self) -> None:
        while (line := await self._lines.get()) is not None:
            if not self.run.running:
                return
            try:
                await self._on_line(line)
            except Exception as exc:  # a browser gone mid-takeover: say so, keep listening
                self._say(f"tabpilot: {exc}")

    async def _on_line(self, line: str) -> None:
        answer = line.strip().lower()
        expired, self._expired_approval = self._expired_approval, None
        if self.run.approval is None and expired is not None and answer in LATE_ANSWERS:
            # the y/n/t meant for a question that has expired: never read as Enter (take the controls)
            action = approval_for_reader(expired, self.language) or {}
            self._say(say("controls.late_answer", self.language, action=action.get("actionText", expired["action"]),
                          site=expired["site"]))
            return
        if self.run.approval is not None and not self._awaiting_note:
            self._answered_approval = True
            if answer in ("t", "take", "take over") and self.capture is not None:
                self.run.decide("takeover")
            elif answer in YES_ANSWERS:
                self._say(say("controls.approved", self.language))
                self.run.decide("allow")
            else:
                self._say(say("controls.denied", self.language))
                self.run.decide("deny")
            return
        if self.run.question is not None and not self._awaiting_note:
            self.run.answer(line)
            return
        if self._awaiting_note:
            self._awaiting_note = False
            await self._hand_back(line.strip() or None)
        elif self.run.taken_over and line.strip():
            await self._hand_back(line.strip())  # the note typed on the hand-back line itself
        elif self.run.taken_over:
            self._awaiting_note = True
            self._say(say("controls.ask_note", self.language))
        elif self.capture is not None:
            await self._take_over("user")

    # --- taking over and handing back --------------------------------------------------------------
    async def _take_over(self, reason: str, since: int | None = None) -> None:
        # it refuses the agent's input from now on
        await self.run.take_over(reason, started_at=since)  # type: ignore[arg-type]

    async def flush(self) -> None:
        """Stop recording and keep what was still pending (a field being typed in, a scroll)."""
        if self.capture is not None and self.run.taken_over:
            self._recording = False
            try:
                self.run.add_takeover_actions(await self.capture.set_mode("watch"))
            except Exception:
                pass  # the browser is gone: what was sent before is kept

    async def _hand_back(self, note: str | None) -> None:
        await self.flush()
        await self.run.hand_back(note)

    def _on_capture(self, message: dict[str, Any]) -> None:
        kind = message.get("type")
        if kind == "capture.action" and isinstance(message.get("action"), dict):
            self.run.add_takeover_actions([message["action"]])
        elif kind == "capture.input" and not self.run.taken_over and self.run.running and self.tab is not None:
            at = message.get("at")
            if isinstance(at, int | float) and not self.tab.input_log.ours(at):
                self._spawn(self._take_over("implicit", int(at)))

    def _on_tab(self, params: dict[str, Any], what: str) -> None:
        """A tab the user opens or closes while they have the controls (capture.js cannot see tabs)."""
        info = params.get("targetInfo") or {}
        if not self.run.taken_over or (info and info.get("type") != "page"):
            return
        target_id = params.get("targetId") or info.get("targetId", "")
        if what == "opened":
            url = info.get("url", "")
            action = {"kind": "tab", "target": _tab_name(url), "value": what, "url": url,
                      "at": int(time.time() * 1000)}
            self._opened[target_id] = action
        elif target_id in self._opened:
            url = self._opened.pop(target_id)["url"]
            action = {"kind": "tab", "target": _tab_name(url), "value": what, "url": url,
                      "at": int(time.time() * 1000)}
        else:
            return  # not a tab opened during this takeover
        self.run.add_takeover_actions([action])

    def _on_tab_changed(self, params: dict[str, Any]) -> None:
        """A new tab's URL is known only once it starts loading: name it by that."""
        info = params.get("targetInfo") or {}
        action = self._opened.get(info.get("targetId", ""))
        if action is not None and info.get("url"):
            action.update(target=_tab_name(info["url"]), url=info["url"])  # the recorded dict itself

    def _on_update(self, update: RunUpdate) -> None:
        from ..taskrun.events import RunControl

        if not isinstance(update, RunControl):
            return
        control = update.control
        if control is not None and not self._recording:
            self._recording = True
            if self.capture is not None:
                self._spawn(self.capture.set_mode("record", since=control.get("startedAt")))
            self._say(_took_over_text(control, self.language))
        elif control is None and self._recording:
            self._recording = False  # handed back another way (the run ended, stopped)
        if self._shown_approval is not None and update.approval != self._shown_approval:
            if not self._answered_approval:  # nobody answered in time: the run refused it (approval_timeout)
                self._expired_approval = self._shown_approval
            self._answered_approval = False
        if update.approval is not None and update.approval != self._shown_approval:
            from ..guards.irreversible import PendingAction

            self._expired_approval = None

            takeover = say("controls.approve_takeover", self.language) if self.capture is not None else ""
            pending = PendingAction.from_wire(update.approval)
            self._say(say("controls.approve", self.language, sentence=pending.sentence(self.language),
                          why=pending.why(self.language), takeover=takeover))
        self._shown_approval = update.approval
        if update.question is not None and update.question != self._shown_question:
            self._say(say("controls.question", self.language, question=update.question))
        self._shown_question = update.question

    def _say(self, text: str) -> None:
        print(show_controls(text), file=self.out, flush=True)  # the model's question, a page's action in it

    def _spawn(self, work: Any) -> None:
        task = asyncio.ensure_future(work)
        self._work.add(task)
        task.add_done_callback(self._work.discard)


def _tab_name(url: str) -> str:
    return f"tab {json.dumps(url)}" if url and url != "about:blank" else "a new tab"


def _took_over_text(control: dict[str, Any], language: str | None = None) -> str:
    reason = control.get("reason")
    if reason == "agent_request":
        reason_given = control.get("message") or say("controls.no_reason", language)
        said = say("controls.agent_asks_takeover", language, reason=reason_given)
    elif reason == "implicit":
        said = say("controls.touched", language)
    else:
        said = say("controls.you_have_them", language)
    return f"{said}\n{say('controls.note_hint', language)}"
