"""What the agent can do in the browser. Each action returns one short sentence for the model and raises
ActionError (or TabClosed) with a message the model can act on when it cannot be done.

Clicks, hovering and keys are trusted input (Input.dispatch*Event), the same as a person's mouse and
keyboard. Callers re-read `browser.active` afterwards: an action may have opened and followed a new tab.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from .. import paths
from ..cdp import CDPError, CDPErrorKind
from ..cdp.transport import INPUT_WINDOW
from . import scripts
from .browser import Browser, TabInfo
from .dom.fast import WORLD_NAME
from .dom.rules import is_password_input
from .elements import ElementRef
from .errors import ActionError, BrowserError, PageScriptError, TabClosed
from .keys import key_events, parse_chord, parse_keys, typing_events
from .nodes import (
    call,
    check_open,
    describe,
    dialog_note,
    node_id,
    ref_for_object,
    release,
    request_navigation,
    resolve,
    resolve_unchecked,
    send,
    send_input_run,
    shorten,
    stale_error,
)
from .passwords import withhold
from .pointer import aim, mouse_click, mouse_move
from .tab import ERROR_PAGE_WAIT, Tab

NEW_TAB_WAIT = 10.0
LOAD_WAIT = 15.0
# After trusted input, how long a navigation or new window has to show itself before the page counts as
# settled. Links and form submissions announce themselves within a few ms (measured: ~3 ms).
SETTLE_GRACE = 0.1
NAVIGATION_START_WAIT = 2.0
RESULT_LIMIT = 2000
READ_TEXT_LIMIT = 20_000  # characters read_text hands the model at once (~5k tokens)
TYPE_BY_KEYS_LIMIT = 200  # longer texts are inserted at once: key by key would take seconds


def element_at(elements: Mapping[int, ElementRef], index: int) -> ElementRef:
    """The element the model named, or a clear error when the index is not on the current page."""
    element = elements.get(index)
    if element is None:
        raise ActionError(
            f"There is no element with index {index} on the current page. Use an index shown in the page state."
        )
    return element


# --- watching what an action sets off ---------------------------------------------------------------
class _Aftermath:
    """What the page did in response to an action: dialogs, navigations, windows it opened."""

    def __init__(self) -> None:
        self.dialogs: list[str] = []
        self.window_opened = False
        self.navigation_requested = False
        self.load_started = False
        self.moved_within_page = False
        self.load_finished = asyncio.Event()
        self.changed = asyncio.Event()  # set on every event above, to wake whoever waits

    def notes(self) -> str:
        return "".join(f" {d}" for d in self.dialogs)


@asynccontextmanager
async def _watch(browser: Browser, tab: Tab) -> AsyncIterator[_Aftermath]:
    """Accept JavaScript dialogs (they would block the page) and notice navigations and new windows."""
    aftermath = _Aftermath()

    async def on_dialog(params: dict[str, Any]) -> None:
        kind = params.get("type", "alert")
        reply: dict[str, Any] = {"accept": True}
        if kind == "prompt":
            reply["promptText"] = params.get("defaultPrompt", "")
        try:
            await tab.session.send("Page.handleJavaScriptDialog", reply, timeout=5)
        except CDPError:
            return
        aftermath.dialogs.append(dialog_note(kind, params.get("message", "")))

    def main_frame(handler: Callable[[], None]) -> Callable[[dict[str, Any]], None]:
        def on_event(params: dict[str, Any]) -> None:
            if params.get("frameId") == tab.main_frame_id:
                handler()
                aftermath.changed.set()
        return on_event

    def window_opened(params: dict[str, Any]) -> None:
        aftermath.window_opened = True
        aftermath.changed.set()

    def requested() -> None:
        aftermath.navigation_requested = True

    def started() -> None:
        aftermath.load_started = True
        aftermath.load_finished.clear()

    def within_page() -> None:
        aftermath.moved_within_page = True

    handlers: dict[str, Callable[[dict[str, Any]], Any]] = {
        "Page.javascriptDialogOpening": on_dialog,
        "Page.windowOpen": window_opened,
        "Page.frameRequestedNavigation": main_frame(requested),
        "Page.frameStartedLoading": main_frame(started),
        "Page.frameStoppedLoading": main_frame(aftermath.load_finished.set),
        "Page.navigatedWithinDocument": main_frame(within_page),
    }
    browser.drain_new_tab_events()
    for method, handler in handlers.items():
        tab.session.on(method, handler)
    try:
        yield aftermath
    finally:
        for method, handler in handlers.items():
            tab.session.off(method, handler)


async def _wait(tab: Tab, event: asyncio.Event, timeout: float) -> None:
    """Wait for event, at most timeout seconds; a tab that closes ends the wait (callers check tab.closed),
    a lost browser connection raises."""
    try:
        async with asyncio.timeout(timeout):
            await tab.unless_gone(event.wait(), "waiting for the page")
    except (TimeoutError, TabClosed):
        pass


async def _settle(tab: Tab, aftermath: _Aftermath) -> None:
    """Give a navigation the action set off a moment to show itself, then wait until it has loaded."""
    await asyncio.sleep(SETTLE_GRACE)
    if aftermath.navigation_requested and not (aftermath.load_started or aftermath.moved_within_page):
        # asked for, not yet started (e.g. a form post on its way): give it a little longer
        aftermath.changed.clear()
        deadline = asyncio.get_running_loop().time() + NAVIGATION_START_WAIT
        while not (aftermath.load_started or aftermath.moved_within_page or tab.closed):
            remaining = deadline - asyncio.get_running_loop().time()
            if remaining <= 0:
                break
            await _wait(tab, aftermath.changed, remaining)
            aftermath.changed.clear()
    if aftermath.load_started and not tab.closed:
        await _wait(tab, aftermath.load_finished, LOAD_WAIT)  # still loading after that: a slow page is still a page
        if not tab.closed:
            await tab.wait_for_load(timeout=5)


async def _after_input(browser: Browser, tab: Tab, aftermath: _Aftermath) -> str:
    """Wait for a navigation the action started; follow a tab it opened. Returns what to tell the model."""
    if not tab.closed:
        await _settle(tab, aftermath)
    info = await browser.wait_for_new_tab(timeout=NEW_TAB_WAIT if aftermath.window_opened else 0.01)
    note = aftermath.notes()
    if info is None:
        if tab.closed:
            return note + " The tab closed itself."
        return note
    try:
        new_tab = await _follow(browser, info)
    except TabClosed:  # e.g. a popup to a domain the task may not reach, closed by the guard
        return note + " It opened a new tab, which closed at once; this tab is still the active one."
    number = browser.tab_number(new_tab.target_id)
    title = await _safe_title(new_tab)
    return note + f" It opened a new tab (tab {number}: '{shorten(title)}', {await _safe_url(new_tab)}), " \
                  "which is now the active tab."


async def _follow(browser: Browser, info: TabInfo) -> Tab:
    tab = await browser.activate(info.target_id)
    # The new tab starts on about:blank before it navigates to where the link points.
    deadline = asyncio.get_running_loop().time() + NEW_TAB_WAIT
    while asyncio.get_running_loop().time() < deadline and not (tab.closed or tab.session.connection.closed):
        if await _safe_url(tab) not in ("about:blank", ""):
            break
        await asyncio.sleep(0.05)
    await tab.wait_for_load(timeout=max(1.0, deadline - asyncio.get_running_loop().time()))
    return tab


async def _safe_url(tab: Tab) -> str:
    try:
        return await tab.url()
    except (BrowserError, CDPError):
        return ""


async def _safe_title(tab: Tab) -> str:
    try:
        return await tab.title()
    except (BrowserError, CDPError):
        return ""


# --- pointer ---------------------------------------------------------------------------------------
async def click(browser: Browser, tab: Tab, element: ElementRef) -> str:
    check_open(tab)
    object_id = await resolve(tab, element)
    kind = await call(tab, element, object_id, scripts.CLICK_KIND)
    if kind == "file":
        raise ActionError(
            f"{describe(element)} is a file input: clicking it opens the system file dialog, which the agent "
            "cannot use. Use upload_file with the file's path instead."
        )
    if kind == "option":  # an <option> of a native dropdown has no box of its own to click
        select = await call(tab, element, object_id, "function() { return this.closest('select'); }", by_value=False)
        text = await call(tab, element, object_id, "function() { return this.text; }")
        return await select_option(browser, tab, await ref_for_object(tab, element, select["objectId"]), text)
    target = await aim(tab, element, object_id)
    async with _watch(browser, tab) as aftermath:
        await mouse_click(tab, target.x, target.y)
        after = await _after_input(browser, tab, aftermath)
    if target.covered_by:
        result = (f"{describe(element)} is covered by {target.covered_by} at that spot, "
                  "so the click landed on that instead.")
    else:
        result = f"Clicked {describe(element)}."
        if not (aftermath.load_started or tab.closed or after):
            result += await _state_after_click(tab, element, object_id)
    if kind == "select":
        result += " It is a dropdown: use select_option with an option's text to choose from it."
    return result + after


async def _state_after_click(tab: Tab, element: ElementRef, object_id: str) -> str:
    """For toggles: "; it is now checked." — so the model need not read the page to know."""
    try:
        state = await call(tab, element, object_id, scripts.TOGGLE_STATE)
    except BrowserError:
        return ""
    return f" It is now {state}." if state else ""


async def hover(browser: Browser, tab: Tab, element: ElementRef) -> str:
    check_open(tab)
    object_id = await resolve(tab, element)
    target = await aim(tab, element, object_id)
    await mouse_move(tab, target.x, target.y)
    if target.covered_by:
        return f"{describe(element)} is covered by {target.covered_by}, so the mouse is over that instead."
    return f"The mouse is over {describe(element)}."


# --- typing ----------------------------------------------------------------------------------------
async def input_text(
    browser: Browser, tab: Tab, element: ElementRef, text: str, *, secrets: Sequence[str] = ()
) -> str:
    """Type `text` into the field. `secrets`: the names of the stored secrets whose values `text` holds; then
    the field it would go into must be one where a credential belongs (privacy/fields.py), else nothing is typed."""
    check_open(tab)
    object_id = field_id = await resolve_unchecked(tab, element)
    info = await call(tab, element, object_id, scripts.TEXT_FIELD_HERE)
    if info.get("stale"):
        raise stale_error(element)
    if info.get("problem"):
        raise ActionError(f"Cannot type into {describe(element)}: {info['problem']}.")
    target = element
    try:
        if info.get("elsewhere"):  # a label's control, the one field inside a wrapper
            field = await call(tab, element, object_id, scripts.FIND_TEXT_FIELD, by_value=False)
            if field.get("subtype") != "node":
                problem = field.get("value") or "it is not a text field"
                raise ActionError(f"Cannot type into {describe(element)}: {problem}.")
            field_id = field["objectId"]
            target = await ref_for_object(tab, element, field_id, element.name)
            info = await call(tab, target, field_id, scripts.TEXT_FIELD_HERE)
        if secrets:  # checked on the field the text goes into, whichever element (a label, a wrapper) was named
            from ..privacy.fields import FACTS, credential_field, refusal

            shown_as_password = target is element and element.attributes.get("type") == "password"
            if credential_field(await call(tab, target, field_id, FACTS), shown_as_password=shown_as_password) is None:
                raise ActionError(refusal(secrets, describe(element)))
        if info["mode"] == "set":
            value = await call(tab, target, field_id, scripts.SET_VALUE, text)
        else:
            if "hadContent" in info:  # it had the focus: its content is selected already
                had_content = info["hadContent"]
            else:
                await _focus(browser, tab, target, field_id)
                had_content = await call(tab, target, field_id, scripts.SELECT_ALL_CONTENT)
            await _type(tab, target, text, multiline=info["multiline"], clear_first=bool(had_content))
            value = await call(tab, target, field_id, scripts.READ_VALUE)
    finally:
        if field_id != object_id:
            await release(tab, element.session, field_id)
    await tab.settle(navigation_grace=0)
    # The state marks a field that was a password field when read as one, whatever its type is now.
    if is_password_input(info["tag"], info["attrs"]) or element.attributes.get("type") == "password":
        return f"Typed {len(text)} characters into {describe(element)} (a password field; its value is not shown)."
    said = f"Typed '{shorten(text, 200)}' into {describe(element)}"
    if value == text:
        return f"{said}; its value is now '{shorten(value, 200)}'."
    return f"{said}, but the page changed it: its value is now '{shorten(value or '', 200)}'."


async def _type(tab: Tab, element: ElementRef, text: str, *, multiline: bool, clear_first: bool) -> None:
    """Type like a keyboard (keydown, keypress, input, keyup per character) so pages that listen to keys see
    them; characters no US key makes, and long texts, go in as text (one input event). `clear_first`: press
    Delete before (the field's content is selected), sent with the rest rather than awaited on its own."""
    commands: list[tuple[str, dict[str, Any]]] = []
    if clear_first:
        commands.extend(("Input.dispatchKeyEvent", event) for event in key_events(parse_chord("Delete")))
    if len(text) > TYPE_BY_KEYS_LIMIT:
        commands.append(("Input.insertText", {"text": text}))
        await _send_in_order(tab, element, commands)
        return
    pending = ""
    for char in text.replace("\r\n", "\n"):
        if char == "\n" and not multiline:
            continue  # a one-line field has no line breaks (and Enter would submit its form)
        events = key_events(parse_chord("Enter")) if char == "\n" else typing_events(char)
        if events is None:
            pending += char
            continue
        if pending:
            commands.append(("Input.insertText", {"text": pending}))
            pending = ""
        commands.extend(("Input.dispatchKeyEvent", event) for event in events)
    if pending:
        commands.append(("Input.insertText", {"text": pending}))
    await _send_in_order(tab, element, commands)


TYPING_WINDOW = INPUT_WINDOW  # why 64: cdp/transport.py


async def _send_in_order(tab: Tab, element: ElementRef | None, commands: list[tuple[str, dict[str, Any]]]) -> None:
    """Send input commands without awaiting each reply before the next: Chromium runs one session's commands
    in the order they arrive, so the page still sees every event, in order (tests/test_actions_forms.py
    checks). A sliding window: the next command goes out as soon as the oldest in flight is answered,
    rather than a batch waiting for its slowest reply. 100 characters (~200 key events), load ~12 on 2
    cores: awaited one by one 470 ms (websocket) / 1480 ms (relay); in batches of 64 awaited whole,
    204 / 336 ms. What is left is mostly Chromium's own work per key event (bench_typing prints the CPU:
    ~90 ms of the page's renderer and ~60 ms of the browser process per 100 characters, at load 14).
    Over the extension relay the whole run goes in one frame and the worker keeps the window, next to
    chrome.debugger: paced from here, chrome.debugger sat idle for each window's round trip to the host."""
    if tab.session.connection.paces_input:
        await send_input_run(tab, commands, element=element)
        return
    in_flight: deque[asyncio.Task[dict[str, Any]]] = deque()
    try:
        for method, params in commands:
            if len(in_flight) >= TYPING_WINDOW:
                await in_flight.popleft()
            in_flight.append(asyncio.ensure_future(send(tab, tab.session, method, params, element=element)))
        while in_flight:
            await in_flight.popleft()
    finally:
        # A failure (a takeover, a closed tab) stops what is not sent yet; what is in flight is awaited so
        # no reply is left unread.
        for task in in_flight:
            task.cancel()
        await asyncio.gather(*in_flight, return_exceptions=True)


async def _focus(browser: Browser, tab: Tab, element: ElementRef, object_id: str) -> None:
    """Click the field as a person would (giving the frame focus too); it has not got the focus."""
    target = await aim(tab, element, object_id)
    if target.covered_by is None:
        async with _watch(browser, tab) as aftermath:
            await mouse_click(tab, target.x, target.y)
            await asyncio.sleep(0)
        if aftermath.dialogs:
            raise ActionError(f"Clicking {describe(element)} to type into it made the page react:{aftermath.notes()}")
    if not await call(tab, element, object_id, scripts.HAS_FOCUS):
        await send(tab, element.session, "DOM.focus", {"backendNodeId": await node_id(tab, element)}, element=element)
        if not await call(tab, element, object_id, scripts.HAS_FOCUS):
            raise ActionError(f"{describe(element)} does not take keyboard focus, so text cannot be typed into it.")
    if element.frame_owner is not None:
        # Keys go to the frame the browser considers focused; after a click into another renderer's frame
        # that news can lag behind the click on a busy machine.
        for _ in range(40):
            if await call(tab, element, object_id, scripts.DOCUMENT_HAS_FOCUS):
                break
            await asyncio.sleep(0.025)


async def send_keys(browser: Browser, tab: Tab, keys: str) -> str:
    check_open(tab)
    chords = parse_keys(keys)
    async with _watch(browser, tab) as aftermath:
        for chord in chords:
            for event in key_events(chord):
                await send(tab, tab.session, "Input.dispatchKeyEvent", event)
        after = await _after_input(browser, tab, aftermath)
    return f"Pressed {', then '.join(str(c) for c in chords)}." + after


async def _press(tab: Tab, keys: str) -> None:
    for chord in parse_keys(keys):
        for event in key_events(chord):
            await send(tab, tab.session, "Input.dispatchKeyEvent", event)


# --- choosing --------------------------------------------------------------------------------------
async def select_option(browser: Browser, tab: Tab, element: ElementRef, text: str) -> str:
    check_open(tab)
    if not text.strip():
        raise ActionError("Say which option to choose: give its visible text.")
    object_id = await resolve(tab, element)
    kind = await call(tab, element, object_id, scripts.CHOICE_KIND)
    if kind == "native":
        async with _watch(browser, tab) as aftermath:
            outcome = await call(tab, element, object_id, scripts.SELECT_NATIVE_OPTION, text)
            if not outcome["ok"]:
                raise ActionError(f"Cannot choose '{shorten(text)}' in {describe(element)}: {outcome['why']}.")
            after = await _after_input(browser, tab, aftermath)
        return f"Selected '{shorten(outcome['chosen'])}' in {describe(element)}." + after
    if kind == "none":
        raise ActionError(
            f"{describe(element)} is not a dropdown or list of options; click it instead, or choose a "
            "<select>, combobox or listbox element."
        )
    return await _select_aria_option(browser, tab, element, object_id, kind, text)


async def _select_aria_option(
    browser: Browser, tab: Tab, element: ElementRef, object_id: str, kind: str, text: str
) -> str:
    if kind == "option":
        option_id: str | None = object_id
    else:
        opened = False
        if kind == "combobox" and not await call(tab, element, object_id, scripts.IS_EXPANDED):
            target = await aim(tab, element, object_id)
            await mouse_click(tab, target.x, target.y)
            opened = True
        found = await call(tab, element, object_id, scripts.FIND_ARIA_OPTION, text, 2000, by_value=False)
        if found.get("subtype") != "node" and kind == "combobox" and await call(
            tab, element, object_id, scripts.IS_TEXT_FIELD
        ):
            await input_text(browser, tab, element, text)  # a filtering combobox shows options as you type
            found = await call(tab, element, object_id, scripts.FIND_ARIA_OPTION, text, 2000, by_value=False)
        if found.get("subtype") != "node":
            if opened:
                await _press(tab, "Escape")  # leave the list closed, as it was
            why = found.get("value") or "no such option"
            raise ActionError(f"Cannot choose '{shorten(text)}' in {describe(element)}: {why}.")
        option_id = found["objectId"]
    assert option_id is not None
    option = await ref_for_object(tab, element, option_id)
    option.name = await call(tab, option, option_id, scripts.VISIBLE_TEXT)
    option_text = option.name
    target = await aim(tab, option, option_id)
    async with _watch(browser, tab) as aftermath:
        await mouse_click(tab, target.x, target.y)
        after = await _after_input(browser, tab, aftermath)
    if target.covered_by:
        return (f"The option '{shorten(option_text)}' is covered by {target.covered_by}, "
                "so the click landed on that instead." + after)
    shown = ""
    if kind != "option" and not tab.closed:
        try:
            shown = await call(tab, element, object_id, scripts.SHOWN_CHOICE)
        except ActionError:
            shown = ""
    result = f"Selected '{shorten(option_text)}' in {describe(element)}"
    if shown and shown != option_text:
        result += f"; it now shows '{shorten(shown)}'"
    return result + "." + after


# --- scrolling -------------------------------------------------------------------------------------
async def scroll(
    browser: Browser,
    tab: Tab,
    *,
    down: bool,
    num_pages: float = 1.0,
    pixels: int | None = None,
    element: ElementRef | None = None,
) -> str:
    return await _scroll(tab, "y", forward=down, num_pages=num_pages, pixels=pixels, element=element)


async def scroll_horizontally(
    browser: Browser, tab: Tab, *, right: bool, pixels: int | None = None, element: ElementRef | None = None
) -> str:
    return await _scroll(tab, "x", forward=right, num_pages=1.0, pixels=pixels, element=element)


DIRECTION_WORDS = {("y", True): ("down", "below", "bottom"), ("y", False): ("up", "above", "top"),
                   ("x", True): ("right", "to the right", "right edge"),
                   ("x", False): ("left", "to the left", "left edge")}


async def _scroll(
    tab: Tab, axis: str, *, forward: bool, num_pages: float, pixels: int | None, element: ElementRef | None
) -> str:
    check_open(tab)
    if pixels is not None and pixels <= 0:
        raise ActionError("Give a positive number of pixels to scroll; pick the direction with down/right.")
    if pixels is None and not num_pages > 0:
        raise ActionError("Give a positive number of pages to scroll; pick the direction with down/right.")
    args = [axis, 1 if forward else -1, pixels, num_pages]
    if element is None:
        outcome = await tab.evaluate(f"({scripts.SCROLL})(null, {json.dumps(args)[1:-1]})")
        subject = "the page"
    else:
        object_id = await resolve(tab, element)
        outcome = await call(tab, element, object_id, scripts.SCROLL_WRAPPED, *args)
        subject = describe(element)
    verb, beyond, edge = DIRECTION_WORDS[(axis, forward)]
    if outcome["scroller"] is None:
        return f"{subject[0].upper()}{subject[1:]} cannot scroll {verb}, and neither can anything around it."
    scroller = outcome["scroller"]
    if scroller == "the page":
        subject = "the page"
    elif scroller != "self" and element is not None:
        subject = f"{scroller} (the scrolling area around {describe(element)})"
    elif scroller != "self":
        subject = f"{scroller} (the part of the page that scrolls)"
    moved, remaining = round(abs(outcome["moved"])), round(outcome["remaining"])
    if moved == 0:
        return f"{subject[0].upper()}{subject[1:]} is already at the {edge}; there is nothing more to scroll {verb}."
    rest = f"{remaining}px more {beyond}" if remaining > 0 else f"now at the {edge}"
    return f"Scrolled {subject} {verb} {moved}px; {rest}."


# --- files -----------------------------------------------------------------------------------------
async def upload_file(browser: Browser, tab: Tab, element: ElementRef, paths: list[str]) -> str:
    check_open(tab)
    if not paths:
        raise ActionError("Give the path of the file to upload.")
    files = await asyncio.to_thread(_existing_files, paths)
    object_id = await resolve(tab, element)
    found = await call(tab, element, object_id, scripts.FIND_FILE_INPUT, by_value=False)
    if found.get("subtype") != "node":
        raise ActionError(f"{describe(element)} is not a file upload field and holds none.")
    input_id = found["objectId"]
    target = await ref_for_object(tab, element, input_id) if input_id != object_id else element
    if len(files) > 1 and not await call(tab, target, input_id, "function() { return this.multiple; }"):
        raise ActionError(f"{describe(element)} takes only one file.")
    async with _watch(browser, tab) as aftermath:
        await send(tab, target.session, "DOM.setFileInputFiles",
                   {"files": [str(f) for f in files], "backendNodeId": await node_id(tab, target)}, element=element)
        count = await call(tab, target, input_id, "function() { return this.files.length; }")
        if input_id != object_id:
            await release(tab, element.session, input_id)
        after = await _after_input(browser, tab, aftermath)  # some pages send the file as soon as it is chosen
    names = ", ".join(f"{f.name} ({_size(f.stat().st_size)})" for f in files)
    return f"Attached {names} to {describe(element)}; it now holds {count} file{'s' if count != 1 else ''}." + after


# Folders whose files must never be sent to a web page: tabpilot's own (API keys, task history) and the
# usual homes of credentials.
CREDENTIAL_FOLDERS = (".ssh", ".gnupg", ".aws", ".kube", ".docker", ".config/gcloud", ".password-store")
CREDENTIAL_FILES = (".netrc", ".pgpass", ".git-credentials")


def _guarded_folders() -> list[Path]:
    home = Path.home()
    return [paths.config_dir().resolve(), paths.data_dir().resolve(), paths.log_dir().resolve(),
            *((home / name).resolve() for name in CREDENTIAL_FOLDERS)]


def _guarded(raw_path: str) -> bool:
    """Whether the file is tabpilot's own or where credentials are kept: never for a web page."""
    path = Path(os.path.expanduser(raw_path)).resolve()
    return path.name in CREDENTIAL_FILES or any(path.is_relative_to(folder) for folder in _guarded_folders())


def _existing_files(raw_paths: list[str]) -> list[Path]:
    files = []
    for raw in raw_paths:
        path = Path(os.path.expanduser(raw)).resolve()
        if not path.is_file():
            raise ActionError(f"There is no file at {raw}: upload only files that exist on this computer.")
        if _guarded(raw):
            raise ActionError(
                f"{raw} is not uploaded: it is in tabpilot's own files or where credentials are kept. "
                "If it really must go, the user can upload it by hand."
            )
        files.append(path)
    return files


def _size(size: int) -> str:
    if size < 1024:
        return f"{size} bytes"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / 1024 / 1024:.1f} MB"


