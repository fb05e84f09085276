"""Is an element covered by something painted on top of it (a modal, a sticky header, a cookie banner)?

The snapshot's paint order is shared by all boxes in one paint layer, and grows for every layer painted
later (positioned elements, stacking contexts). A box with a higher paint order that contains a point
of the element, and is not the element itself or inside it, takes the click there. Only boxes above
the document's base layer can cover anything, so on ordinary pages the index stays small."""

from __future__ import annotations

from .snapshot import ELEMENT_NODE, POINTER_EVENTS, VISIBILITY, Document, Rect

CELL = 128


class Occluders:
    """The boxes of one document that could be on top of something, bucketed by a coarse grid."""

    def __init__(self, document: Document, area: Rect) -> None:
        self.document = document
        ax, ay, aw, ah = area
        self._cells: dict[tuple[int, int], list[int]] = {}
        paint = document.paint_order
        if not paint:
            return
        base = _base_layer(document)
        styles = document.styles
        bounds = document.bounds
        none_id = document.string_id("none")
        hidden_ids = {document.string_id("hidden"), document.string_id("collapse")} - {-1}
        for layout in [i for i, order in enumerate(paint) if order > base]:
            style = styles[layout]
            if (len(style) > POINTER_EVENTS and style[POINTER_EVENTS] == none_id) or (
                len(style) > VISIBILITY and style[VISIBILITY] in hidden_ids
            ):
                continue
            x, y, w, h = bounds[layout]
            if w <= 0 or h <= 0 or x >= ax + aw or y >= ay + ah or x + w <= ax or y + h <= ay:
                continue
            for cx in range(int(max(x, ax)) // CELL, int(min(x + w, ax + aw)) // CELL + 1):
                for cy in range(int(max(y, ay)) // CELL, int(min(y + h, ay + ah)) // CELL + 1):
                    self._cells.setdefault((cx, cy), []).append(layout)

    def covers(self, node: int, x: float, y: float) -> bool:
        """Whether something other than `node` and its descendants is on top of it at (x, y)."""
        candidates = self._cells.get((int(x) // CELL, int(y) // CELL))
        if not candidates:
            return False
        document = self.document
        layout = document.layout_of[node]
        own_order = document.paint_order[layout] if layout >= 0 else 0
        last = document.subtree_end[node]
        node_of = document.layout_node
        bounds = document.bounds
        for other in candidates:
            if document.paint_order[other] <= own_order:
                continue
            other_node = node_of[other]
            if node <= other_node <= last:
                continue
            bx, by, bw, bh = bounds[other]
            if bx <= x < bx + bw and by <= y < by + bh:
                return True
        return False


def _base_layer(document: Document) -> int:
    """The paint order of the root element's layer: what ordinary content is painted with."""
    for node, kind in enumerate(document.node_type):
        if kind == ELEMENT_NODE:
            layout = document.layout_of[node]
            return document.paint_order[layout] if layout >= 0 else min(document.paint_order)
    return min(document.paint_order)
