"""The user at the controls of a run: one takeover from Take over (or the agent's request) to Hand back.

The host owns this state (a closed popup, a reloaded page or a restarted extension service worker lose
nothing already sent): why and when it began, the URL then, and the semantic actions capture.js
recorded meanwhile (`{kind, target, value?, url, at}`; values of password / one-time-code / card
fields arrive already hidden as "•••"). Hand back turns it into one `user_takeover` event; until then the record
keeps `unfinished()`, the event as it would be now, so a host that dies meanwhile loses none of it."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from ..agent.types import UserTakeoverEvent

Reason = Literal["user", "implicit", "agent_request"]
MAX_ACTIONS = 2000  # a takeover longer than this keeps its first actions and counts the rest
CUT_SHORT = "(tabpilot stopped before the user handed back: what they did after this is not known)"
ACTION_KINDS = ("click", "input", "select", "check", "submit", "key", "navigate", "scroll", "tab")
# navigate targets (capture.js): told by the document left, with who started it; told by the document arrived at
DEPARTURES = ("page", "script")
ARRIVALS = ("loaded", "reload")
ARRIVAL_LOOKBACK = 5  # actions flushed as the document went (a field typed in) may come between the two words
# A batch the extension sends again (its host went before answering, it may have kept it) is told again: an action
# the same as one of the last this many, to the millisecond of its time, is that one
RESENT_LOOKBACK = 50
DROPPED = "(and {} more actions, not kept)"
PAGE_SILENT = "(the page did not answer when the controls came back: what the user did in it last may be missing)"
ANSWERED_LATE = "(the page answered late when the controls came back: what the user did in it last is recorded above)"
_DROPPED = re.compile(re.escape(DROPPED).replace(r"\{\}", r"(\d+)"))


def now_ms() -> int:
    return int(time.time() * 1000)


@dataclass
class Takeover:
    reason: Reason
    started_at: int
    message: str | None = None  # the agent's reason, for `agent_request`
    url_before: str | None = None
    actions: list[dict[str, Any]] = field(default_factory=list)
    dropped: int = 0
    page_silent: bool = False  # the page did not give what it still held at the end (run.page_silent)
    answered_late: bool = False  # ... and gave it later (`with_late_answer`)
    departed: bool = field(default=False, repr=False)  # the last navigate told is a departure no arrival matched yet

    def control(self) -> dict[str, Any]:
        """The `control` of the task snapshot and of `task.control`."""
        control: dict[str, Any] = {"by": "user", "reason": self.reason, "startedAt": self.started_at}
        if self.message:
            control["message"] = self.message
        return control

    def state(self) -> dict[str, Any]:
        """What the record keeps of a takeover under way, so a host started after this one goes on with it."""
        return {"reason": self.reason, "startedAt": self.started_at, "message": self.message,
                "urlBefore": self.url_before, "actions": list(self.actions), "dropped": self.dropped,
                "pageSilent": self.page_silent}

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> Takeover:
        reason = state.get("reason")
        return cls(
            reason=reason if reason in ("user", "implicit", "agent_request") else "user",
            started_at=int(state.get("startedAt") or now_ms()),
            message=state.get("message"),
            url_before=state.get("urlBefore"),
            actions=[a for a in state.get("actions") or [] if isinstance(a, dict)],
            dropped=int(state.get("dropped") or 0),
            page_silent=bool(state.get("pageSilent")),
        )

    @classmethod
    def cut_short(cls, event: dict[str, Any]) -> Takeover | None:
        """The takeover a recorded event cut short (`unfinished()`: its host died before Hand back) was made from,
        to add what the person did that the dead host never got; None for any other event."""
        actions = event.get("actions")
        if (event.get("type") != "user_takeover" or event.get("endedAt") is not None or not isinstance(actions, list)
                or not actions or actions[-1] != {"kind": "note", "description": CUT_SHORT}):
            return None
        return cls._recorded(event, actions[:-1])

    @classmethod
    def handed_back(cls, event: dict[str, Any]) -> Takeover | None:
        """The takeover a recorded event that ended (Hand back, Stop) was made from; None for any other event."""
        actions = event.get("actions")
        if event.get("type") != "user_takeover" or event.get("endedAt") is None or not isinstance(actions, list):
            return None
        return cls._recorded(event, actions)

    @classmethod
    def _recorded(cls, event: dict[str, Any], actions: list[Any]) -> Takeover:
        """From a recorded event whose `actions` end in the notes `event()` writes after the person's."""
        theirs, dropped, page_silent, answered_late = list(actions), 0, False, False
        if theirs and theirs[-1] in (_note(PAGE_SILENT), _note(ANSWERED_LATE)):
            page_silent, answered_late = theirs[-1] == _note(PAGE_SILENT), theirs[-1] == _note(ANSWERED_LATE)
            theirs = theirs[:-1]
        last = theirs[-1] if theirs else None
        counted = _DROPPED.fullmatch(str(last.get("description"))) if isinstance(last, dict) else None
        if counted and last is not None and last.get("kind") == "note":
            theirs, dropped = theirs[:-1], int(counted[1])
        takeover = cls.from_state({**event, "actions": theirs, "dropped": dropped, "pageSilent": page_silent})
        takeover.answered_late = answered_late
        return takeover

    def add(self, actions: list[dict[str, Any]]) -> None:
        """In the order the person did them (`at`), not the order they arrived in: each frame of a page reports on
        its own, a field it was typed in up to 0.2 s after the key, so typing in a cross-site frame then clicking in
        the page arrived as the click first. A field typed in again right after its last report (capture.js reports
        a field within 0.2 s of a key while the person types on, and again when they are done with it, marked
        `again`) stays one action, with its latest value, unless something else was done in between; two fields
        named alike (each cart row's "Quantity") are two. An action sent again (a batch its host went before
        answering) is kept once."""
        for reported in actions:
            action = {key: value for key, value in reported.items() if key != "again"}
            if self._resent(action) or self._told_already(action):
                continue
            place = self._place(action.get("at"))
            before = self.actions[place - 1] if place else None
            if (reported.get("again") and before is not None and action.get("kind") == "input"
                    and before.get("kind") == "input" and before.get("target") == action.get("target")):
                self.actions[place - 1] = action
            elif len(self.actions) < MAX_ACTIONS:
                self.actions.insert(place, action)
            else:
                self.dropped += 1

    def _place(self, at: Any) -> int:
        """Where an action done at `at` goes: after every action done before it or at the same moment."""
        place = len(self.actions)
        if not isinstance(at, int | float):
            return place
        while place and _done_at(self.actions[place - 1]) > at:
            place -= 1
        return place

    def _resent(self, action: dict[str, Any]) -> bool:
        return action in self.actions[-RESENT_LOOKBACK:]

    def _told_already(self, action: dict[str, Any]) -> bool:
        """A new document's word that the tab loaded it ("loaded", "reload") after the document before told the same
        navigation, with who started it (capture.js: "page" the person, "script" the page's own script): one
        navigation, told once, by the side that knows whose it was. Another address (a server's redirect) stays."""
        if action.get("kind") != "navigate":
            return False
        departed, self.departed = self.departed, action.get("target") in DEPARTURES
        if action.get("target") not in ARRIVALS or not departed:
            return False
        for before in reversed(self.actions[-ARRIVAL_LOOKBACK:]):
            if before.get("kind") == "navigate":
                return before.get("target") in DEPARTURES and before.get("value") == action.get("value")
        return False

    def unfinished(self) -> UserTakeoverEvent:
        """The event this takeover becomes if it never ends in Hand back (its host dies first): what the person did
        so far, the page where their last action was, and a line saying the rest is not known. When it ended is not
        known either (`endedAt` is left out: no duration is claimed)."""
        last = self.actions[-1] if self.actions else {}
        event = self.event(url_after=last.get("url") or self.url_before, note=None)
        event.ended_at = None
        event.actions.append({"kind": "note", "description": CUT_SHORT})
        return event

    def event(self, *, url_after: str | None, note: str | None, ended_at: int | None = None) -> UserTakeoverEvent:
        from ..agent.types import UserTakeoverEvent

        actions = list(self.actions)
        if self.dropped:
            actions.append({"kind": "note", "description": DROPPED.format(self.dropped)})
        if self.page_silent:
            actions.append(_note(PAGE_SILENT))
        elif self.answered_late:
            actions.append(_note(ANSWERED_LATE))
        return UserTakeoverEvent(
            reason=self.reason,
            started_at=self.started_at,
            ended_at=ended_at if ended_at is not None else now_ms(),
            url_before=self.url_before,
            url_after=url_after,
            actions=actions,
            note=(note or "").strip() or None,
        )


