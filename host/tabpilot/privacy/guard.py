"""One task's privacy guard, used at the task's two boundaries (both in `agent.loop`):

- page text → model (`conceal`): each secret value becomes `<secret>NAME</secret>`; with masking on,
  e-mails, phones, cards, IBANs and the user's patterns become `[email 1]`, `[card 1]`, … — the same
  value the same placeholder for the whole task, noted with the site it was seen on. `note` tells the
  model which secrets it may type on the current page, and nothing of them elsewhere.
- model text → page (`reveal_input`): `<secret>NAME</secret>` and placeholders in `input_text` become
  the real values, only on a page of the secret's domain (or the site where the value was seen);
  anywhere else the action is refused with an observation for the model. `login_only` names the secrets
  among them that the typing action may put only into a login field (privacy/fields.py). In a document a
  secret was typed into (`typed_secret_in`), `check_after_typing` refuses what could carry it on from there
  into another field or away: a script, a copy or cut shortcut.

`hide` is the last net for what is recorded and shown (the store, pushes, results): no secret value
gets through it."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..browser.errors import ActionError
from ..browser.keys import Chord, parse_keys
from ..browser.passwords import ECHOED_MIN_LENGTH, echoes, encoded_cores, escaped_somewhere, hide_encoded, spelled
from ..i18n import text as say
from ..store.redact import hide_url_credentials
from .domains import domain_matches, page_host
from .masking import KINDS, MaskRules, PatternBudget, compile_pattern, find_personal_data
from .secrets import Secret, load_secrets

if TYPE_CHECKING:
    from ..store.settings import Settings

SECRET_TAG = re.compile(r"<secret>\s*([^<>\s]{1,64})\s*</secret>")
PLACEHOLDER = re.compile(rf"\[({'|'.join(KINDS)}) (\d+)\]")
_TAG_OR_PLACEHOLDER = re.compile(f"{SECRET_TAG.pattern}|{PLACEHOLDER.pattern}")
TYPING_TOOLS = {"input_text": "text"}  # tool → the input field whose text is typed into the page
SCRIPT_TOOLS = ("execute_javascript",)
KEY_TOOLS = {"send_keys": "keys"}  # tool → the input field naming the keys it presses


def guard_for(settings: Settings) -> PrivacyGuard:
    """A new guard with the user's secrets and masking settings (raises secrets.SecretError)."""
    rules = MaskRules(emails=settings.mask_emails, phones=settings.mask_phones, cards=settings.mask_cards,
                      ibans=settings.mask_ibans, patterns=tuple(settings.mask_patterns))
    return PrivacyGuard(load_secrets(), rules)


class Refused(ActionError):
    """A secret or masked value the model asked for may not go to this page; nothing was sent."""


@dataclass
class _Masked:
    value: str
    hosts: set[str] = field(default_factory=set)  # sites it was seen on: typed back only there


