"""Names of icon-only controls read from a whole-page DOM snapshot, by the rules walker.js applies in the page
(extension/content/names.js; their words: rules.ICON_*): what aria-labelledby points at, an image's alt, an SVG's
aria-label, <title> or <desc>, the <title> of the sprite symbol an SVG <use> draws, an image's title, a tooltip
attribute (on the element or its only children), the words CSS generated content draws; else the meaningful words of
the sprite symbol's id, the icon an icon library's attribute names (data-icon), the image's file name and the class
names, marked as a guess. What is inside another control within the element is that control's. They are added as the
same pseudo-attributes the walker hands
over (rules.ICON_NAME, rules.ICON_HINT).

The snapshot cannot say what the browser finds invalid (`validationMessage`, `:user-invalid`), nor how far a
text area's text scrolls: those stay the walker's."""

from __future__ import annotations

import re
from collections.abc import Callable

from . import rules
from .snapshot import CURSOR, ELEMENT_NODE, OVERFLOW_X, OVERFLOW_Y, TEXT_NODE, VISIBILITY, Document

NONE, LIGATURE, WORDS, INNER_WORDS = 0, 1, 2, 3
FRAGMENT_NODE = 11
GENERATED_PARTS = 3  # as names.js: generated content is read on the element and its first 3 own parts of HTML
_UNDRAWN = frozenset({"title", "desc", "style", "script"})
_TYPED = frozenset({"input", "select", "textarea"})
MIN_SIZE = 2.0  # as boxes.MIN_SIZE: a smaller box is drawn for screen readers only
_PRIVATE_USE = re.compile("[\ue000-\uf8ff]")  # an icon font's glyphs
_LETTERS = re.compile(r"[^\W\d_]{2,}")


def name_icons(documents: list[Document]) -> None:
    for document in documents:
        _name_icons_in(document)


def _name_icons_in(document: Document) -> None:
    ids: dict[str, int] | None = None
    label_for: dict[str, list[int]] = {}
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
        if ids is None:
            ids, label_for = _ids(document), _label_for(document)
        if tag in _TYPED:
            _name_field(document, node, tag, attrs, (ids, label_for))
            continue
        if rules.is_labelled_control(tag, attrs):
            named, shown = _label_words(document, node, _labels_of(document, node, attrs, (ids, label_for)))
            if named:
                _add(document, node, rules.FIELD_LABEL, named)
            if named and shown:
                continue
        if "aria-label" in attrs or "title" in attrs:
            continue
        text = _own_text(document, node)
        if text == WORDS:
            continue
        parts = _own_parts(document, node)
        named = _given_name(document, node, attrs, ids, parts) or \
            (_generated_words(document, node, parts) if text == NONE else "")
        if named:
            _add(document, node, rules.ICON_NAME, named)
        elif text != LIGATURE and (guessed := _icon_words(document, node, parts, classes=text == NONE)):
            _add(document, node, rules.ICON_HINT, guessed)


# An element's id -> the element; a label's `for` -> the labels with it.
References = tuple[dict[str, int], dict[str, list[int]]]


def _name_field(document: Document, node: int, tag: str, attrs: dict[str, str], references: References) -> None:
    """As walker.js `nameField`: a field's labels name it on its line (rules.ICON_NAME) when none of their words is
    drawn and the line shows no other name; else in what the model is told of its actions (rules.FIELD_LABEL). With
    no label, the visually hidden text aria-describedby points at names it, or its id's words are a guess."""
    input_type = attrs.get("type", "").lower() if tag == "input" else ""
    if input_type in rules.SELF_NAMED_INPUTS:
        return
    other_name = "aria-label" in attrs or "title" in attrs or bool(attrs.get("placeholder"))
    box = input_type in rules.BOX_INPUTS
    labels = _labels_of(document, node, attrs, references)
    if labels:
        named, shown = _label_words(document, node, labels)
        if named:
            _add(document, node, rules.FIELD_LABEL if shown or other_name or box else rules.ICON_NAME, named)
        return
    if other_name or box:
        return
    words: list[str] = []
    ids = references[0]
    for label in [ids[i] for i in attrs.get("aria-describedby", "").split() if i in ids]:
        for inner in _label_texts(document, node, label):
            if _drawn(document, document.parent[inner]):
                return
            if _laid_out(document, document.parent[inner]):  # not a message shown later ("Required")
                words.append(document.strings[document.value_index[inner]])
    if named := " ".join(" ".join(words).split()):
        _add(document, node, rules.ICON_NAME, named)
    elif not attrs.get("name") and (id_words := rules.field_id_words(attrs.get("id", ""))):
        _add(document, node, rules.ICON_HINT, " ".join(id_words[: rules.ICON_HINT_WORDS]))


