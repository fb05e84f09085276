"""What counts as interactive, what a person can see, and which attributes are worth the model's tokens."""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import urljoin, urlsplit

from ...installer import extension_dir

NATIVE_TAGS = frozenset({"a", "button", "input", "select", "textarea", "summary"})
INTERACTIVE_ROLES = frozenset({
    "button", "link", "checkbox", "radio", "tab", "menuitem", "menuitemcheckbox", "menuitemradio",
    "option", "combobox", "listbox", "switch", "slider", "spinbutton", "searchbox", "textbox", "treeitem",
})
# Elements whose text is their name: the text goes on the element's line, not on a line of its own.
NAMED_BY_TEXT_TAGS = frozenset({"a", "button", "summary", "label", "option", "legend"})
NAMED_BY_TEXT_ROLES = frozenset({
    "button", "link", "checkbox", "radio", "tab", "menuitem", "menuitemcheckbox", "menuitemradio",
    "option", "switch", "treeitem",
})
# Their content is shown as a value instead of being read as text.
OPAQUE_TAGS = frozenset({"select", "textarea", "script", "style", "noscript", "template", "datalist"})
INLINE_DISPLAYS = frozenset({"inline", "contents", "inline-block", "inline-flex", "inline-grid", "ruby", "math", ""})
# Text that runs on with its neighbours: words are apart only where the page has whitespace
# (Enter "<span>Kanesha</span>" reads Enter "Kanesha").
RUNNING_DISPLAYS = frozenset({"inline", "contents"})
# Inline formatting that never separates words: "<b>un</b>done" is one word.
PHRASING_TAGS = frozenset({"b", "i", "em", "strong", "u", "s", "code", "mark", "small", "sub", "sup", "abbr", "q",
                           "cite", "kbd", "var", "dfn", "del", "ins", "bdi", "bdo", "font", "wbr"})
HEADINGS = {"h1": "# ", "h2": "## ", "h3": "### ", "h4": "#### ", "h5": "##### ", "h6": "###### "}
SCROLLING_OVERFLOW = frozenset({"auto", "scroll", "overlay"})
CLIPPING_OVERFLOW = frozenset({"auto", "scroll", "overlay", "hidden", "clip"})
EDITABLE_VALUES = frozenset({"", "true", "plaintext-only"})
INPUT_TYPES_WITHOUT_TYPE_ATTR = frozenset({"text", ""})

# Pseudo-attributes walker.js adds to what it read (names no real attribute can have: they hold a space): the
# name the page gives an icon-only control (aria-labelledby, alt, SVG <title>, a tooltip) or the words its
# class names suggest (a guess; for a field with no label, its id's); how far a text area scrolls
# ("above,below" in px); the browser's message for a field it finds invalid once used.
ICON_NAME, ICON_HINT = "tabpilot name", "tabpilot hint"
FIELD_SCROLL, FIELD_INVALID = "tabpilot scroll", "tabpilot invalid"
# The words of the labels that name a form control (aria-labelledby; else, with no aria-label, a <label for> or one
# around it) where its line does not show them: a label a person sees stands on a line of its own, and a line that
# shows another name (a placeholder, a title) keeps it. They name the control in what the model is told of its
# actions ("Selected 'Poetry' in [3] select 'Favourite genre'"), never on its line: no token more per step.
FIELD_LABEL = "tabpilot label"
# A text area or an editable element walker.js found holds a secret (its isSecret: one the page masks as a password,
# a one-time code's): a secret field as a password input is, whose text never reaches the model (an input is marked
# by its type, "password").
SECRET_FIELD = "tabpilot secret"

# Naming an icon-only control: extension/content/names.js does it in the page (for walker.js and for capture.js, the
# takeover record, a content script with no build step: the one copy), and holds the words of its rules; icons.py,
# reading a snapshot, follows them here.
NAMES_SCRIPT = extension_dir() / "content" / "names.js"


def _names_rules() -> dict[str, Any]:
    """names.js's rules: the JSON between its /*RULES*/ and /*END RULES*/ markers, less the lines of comments."""
    source = NAMES_SCRIPT.read_text(encoding="utf-8")
    block = source[source.index("/*RULES*/") + len("/*RULES*/"):source.index("/*END RULES*/")]
    lines = [line for line in block.splitlines() if not line.strip().startswith("//")]
    rules: dict[str, Any] = json.loads("\n".join(lines))
    return rules


