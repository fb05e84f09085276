"""Which suspended tasks a newly spawned host takes up: only those of the browser that spawned it, or of a
browser no longer running (their tabs are gone: the host ends them saying so). Another running browser's
task waits for that browser's next host (two browsers may share one tabpilot home)."""

from __future__ import annotations

import os

from tabpilot.native.tasks import TaskManager
from tabpilot.store.tasks import Orphan

NO_SUCH_PROCESS = 999999999


def orphan_of(browser_pid: int) -> Orphan:
    return Orphan("t1", "1", {"tabId": 1, "browser": browser_pid}, alive=False, suspended=True)


def test_a_host_takes_up_the_tasks_of_its_own_browser_and_of_a_browser_gone() -> None:
    assert TaskManager._of_this_browser(orphan_of(os.getppid()))  # the browser that spawned this process
    assert TaskManager._of_this_browser(orphan_of(NO_SUCH_PROCESS))


def test_a_host_leaves_another_running_browsers_tasks_alone() -> None:
    assert not TaskManager._of_this_browser(orphan_of(os.getpid()))  # a live process that is not our parent
