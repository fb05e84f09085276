"""Found elements and text lines → the lines the model reads. An element on a line of its own, or
inside the running text it stands in:

    [12]<input type=email placeholder=you@example.com value=ann@example.com>
    *[13]<button>Save
    [14]<div scrollable="0px above, 1200px below">
    Read the [15]<a href=/terms>terms</a> before you order.
    [16]<button>More actions
    [17]<span icon=trash>
    [18]<li role=treeitem expanded=false haspopup>lib
    [19]<textarea value="Dear Ann, …" length=2400 scrollable="0px above, 300px below">
    [20]<input type=search name=s>Search this site

`*` marks an element that was not on the page at the previous step. Tabs indent what is inside a
scrollable or clickable container, and a tree item's own items. An icon-only control shows the name the page
gives it as its text, or `icon=` words its class names suggest (a guess); so does a field whose label is drawn
for screen readers only. Attribute values are short, a
field's value up to FIELD_VALUE_LIMIT (then its length); password values never appear."""

from __future__ import annotations

from . import rules
from .items import Found, Item, TextLine
from .snapshot import Document

FLAGS = frozenset({"editable", "disabled", "readonly", "filled", "required", "invalid", "haspopup"})
BUTTON_INPUT_TYPES = frozenset({"submit", "button", "reset"})
# What a browser writes on a submit/reset button that has no value of its own.
DEFAULT_BUTTON_LABELS = {"submit": "Submit", "reset": "Reset"}
NO_VALUE_INPUT_TYPES = frozenset({"checkbox", "radio", "submit", "button", "reset", "image"})


def merge_single_lines(items: list[Item]) -> list[Item]:
    """A container element followed by exactly one line of its own text reads better as one line:
    `[5]<div>Save` instead of `[5]<div>` + an indented `Save`."""
    merged: list[Item] = []
    i = 0
    while i < len(items):
        item = items[i]
        if (
            isinstance(item, Found)
            and not item.named_by_text
            and item.tag not in ("input", "select", "textarea")
            and i + 1 < len(items)
            and isinstance(items[i + 1], TextLine)
            and items[i + 1].depth == item.depth + 1
            and (i + 2 >= len(items) or items[i + 2].depth <= item.depth)
        ):
            item.text.append(items[i + 1].text.lstrip("# "))  # type: ignore[union-attr]
            item.named_by_text = True
            merged.append(item)
            i += 2
            continue
        merged.append(item)
        i += 1
    return merged


def element_text(found: Found) -> str:
    return " ".join("".join(found.text).split())


def select_options(document: Document, node: int) -> tuple[list[str], list[str]]:
    """(selected option texts, all option texts) of a <select>."""
    selected: list[str] = []
    options: list[str] = []
    strings = document.strings
    for inner in range(node + 1, document.subtree_end[node] + 1):
        if document.node_type[inner] != 1 or strings[document.name_index[inner]].lower() != "option":
            continue
        text = " ".join(
            strings[document.value_index[t]]
            for t in range(inner + 1, document.subtree_end[inner] + 1)
            if document.node_type[t] == 3
        )
        text = " ".join(text.split()) or document.attrs(inner).get("label", "")
        options.append(text)
        if inner in document.selected:
            selected.append(text)
    return selected, options


def icon_name(found: Found) -> str:
    """The name the page gives an icon-only control that has no aria-label or title, and no text but its
    icon font's ligature."""
    return " ".join(found.attrs.get(rules.ICON_NAME, "").split())


def accessible_name(found: Found) -> str:
    """The accessible name, near enough: a form control's labels (rules.FIELD_LABEL), aria-label, what the page
    names an icon-only control, own text, title, placeholder, alt, the words an icon's class names suggest; last,
    for a link with none of these (an image or an icon with nothing to name it), the words of its address's last
    part ("/share/twitter": twitter). The labels and that last one name it in what the model is told of its
    actions, not on its line: the line shows the address already, the labels stand on lines of their own."""
    attrs = found.attrs
    for candidate in (attrs.get(rules.FIELD_LABEL, ""), attrs.get("aria-label", ""), icon_name(found),
                      element_text(found), attrs.get("title", ""),
                      attrs.get("placeholder", ""), attrs.get("alt", ""), attrs.get(rules.ICON_HINT, "")):
        candidate = " ".join(candidate.split())
        if candidate:
            return candidate
    if found.tag == "a" and not found.attrs.get("href", "").strip().lower().startswith(("javascript:", "#")):
        return " ".join(rules.file_words(found.attrs.get("href", ""))[: rules.ICON_HINT_WORDS])
    return input_button_label(found)


