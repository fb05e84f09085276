"""One pass over the page's documents, in document order: find what a person can see and use in the
viewport, the text around it, and count what lies above and below.

The result is a list of items (text lines and found elements) in reading order; `render` in the state
module turns it into the text the model sees. Frames (same-site and cross-site iframes) are walked
where their <iframe> element stands, shadow roots where their host stands."""

from __future__ import annotations

from collections.abc import Callable

from . import formulas, rules
from .boxes import (
    MIN_SIZE,
    clipped_away,
    clips,
    descendant_box,
    display_is_block,
    intersect,
    modal_dialog,
    scroll_extent,
)
from .cover import Occluders
from .items import Found, Item, MixedLine, TextLine, WalkResult
from .snapshot import (
    CLIP,
    CLIP_PATH,
    CURSOR,
    DISPLAY,
    ELEMENT_NODE,
    OPACITY,
    TEXT_NODE,
    VISIBILITY,
    Document,
    Rect,
)

FrameResolver = Callable[[Document, int], "Document | None"]
# An element that covers half the viewport or more with nothing but a click listener is a delegating
# container (React attaches its listeners to the root), not a button.
DELEGATE_AREA_SHARE = 0.5
Insets = tuple[float, float, float, float]  # left, top, right, bottom
DEFAULT_FRAME_INSETS: Insets = (2.0, 2.0, 2.0, 2.0)  # an <iframe>'s default border
# Subtrees this far (CSS px) beyond the viewport are only counted, not read.
SKIP_MARGIN = 200
# A table cell up to this tall (CSS px) is read as part of its row's line, whatever blocks it holds (a docs
# table's cells are paragraphs: each cell was a line of its own, and the model could not tell which values
# share a row). A taller one is a page laid out in a table: its blocks stay lines of their own.
ROW_CELL_HEIGHT = 200


class _Frame:
    """What the walk knows about an open element while it visits its descendants."""

    __slots__ = ("block", "box", "cell", "clip", "depth", "editable", "end", "hidden", "pointer", "sink")

    def __init__(self, end: int, hidden: bool, clip: Rect, pointer: bool, sink: Found | None,
                 depth: int, block: bool, editable: bool = False, box: Rect | None = None,
                 cell: bool = False) -> None:
        self.end, self.hidden, self.clip, self.pointer = end, hidden, clip, pointer
        self.sink, self.depth, self.block, self.editable = sink, depth, block, editable
        self.cell = cell  # inside a table cell read as part of its row's line (ROW_CELL_HEIGHT)
        # What the clipping containers around leave visible, the viewport aside (None: no container): an
        # element outside it is scrolled away inside a list, not above or below on the page.
        self.box = box


def transparent_control(document: Document, node: int, tag: str) -> bool:
    """A <select> or <input type=file> with opacity 0 of its own: styling libraries lay one over a face they
    draw (a styled dropdown, an "Upload" button), so the transparent control is what a click there works."""
    if tag == "select":
        return True
    return tag == "input" and document.attrs(node).get("type", "").lower() == "file"


def field_scroll(attrs: dict[str, str] | None) -> tuple[int, int, int, int] | None:
    """(px above, below, 0, 0) of a text area whose text runs beyond its box (read by the walker)."""
    above, _, below = (attrs or {}).get(rules.FIELD_SCROLL, "").partition(",")
    return (int(above), int(below), 0, 0) if above.isdigit() and below.isdigit() else None


def _tree_level(role: str, attrs: dict[str, str]) -> int:
    """How much deeper than its tree a tree item with aria-level stands (virtual trees list all their rows
    side by side and say each one's level)."""
    level = attrs.get("aria-level", "") if role == "treeitem" else ""
    return min(int(level), 20) - 1 if level.isdigit() and int(level) > 0 else 0


# Attributes that say something of a wrapper itself: one that has any is still offered.
_WRAPPER_OWN = ("aria-label", "aria-labelledby", "title", "aria-expanded", "aria-checked", "aria-selected",
                "aria-pressed", "aria-haspopup", rules.ICON_NAME, rules.ICON_HINT)


