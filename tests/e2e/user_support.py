"""The user's side of a takeover, for the end-to-end tests: the in-page overlay read and pressed the way a
person would, through the test's OWN CDP connection to the browser's debugging port (not the
extension's chrome.debugger relay), so the extension did not dispatch this input and must tell it from
the agent's. The overlay's panel is an extension page framed in the overlay's closed shadow root (its own target, an
out-of-process frame): the test reads it by attaching to that frame, as a developer's DevTools does; no page script
can reach it."""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path
from typing import Any

from e2e_support import EXTENSION_ORIGIN, POPUP_READY, SCREENS, Harness, PopupPage, wait_until

from tabpilot.browser.tab import Tab, js_string
from tabpilot.cdp import CDPError, CDPSession

OVERLAY_ATTRIBUTE = "data-tabpilot-overlay"
PANEL_FRAME_URL = "about:srcdoc"  # the overlay's panel: a sandboxed document of its own (content/overlay.js)

_READ_OVERLAY = """function () {
  const shown = (el) => !!el && !el.closest('[hidden]') && el.getClientRects().length > 0;
  const text = (sel) => {
    const el = this.querySelector(sel);
    return shown(el) ? (el.dataset.text ?? el.textContent).trim() : '';
  };
  const panel = this.querySelector('.panel');
  return {
    state: panel && panel.dataset.state ? panel.dataset.state : null,
    pill: text('.pill'), task: text('.task'), goal: text('.goal'), thinking: text('.thinking'),
    notice: text('.notice-title'),
    reason: text('.reason'), why: text('.why'), error: text('.error'), hint: text('.hint'),
    hintRole: this.querySelector('.hint')?.getAttribute('role') ?? null,
    refused: Number(this.querySelector('.hint')?.dataset.refused || 0),
    outcome: text('.outcome-text'), remedy: text('.remedy'), outcomeKind: this.querySelector('.outcome')?.dataset.kind,
    buttons: [...this.querySelectorAll('button')].filter(shown).map((b) => b.dataset.command),
    fields: [...this.querySelectorAll('textarea, input')].filter(shown).map((f) => f.className),
  };
}"""

_BOX = """function (selector) {
  const el = this.querySelector(selector);
  if (!el) return null;
  const r = el.getBoundingClientRect();
  return {x: r.left + r.width / 2, y: r.top + r.height / 2, w: r.width, h: r.height, disabled: !!el.disabled,
          viewport: innerHeight, panel: this.querySelector('.panel').getBoundingClientRect().height};
}"""

_HOST_BOX = f"""(() => {{ const host = document.querySelector('[{OVERLAY_ATTRIBUTE}]');
  if (!host || !host.isConnected) return null; const r = host.getBoundingClientRect();
  return {{x: r.left, y: r.top, w: r.width, h: r.height}}; }})()"""

# The host's box once the page has drawn two frames since (what the browser routes a click by is then drawn too), or
# after 100 ms in a tab that draws nothing (one in the background).
_SETTLED = (f"new Promise((done) => {{ const box = () => {_HOST_BOX}; const late = setTimeout(() => done(box()), 100);"
            " requestAnimationFrame(() => requestAnimationFrame(() => { clearTimeout(late); done(box()); })); })")

# `selector`'s box in the panel (_BOX) once the panel has drawn two frames since, or after 500 ms in a tab that draws
# nothing.
_DRAWN_BOX = (f"function (selector) {{ const box = () => ({_BOX}).call(this, selector);"
              " return new Promise((done) => { const late = setTimeout(() => done(box()), 500);"
              " requestAnimationFrame(() => requestAnimationFrame(() => { clearTimeout(late); done(box()); })); }); }")

_panels: dict[str, CDPSession] = {}  # the panel frame's target id → the test's session on it
# The panel frame is sandboxed with no scripts allowed: its main world evaluates, but a timer or animation frame set
# there never fires. The test reads it from a world of its own there, as a developer's DevTools snippet would.
_worlds: dict[str, int] = {}  # the panel frame's target id → the execution context of the test's world in it
_world_of: dict[CDPSession, int] = {}  # the test's session on a panel frame → that context


async def panel_session(tab: Tab) -> CDPSession | None:
    """The test's CDP session on the overlay's panel in `tab` (its frame's own target), or None: no overlay."""
    if await tab.evaluate(_HOST_BOX) is None:
        return None
    # the overlay's own panel; a page may make a srcdoc frame of its own (tests do, as an attacker): it shows nothing
    found = [session for session in [await _attach(tab, info) for info in await panel_targets(tab)] if session]
    for session in found:
        if await _evaluate(session, "!!document.querySelector('.panel[data-state]')"):
            return session
    return found[0] if found else None