def input_button_label(found: Found) -> str:
    """The words a person reads on an <input type=submit|button|reset> (its value) or an image button (its
    alt): such an input has no text of its own."""
    if found.tag != "input":
        return ""
    input_type = found.attrs.get("type", "").lower()
    if input_type == "image":
        return " ".join(found.attrs.get("alt", "").split())
    if input_type not in BUTTON_INPUT_TYPES:
        return ""
    index = found.document.input_value.get(found.node)
    value = found.document.strings[index] if index is not None and index >= 0 else found.attrs.get("value")
    return " ".join((value if value is not None else DEFAULT_BUTTON_LABELS.get(input_type, "")).split())


def current_value(found: Found) -> str | None:
    """What the field holds now, never for a password field."""
    document, node, tag = found.document, found.node, found.tag
    if rules.is_password_input(tag, found.attrs):
        return None
    if tag == "input":
        if found.attrs.get("type", "").lower() in NO_VALUE_INPUT_TYPES:
            return None
        index = document.input_value.get(node)
        return document.strings[index] if index is not None and index >= 0 else None
    if tag == "textarea":
        index = document.text_value.get(node, document.input_value.get(node))
        return document.strings[index] if index is not None and index >= 0 else None
    return None


def shown_attributes(found: Found, page_url: str) -> dict[str, str]:
    """The attributes worth showing the model, already shortened. Never a password value."""
    attrs = found.attrs
    tag = found.tag
    shown: dict[str, str] = {}
    explicit_role = attrs.get("role", "").split(" ")[0].lower()
    if explicit_role and explicit_role != tag:
        shown["role"] = explicit_role
    elif found.role == "textbox" and tag not in ("input", "textarea"):
        shown["editable"] = "true"  # contenteditable: nothing else says it takes typing
    input_type = attrs.get("type", "").lower()
    if tag == "input" and input_type not in rules.INPUT_TYPES_WITHOUT_TYPE_ATTR:
        shown["type"] = input_type
    text = element_text(found)
    for name in ("aria-label", "title"):
        value = " ".join(attrs.get(name, "").split())
        if value and value != text and not (name == "title" and "aria-label" in shown):
            shown[name] = rules.shorten(value, rules.ATTRIBUTE_LIMIT)
    if ("placeholder" in attrs and tag in ("input", "textarea")) or "aria-placeholder" in attrs:
        placeholder = attrs.get("placeholder") or attrs.get("aria-placeholder", "")
        if placeholder:
            shown["placeholder"] = rules.shorten(placeholder, rules.ATTRIBUTE_LIMIT)
    if rules.ICON_HINT in attrs and not text:
        if tag in ("input", "textarea", "select"):  # guessed from its id: that is what the model is shown
            shown["id"] = rules.shorten(attrs.get("id", ""), rules.ATTRIBUTE_LIMIT)
        else:
            shown["icon"] = rules.shorten(attrs[rules.ICON_HINT], rules.ATTRIBUTE_LIMIT)
    unlabelled = not any(k in shown for k in ("aria-label", "placeholder"))
    if tag in ("input", "textarea", "select") and unlabelled and attrs.get("name"):
        shown["name"] = rules.shorten(attrs["name"], rules.ATTRIBUTE_LIMIT)
    if tag == "select":
        selected, options = select_options(found.document, found.node)
        shown["value"] = rules.shorten(", ".join(selected), rules.VALUE_LIMIT)
        listed = [rules.shorten(o, 30) for o in options[: rules.OPTIONS_SHOWN]]
        more = len(options) - rules.OPTIONS_SHOWN
        shown["options"] = "|".join(listed) + (f"|…{more} more" if more > 0 else "")
    current = current_value(found)
    if current:
        shown["value"] = rules.shorten(current, rules.FIELD_VALUE_LIMIT)
        if len(current) > rules.FIELD_VALUE_LIMIT:
            shown["length"] = str(len(current))  # the whole value: read_text(index)
    if rules.is_password_input(tag, attrs):
        index = found.document.input_value.get(found.node, found.document.text_value.get(found.node, -1))
        if index >= 0 and found.document.strings[index]:
            shown["filled"] = "true"  # that it is filled, never with what
    if tag == "a" and "href" in attrs and (not text or _other_site(attrs["href"], page_url)):
        href = rules.short_href(attrs["href"], page_url)
        if href:
            shown["href"] = href
    if tag == "input" and input_type in ("checkbox", "radio"):
        shown["checked"] = "true" if found.node in found.document.checked else "false"
    if found.role == "label":  # standing in for an invisible checkbox or radio inside it or named by its `for`
        control = _checkable_inside(found.document, found.node) or _checkable_for(found.document, attrs)
        if control is not None:
            control_role = found.document.attrs(control).get("role", "").split(" ")[0].lower()
            if control_role == "switch":
                shown["role"] = "switch"
            shown["checked"] = "true" if control in found.document.checked else "false"
    if tag == "summary":
        details = found.document.parent[found.node]
        if details >= 0 and found.document.tag(details) == "details":
            shown["expanded"] = "true" if "open" in found.document.attrs(details) else "false"
    if "aria-valuenow" in attrs and "value" not in shown:
        shown["value"] = rules.shorten(attrs.get("aria-valuetext") or attrs["aria-valuenow"], rules.VALUE_LIMIT)
    for aria in ("checked", "selected", "expanded", "pressed"):
        aria_state = attrs.get(f"aria-{aria}")
        if aria_state in ("true", "false", "mixed") and aria not in shown:
            shown[aria] = aria_state
    if "disabled" in attrs or attrs.get("aria-disabled") == "true":
        shown["disabled"] = "true"
    shown.update(_more_states(tag, attrs, input_type))
    if found.scroll is not None:
        above, below, left, right = found.scroll
        parts = []
        if above or below:
            parts.append(f"{above}px above, {below}px below")
        if left or right:
            parts.append(f"{left}px left, {right}px right")
        shown["scrollable"] = "; ".join(parts)
    return shown


