"""One `DOMSnapshot.captureSnapshot` call, decoded into flat per-node arrays.

A snapshot covers every document rendered by one process: the top document, its same-site iframes,
open and closed shadow roots. Out-of-process iframes are snapshotted through their own sessions.
Arrays stay flat (no object per node): a 20k-node page must be read in a few milliseconds."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from ...cdp import CDPSession
from .. import passwords
from . import rules

# Order matters: Layout.styles[i] lists values in this order.
STYLES = ["display", "visibility", "opacity", "cursor", "overflow-x", "overflow-y", "pointer-events", "position",
          "clip", "clip-path"]
DISPLAY, VISIBILITY, OPACITY, CURSOR, OVERFLOW_X, OVERFLOW_Y, POINTER_EVENTS, POSITION, CLIP, CLIP_PATH = range(
    len(STYLES))

ELEMENT_NODE, TEXT_NODE, DOCUMENT_NODE, FRAGMENT_NODE = 1, 3, 9, 11

Rect = tuple[float, float, float, float]  # x, y, width, height in the document's own coordinates


@dataclass(eq=False)
class Document:
    """One document of a snapshot. Node i's parent is parent[i] (-1 for the root); nodes are in
    document order, so node i's descendants are exactly i+1 .. subtree_end[i]."""

    session: CDPSession
    strings: list[str]
    url: str
    title: str
    frame_id: str
    scroll_x: float
    scroll_y: float
    content_width: float
    content_height: float
    parent: list[int]
    node_type: list[int]
    name_index: list[int]
    value_index: list[int]
    backend_id: list[int]
    attributes: list[list[int]]
    layout_of: list[int]  # node -> layout index, -1 when the node is not rendered
    layout_node: list[int]  # layout index -> node
    bounds: list[list[float]]
    styles: list[list[int]]
    paint_order: list[int]
    input_value: dict[int, int]
    text_value: dict[int, int]
    checked: set[int]
    selected: set[int]
    clickable: set[int]
    content_document: dict[int, int]  # <iframe> node -> index of its document in the same snapshot
    pseudo: set[int]
    subtree_end: list[int] = field(default_factory=list)
    # A pseudo-element node (::before, ::after, ::marker) -> its type's string, and the text each layout object
    # draws (a string index, -1 for none): the words CSS generated content draws. The walker reads neither.
    pseudo_type: dict[int, int] = field(default_factory=dict)
    layout_text: list[int] = field(default_factory=list)
    # Filled in by the caller once the document's place in the page is known:
    offset: tuple[float, float] = (0.0, 0.0)  # add to a rect to get top-document coordinates
    owner: tuple[Document, int] | None = None  # (parent document, <iframe> node) for iframes
    index_in_snapshot: int = 0
    # Read by the in-page walker instead of a snapshot: node -> a point where the element itself is hit
    # (document coordinates; None when covered), the walker's node ids -> backendNodeIds where known, and
    # how to look up one that is not (given its walker id; None when the element is gone).
    reachable: dict[int, tuple[float, float] | None] | None = None
    real_ids: dict[int, int] | None = None
    locate: Callable[[int], Awaitable[int | None]] | None = None
    # And the secret fields' values it hid, where another document of the page may show them (it has frames another
    # process renders, or is in one): hidden there too (`hide_shared_secrets`), then forgotten with the reading.
    secrets: tuple[str, ...] = ()
    # Set for a document read by a second world of the same session (a frame of another origin in the tab's
    # own process): its node ids are that world's, so keys need more than the session to stay apart.
    scope: str | None = None

    @property
    def key_scope(self) -> str | None:
        """What keeps this document's node ids apart from those of other documents (the first half of a key)."""
        return self.scope if self.scope is not None else self.session.session_id

    def backend_node_id(self, node: int) -> int:
        """The node's backendNodeId for CDP (0 when it is not known yet: see `locate`)."""
        if self.real_ids is None:
            return self.backend_id[node]
        return self.real_ids.get(self.backend_id[node], 0)

    def tag(self, node: int) -> str:
        return self.strings[self.name_index[node]].lower()

    def attrs(self, node: int) -> dict[str, str]:
        strings = self.strings
        raw = self.attributes[node]
        return {strings[raw[i]].lower(): strings[raw[i + 1]] for i in range(0, len(raw) - 1, 2)}

    def style(self, layout: int, which: int) -> str:
        values = self.styles[layout]
        return self.strings[values[which]] if which < len(values) and values[which] >= 0 else ""

    def escapes(self, node: int) -> bool:
        """Whether some descendant of `node` is painted in another layer than its parent's (positioned,
        transformed, ...) and so may be drawn far outside `node`'s box."""
        escaping = self.__dict__.get("_escaping")
        if escaping is None:
            escaping = self.__dict__["_escaping"] = self._escaping_nodes()
        first_after = bisect_right(escaping, node)
        return first_after < len(escaping) and escaping[first_after] <= self.subtree_end[node]

    def _escaping_nodes(self) -> list[int]:
        parent, layout_of, paint = self.parent, self.layout_of, self.paint_order
        escaping = []
        for layout, node in enumerate(self.layout_node):
            up = parent[node]
            parent_layout = layout_of[up] if up >= 0 else -1
            if parent_layout < 0 or paint[parent_layout] != paint[layout]:
                escaping.append(node)
        escaping.sort()
        return escaping

    def string_id(self, value: str) -> int:
        """The index of `value` in this snapshot's string table, -1 if the page never uses it."""
        return self._string_ids.get(value, -1)

    @property
    def _string_ids(self) -> dict[str, int]:
        cached = self.__dict__.get("_string_id_cache")
        if cached is None:
            cached = {s: i for i, s in enumerate(self.strings)}
            self.__dict__["_string_id_cache"] = cached
        return cached


