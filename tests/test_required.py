"""A part the browser tests need that is missing fails them on CI and skips them elsewhere (tests/required.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).parent


def _run_a_browser_test(ci: bool) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["TABPILOT_BROWSER"] = str(TESTS / "no-such-browser")
    if ci:
        env["CI"] = "true"
    return subprocess.run(
        # -n 0: the project's addopts would start two xdist workers for this one test
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0",
         f"{TESTS / 'test_actions.py'}::test_click_is_trusted_and_scrolls_far_button_into_view"],
        cwd=TESTS.parent, env=env, capture_output=True, text=True, timeout=120,
    )


@pytest.mark.parametrize(("ci", "outcome"), [(True, "1 error"), (False, "1 skipped")])
def test_a_missing_browser_fails_on_ci_and_skips_elsewhere(ci: bool, outcome: str) -> None:
    run = _run_a_browser_test(ci)
    assert outcome in run.stdout, run.stdout + run.stderr
    if ci:
        assert "no-such-browser" in run.stdout and "CI installs it" in run.stdout, run.stdout
