"""End-to-end harness (used by conftest.py and the e2e tests): real headless Chromium with the real
extension loaded and the real native host, installed into the test profile with
`tabpilot install --user-data-dir` and spawned by Chromium itself.

Readiness chain (each step bounded): DevTools endpoint → the extension's service-worker target → the
host's hello (the worker's `host.connected`). The popup is driven as a tab (`popup.html?tabId=N`).
A failing test gets the browser's log and the host's logs attached to its report."""

from __future__ import annotations

import asyncio
import base64
import inspect
import json
import os
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from required import missing

from tabpilot.browser.browser import Browser
from tabpilot.browser.tab import Tab, js_string
from tabpilot.cdp import CDPError, CDPSession
from tabpilot.llm.scripted import ScriptedLLMServer, Text, ToolCall

ROOT = Path(__file__).resolve().parents[2]
EXTENSION_DIR = ROOT / "extension"
E2E_PAGES = Path(__file__).parent / "pages"
READY_TIMEOUT = 20.0


def extension_id(manifest_path: Path = EXTENSION_DIR / "manifest.json") -> str:
    """The id Chromium derives from the manifest key: sha256(DER public key), 32 hex digits → a-p."""
    import hashlib

    key = json.loads(manifest_path.read_text())["key"]
    digest = hashlib.sha256(base64.b64decode(key)).hexdigest()[:32]
    return "".join(chr(ord("a") + int(c, 16)) for c in digest)


EXTENSION_ID = extension_id()
EXTENSION_ORIGIN = f"chrome-extension://{EXTENSION_ID}"
# popup.js shows its task view before the popup's other scripts have run: a click on Settings in between
# reached no Safety section loader (a timed-out wait for the Safety section, once in about 25 runs)
POPUP_READY = "document.body.dataset.view === 'task' && document.readyState === 'complete'"
# A tab made by Target.createTarget with a URL is on about:blank, complete, until that page commits: under load
# a test went on with the blank page (no #name for the agent to type in)
PAGE_LOADED = "location.href !== 'about:blank' && document.readyState === 'complete'"


async def wait_until(probe: Any, what: str, timeout: float = READY_TIMEOUT, interval: float = 0.05) -> Any:
    """Poll a probe (async or not) until it returns something truthy; fail naming what never happened."""
    deadline = time.monotonic() + timeout
    last_error: Exception | None = None
    while True:
        try:
            value = probe()
            if inspect.isawaitable(value):
                value = await value
            if value:
                return value
        except Exception as exc:  # a probe may fail while things start up
            last_error = exc
        if time.monotonic() > deadline:
            detail = f" (last error: {last_error})" if last_error else ""
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}{detail}")
        await asyncio.sleep(interval)


