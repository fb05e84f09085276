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

from ..i18n import approval_why, text

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

    action: str  # click button "Place order": named as the model named it, in every language
    site: str  # shop.example
    why_code: str  # name_says / form_fields / every_action (i18n.APPROVAL_REASONS)
    why_params: dict[str, Any] = field(default_factory=dict)  # {"word": "order"} / {"kinds": ["payment"]}

    def to_wire(self) -> dict[str, Any]:
        """`why` in English for older readers and logs; `whyCode` and `whyParams` for a reader that words it."""
        return {"action": self.action, "site": self.site, "why": self.why("en-US"), "whyCode": self.why_code,
                "whyParams": dict(self.why_params)}

    @classmethod
    def from_wire(cls, wire: Mapping[str, Any]) -> PendingAction:
        return cls(action=str(wire["action"]), site=str(wire.get("site") or ""), why_code=str(wire["whyCode"]),
                   why_params=dict(wire.get("whyParams") or {}))

    def why(self, language: str | None = None) -> str:
        return approval_why(self.why_code, self.why_params, language)

    def sentence(self, language: str | None = None) -> str:
        if self.site:
            return text("approval.wants", language, action=self.action, site=self.site)
        return text("approval.wants_here", language, action=self.action)


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
        return await _ask(ctx, f"click {named(element)}", why, every)
    if tool == "send_keys" and "enter" in tool_input.keys.lower():
        why = _form_reason(await _form_kinds(ctx, None))
        return await _ask(ctx, f"press {tool_input.keys}", why, every)
    if every:
        return await _ask(ctx, _described(tool, tool_input, ctx), None, True)
    return None


async def _ask(ctx: ToolContext, action: str, why: Reason | None, every: bool) -> PendingAction | None:
    if why is None and not every:
        return None
    from .domains import host_of

    try:
        site = host_of(await ctx.tab.url()) or ""
    except Exception:
        site = ""
    code, params = why or ("every_action", {})
    return PendingAction(action=action, site=site, why_code=code, why_params=params)


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


def _described(tool: str, tool_input: Any, ctx: ToolContext) -> str:
    element = ctx.elements.get(getattr(tool_input, "index", -1))
    target = f" {named(element)}" if element is not None else ""
    if tool == "input_text":
        return f"type into{target}"
    if tool == "select_dropdown_option":
        return f'choose "{tool_input.text}" in{target}'
    if tool == "go_to_url":
        from .domains import shown_url

        return f"open {shown_url(tool_input.url)}"
    if tool == "send_keys":
        return f"press {tool_input.keys}"
    return f"{tool.replace('_', ' ')}{target}"