def _more_states(tag: str, attrs: dict[str, str], input_type: str) -> dict[str, str]:
    """Opens a popup (a submenu, a listbox), required, invalid, and a number's bounds: a spinner's
    up/down arrows (ArrowUp/ArrowDown) stay within them."""
    states: dict[str, str] = {}
    popup = attrs.get("aria-haspopup", "false").strip().lower()
    if popup and popup != "false":
        states["haspopup"] = "true" if popup in ("true", "menu") else popup
    if ("readonly" in attrs and tag in ("input", "textarea")) or attrs.get("aria-readonly") == "true":
        states["readonly"] = "true"  # typing into it is refused: the model should not try
    if ("required" in attrs and tag in ("input", "select", "textarea")) or attrs.get("aria-required") == "true":
        states["required"] = "true"
    if rules.FIELD_INVALID in attrs:  # what the browser says is wrong with it
        states["invalid"] = rules.shorten(attrs[rules.FIELD_INVALID], rules.MESSAGE_LIMIT)
    elif attrs.get("aria-invalid", "false").strip().lower() not in ("false", ""):
        states["invalid"] = "true"
    numeric = (tag == "input" and input_type in ("number", "range")) or \
        attrs.get("role", "").split(" ")[0].lower() in ("spinbutton", "slider")
    if numeric:
        for bound in ("min", "max", "step"):
            value = attrs.get(bound) if tag == "input" else attrs.get(f"aria-value{bound}")
            if value is not None and value.strip() and not (bound == "step" and value.strip() in ("1", "any")):
                states[bound] = rules.shorten(value, 12)
    return states


def _checkable_for(document: Document, attrs: dict[str, str]) -> int | None:
    """The checkbox or radio a <label for=id> names (in the same document)."""
    target = attrs.get("for", "").strip()
    if not target:
        return None
    id_name, wanted = document.string_id("id"), document.string_id(target)
    if id_name < 0 or wanted < 0:
        return None
    for node, raw in enumerate(document.attributes):
        if wanted in raw and any(raw[i] == id_name and raw[i + 1] == wanted for i in range(0, len(raw) - 1, 2)):
            if document.tag(node) == "input" and \
                    document.attrs(node).get("type", "").lower() in ("checkbox", "radio"):
                return node
            return None
    return None


def _checkable_inside(document: Document, node: int) -> int | None:
    for inner in range(node + 1, document.subtree_end[node] + 1):
        if document.node_type[inner] == 1 and document.tag(inner) == "input" and \
                document.attrs(inner).get("type", "").lower() in ("checkbox", "radio"):
            return inner
    return None


def _other_site(href: str, page_url: str) -> bool:
    short = rules.short_href(href, page_url)
    return bool(short) and not short.startswith("/")  # type: ignore[union-attr]


def element_line(found: Found, index: int, is_new: bool, attributes: dict[str, str], *, inline: bool = False) -> str:
    """`[12]<a href=/x>Name` on a line of its own; `[12]<a href=/x>Name</a>` inside running text."""
    parts = "".join(f" {k}" if k in FLAGS and v == "true" else f" {k}={rules.quote(v)}"
                    for k, v in attributes.items())
    # The name the page gives an icon-only control stands for its icon font's ligature, if it has one.
    name = icon_name(found) or (element_text(found) if found.named_by_text else "") or input_button_label(found)
    name = rules.shorten(name, rules.NAME_LIMIT)
    marker = "*" if is_new else ""
    if inline and (name or found.named_by_text):
        return f"{marker}[{index}]<{found.tag}{parts}>{name}</{found.tag}>"  # spaced only as the page is
    return f"{marker}[{index}]<{found.tag}{parts}>{name}"