def _rare_strings(data: dict[str, Any] | None) -> dict[int, int]:
    if not data:
        return {}
    return dict(zip(data.get("index", []), data.get("value", []), strict=False))


def _rare_set(data: dict[str, Any] | None) -> set[int]:
    return set(data.get("index", [])) if data else set()


def mark_passwords(documents: list[Document], backend_ids: set[int]) -> None:
    """Show the inputs in `backend_ids` (fields tabpilot saw as password fields) as password fields, whatever
    their type is now: a "show password" button does not make the value any less secret."""
    if not backend_ids:
        return
    for document in documents:
        strings = document.strings
        for node, backend_id in enumerate(document.backend_id):
            if backend_id not in backend_ids:
                continue
            raw = document.attributes[node]
            kept = [index for i in range(0, len(raw) - 1, 2) if strings[raw[i]].lower() not in ("type", "value")
                    for index in raw[i : i + 2]]
            document.attributes[node] = [_string_index(strings, "type"), _string_index(strings, "password"), *kept]


def hide_password_values(documents: list[Document]) -> None:
    """Hide the values of the password fields in every string of these documents (marked first: see
    `mark_passwords`): a page may show one elsewhere too (a strength meter, another field, its title), and the
    model reads it nowhere. (The walker does the same in the page: the values never leave it.)"""
    values = {document.strings[index] for document in documents for node, index in document.input_value.items()
              if index >= 0 and rules.is_password_input(document.tag(node), document.attrs(node))}
    _hide(documents, values)


def hide_shared_secrets(owners: list[Document], within: list[Document]) -> None:
    """Hide the secret values the walker hid in `owners` in the documents `within` them too (their frames, however
    nested), then forget them: each process's walker knows only the password fields of the documents it walks, and a
    page may show one in a frame of another site (a strength meter there read "Strength of Correct-Horse-42" to the
    model). Never in a document around them: a frame of another site (an ad) whose password field held the page's
    own words hid them from the model in the page."""
    shared = {value for document in owners for value in document.secrets}
    if shared:
        _hide([document for document in within if not shared <= set(document.secrets)], shared)
    for document in owners:
        document.secrets = ()


def _hide(documents: list[Document], values: set[str]) -> None:
    hidden = sorted((v for v in values if len(v) >= passwords.ECHOED_MIN_LENGTH), key=len, reverse=True)
    if not hidden or not documents:
        return
    hide = secret_hider(hidden)

    # What the reading is made of stays whole (walker.js hideSecretValues): names, a field's type, styles.
    kept: dict[int, set[int]] = {}
    for document in documents:
        held = kept.setdefault(id(document.strings), set())
        held.update(document.name_index)
        type_id = document.string_id("type")
        for raw in document.attributes:
            held.update(raw[0::2])
            held.update(raw[i + 1] for i in range(0, len(raw) - 1, 2) if raw[i] == type_id)
        for style in document.styles:
            held.update(style)
    for document in {id(document.strings): document for document in documents}.values():
        held = kept[id(document.strings)]
        document.strings[:] = [text if i in held else hide(text) for i, text in enumerate(document.strings)]
        document.__dict__.pop("_string_id_cache", None)
    for document in documents:
        document.title = hide(document.title)  # read off the strings already


# More values than this are looked up in a trie of them: each value against each string took 23 s on the event loop
# for a page of 2,000 password fields and a frame of 20,000 strings (a review); bench_privacy.py prints the time now.
LOOKED_UP_FROM = 8


