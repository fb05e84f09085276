"""Fixtures of the end-to-end tests: the e2e fixture pages, and one browser with the extension and the
installed native host per test module (see e2e_support.py). A failing test gets the browser's and the
host's logs attached to its report."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
import pytest_asyncio
from e2e_support import E2E_PAGES, Harness, start_connected_harness

from tabpilot.browser.tab import Tab
from tabpilot.llm.scripted import ScriptedLLMServer
from tabpilot.localfiles import LocalFiles


@pytest.fixture(scope="session")
def e2e_pages() -> Iterator[LocalFiles]:
    with LocalFiles(E2E_PAGES) as server:
        yield server


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def harness(browser_binary: str, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Harness]:
    """One browser with the extension and the installed host per test module, host connected."""
    h = await start_connected_harness(browser_binary, tmp_path_factory.mktemp("e2e"))
    yield h
    await h.browser.close()


@pytest.fixture
def llm() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer([]) as server:
        yield server


@pytest_asyncio.fixture(loop_scope="module")
async def form_tab(harness: Harness, e2e_pages: LocalFiles) -> AsyncIterator[Tab]:
    tab = await harness.browser.new_tab(e2e_pages.url("form.html"))
    yield tab
    if not tab.closed:
        await harness.browser.close_tab(tab.target_id)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    if report.failed:
        for value in getattr(item, "funcargs", {}).values():
            if isinstance(value, Harness):
                report.sections.append(("browser and host logs", value.logs()))
    return report
