"""PROTOCOL.md, the extension's JS and the host's models name the same message types, direction by
direction, so a type added on one side and forgotten on another fails here (browser-free).

The models are the reference: `messages.frame_types(base)` lists every frame model of one direction
(a new model counts as soon as it subclasses its direction's base). From the JS this reads what the
code really sends and handles: the service worker's request allow-list and its own requests, the
pushes it posts, the `case`s of its host-request switch, the pushes it hands to popups; and from the
popup what it asks and which pushes it handles.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import get_args

import pytest

from tabpilot.native import messages
from tabpilot.native.host import NativeHost
from tabpilot.native.messages import HostErrorCode

ROOT = Path(__file__).resolve().parent.parent
SERVICE_WORKER = ROOT / "extension" / "service_worker.js"
POPUP = ROOT / "extension" / "popup.js"
PROTOCOL_MD = ROOT / "host" / "tabpilot" / "native" / "PROTOCOL.md"

# The four directions, each as PROTOCOL.md titles its table and as messages.py bases its models.
DIRECTIONS = {
    "Extension → host requests": messages.Request,
    "Extension → host pushes": messages.ExtensionPush,
    "Host → extension requests": messages.HostRequest,
    "Host → extension pushes": messages.HostPush,
}
TYPE_NAME = r"[a-z]+(?:\.[a-z]+)*"


def model_types() -> dict[str, set[str]]:
    return {direction: messages.frame_types(base) for direction, base in DIRECTIONS.items()}


# --- reading the JS -------------------------------------------------------------------------------------
def function_body(source: str, name: str) -> str:
    """The text of `function name(...) { ... }` (braces counted; the JS here has none in strings)."""
    found = re.search(rf"function {re.escape(name)}\s*\([^)]*\)\s*\{{", source)
    if found is None:
        raise AssertionError(f"no function {name} in the JS: update tests/test_protocol_contract.py")
    depth, position = 1, found.end()
    while depth:
        depth += {"{": 1, "}": -1}.get(source[position], 0)
        position += 1
    return source[found.end() : position - 1]


def set_constant(source: str, name: str) -> set[str]:
    """The strings of `const NAME = new Set([...])`."""
    found = re.search(rf"const {name} = new Set\(\[(.*?)\]\)", source, re.DOTALL)
    if found is None:
        raise AssertionError(f"no Set constant {name} in the JS: update tests/test_protocol_contract.py")
    return set(re.findall(r'"([^"]*)"', found.group(1)))


def worker_imports() -> str:
    """The scripts service_worker.js loads with importScripts, as one text."""
    imported = re.findall(r'importScripts\(\s*"([^"]+)"\s*\)', SERVICE_WORKER.read_text())
    return "\n".join((SERVICE_WORKER.parent / name).read_text() for name in imported)


def js_types(service_worker: str, imports: str = "") -> dict[str, set[str]]:
    """What the extension sends and handles, by direction (the worker talks to the host; the popup
    only through the worker, checked by `popup_types`). `imports` (the worker's importScripts) count
    for the requests they send the host; they also message content scripts, so their other `type`
    literals are not read as frames."""
    own_requests = set(re.findall(rf'requestHost\(\{{\s*type:\s*"({TYPE_NAME})"', service_worker + imports))
    sent_literals = set(re.findall(rf'\{{\s*type:\s*"({TYPE_NAME})"', service_worker))
    handled_by_type = set(re.findall(rf'message\.type === "({TYPE_NAME})"', service_worker))
    return {
        "Extension → host requests": own_requests | set_constant(service_worker, "POPUP_REQUEST_TYPES"),
        "Extension → host pushes": sent_literals - own_requests - {"reply"},
        "Host → extension requests": set(
            re.findall(r'case "([^"]+)":', function_body(service_worker, "handleHostRequest"))
        ),
        "Host → extension pushes": set_constant(service_worker, "TASK_PUSH_TYPES")
        | set_constant(service_worker, "BRIDGE_PUSH_TYPES") | (handled_by_type - {"reply"}),
    }


def popup_types(popup: str) -> tuple[set[str], set[str]]:
    """What the popup asks the host, and which pushes it handles."""
    asked = set(re.findall(r'\bask\(\s*"([^"]+)"', popup))
    handled = set(re.findall(r'case "([^"]+)":', function_body(popup, "onPush")))
    return asked, handled


# --- reading PROTOCOL.md --------------------------------------------------------------------------------
def protocol_md_types(text: str) -> dict[str, set[str]]:
    """The `type`s in the first column of each direction's table."""
    found: dict[str, set[str]] = {}
    sections = re.split(r"^## ", text, flags=re.MULTILINE)
    for section in sections:
        title = section.splitlines()[0] if section else ""
        direction = next((d for d in DIRECTIONS if title.startswith(d)), None)
        if direction is None:
            continue
        names: set[str] = set()
        for line in section.splitlines():
            cells = line.split("|")
            if line.startswith("|") and len(cells) > 2 and "---" not in cells[1]:
                names |= set(re.findall(rf"`({TYPE_NAME})`", cells[1]))
        found[direction] = names - {"type"}
    return found


def protocol_md_table(text: str, title: str) -> set[str]:
    """The backticked names in the first column of the table under `## title`."""
    section = re.split(r"^## ", text, flags=re.MULTILINE)
    body = next((part for part in section if part.startswith(title)), None)
    if body is None:
        raise AssertionError(f"PROTOCOL.md has no section {title!r}")
    rows = [line.split("|") for line in body.splitlines() if line.startswith("|")]
    return {name for cells in rows[2:] for name in re.findall(r"`([^`]+)`", cells[1])}


def mismatches(expected: dict[str, set[str]], found: dict[str, set[str]], where: str) -> list[str]:
    problems = []
    for direction, models in expected.items():
        listed = found.get(direction)
        if listed is None:
            problems.append(f"{where} has no list for {direction!r}")
            continue
        for name in sorted(models - listed):
            problems.append(f"{direction}: {name!r} is a model in messages.py but missing from {where}")
        for name in sorted(listed - models):
            problems.append(f"{direction}: {name!r} is in {where} but has no model in messages.py")
    return problems


# --- the checks -----------------------------------------------------------------------------------------
def test_the_extension_sends_and_handles_exactly_the_types_the_models_define():
    found = js_types(SERVICE_WORKER.read_text(), worker_imports())
    assert mismatches(model_types(), found, "extension/service_worker.js (+ its importScripts)") == []


def test_protocol_md_tables_list_exactly_the_types_the_models_define():
    assert mismatches(model_types(), protocol_md_types(PROTOCOL_MD.read_text()), "PROTOCOL.md") == []


def worker_made_pushes() -> set[str]:
    """The pushes the worker makes itself for the popup (`broadcast({ kind: "push", message: { type: … } })`), such as
    its word that a task's page took the overlay away: no host frame."""
    sources = [SERVICE_WORKER, *sorted((ROOT / "extension" / "worker").glob("*.js"))]
    pattern = r'kind:\s*"push",\s*message:\s*\{\s*type:\s*"([^"]+)"'
    return {found for source in sources for found in re.findall(pattern, source.read_text())}


def test_the_popup_asks_only_what_the_worker_forwards_and_handles_only_host_or_worker_pushes():
    asked, handled = popup_types(POPUP.read_text())
    forwarded = set_constant(SERVICE_WORKER.read_text(), "POPUP_REQUEST_TYPES")
    assert asked and asked <= forwarded, f"the worker refuses {sorted(asked - forwarded)} from the popup"
    host_pushes, own = messages.frame_types(messages.HostPush), worker_made_pushes()
    assert "task.overlay" in own
    assert handled and handled <= host_pushes | own, f"nobody sends {sorted(handled - host_pushes - own)}"
    wire = {name for names in model_types().values() for name in names}
    assert not (own - host_pushes) & wire, "a worker's own push is named as a frame of the wire"


def test_every_extension_request_has_a_host_route_and_the_parser_knows_every_incoming_type():
    routes = set(NativeHost(lambda _frame: None)._routes)
    assert routes == messages.frame_types(messages.Request)
    incoming = messages.frame_types(messages.Request) | messages.frame_types(messages.ExtensionPush) | {"reply"}
    assert set(messages.KNOWN_TYPES) == incoming


def test_reply_is_the_one_type_both_directions_use_and_no_type_has_two_directions():
    by_direction = model_types()
    everything = [name for names in by_direction.values() for name in names]
    assert len(everything) == len(set(everything))
    assert "reply" not in everything  # the envelope, not a direction's frame
    assert all(by_direction.values())


def test_protocol_md_lists_exactly_the_error_codes_the_host_uses():
    assert protocol_md_table(PROTOCOL_MD.read_text(), "Error codes the host uses") == set(get_args(HostErrorCode))


# --- the checks can fail: one side changed, the others not ----------------------------------------------
def test_a_host_request_the_worker_does_not_handle_is_reported():
    source = SERVICE_WORKER.read_text()
    without_close = re.sub(r'\s*case "tabs\.close":', "\n    case \"tabs.closed\":", source, count=1)
    assert without_close != source
    problems = mismatches(model_types(), js_types(without_close), "service_worker.js")
    assert any("'tabs.close' is a model" in p for p in problems), problems
    assert any("'tabs.closed' is in service_worker.js but has no model" in p for p in problems), problems


@pytest.mark.parametrize(
    ("direction", "new_type"),
    [
        ("Extension → host requests", "task.rename"),
        ("Extension → host pushes", "tabs.moved"),
        ("Host → extension requests", "tabs.reload"),
        ("Host → extension pushes", "task.question"),
    ],
)
def test_a_model_added_without_the_js_and_protocol_md_is_reported(direction, new_type):
    with_new_model = {d: names | {new_type} if d == direction else names for d, names in model_types().items()}
    from_js = mismatches(with_new_model, js_types(SERVICE_WORKER.read_text(), worker_imports()), "the JS")
    from_md = mismatches(with_new_model, protocol_md_types(PROTOCOL_MD.read_text()), "PROTOCOL.md")
    assert from_js == [f"{direction}: {new_type!r} is a model in messages.py but missing from the JS"]
    assert from_md == [f"{direction}: {new_type!r} is a model in messages.py but missing from PROTOCOL.md"]


def test_a_protocol_md_row_without_a_model_is_reported():
    text = PROTOCOL_MD.read_text().replace(
        "| `tabs.query` |", "| `tabs.reload` | `tabId` | `{}` |\n| `tabs.query` |", 1
    )
    problems = mismatches(model_types(), protocol_md_types(text), "PROTOCOL.md")
    assert problems == ["Host → extension requests: 'tabs.reload' is in PROTOCOL.md but has no model in messages.py"]


def test_a_popup_request_the_worker_would_refuse_is_reported():
    popup = POPUP.read_text() + '\nask("task.rename", {});\n'
    asked, _handled = popup_types(popup)
    assert "task.rename" in asked - set_constant(SERVICE_WORKER.read_text(), "POPUP_REQUEST_TYPES")


def test_the_worker_advertises_exactly_the_optional_requests_the_host_knows_and_handles_them():
    source = SERVICE_WORKER.read_text()
    advertised = set_constant(source, "OPTIONAL_HOST_REQUESTS")
    assert advertised == set(messages.OPTIONAL_HOST_REQUESTS)
    assert "features: [...OPTIONAL_HOST_REQUESTS]" in function_body(source, "connectHost")  # in its hello
    assert advertised <= js_types(source)["Host → extension requests"]


def test_the_host_sends_optional_requests_only_to_an_extension_whose_hello_lists_them(tmp_path, monkeypatch):
    monkeypatch.setenv("TABPILOT_HOME", str(tmp_path))
    written: list[bytes] = []

    async def hello_from(**fields: object) -> frozenset[str]:
        host = NativeHost(written.append)
        host.receive({"type": "hello", "id": "x1", "extensionVersion": "9", **fields})
        return host.peer.features

    assert asyncio.run(hello_from(features=["cdp.batch", 7, None])) == {"cdp.batch"}
    assert asyncio.run(hello_from()) == frozenset()  # an older extension: cdp.send only
    assert asyncio.run(hello_from(features="cdp.batch")) == frozenset()  # not a list: none
    assert all(b'"ok": true' in frame or b'"ok":true' in frame for frame in written)


def test_protocol_md_states_the_limits_the_models_hold_an_id_and_a_refusal_to():
    from tabpilot.native import replies

    text = " ".join(PROTOCOL_MD.read_text(encoding="utf-8").split())
    assert f"a string of at most {replies.MAX_ID_CHARS} characters" in text
    assert replies.MAX_ID_NUMBER == 2**53 - 1 and "a whole number of at most 2^53 − 1" in text
    assert f"repeats at most {messages.MAX_NAME_SHOWN} characters of any name the frame made up" in text
