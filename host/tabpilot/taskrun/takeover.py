"""The user at the controls of a run: one takeover from Take over (or the agent's request) to Hand back.

The host owns this state (a closed popup, a reloaded page or a restarted extension service worker lose
nothing already sent): why and when it began, the URL then, and the semantic actions capture.js
recorded meanwhile (`{kind, target, value?, url, at}`; values of password / one-time-code / card
fields arrive already hidden as "•••"). Hand back turns it into one `user_takeover` event; until then the record
keeps `unfinished()`, the event as it would be now, so a host that dies meanwhile loses none of it."""

from __future__ import annotations

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
                "urlBefore": self.url_before, "actions": list(self.actions), "dropped": self.dropped}

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
        )

    def add(self, actions: list[dict[str, Any]]) -> None:
        """Append in order. A field typed in again right after its last report (capture.js reports a field within
        0.2 s of a key while the person types on, and again when they are done with it, marked `again`) stays one
        action, with its latest value; two fields named alike (each cart row's "Quantity") are two."""
        for reported in actions:
            action = {key: value for key, value in reported.items() if key != "again"}
            last = self.actions[-1] if self.actions else None
            if self._told_already(action):
                continue
            if (reported.get("again") and last is not None and action.get("kind") == "input"
                    and last.get("kind") == "input"):
                self.actions[-1] = action
            elif len(self.actions) < MAX_ACTIONS:
                self.actions.append(action)
            else:
                self.dropped += 1

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
            actions.append({"kind": "note", "description": f"(and {self.dropped} more actions, not kept)"})
        return UserTakeoverEvent(
            reason=self.reason,
            started_at=self.started_at,
            ended_at=ended_at if ended_at is not None else now_ms(),
            url_before=self.url_before,
            url_after=url_after,
            actions=actions,
            note=(note or "").strip() or None,
        )
