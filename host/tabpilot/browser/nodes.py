"""Reaching the DOM node behind an ElementRef: resolving it, calling page functions on it, and turning
CDP failures (node gone, frame gone, tab gone) into errors the model can act on."""

from __future__ import annotations

from typing import Any

from ..cdp import CDPConnectionClosed, CDPError, CDPErrorKind, CDPSession, CDPTimeout
from ..cdp.transport import INPUT_WINDOW
from .elements import ElementRef
from .errors import ActionError, BrowserError, NavigationFailed, TabClosed
from .tab import Tab

# A command about an element whose node or document is gone: the element is no longer on the page.
STALE = (CDPErrorKind.NODE_GONE, CDPErrorKind.CONTEXT_GONE)
ELEMENT_TIMEOUT = 10.0
INPUT_KINDS = {"checkbox": "checkbox", "radio": "radio button", "file": "file input", "password": "password field",
               "submit": "button", "button": "button", "reset": "button", "range": "slider", "date": "date field"}


def shorten(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


DIALOG_KINDS = {"alert": "an alert", "confirm": "a confirmation", "prompt": "a prompt",
                "beforeunload": "a 'leave page?' question"}


def dialog_note(kind: str, message: str) -> str:
    """What the model is told of a JavaScript dialog tabpilot accepted (an action's result, or a page's state)."""
    return f"The page showed {DIALOG_KINDS.get(kind, 'a dialog')} saying '{shorten(message, 200)}', which was accepted."


def describe(element: ElementRef) -> str:
    """How results name an element: "[12] button 'Save'"."""
    kind = element.role or element.tag or "element"
    if not element.role and element.tag == "input" and element.attributes.get("type") in INPUT_KINDS:
        kind = INPUT_KINDS[element.attributes["type"]]
    name = f" '{shorten(element.name)}'" if element.name else ""
    return f"[{element.index}] {kind}{name}"


def stale_error(element: ElementRef) -> ActionError:
    return ActionError(
        f"{describe(element)} is no longer on the page (the page changed since it was read). "
        "Look at the current page state and use an index from it."
    )


def check_open(tab: Tab) -> None:
    if tab.closed:
        raise TabClosed("The tab the agent was working in has been closed. Switch to an open tab.")


def _is_tab_session(tab: Tab, session: CDPSession) -> bool:
    return session is tab.session or session.session_id == tab.session.session_id


async def send(
    tab: Tab,
    session: CDPSession,
    method: str,
    params: dict[str, Any] | None = None,
    *,
    element: ElementRef | None = None,
    timeout: float = ELEMENT_TIMEOUT,
) -> dict[str, Any]:
    """session.send, with every failure mapped to BrowserError/ActionError/TabClosed. Input.* is logged
    as this host's own input, or refused while the user has the controls."""
    check_open(tab)
    is_input = method.startswith("Input.")
    if is_input and tab.input_log.refused:
        raise ActionError(tab.input_log.refused)
    try:
        with tab.input_log.dispatching(is_input):
            return await session.send(method, params, timeout=timeout)
    except CDPError as exc:
        raise _failure(tab, session, method, exc, element, timeout) from exc


async def send_input_run(tab: Tab, commands: list[tuple[str, dict[str, Any]]], *, element: ElementRef | None) -> None:
    """A run of input commands to the tab at once, for a transport that paces them itself
    (`CDPConnection.paces_input`), logged as this host's own input; failures mapped as `send` maps them."""
    check_open(tab)
    if tab.input_log.refused:
        raise ActionError(tab.input_log.refused)
    session = tab.session
    try:
        with tab.input_log.dispatching():
            # one timeout for the run: as long as each window of it would have had (a long text takes seconds)
            windows = -(-len(commands) // INPUT_WINDOW)
            await session.connection.send_run(commands, session_id=session.session_id,
                                              timeout=ELEMENT_TIMEOUT * max(1, windows))
    except CDPError as exc:
        raise _failure(tab, session, exc.method, exc, element) from exc


async def request_navigation(tab: Tab, url: str, *, timeout: float) -> dict[str, Any]:
    """Tab.request_navigation, with its failures mapped as `send` maps a command's."""
    check_open(tab)
    try:
        return await tab.request_navigation(url, timeout=timeout)
    except NavigationFailed as exc:
        raise ActionError(f"Could not open {url}: {exc.error}; the tab still shows the page before.") from None
    except CDPError as exc:
        raise _failure(tab, tab.session, "Page.navigate", exc, None, timeout) from exc


def _failure(tab: Tab, session: CDPSession, method: str, exc: CDPError, element: ElementRef | None,
             timeout: float = ELEMENT_TIMEOUT) -> BrowserError:
    """The error to raise for a failed command, in words the model can act on."""
    if isinstance(exc, CDPTimeout):
        return ActionError(
            f"The page did not respond within {timeout:g} s ({method}); it may be busy or showing a dialog.")
    if isinstance(exc, CDPConnectionClosed):
        return BrowserError(f"The connection to the browser was lost: {exc.cdp_message}")
    if exc.kind is CDPErrorKind.TARGET_GONE:
        if _is_tab_session(tab, session) or tab.closed:
            tab.closed = True
            return TabClosed("The tab the agent was working in has been closed. Switch to an open tab.")
        what = describe(element) if element else "the element"
        return ActionError(
            f"The frame that held {what} is gone (it navigated away or was removed). "
            "Look at the current page state.")
    if element is not None and exc.kind in STALE:
        return stale_error(element)
    return ActionError(f"{method} failed: {exc.cdp_message}")


async def node_id(tab: Tab, element: ElementRef) -> int:
    """The element's backendNodeId, looked up now if the state reader left that to the first action."""
    if not element.backend_node_id and element.locate is not None:
        check_open(tab)
        try:
            found = await element.locate()
        except CDPError as exc:
            raise _failure(tab, element.session, "DOM.describeNode", exc, element) from exc
        if not found:
            raise stale_error(element)
        element.backend_node_id = found
    return element.backend_node_id


async def resolve(tab: Tab, element: ElementRef) -> str:
    """The element's JS object id, after checking it is still attached to its document."""
    object_id = await resolve_unchecked(tab, element)
    connected = await call(tab, element, object_id, "function() { return this.isConnected; }")
    if not connected:
        raise stale_error(element)
    return object_id


async def resolve_unchecked(tab: Tab, element: ElementRef) -> str:
    """The element's JS object id, which may name a node removed from its document: for a caller whose
    first page function checks `this.isConnected` itself (one round trip fewer than `resolve`)."""
    reply = await send(tab, element.session, "DOM.resolveNode", {"backendNodeId": await node_id(tab, element)},
                       element=element)
    object_id: str | None = reply["object"].get("objectId")
    if not object_id:
        raise stale_error(element)
    return object_id


async def document_url(tab: Tab, element: ElementRef) -> str:
    """The URL of the document the element is in (an iframe's own, not the tab's)."""
    object_id = await resolve(tab, element)
    try:
        return str(await call(tab, element, object_id, "function() { return this.ownerDocument.URL; }"))
    finally:
        await release(tab, element.session, object_id)


async def call(
    tab: Tab,
    element: ElementRef,
    object_id: str,
    function: str,
    *args: Any,
    by_value: bool = True,
    timeout: float = ELEMENT_TIMEOUT,
) -> Any:
    """Run `function` with `this` = the node; returns its value (or the remote object when by_value=False)."""
    arguments = [{"objectId": a.object_id} if isinstance(a, RemoteObject) else {"value": a} for a in args]
    reply = await send(
        tab,
        element.session,
        "Runtime.callFunctionOn",
        {
            "objectId": object_id,
            "functionDeclaration": function,
            "arguments": arguments,
            "returnByValue": by_value,
            "awaitPromise": True,
        },
        element=element,
        timeout=timeout,
    )
    if "exceptionDetails" in reply:
        details = reply["exceptionDetails"]
        text = details.get("exception", {}).get("description") or details.get("text", "script error")
        raise ActionError(f"The page raised an error while acting on {describe(element)}: {shorten(text, 200)}")
    result = reply.get("result", {})
    return result.get("value") if by_value else result


class RemoteObject:
    """A page object passed as an argument to `call`."""

    def __init__(self, object_id: str) -> None:
        self.object_id = object_id


async def ref_for_object(tab: Tab, base: ElementRef, object_id: str, name: str = "") -> ElementRef:
    """An ElementRef (same frame as `base`) for another node the page handed back, e.g. a list option."""
    node = (await send(tab, base.session, "DOM.describeNode", {"objectId": object_id}, element=base))["node"]
    return ElementRef(
        index=base.index,
        backend_node_id=node["backendNodeId"],
        session=base.session,
        tag=node.get("localName", ""),
        name=name,
        frame_owner=base.frame_owner,
    )


async def release(tab: Tab, session: CDPSession, object_id: str) -> None:
    try:
        await session.send("Runtime.releaseObject", {"objectId": object_id}, timeout=2)
    except CDPError:
        pass