def _labels_of(document: Document, node: int, attrs: dict[str, str], references: References) -> list[int]:
    """As walker.js `labelsOf`: what aria-labelledby points at; else, with no aria-label, the label[for] of its id
    and the nearest label with no `for` around it (a field's <label>s; a custom control's, as a person reads them)."""
    ids, label_for = references
    labels = [ids[i] for i in attrs.get("aria-labelledby", "").split() if i in ids]
    if labels or "aria-label" in attrs:
        return labels
    up = document.parent[node]
    while up >= 0 and document.node_type[up] == ELEMENT_NODE:
        if document.tag(up) == "label" and "for" not in document.attrs(up):
            labels.append(up)
            break
        up = document.parent[up]
    return sorted({*labels, *label_for.get(attrs.get("id", ""), [])})


def _label_texts(document: Document, node: int, label: int) -> list[int]:
    """The text nodes with words in `label`, but for those of the control `node` inside it."""
    return [inner for inner in range(label + 1, document.subtree_end[label] + 1)
            if document.node_type[inner] == TEXT_NODE and not node <= inner <= document.subtree_end[node]
            and document.strings[document.value_index[inner]].strip()]


def _label_words(document: Document, node: int, labels: list[int]) -> tuple[str, bool]:
    """As walker.js `labelWords`: the words of `labels` and whether a person sees any of them."""
    texts = [inner for label in labels for inner in _label_texts(document, node, label)]
    words = " ".join(document.strings[document.value_index[inner]] for inner in texts)
    return " ".join(words.split()), any(_drawn(document, document.parent[inner]) for inner in texts)


def _laid_out(document: Document, node: int) -> bool:
    """As walker.js `laidOut`: `node` has a box and is visible, though perhaps cut to nothing."""
    layout = document.layout_of[node]
    return layout >= 0 and _shown(document, node, document.string_id("visible"))


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
    """As names.js `ownText`: none, an icon font's ligatures, words, or words only inside controls within it."""
    found, inner_words = NONE, False
    visible = document.string_id("visible")
    for inner in range(node + 1, document.subtree_end[node] + 1):
        if document.node_type[inner] != TEXT_NODE or not document.strings[document.value_index[inner]].strip():
            continue
        if _inside(document, inner, node, _UNDRAWN):
            continue
        layout = document.layout_of[inner]
        if layout < 0:
            continue  # not drawn: under display:none
        style = document.styles[layout]
        if len(style) > VISIBILITY and style[VISIBILITY] != visible:
            continue
        up = document.parent[inner]
        if up != node and _inside_inner(document, up, node):
            inner_words = True
            continue
        classes = document.attrs(up).get("class", "").split()
        if not any(c.startswith(rules.ICON_FONT_CLASSES) for c in classes):
            return WORDS
        found = LIGATURE
    return INNER_WORDS if inner_words else found


def _inside_inner(document: Document, up: int, stop: int) -> bool:
    while up >= 0 and up != stop:
        if document.node_type[up] == ELEMENT_NODE and _is_inner(document, up):
            return True
        up = document.parent[up]
    return False


def _is_inner(document: Document, node: int) -> bool:
    """rules.is_inner_control, without building the attributes of an element that has no role."""
    tag = document.tag(node)
    role = document.string_id("role")
    if tag not in rules.INNER_CONTROL_TAGS and (role < 0 or role not in document.attributes[node][0::2]):
        return False
    return rules.is_inner_control(tag, document.attrs(node))


def _own_parts(document: Document, node: int) -> list[int]:
    """As names.js `ownParts`: the elements inside `node` that are its own, not inside another control in it."""
    parts: list[int] = []
    inner, end = node + 1, document.subtree_end[node]
    while inner <= end:
        kind = document.node_type[inner]
        if kind == FRAGMENT_NODE:  # a shadow root: not what the walker's querying sees
            inner = document.subtree_end[inner] + 1
        elif kind != ELEMENT_NODE or inner in document.pseudo:
            inner += 1
        elif _is_inner(document, inner):
            inner = document.subtree_end[inner] + 1
        else:
            parts.append(inner)
            inner += 1
    return parts


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