class PrivacyGuard:
    def __init__(self, secrets: Sequence[Secret] = (), rules: MaskRules | None = None) -> None:
        self.secrets = {secret.name: secret for secret in secrets}
        self._longest_first = sorted(secrets, key=lambda s: len(s.value), reverse=True)
        # A page that has a secret can show it altered: another case, reversed, spaced out ("s-3-c-r-e-t"). Only
        # values of passwords.ECHOED_MIN_LENGTH or more are looked for so (shorter ones turn up in ordinary text).
        self._altered = [(secret, echoes(secret.value)) for secret in self._longest_first
                         if len(secret.value) >= ECHOED_MIN_LENGTH]
        # ... or escaped, as a URL, a script, JSON or HTML writes it ("p%40ss" in a connection string, "p\\u0026q").
        self._spelled = [(secret, spelled(secret.value)) for secret in self._longest_first
                         if len(secret.value) >= ECHOED_MIN_LENGTH]
        # ... or encoded: base64 or hex, alone or with what it was sent with ("user:secret" in a header it shows).
        self._encoded = [(secret, encoded_cores(secret.value)) for secret in self._longest_first
                         if len(secret.value) >= ECHOED_MIN_LENGTH]
        self.rules = rules or MaskRules(cards=False)
        self._patterns = [compile_pattern(p) for p in self.rules.patterns]
        self._placeholder_of: dict[str, str] = {}
        self._masked: dict[str, _Masked] = {}
        self._counts: Counter[str] = Counter()
        self.masks_changed = 0  # counts each new placeholder and each new site of one: `masks()` to keep them
        self._typed_in: set[Hashable] = set()  # the documents a secret was typed into

    @property
    def masking(self) -> bool:
        return self.rules.any

    @property
    def active(self) -> bool:
        return bool(self.secrets) or self.masking or bool(self._masked)

    # --- page → model -------------------------------------------------------------------------
    def conceal(self, text: str, url: str | None = None, *, keep: str = "") -> str:
        """`text` as the model may read it; personal data in it is noted as seen on `url`'s site. The
        `keep` text (the user's own task) is not masked, though a secret value in it is still hidden. Raises
        masking.PatternTooSlow when the user's patterns take longer than masking.PATTERN_SECONDS on it (all its parts
        together)."""
        text = self.hide_secrets(text)
        if not self.masking:
            return text
        budget = PatternBudget()
        keep = self.hide_secrets(keep) if keep else ""  # as it reads in `text`
        if keep and keep in text:
            return keep.join(self._mask(part, url, budget) for part in text.split(keep))
        return self._mask(text, url, budget)

    def conceal_messages(
        self, messages: list[dict[str, Any]], url: str | None, *, keep: str = ""
    ) -> list[dict[str, Any]]:
        """Model request messages with every text part concealed (see `conceal`)."""
        concealed = []
        for message in messages:
            content = message.get("content")
            if isinstance(content, str):
                message = {**message, "content": self.conceal(content, url, keep=keep)}
            elif isinstance(content, list):
                parts = [{**part, "text": self.conceal(part["text"], url, keep=keep)}
                         if isinstance(part, dict) and isinstance(part.get("text"), str) else part
                         for part in content]
                message = {**message, "content": parts}
            concealed.append(message)
        return concealed

    def hide_secrets(self, text: str) -> str:
        for secret in self._longest_first:
            if secret.value in text:
                text = text.replace(secret.value, f"<secret>{secret.name}</secret>")
        for secret, altered in self._altered:
            text = altered.sub(f"<secret>{secret.name}</secret>", text)
        if self._spelled and escaped_somewhere(text, [secret.value for secret, _ in self._spelled]):
            for secret, escaped in self._spelled:
                text = escaped.sub(f"<secret>{secret.name}</secret>", text)
        for secret, cores in self._encoded:
            text = hide_encoded(text, cores, f"<secret>{secret.name}</secret>")
        # then any other password or token in a URL (the tab's own address too): a stored one is named above
        return hide_url_credentials(text)

    def hide(self, value: Any) -> Any:
        """A copy of a JSON-like value with every secret value (and known masked value) replaced."""
        if not self.active:
            return value
        if isinstance(value, str):
            text = self.hide_secrets(value)
            for placeholder, masked in self._masked.items():
                if masked.value in text:
                    text = text.replace(masked.value, placeholder)
            return text
        if isinstance(value, dict):
            return {key: self.hide(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [self.hide(item) for item in value]
        return value

    def note(self, url: str | None, language: str = "en-US") -> str:
        """What the model is told about this page: the secrets it may type here (none of any other
        site) and, once something was masked, how placeholders work. Empty when there is nothing."""
        here = sorted((secret for secret in self.secrets.values() if domain_matches(secret.domain, url)),
                      key=lambda secret: secret.name)
        lines = []
        if here:
            any_field = say("privacy.any_field", language)
            listed = ", ".join(f"<secret>{secret.name}</secret>" + (f" {any_field}" if secret.any_field else "")
                               for secret in here)
            lines.append(say("privacy.secrets_here", language, secrets=listed))
        if self._masked:
            lines.append(say("privacy.masked", language))
        return "<privacy>\n" + "\n".join(lines) + "\n</privacy>" if lines else ""

    def _mask(self, text: str, url: str | None, budget: PatternBudget) -> str:
        found = find_personal_data(text, self.rules, self._patterns, budget)
        if not found:
            return text
        host = page_host(url)
        parts, position = [], 0
        for item in found:
            placeholder = self._placeholder_of.get(item.value)
            if placeholder is None:
                self._counts[item.kind] += 1
                placeholder = f"[{item.kind} {self._counts[item.kind]}]"
                self._placeholder_of[item.value] = placeholder
                self._masked[placeholder] = _Masked(item.value)
                self.masks_changed += 1
            hosts = self._masked[placeholder].hosts
            if host is not None and host not in hosts:
                hosts.add(host)
                self.masks_changed += 1
            parts += [text[position:item.start], placeholder]
            position = item.end
        parts.append(text[position:])
        return "".join(parts)

    def masks(self) -> list[dict[str, Any]]:
        """Each placeholder this guard gave, with its value and the sites it was seen on (JSON), for `go_on_from`."""
        return [{"placeholder": placeholder, "value": masked.value, "hosts": sorted(masked.hosts)}
                for placeholder, masked in self._masked.items()]

    def go_on_from(self, masks: Iterable[Any]) -> None:
        """Take up the placeholders another guard of the same task gave (`masks()`, e.g. kept by the host before
        this one): a value it named keeps its name, and new ones are numbered after its. Entries that are not such
        a placeholder are left out."""
        for entry in masks:
            if not isinstance(entry, dict):
                continue
            placeholder, value, hosts = entry.get("placeholder"), entry.get("value"), entry.get("hosts")
            named = PLACEHOLDER.fullmatch(placeholder) if isinstance(placeholder, str) else None
            if named is None or not isinstance(value, str) or not value or not isinstance(hosts, list):
                continue
            masked = self._masked.setdefault(named.group(), _Masked(value))
            masked.hosts.update(host for host in hosts if isinstance(host, str))
            self._placeholder_of.setdefault(value, named.group())
            kind, number = named.group(1), int(named.group(2))
            self._counts[kind] = max(self._counts[kind], number)

    # --- model → page -------------------------------------------------------------------------
    def uses(self, value: Any) -> bool:
        """Whether a tool input names a secret or a masked value (and so needs the page's URL)."""
        texts = _strings(value)
        return any(SECRET_TAG.search(t) or (self._masked and PLACEHOLDER.search(t)) for t in texts)

    def reveal_input(self, tool: str, tool_input: Any, url: str | None) -> Any:
        """The tool input to execute, with secrets and placeholders in the typed text made real for the
        page at `url`; raises Refused when one may not go there. The model's own input is unchanged."""
        field_name = TYPING_TOOLS.get(tool)
        if field_name is None:
            if any(SECRET_TAG.search(t) for t in _strings(tool_input)):
                raise Refused(f"Secrets can only be typed with input_text; {tool} was not run.")
            return tool_input
        text = getattr(tool_input, field_name)
        revealed = self.reveal(text, url)
        return tool_input if revealed == text else tool_input.model_copy(update={field_name: revealed})

    def login_only(self, tool: str, tool_input: Any) -> tuple[str, ...]:
        """The stored secrets the typed text names that go only into a login field: all but `any_field` ones."""
        field_name = TYPING_TOOLS.get(tool)
        if field_name is None:
            return ()
        named = (self.secrets.get(match.group(1)) for match in SECRET_TAG.finditer(getattr(tool_input, field_name)))
        return tuple(dict.fromkeys(secret.name for secret in named if secret is not None and not secret.any_field))

    @property
    def typed_anywhere(self) -> bool:
        return bool(self._typed_in)

    def typed_secret_in(self, document: Iterable[Hashable]) -> None:
        """Note that a secret was typed into `document`, named by each of its keys (a tab's main document, whichever
        of its frames; the history entry it is shown at)."""
        self._typed_in.update(document)

    def check_after_typing(self, tool: str, tool_input: Any, document: Iterable[Hashable]) -> None:
        """Raise Refused for an action that could carry a secret typed into `document` (any of its keys noted) on
        into another field or off the page: a login field's text can be copied and pasted (Control+C works over CDP
        on a user-name field), and a script can read it and put it anywhere. Until the document is replaced (the
        login form sent) by one at another history entry."""
        if self._typed_in.isdisjoint(document):
            return
        if tool in SCRIPT_TOOLS:
            raise Refused(f"Refused: a stored secret was typed on this page, and a script could copy it into another "
                          f"field or send it elsewhere, so {tool} does not run here until the page changes (e.g. "
                          "the login form is sent). Nothing was run. Click and type instead.")
        keys = getattr(tool_input, KEY_TOOLS.get(tool, ""), None)
        copying = [chord for chord in _chords(keys) if _copies(chord)] if isinstance(keys, str) else []
        if copying:
            raise Refused(f"Refused: {copying[0]} copies or cuts text, and a stored secret was typed on this page: "
                          "it could be pasted into another field. No key was pressed. Type what you need instead.")

    def reveal(self, text: str, url: str | None) -> str:
        host = page_host(url) or "this page"

        def secret(match: re.Match[str]) -> str:
            name = match.group(1)
            known = self.secrets.get(name)
            if known is None:
                raise Refused(f"There is no secret named {name} that you may type here; nothing was typed. "
                              "Use only the secret names listed for the current page.")
            if not domain_matches(known.domain, url):
                raise Refused(f"The secret {name} may not be typed on {host}: it belongs to another site. "
                              "Nothing was typed.")
            return known.value

        def placeholder(match: re.Match[str]) -> str:
            masked = self._masked.get(match.group())
            if masked is None:
                return match.group()  # not one this task made: typed as written
            if not any(domain_matches(seen, url) for seen in masked.hosts):
                raise Refused(f"{match.group()} may not be typed on {host}: it was seen on another site. "
                              "Nothing was typed.")
            return masked.value

        def either(match: re.Match[str]) -> str:
            return secret(match) if match.group(1) is not None else placeholder(match)

        # one pass, so a value that happens to look like a tag or a placeholder is not expanded again
        return _TAG_OR_PLACEHOLDER.sub(either, text)


def _chords(keys: str) -> list[Chord]:
    try:
        return parse_keys(keys)
    except ActionError:
        return []  # send_keys says what is wrong with them


def _copies(chord: Chord) -> bool:
    """Control or Meta + C or X, and the older Control+Insert (copy) and Shift+Delete (cut)."""
    held, key = set(chord.modifiers), chord.key.key
    return (bool(held & {"Control", "Meta"}) and key.lower() in ("c", "x", "insert")) or \
        ("Shift" in held and key == "Delete")


def _strings(value: Any) -> Iterable[str]:
    if hasattr(value, "model_dump"):
        value = value.model_dump()
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)
