"""Key names the model writes ("Enter", "Control+a", "Shift+Tab") → the key events CDP dispatches."""

from __future__ import annotations

import sys
from dataclasses import dataclass

from .errors import ActionError

# CDP Input.dispatchKeyEvent modifier bits
MODIFIER_BITS = {"Alt": 1, "Control": 2, "Meta": 4, "Shift": 8}


@dataclass(frozen=True)
class Key:
    key: str  # KeyboardEvent.key
    code: str  # KeyboardEvent.code
    key_code: int  # windowsVirtualKeyCode (KeyboardEvent.keyCode)
    text: str = ""  # what the key types, if anything
    location: int = 0


@dataclass(frozen=True)
class Chord:
    """One key pressed while holding zero or more modifiers, e.g. Control+Shift+T."""

    modifiers: tuple[str, ...]
    key: Key

    @property
    def modifier_bits(self) -> int:
        bits = 0
        for name in self.modifiers:
            bits |= MODIFIER_BITS[name]
        return bits

    def __str__(self) -> str:
        return "+".join([*self.modifiers, self.key.key if self.key.key != " " else "Space"])


NAMED_KEYS: dict[str, Key] = {
    "Enter": Key("Enter", "Enter", 13, "\r"),
    "Tab": Key("Tab", "Tab", 9),
    "Escape": Key("Escape", "Escape", 27),
    "Backspace": Key("Backspace", "Backspace", 8),
    "Delete": Key("Delete", "Delete", 46),
    "Insert": Key("Insert", "Insert", 45),
    "Space": Key(" ", "Space", 32, " "),
    "ArrowUp": Key("ArrowUp", "ArrowUp", 38),
    "ArrowDown": Key("ArrowDown", "ArrowDown", 40),
    "ArrowLeft": Key("ArrowLeft", "ArrowLeft", 37),
    "ArrowRight": Key("ArrowRight", "ArrowRight", 39),
    "Home": Key("Home", "Home", 36),
    "End": Key("End", "End", 35),
    "PageUp": Key("PageUp", "PageUp", 33),
    "PageDown": Key("PageDown", "PageDown", 34),
    "Shift": Key("Shift", "ShiftLeft", 16, location=1),
    "Control": Key("Control", "ControlLeft", 17, location=1),
    "Alt": Key("Alt", "AltLeft", 18, location=1),
    "Meta": Key("Meta", "MetaLeft", 91, location=1),
    **{f"F{n}": Key(f"F{n}", f"F{n}", 111 + n) for n in range(1, 13)},
}

ALIASES = {
    "ctrl": "Control", "control": "Control", "cmd": "Meta", "command": "Meta", "meta": "Meta",
    "super": "Meta", "win": "Meta", "windows": "Meta", "option": "Alt", "alt": "Alt", "shift": "Shift",
    "esc": "Escape", "return": "Enter", "del": "Delete", "ins": "Insert", "spacebar": "Space",
    "up": "ArrowUp", "down": "ArrowDown", "left": "ArrowLeft", "right": "ArrowRight",
    "pgup": "PageUp", "pgdn": "PageDown", "pagedown": "PageDown", "pageup": "PageUp",
}

# US layout punctuation: character → (code, keyCode, shifted character)
PUNCTUATION = {
    "-": ("Minus", 189, "_"), "=": ("Equal", 187, "+"), "[": ("BracketLeft", 219, "{"),
    "]": ("BracketRight", 221, "}"), "\\": ("Backslash", 220, "|"), ";": ("Semicolon", 186, ":"),
    "'": ("Quote", 222, '"'), ",": ("Comma", 188, "<"), ".": ("Period", 190, ">"),
    "/": ("Slash", 191, "?"), "`": ("Backquote", 192, "~"),
}
SHIFTED_DIGITS = ")!@#$%^&*("

# On macOS, Chromium only runs editing shortcuts delivered over CDP when told the command by name.
MAC_COMMANDS = {"a": "selectAll", "c": "copy", "x": "cut", "v": "paste", "z": "undo"}


def _character_key(char: str, shift: bool) -> Key:
    if char.isascii() and char.isalpha():
        upper = char.upper()
        typed = upper if shift or char.isupper() else char.lower()
        return Key(typed, f"Key{upper}", ord(upper), typed)
    if char.isdigit():
        typed = SHIFTED_DIGITS[int(char)] if shift else char
        return Key(typed, f"Digit{char}", ord(char), typed)
    for base, (code, key_code, shifted) in PUNCTUATION.items():
        if char in (base, shifted):
            return Key(char, code, key_code, char)
    # any other single character: no physical key, but it can still be typed
    return Key(char, "", 0, char)


