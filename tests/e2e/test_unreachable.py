"""No page can tell tabpilot is installed by loading one of its files (fingerprinting). A resource the manifest makes
web-accessible answers any page that names it at chrome-extension://<id>/ — and the id is the same in every browser
(the manifest's key) — so one such file told every site "tabpilot is here". The README says a site sees nothing until
the person allows it. Here a page's own scripts try every file of the extension, as a fetch, an image, a script, a
style sheet and a frame, with the extension's fixed id: each answers exactly as the same path of an extension that is
not installed does (an error), in a page where no task runs and in the very tab a task runs in with its overlay shown
(the overlay's panel is framed by no address of the extension); and the overlay still works there."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from e2e_support import EXTENSION_DIR, EXTENSION_ORIGIN, Harness, wait_until
from test_takeover import configure, ended, start
from user_support import in_panel, press_overlay, screenshot, wait_overlay

from tabpilot.browser.tab import Tab
from tabpilot.llm.scripted import Delay, ScriptedLLMServer
from tabpilot.localfiles import LocalFiles

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]

PANEL_CORNER = "function () { return getComputedStyle(this.querySelector('.panel')).borderRadius; }"  # panel.css
NOT_INSTALLED = "chrome-extension://" + "a" * 32  # an id no extension in this browser has

# Each URL tried every way a page can load something; what happened to each, as the page can tell it.
PROBE = """async (urls) => {
  const settle = (make) => new Promise((done) => {
    const el = make();
    const late = setTimeout(() => done('no answer'), 5000);
    el.onload = () => { clearTimeout(late); done('loaded'); };
    el.onerror = () => { clearTimeout(late); done('error'); };
  });
  const out = {};
  await Promise.all(urls.map(async (url) => {
    const fetched = await fetch(url).then((r) => `answered ${r.status}`, () => 'error');
    const image = await settle(() => { const e = new Image(); e.src = url; return e; });
    const script = await settle(() => {
      const e = document.createElement('script'); e.src = url; document.head.append(e); return e; });
    const style = await settle(() => {
      const e = document.createElement('link');
      e.rel = 'stylesheet'; e.href = url; document.head.append(e); return e; });
    const frame = document.createElement('iframe');
    frame.src = url;
    frame.className = 'probe';
    document.body.append(frame);
    out[url] = {fetched, image, script, style};
  }));
  return out;
}"""


def every_file() -> list[str]:
    """Every file of the extension, as a path under its origin (and the origin itself)."""
    return ["", *sorted(str(p.relative_to(EXTENSION_DIR)) for p in EXTENSION_DIR.rglob("*") if p.is_file())]


async def probe(tab: Tab, origin: str) -> dict[str, Any]:
    urls = [f"{origin}/{path}" for path in every_file()]
    found = await tab.evaluate(f"({PROBE})({urls!r})", timeout=60)
    return {url[len(origin):]: what for url, what in found.items()}


async def framed_extension_documents(harness: Harness, tab: Tab) -> list[str]:
    """The documents of the extension in `tab`'s frames: out-of-process frames (targets), and in-process ones."""
    root = harness.browser.connection.root
    found = [info["url"] for info in (await root.send("Target.getTargets"))["targetInfos"]
             if info["type"] in ("iframe", "page") and info["url"].startswith(EXTENSION_ORIGIN)]
    tree = (await tab.send("Page.getFrameTree"))["frameTree"]
    stack = list(tree.get("childFrames", []))
    while stack:
        node = stack.pop()
        if node["frame"]["url"].startswith(EXTENSION_ORIGIN):
            found.append(node["frame"]["url"])
        stack.extend(node.get("childFrames", []))
    return found


async def assert_nothing_reachable(harness: Harness, tab: Tab) -> None:
    ours = await probe(tab, EXTENSION_ORIGIN)
    absent = await probe(tab, NOT_INSTALLED)
    assert len(ours) > 30, ours  # every file was tried (the manifest, the popup, the overlay's files, the icons, …)
    differs = {path: (what, absent[path]) for path, what in ours.items() if what != absent[path]}
    assert not differs, f"a page tells tabpilot is installed by these files: {differs}"
    reached = {path: what for path, what in ours.items()
               if what != {"fetched": "error", "image": "error", "script": "error", "style": "error"}}
    assert not reached, reached
    await asyncio.sleep(1)  # the frames' navigations: refused, each shows an error page of the browser's
    assert await tab.evaluate("document.querySelectorAll('iframe.probe').length") == 2 * len(ours)
    assert await framed_extension_documents(harness, tab) == []


async def test_a_page_where_no_task_runs_cannot_load_any_file_of_the_extension(
    harness: Harness, e2e_pages: LocalFiles
) -> None:
    tab = await harness.browser.new_tab(e2e_pages.url("form.html"))
    try:
        await assert_nothing_reachable(harness, tab)
    finally:
        await harness.browser.close_tab(tab.target_id)


async def test_the_task_tab_with_its_overlay_cannot_load_any_file_either_and_the_overlay_works(
    harness: Harness, llm: ScriptedLLMServer, e2e_pages: LocalFiles
) -> None:
    created = await harness.browser.connection.root.send(
        "Target.createTarget", {"url": e2e_pages.url("account.html"), "newWindow": True})
    tab = await harness.browser.attach(created["targetId"])
    try:
        await tab.send("Emulation.setDeviceMetricsOverride",
                       {"width": 1000, "height": 700, "deviceScaleFactor": 1, "mobile": False})
        await wait_until(lambda: tab.evaluate("document.readyState === 'complete'"), "the page to load")
        llm.add(Delay(60))
        await configure(harness, llm)
        task_id = await start(harness, tab, "Keep thinking")
        await wait_overlay(tab, "the overlay", lambda o: o["state"] == "running" and "stop" in o["buttons"])
        await assert_nothing_reachable(harness, tab)
        await screenshot(tab, "unreachable-task-tab.png")
        await press_overlay(tab, "stop")  # the overlay's panel, framed by no address of the extension, works
        assert (await ended(harness, task_id))["status"] == "stopped"
    finally:
        await harness.browser.close_tab(tab.target_id)


async def test_the_overlay_works_on_a_page_with_the_strictest_content_security_policy(
    harness: Harness, llm: ScriptedLLMServer, e2e_pages: LocalFiles
) -> None:
    """The panel's frame is a srcdoc document, which takes its page's Content-Security-Policy: on a page allowing no
    script, style or frame of anyone's, with Trusted Types enforced, the overlay is still made, drawn (its styles go in
    as the extension's, not the page's) and pressed."""
    tab = await harness.browser.new_tab(e2e_pages.url("strict_csp.html"))
    try:
        await wait_until(lambda: tab.evaluate("document.readyState === 'complete'"), "the page to load")
        llm.add(Delay(60))
        await configure(harness, llm)
        task_id = await start(harness, tab, "Keep thinking")
        await wait_overlay(tab, "the overlay", lambda o: o["state"] == "running" and "stop" in o["buttons"])
        styled = await in_panel(tab, PANEL_CORNER)
        assert styled == "12px", styled  # panel.css is in
        await press_overlay(tab, "stop")
        assert (await ended(harness, task_id))["status"] == "stopped"
    finally:
        await harness.browser.close_tab(tab.target_id)