def _label_for(document: Document) -> dict[str, list[int]]:
    found: dict[str, list[int]] = {}
    label = {document.string_id("label"), document.string_id("LABEL")} - {-1}
    for node, kind in enumerate(document.node_type):
        if kind == ELEMENT_NODE and document.name_index[node] in label and (target := document.attrs(node).get("for")):
            found.setdefault(target, []).append(node)
    return found


def _text_of(document: Document, node: int) -> str:
    return " ".join(document.strings[document.value_index[t]] for t in range(node + 1, document.subtree_end[node] + 1)
                    if document.node_type[t] == TEXT_NODE)


def _given_name(document: Document, node: int, attrs: dict[str, str], ids: dict[str, int], parts: list[int]) -> str:
    labels = [ids[i] for i in attrs.get("aria-labelledby", "").split() if i in ids]
    labelled = " ".join(document.attrs(label).get("aria-label") or _text_of(document, label) for label in labels)
    if labelled.strip():
        return " ".join(labelled.split())
    tag = document.tag(node)
    if "alt" in attrs and (tag == "img" or (tag == "input" and attrs.get("type", "").lower() == "image")):
        image = node
    else:  # the first such image decides, as querySelector does
        image = _first(document, parts, lambda n, a: document.tag(n) == "img" and "alt" in a)
    if image >= 0 and document.attrs(image)["alt"].strip():
        return document.attrs(image)["alt"].strip()
    svg = _first(document, parts, lambda n, a: document.tag(n) == "svg" and "aria-label" in a)
    if svg >= 0 and document.attrs(svg)["aria-label"].strip():
        return document.attrs(svg)["aria-label"].strip()
    title = _first(document, parts, lambda n, a: document.tag(n) == "title" and _in_svg(document, n, node))
    if title >= 0 and _text_of(document, title).strip():
        return " ".join(_text_of(document, title).split())
    desc = _first(document, parts, lambda n, a: document.tag(n) == "desc" and _in_svg(document, n, node))
    if desc >= 0 and _text_of(document, desc).strip():
        return " ".join(_text_of(document, desc).split())
    symbol = _sprite_symbol(document, _first(document, parts, lambda n, a: _is_use(document, n, node)), ids)
    if symbol >= 0:
        title = next((c for c in _children(document, symbol) if document.tag(c) == "title"), -1)
        words = _text_of(document, title).strip() if title >= 0 else ""
        if words and not rules.IDENTIFIER.match(words):  # not a file's name ("arrow-left")
            return " ".join(words.split())
    titled = _first(document, parts, lambda n, a: document.tag(n) == "img" and "title" in a)
    if titled >= 0 and document.attrs(titled)["title"].strip():
        return document.attrs(titled)["title"].strip()
    for depth, part in enumerate(_only_child_chain(document, node)):
        inner = document.attrs(part)
        if depth and rules.is_inner_control(document.tag(part), inner):
            break  # that control's own name
        for name in rules.ICON_TOOLTIPS:
            if inner.get(name, "").strip():
                return inner[name].strip()
        if depth and (inner.get("aria-label") or inner.get("title") or "").strip():
            return (inner.get("aria-label") or inner.get("title") or "").strip()
    return ""


def _first(document: Document, parts: list[int], test: Callable[[int, dict[str, str]], bool]) -> int:
    return next((n for n in parts if test(n, document.attrs(n))), -1)


def _children(document: Document, node: int) -> list[int]:
    return [c for c in range(node + 1, document.subtree_end[node] + 1)
            if document.parent[c] == node and document.node_type[c] == ELEMENT_NODE]


def _in_svg(document: Document, node: int, stop: int) -> bool:
    """Inside an <svg> that is `stop` or inside it (names.js `inSvg`)."""
    up = document.parent[node]
    while up >= 0 and document.node_type[up] == ELEMENT_NODE:
        if document.tag(up) == "svg":
            return True
        if up == stop:
            return False
        up = document.parent[up]
    return False


def _is_use(document: Document, node: int, stop: int) -> bool:
    return document.tag(node) == "use" and _in_svg(document, node, stop)


def _use_href(document: Document, use: int) -> str:
    if use < 0:
        return ""
    attrs = document.attrs(use)
    return attrs.get("href") or attrs.get("xlink:href") or ""