# --- fixture pages of this folder ------------------------------------------------------------------------
# --- the popup, driven as a tab ------------------------------------------------------------------------------
class PopupPage:
    def __init__(self, tab: Tab) -> None:
        self.tab = tab

    async def js(self, expression: str) -> Any:
        return await self.tab.evaluate(expression, timeout=10)

    async def click(self, selector: str) -> None:
        found = await self.js(
            f"(() => {{ const el = document.querySelector({js_string(selector)});"
            " if (!el) return false; el.click(); return true; })()"
        )
        assert found, f"no {selector} in the popup"

    async def fill(self, selector: str, value: str) -> None:
        found = await self.js(
            f"(() => {{ const el = document.querySelector({js_string(selector)}); if (!el) return false;"
            f" el.value = {js_string(value)}; el.dispatchEvent(new Event('input', {{bubbles: true}}));"
            " return true; })()"
        )
        assert found, f"no {selector} in the popup"

    async def text(self, selector: str) -> str:
        return str(
            await self.js(f"document.querySelector({js_string(selector)})?.textContent ?? ''")
        ).strip()

    async def visible(self, selector: str) -> bool:
        return bool(
            await self.js(
                f"(() => {{ const el = document.querySelector({js_string(selector)});"
                " return !!el && !el.closest('[hidden]'); })()"
            )
        )

    async def open_past(self, task_id: str) -> None:
        """Past tasks → the task `task_id` → its detail."""
        item = f"#past-list .past-item[data-task-id='{task_id}']"
        await self.click("#nav-past")
        await self.wait_for(f"!!document.querySelector({js_string(item)})", "the past task in the list")
        await self.click(item)
        await self.wait_for("!document.getElementById('past-detail').hidden", "the past task's detail")

    async def cards(self, timeline: str = "#timeline") -> list[dict[str, str]]:
        """The timeline as the user sees it: one dict per shown card (its type and visible text)."""
        return await self.js(
            f"[...document.querySelectorAll({js_string(timeline + ' .card')})].filter(c => !c.hidden)"
            ".map(c => ({type: c.dataset.type, text: c.innerText}))"
        )

    async def in_view(self, selector: str) -> bool:
        """Whether the element is shown and wholly inside the popup's viewport (not scrolled away)."""
        return bool(await self.js(
            f"(() => {{ const el = document.querySelector({js_string(selector)});"
            " if (!el || el.closest('[hidden]')) return false; const r = el.getBoundingClientRect();"
            " const header = document.querySelector('header').getBoundingClientRect().bottom;"
            " const covered = el.closest('header, .sticky-head') ? 0 : header;"
            " return r.height > 0 && r.top >= covered - 1 && r.bottom <= innerHeight + 1; })()"
        ))

    async def size(self, width: int, height: int) -> None:
        """Give the page the toolbar popup's size (Chromium caps a popup at 800x600)."""
        await self.tab.send("Emulation.setDeviceMetricsOverride", {
            "width": width, "height": height, "deviceScaleFactor": 1, "mobile": False,
        })

    async def wait_for(self, expression: str, what: str, timeout: float = READY_TIMEOUT) -> Any:
        return await wait_until(lambda: self.js(expression), what, timeout)

    async def screenshot(self, path: Path, max_height: int = 900) -> None:
        """The popup at its content's height up to `max_height` (600: the toolbar popup's own limit)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        height = await self.js("Math.max(document.body.scrollHeight, 320)")
        try:  # a popup opened as a page gets a popup's size; the real toolbar popup has its own already
            await self.tab.send("Emulation.setDeviceMetricsOverride", {
                "width": 400, "height": int(min(height, max_height)), "deviceScaleFactor": 1, "mobile": False,
            })
        except CDPError:
            pass
        shot = await self.tab.send("Page.captureScreenshot", {"format": "png"})
        await asyncio.to_thread(path.write_bytes, base64.b64decode(shot["data"]))


# --- the whole installation ---------------------------------------------------------------------------------------
@dataclass
class Harness:
    browser: Browser
    home: Path
    tabpilot_home: Path
    profile: Path
    chromium_log: Path
    worker: CDPSession | None = None

    # the service worker: the relay itself (tests look inside it, as a developer would in DevTools)
    async def attach_worker(self, timeout: float = READY_TIMEOUT) -> CDPSession:
        """Attach to the extension's service worker once Chromium says it runs. Attached to as soon as its target
        showed, still starting, a new browser's worker failed its first start (loaded, about 1 start in 100: Chromium
        reported "Failed to register a ServiceWorker" with no reason, the version redundant 0.2 s after the attach):
        its registration gone, nothing started it again, and the host's hello never came (service workers: [])."""
        root = self.browser.connection.root
        versions: dict[str, dict[str, Any]] = {}  # the ServiceWorker domain's word, heard on a page
        failures: list[str] = []
        page = await self._hear_worker_versions(versions, failures)

        async def find() -> str | None:
            if page is None:  # no page to hear it on: the worker's target as soon as it shows
                for target in (await root.send("Target.getTargets"))["targetInfos"]:
                    if target["type"] == "service_worker" and target["url"].startswith(EXTENSION_ORIGIN):
                        return str(target["targetId"])
                return None
            for version in versions.values():
                if (version["scriptURL"].startswith(EXTENSION_ORIGIN) and version.get("targetId")
                        and (version["runningStatus"], version["status"]) == ("running", "activated")):
                    return str(version["targetId"])
            return None

        try:
            target_id = await wait_until(find, "the extension's service worker to run", timeout)
        except AssertionError as exc:
            raise AssertionError(f"{exc}; its versions: {list(versions.values())}; errors: {failures}") from None
        finally:
            if page is not None:
                await self._detach(page)
        reply = await root.send("Target.attachToTarget", {"targetId": target_id, "flatten": True})
        self.worker = self.browser.connection.session(reply["sessionId"])
        await self.worker.send("Runtime.runIfWaitingForDebugger")
        return self.worker

    async def _hear_worker_versions(self, versions: dict[str, dict[str, Any]], failures: list[str]
                                    ) -> CDPSession | None:
        """A session on one of the browser's pages that keeps `versions` (by id) as Chromium's ServiceWorker domain
        reports them, and `failures` its errors; None when there is no page."""
        root = self.browser.connection.root
        pages = [t for t in (await root.send("Target.getTargets"))["targetInfos"] if t["type"] == "page"]
        for target in pages:
            try:
                reply = await root.send("Target.attachToTarget", {"targetId": target["targetId"], "flatten": True})
            except CDPError:
                continue  # closed meanwhile
            session = self.browser.connection.session(reply["sessionId"])
            session.on("ServiceWorker.workerVersionUpdated",
                       lambda params: versions.update({v["versionId"]: v for v in params["versions"]}))
            session.on("ServiceWorker.workerErrorReported",
                       lambda params: failures.append(params["errorMessage"]["errorMessage"]))
            try:
                await session.send("ServiceWorker.enable")
            except CDPError:
                await self._detach(session)
                continue
            return session
        return None

    async def _detach(self, session: CDPSession) -> None:
        if session.session_id is not None:
            try:
                await self.browser.connection.root.send("Target.detachFromTarget", {"sessionId": session.session_id},
                                                        timeout=2)
            except (CDPError, TimeoutError):
                pass

    async def sw(self, expression: str, timeout: float = 10) -> Any:
        """Evaluate in the service worker (awaits promises, returns by value)."""
        if self.worker is None:
            await self.attach_worker()
        assert self.worker is not None
        result = await self.worker.send(
            "Runtime.evaluate",
            {"expression": expression, "awaitPromise": True, "returnByValue": True, "replMode": True},
            timeout=timeout,
        )
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            raise AssertionError(details.get("exception", {}).get("description") or details.get("text"))
        return result["result"].get("value")

    async def wait_host_connected(self, timeout: float = 3 * READY_TIMEOUT) -> None:
        # A new browser's service worker once left Runtime.evaluate unanswered for 10 s at a time (CI, load 15 on
        # two cores): the host's hello came later than 20 s. Only a failing run waits the whole time. Under load
        # a harness once asked a worker that answered nothing for the whole minute, and no host was spawned:
        # each failed ask finds the worker again (a worker that was replaced leaves a session that never answers).
        async def connected() -> Any:
            if self.worker is None and not await self._workers():
                await self._wake_worker()
            try:
                return await self.sw("host.connected")
            except (CDPError, TimeoutError):
                await self._drop_worker()
                raise

        try:
            await wait_until(connected, "the native host's hello", timeout)
        except AssertionError as exc:
            raise AssertionError(f"{exc}; service workers: {await self._workers()}") from exc

    async def stop_worker(self) -> None:
        """Stop the extension's service worker, as Chromium stops an idle one, once the harness has let go of it: a
        worker stopped with a DevTools session on it may never start again (puppeteer#9995)."""
        await self._drop_worker()
        root = self.browser.connection.root
        workers = [target["targetId"] for target in (await root.send("Target.getTargets"))["targetInfos"]
                   if target["type"] == "service_worker" and target["url"].startswith(EXTENSION_ORIGIN)]
        assert len(workers) == 1, workers
        await root.send("Target.closeTarget", {"targetId": workers[0]})

    async def _wake_worker(self) -> None:
        """Start the extension's service worker again if it stopped: an extension page that talks to it, opened and
        closed. (A worker whose first start failed has no registration left to start: see attach_worker.)"""
        root = self.browser.connection.root
        try:
            page = await root.send("Target.createTarget", {"url": f"{EXTENSION_ORIGIN}/popup.html"}, timeout=5)
            await asyncio.sleep(1)
            await root.send("Target.closeTarget", {"targetId": page["targetId"]}, timeout=5)
        except (CDPError, TimeoutError):
            pass

    async def _drop_worker(self) -> None:
        worker, self.worker = self.worker, None
        if worker is not None:
            await self._detach(worker)

    async def _workers(self) -> list[dict[str, Any]]:
        try:
            targets = (await self.browser.connection.root.send("Target.getTargets", timeout=5))["targetInfos"]
        except (CDPError, TimeoutError) as exc:
            return [{"error": str(exc)}]
        return [target for target in targets if target["type"] == "service_worker"]

    async def host_state(self) -> dict[str, Any]:
        return await self.sw("({connected: host.connected, error: host.error, version: host.hostVersion})")

    async def chrome_tab_id(self, tab: Tab) -> int:
        """chrome.tabs' id for a tab we opened over CDP (the id the popup and the host use), by its target id:
        by URL, a tab of an earlier test still closing on the same page was sometimes taken instead."""
        tab_id = await self.sw(
            f"(await chrome.debugger.getTargets()).find(t => t.id === {js_string(tab.target_id)})?.tabId ?? null"
        )
        assert tab_id is not None, f"chrome.debugger does not know the tab {tab.target_id} ({await tab.url()})"
        return int(tab_id)

    async def open_popup(self, target: Tab | None = None) -> PopupPage:
        query = f"?tabId={await self.chrome_tab_id(target)}" if target is not None else ""
        # A window of its own, as the real popup floats over the page: the task's tab stays the visible
        # tab of its window (Chromium hardly renders background tabs; actions there crawl).
        created = await self.browser.connection.root.send(
            "Target.createTarget", {"url": f"{EXTENSION_ORIGIN}/popup.html{query}", "newWindow": True}
        )
        tab = await self.browser.attach(created["targetId"])
        popup = PopupPage(tab)
        await popup.wait_for(POPUP_READY, "the popup to render")
        return popup

    async def open_action_popup(self, target: Tab) -> PopupPage:
        """The real toolbar popup (chrome.action.openPopup), over `target` made the active tab."""
        tab_id = await self.chrome_tab_id(target)
        await self.sw(
            f"const t = await chrome.tabs.update({tab_id}, {{active: true}});"
            " await chrome.windows.update(t.windowId, {focused: true});"
            " await chrome.action.openPopup({windowId: t.windowId}); true"
        )
        root = self.browser.connection.root

        async def find() -> str | None:
            for info in (await root.send("Target.getTargets"))["targetInfos"]:
                if info["type"] == "page" and info["url"] == f"{EXTENSION_ORIGIN}/popup.html":
                    return str(info["targetId"])
            return None

        popup = PopupPage(await self.browser.attach(await wait_until(find, "the toolbar popup")))
        await popup.wait_for(f"{POPUP_READY} && ui.targetTabId !== null", "the popup")
        return popup

    def host_pids(self) -> list[int]:
        """The native hosts Chromium spawned: its descendants whose argv names our extension origin."""
        group = self.browser.launched.process.pid if self.browser.launched else -1
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
                if os.getpgid(int(entry.name)) != group:
                    continue
            except (OSError, ProcessLookupError):
                continue
            if any(arg.decode(errors="replace").startswith(EXTENSION_ORIGIN) for arg in argv):
                found.append(int(entry.name))
        return found

    def database(self) -> Path:
        return self.tabpilot_home / "data" / "tasks.sqlite3"

    def logs(self) -> str:
        parts = []
        for path in [self.chromium_log, *sorted((self.tabpilot_home / "log").glob("*"))]:
            if path.is_file():
                lines = path.read_text(errors="replace").splitlines()
                text = "\n".join(line for line in lines if "dbus" not in line)  # headless Chromium's noise
                parts.append(f"===== {path} (last 6000 chars) =====\n{text[-6000:]}")
        return "\n".join(parts) or "(no logs)"