def _bare_wrapper(outer: Found, inner: Found) -> bool:
    """`outer` has no name, state or scrolling of its own, `inner` is a control inside it, and `outer` shows
    nothing of its own a person would click instead (see `_own_picture`)."""
    return (outer.role not in ("scrollable", "textbox", "label") and outer.scroll is None
            and outer.tag not in ("input", "select", "textarea", "iframe") and not "".join(outer.text).strip()
            and not any(name in outer.attrs for name in _WRAPPER_OWN) and _inside(outer, inner)
            and not _own_picture(outer, inner))


_PICTURES = frozenset({"img", "svg", "picture", "video", "canvas"})


def _own_picture(outer: Found, inner: Found) -> bool:
    """`outer` draws a picture outside `inner` that is larger than `inner`: a product card's photo beside its
    "Save" heart. A click on the photo is the card's (it opens the product), one on the heart is the heart's:
    two things to do, so the card stays a line of its own. (A chevron beside a menu item's link, smaller than
    the link, is not.)"""
    document = outer.document
    if inner.document is not document:
        return False
    layout = inner.document.layout_of[inner.node]
    if layout < 0:
        return False
    inner_area = document.bounds[layout][2] * document.bounds[layout][3]
    hidden = {document.string_id("hidden"), document.string_id("collapse")} - {-1}
    names = {document.string_id(tag) for tag in _PICTURES | {t.upper() for t in _PICTURES}} - {-1}
    node, end = outer.node + 1, document.subtree_end[outer.node]
    while node <= end:
        if node == inner.node:
            node = document.subtree_end[node] + 1
            continue
        if document.node_type[node] == ELEMENT_NODE and document.name_index[node] in names:
            layout = document.layout_of[node]
            if layout >= 0:
                _, _, width, height = document.bounds[layout]
                style = document.styles[layout]
                if width * height > inner_area and not (len(style) > VISIBILITY and style[VISIBILITY] in hidden):
                    return True
        node += 1
    return False


def _inside(outer: Found, item: Item) -> bool:
    """Whether `item` is part of `outer`'s content: an element inside it, or a line indented under it."""
    if isinstance(item, Found) and item.document is outer.document:
        return outer.node < item.node <= outer.document.subtree_end[outer.node]
    return item.depth > outer.depth