def _sprite_symbol(document: Document, use: int, ids: dict[str, int]) -> int:
    """The <symbol> (or <svg>) of this document an SVG <use href="#id"> draws, or -1."""
    href = _use_href(document, use)
    symbol = ids.get(href[1:], -1) if href.startswith("#") else -1
    return symbol if symbol >= 0 and document.tag(symbol) in ("symbol", "svg") else -1


def _generated_words(document: Document, node: int, parts: list[int]) -> str:
    """As names.js `generatedWords`: the real words CSS generated content (::before, ::after) draws on the
    element and its own parts shown (the snapshot holds what each pseudo-element draws)."""
    if not document.pseudo:
        return ""
    owners = document.__dict__.get("_pseudo_owners")
    if owners is None:
        owners = document.__dict__["_pseudo_owners"] = {}
        texts: dict[int, str] = {}
        for k, shown in enumerate(document.layout_node):
            if shown in document.pseudo and k < len(document.layout_text) and document.layout_text[k] >= 0:
                texts[shown] = texts.get(shown, "") + document.strings[document.layout_text[k]]
        for pseudo in sorted(document.pseudo):
            kind = document.strings[document.pseudo_type.get(pseudo, -1)] if pseudo in document.pseudo_type else ""
            if kind in ("before", "after"):
                owners.setdefault(document.parent[pseudo], []).append((kind != "before", texts.get(pseudo, ""), pseudo))
    visible = document.string_id("visible")
    words: list[str] = []
    html = [part for part in parts if document.tag(part) != "svg" and not _in_svg(document, part, node)]
    for part in (node, *html[:GENERATED_PARTS]):
        if part != node and not _shown(document, part, visible):
            continue
        for _, text, pseudo in sorted(owners.get(part, ())):
            if _shown(document, pseudo, visible):
                words.append(text)
    text = " ".join(_PRIVATE_USE.sub(" ", " ".join(words)).split())
    return text if _LETTERS.search(text) and not rules.IDENTIFIER.match(text) else ""


def _shown(document: Document, node: int, visible: int) -> bool:
    layout = document.layout_of[node]
    if layout < 0:
        return False
    style = document.styles[layout]
    return not (len(style) > VISIBILITY and style[VISIBILITY] != visible)


def _only_child_chain(document: Document, node: int) -> list[int]:
    chain = [node]
    while True:
        children = [c for c in range(chain[-1] + 1, document.subtree_end[chain[-1]] + 1)
                    if document.parent[c] == chain[-1] and document.node_type[c] == ELEMENT_NODE]
        if len(children) != 1:
            return chain
        chain.append(children[0])


def _icon_words(document: Document, node: int, parts: list[int], *, classes: bool) -> str:
    """As names.js `iconWords`: a guess from the sprite symbol's id, (`classes`) the icon an icon library's
    attribute names, the image's file name and (`classes`) the class names of the element and its only children
    (not into a control inside it). At most ICON_HINT_WORDS."""
    words: list[str] = []

    def add(found: list[str]) -> None:
        words.extend(word for word in found if word not in words)

    add(rules.fragment_words(_use_href(document, _first(document, parts, lambda n, a: _is_use(document, n, node)))))
    if classes:
        named = (_data_icon_name(document.attrs(n)) for n in (node, *parts))
        add(rules.meaningful_words(next(filter(None, named), "")))
    image = node if document.tag(node) == "img" else _first(document, parts, lambda n, a: document.tag(n) == "img")
    if image >= 0:
        add(rules.file_words(document.attrs(image).get("src", "").strip()))
    for part in _only_child_chain(document, node) if classes else ():
        attrs = document.attrs(part)
        if part != node and rules.is_inner_control(document.tag(part), attrs):
            break
        for name in attrs.get("class", "").split():
            add(rules.meaningful_words(name))
    return " ".join(words[: rules.ICON_HINT_WORDS])


def _data_icon_name(attrs: dict[str, str]) -> str:
    """The icon an icon library's attribute names (rules.ICON_DATA_ATTRIBUTES), as names.js `dataIconName`."""
    return next((attrs[name].strip() for name in rules.ICON_DATA_ATTRIBUTES if attrs.get(name, "").strip()), "")


def _add(document: Document, node: int, name: str, value: str) -> None:
    strings = document.strings
    for text in (name, value):
        index = document.string_id(text)
        if index < 0:
            strings.append(text)
            index = len(strings) - 1
            document.__dict__.get("_string_id_cache", {})[text] = index
        document.attributes[node] = [*document.attributes[node], index]