_NAMES_RULES = _names_rules()
ICON_TOOLTIPS: tuple[str, ...] = tuple(_NAMES_RULES["tooltips"])  # in the order they are read
ICON_GENERIC_WORDS = frozenset(_NAMES_RULES["generic"])  # class-name words that say nothing of what an icon means
ICON_WORD_SYNONYMS: dict[str, str] = _NAMES_RULES["synonyms"]  # an icon named only "x" is a close button
ICON_DATA_ATTRIBUTES: tuple[str, ...] = tuple(_NAMES_RULES["data"])  # <i data-feather="x">
# A field with no label of any kind and no name attribute is guessed from its id's words ("search-input" → search,
# not ":r3:"), less these.
FIELD_ID_GENERIC_WORDS = frozenset({"input", "field", "form", "textbox", "textfield", "txt"})
ICON_FONT_CLASSES: tuple[str, ...] = tuple(_NAMES_RULES["fonts"])  # text drawn as an icon (a ligature)
ICON_HINT_WORDS: int = _NAMES_RULES["words"]
# Controls inside a control: what they show is their own name, not the one around them (a product card and the
# "Save" heart in it). By tag (an <a> only with an href) or by their role's first word.
INNER_CONTROL_TAGS = frozenset(_NAMES_RULES["innerTags"])
INNER_CONTROL_ROLES = frozenset(_NAMES_RULES["innerRoles"])


def is_inner_control(tag: str, attrs: dict[str, str]) -> bool:
    """As names.js `innerControl`."""
    if tag in INNER_CONTROL_TAGS:
        return tag != "a" or "href" in attrs
    role = attrs.get("role", "").split()
    return bool(role) and role[0].lower() in INNER_CONTROL_ROLES


# A file's or an icon's name rather than words ("arrow-left", "more_vert"): sprite tools write a symbol's file name
# as its <title>, and icon fonts draw such names as ligatures. (names.js `IDENTIFIER`)
IDENTIFIER = re.compile(r"^[a-z0-9]+([-_][a-z0-9]+)+$")


def meaningful_words(name: str) -> list[str]:
    """The words of a class name, a sprite's symbol id or an image's file name that may say what an icon means
    (as names.js `meaningfulWords`): "btn-sendMail" → send, mail; "scrolls_logo_150" → scrolls, logo;
    "octicon-x" → close. Parts that hold digits (hashes, sizes: "d6e62af173e2", "150"), short ones and generic
    words are left out."""
    parts = re.split(r"[-_.\s]+", _X_MARK.sub("xmark", _CAMEL.sub(r"\1-\2", name).lower()))
    words = [part for part in parts if part in ICON_WORD_SYNONYMS
             or (len(part) > 2 and _LETTERS.match(part) and part not in ICON_GENERIC_WORDS)]
    if len(words) == 1 and words[0] in ICON_WORD_SYNONYMS:
        return [ICON_WORD_SYNONYMS[words[0]]]  # the cross alone; with other words ("twitter-x") it is a letter
    return [word for word in words if len(word) > 2]


def file_words(src: str) -> list[str]:
    """The meaningful words of an image's file name (as names.js `fileWords`), none for a data: URL."""
    if src.strip().lower().startswith("data:"):
        return []
    name = src.split("#")[0].split("?")[0].rstrip("/").rsplit("/", 1)[-1]
    return meaningful_words(name.rsplit(".", 1)[0] if "." in name else name)


def field_id_words(field_id: str) -> list[str]:
    """What a field's id says it is for (walker.js `nameField` has the same): "search-input" → search."""
    return [word for word in meaningful_words(field_id) if word not in FIELD_ID_GENERIC_WORDS]


def fragment_words(href: str) -> list[str]:
    """The meaningful words of the symbol a sprite's <use href="icons.svg#icon-search"> draws."""
    return meaningful_words(href.split("#", 1)[1]) if "#" in href else []


