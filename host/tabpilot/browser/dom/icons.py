"""Names of icon-only controls read from a whole-page DOM snapshot, by the rules walker.js applies in the page
(rules.ICON_*): what aria-labelledby points at, an image's alt, an SVG's aria-label or <title>, a tooltip attribute
(on the element or its only children), else the meaningful words of their class names, marked as a guess. They
are added as the same pseudo-attributes the walker hands over (rules.ICON_NAME, rules.ICON_HINT).

The snapshot cannot say what the browser finds invalid (`validationMessage`, `:user-invalid`), nor how far a
text area's text scrolls: those stay the walker's."""

from __future__ import annotations

import re

from . import rules
from .snapshot import CURSOR, ELEMENT_NODE, TEXT_NODE, Document

NONE, LIGATURE, WORDS = 0, 1, 2
_UNDRAWN = frozenset({"title", "desc", "style", "script"})
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
        if tag in rules.ICON_FIELDS:
            continue
        attrs = document.attrs(node)
        if "aria-label" in attrs or "title" in attrs:
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
