"""The user's side of a takeover, for the end-to-end tests: the in-page overlay read and pressed the way a
person would, through the test's OWN CDP connection to the browser's debugging port (not the
extension's chrome.debugger relay), so the extension did not dispatch this input and must tell it from
the agent's. Reading the overlay pierces its closed shadow root with CDP (DOM.getDocument pierce), as a
developer's DevTools does: no page script can do that."""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path
from typing import Any

from e2e_support import EXTENSION_ORIGIN, POPUP_READY, SCREENS, Harness, PopupPage, wait_until

from tabpilot.browser.tab import Tab, js_string

OVERLAY_ATTRIBUTE = "data-tabpilot-overlay"

_READ_OVERLAY = """function () {
  const shown = (el) => !!el && !el.closest('[hidden]') && el.getClientRects().length > 0;
  // what it says is drawn from data-text (content/overlay.js `say`)
  const text = (sel) => {
    const el = this.querySelector(sel);
    return shown(el) ? (el.dataset.text ?? el.textContent).trim() : '';
  };
  const panel = this.querySelector('.panel');
  return {
    state: panel ? panel.dataset.state : null,
    pill: text('.pill'), task: text('.task'), goal: text('.goal'), notice: text('.notice-title'),
    reason: text('.reason'), why: text('.why'), error: text('.error'),
    buttons: [...this.querySelectorAll('button')].filter(shown).map((b) => b.dataset.command),
    fields: [...this.querySelectorAll('textarea, input')].filter(shown).map((f) => f.className),
  };
}"""

_BOX = """function (selector) {
  const el = this.querySelector(selector);
  if (!el) return null;
  const r = el.getBoundingClientRect();
  return {x: r.left + r.width / 2, y: r.top + r.height / 2, w: r.width, h: r.height, disabled: !!el.disabled};
}"""


def _find_overlay_root(node: dict[str, Any]) -> int | None:
    """The backendNodeId of the overlay's (closed) shadow root, searching a pierced DOM tree."""
    attributes = node.get("attributes") or []
    if OVERLAY_ATTRIBUTE in attributes[0::2] and node.get("shadowRoots"):
        return int(node["shadowRoots"][0]["backendNodeId"])
    for child in (node.get("children") or []) + (node.get("shadowRoots") or []):
        found = _find_overlay_root(child)
        if found is not None:
            return found
    return None


async def overlay_root(tab: Tab) -> str | None:
    """A remote object for the overlay's shadow root in `tab`, or None when the page has no overlay."""
    document = await tab.send("DOM.getDocument", {"depth": -1, "pierce": True})
    backend = _find_overlay_root(document["root"])
    if backend is None:
        return None
    resolved = await tab.send("DOM.resolveNode", {"backendNodeId": backend, "objectGroup": "e2e-overlay"})
    return str(resolved["object"]["objectId"])


async def overlay(tab: Tab) -> dict[str, Any] | None:
    """What the overlay shows now (None: no overlay in the page)."""
    root = await overlay_root(tab)
    if root is None:
        return None
    result = await tab.send("Runtime.callFunctionOn", {
        "objectId": root, "functionDeclaration": _READ_OVERLAY, "returnByValue": True,
    })
    return result["result"]["value"]


async def wait_overlay(tab: Tab, what: str, check: Any, timeout: float = 30) -> dict[str, Any]:
    async def probe() -> dict[str, Any] | None:
        shown = await overlay(tab)
        return shown if shown is not None and check(shown) else None

    try:
        return await wait_until(probe, what, timeout)
    except AssertionError as exc:
        raise AssertionError(f"{exc}; the overlay shows {await overlay(tab)}") from None


async def overlay_box(tab: Tab, selector: str) -> dict[str, float]:
    root = await overlay_root(tab)
    assert root is not None, "no overlay in the page"
    result = await tab.send("Runtime.callFunctionOn", {
        "objectId": root, "functionDeclaration": _BOX, "arguments": [{"value": selector}], "returnByValue": True,
    })
    box = result["result"]["value"]
    assert box and box["w"] > 0, f"{selector} is not shown in the overlay"
    return box


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


async def user_press_key(tab: Tab, key: str, code: str, key_code: int) -> None:
    await tab.send("Input.dispatchKeyEvent", {"type": "rawKeyDown", "key": key, "code": code,
                                              "windowsVirtualKeyCode": key_code})
    await tab.send("Input.dispatchKeyEvent", {"type": "keyUp", "key": key, "code": code,
                                              "windowsVirtualKeyCode": key_code})


async def press_overlay(tab: Tab, command: str) -> None:
    """The user presses one of the overlay's buttons, at its place on the screen, once it is not greyed out: the
    overlay greys its buttons while the worker answers a press, and the state that press led to (Hand back shown)
    can come before that answer (the fresh-clone run at d86ee21, loaded, pressed a greyed Hand back: nothing
    happened, and the task waited for the person for ever)."""
    selector = f'button[data-command="{command}"]'

    async def pressable() -> dict[str, float] | None:
        box = await overlay_box(tab, selector)
        return None if box["disabled"] else box

    box = await wait_until(pressable, f"the overlay's {command} button to be pressable")
    await user_click(tab, box["x"], box["y"])


async def type_in_overlay(tab: Tab, selector: str, text: str) -> None:
    box = await overlay_box(tab, selector)
    await user_click(tab, box["x"], box["y"])
    await user_type(tab, text)


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