_CAMEL = re.compile(r"([a-z])([A-Z])")
_X_MARK = re.compile(r"(?<![a-z0-9])x[-_]mark(?![a-z0-9])")  # heroicons' "x-mark": one word, a cross
_LETTERS = re.compile(r"^[a-z]+$")
ICON_FIELDS = frozenset({"input", "select", "textarea", "iframe", "body", "html", "label"})  # named otherwise
# Inputs whose name is not a label's: a button's value, an image's alt, nothing shown.
SELF_NAMED_INPUTS = frozenset({"hidden", "submit", "button", "reset", "image"})
# Inputs a label's text already names on their line (walk.py `_name_by_label`, or the text after them).
BOX_INPUTS = frozenset({"checkbox", "radio"})
# Controls without a tag of a form field that labels name as they name fields (besides contenteditable).
LABELLED_ROLES = frozenset({"combobox", "listbox", "checkbox", "radio", "switch", "slider", "spinbutton", "textbox",
                            "searchbox"})


def is_labelled_control(tag: str, attrs: dict[str, str]) -> bool:
    """A control other than <input>, <select> and <textarea> that a label names: a custom widget by its role (a
    div role=combobox), or a contenteditable editor."""
    role = attrs.get("role", "").split(" ")[0].lower()
    return role in LABELLED_ROLES or (tag not in ("html", "body")
                                      and attrs.get("contenteditable", "x").lower() in EDITABLE_VALUES)

NAME_LIMIT = 80
VALUE_LIMIT = 60
FIELD_VALUE_LIMIT = 500  # what a field holds is shown whole up to here; longer ones say their length
ATTRIBUTE_LIMIT = 40
MESSAGE_LIMIT = 120  # the browser's word on an invalid field: "Please include an '@' in the email address. …"
TEXT_LINE_LIMIT = 1500
OPTIONS_SHOWN = 8


def shorten(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def is_password_input(tag: str, attrs: dict[str, str]) -> bool:
    """A field holding a secret: its value must never reach the model. A "show password" toggle turns the
    type into text, so the autocomplete hint counts too, as do a card's security code and a one-time code (what
    capture.js hides from the takeover record; walker.js `isSecret` also counts a field the page masks with
    CSS, and marks it as a password field)."""
    if SECRET_FIELD in attrs:
        return True
    if tag != "input":
        return False
    hint = attrs.get("autocomplete", "").lower()
    return attrs.get("type", "").lower() == "password" or any(word in hint for word in SECRET_HINTS)


# The autocomplete hints of a field holding a secret (walker.js `isSecret` has the same list).
SECRET_HINTS = ("password", "cc-csc", "one-time-code")


def interactive_role(tag: str, attrs: dict[str, str]) -> str | None:
    """The reason an element is interactive by its markup alone (tag, role, editability), or None."""
    role = attrs.get("role", "").split(" ")[0].lower() if "role" in attrs else ""
    if role in INTERACTIVE_ROLES:
        return role
    if tag in NATIVE_TAGS:
        if tag == "input" and attrs.get("type", "").lower() == "hidden":
            return None
        if tag == "a" and "href" not in attrs:
            return None  # a bare anchor counts only if it has a click listener or looks clickable
        return tag
    if attrs.get("contenteditable", "x").lower() in EDITABLE_VALUES:
        return "textbox"
    tabindex = attrs.get("tabindex")
    if tabindex is not None and tabindex.strip().lstrip("-").isdigit() and int(tabindex) >= 0:
        return role or "focusable"
    return None


def short_href(href: str, page_url: str) -> str | None:
    """The part of a link target that tells the model something, or None for script/fragment links."""
    href = href.strip()
    if not href or href.startswith(("javascript:", "#")):
        return None
    try:
        target, page = urlsplit(urljoin(page_url, href)), urlsplit(page_url)
    except ValueError:
        return shorten(href, ATTRIBUTE_LIMIT)
    if target.scheme in ("mailto", "tel"):
        return shorten(href, ATTRIBUTE_LIMIT)
    if target.netloc and target.netloc != page.netloc:
        return shorten(target.netloc + target.path.rstrip("/"), ATTRIBUTE_LIMIT)
    path = target.path or "/"
    if target.query:
        path += "?" + target.query
    return shorten(path, ATTRIBUTE_LIMIT)


def quote(value: str) -> str:
    if value and all(c.isalnum() or c in "-_./:|@?=&%+#" for c in value):
        return value
    return '"' + value.replace('"', "'") + '"'