async def panel_targets(tab: Tab) -> list[dict[str, Any]]:
    """The targets of every out-of-process srcdoc frame in `tab`'s top document: the overlay's panel among them (a
    sandboxed frame has a process of its own)."""
    root = tab.session.connection.session(None)
    return [info for info in (await root.send("Target.getTargets"))["targetInfos"]
            if info["type"] == "iframe" and info["url"] == PANEL_FRAME_URL
            and info.get("parentFrameId") == tab.target_id]


async def _attach(tab: Tab, info: dict[str, Any]) -> CDPSession | None:
    session = _panels.get(info["targetId"])
    if session is None:
        root = tab.session.connection.session(None)
        try:
            attached = await root.send("Target.attachToTarget", {"targetId": info["targetId"], "flatten": True})
        except CDPError:
            return None  # gone meanwhile (the page reloaded)
        session = _panels[info["targetId"]] = root.connection.session(attached["sessionId"])
    if info["targetId"] not in _worlds:
        try:
            world = await session.send("Page.createIsolatedWorld", {"frameId": info["targetId"],
                                                                     "worldName": "tabpilot-test"})
        except CDPError:
            return None  # gone meanwhile
        _worlds[info["targetId"]] = world["executionContextId"]
    _world_of[session] = _worlds[info["targetId"]]
    return session


async def _evaluate(session: CDPSession, expression: str) -> Any:
    try:
        reply = await session.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                        "contextId": _world_of[session]})
    except CDPError:
        return None
    return reply.get("result", {}).get("value")


async def in_panel(tab: Tab, function: str, *args: Any) -> Any:
    """`function` called on the panel's document (`this`) with `args`; None when there is no overlay."""
    session = await panel_session(tab)
    if session is None:
        return None
    return await call_in_panel(session, function, *args)


async def call_in_panel(session: CDPSession, function: str, *args: Any) -> Any:
    """`function` called on the document of the panel `session` is on (panel_session), with `args`; the page around it
    is not asked (it may be busy)."""
    try:
        reply = await session.send("Runtime.evaluate", {
            "expression": f"({function}).apply(document, {json.dumps(list(args))})",
            "returnByValue": True, "awaitPromise": True, "contextId": _world_of[session],
        })
    except CDPError:
        return None  # the frame went away meanwhile
    if "exceptionDetails" in reply:
        raise AssertionError(f"in the overlay's panel: {reply['exceptionDetails']}")
    return reply["result"].get("value")


# Every text node of a document (`this`) that runs past the edge of the viewport or of a box that clips it, as a
# person sees it cut off: "its first words… ends at X px of Y". A text cut on purpose (ellipsis, its whole in a tooltip)
# and the inside of form fields do not count.
CUT_TEXT = """function () {
  const doc = this, win = doc.defaultView, cut = [];
  const walker = doc.createTreeWalker(doc.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const el = node.parentElement;
    if (!node.data.trim() || !el || el.closest('[hidden], input, textarea, select, option, script, style')) continue;
    const range = doc.createRange();
    range.selectNodeContents(node);
    const text = range.getBoundingClientRect();
    if (!text.width) continue;
    let right = doc.documentElement.clientWidth, ellipsis = false;
    for (let box = el; box && box !== doc.documentElement; box = box.parentElement) {
      const style = win.getComputedStyle(box);
      if (style.textOverflow === 'ellipsis') { ellipsis = true; break; }
      if (style.overflowX !== 'visible') {
        right = Math.min(right, box.getBoundingClientRect().left + box.clientLeft + box.clientWidth);
      }
    }
    if (!ellipsis && text.right > right + 1) {
      cut.push(`${node.data.trim().slice(0, 40)}… ends at ${Math.round(text.right)} px of ${Math.round(right)}`);
    }
  }
  return cut;
}"""


async def cut_text(page: PopupPage) -> list[str]:
    """The texts the popup or side panel shows cut off at its edge (CUT_TEXT)."""
    return list(await page.js(f"({CUT_TEXT}).call(document)"))


async def cut_in_overlay(tab: Tab) -> list[str]:
    """The texts the overlay in `tab` shows cut off at its edge (CUT_TEXT)."""
    found = await in_panel(tab, CUT_TEXT)
    assert found is not None, "no overlay in the page"
    return list(found)