# --- navigation and tabs ---------------------------------------------------------------------------
def normalize_url(url: str) -> str:
    """What the model wrote → a URL to open; adds https:// to a bare host, refuses script URLs."""
    url = url.strip()
    if not url:
        raise ActionError("Give the URL to open.")
    scheme = urlsplit(url).scheme.lower()
    if scheme == "javascript":
        raise ActionError("javascript: URLs are not opened; use execute_javascript to run a script.")
    if scheme in ("http", "https", "file", "about", "data", "chrome", "edge", "brave", "view-source", "blob"):
        return url
    if scheme and "." not in scheme and not url[len(scheme) + 1:].isdigit() and scheme != "localhost":
        return url  # some other app or browser scheme the user's browser may know
    return ("http://" if url.startswith(("localhost", "127.0.0.1", "[::1]")) else "https://") + url


# What the model may open: web pages. The browser's own pages, view-source:, other programs' schemes and files on
# this computer are refused (a hostile page could otherwise have the agent read ~/.ssh or tabpilot's settings, the
# API key in them, and carry it off): a file: page only from a tab showing one already (the person started the task
# on a file of theirs), and never one in tabpilot's own folders or where credentials are kept.
WEB_SCHEMES = ("http", "https", "data")


async def _may_open(url: str, tab: Tab | None) -> None:
    """Raise ActionError, worded for the model, unless the model may open `url` (normalized) from `tab`."""
    if url == "about:blank":
        return
    scheme = urlsplit(url).scheme.lower()
    if scheme in WEB_SCHEMES:
        return
    if scheme == "file":
        shown = await _safe_url(tab) if tab is not None and not tab.closed else ""
        if not shown.lower().startswith("file:"):
            raise ActionError(f"{url} is a file on this computer, not a web page: only web pages (http:// or "
                              "https://) are opened. The user can start a task on a file of theirs (--url).")
        if _guarded(unquote(urlsplit(url).path)):
            raise ActionError(f"{url} is not opened: it is in tabpilot's own files or where credentials are kept.")
        return
    raise ActionError(f"{url} is not a web page ({scheme}: is the browser's own or another program's): only web "
                      "pages (http:// or https://) are opened.")


