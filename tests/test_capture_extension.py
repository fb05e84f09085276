"""capture.js as an extension's content script (its other channel, issue 10): loaded in every frame by
a minimal test extension whose service worker answers `capture.hello` with the mode, collects what
`chrome.runtime.sendMessage` brings, and switches modes per frame with `chrome.tabs.sendMessage` (the
reply carries the actions flushed). The real extension's wiring (overlay, side panel, implicit
detection) is tested with it; this pins the script's half of the contract."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from takeover_support import Person

from tabpilot.browser.browser import Browser
from tabpilot.cdp import CDPConnection, WebSocketTransport
from tabpilot.installer import extension_dir
from tabpilot.taskrun.takeover import Takeover

pytestmark = [pytest.mark.browser, pytest.mark.asyncio]

PASSWORD = "s3cret-Pass-99"
CROSS_FRAME = "document.querySelector('#cross')"
SERVICE_WORKER = """
globalThis.received = [];
globalThis.mode = "watch";
globalThis.frames = {};  // tab id → frame ids that said hello
chrome.runtime.onMessage.addListener((message, sender, sendResponse) => {
  if (message.type === "capture.hello") {
    (frames[sender.tab.id] ||= new Set()).add(sender.frameId);
    sendResponse({ mode: globalThis.mode });
    return;
  }
  received.push({ ...message, frameId: sender.frameId });
});
globalThis.setMode = async (tabId, mode) => {
  globalThis.mode = mode;
  const flushed = [];
  for (const frameId of frames[tabId] || []) {
    const reply = await chrome.tabs.sendMessage(tabId, { type: "capture.mode", mode }, { frameId }).catch(() => null);
    if (reply) flushed.push(...reply.actions);
  }
  return flushed;
};
"""


def make_extension(folder: Path) -> Path:
    folder.mkdir()
    for script in ("names.js", "capture.js"):
        shutil.copy(extension_dir() / "content" / script, folder / script)
    (folder / "sw.js").write_text(SERVICE_WORKER)
    (folder / "manifest.json").write_text(json.dumps({
        "manifest_version": 3, "name": "capture test", "version": "1.0",
        "background": {"service_worker": "sw.js"},
        "permissions": ["tabs"], "host_permissions": ["<all_urls>"],
        "content_scripts": [{"matches": ["<all_urls>"], "js": ["names.js", "capture.js"], "all_frames": True,
                             "match_about_blank": True, "run_at": "document_start"}],
    }))
    return folder


class ServiceWorker:
    def __init__(self, connection: CDPConnection, session: Any) -> None:
        self.connection, self.session = connection, session

    @classmethod
    async def of(cls, ws_url: str) -> ServiceWorker:
        connection = CDPConnection(await WebSocketTransport.connect(ws_url))
        for _ in range(100):
            targets = (await connection.root.send("Target.getTargets"))["targetInfos"]
            workers = [t for t in targets if t["type"] == "service_worker"]
            if workers:
                break
            await asyncio.sleep(0.1)
        target = workers[0]["targetId"]
        reply = await connection.root.send("Target.attachToTarget", {"targetId": target, "flatten": True})
        return cls(connection, connection.session(reply["sessionId"]))

    async def js(self, expression: str) -> Any:
        reply = await self.session.send("Runtime.evaluate",
                                        {"expression": expression, "awaitPromise": True, "returnByValue": True})
        assert "exceptionDetails" not in reply, reply
        return reply["result"].get("value")


CLICK_SEEN = "received.some(m => m.type === 'capture.input' && m.events.some(e => e.kind === 'click'))"


async def open_form(pages: Any, tmp_path: Path) -> tuple[Browser, Any, ServiceWorker, int]:
    """A browser with the test extension, the form in a tab whose frames all said hello (were told "watch")."""
    browser = await Browser.launch(headless=True, extension_dir=make_extension(tmp_path / "ext"),
                                   env={"HOME": str(tmp_path)})
    try:
        tab = await browser.new_tab(pages.url("takeover_form.html"))
        worker = await ServiceWorker.of(browser.launched.ws_url)
        tab_id = await worker.js(
            "chrome.tabs.query({}).then(tabs => tabs.find(t => t.url.includes('takeover_form')).id)")
        # the page and both frames said hello (the cross-site one too) and were told "watch"
        await wait_for_js(worker, f"(frames[{tab_id}] || new Set()).size >= 3")
    except BaseException:
        await browser.close()
        raise
    return browser, tab, worker, tab_id


async def test_capture_js_as_a_content_script_reports_through_chrome_runtime(pages, tmp_path: Path) -> None:
    browser, tab, worker, tab_id = await open_form(pages, tmp_path)
    try:
        person = await Person.at(browser.launched.ws_url, tab.target_id)
        await person.click("document.querySelector('#docs')")
        await wait_for_js(worker, CLICK_SEEN)
        assert await worker.js("received.every(m => m.type === 'capture.input')")

        assert await worker.js(f"setMode({tab_id}, 'record')") == []
        await worker.js("received.length = 0")
        await person.click("document.querySelector('#email')")
        await person.type("ada@example.org")
        await person.click("document.querySelector('#password')")
        await person.type(PASSWORD)
        await tab.track_frames()
        [cross] = [frame for frame in tab.frames.values() if "takeover_frame" in frame.url]
        await person.click_in_frame(cross.session, CROSS_FRAME, "document.querySelector('#city')")
        await person.type("Lyon")
        flushed = await worker.js(f"setMode({tab_id}, 'watch')")  # "Lyon" was still being typed
        sent = await worker.js("received")
        # as the host keeps them: a field reported while typed in, then again, is one action
        kept = Takeover(reason="user", started_at=1)
        kept.add([m["action"] for m in sent if m["type"] == "capture.action"] + flushed)
        actions = kept.actions
        assert [(a["kind"], a["target"], a.get("value")) for a in actions] == [
            ("input", 'textbox "Email"', "ada@example.org"),
            ("input", 'textbox "Password"', "•••"),
            ("input", 'textbox "City"', "Lyon"),
        ]
        assert "localhost" in actions[2]["url"] or "127.0.0.1" in actions[2]["url"]
        assert PASSWORD not in json.dumps(sent) + json.dumps(flushed)
        await person.close()
    finally:
        await browser.close()


async def wait_for_js(worker: ServiceWorker, expression: str) -> None:
    for _ in range(100):
        if await worker.js(expression):
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"never true: {expression}")


async def test_input_held_for_a_moment_reaches_the_worker_when_the_tab_closes(pages, tmp_path: Path) -> None:
    """In "watch" the first input event goes at once and those right after it are held a moment to go
    together: the tab closing meanwhile sends them rather than losing what the person did."""
    browser, tab, worker, _ = await open_form(pages, tmp_path)
    try:
        person = await Person.at(browser.launched.ws_url, tab.target_id)
        await person.click("document.querySelector('#email')")
        await wait_for_js(worker, CLICK_SEEN)
        await asyncio.sleep(0.5)  # nothing held any more
        await worker.js("received.length = 0")
        await person.type("ada")
        await person.close()
        await browser.close_tab(tab.target_id)

        await wait_for_js(worker, "received.length >= 2")  # the keys held when it closed came after
        first = await worker.js("received[0].events")
        assert [e["kind"] for e in first] == ["keydown"], first  # the first key at once, alone
    finally:
        await browser.close()