def _done_at(action: dict[str, Any]) -> float:
    at = action.get("at")
    return at if isinstance(at, int | float) else float("-inf")


def _note(description: str) -> dict[str, str]:
    return {"kind": "note", "description": description}


def with_late_actions(event: dict[str, Any], actions: list[dict[str, Any]]) -> dict[str, Any] | None:
    """A recorded takeover its host's death cut short (`unfinished()`), with `actions` added: what the person did
    that the dead host never got (the extension's last batch, what they did while no host ran), as that host would
    have added them, before the note that it was cut short. None when `event` is no takeover cut short (handed back:
    nothing can be added to it)."""
    takeover = Takeover.cut_short(event)
    if takeover is None:
        return None
    takeover.add(actions)
    wire = takeover.unfinished().to_wire()
    return {**event, "urlAfter": wire.get("urlAfter"), "actions": wire["actions"]}


def with_late_answer(event: dict[str, Any], actions: list[dict[str, Any]], *,
                     still_silent: bool) -> dict[str, Any] | None:
    """A recorded takeover that ended waiting for the page (`event`: a frame of the page did not answer in time when
    the controls came back, `page_silent`, or answered late already and gives this again) with `actions` added: what
    that frame gave afterwards, as they would have been added in time. Its note that the last of it may be missing
    says instead that the page answered late, unless a frame is `still_silent`. None when `event` is no such
    takeover."""
    takeover = Takeover.handed_back(event)
    if takeover is None or not (takeover.page_silent or takeover.answered_late):
        return None
    takeover.add(actions)
    takeover.page_silent, takeover.answered_late = still_silent, not still_silent
    wire = takeover.event(url_after=event.get("urlAfter"), note=event.get("note"), ended_at=event["endedAt"]).to_wire()
    return {**event, "actions": wire["actions"]}


def waits_for_page(event: dict[str, Any]) -> bool:
    """Whether `event` is a recorded takeover that ended waiting for its page (a frame of it did not answer in time
    when the controls came back): what the page gives late amends it (`task.amended`)."""
    takeover = Takeover.handed_back(event)
    return takeover is not None and takeover.page_silent


def replace_takeover(history: list[dict[str, Any]], event: dict[str, Any]) -> None:
    """`event` in place of the takeover in `history` it amends: the last one begun when it began."""
    for index in range(len(history) - 1, -1, -1):
        if history[index].get("type") == "user_takeover" and history[index].get("startedAt") == event.get("startedAt"):
            history[index] = event
            return
