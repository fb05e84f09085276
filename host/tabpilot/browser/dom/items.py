"""What the walk finds, in reading order: elements to offer and the text lines around them."""

from __future__ import annotations

from dataclasses import dataclass, field

from .snapshot import Document, Rect


@dataclass(eq=False)
class Found:
    """An element the model will be offered."""

    document: Document
    node: int
    tag: str
    role: str
    attrs: dict[str, str]
    rect: Rect  # the visible part, in top-document coordinates
    depth: int
    named_by_text: bool
    text: list[str] = field(default_factory=list)
    scroll: tuple[int, int, int, int] | None = None  # px above, below, left, right
    point: tuple[float, float] | None = None  # where it is on top, in top-document coordinates
    named_control: bool = False  # a <label> whose text became its checkbox's name

    @property
    def key(self) -> tuple[str | None, int]:
        return (self.document.key_scope, self.document.backend_id[self.node])


@dataclass
class TextLine:
    text: str
    depth: int


@dataclass
class MixedLine:
    """Running text with elements inside it, e.g. a paragraph with links."""

    parts: list[str | Found]
    depth: int
    prefix: str = ""


Item = Found | TextLine | MixedLine


@dataclass
class WalkResult:
    items: list[Item] = field(default_factory=list)
    above: int = 0  # interactive elements above the viewport
    below: int = 0
    seen: set[tuple[str | None, int]] = field(default_factory=set)  # every interactive element's key