async def go_to_url(browser: Browser, tab: Tab, url: str, *, new_tab: bool = False) -> str:
    target = normalize_url(url)
    await _may_open(target, tab)
    if new_tab:
        return await open_tab(browser, target, from_tab=tab)
    check_open(tab)
    async with _watch(browser, tab) as aftermath:
        await _navigate(tab, target)
        note = aftermath.notes()
    return f"Opened {await _safe_url(tab)} ('{shorten(await _safe_title(tab))}').{note}"


async def _navigate(tab: Tab, url: str, *, timeout: float = 30.0) -> None:
    """Open url in tab and wait for it to load. (Listens for the load before asking for the navigation, so
    a fast page that finishes before the reply is not missed.)"""
    stopped: set[str] = set()
    changed = asyncio.Event()

    def on_stopped(params: dict[str, Any]) -> None:
        stopped.add(params.get("frameId", ""))
        changed.set()

    tab.session.on("Page.frameStoppedLoading", on_stopped)
    try:
        reply = await request_navigation(tab, url, timeout=timeout)
        failed = reply.get("errorText")
        # A new document (not just a jump within the page), Chromium's error page for a failed one too: waited
        # for, so that it is part of this action and not a change the agent finds on the page afterwards.
        if reply.get("loaderId"):
            frame_id = reply.get("frameId", tab.main_frame_id)
            try:
                async with asyncio.timeout(ERROR_PAGE_WAIT if failed else timeout):
                    while frame_id not in stopped:
                        changed.clear()
                        await tab.unless_gone(changed.wait(), "waiting for the page to load")
            except TimeoutError:
                if not failed:
                    return  # still loading: a slow page is still a page the agent can look at
        if failed:
            raise ActionError(f"Could not open {url}: {failed}.")
        await tab.wait_for_load(timeout=5)
    finally:
        tab.session.off("Page.frameStoppedLoading", on_stopped)


