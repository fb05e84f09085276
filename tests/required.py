"""Parts the tests need from the machine: a browser, Xvfb, real saved pages. On CI (CI set, as .ci/run sets
it) a missing part is a broken set-up and the test fails; on a developer's machine it skips, saying what to
install."""

from __future__ import annotations

import os
from typing import NoReturn

import pytest

ON_CI = bool(os.environ.get("CI"))


def missing(reason: str) -> NoReturn:
    if ON_CI:
        pytest.fail(f"{reason} (CI installs it: see .ci/run)", pytrace=False)
    pytest.skip(reason)
