"""What a `TaskRun` tells its observers, in the order it happens.

`RunStarted` once, then any number of `RunStatus` / `RunEvent` / `RunActivity` / `RunControl`, then
`RunFinished` once. Events and activities are the page-agent wire JSON as recorded and shown: secrets scrubbed,
raw model I/O only with debug capture on. A final status comes only with `RunFinished`, sent once the
record says so and the tab is released (a new task on that tab can start at once)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

FinalStatus = Literal["completed", "error", "stopped"]
FINAL_STATUSES: tuple[FinalStatus, ...] = ("completed", "error", "stopped")


@dataclass(frozen=True)
class RunStarted:
    task_id: str
    task: str
    url: str | None


@dataclass(frozen=True)
class RunStatus:
    """A status on the way (`running`); the final one comes with `RunFinished`."""

    status: str


@dataclass(frozen=True)
class RunEvent:
    """One HistoricalEvent, appended to the history. `recorded` is False only when the store refused
    it: the run then fails with an error saying so (it is never dropped silently)."""

    event: dict[str, Any]
    recorded: bool = True


@dataclass(frozen=True)
class RunActivity:
    """What the agent is doing right now (AgentActivity wire JSON, `paused` / `resumed` included)."""

    activity: dict[str, Any]


@dataclass(frozen=True)
class RunControl:
    """Who has the controls and what the agent asks, whenever either changes: `control` is None while
    the agent works, else `{by: "user", reason, startedAt, message?}`; `question` the pending ask_user;
    `approval` the action that waits for the user's Allow / Deny / Take over."""

    control: dict[str, Any] | None
    question: str | None
    approval: dict[str, Any] | None = None  # an action waiting for the user's yes: PendingAction.to_wire()


@dataclass(frozen=True)
class RunFinished:
    status: FinalStatus
    result: dict[str, Any]  # ExecutionResult wire JSON: success, data, history (as recorded and shown)

    @property
    def success(self) -> bool:
        return bool(self.result.get("success"))

    @property
    def data(self) -> str:
        return str(self.result.get("data", ""))

    @property
    def gave_up(self) -> bool:
        """Ended "error" by the agent's own verdict (store.tasks.agent_gave_up): not done, not an error."""
        from ..store.tasks import agent_gave_up

        history = self.result.get("history") or [None]
        return agent_gave_up(self.status, history[-1])


RunUpdate = RunStarted | RunStatus | RunEvent | RunActivity | RunControl | RunFinished
