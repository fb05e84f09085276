"""Which fields a stored secret may be typed into: the one rule.

A secret is a credential, so it goes only where a login page asks for one (an input element):
- a password field: type=password, autocomplete current-password / new-password, or a field the page state
  showed as a password field before a "show password" toggle made it plain text;
- a one-time-code field: autocomplete one-time-code;
- a user-name field: autocomplete username or email, type=email, a name or id that says so (`user`, `login`,
  `email`, … as identifier-first pages name the one field they ask for first), or the field a login form
  pairs with its password field, as password managers pair them: the last text, e-mail, phone or number input
  before the form's first password field (outside any form: in the same document or shadow root).
Never a textarea, an editable area, a search field or any other input: a comment box, a search field or a
field whose text the page echoes or posts elsewhere would hand the value to the page, its address or its
analytics, and to the next page state. A secret stored with `--any-field` (an API key typed into a settings
page) goes into any text field of its domain.

The page tells the facts (FACTS, on the field text is about to be typed into); `credential_field` decides."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

PASSWORD_HINTS = frozenset({"current-password", "new-password"})
ONE_TIME_CODE_HINTS = frozenset({"one-time-code"})
USER_NAME_HINTS = frozenset({"username", "email"})
# A field's name or id, lower-cased without - _ . and spaces, as login pages name their user-name field.
USER_NAME_NAMES = frozenset({"user", "username", "userid", "login", "loginid", "loginname", "email",
                             "emailaddress", "identifier", "loginfmt", "signin"})

# The facts about the field (`this`): its tag, live type, autocomplete hint, name and id, and whether it is the
# field its login form pairs with a password field.
FACTS = """function() {
  const isPassword = (e) => e.type === 'password'
    || /(^|\\s)(current|new)-password(\\s|$)/i.test(e.getAttribute('autocomplete') || '');
  const PAIRED = ['text', 'email', 'tel', 'number'];
  let paired = false;
  if (this.localName === 'input' && PAIRED.includes(this.type)) {
    const root = this.getRootNode();
    const inputs = this.form ? [...this.form.elements].filter((e) => e.localName === 'input')
      : [...root.querySelectorAll('input')].filter((e) => !e.form);
    const password = inputs.findIndex(isPassword);
    if (password > 0) {
      const before = inputs.slice(0, password).filter((e) => PAIRED.includes(e.type) && e.checkVisibility());
      paired = before[before.length - 1] === this;
    }
  }
  return {tag: this.localName, type: this.localName === 'input' ? this.type : '',
          autocomplete: (this.getAttribute('autocomplete') || '').toLowerCase(),
          name: this.getAttribute('name') || '', id: this.id || '', pairedWithPassword: paired};
}"""


def credential_field(facts: dict[str, Any], *, shown_as_password: bool = False) -> str | None:
    """What a credential goes into the field as ("password", "one-time code", "user name"), or None: no secret
    belongs there. `shown_as_password`: the page state showed the model this field as a password field (it keeps
    that mark after a "show password" toggle made it plain text)."""
    if facts.get("tag") != "input":
        return None
    hints = set(str(facts.get("autocomplete", "")).split())
    if shown_as_password or facts.get("type") == "password" or hints & PASSWORD_HINTS:
        return "password"
    if hints & ONE_TIME_CODE_HINTS:
        return "one-time code"
    named = {_bare(facts.get("name")), _bare(facts.get("id"))}
    if hints & USER_NAME_HINTS or facts.get("type") == "email" or named & USER_NAME_NAMES \
            or facts.get("pairedWithPassword"):
        return "user name"
    return None


def refusal(names: Iterable[str], field: str) -> str:
    """What the model is told when it asked to type secrets (by name) into `field` (how results name it)."""
    listed = ", ".join(f"<secret>{name}</secret>" for name in names)
    return (f"Refused: {listed} may be typed only into a login field (a password, user name or e-mail, or "
            f"one-time-code field), and {field} is not one; a search box, a comment or any other field could show "
            "or send the value elsewhere. Nothing was typed. Type it into the login form's field instead; if this "
            "page has none, do not type it anywhere else: ask the user or finish with done.")


def _bare(text: Any) -> str:
    return "".join(ch for ch in str(text or "").lower() if ch not in "-_. ")
