"""Names of icon-only controls read from a whole-page DOM snapshot, by the rules walker.js applies in the page
(rules.ICON_*): what aria-labelledby points at, an image's alt, an SVG's aria-label or <title>, a tooltip attribute
(on the element or its only children), else the meaningful words of their class names, marked as a guess. They
are added as the same pseudo-attributes the walker hands over (rules.ICON_NAME, rules.ICON_HINT).

The snapshot cannot say what the browser finds invalid (`validationMessage`, `:user-invalid`), nor how far a
text area's text scrolls: those stay the walker's."""

from __future__ import annotations

import re

from . import rules
from .snapshot import CURSOR, ELEMENT_NODE, OVERFLOW_X, OVERFLOW_Y, TEXT_NODE, VISIBILITY, Document

NONE, LIGATURE, WORDS = 0, 1, 2
_UNDRAWN = frozenset({"title", "desc", "style", "script"})
_TYPED = frozenset({"input", "select", "textarea"})
MIN_SIZE = 2.0  # as boxes.MIN_SIZE: a smaller box is drawn for screen readers only
_CAMEL = re.compile(r"([a-z])([A-Z])")
_WORD = re.compile(r"^[a-z]+$")


def name_icons(documents: list[Document]) -> None:
    for document in documents:
        _name_icons_in(document)


def _name_icons_in(document: Document) -> None:
    ids: dict[str, int] | None = None
    # Cheap tests on string ids first: a 14k-node table has few candidates.
    pointer = document.string_id("pointer")
    marking = {document.string_id(name) for name in ("role", "tabindex", "contenteditable")} - {-1}
    native = {document.string_id(tag) for tag in rules.NATIVE_TAGS | {t.upper() for t in rules.NATIVE_TAGS}} - {-1}
    for node, kind in enumerate(document.node_type):
        layout = document.layout_of[node]
        if kind != ELEMENT_NODE or layout < 0:
            continue
        style = document.styles[layout]
        if not (node in document.clickable or document.name_index[node] in native
                or (pointer >= 0 and len(style) > CURSOR and style[CURSOR] == pointer)
                or marking.intersection(document.attributes[node])):
            continue
        tag = document.tag(node)
        if tag in rules.ICON_FIELDS and tag not in _TYPED:
            continue
        attrs = document.attrs(node)
        if "aria-label" in attrs or "title" in attrs:
            continue
        if tag in _TYPED:
            if ids is None:
                ids = _ids(document)
            if named := _hidden_label(document, node, attrs, ids):
                _add(document, node, rules.ICON_NAME, named)
            continue
        text = _own_text(document, node)
        if text == WORDS:
            continue
        if ids is None:
            ids = _ids(document)
        named = _given_name(document, node, attrs, ids)
        if named:
            _add(document, node, rules.ICON_NAME, named)
        elif text == NONE and (guessed := _class_words(document, node)):
            _add(document, node, rules.ICON_HINT, guessed)


def _hidden_label(document: Document, node: int, attrs: dict[str, str], ids: dict[str, int]) -> str:
    """The words of a field's label when none of them is drawn (a "visually hidden" label, a hidden element
    aria-labelledby points at): as walker.js `nameField`."""
    if attrs.get("placeholder") or (document.tag(node) == "input"
                                    and attrs.get("type", "").lower() in rules.SELF_NAMED_INPUTS):
        return ""
    labels = [ids[i] for i in attrs.get("aria-labelledby", "").split() if i in ids]
    if not labels:
        field_id = attrs.get("id")
        up = document.parent[node]
        while up >= 0 and document.node_type[up] == ELEMENT_NODE:
            if document.tag(up) == "label" and "for" not in document.attrs(up):
                labels.append(up)
                break
            up = document.parent[up]
        if field_id:
            labels += [n for n, kind in enumerate(document.node_type) if kind == ELEMENT_NODE
                       and document.tag(n) == "label" and document.attrs(n).get("for") == field_id]
        labels = sorted(set(labels))
    words: list[str] = []
    for label in labels:
        for inner in range(label + 1, document.subtree_end[label] + 1):
            if document.node_type[inner] != TEXT_NODE or node <= inner <= document.subtree_end[node]:
                continue
            text = document.strings[document.value_index[inner]]
            if not text.strip():
                continue
            if _drawn(document, document.parent[inner]):
                return ""
            words.append(text)
    return " ".join(" ".join(words).split())


