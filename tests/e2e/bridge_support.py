"""The page bridge's consent, for the end-to-end tests: a site is allowed or revoked with `tabpilot sites`
in a terminal, and the running browser has it once its worker registered (or dropped) the bridge."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from e2e_support import Harness, wait_until

from tabpilot.localfiles import LocalFiles


def origin_of(files: LocalFiles, host: str = "127.0.0.1") -> str:
    return f"http://{host}:{files.port}"


def sites_cli(harness: Harness, *args: str) -> str:
    result = subprocess.run([sys.executable, "-m", "tabpilot", "sites", *args], capture_output=True, text=True,
                            env={**os.environ, "TABPILOT_HOME": str(harness.tabpilot_home)}, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout


async def allow(harness: Harness, origin: str, *flags: str) -> None:
    """`tabpilot sites allow` in a terminal; the running browser has it once the worker registered it."""
    sites_cli(harness, "allow", origin, *flags)
    want = {"ask": "--ask" in flags, "useMyModel": "--use-my-model" in flags, "allTabs": "--all-tabs" in flags}
    await wait_until(lambda: harness.sw(
        f"await bridge.registering; const s = bridgeSiteOf({json.dumps(origin)}); const want = {json.dumps(want)};"
        " const scripts = await chrome.scripting.getRegisteredContentScripts();"
        " !!s && Object.keys(want).every(k => s[k] === want[k])"
        f" && scripts.some(c => c.matches.includes({json.dumps(origin + '/*')}))"
    ), f"the browser to register the bridge for {origin}", 20)


async def revoke(harness: Harness, origin: str) -> None:
    sites_cli(harness, "revoke", origin)
    await wait_until(lambda: harness.sw(
        f"await bridge.registering; !bridgeSiteOf({json.dumps(origin)})"
    ), f"the browser to drop {origin}", 20)