async def go_back(browser: Browser, tab: Tab) -> str:
    check_open(tab)
    history = await send(tab, tab.session, "Page.getNavigationHistory")
    index = history["currentIndex"]
    if index <= 0:
        raise ActionError("There is no previous page in this tab's history to go back to.")
    entry = history["entries"][index - 1]
    async with _watch(browser, tab) as aftermath:
        await send(tab, tab.session, "Page.navigateToHistoryEntry", {"entryId": entry["id"]})
        await _settle(tab, aftermath)
        await tab.wait_for_load(timeout=15)
        note = aftermath.notes()
    return f"Went back to {await _safe_url(tab)} ('{shorten(await _safe_title(tab))}').{note}"


async def open_tab(browser: Browser, url: str, *, from_tab: Tab | None = None) -> str:
    """Open `url` in a new tab, as the model asked from `from_tab` (what it may open: _may_open)."""
    target = normalize_url(url)
    await _may_open(target, from_tab)
    tab = await browser.new_tab()
    await _navigate(tab, target)
    number = browser.tab_number(tab.target_id)
    title = shorten(await _safe_title(tab))
    return f"Opened tab {number} with {await _safe_url(tab)} ('{title}'); it is now the active tab."


async def _open_tabs(browser: Browser) -> list[tuple[int, TabInfo]]:
    return [(browser.tab_number(info.target_id), info) for info in await browser.tabs()]