async def overlay(tab: Tab) -> dict[str, Any] | None:
    """What the overlay shows now (None: no overlay in the page)."""
    return await in_panel(tab, _READ_OVERLAY)


async def overlay_in_panel(session: CDPSession) -> dict[str, Any] | None:
    """What the overlay shows now, read from its panel alone (panel_session): for a page that is busy."""
    return await call_in_panel(session, _READ_OVERLAY)


# The overlay of a task that ended says how it ended (the host's task.status) and then what came of it (its
# task.result, pushed right after): between the two it shows the end with no outcome.
ENDED_STATES = ("completed", "error", "stopped")


async def wait_overlay(tab: Tab, what: str, check: Any, timeout: float = 30) -> dict[str, Any]:
    """Wait until the overlay shows what `check` accepts; an ended task's only once its outcome is shown too."""
    async def probe() -> dict[str, Any] | None:
        shown = await overlay(tab)
        if shown is None or (shown["state"] in ENDED_STATES and not shown["outcome"]):
            return None
        return shown if check(shown) else None

    try:
        return await wait_until(probe, what, timeout)
    except AssertionError as exc:
        raise AssertionError(f"{exc}; the overlay shows {await overlay(tab)}") from None


async def overlay_box(tab: Tab, selector: str) -> dict[str, float]:
    """Where `selector` in the overlay's panel is on the screen (the panel's frame stands on the host element's bottom
    edge, as tall as the panel's viewport: content/overlay.js)."""
    session = await panel_session(tab)
    assert session is not None, "no overlay in the page"
    return await _on_screen(tab, await call_in_panel(session, _BOX, selector), selector)


async def as_tall_as_its_panel(tab: Tab) -> dict[str, float] | None:
    """The overlay's box in the page once it has taken its panel's height, else None. The panel tells its height
    through the worker after it drew a state: read before, the box still had the state before's (96 px for a question
    that needed 215, with the worker's messages to the page slowed)."""
    box = await tab.evaluate(_HOST_BOX)
    needs = await in_panel(tab, "function () { return parseFloat(this.querySelector('.panel').style.height); }")
    return box if box and needs and box["h"] == needs else None


async def _on_screen(tab: Tab, box: dict[str, Any] | None, selector: str) -> dict[str, Any]:
    assert box and box["w"] > 0, f"{selector} is not shown in the overlay"
    host = await tab.evaluate(_HOST_BOX)
    assert host, "no overlay in the page"
    top = host["y"] + host["h"] - box["viewport"]
    return {**box, "x": host["x"] + box["x"], "y": top + box["y"], "host": host}


