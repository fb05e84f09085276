"""The order the test files start in: the slowest first.

Each xdist worker takes whole files (`--dist loadfile`: a module's tests share its browser and host) and asks for the
next one as it runs out. xdist's own order is by the number of tests in a file, which is not their time: files of a
few long tests (test_wheel_install's 4, which build and install a wheel; the one-test e2e files) started last, and
the run waits for the worker still in one. Slowest first, what is left at the end is short files, which the two
workers share out evenly (pyproject.toml's `--no-loadscope-reorder` keeps this order). Replaying one measured run
through xdist's scheduling: the two workers ended 62 s apart in its order and 7 s apart in this one (of ~3700 s each,
on a loaded core: ~4x CI's figures).

SLOWEST_FIRST: seconds per file from `-n 0 --durations=0` runs pinned to one shared core (a file's tests' set-up,
call and tear-down summed); the files not listed (each under ~80 s there) follow in their usual order, e2e ones
first. Measure again when a file grows by a minute; a stale list only costs time, never a result."""

from __future__ import annotations

import pytest

SLOWEST_FIRST = (  # seconds, measured as above on a shared core under load (~4x CI's figures), 30 Nov 2026
    # (*: scaled by the file's before/after in one A/B run when its `tabpilot` calls moved into the test process)
    "tests/e2e/test_takeover.py",  # 366
    "tests/e2e/test_mcp.py",  # 331
    "tests/e2e/test_popup_ui.py",  # 316
    "tests/test_mcp_command.py",  # 296
    "tests/e2e/test_popup_task.py",  # 291
    "tests/test_run_cli.py",  # 266*
    "tests/e2e/test_overlay_press.py",  # 225
    "tests/test_guards_approval_cli.py",  # 181*
    "tests/e2e/test_page_bridge.py",  # 173
    "tests/test_state_classes.py",  # ~170, 1 Dec: 79 s on a quiet core, 30 s of it one find_text deadline waited out
    "tests/test_privacy_task.py",  # 164*
    "tests/test_cli_output.py",  # 160
    "tests/e2e/test_relay_browser.py",  # 142
    "tests/test_state_command.py",  # 106
    "tests/test_agent_loop.py",  # 102
    "tests/test_native_host.py",  # 96
    "tests/test_page_permissions.py",  # 94
    "tests/e2e/test_wheel_install.py",  # 90: 4 tests, so xdist's own order started it last
    "tests/test_native_masks.py",  # 89
    "tests/test_capture.py",  # 86
    "tests/test_state_first_look.py",  # 85
    "tests/test_cli_addresses.py",  # 84*
    "tests/test_sites.py",  # 84
    "tests/e2e/test_several_tasks.py",  # 84
    "tests/test_native_relay.py",  # 83
    "tests/test_run_errors_language.py",  # 82
)


def slowest_files_first(items: list[pytest.Item]) -> None:
    """Reorder `items` so the listed files come first, in the list's order, each file's tests in their own order."""
    rank = {path: place for place, path in enumerate(SLOWEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(SLOWEST_FIRST)))