def _tab_list(tabs: list[tuple[int, TabInfo]]) -> str:
    return "; ".join(f"{n} '{shorten(info.title, 40)}'" for n, info in sorted(tabs, key=lambda t: t[0]))


async def _find_tab(browser: Browser, tab_number: int) -> tuple[TabInfo, list[tuple[int, TabInfo]]]:
    tabs = await _open_tabs(browser)
    for number, info in tabs:
        if number == tab_number:
            return info, tabs
    known = browser.target_for_number(tab_number)
    if known is not None:
        browser.refuse_held(known)  # seen before another task took it: said so, not "no such tab"
    raise ActionError(f"There is no open tab {tab_number}. Open tabs: {_tab_list(tabs)}.")


async def switch_tab(browser: Browser, tab_number: int) -> str:
    info, _ = await _find_tab(browser, tab_number)
    tab = await browser.activate(info.target_id)
    return f"Switched to tab {tab_number} ({await _safe_url(tab)}, '{shorten(await _safe_title(tab))}')."


async def close_tab(browser: Browser, tab_number: int) -> str:
    info, tabs = await _find_tab(browser, tab_number)
    others = [(n, t) for n, t in tabs if t.target_id != info.target_id]
    if not others:
        raise ActionError(f"Tab {tab_number} is the only open tab, so it stays open.")
    was_active = browser.active is None or browser.active.target_id == info.target_id
    try:
        await browser.close_tab(info.target_id)
    except CDPError as exc:
        if exc.kind is not CDPErrorKind.TARGET_GONE:
            raise ActionError(f"Could not close tab {tab_number}: {exc.cdp_message}") from exc
    for _ in range(100):  # closing is asynchronous: wait until the browser no longer lists it
        if all(t.target_id != info.target_id for t in await browser.tabs()):
            break
        await asyncio.sleep(0.05)
    result = f"Closed tab {tab_number}."
    if was_active:  # back to the tab worked in before it (never one of the person's own), as after any close
        try:
            now = await browser.current_tab()
        except TabClosed:
            return result + " No other tab this task worked in is open: open one (go_to_url with new_tab) to go on."
        await browser.activate(now.target_id)
        number = browser.tab_number(now.target_id)
        title = next((t.title for _, t in others if t.target_id == now.target_id), "")
        result += f" Tab {number} ('{shorten(title)}') is now the active tab."
    return result