def install_host(profile: Path, env: dict[str, str]) -> str:
    """Install exactly as a user does, into this one profile; what it told the user."""
    result = subprocess.run(
        [sys.executable, "-m", "tabpilot", "install", "--user-data-dir", str(profile)],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    if result.returncode != 0:
        pytest.fail(f"tabpilot install failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
    return result.stdout


async def start_harness(
    binary: str,
    base: Path,
    *,
    install: bool = True,
    extra_env: dict[str, str] | None = None,
    headless: bool = True,
    debugger_infobar: bool = False,
    browser_args: list[str] | None = None,
) -> Harness:
    home, tabpilot_home, profile = base / "home", base / "tabpilot-home", base / "profile"
    for path in (home, tabpilot_home, profile):
        path.mkdir(parents=True, exist_ok=True)
    env = {"HOME": str(home), "TABPILOT_HOME": str(tabpilot_home), **(extra_env or {})}
    if install:
        install_host(profile, env)
    chromium_log = base / "chromium.log"
    browser = await Browser.launch(
        executable=binary,
        headless=headless,
        user_data_dir=profile,
        extension_dir=EXTENSION_DIR,
        extra_args=(["--window-position=0,0"] if debugger_infobar else ["--silent-debugger-extension-api"])
        + (browser_args or []),
        env=env,
        log_path=str(chromium_log),
    )
    harness = Harness(browser, home, tabpilot_home, profile, chromium_log)
    try:
        await harness.attach_worker()
    except BaseException:
        await browser.close()
        raise
    return harness



async def start_connected_harness(binary: str, base: Path, **options: Any) -> Harness:
    """start_harness, then wait for the host's hello; on failure the logs say why."""
    harness = await start_harness(binary, base, **options)
    try:
        await harness.wait_host_connected()
    except BaseException as exc:
        logs = harness.logs()
        await harness.browser.close()
        raise AssertionError(f"{exc}\n{logs}") from exc
    return harness

# --- the scripted model's side of a task ---------------------------------------------------------------
def prompt_text(body: dict[str, Any]) -> str:
    """The text of the user message holding the page state (a screenshot, with vision on, comes after it
    in a message of its own); the last user message's text when none does."""
    texts = []
    for message in body.get("messages", []):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, list):
            texts.append("\n".join(part.get("text", "") for part in content if isinstance(part, dict)))
        else:
            texts.append(str(content or ""))
    with_page = [text for text in texts if "<browser_state>" in text]
    return (with_page or texts or [""])[-1]


def index_of(body: dict[str, Any], label: str) -> int:
    """The element index the model would read off the page state for the element labelled `label`."""
    import re

    for line in prompt_text(body).splitlines():
        if label in line:
            found = re.search(r"\[(\d+)\]", line)
            if found:
                return int(found.group(1))
    raise LookupError(f"no indexed element labelled {label!r} in the prompt")


def agent_output(next_goal: str, action: dict[str, Any], memory: str = "") -> dict[str, Any]:
    return {
        "evaluation_previous_goal": "Success",
        "memory": memory or next_goal,
        "next_goal": next_goal,
        "action": action,
    }


def act_on(label: str, tool: str, next_goal: str, problems: list[str], **fields: Any) -> Any:
    """A scripted reply that finds `label`'s index in the request, as a model would, and acts on it."""

    def reply(body: dict[str, Any]) -> Any:
        try:
            index = index_of(body, label)
        except LookupError as exc:
            problems.append(f"{exc}; prompt was:\n{prompt_text(body)[-3000:]}")
            return Text(str(exc))
        return ToolCall("AgentOutput", agent_output(next_goal, {tool: {"index": index, **fields}}))

    return reply


def done(text: str, success: bool = True) -> Any:
    return ToolCall("AgentOutput", agent_output("Report the result", {"done": {"text": text, "success": success}}))


# --- a virtual screen for the one headful run (the debugging infobar only exists with a window) ---------
class VirtualScreen:
    """Xvfb on a free display, and real pointer clicks on it through the XTest extension."""

    def __init__(self) -> None:
        import ctypes
        import shutil

        if not shutil.which("Xvfb"):
            missing("Xvfb is not installed (apt-get install xvfb)")
        self.process = subprocess.Popen(
            ["Xvfb", "-displayfd", "1", "-screen", "0", "1280x900x24", "-nolisten", "tcp"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        assert self.process.stdout is not None
        number = self.process.stdout.readline().decode().strip()
        if not number.isdigit():
            self.close()
            pytest.fail("Xvfb did not report its display number")
        self.display = f":{number}"
        try:
            self._x11 = ctypes.CDLL("libX11.so.6")
            self._xtst = ctypes.CDLL("libXtst.so.6")
        except OSError as exc:
            self.close()
            missing(f"no libX11/libXtst to click with: {exc}")
        self._x11.XOpenDisplay.restype = ctypes.c_void_p
        self._dpy = ctypes.c_void_p(self._x11.XOpenDisplay(self.display.encode()))
        if not self._dpy.value:
            self.close()
            pytest.fail(f"cannot open X display {self.display}")

    def click(self, x: int, y: int) -> None:
        self._xtst.XTestFakeMotionEvent(self._dpy, -1, x, y, 0)
        self._xtst.XTestFakeButtonEvent(self._dpy, 1, True, 0)
        self._xtst.XTestFakeButtonEvent(self._dpy, 1, False, 0)
        self._x11.XFlush(self._dpy)

    def close(self) -> None:
        if getattr(self, "_dpy", None) is not None and self._dpy.value:
            self._x11.XCloseDisplay(self._dpy)
            self._dpy = None
        self.process.terminate()
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(5)


# --- driving a task from the popup, and reading the record -------------------------------------------------
SCREENS = Path(os.environ.get("TABPILOT_SCREENS", "/tmp/tabpilot-screens"))  # the popup screenshots
API_KEY = "sk-test-e2e-secret-7f3abcd1234"
TASK_TIMEOUT = 60.0


def interrupted_said(source: str = "popup", requester: str | None = None) -> str:
    """What the popup, the side panel and the overlay say of a task tabpilot's host stopped under: what to do, as who
    asked for it can (the person's own is run again from the box; a page or a program asks again)."""
    stopped = "Interrupted: tabpilot's host stopped before this task finished (it was closed or crashed)."
    if source == "page":
        return f"{stopped} To finish it, ask for it again on the page that asked for it, {requester}."
    if source == "mcp":
        return f"{stopped} To finish it, ask {requester}, the program that asked for it, to run it again."
    return f"{stopped} Run it again to finish it."


async def configure(popup: PopupPage, base_url: str, *, screenshot: str | None = None) -> None:
    """Point the host at the scripted model through the popup's settings, as a user would."""
    await popup.click("#nav-settings")
    await popup.wait_for("document.body.dataset.view === 'settings'", "the settings view")
    await popup.wait_for("document.getElementById('settings-form').dataset.loaded === 'true'", "settings to load")
    await popup.fill("#set-base-url", base_url)
    await popup.fill("#set-model", "scripted")
    await popup.fill("#set-api-key", API_KEY)
    await popup.fill("#set-max-steps", "12")
    await popup.js("document.getElementById('settings-saved').textContent = ''")
    await popup.click("#settings-save")
    # "Saved." in any of the popup's languages
    await popup.wait_for("document.getElementById('settings-saved').textContent !== ''", "settings to save")
    if screenshot:
        await popup.screenshot(SCREENS / screenshot)
    await popup.click("#nav-task")


async def start_task(harness: Harness, target: Tab, llm: ScriptedLLMServer, task: str) -> PopupPage:
    popup = await harness.open_popup(target)
    await configure(popup, llm.base_url)
    await run_in_popup(popup, task)
    return popup


async def run_in_popup(popup: PopupPage, task: str) -> str:
    """Type a task and press Run; returns the new task's id once the popup shows it."""
    before = await popup.js("ui.taskId")
    await popup.fill("#task-input", task)
    await popup.click("#run")
    # (the box is emptied once the view took the new task: a view just opened may show the tab's task before it
    # meanwhile, which `before` did not know of yet)
    task_id = await popup.wait_for(
        f"ui.taskId !== {json.dumps(before)} && document.getElementById('task-input').value === '' && ui.taskId",
        "the popup to show the new task"
    )
    return str(task_id)


async def run_in_terminal(harness: Harness, llm: ScriptedLLMServer, url: str, task: str,
                          *flags: str) -> tuple[str, subprocess.CompletedProcess[str]]:
    """`tabpilot run` as a person types it in a terminal, working in this browser (--cdp-url) on the host's record:
    the id of the task it recorded (the one of these words the terminal ran), and how the command ended."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env.update(HOME=str(harness.home), TABPILOT_HOME=str(harness.tabpilot_home))
    assert harness.browser.launched is not None
    argv = [sys.executable, "-m", "tabpilot", "run", task, "--cdp-url", harness.browser.launched.ws_url, "--url", url,
            "--base-url", llm.base_url, "--api-key", API_KEY, *flags]
    proc = await asyncio.to_thread(subprocess.run, argv, env=env, capture_output=True, text=True, timeout=120)
    with sqlite3.connect(harness.database()) as db:
        [(task_id,)] = db.execute("SELECT id FROM tasks WHERE task = ? AND source = 'cli'", (task,)).fetchall()
    return str(task_id), proc


async def wait_status(popup: PopupPage, *statuses: str, timeout: float = TASK_TIMEOUT) -> str:
    """Wait for the popup to show one of `statuses`; an ended task's also with its result, which the host pushes
    right after the status (until then the hidden result box may still hold the task before's words)."""
    wanted = json.dumps(list(statuses))
    status = await popup.wait_for(
        f"{wanted}.includes(document.body.dataset.status)"
        " && (document.body.dataset.status === 'running' || !document.getElementById('result').hidden)"
        " && document.body.dataset.status",
        f"the popup to show status {' or '.join(statuses)}",
        timeout,
    )
    return str(status)


def task_row(harness: Harness, task_id: str) -> dict[str, Any]:
    with sqlite3.connect(f"file:{harness.database()}?mode=ro", uri=True) as db:
        db.row_factory = sqlite3.Row
        row = db.execute("SELECT * FROM tasks WHERE id = ?", (task_id,)).fetchone()
        assert row is not None, f"task {task_id} is not in the store"
        events = [
            json.loads(r["body"])
            for r in db.execute("SELECT body FROM events WHERE task_id = ? ORDER BY seq", (task_id,))
        ]
    return {**dict(row), "events": events}


async def popup_task_id(popup: PopupPage) -> str:
    return str(await popup.js("ui.taskId"))