def _canonical_name(name: str) -> str | None:
    if name in NAMED_KEYS:
        return name
    lowered = name.lower()
    if lowered in ALIASES:
        return ALIASES[lowered]
    for known in NAMED_KEYS:
        if known.lower() == lowered:
            return known
    return None


def parse_chord(text: str) -> Chord:
    """"Control+Shift+t" → Chord(("Control", "Shift"), Key("T"...)); "+" alone and "Control++" work too."""
    raw = text.strip()
    if not raw:
        raise ActionError("No key given: name keys like Enter, Tab, Escape, ArrowDown or Control+a.")
    if raw == "+":
        parts = ["+"]
    elif raw.endswith("++"):  # "Control++" ends in the plus key itself
        parts = [*raw[:-2].split("+"), "+"]
    else:
        parts = raw.split("+")
    parts = [p.strip() for p in parts]
    if "" in parts:
        raise ActionError(f"Cannot read the key combination {text!r}: write it like Control+a or Shift+Tab.")
    modifiers: list[str] = []
    for part in parts[:-1]:
        name = _canonical_name(part)
        if name not in MODIFIER_BITS:
            raise ActionError(
                f"{part!r} in {text!r} is not a modifier: use Control, Shift, Alt or Meta before the last key."
            )
        if name not in modifiers:
            modifiers.append(name)
    last = parts[-1]
    name = _canonical_name(last)
    if name is not None:
        key = NAMED_KEYS[name]
    elif len(last) == 1:
        key = _character_key(last, "Shift" in modifiers)
    else:
        raise ActionError(
            f"Unknown key {last!r}. Known keys: Enter, Tab, Escape, Backspace, Delete, Space, ArrowUp/Down/"
            "Left/Right, Home, End, PageUp, PageDown, F1-F12, single characters, and combinations like "
            "Control+a or Shift+Tab."
        )
    return Chord(tuple(modifiers), key)


def parse_keys(text: str) -> list[Chord]:
    """A space-separated sequence of chords: "Control+a Delete" presses two chords in turn."""
    if text == " ":
        return [Chord((), NAMED_KEYS["Space"])]
    if not text or not text.strip():
        raise ActionError("No keys given: name keys like Enter, Tab, Escape, ArrowDown or Control+a.")
    return [parse_chord(part) for part in text.split()]


def key_events(chord: Chord) -> list[dict[str, object]]:
    """The Input.dispatchKeyEvent parameter dicts that press and release `chord`."""
    events: list[dict[str, object]] = []
    held = 0
    for name in chord.modifiers:
        held |= MODIFIER_BITS[name]
        events.append(_event("rawKeyDown", NAMED_KEYS[name], held))
    key = chord.key
    # With Control/Alt/Meta held a key is a shortcut, not typing: it must not insert its character.
    types_text = bool(key.text) and not held & (MODIFIER_BITS["Control"] | MODIFIER_BITS["Alt"] | MODIFIER_BITS["Meta"])
    down = _event("keyDown" if types_text else "rawKeyDown", key, held)
    if types_text:
        down["text"] = down["unmodifiedText"] = key.text
    if sys.platform == "darwin" and chord.modifiers == ("Meta",) and key.key.lower() in MAC_COMMANDS:
        down["commands"] = [MAC_COMMANDS[key.key.lower()]]
    events.append(down)
    events.append(_event("keyUp", key, held))
    for name in reversed(chord.modifiers):
        held &= ~MODIFIER_BITS[name]
        events.append(_event("keyUp", NAMED_KEYS[name], held))
    return events


def _event(kind: str, key: Key, modifiers: int) -> dict[str, object]:
    event: dict[str, object] = {
        "type": kind,
        "key": key.key,
        "code": key.code,
        "windowsVirtualKeyCode": key.key_code,
        "nativeVirtualKeyCode": key.key_code,
        "modifiers": modifiers,
    }
    if key.location:
        event["location"] = key.location
    return event


def typing_events(char: str) -> list[dict[str, object]] | None:
    """Key events that type `char` on a US keyboard (with Shift where needed), or None when no key types
    it (é, 中, emoji): those go in as text instead."""
    if char == " ":
        return key_events(Chord((), NAMED_KEYS["Space"]))
    if len(char) != 1 or not char.isascii() or not char.isprintable():
        return None
    if char.isalpha():
        return key_events(Chord(("Shift",) if char.isupper() else (), _character_key(char, char.isupper())))
    if char.isdigit():
        return key_events(Chord((), _character_key(char, False)))
    if char in SHIFTED_DIGITS:
        return key_events(Chord(("Shift",), _character_key(str(SHIFTED_DIGITS.index(char)), True)))
    for base, (_code, _key_code, shifted) in PUNCTUATION.items():
        if char == base:
            return key_events(Chord((), _character_key(char, False)))
        if char == shifted:
            return key_events(Chord(("Shift",), _character_key(char, True)))
    return None