class Walker:
    def __init__(self, viewport: Rect, frame_document: FrameResolver,
                 frame_insets: dict[tuple[str | None, int], Insets] | None = None) -> None:
        self.viewport = viewport  # in top-document coordinates
        self.frame_document = frame_document
        # (session id, backendNodeId) of an <iframe> -> its border + padding (where its document starts)
        self.frame_insets = frame_insets or {}
        self.result = WalkResult()
        self._buffer: list[str | Found] = []
        self._prefix = ""
        self._buffer_depth = 0
        self._last_line = ""
        self._occluders: dict[int, Occluders] = {}
        self._modal: tuple[Document, int, int] | None = None
        # The last inline element whose text runs in the buffer: (its document, last node, box), while
        # nothing outside it has been read since.
        self._inline: tuple[Document, int, Rect] | None = None
        # A checkbox or radio button with no <label> of its own, while the text right after it (up to the
        # end of its line, or the next element offered) is its name: `<input type=checkbox> Weekly digest`.
        self._box_named_by_next_text: Found | None = None
        self._label_targets: dict[int, set[str]] = {}  # id(document) -> the ids some label[for] names

    # --- text ----------------------------------------------------------------------------------
    def _apart(self, document: Document, rect: Rect) -> bool:
        """Whether an inline element starting at `rect` stands apart from the inline element before it
        (a margin between them, as pages built without whitespace between elements space their words)."""
        if self._inline is None or self._inline[0] is not document:
            return False
        x, y, w, h = self._inline[2]
        return rect[0] - (x + w) >= 2 and rect[1] < y + h and y < rect[1] + rect[3]

    def _flush(self) -> None:
        self._inline = None
        self._box_named_by_next_text = None
        if any(isinstance(part, Found) for part in self._buffer):
            self._flush_mixed()
        elif self._buffer:
            text = " ".join("".join(self._buffer).split())  # type: ignore[arg-type]
            self._buffer.clear()
            if text and text != "|":
                text = text.strip("| ").strip()
                if text and text != self._last_line:
                    self.result.items.append(TextLine(self._prefix + rules.shorten(text, rules.TEXT_LINE_LIMIT),
                                                      self._buffer_depth))
                    self._last_line = text
        self._prefix = ""

    def _flush_mixed(self) -> None:
        parts = self._buffer[:]
        self._buffer.clear()
        found = [part for part in parts if isinstance(part, Found)]
        if len(found) == 1 and all(isinstance(p, Found) or not p.strip() for p in parts):
            self.result.items.append(found[0])  # a line of its own after all: shown as one
        else:
            self.result.items.append(MixedLine(parts, self._buffer_depth, self._prefix))
        self._last_line = ""
        self._prefix = ""

    # --- covering --------------------------------------------------------------------------------
    def _occluders_for(self, document: Document) -> Occluders:
        occluders = self._occluders.get(id(document))
        if occluders is None:
            vx, vy, vw, vh = self.viewport
            area = (vx - document.offset[0], vy - document.offset[1], vw, vh)
            occluders = self._occluders[id(document)] = Occluders(document, area)
        return occluders

    def _covered_at(self, document: Document, node: int, x: float, y: float) -> bool:
        while True:
            if self._occluders_for(document).covers(node, x - document.offset[0], y - document.offset[1]):
                return True
            if document.owner is None:
                return False
            document, node = document.owner

    def _reachable_point(self, document: Document, node: int, visible: Rect) -> tuple[float, float] | None:
        """A point of the element (top-document coordinates) where nothing else is on top, if any."""
        x, y, w, h = visible
        if document.reachable is not None:
            return self._reachable_by_walker(document, node, visible)
        points = [(x + w / 2, y + h / 2), (x + w * 0.2, y + h * 0.2), (x + w * 0.8, y + h * 0.2),
                  (x + w * 0.2, y + h * 0.8), (x + w * 0.8, y + h * 0.8)]
        return next(((px, py) for px, py in points if not self._covered_at(document, node, px, py)), None)

    def _reachable_by_walker(self, document: Document, node: int, visible: Rect) -> tuple[float, float] | None:
        """The in-page walker hit-tested the element itself; an <iframe> it sits in must be reachable too."""
        x, y, w, h = visible
        point: tuple[float, float] | None = (x + w / 2, y + h / 2)
        reachable = document.reachable or {}
        if node in reachable:
            found = reachable[node]
            point = None if found is None else (found[0] + document.offset[0], found[1] + document.offset[1])
        while point is not None and document.owner is not None:
            document, node = document.owner
            if document.reachable is not None and document.reachable.get(node, ()) is None:
                return None
        return point

    # --- the walk -------------------------------------------------------------------------------
    def walk(self, document: Document) -> WalkResult:
        self._modal = modal_dialog(document)
        self._walk(document, hidden=False, clip=self.viewport, depth=0, sink=None)
        self._flush()
        self._drop_redundant_labels()
        self._drop_bare_wrappers()
        return self.result

    def _inert(self, document: Document, node: int) -> bool:
        """Outside the open modal <dialog>, if there is one: the page behind it cannot be used."""
        if self._modal is None:
            return False
        modal_document, start, end = self._modal
        while document is not modal_document:
            if document.owner is None:
                return True
            document, node = document.owner
        return not start <= node <= end

    def _drop_redundant_labels(self) -> None:
        """A clickable <label> is offered only when its control is not (a styled checkbox whose real
        input is invisible); otherwise its text stays, as text."""
        labels = [f for f in self._all_found() if f.role == "label"]
        if not labels:
            return
        offered = [f for f in self._all_found() if f.role != "label"]
        redundant = set()
        for label in labels:
            target, last = label.attrs.get("for"), label.document.subtree_end[label.node]
            for control in offered:
                if control.document is label.document and (
                    label.node < control.node <= last or (target and control.attrs.get("id") == target)
                ):
                    redundant.add(id(label))
                    self._name_by_label(control, label)
                    break
        items: list[Item] = []
        for item in self.result.items:
            if isinstance(item, Found) and id(item) in redundant:
                text = " ".join("".join(item.text).split())
                if text and not item.named_control:
                    items.append(TextLine(text, item.depth))
            elif isinstance(item, MixedLine):
                # A label whose text became its box's name leaves the line (it would read as a neighbour's).
                item.parts = [("" if p.named_control else "".join(p.text)) if isinstance(p, Found)
                              and id(p) in redundant else p for p in item.parts]
                if any(isinstance(p, Found) for p in item.parts):
                    items.append(item)
                elif text := " ".join("".join(item.parts).split()):  # type: ignore[arg-type]
                    items.append(TextLine(item.prefix + text, item.depth))
            else:
                items.append(item)
        self.result.items = items

    def _drop_bare_wrappers(self) -> None:
        """A control with no name of its own whose only content is one other control (`<li role=menuitem><a>Home`,
        `<a href><button>Subscribe`, a clickable card around its one link) is offered once, as the control inside:
        a click on that reaches the wrapper too. Listed as well, the wrapper was a line with no name. A wrapper
        that also shows a picture larger than that control (a card's photo beside its "Save" heart) stays: a
        click on the photo does what the card does, one on the heart something else."""
        items = self.result.items
        kept: list[Item] = []
        for i, item in enumerate(items):
            inner = items[i + 1] if i + 1 < len(items) else None
            if isinstance(item, Found) and isinstance(inner, Found) and _bare_wrapper(item, inner) and \
                    (i + 2 >= len(items) or not _inside(item, items[i + 2])):
                inner.depth = item.depth
                continue
            kept.append(item)
        self.result.items = kept

    @staticmethod
    def _name_by_label(control: Found, label: Found) -> None:
        """A checkbox or radio button takes its label's text as its name, on its own line: the label is
        read with the box it ticks, not on the line before or after it. A field already named by its label's
        hidden words (walker.js `nameField`) does not read them twice."""
        is_box = control.tag == "input" and control.attrs.get("type", "").lower() in ("checkbox", "radio")
        text = " ".join("".join(label.text).split())
        if is_box and text and not control.text:
            control.text.append(text)
            control.named_by_text = True
            label.named_control = True
        elif text and " ".join(control.attrs.get(rules.ICON_NAME, "").split()) == text:
            label.named_control = True  # words drawn for screen readers only, that name the field already

    def _unlabelled_box(self, document: Document, found: Found) -> bool:
        """A checkbox or radio button no label[for] names elsewhere. (Inside a <label> that is offered, the
        label takes the text after it first; inside one that is not, as for a disabled box, the box does.)"""
        if found.tag != "input" or found.attrs.get("type", "").lower() not in ("checkbox", "radio"):
            return False
        targets = self._label_targets.get(id(document))
        if targets is None:
            label_id = document.string_id("label"), document.string_id("LABEL")
            targets = self._label_targets[id(document)] = {
                document.attrs(node).get("for", "") for node in range(len(document.node_type))
                if document.name_index[node] in label_id and document.node_type[node] == ELEMENT_NODE}
        return found.attrs.get("id", "\0") not in targets

    def _all_found(self) -> list[Found]:
        found: list[Found] = []
        for item in self.result.items:
            if isinstance(item, Found):
                found.append(item)
            elif isinstance(item, MixedLine):
                found += [p for p in item.parts if isinstance(p, Found)]
        return found

    def _walk(self, document: Document, *, hidden: bool, clip: Rect, depth: int, sink: Found | None) -> None:
        strings = document.strings
        node_type = document.node_type
        layout_of = document.layout_of
        bounds = document.bounds
        styles = document.styles
        ends = document.subtree_end
        clickable = document.clickable
        ox, oy = document.offset
        _, vy, vw, vh = self.viewport
        viewport_area = vw * vh
        hidden_visibility = {document.string_id("hidden"), document.string_id("collapse")} - {-1}
        pointer_id = document.string_id("pointer")
        zero_id = document.string_id("0")
        unclipped = (document.string_id("auto"), document.string_id("none"))
        attribute_ids = {document.string_id(name) for name in (
            "role", "contenteditable", "tabindex", "aria-hidden")} - {-1}
        band_top, band_bottom = vy - SKIP_MARGIN, vy + vh + SKIP_MARGIN
        math_tags = {document.string_id(name) for name in (formulas.MATH_TAG, *formulas.CONTAINER_TAGS,
                                                           *(t.upper() for t in formulas.CONTAINER_TAGS))} - {-1}
        math_classes = formulas.container_classes(document)
        count = len(node_type)
        root = _Frame(count, hidden, clip, False, sink, depth, False)
        stack: list[_Frame] = [root]
        node = 0
        while node < count:
            top = stack[-1]
            while top.end < node:
                stack.pop()
                if top.block:
                    self._flush()
                top = stack[-1]
            kind = node_type[node]
            layout = layout_of[node]

            if kind == TEXT_NODE:
                if layout >= 0 and not top.hidden:
                    style = styles[layout]
                    if not (style and style[VISIBILITY] in hidden_visibility):
                        if top.sink is not None:  # an element's name, even where it runs out of view
                            top.sink.text.append(strings[document.value_index[node]])
                        elif self._box_named_by_next_text is not None:
                            self._box_named_by_next_text.text.append(strings[document.value_index[node]])
                        else:
                            x, y, w, h = bounds[layout]
                            cx, cy, cw, ch = top.clip
                            if x + ox < cx + cw and x + ox + w > cx and y + oy < cy + ch and y + oy + h > cy:
                                if not self._buffer:
                                    self._buffer_depth = top.depth
                                self._buffer.append(strings[document.value_index[node]])
                                if self._inline is not None and node > self._inline[1]:
                                    self._inline = None  # text between: it says where words part
                node += 1
                continue

            end = ends[node]
            if kind != ELEMENT_NODE:
                if end > node:
                    stack.append(_Frame(end, top.hidden, top.clip, top.pointer, top.sink, top.depth, False,
                                        top.editable, top.box, top.cell))
                node += 1
                continue

            tag = strings[document.name_index[node]].lower()
            if layout < 0:
                # Not rendered itself. display:contents children may still be; a display:none subtree
                # has no layout anywhere below, so its nodes fall through here one by one.
                if tag in rules.OPAQUE_TAGS or tag == "head":
                    node = end + 1
                    continue
                if end > node:
                    stack.append(_Frame(end, top.hidden, top.clip, top.pointer, top.sink, top.depth, False,
                                        top.editable, top.box, top.cell))
                node += 1
                continue

            x, y, w, h = bounds[layout]
            if h > 0 and (y + oy + h < band_top or y + oy > band_bottom) and not document.escapes(node):
                # Far above or below the viewport, with nothing inside drawn elsewhere: only count what
                # can be used in there (by a cheap test: no text, no lines).
                if not top.hidden:
                    self._count_beyond(document, node, end, y + oy < vy)
                if display_is_block(strings, styles[layout]):
                    self._flush()
                node = end + 1
                continue
            style = styles[layout]
            raw_attrs = document.attributes[node]
            # Cut away by clip / clip-path (screen-reader-only): not drawn, though its text still names an
            # element it stands in.
            clipped = len(style) > CLIP_PATH and (style[CLIP], style[CLIP_PATH]) != unclipped \
                and clipped_away(strings, style)
            # A <select> or file input made transparent itself is the styled face's working part: laid over
            # the face, it takes the clicks a person aims at it (it is offered only where it is hit).
            hidden_here = top.hidden or (len(style) > OPACITY and style[OPACITY] == zero_id
                                         and not transparent_control(document, node, tag)) \
                or (clipped and top.sink is None)
            attrs: dict[str, str] | None = None
            if not hidden_here and raw_attrs and attribute_ids.intersection(raw_attrs):
                attrs = document.attrs(node)
                if attrs.get("aria-hidden", "").lower() == "true":
                    hidden_here = True
            invisible = hidden_here or clipped or (len(style) > VISIBILITY and style[VISIBILITY] in hidden_visibility)
            pointer = len(style) > CURSOR and style[CURSOR] == pointer_id
            display = strings[style[DISPLAY]] if style and style[DISPLAY] >= 0 else ""
            rect = (x + ox, y + oy, w, h)

            # --- where it stands in the text ---
            block = display not in rules.INLINE_DISPLAYS
            if top.sink is not None and (block or display == "table-cell") and not hidden_here:
                top.sink.text.append(" ")  # <a><h3>Red shoe</h3><p>$40</p></a> names it "Red shoe $40"
            if display == "table-cell":
                block = False
                if self._buffer:
                    self._buffer.append(" | ")
            elif tag == "br":
                if top.sink is not None:
                    top.sink.text.append(" ")  # inside a name: "<a>the<br>terms</a>" is named "the terms"
                elif top.cell:
                    self._buffer.append(" ")
                else:
                    self._flush()  # "first line<br>second line" read "first linesecond line"
            elif block and top.cell:
                block = False
                if self._buffer:
                    self._buffer.append(" ")
            elif block:
                self._flush()
            elif self._buffer and tag not in rules.PHRASING_TAGS and (
                    display not in rules.RUNNING_DISPLAYS or self._apart(document, rect)):
                self._buffer.append(" ")  # <span>World</span><span>1 h ago</span> set apart: two words
            if display in rules.RUNNING_DISPLAYS and w > 0:
                self._inline = (document, end, rect)
            if tag in rules.HEADINGS and not hidden_here and not top.cell:
                self._flush()
                self._prefix = rules.HEADINGS[tag]
                block = True

            # --- a formula: read as a person reads it, not as the glyphs or the MathML it is drawn with ---
            if (math_tags or math_classes) and not hidden_here and (
                    document.name_index[node] in math_tags or math_classes.intersection(raw_attrs)) and (
                    tag == formulas.MATH_TAG or formulas.is_container(document, node, tag, math_classes)):
                self._add_formula(formulas.formula(document, node), top, rect)
                if block:
                    self._flush()
                node = end + 1
                continue

            # --- is it something a person can use? ---
            role: str | None = None
            scroll: tuple[int, int, int, int] | None = None
            if not invisible and tag == "body" and attrs is not None:
                # A rich-text editor is often an iframe whose whole body is contenteditable.
                role = "textbox" if attrs.get("contenteditable", "x").lower() in rules.EDITABLE_VALUES else None
            elif not invisible and tag not in ("html", "body"):
                if tag in rules.NATIVE_TAGS or attrs is not None:
                    attrs = attrs if attrs is not None else document.attrs(node)
                    role = rules.interactive_role(tag, attrs)
                # Inside an editor, paragraphs are text to edit, not things to click.
                if role is None and not top.editable and node in clickable \
                        and w * h < viewport_area * DELEGATE_AREA_SHARE:
                    role = "label" if tag == "label" else "clickable"
                if role is None and not top.editable and pointer and not top.pointer:
                    role = "label" if tag == "label" else "clickable"
                scroll = scroll_extent(document, node, layout, style) or field_scroll(attrs)
                if role is None and scroll is not None:
                    role = "scrollable"
            found: Found | None = None
            if role is not None:
                attrs = attrs if attrs is not None else document.attrs(node)
                key = (document.key_scope, document.backend_id[node])
                self.result.seen.add(key)
                box = rect if w > 0 and h > 0 else None if clips(strings, style) \
                    else descendant_box(document, node, ox, oy)
                if box is not None and (box[2] < MIN_SIZE or box[3] < MIN_SIZE):
                    box = None  # too small to see or point at: there for screen readers
                visible = intersect(box, top.clip) if box else None
                if visible is not None and self._inert(document, node):
                    pass  # behind a modal dialog: seen, not offered
                elif visible is None:
                    if box and box[2] > 0 and box[3] > 0 and (top.box is None or intersect(box, top.box)):
                        if box[1] + box[3] <= vy:
                            self.result.above += 1
                        elif box[1] >= vy + vh:
                            self.result.below += 1
                elif (point := self._reachable_point(document, node, visible)) is not None:
                    named_by_text = (tag in rules.NAMED_BY_TEXT_TAGS or role in rules.NAMED_BY_TEXT_ROLES) \
                        and scroll is None
                    found = Found(document, node, tag, role, attrs, visible, top.depth + _tree_level(role, attrs),
                                  named_by_text,
                                  scroll=scroll, point=point)
                    self._box_named_by_next_text = None
                    # In running text, a link stays in its sentence; in a row, a control with no content of its
                    # own stays in the row's line.
                    in_line = (named_by_text and display == "inline") or (top.cell and (named_by_text or end == node))
                    if in_line and top.sink is None:
                        if not self._buffer:  # a link in running text stays in its sentence
                            self._buffer_depth = top.depth
                        elif isinstance(self._buffer[-1], Found):
                            self._buffer.append(" ")  # two controls side by side: two names
                        self._buffer.append(found)
                    else:
                        self._flush()
                        self.result.items.append(found)
                        if top.sink is None and self._unlabelled_box(document, found):
                            self._box_named_by_next_text = found
                            found.named_by_text = True

            # --- its content ---
            if tag in rules.OPAQUE_TAGS or (invisible and tag == "iframe"):
                node = end + 1
                continue
            if tag == "iframe":
                child = self.frame_document(document, node)
                if child is not None:
                    self._enter_frame(document, node, child, rect, top, hidden_here, found)
                node = end + 1
                continue
            if tag == "img" and not hidden_here and (top.sink is not None or found is not None):
                alt = (attrs if attrs is not None else document.attrs(node)).get("alt", "")
                if alt:
                    (found or top.sink).text.append(" " + alt + " ")  # type: ignore[union-attr]
            if end > node:
                clip, container = top.clip, top.box
                if tag not in ("html", "body") and clips(strings, style):
                    clip = intersect(clip, rect) or (rect[0], rect[1], 0, 0)
                    container = (intersect(container, rect) or (rect[0], rect[1], 0, 0)) if container else rect
                if found is not None:
                    sink = found if found.named_by_text else None
                    # A tree item's own items (a folder's files) are indented under it.
                    nested = not found.named_by_text or (found.role == "treeitem" and "aria-level" not in found.attrs)
                    depth = top.depth + (1 if nested else 0)
                    block = block or not found.named_by_text  # its content lines end with it
                else:
                    sink, depth = top.sink, top.depth
                editable = top.editable or (found is not None and found.role == "textbox")
                cell = top.cell or (display == "table-cell" and h <= ROW_CELL_HEIGHT)
                stack.append(_Frame(end, hidden_here, clip, pointer, sink, depth, block, editable, container, cell))
            elif block:
                self._flush()
            node += 1
        while len(stack) > 1:
            if stack.pop().block:
                self._flush()

    def _add_formula(self, text: str, top: _Frame, rect: Rect) -> None:
        """A formula's words where a text node's would stand (see _walk): in the name of the element it is in or
        of the box before it, or in the running text if it is in view."""
        if not text:
            return
        if top.sink is not None:
            top.sink.text.append(f" {text} ")
        elif self._box_named_by_next_text is not None:
            self._box_named_by_next_text.text.append(f" {text} ")
        elif intersect(rect, top.clip) is not None:
            if not self._buffer:
                self._buffer_depth = top.depth
            self._buffer.append(text)
            self._inline = None

    def _count_beyond(self, document: Document, node: int, end: int, above: bool) -> None:
        """Count what a person could use in a subtree far from the viewport, by the rules that offer it
        once it is in view (frames inside included), and remember it as seen: scrolling to it later does
        not make it new."""
        strings, node_type, layout_of = document.strings, document.node_type, document.layout_of
        bounds, styles, ends, clickable = document.bounds, document.styles, document.subtree_end, document.clickable
        hidden_visibility = {document.string_id("hidden"), document.string_id("collapse")} - {-1}
        math_classes = formulas.container_classes(document)
        pointer_id, zero_id = document.string_id("pointer"), document.string_id("0")
        none_id = document.string_id("none")
        unclipped = (document.string_id("auto"), none_id)
        viewport_area = self.viewport[2] * self.viewport[3]
        session_id = document.key_scope
        stack: list[tuple[int, bool, bool]] = []  # (subtree end, pointer cursor, inside an editor)
        count = 0
        inner = node
        while inner <= end:
            while stack and stack[-1][0] < inner:
                stack.pop()
            pointer_above, editable = stack[-1][1:] if stack else (False, False)
            layout = layout_of[inner]
            if node_type[inner] != ELEMENT_NODE or layout < 0:
                inner += 1
                continue
            style = styles[layout]
            attrs = document.attrs(inner) if document.attributes[inner] else {}
            if (len(style) > OPACITY and style[OPACITY] == zero_id) or (style and style[DISPLAY] == none_id) \
                    or attrs.get("aria-hidden", "").lower() == "true" \
                    or (len(style) > CLIP_PATH and (style[CLIP], style[CLIP_PATH]) != unclipped
                        and clipped_away(strings, style)):
                inner = ends[inner] + 1  # nothing in there can be seen
                continue
            tag = strings[document.name_index[inner]].lower()
            pointer = len(style) > CURSOR and style[CURSOR] == pointer_id
            x, y, w, h = bounds[layout]
            role: str | None = None
            # A formula, focusable for MathJax's menu: text, not a control.
            if tag in formulas.CONTAINER_TAGS or formulas.is_container(document, inner, tag, math_classes):
                inner = ends[inner] + 1
                continue
            if tag not in ("html", "body") and not (len(style) > VISIBILITY and style[VISIBILITY] in hidden_visibility):
                role = rules.interactive_role(tag, attrs) if tag in rules.NATIVE_TAGS or attrs else None
                listening = inner in clickable and w * h < viewport_area * DELEGATE_AREA_SHARE
                # (a clickable <label> is offered only where its control is not: not counted)
                if role is None and not editable and tag != "label" and (listening or (pointer and not pointer_above)):
                    role = "clickable"
                if role is None and scroll_extent(document, inner, layout, style) is not None:
                    role = "scrollable"
            if role is not None:
                self.result.seen.add((session_id, document.backend_id[inner]))
                box = (x, y, w, h) if w > 0 and h > 0 else None if clips(strings, style) \
                    else descendant_box(document, inner, 0.0, 0.0)
                if box is not None and box[2] >= MIN_SIZE and box[3] >= MIN_SIZE and not self._inert(document, inner):
                    count += 1
            if tag == "iframe":
                child = self.frame_document(document, inner)
                if child is not None and child.node_type:
                    child.owner = (document, inner)
                    self._count_beyond(child, 0, len(child.node_type) - 1, above)
            if ends[inner] > inner:
                stack.append((ends[inner], pointer, editable or role == "textbox"))
            inner += 1
        if above:
            self.result.above += count
        else:
            self.result.below += count

    def _enter_frame(self, parent: Document, node: int, child: Document, rect: Rect,
                     top: _Frame, hidden: bool, found: Found | None) -> None:
        key = (parent.key_scope, parent.backend_id[node])
        left, top_inset, right, bottom = self.frame_insets.get(key, DEFAULT_FRAME_INSETS)
        content = (rect[0] + left, rect[1] + top_inset, rect[2] - left - right, rect[3] - top_inset - bottom)
        child.offset = (content[0] - child.scroll_x, content[1] - child.scroll_y)
        child.owner = (parent, node)
        clip = intersect(top.clip, content)
        if clip is None:  # in the margin around the viewport, but not in view
            self._count_beyond(child, 0, len(child.node_type) - 1, rect[1] < self.viewport[1])
            return
        self._flush()
        self._walk(child, hidden=hidden, clip=clip, depth=top.depth + (1 if found else 0), sink=None)
        self._flush()