def _drawn(document: Document, node: int) -> bool:
    """As walker.js `drawn`: `node` has a box and is visible, and no box around it clips to under MIN_SIZE."""
    layout = document.layout_of[node]
    if layout < 0:
        return False
    style = document.styles[layout]
    if len(style) > VISIBILITY and style[VISIBILITY] != document.string_id("visible"):
        return False
    clipping = {document.string_id(value) for value in rules.CLIPPING_OVERFLOW}
    while node >= 0 and document.node_type[node] == ELEMENT_NODE:
        layout = document.layout_of[node]
        if layout >= 0:
            _, _, width, height = document.bounds[layout]
            style = document.styles[layout]
            if (width < MIN_SIZE or height < MIN_SIZE) and len(style) > OVERFLOW_Y and \
                    (style[OVERFLOW_X] in clipping or style[OVERFLOW_Y] in clipping):
                return False
        node = document.parent[node]
    return True


def _own_text(document: Document, node: int) -> int:
    found = NONE
    for inner in range(node + 1, document.subtree_end[node] + 1):
        if document.node_type[inner] != TEXT_NODE or not document.strings[document.value_index[inner]].strip():
            continue
        if _inside(document, inner, node, _UNDRAWN):
            continue
        classes = document.attrs(document.parent[inner]).get("class", "").split()
        if not any(c.startswith(rules.ICON_FONT_CLASSES) for c in classes):
            return WORDS
        found = LIGATURE
    return found


def _inside(document: Document, inner: int, stop: int, tags: frozenset[str]) -> bool:
    up = document.parent[inner]
    while up >= 0 and up != stop:
        if document.tag(up) in tags:
            return True
        up = document.parent[up]
    return up == stop and document.tag(stop) in tags


def _ids(document: Document) -> dict[str, int]:
    found: dict[str, int] = {}
    id_index = document.string_id("id")
    for node, raw in enumerate(document.attributes):
        for i in range(0, len(raw) - 1, 2):
            if raw[i] == id_index:
                found.setdefault(document.strings[raw[i + 1]], node)
    return found


def _text_of(document: Document, node: int) -> str:
    return " ".join(document.strings[document.value_index[t]] for t in range(node + 1, document.subtree_end[node] + 1)
                    if document.node_type[t] == TEXT_NODE)


def _given_name(document: Document, node: int, attrs: dict[str, str], ids: dict[str, int]) -> str:
    labels = [ids[i] for i in attrs.get("aria-labelledby", "").split() if i in ids]
    labelled = " ".join(document.attrs(label).get("aria-label") or _text_of(document, label) for label in labels)
    if labelled.strip():
        return " ".join(labelled.split())
    descendants = [n for n in range(node, document.subtree_end[node] + 1) if document.node_type[n] == ELEMENT_NODE]
    for n in descendants:
        tag, inner = document.tag(n), document.attrs(n)
        if "alt" in inner and (tag == "img" or (tag == "input" and inner.get("type", "").lower() == "image")):
            if inner["alt"].strip():
                return inner["alt"].strip()
            break  # the first such image decides, as querySelector does
    for n in descendants[1:]:
        if document.tag(n) == "svg" and "aria-label" in document.attrs(n):
            if document.attrs(n)["aria-label"].strip():
                return document.attrs(n)["aria-label"].strip()
            break
    for n in descendants[1:]:
        if document.tag(n) == "title" and _inside(document, n, node, frozenset({"svg"})):
            if _text_of(document, n).strip():
                return " ".join(_text_of(document, n).split())
            break
    for depth, part in enumerate(_only_child_chain(document, node)):
        inner = document.attrs(part)
        for name in rules.ICON_TOOLTIPS:
            if inner.get(name, "").strip():
                return inner[name].strip()
        if depth and (inner.get("aria-label") or inner.get("title") or "").strip():
            return (inner.get("aria-label") or inner.get("title") or "").strip()
    return ""


def _only_child_chain(document: Document, node: int) -> list[int]:
    chain = [node]
    while True:
        children = [c for c in range(chain[-1] + 1, document.subtree_end[chain[-1]] + 1)
                    if document.parent[c] == chain[-1] and document.node_type[c] == ELEMENT_NODE]
        if len(children) != 1:
            return chain
        chain.append(children[0])


def _class_words(document: Document, node: int) -> str:
    words: list[str] = []
    for part in _only_child_chain(document, node):
        for name in document.attrs(part).get("class", "").split():
            for word in _CAMEL.sub(r"\1-\2", name).lower().replace("_", "-").split("-"):
                if len(word) > 2 and _WORD.match(word) and word not in rules.ICON_GENERIC_WORDS and word not in words:
                    words.append(word)
    return " ".join(words[: rules.ICON_HINT_WORDS])


def _add(document: Document, node: int, name: str, value: str) -> None:
    strings = document.strings
    for text in (name, value):
        index = document.string_id(text)
        if index < 0:
            strings.append(text)
            index = len(strings) - 1
            document.__dict__.get("_string_id_cache", {})[text] = index
        document.attributes[node] = [*document.attributes[node], index]
