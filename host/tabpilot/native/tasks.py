"""Placeholder until the agent lands."""
from __future__ import annotations

from typing import Any


class TaskManager:
    def __init__(self, host: Any) -> None:
        self.host = host
        self.current_task_id = None
    def snapshot(self): return None
    async def start(self, request): raise NotImplementedError
    async def stop(self): return None
    async def shutdown(self): return None
