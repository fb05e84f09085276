"""Finding personal data in text: e-mail addresses, phone numbers, card numbers (Luhn-checked), IBANs
(mod-97 checked) and the user's own patterns (`/regex/` or a literal string)."""

from __future__ import annotations

import importlib
import re
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import regex

from ..i18n import WordedError, Words
from ..textsafety import quoted

KINDS = ("email", "phone", "card", "iban", "masked")  # "masked": the user's own patterns

_EMAIL = re.compile(r"(?<![\w.%+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}(?![\w-])")
# a run of digit groups (separated by one space or dash); a card is some of its consecutive groups
_DIGIT_RUN = re.compile(r"(?<![\w-])\d+(?:[ -]\d+)*(?![\w-])")
_GROUP = re.compile(r"\d+")
_IBAN_HEAD = re.compile(r"[A-Z]{2}\d{2} $")  # digits right after "DE89 " belong to an IBAN, not a card
_IBAN = re.compile(r"(?<![\w])[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}(?![\w])")
_PHONE = re.compile(r"(?:(?<![\w+])(?:\+|\(\d)[\d\s().-]{6,}\d|(?<![\w+.-])\d[\d\s().-]{7,}\d)(?![\w.-]\w)")
_DATE = re.compile(r"^\d{4}[-./]\d{1,2}[-./]\d{1,2}$|^\d{1,2}[-./]\d{1,2}[-./]\d{4}$")


class PatternError(ValueError):
    """A user pattern that is not a valid regular expression."""


# What the user's patterns together may take on one text the model is to read, in processor time (time.process_time,
# the clock the `regex` engine's timeout counts). The page chooses that text, and no check of a pattern finds every
# one that backtracks without end on some text: /(?:a|a)*$/ passes the nested-repeat check and took Python's re
# 8.9 s on 24 "a"s and a "!", the whole host frozen (the attack run). Python's re cannot be stopped and holds the GIL,
# so the patterns run on `regex`, which stops a match at its timeout: 0.1 s of processor time ended after 0.1 s on an
# idle machine and 0.22-0.38 s at a load average of 14 on 2 cores. A normal pattern takes well under a millisecond
# on a 200 KB page (bench/bench_privacy.py).
PATTERN_SECONDS = 0.1


class PatternTooSlow(WordedError):
    """A user pattern that did not finish on a text within PATTERN_SECONDS: the text cannot be masked, so it must
    not reach the model."""

    def __init__(self, pattern: str) -> None:
        super().__init__("failure.mask_too_slow", pattern=pattern, seconds=PATTERN_SECONDS)
        self.pattern = pattern


_DOUBLED = (0, 2, 4, 6, 8, 1, 3, 5, 7, 9)


def luhn_valid(digits: str) -> bool:
    if not digits.isdigit():
        return False
    odd = sum(int(char) for char in digits[-1::-2])
    even = sum(_DOUBLED[int(char)] for char in digits[-2::-2])
    return (odd + even) % 10 == 0


def iban_valid(text: str) -> bool:
    iban = text.replace(" ", "").upper()
    if not 15 <= len(iban) <= 34 or not iban.isalnum():
        return False
    moved = iban[4:] + iban[:4]
    return int("".join(str(int(char, 36)) for char in moved)) % 97 == 1


# A repeat of something that itself repeats without bound, as in (a+)+ or (\w+\s?)*: Python's matcher tries every
# way of splitting a run between them, and holds the GIL while it does. Seen in the attack run: /(a+)+$/ on a page
# with 34 "a"s and a "!" froze the host (ping unanswered for 60 s); such a pattern is refused when set.
NESTED_REPEAT = "nested repeat"