# --- the user's hands: trusted input from the test's own CDP connection ---------------------------------------
async def user_click(tab: Tab, x: float, y: float) -> None:
    for kind, extra in (("mouseMoved", {}), ("mousePressed", {"button": "left", "clickCount": 1}),
                        ("mouseReleased", {"button": "left", "clickCount": 1})):
        await tab.send("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, **extra})


async def user_type(tab: Tab, text: str) -> None:
    """Key by key, as a keyboard types (keydown with text → keypress → input → keyup)."""
    for char in text:
        await tab.send("Input.dispatchKeyEvent", {"type": "keyDown", "text": char, "key": char, "unmodifiedText": char})
        await tab.send("Input.dispatchKeyEvent", {"type": "keyUp", "key": char})


async def user_press_key(tab: Tab, key: str, code: str, key_code: int, modifiers: int = 0,
                         commands: list[str] | None = None) -> None:
    """One key (with `modifiers`, CDP's bits: 2 Control); `commands`: what the browser's shortcut does (headless
    Chromium has no menus: Control+C copies only when told, as CDP's Input.dispatchKeyEvent `commands`)."""
    down: dict[str, Any] = {"type": "rawKeyDown", "key": key, "code": code, "windowsVirtualKeyCode": key_code,
                            "modifiers": modifiers}
    if commands:
        down["commands"] = commands
    await tab.send("Input.dispatchKeyEvent", down)
    await tab.send("Input.dispatchKeyEvent", {"type": "keyUp", "key": key, "code": code,
                                              "windowsVirtualKeyCode": key_code, "modifiers": modifiers})


async def press_overlay(tab: Tab, command: str) -> None:
    """The user presses one of the overlay's buttons, at its place on the screen, once it is not greyed out: the
    overlay greys its buttons while the worker answers a press, and the state that press led to (Hand back shown)
    can come before that answer (the fresh-clone run at d86ee21, loaded, pressed a greyed Hand back: nothing
    happened, and the task waited for the person for ever)."""
    box = await overlay_button(tab, command)
    await user_click(tab, box["x"], box["y"])


async def overlay_button(tab: Tab, command: str) -> dict[str, float]:
    """Where the overlay's `command` button is on the screen, once it is there to be pressed (press_overlay)."""
    selector = f'button[data-command="{command}"]'

    async def pressable() -> dict[str, float] | None:
        session = await panel_session(tab)
        if session is None:
            return None
        in_frame = await call_in_panel(session, _BOX, selector)
        box = await _on_screen(tab, in_frame, selector)
        # and where it stays: the overlay's box follows what its panel shows, and a click in the frame drawn a moment
        # before is routed by where the frame was (a press right after the question came missed Take over)
        if box["disabled"] or await tab.evaluate(_SETTLED) != box["host"]:
            return None
        # and the panel's own frame drawn since, in its own process: a panel just made (a new document's overlay)
        # takes no click before (a Hand back pressed on the page the person had just gone to was lost, loaded); and
        # the button where it was then, in a panel the page's host box shows all of: the panel takes its new height
        # in its own process and the host box follows through the worker, so a place read in between was off (Take
        # over pressed as the question came, at load 5-9: 2 presses of 34 landed on the notice 107 px above it and
        # did nothing, when the frame itself still grew with the box)
        if await call_in_panel(session, _DRAWN_BOX, selector) != in_frame:
            return None
        return box if abs(box["panel"] - box["host"]["h"]) <= 1 else None

    return await wait_until(pressable, f"the overlay's {command} button to be pressable")


# What a press the overlay did not count is told (lib/seen.js, _locales/en): the button had only just appeared (or
# moved there), or it was not all in view.
TOO_SOON = "Press again — this button just appeared."
NOT_SEEN = "Press again once you can see all of it — it was covered, or partly off screen."


async def press_until_it_counts(tab: Tab, command: str, tries: int = 5) -> int:
    """The person presses the overlay's `command` (Allow) and, told the press did not count (Allow counts a click only
    on a button seen whole for 0.4 s: under load the overlay may not have been seen yet), presses again, as a person
    reading the line does. Returns how many presses were refused. A press that counts greys the buttons, or the
    question goes."""
    for refused in range(tries):
        before = (await overlay(tab) or {}).get("refused", 0)
        await press_overlay(tab, command)

        async def outcome(before: int = before) -> str | None:
            shown = await overlay(tab)
            if shown is None or command not in shown["buttons"]:
                return "counted"
            if shown["refused"] > before:
                return "refused"
            box = await in_panel(tab, _BOX, f'button[data-command="{command}"]')
            return "counted" if box and box["disabled"] else None

        if await wait_until(outcome, f"the overlay to take or refuse the press on {command}", 10) == "counted":
            return refused
        await asyncio.sleep(0.5)  # the person reads why, and presses again
    raise AssertionError(f"the overlay refused {tries} presses on {command}: {await overlay(tab)}")


_FOCUSED = """function (selector) {
  return document.hasFocus() && document.activeElement === this.querySelector(selector); }"""
_VALUE = """function (selector) { return this.querySelector(selector).value; }"""


async def type_in_overlay(tab: Tab, selector: str, text: str) -> None:
    """The person clicks into the overlay's field and types `text`. The keys go to the frame the browser last heard
    took the focus: a person whose keys did not land clicks again (as takeover_support.Person does)."""
    before = await in_panel(tab, _VALUE, selector)
    for _ in range(5):
        box = await overlay_box(tab, selector)
        await user_click(tab, box["x"], box["y"])
        try:
            await wait_until(lambda: in_panel(tab, _FOCUSED, selector), f"{selector} to have the focus", 3)
            break
        except AssertionError:
            continue
    await user_type(tab, text)
    await wait_until(lambda: _async_equal(in_panel(tab, _VALUE, selector), before + text),
                     f"what the person typed to be in the overlay's {selector}")


async def _async_equal(value: Any, expected: Any) -> bool:
    return await value == expected


async def page_box(tab: Tab, selector: str) -> dict[str, float]:
    box = await tab.evaluate(
        f"(() => {{ const el = document.querySelector({js_string(selector)}); el.scrollIntoView({{block: 'center'}});"
        " const r = el.getBoundingClientRect(); return {x: r.left + r.width / 2, y: r.top + r.height / 2}; })()"
    )
    assert box, selector
    return box


# A person's hand moves from the mouse to the keys between a click into a field and the first key (about a
# third of a second); a machine typing within milliseconds of its click is no person.
HAND_TO_KEYS_S = 0.3


async def user_fill(tab: Tab, selector: str, text: str) -> None:
    box = await page_box(tab, selector)
    await user_click(tab, box["x"], box["y"])
    await asyncio.sleep(HAND_TO_KEYS_S)
    await user_type(tab, text)


async def screenshot(tab: Tab, name: str) -> Path:
    """A screenshot of the tab as the user sees it, in $TABPILOT_SCREENS (e2e_support.SCREENS)."""
    await asyncio.to_thread(SCREENS.mkdir, parents=True, exist_ok=True)
    path = SCREENS / name
    shot = await tab.send("Page.captureScreenshot", {"format": "png"})
    await asyncio.to_thread(path.write_bytes, base64.b64decode(shot["data"]))
    return path


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


async def open_panel(harness: Any, target: Tab) -> Any:
    """The side panel's page (popup.html?mode=panel, as the manifest's side_panel names it) for `target`'s
    window, driven as a tab of its own at a side panel's size."""
    from e2e_support import EXTENSION_ORIGIN, PopupPage

    tab_id = await harness.chrome_tab_id(target)
    created = await harness.browser.connection.root.send(
        "Target.createTarget", {"url": f"{EXTENSION_ORIGIN}/popup.html?mode=panel&tabId={tab_id}", "newWindow": True}
    )
    panel = PopupPage(await harness.browser.attach(created["targetId"]))
    await panel.size(360, 720)
    await panel.wait_for(f"{POPUP_READY} && document.body.dataset.mode === 'panel'", "the side panel to render")
    return panel


async def open_side_panel(harness: Harness, popup: PopupPage) -> PopupPage:
    """The popup's "open in the side panel" pressed as a person presses it (sidePanel.open needs their gesture; the
    toolbar popup may close), and the side panel that opens."""
    box = await popup.js("(() => { const r = document.getElementById('open-panel').getBoundingClientRect();"
                         " return {x: r.left + r.width / 2, y: r.top + r.height / 2}; })()")
    await user_click(popup.tab, box["x"], box["y"])

    async def find_panel() -> str | None:
        for info in (await harness.browser.connection.root.send("Target.getTargets"))["targetInfos"]:
            if info["url"] == f"{EXTENSION_ORIGIN}/popup.html?mode=panel":
                return str(info["targetId"])
        return None

    return PopupPage(await harness.browser.attach(await wait_until(find_panel, "the side panel")))


# --- where the person is looking: the desktop notifications follow it (worker/takeover.js) ---------------------------
async def look_elsewhere(harness: Harness, beside: Tab | None) -> int:
    """The person turns from the tab in front to another of their own (not one a task opened): a new tab in `beside`'s
    window, or a new window when None; returns its tab id (close it with come_back). Made as the browser's own New
    tab / New window make them (chrome.tabs / chrome.windows, no opener): a tab made over CDP is opened by the tab in
    front, which makes it the task's."""
    if beside is None:
        return int(await harness.sw("(await chrome.windows.create({url: 'about:blank', focused: true})).tabs[0].id"))
    window = f"(await chrome.tabs.get({await harness.chrome_tab_id(beside)})).windowId"
    return int(await harness.sw(
        f"(await chrome.tabs.create({{windowId: {window}, url: 'about:blank', active: true}})).id"))


async def come_back(harness: Harness, elsewhere: int) -> None:
    """The person closes the tab or window they turned to: the one they left is in front again."""
    await harness.sw(f"await chrome.tabs.remove({elsewhere}); true")


async def notified(harness: Harness, task_id: str) -> bool:
    """Whether the task's desktop notification is shown, once the worker has looked where the person is: it asks the
    browser which tab is in front before it raises one, and the browser answers in order, so this asks the same
    questions first."""
    return bool(await harness.sw(
        "const front = await chrome.windows.getLastFocused({windowTypes: ['normal', 'popup']});"
        " await chrome.tabs.query({windowId: front.id, active: true});"
        f" Object.keys(await chrome.notifications.getAll()).includes({js_string('tabpilot-' + task_id)})"))
