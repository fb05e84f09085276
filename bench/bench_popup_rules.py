"""Does a popup's first request leave the user's browser while a task's domains are enforced? The extension's
declarativeNetRequest rules (extension/worker/guards.js) with and without the initiator rule: the page of a
task's tab calls window.open to a refused domain N times; the recording server counts what arrived. Also
prints what Chrome tells the user about the extension's permissions (chrome.management's warnings for the
manifest as it is, and with plain "declarativeNetRequest" instead of "declarativeNetRequestWithHostAccess").

    .venv/bin/python bench/bench_popup_rules.py [--runs 20]

Prints; asserts nothing. Needs Chromium and the test extension set-up (tests/e2e/e2e_support.py).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests" / "e2e"), str(ROOT / "tests")]

from e2e_support import EXTENSION_DIR, start_connected_harness  # noqa: E402
from guard_support import RESOLVER_RULES, RecordingSite  # noqa: E402

from tabpilot.browser.launcher import find_browser  # noqa: E402

# The rules without their initiator condition: only tabs.onCreated (openerTabId) puts a new tab under them.
WITHOUT_INITIATOR = """
globalThis.rulesWithInitiator ||= rulesOf;
rulesOf = (entry, firstId, context) => rulesWithInitiator(entry, firstId, { ...context, hosts: new Map() }); 1
"""
WITH_INITIATOR = "if (globalThis.rulesWithInitiator) rulesOf = rulesWithInitiator; 1"


async def popups_reaching(harness, site: RecordingSite, runs: int, variant: str) -> int:  # type: ignore[no-untyped-def]
    await harness.sw(variant)
    tab = await harness.browser.new_tab(site.url("shop.test", "guard_hostile.html"))
    tab_id = await harness.chrome_tab_id(tab)
    await harness.sw(f"await chrome.tabs.update({tab_id}, {{active: true}}); 1")
    rules = {"taskId": "bench", "tabIds": [tab_id], "allowedDomains": ["shop.test"], "blockedDomains": []}
    await harness.sw(f"await setGuardRules({json.dumps(rules)}); 1")
    before = len(site.reached("evil.test"))
    for _ in range(runs):
        await tab.send("Runtime.evaluate", {"expression": "document.getElementById('evil-popup').click()",
                                            "userGesture": True})
        await asyncio.sleep(0.7)
        for other in await harness.browser.tabs():
            if other.target_id != tab.target_id and "shop.test" not in other.url and other.url != "about:blank":
                await harness.browser.close_tab(other.target_id)
    await harness.sw("await clearGuardRule({taskId: 'bench'}); 1")
    await harness.browser.close_tab(tab.target_id)
    return len([hit for hit in site.reached("evil.test")[before:] if hit.path.startswith("/popup")])


async def warnings(harness, permission: str) -> list[str]:  # type: ignore[no-untyped-def]
    manifest = json.loads((EXTENSION_DIR / "manifest.json").read_text())
    manifest["permissions"] = [p for p in manifest["permissions"] if not p.startswith("declarativeNetRequest")]
    manifest["permissions"] += [permission] if permission else []
    for key in ("name", "description"):  # __MSG_…__ cannot be resolved outside the extension
        manifest[key] = "tabpilot"
    manifest.pop("default_locale", None)
    text = json.dumps(json.dumps(manifest))
    return list(await harness.sw(f"await chrome.management.getPermissionWarningsByManifest({text})"))


async def main(runs: int) -> None:
    site = RecordingSite()
    harness = await start_connected_harness(find_browser(), Path(tempfile.mkdtemp()), browser_args=[RESOLVER_RULES])
    try:
        for name, variant in (("tabs.onCreated only", WITHOUT_INITIATOR), ("with the initiator rule", WITH_INITIATOR)):
            reached = await popups_reaching(harness, site, runs, variant)
            print(f"{name:>26}: {reached} of {runs} popups' first requests reached the refused domain")
        for permission in ("", "declarativeNetRequestWithHostAccess", "declarativeNetRequest"):
            print(f"warnings with {permission or 'no declarativeNetRequest permission'}: "
                  f"{await warnings(harness, permission)}")
        without = json.loads((EXTENSION_DIR / "manifest.json").read_text())
        print(f"(the manifest's own permissions: {without['permissions']})")
    finally:
        await harness.browser.close()
        site.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    asyncio.run(main(parser.parse_args().runs))
