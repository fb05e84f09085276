"""Boxes and styles read from a snapshot: visibility of a box, scroll extents, modal dialogs."""

from __future__ import annotations

import re

from . import rules
from .snapshot import CLIP, CLIP_PATH, DISPLAY, OVERFLOW_X, OVERFLOW_Y, POSITION, Document, Rect

# Smaller than this (CSS px) in width or height: a screen-reader-only box, not something to point at.
MIN_SIZE = 2.0
_NUMBER = re.compile(r"-?[\d.]+")


def intersect(a: Rect, b: Rect) -> Rect | None:
    x1, y1 = max(a[0], b[0]), max(a[1], b[1])
    x2, y2 = min(a[0] + a[2], b[0] + b[2]), min(a[1] + a[3], b[1] + b[3])
    if x2 <= x1 or y2 <= y1:
        return None
    return (x1, y1, x2 - x1, y2 - y1)


def modal_dialog(document: Document) -> tuple[Document, int, int] | None:
    """The open modal <dialog> (shown with showModal(): fixed in the top layer), the last one if several."""
    dialog_id = document.string_id("DIALOG")
    if dialog_id < 0:
        return None
    fixed_id = document.string_id("fixed")
    modal = None
    for node, name in enumerate(document.name_index):
        if name != dialog_id or document.layout_of[node] < 0:
            continue
        style = document.styles[document.layout_of[node]]
        if len(style) > POSITION and style[POSITION] == fixed_id and "open" in document.attrs(node):
            modal = (document, node, document.subtree_end[node])
    return modal


def display_is_block(strings: list[str], style: list[int]) -> bool:
    return bool(style) and style[DISPLAY] >= 0 and strings[style[DISPLAY]] not in rules.INLINE_DISPLAYS


def clips(strings: list[str], style: list[int]) -> bool:
    return len(style) > OVERFLOW_Y and (
        strings[style[OVERFLOW_X]] in rules.CLIPPING_OVERFLOW or strings[style[OVERFLOW_Y]] in rules.CLIPPING_OVERFLOW
    )


def clipped_away(strings: list[str], style: list[int]) -> bool:
    """Cut to nothing by `clip: rect(…)` (on a positioned box) or `clip-path: inset(…)`: the
    "visually hidden" pattern that keeps text for screen readers only."""
    if len(style) <= CLIP_PATH:
        return False
    clip, clip_path = strings[style[CLIP]], strings[style[CLIP_PATH]]
    if clip.startswith("rect(") and strings[style[POSITION]] in ("absolute", "fixed"):
        sides = [p.strip() for p in clip[5:-1].split(",")]
        if len(sides) == 4 and "auto" not in sides:
            top, right, bottom, left = (_leading_number(p) for p in sides)
            if right <= left or bottom <= top:
                return True
    if clip_path.startswith("inset("):
        values = clip_path[6:-1].split(" round ")[0].split()
        if values and all(v.endswith("%") for v in values):
            top, right, bottom, left = _box_sides([float(v[:-1]) for v in values])
            return top + bottom >= 100 or left + right >= 100
    return False


def _leading_number(text: str) -> float:
    """The number a CSS length starts with (`12px` → 12.0); 0.0 when it starts with none."""
    found = _NUMBER.match(text)
    return float(found.group()) if found else 0.0


def _box_sides(values: list[float]) -> tuple[float, float, float, float]:
    """CSS shorthand: 1 to 4 values → top, right, bottom, left."""
    if len(values) == 1:
        return values[0], values[0], values[0], values[0]
    if len(values) == 2:
        return values[0], values[1], values[0], values[1]
    if len(values) == 3:
        return values[0], values[1], values[2], values[1]
    return values[0], values[1], values[2], values[3]


def scroll_extent(document: Document, node: int, layout: int, style: list[int]) -> tuple[int, int, int, int] | None:
    """(px above, below, left, right) for a container the user can scroll, else None.

    Measured from where its content is laid out relative to its box (DOM rects would say it to the
    pixel, but asking Chromium for them doubles the snapshot's cost): exact up to the box's border."""
    if len(style) <= OVERFLOW_Y:
        return None
    strings = document.strings
    scrolls_y = strings[style[OVERFLOW_Y]] in rules.SCROLLING_OVERFLOW
    scrolls_x = strings[style[OVERFLOW_X]] in rules.SCROLLING_OVERFLOW
    if not (scrolls_x or scrolls_y):
        return None
    content = descendant_box(document, node, 0.0, 0.0)
    if content is None:
        return None
    x, y, w, h = document.bounds[layout]
    cx, cy, cw, ch = content
    above = below = before = after = 0
    if scrolls_y:
        above, below = round(max(0.0, y - cy)), round(max(0.0, cy + ch - (y + h)))
    if scrolls_x:
        before, after = round(max(0.0, x - cx)), round(max(0.0, cx + cw - (x + w)))
    if above <= 1 and below <= 1 and before <= 1 and after <= 1:
        return None
    return (above, below, before, after)


def descendant_box(document: Document, node: int, ox: float, oy: float) -> Rect | None:
    """The box around an element's rendered descendants, for elements that have no size of their own
    (an inline link wrapping a block image, a zero-height wrapper around floated content)."""
    x1 = y1 = float("inf")
    x2 = y2 = float("-inf")
    layout_of, bounds = document.layout_of, document.bounds
    for inner in range(node + 1, document.subtree_end[node] + 1):
        layout = layout_of[inner]
        if layout < 0:
            continue
        x, y, w, h = bounds[layout]
        if w <= 0 or h <= 0:
            continue
        x1, y1, x2, y2 = min(x1, x), min(y1, y), max(x2, x + w), max(y2, y + h)
    if x2 <= x1 or y2 <= y1:
        return None
    return (x1 + ox, y1 + oy, x2 - x1, y2 - y1)