# --- reading ---------------------------------------------------------------------------------------
async def read_text(browser: Browser, tab: Tab, element: ElementRef) -> str:
    """An element's whole text, or a field's whole value: what the page text shows cut short."""
    check_open(tab)
    if element.attributes.get("type") == "password" or is_password_input(element.tag, element.attributes):
        raise ActionError(f"{describe(element)} is a password field: its value is never shown.")
    object_id = await resolve(tab, element)
    found = await call(tab, element, object_id, scripts.READ_TEXT)
    if not isinstance(found, dict) or found.get("secret"):
        raise ActionError(f"{describe(element)} is a password field: its value is never shown.")
    raw = found.get("text")
    text = withhold(raw if isinstance(raw, str) else "", await _password_values(tab)).strip()
    if not text:
        return f"{describe(element)} holds no text."
    if len(text) > READ_TEXT_LIMIT:
        return (f"The first {READ_TEXT_LIMIT} of {len(text)} characters of {describe(element)} (read a smaller "
                f"element inside it for the rest):\n{text[:READ_TEXT_LIMIT]}")
    return f"The text of {describe(element)} ({len(text)} characters):\n{text}"


# --- scripts ---------------------------------------------------------------------------------------
async def execute_javascript(browser: Browser, tab: Tab, script: str, *, timeout: float = 15.0) -> str:
    """Run the script in the page's top document: an expression, statements, `await` and `return` all work."""
    check_open(tab)
    if not script.strip():
        raise ActionError("Give the JavaScript to run.")
    secrets = await _password_values(tab)
    async with _watch(browser, tab) as aftermath:
        try:
            try:
                # REPL mode: top-level await, the last expression's value, `let` that may run twice
                result = await _run_script(tab, script, timeout, repl=True)
            except PageScriptError as exc:
                if "Illegal return statement" not in str(exc):
                    raise
                # a function body ("...; return x"): a syntax error, so nothing ran yet
                result = await _run_script(tab, f"(async () => {{\n{script}\n}})()", timeout, repl=False)
        except (PageScriptError, ActionError) as exc:
            secrets |= await _password_values(tab)
            return f"The script failed: {withhold(shorten(str(exc), 500), secrets)}"
        secrets |= await _password_values(tab)
        after = withhold(await _after_input(browser, tab, aftermath), secrets)  # e.g. alert(password.value)
    if result is None:
        return "The script ran and returned nothing." + after
    result = withhold(result, secrets)
    text = result if len(result) <= RESULT_LIMIT else result[:RESULT_LIMIT] + f"… ({len(result)} characters)"
    return f"The script returned: {text}" + (f"\n{after.strip()}" if after else "")