def secret_hider(hidden: list[str]) -> Callable[[str], str]:
    """A text with each of `hidden` (longest first, each ECHOED_MIN_LENGTH long or more) replaced by
    passwords.HIDDEN; in time linear in the text, however many values there are."""
    def each_value(text: str) -> str:
        for value in hidden:
            if value in text:
                text = text.replace(value, passwords.HIDDEN)
        return text

    if len(hidden) <= LOOKED_UP_FROM:
        return each_value
    trie: dict[str, Any] = {}
    for value in hidden:
        node = trie
        for char in value:
            node = node.setdefault(char, {})
        node[""] = value  # a value ends here ("" is no character)

    def in_trie(text: str) -> str:
        found = set()
        for i, char in enumerate(text):  # every value starting at i, however many share their start
            node, j = trie.get(char), i + 1
            while node is not None:
                if "" in node:
                    found.add(node[""])
                node, j = (node.get(text[j]), j + 1) if j < len(text) else (None, j)
        for value in hidden:  # longest first, as above
            if value in found:
                text = text.replace(value, passwords.HIDDEN)
        return text

    return in_trie


def _string_index(strings: list[str], value: str) -> int:
    if value not in strings:
        strings.append(value)
    return strings.index(value)


# Characters drawn as nothing: a soft hyphen (U+00AD, shown only where a word breaks), a zero-width space, a word
# joiner, a byte order mark. A person reads "information" where the page holds "in\u00adfor\u00adma\u00adtion": so does
# the model (fewer tokens, and the words it types and looks for are the ones on the screen). Joiners between emoji
# (U+200D) and bidi controls, which change what is drawn, stay.
_DRAWN_AS_NOTHING = "\u00ad\u200b\u2060\ufeff"
_WITHOUT_THEM = str.maketrans("", "", _DRAWN_AS_NOTHING)


def _as_drawn(strings: list[str]) -> None:
    """Take out of the page's strings, in place, the characters drawn as nothing (one scan when there are none)."""
    joined = "\0".join(strings)
    if joined.isascii() or not any(c in joined for c in _DRAWN_AS_NOTHING):
        return
    strings[:] = [text.translate(_WITHOUT_THEM) for text in strings]


def decode(reply: dict[str, Any], session: CDPSession) -> list[Document]:
    strings: list[str] = reply["strings"]
    _as_drawn(strings)
    documents = [_decode_document(raw, strings, session) for raw in reply["documents"]]
    for i, document in enumerate(documents):
        document.index_in_snapshot = i
    return documents


def _string(strings: list[str], index: int | None) -> str:
    return strings[index] if index is not None and 0 <= index < len(strings) else ""


def _decode_document(raw: dict[str, Any], strings: list[str], session: CDPSession) -> Document:
    nodes = raw["nodes"]
    layout = raw["layout"]
    parent: list[int] = nodes["parentIndex"]
    count = len(parent)
    layout_of = [-1] * count
    for layout_index, node in enumerate(layout["nodeIndex"]):
        if layout_of[node] < 0:  # a node can own several layout objects; the first is its box
            layout_of[node] = layout_index
    document = Document(
        session=session,
        strings=strings,
        url=_string(strings, raw.get("documentURL")),
        title=_string(strings, raw.get("title")),
        frame_id=_string(strings, raw.get("frameId")),
        scroll_x=raw.get("scrollOffsetX", 0.0),
        scroll_y=raw.get("scrollOffsetY", 0.0),
        content_width=raw.get("contentWidth", 0.0),
        content_height=raw.get("contentHeight", 0.0),
        parent=parent,
        node_type=nodes["nodeType"],
        name_index=nodes["nodeName"],
        value_index=nodes.get("nodeValue", [-1] * count),
        backend_id=nodes["backendNodeId"],
        attributes=nodes.get("attributes", [[]] * count),
        layout_of=layout_of,
        layout_node=layout["nodeIndex"],
        bounds=layout["bounds"],
        styles=layout["styles"],
        paint_order=layout.get("paintOrders") or [0] * len(layout["nodeIndex"]),
        input_value=_rare_strings(nodes.get("inputValue")),
        text_value=_rare_strings(nodes.get("textValue")),
        checked=_rare_set(nodes.get("inputChecked")),
        selected=_rare_set(nodes.get("optionSelected")),
        clickable=_rare_set(nodes.get("isClickable")),
        content_document=_rare_strings(nodes.get("contentDocumentIndex")),
        pseudo=set((nodes.get("pseudoType") or {}).get("index", [])),
        pseudo_type=_rare_strings(nodes.get("pseudoType")),
        layout_text=layout.get("text") or [],
    )
    end = list(range(count))
    for node in range(count - 1, 0, -1):
        p = parent[node]
        if p >= 0 and end[node] > end[p]:
            end[p] = end[node]
    document.subtree_end = end
    return document
