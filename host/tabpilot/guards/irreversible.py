"""Which actions wait for the user's yes, decided in one place from the element the action targets.

`ask-before` (settings): `never`; `irreversible` (the default): submitting a form that has payment,
password or personal fields (clicking its submit button, or pressing Enter in one of its fields), and
clicking an element whose name says buy, pay, order, send, delete, remove, transfer, publish, confirm
(English and Chinese); `every`: every action that touches the page.

The words of the element's name come from the page state the model saw (its accessible name); the form's
fields are read from the page when the action is about to run."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..i18n import APPROVAL_ACTIONS, approval_action, approval_why, text

if TYPE_CHECKING:
    from ..agent.tools import ToolContext
    from ..browser.elements import ElementRef

IRREVERSIBLE_WORDS = re.compile(
    r"\b(?:buy|pay|order|send|delete|remove|transfer|publish|confirm|checkout|purchase)(?:s|ed|ing|ment)?\b"
    r"|购买|支付|付款|下单|订单|结算|发送|删除|移除|转账|汇款|发布|确认|提交订单",
    re.IGNORECASE,
)
# Actions that touch the page; under `every` each waits for a yes (reading, scrolling and waiting do not).
PAGE_ACTIONS = ("click_element_by_index", "input_text", "select_dropdown_option", "send_keys", "go_to_url",
                "go_back", "execute_javascript", "upload_file", "close_tab")

# The kinds of sensitive fields in the form an element belongs to (payment, password, personal), or null
# when it does not submit a form. `this`: the element; for a key press, the focused element.
FORM_FACTS = r"""function(viaKey) {
  let el = this;
  if (viaKey) {
    el = document.activeElement;
    while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
  }
  if (!el || !el.tagName) return null;
  const tag = el.tagName.toLowerCase(), type = (el.getAttribute('type') || '').toLowerCase();
  const form = el.form || el.closest('form');
  if (!form) return null;
  const button = (tag === 'button' && (type === '' || type === 'submit'))
    || (tag === 'input' && (type === 'submit' || type === 'image'));
  const field = tag === 'input' && !['button', 'checkbox', 'radio', 'file', 'reset'].includes(type);
  if (!(viaKey ? field : button)) return null;
  const kinds = new Set();
  for (const f of form.elements) {
    const t = (f.getAttribute('type') || '').toLowerCase();
    const labels = f.labels ? [...f.labels].map((l) => l.textContent).join(' ') : '';
    const words = [f.name, f.id, f.getAttribute('autocomplete'), f.getAttribute('placeholder'),
                   f.getAttribute('aria-label'), labels].filter(Boolean).join(' ').toLowerCase();
    if (t === 'password' || /password|passwd|one-time-code|密码/.test(words)) kinds.add('password');
    if (/cc-|card|cvc|cvv|iban|payment|卡号|银行/.test(words)) kinds.add('payment');
    if (t === 'email' || t === 'tel'
        || /e-?mail|phone|tel\b|address|street|postal|zip|birth|bday|ssn|passport|given-name|family-name/.test(words)
        || /full.?name|邮箱|电话|手机|地址|身份证|姓名/.test(words)) kinds.add('personal');
  }
  return [...kinds];
}"""


Reason = tuple[str, dict[str, Any]]  # why an action is asked: a code of i18n.APPROVAL_REASONS and its params


@dataclass(frozen=True)
class PendingAction:
    """What the user is asked about: "The agent wants to {action} on {site}", and why, in their language."""

    action_code: str  # click / type_into / … (i18n.APPROVAL_ACTIONS)
    action_params: dict[str, str]  # {"target": 'button "Place order"'}: the element as the model's page state named it
    site: str  # shop.example
    why_code: str  # name_says / form_fields / every_action (i18n.APPROVAL_REASONS)
    why_params: dict[str, Any] = field(default_factory=dict)  # {"word": "order"} / {"kinds": ["payment"]}

    @property
    def action(self) -> str:
        """click button "Place order": in English, as the record keeps it."""
        return self.action_words("en-US")

    def action_words(self, language: str | None = None) -> str:
        """What the action does in `language`; the element's name is the page's own, in every language."""
        return approval_action(self.action_code, self.action_params, language)

    def to_wire(self) -> dict[str, Any]:
        """`action` and `why` in English for older readers and logs; the codes and params for a reader that words
        them (i18n.approval_for_reader)."""
        return {"action": self.action, "actionCode": self.action_code, "actionParams": dict(self.action_params),
                "site": self.site, "why": self.why("en-US"), "whyCode": self.why_code,
                "whyParams": dict(self.why_params)}

    @classmethod
    def from_wire(cls, wire: Mapping[str, Any]) -> PendingAction:
        return cls(action_code=str(wire["actionCode"]), action_params=dict(wire.get("actionParams") or {}),
                   site=str(wire.get("site") or ""), why_code=str(wire["whyCode"]),
                   why_params=dict(wire.get("whyParams") or {}))

    def guarded(self) -> dict[str, str]:
        """What a guard's card keeps of it: the action and the site in English, and the codes a reader words them by
        (a page with no site: `noSite`, worded again by i18n.for_reader)."""
        return {"action": self.action, "site": self.site or text("approval.this_page", "en-US"),
                "actionCode": self.action_code, **self.action_params, **({} if self.site else {"noSite": "true"})}

    def why(self, language: str | None = None) -> str:
        return approval_why(self.why_code, self.why_params, language)

    def sentence(self, language: str | None = None) -> str:
        action = self.action_words(language)
        if self.site:
            return text("approval.wants", language, action=action, site=self.site)
        return text("approval.wants_here", language, action=action)


def named(element: ElementRef) -> str:
    """`button "Place order"`: how the question names an element."""
    kind = element.role or element.tag or "element"
    return f'{kind} "{" ".join(element.name.split())[:80]}"' if element.name else kind


def name_reason(name: str) -> Reason | None:
    found = IRREVERSIBLE_WORDS.search(name or "")
    return ("name_says", {"word": found.group(0)}) if found else None


async def pending_action(ask_before: str, tool: str, tool_input: Any, ctx: ToolContext) -> PendingAction | None:
    """The question to ask before this action, or None when it may run without one."""
    if ask_before == "never":
        return None
    every = ask_before == "every" and tool in PAGE_ACTIONS
    if tool == "click_element_by_index":
        element = ctx.elements.get(tool_input.index)
        if element is None:
            return None  # the tool itself says the index is wrong
        if await _refused_anyway(ctx, element):
            return None  # the click goes to a refused domain: the tool refuses it, nobody is asked about it
        why = name_reason(element.name) or _form_reason(await _form_kinds(ctx, element))
        return await _ask(ctx, ("click", {"target": named(element)}), why, every)
    if tool == "send_keys" and "enter" in tool_input.keys.lower():
        why = _form_reason(await _form_kinds(ctx, None))
        return await _ask(ctx, ("press", {"keys": tool_input.keys}), why, every)
    if every:
        return await _ask(ctx, _described(tool, tool_input, ctx), None, True)
    return None


Action = tuple[str, dict[str, str]]  # what an action does: a code of i18n.APPROVAL_ACTIONS and its params


async def _ask(ctx: ToolContext, action: Action, why: Reason | None, every: bool) -> PendingAction | None:
    if why is None and not every:
        return None
    from .domains import host_of

    try:
        site = host_of(await ctx.tab.url()) or ""
    except Exception:
        site = ""
    code, params = why or ("every_action", {})
    return PendingAction(action_code=action[0], action_params=action[1], site=site, why_code=code, why_params=params)


async def _refused_anyway(ctx: ToolContext, element: ElementRef) -> bool:
    from .navigation import click_refusal

    domains = ctx.agent.config.domains
    return domains is not None and await click_refusal(domains, ctx.tab, element) is not None


def _form_reason(kinds: list[str] | None) -> Reason | None:
    return ("form_fields", {"kinds": kinds}) if kinds else None


async def _form_kinds(ctx: ToolContext, element: ElementRef | None) -> list[str] | None:
    """The sensitive kinds of fields in the form the element (or, for a key, the focused field) submits."""
    from ..browser import nodes

    try:
        if element is None:
            result = await ctx.tab.evaluate(f"({FORM_FACTS}).call(null, true)")
        else:
            result = await nodes.call(ctx.tab, element, await nodes.resolve(ctx.tab, element), FORM_FACTS, False)
    except Exception:
        return None  # a stale element or a busy page: the action itself will say so
    return [str(kind) for kind in result] if isinstance(result, list) else None


# PAGE_ACTIONS' codes (i18n.APPROVAL_ACTIONS), where the tool's name is not its code
ACTION_CODES = {"click_element_by_index": "click", "input_text": "type_into", "select_dropdown_option": "choose",
                "send_keys": "press", "go_to_url": "open", "execute_javascript": "run_script"}


def _described(tool: str, tool_input: Any, ctx: ToolContext) -> Action:
    element = ctx.elements.get(getattr(tool_input, "index", -1))
    params = {"target": named(element) if element is not None else "?"}
    if tool == "select_dropdown_option":
        params["option"] = tool_input.text
    elif tool == "go_to_url":
        from .domains import shown_url

        params = {"url": shown_url(tool_input.url)}  # a host of mixed scripts as the browser spells it
    elif tool == "send_keys":
        params = {"keys": tool_input.keys}
    code = ACTION_CODES.get(tool, tool)
    return code, {name: params[name] for name in APPROVAL_ACTIONS[code]}