async def _password_values(tab: Tab) -> set[str]:
    """What the page's password fields hold (also those a "show password" button made plain text since
    tabpilot saw them), so a script cannot hand a password to the model."""
    try:
        frame_id = tab.main_frame_id or (await tab.send("Page.getFrameTree"))["frameTree"]["frame"]["id"]
        world = await tab.send("Page.createIsolatedWorld", {"frameId": frame_id, "worldName": WORLD_NAME})
        reply = await tab.send("Runtime.evaluate", {
            "expression": scripts.INPUT_VALUES, "contextId": world["executionContextId"], "returnByValue": True},
            timeout=5)
    except (BrowserError, CDPError):
        return set()
    inputs = reply.get("result", {}).get("value")
    return {
        field["value"] for field in inputs or []
        if isinstance(field, dict) and isinstance(field.get("value"), str)
        and (field.get("was_password") or is_password_input("input", field.get("attrs") or {}))
    }


async def _run_script(tab: Tab, script: str, timeout: float, *, repl: bool) -> str | None:
    reply = await send(tab, tab.session, "Runtime.evaluate",
                       {"expression": script, "awaitPromise": True, "replMode": repl, "userGesture": True,
                        "returnByValue": False}, timeout=timeout)
    if "exceptionDetails" in reply:
        details = reply["exceptionDetails"]
        raise PageScriptError(details.get("exception", {}).get("description") or details.get("text", "error"))
    result = reply.get("result", {})
    kind = result.get("type")
    if kind == "undefined":
        return None
    if "objectId" not in result:
        value = result.get("value", result.get("unserializableValue", result.get("description")))
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    object_id = result["objectId"]
    try:
        if result.get("subtype") == "node":
            return str(result.get("description", "a DOM node"))
        reply = await send(tab, tab.session, "Runtime.callFunctionOn",
                           {"objectId": object_id, "returnByValue": True,
                            "functionDeclaration": "function() { try { return JSON.stringify(this); } "
                                                   "catch (e) { return null; } }"})
        text = reply.get("result", {}).get("value")
        return text if isinstance(text, str) else str(result.get("description", "an object"))
    finally:
        await release(tab, tab.session, object_id)


__all__ = [
    "click", "close_tab", "element_at", "execute_javascript", "go_back", "go_to_url", "hover", "input_text",
    "normalize_url", "open_tab", "read_text", "scroll", "scroll_horizontally", "select_option", "send_keys",
    "switch_tab", "upload_file",
]
