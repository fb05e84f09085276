"""A formula as a person reads it, on one line: "x = (−b ± √(b^2 − 4ac))/(2a)".

MathJax and KaTeX draw a formula with CSS glyphs, an SVG or glyph spans (hidden from screen readers), and put
beside it, for screen readers only, its MathML: read as it was, the model saw nothing (or an empty, focusable
`<mjx-container>`), or glyph soup such as "x=−b±b2−4ac2a". A math container is read as its aria-label, else its
<math>'s alttext, else that MathML written out; with none of these it is left out. A page's own <math> drawn by the
browser is written out the same way."""

from __future__ import annotations

from .snapshot import ELEMENT_NODE, TEXT_NODE, Document

CONTAINER_TAGS = frozenset({"mjx-container"})  # MathJax 3
# The class attribute of a MathJax 2 container (HTML-CSS, SVG, CommonHTML output) and of KaTeX's, as they write it.
CONTAINER_CLASSES = ("MathJax", "MathJax_SVG", "MathJax_CHTML", "mjx-chtml MathJax_CHTML", "katex")
MATH_TAG = "math"
# Not drawn, or not the formula: KaTeX keeps its TeX source in an <annotation>.
_UNREAD = frozenset({"annotation", "annotation-xml", "mphantom", "none", "mprescripts"})
_TOKENS = frozenset({"mi", "mn", "mtext", "ms"})
# Operators set apart by spaces, unless one starts its row (a sign: "−b").
_SPACED = frozenset("=+−-±∓<>≤≥≠≈≡→←↔⇒⇔×÷·∈∉⊂⊆∪∩∧∨") | {"mod"}
# Fractions and scripts: their children, each one operand, in these places.
_LAYOUTS = {"mfrac": "{0}/{1}", "msup": "{0}^{1}", "mover": "{0}^{1}", "msub": "{0}_{1}", "munder": "{0}_{1}",
            "msubsup": "{0}_{1}^{2}", "munderover": "{0}_{1}^{2}"}
_INVISIBLE = {"\u2061": " ", "\u2062": "", "\u2063": "", "\u2064": ""}  # function application, times, ...


def container_classes(document: Document) -> set[int]:
    """The string ids of the class values that make an element a math container (none on a page without)."""
    return {document.string_id(value) for value in CONTAINER_CLASSES} - {-1}


def is_container(document: Document, node: int, tag: str, classes: set[int]) -> bool:
    if tag in CONTAINER_TAGS:
        return True
    if not classes:
        return False
    raw = document.attributes[node]
    class_id = document.string_id("class")
    return any(raw[i] == class_id and raw[i + 1] in classes for i in range(0, len(raw) - 1, 2))


def formula(document: Document, node: int) -> str:
    """What a math container (or a <math>) says: its aria-label, its <math>'s alttext, or that MathML written out."""
    label = " ".join(document.attrs(node).get("aria-label", "").split())
    if label:
        return label
    math = node if document.tag(node) == MATH_TAG else next(
        (n for n in range(node + 1, document.subtree_end[node] + 1)
         if document.node_type[n] == ELEMENT_NODE and document.tag(n) == MATH_TAG), -1)
    if math < 0:
        return ""
    alttext = " ".join(document.attrs(math).get("alttext", "").split())
    return alttext or " ".join(_read(document, math).split())


def _children(document: Document, node: int) -> list[int]:
    return [c for c in range(node + 1, document.subtree_end[node] + 1)
            if document.parent[c] == node and document.node_type[c] == ELEMENT_NODE]


def _text(document: Document, node: int) -> str:
    return "".join(document.strings[document.value_index[t]] for t in range(node + 1, document.subtree_end[node] + 1)
                   if document.node_type[t] == TEXT_NODE).strip()


def _operand(document: Document, node: int) -> str:
    """`node` read as one operand: a token ("2", "x", "sin") or what is in parentheses already stays; anything
    else gets parentheses ("2a", "iπ", "n + 1")."""
    while document.tag(node) == "mrow" and len(children := _children(document, node)) == 1:
        node = children[0]
    return _grouped(_read(document, node), document.tag(node) in _TOKENS)


def _grouped(text: str, token: bool = False) -> str:
    if len(text) <= 1 or (token and " " not in text) or (
            text.startswith("(") and text.endswith(")") and _balanced(text[1:-1])):
        return text
    return f"({text})"


def _balanced(text: str) -> bool:
    depth = 0
    for char in text:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth < 0:
            return False
    return depth == 0


def _read(document: Document, node: int) -> str:
    tag = document.tag(node)
    if tag in _UNREAD:
        return ""
    if tag in _TOKENS:
        return _text(document, node)
    if tag == "mo":
        return "".join(_INVISIBLE.get(char, char) for char in _text(document, node))
    if tag == "mspace":
        return " "
    children = _children(document, node)
    if tag in _LAYOUTS:
        operands = [_operand(document, child) for child in children[:3]]
        return _LAYOUTS[tag].format(*operands, "", "", "")
    if tag == "msqrt":
        return "√" + (_operand(document, children[0]) if len(children) == 1 else _grouped(_row(document, node)))
    if tag == "mroot" and len(children) == 2:
        return f"{_operand(document, children[0])}^(1/{_read(document, children[1])})"
    if tag == "mfenced":
        attrs = document.attrs(node)
        inner = ", ".join(filter(None, (_read(document, child) for child in children)))
        return f"{attrs.get('open', '(')}{inner}{attrs.get('close', ')')}"
    if tag == "mtable":
        return "; ".join(filter(None, (_row(document, row, ", ") for row in _children(document, node))))
    return _row(document, node)


def _row(document: Document, node: int, between: str = "") -> str:
    """The children of `node` one after another; operators set apart, a sign kept on what it signs."""
    out: list[str] = []
    sign = True  # an operator here is a sign: at the row's start or after another operator ("x = −b")
    for child in _children(document, node):
        text = _read(document, child)
        if not text:
            continue
        if document.tag(child) == "mo":
            if text.strip() in _SPACED and not sign:
                text, sign = f" {text.strip()} ", True
            elif text.strip() == ",":
                text, sign = ", ", True
        else:
            if out and between:
                out.append(between)
            sign = False
        out.append(text)
    return " ".join("".join(out).split())
