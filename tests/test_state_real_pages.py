"""Browser state on real saved web pages that nobody on this project wrote.

Where they come from, first found wins (none found: skipped, with the reason):
- $TABPILOT_REAL_PAGES: a folder of saved .html pages;
- the installed pandas' test data (`pandas/tests/io/data/html/`, in pandas versions that ship it);
- HTML documentation installed on the machine (Debian's /usr/share/doc, the Rust book and std docs).
They are opened as file:// pages; resources they reference on the web fail to load, as offline."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest
from state_support import node_property

from tabpilot.browser.browser import Browser
from tabpilot.browser.state import get_state

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

MAX_PAGES = 4


def _pandas_pages() -> list[Path]:
    spec = importlib.util.find_spec("pandas")
    if spec is None or not spec.submodule_search_locations:
        return []
    folder = Path(next(iter(spec.submodule_search_locations))) / "tests" / "io" / "data" / "html"
    return sorted(folder.glob("*.html"))


def _installed_docs() -> list[Path]:
    found: list[Path] = []
    for pattern_root, pattern in [
        (Path("/usr/share/doc"), "*/html/index.html"),
        (Path("/usr/share/doc"), "*/*.html"),
        (Path.home() / ".rustup", "toolchains/*/share/doc/rust/html/std/index.html"),
        (Path.home() / ".rustup", "toolchains/*/share/doc/rust/html/book/ch01-01-installation.html"),
    ]:
        if pattern_root.is_dir():
            found += sorted(pattern_root.glob(pattern))[:2]
    return found


def real_pages() -> list[Path]:
    env = os.environ.get("TABPILOT_REAL_PAGES")
    for source in ([sorted(Path(env).glob("*.htm*"))] if env else []) + [_pandas_pages(), _installed_docs()]:
        pages = [p for p in source if p.is_file() and p.stat().st_size > 1000]
        if pages:
            return sorted(pages, key=lambda p: p.stat().st_size)[:MAX_PAGES]
    return []


PAGES = [page.resolve() for page in real_pages()]


@pytest.mark.skipif(not PAGES, reason="no real saved pages found (set TABPILOT_REAL_PAGES to a folder of .html)")
@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
async def test_state_on_a_real_page_is_sane(browser: Browser, page: Path) -> None:
    tab = await browser.new_tab()
    await tab.navigate(page.as_uri(), timeout=20)
    state = await get_state(browser, tab)
    body = state.text.splitlines()[3:-1]  # without the header and the edges
    assert sum(len(line) for line in body) > 200, state.text  # the page was read
    assert len(state.text) < 20_000  # one screenful, not the whole document
    document_text = await tab.evaluate("document.body.innerText")
    words = [w for w in state.text.split() if len(w) > 6 and w.isalpha()]
    assert words and sum(w in document_text for w in words) / len(words) > 0.9  # text comes from the page
    for ref in list(state.elements.values())[:10]:  # every index points at a live node of that page
        assert await node_property(ref, "this.isConnected") is True
    if len(state.elements) > 1:
        repeat = await get_state(browser, tab, state)
        assert list(repeat.elements) == list(state.elements) and "*[" not in repeat.text
    await browser.close_tab(tab.target_id)