# Python's words for a bad regular expression (re.error.msg, which starts so) → the catalog's key
_REGEX_PROBLEMS = (
    ("unterminated character set", "regex.unterminated_set"),
    ("missing ), unterminated subpattern", "regex.unclosed_group"),
    ("unbalanced parenthesis", "regex.unbalanced"),
    (NESTED_REPEAT, "regex.nested_repeat"),
    ("nothing to repeat", "regex.nothing_to_repeat"),
    ("multiple repeat", "regex.multiple_repeat"),
    ("bad escape (end of pattern)", "regex.trailing_backslash"),
    ("bad escape", "regex.bad_escape"),
    ("bad character range", "regex.bad_range"),
    ("min repeat greater than max repeat", "regex.bad_repeat"),
    ("unknown extension", "regex.unknown_extension"),
    ("look-behind requires fixed-width pattern", "regex.lookbehind"),
    ("unknown group name", "regex.unknown_group"),
    ("bad character in group name", "regex.bad_group_name"),
)


def regex_problem(error: re.error, typed_before: int = 0) -> Words:
    """What is wrong with a regular expression, and where (the character as a person counts it, from 1, in
    what they typed: `typed_before` characters come before the expression, e.g. the `/` of `/.../`), in the
    catalog's words (a kind of error not listed here: as Python says it)."""
    what = Words("regex.other", message=error.msg)
    for start, key in _REGEX_PROBLEMS:
        if error.msg.startswith(start):
            what = Words(key, detail=error.msg.removeprefix(start).strip())
            break
    return what if error.pos is None else Words("regex.at", what=what, character=error.pos + 1 + typed_before)


def compile_pattern(pattern: str) -> UserPattern:
    """`/.../` is a regular expression (as Python's re reads it, whose words say what is wrong); anything else
    matches literally."""
    if len(pattern) >= 2 and pattern.startswith("/") and pattern.endswith("/"):
        expression = pattern[1:-1]
        try:
            re.compile(expression)
            if _nested_repeat(expression):
                raise re.error(NESTED_REPEAT)
            compiled = regex.compile(expression)
        except (re.error, regex.error) as exc:
            raise PatternError(f"{quoted(pattern)} is not a valid regular expression: {exc}") from exc
        return UserPattern(pattern, compiled)
    return UserPattern(pattern, regex.compile(regex.escape(pattern)))


def _nested_repeat(expression: str) -> bool:
    try:  # the stdlib's own parse of the expression
        constants: Any = importlib.import_module("re._constants")
        parser: Any = importlib.import_module("re._parser")
    except ImportError:  # another Python's internals: left to the user
        return False
    repeats = (constants.MAX_REPEAT, constants.MIN_REPEAT)

    def found(items: Any, under_repeat: bool) -> bool:
        for op, value in items:
            if op in repeats:
                high, body = value[1], value[2]
                inside = under_repeat or high == constants.MAXREPEAT or high > 1
                parts = [body] if not (under_repeat and high == constants.MAXREPEAT) else None
            elif op == constants.SUBPATTERN:
                inside, parts = under_repeat, [value[-1]]
            elif op == constants.BRANCH:
                inside, parts = under_repeat, list(value[1])
            elif op in (constants.ASSERT, constants.ASSERT_NOT):
                inside, parts = under_repeat, [value[1]]
            else:
                continue
            if parts is None or any(found(part, inside) for part in parts):
                return True
        return False

    return found(parser.parse(expression), False)


@dataclass(frozen=True)
class MaskRules:
    emails: bool = False
    phones: bool = False
    cards: bool = True
    ibans: bool = False
    patterns: tuple[str, ...] = ()

    @property
    def any(self) -> bool:
        return self.emails or self.phones or self.cards or self.ibans or bool(self.patterns)


@dataclass(frozen=True)
class Found:
    start: int
    end: int
    kind: str
    value: str


@dataclass(frozen=True)
class UserPattern:
    """One of the user's patterns: as they wrote it (`/.../` or literal text) and as it runs."""

    source: str
    compiled: regex.Pattern[str]


