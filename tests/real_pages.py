"""Real saved web pages that nobody on this project wrote, for the state and action tests.

First found wins:
- $TABPILOT_REAL_PAGES: a folder of saved .html pages;
- the Python documentation as docs.python.org serves it, from Debian's python3.11-doc (`.ci/run`
  installs it): real Sphinx pages with navigation, sidebars, a search form, tables and long text;
- the installed pandas' saved pages (`pandas/tests/io/data/html/`, in versions that ship them);
- other HTML documentation under /usr/share/doc.
They are opened as file:// pages; resources they reference on the web fail to load, as offline."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

MAX_PAGES = 3
PYTHON_DOCS = [
    "library/json.html",
    "tutorial/controlflow.html",
    "glossary.html",
]


def _python_docs() -> list[Path]:
    for root in sorted(Path("/usr/share/doc").glob("python3*/html")):
        pages = [root / name for name in PYTHON_DOCS if (root / name).is_file()]
        if pages:
            return pages
    return []


def _pandas_pages() -> list[Path]:
    spec = importlib.util.find_spec("pandas")
    if spec is None or not spec.submodule_search_locations:
        return []
    folder = Path(next(iter(spec.submodule_search_locations))) / "tests" / "io" / "data" / "html"
    return sorted(folder.glob("*.html"))


def _other_docs() -> list[Path]:
    root = Path("/usr/share/doc")
    return sorted(root.glob("*/html/index.html"))[:2] + sorted(root.glob("*/*.html"))[:2] if root.is_dir() else []


def real_pages() -> list[Path]:
    env = os.environ.get("TABPILOT_REAL_PAGES")
    sources = ([sorted(Path(env).glob("*.htm*"))] if env else []) + [_python_docs(), _pandas_pages(), _other_docs()]
    for source in sources:
        unique = {p.resolve() for p in source if p.is_file() and p.stat().st_size > 1000}
        if unique:
            return sorted(unique, key=lambda p: p.stat().st_size)[:MAX_PAGES]
    return []


PAGES = real_pages()
MISSING_REASON = "no real saved pages found (set TABPILOT_REAL_PAGES to a folder of .html)"
