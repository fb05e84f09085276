"""The page bridge's extension files agree with the rest: the version the main world announces is the
manifest's, the service worker loads the bridge's worker file, and the files the worker registers exist.
Browser-free (the end-to-end proof is tests/e2e/test_page_bridge.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

EXTENSION = Path(__file__).resolve().parents[1] / "extension"


def test_the_page_is_told_the_manifests_version() -> None:
    manifest = json.loads((EXTENSION / "manifest.json").read_text())
    main_world = (EXTENSION / "bridge" / "main_world.js").read_text()
    assert re.search(r'const VERSION = "([^"]+)"', main_world).group(1) == manifest["version"]  # type: ignore[union-attr]


def test_the_worker_loads_the_bridge_and_registers_files_that_exist() -> None:
    worker = (EXTENSION / "service_worker.js").read_text()
    assert 'importScripts("bridge/worker.js")' in worker
    lists = re.findall(r'js: \[([^\]]+)\]', (EXTENSION / "bridge" / "worker.js").read_text())
    registered = [name for names in lists for name in re.findall(r'"([^"]+)"', names)]
    assert sorted(registered) == ["bridge/main_world.js", "bridge/relay.js", "bridge/token_probe.js",
                                  "lib/page_text.js", "lib/seen.js", "lib/task_text.js"]
    assert all((EXTENSION / name).is_file() for name in registered)