@dataclass
class PatternBudget:
    """The processor time the user's patterns may still take on one text (PrivacyGuard.conceal: its parts together)."""

    left: float = PATTERN_SECONDS


def find_personal_data(text: str, rules: MaskRules, patterns: Sequence[UserPattern] = (),
                       budget: PatternBudget | None = None) -> list[Found]:
    """The non-overlapping personal data in `text`, in order (the earlier, then the longer one wins). The user's
    `patterns` take from `budget` (by default a PATTERN_SECONDS of their own): past it, raises PatternTooSlow."""
    candidates = [*_user_matches(text, patterns, budget or PatternBudget()), *_candidates(text, rules)]
    candidates.sort(key=lambda f: (f.start, -(f.end - f.start)))
    chosen: list[Found] = []
    for found in candidates:
        if not chosen or found.start >= chosen[-1].end:
            chosen.append(found)
    return chosen


def _user_matches(text: str, patterns: Sequence[UserPattern], budget: PatternBudget) -> list[Found]:
    found: list[Found] = []
    for pattern in patterns:
        started = time.process_time()
        try:
            if budget.left <= 0:
                raise TimeoutError
            found += [Found(match.start(), match.end(), "masked", match.group())
                      for match in pattern.compiled.finditer(text, timeout=budget.left) if match.end() > match.start()]
        except TimeoutError:
            raise PatternTooSlow(pattern.source) from None
        finally:
            budget.left -= time.process_time() - started
    return found


def _candidates(text: str, rules: MaskRules) -> Iterator[Found]:
    if rules.emails and "@" in text:
        for match in _EMAIL.finditer(text):
            yield Found(match.start(), match.end(), "email", match.group())
    if rules.cards:
        for run in _DIGIT_RUN.finditer(text):
            if run.end() - run.start() < 13 or _IBAN_HEAD.search(text, max(0, run.start() - 5), run.start()):
                continue
            yield from _cards(text, [(g.start(), g.end()) for g in _GROUP.finditer(text, run.start(), run.end())])
    if rules.ibans:
        for match in _IBAN.finditer(text):
            if iban_valid(match.group()):
                yield Found(match.start(), match.end(), "iban", match.group())
    if rules.phones:
        for match in _PHONE.finditer(text):
            value = match.group().strip()
            digits = sum(char.isdigit() for char in value)
            if 7 <= digits <= 15 and not _DATE.match(value):
                yield Found(match.start(), match.start() + len(value), "phone", value)


def _cards(text: str, groups: list[tuple[int, int]]) -> Iterator[Found]:
    """Luhn-valid card numbers among consecutive digit groups, written as cards are: one run of 13-19
    digits, groups of four (the last may be shorter), or 4-6-5 / 4-6-4 (Amex, Diners). Leftmost first,
    the longest that passes Luhn."""
    lengths = [end - start for start, end in groups]
    first = 0
    while first < len(groups):
        found = next((last for last in reversed(_card_shapes(lengths, first))
                      if luhn_valid("".join(text[a:b] for a, b in groups[first:last + 1]))), None)
        if found is None:
            first += 1
            continue
        start, end = groups[first][0], groups[found][1]
        yield Found(start, end, "card", text[start:end])
        first = found + 1


def _card_shapes(lengths: list[int], first: int) -> list[int]:
    """The last group of each card-shaped run of groups starting at `first`, shortest first."""
    if 13 <= lengths[first] <= 19:
        return [first]
    if lengths[first] != 4:
        return []
    if lengths[first + 1:first + 2] == [6] and first + 2 < len(lengths) and lengths[first + 2] in (4, 5):
        return [first + 2]
    ends, total, last = [], 0, first
    while last < len(lengths) and total < 19:
        if lengths[last] != 4:
            if last > first + 2 and lengths[last] < 4 and 13 <= total + lengths[last] <= 19:
                ends.append(last)
            break
        total += 4
        if total >= 13:
            ends.append(last)
        last += 1
    return ends
