"""The actions the model can choose from, each a name, a description and a pydantic input model.

Built-in names and inputs are page-agent's (done, wait, ask_user, click_element_by_index, input_text,
select_dropdown_option, scroll, scroll_horizontally, execute_javascript) plus the browser layer's
other actions and `request_takeover` (hand the controls to the user; offered when a handler is set,
as every task run does). Custom tools come from `tool()`:

    class Lookup(BaseModel):
        sku: str

    @tool("Look a product up in the shop's catalogue", Lookup)
    async def lookup(ctx: ToolContext, args: Lookup) -> str:
        return f"{args.sku}: 3 in stock"

    Agent(browser, llm, AgentConfig(custom_tools={"lookup_product": lookup, "ask_user": None}))
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from ..browser.errors import ActionError
from ..i18n import text as say

if TYPE_CHECKING:
    from ..browser.browser import Browser
    from ..browser.elements import ElementRef
    from ..browser.tab import Tab
    from .loop import Agent

ToolFunction = Callable[["ToolContext", Any], "Awaitable[str] | str"]


class ToolInput(BaseModel):
    """Base for tool inputs: unknown keys are an error (else `{"click": …, "done": …}` passes)."""

    model_config = ConfigDict(extra="forbid")


@dataclass(frozen=True)
class Tool:
    description: str
    input_model: type[BaseModel]
    execute: ToolFunction


def tool(
    description: str, input_model: type[BaseModel], execute: ToolFunction | None = None
) -> Any:
    """Make a Tool; without `execute` it is a decorator for the function that runs it."""

    def make(function: ToolFunction) -> Tool:
        return Tool(description=description, input_model=strict(input_model), execute=function)

    return make(execute) if execute is not None else make


def strict(model: type[BaseModel]) -> type[BaseModel]:
    """The model itself if it already forbids unknown keys, else a subclass that does."""
    if model.model_config.get("extra") == "forbid":
        return model
    return type(model.__name__, (model,), {"model_config": {**model.model_config, "extra": "forbid"}})


@dataclass
class ToolContext:
    """What a tool can reach while it runs."""

    agent: Agent
    browser: Browser
    tab: Tab
    elements: dict[int, ElementRef]
    secrets: tuple[str, ...] = ()  # the stored secrets the text to type holds: typed only into a login field

    def element(self, index: int) -> ElementRef:
        try:
            return self.elements[index]
        except KeyError:
            raise ActionError(
                f"There is no element with index {index} on the page. "
                "Use only an index shown in the current browser state."
            ) from None

    def push_observation(self, text: str) -> None:
        self.agent.push_observation(text)


# --- inputs -------------------------------------------------------------------------------------
class DoneInput(ToolInput):
    text: str = Field(description="your final answer to the user: what was done or found")
    success: bool = Field(default=True, description="true only if the whole task was completed")


class WaitInput(ToolInput):
    seconds: float = Field(default=1, ge=1, le=10)


class AskUserInput(ToolInput):
    question: str


class RequestTakeoverInput(ToolInput):
    reason: str = Field(description="what the user should do, e.g. 'Please log in, then hand back'")


class IndexInput(ToolInput):
    index: int = Field(ge=0)


class InputTextInput(ToolInput):
    index: int = Field(ge=0)
    text: str


class SelectOptionInput(ToolInput):
    index: int = Field(ge=0)
    text: str = Field(description="the visible text of the option to choose")


class ScrollInput(ToolInput):
    down: bool = True
    num_pages: float = Field(default=0.1, ge=0, le=10, description="how far, in viewport heights")
    pixels: int | None = Field(default=None, ge=0, description="how far, in pixels (overrides num_pages)")
    index: int | None = Field(default=None, ge=0, description="scroll this scrollable element, not the page")


class FindTextInput(ToolInput):
    text: str = Field(min_length=1, max_length=200, description="the words to look for, as the page shows them")
    occurrence: int = Field(default=1, ge=1, description="which place, counted from the top (the next: 2, 3…)")


class ScrollHorizontallyInput(ToolInput):
    right: bool = True
    pixels: int = Field(ge=0)
    index: int | None = Field(default=None, ge=0)


class ScriptInput(ToolInput):
    script: str = Field(description="JavaScript run in the page; may use await; return a value to see it")


class SendKeysInput(ToolInput):
    keys: str = Field(description='keys to press in the focused element, e.g. "Enter", "Escape", "Control+a"')


class GoToUrlInput(ToolInput):
    url: str
    new_tab: bool = False


class NoInput(ToolInput):
    pass


class TabInput(ToolInput):
    tab_id: int = Field(ge=1, description="the tab's id as listed in the browser state")


class UploadInput(ToolInput):
    index: int = Field(ge=0, description="the file input element")
    path: str = Field(description="one of the files the user made available")


# --- built-ins ----------------------------------------------------------------------------------
async def _done(ctx: ToolContext, args: DoneInput) -> str:
    # the loop ends the task; one the model says it could not finish is not told "completed" (the terminal showed
    # "result: Task completed" and then "❌ error" for it)
    return say("result.done" if args.success else "result.done_unfinished", ctx.agent.config.language)


async def _wait(ctx: ToolContext, args: WaitInput) -> str:
    await asyncio.sleep(args.seconds)
    return say("result.waited", ctx.agent.config.language, seconds=f"{args.seconds:g}")


async def _ask_user(ctx: ToolContext, args: AskUserInput) -> str:
    from .types import QuestionActivity

    ask = ctx.agent.config.ask_user
    if ask is None:
        raise ActionError("Asking the user is not available.")
    ctx.agent.emit("activity", QuestionActivity(question=args.question))
    answer = ask(args.question)
    if inspect.isawaitable(answer):
        answer = await answer
    return say("result.user_answered", ctx.agent.config.language, answer=answer)


async def _request_takeover(ctx: ToolContext, args: RequestTakeoverInput) -> str:
    from .types import UserTakeoverEvent

    request = ctx.agent.config.request_takeover
    if request is None:
        raise ActionError("Handing the controls to the user is not available.")
    event = await request(args.reason)
    # What the user did is told once, by the takeover's own event in the history (the one a late answer from the page
    # amends): said in this result too, the model read the whole account twice in its next request.
    if isinstance(event, UserTakeoverEvent) and not any(told is event for told in ctx.agent.history):
        ctx.agent.push_takeover(event)
    return say("result.handed_back", ctx.agent.config.language)


async def _click(ctx: ToolContext, args: IndexInput) -> str:
    from ..browser import actions
    from ..guards.navigation import click_refusal

    element = ctx.element(args.index)
    domains = ctx.agent.config.domains
    refusal = await click_refusal(domains, ctx.tab, element) if domains is not None else None
    if refusal is not None:
        raise ActionError(refusal)
    return await actions.click(ctx.browser, ctx.tab, element)


async def _input_text(ctx: ToolContext, args: InputTextInput) -> str:
    from ..browser import actions

    return await actions.input_text(ctx.browser, ctx.tab, ctx.element(args.index), args.text, secrets=ctx.secrets)


async def _select(ctx: ToolContext, args: SelectOptionInput) -> str:
    from ..browser import actions

    return await actions.select_option(ctx.browser, ctx.tab, ctx.element(args.index), args.text)


async def _scroll(ctx: ToolContext, args: ScrollInput) -> str:
    from ..browser import actions

    element = ctx.element(args.index) if args.index is not None else None
    return await actions.scroll(
        ctx.browser, ctx.tab, down=args.down, num_pages=args.num_pages, pixels=args.pixels, element=element
    )


async def _find_text(ctx: ToolContext, args: FindTextInput) -> str:
    from ..browser import find

    return await find.find_text(ctx.tab, args.text, args.occurrence)


async def _scroll_horizontally(ctx: ToolContext, args: ScrollHorizontallyInput) -> str:
    from ..browser import actions

    element = ctx.element(args.index) if args.index is not None else None
    return await actions.scroll_horizontally(
        ctx.browser, ctx.tab, right=args.right, pixels=args.pixels, element=element
    )


async def _execute_javascript(ctx: ToolContext, args: ScriptInput) -> str:
    from ..browser import actions

    return await actions.execute_javascript(ctx.browser, ctx.tab, args.script)


async def _send_keys(ctx: ToolContext, args: SendKeysInput) -> str:
    from ..browser import actions

    return await actions.send_keys(ctx.browser, ctx.tab, args.keys)


async def _hover(ctx: ToolContext, args: IndexInput) -> str:
    from ..browser import actions

    return await actions.hover(ctx.browser, ctx.tab, ctx.element(args.index))


async def _read_text(ctx: ToolContext, args: IndexInput) -> str:
    from ..browser import actions

    return await actions.read_text(ctx.browser, ctx.tab, ctx.element(args.index))


async def _go_to_url(ctx: ToolContext, args: GoToUrlInput) -> str:
    from ..browser import actions

    domains = ctx.agent.config.domains
    refusal = domains.refusal(actions.normalize_url(args.url)) if domains is not None else None
    if refusal is not None:
        raise ActionError(refusal)
    return await actions.go_to_url(ctx.browser, ctx.tab, args.url, new_tab=args.new_tab)


async def _go_back(ctx: ToolContext, args: NoInput) -> str:
    from ..browser import actions

    return await actions.go_back(ctx.browser, ctx.tab)


async def _switch_tab(ctx: ToolContext, args: TabInput) -> str:
    from ..browser import actions

    return await actions.switch_tab(ctx.browser, args.tab_id)


async def _close_tab(ctx: ToolContext, args: TabInput) -> str:
    from ..browser import actions

    return await actions.close_tab(ctx.browser, args.tab_id)


async def _upload_file(ctx: ToolContext, args: UploadInput) -> str:
    from ..browser import actions

    allowed = ctx.agent.config.upload_paths
    if args.path not in allowed:
        listed = ", ".join(allowed) or "none"
        raise ActionError(f"{args.path} is not a file the user made available (available: {listed}).")
    return await actions.upload_file(ctx.browser, ctx.tab, ctx.element(args.index), [args.path])


BUILTIN_TOOLS: dict[str, Tool] = {
    "done": Tool(
        "Finish the task. `text` is your final answer to the user; keep it short unless asked for detail.",
        DoneInput,
        _done,
    ),
    "wait": Tool("Wait a few seconds, e.g. for a page or data to finish loading.", WaitInput, _wait),
    "ask_user": Tool(
        "Ask the user a question and wait for the answer. Only when the page cannot tell you.",
        AskUserInput,
        _ask_user,
    ),
    "request_takeover": Tool(
        "Hand the controls to the user and wait until they hand back: for what only they can or should do "
        "(log in, solve a captcha, enter a 2FA code, confirm a payment). `reason` tells them what to do.",
        RequestTakeoverInput,
        _request_takeover,
    ),
    "click_element_by_index": Tool("Click the element with this index.", IndexInput, _click),
    "input_text": Tool("Click into the input element with this index and type the text.", InputTextInput, _input_text),
    "select_dropdown_option": Tool(
        "Choose an option of the dropdown (select) with this index, by the option's text.",
        SelectOptionInput,
        _select,
    ),
    "scroll": Tool(
        "Scroll vertically: the page, or with `index` the scrollable element at that index.", ScrollInput, _scroll
    ),
    "find_text": Tool(
        "Scroll to where the page shows these words (the first place, or the one `occurrence` says): on a long page, "
        "faster than scrolling to look for them.",
        FindTextInput,
        _find_text,
    ),
    "scroll_horizontally": Tool(
        "Scroll horizontally: the page, or with `index` the scrollable element at that index.",
        ScrollHorizontallyInput,
        _scroll_horizontally,
    ),
    "execute_javascript": Tool(
        "Run JavaScript in the page and see its result. Use with care.", ScriptInput, _execute_javascript
    ),
    "send_keys": Tool("Press keys, e.g. Enter to submit a search box.", SendKeysInput, _send_keys),
    "read_text": Tool(
        "Read the whole text of the element with this index: a field's full value (the page text shows long "
        "values cut short, with length=), a text area, an article or a list. Like extract, without leaving the page.",
        IndexInput,
        _read_text,
    ),
    "hover_element": Tool("Move the mouse over the element with this index.", IndexInput, _hover),
    "go_to_url": Tool("Open a URL in this tab, or in a new tab with new_tab=true.", GoToUrlInput, _go_to_url),
    "go_back": Tool("Go back to the previous page in this tab.", NoInput, _go_back),
    "switch_tab": Tool("Work in the tab with this id.", TabInput, _switch_tab),
    "close_tab": Tool("Close the tab with this id.", TabInput, _close_tab),
    "upload_file": Tool(
        "Put one of the user's available files into the file input with this index.", UploadInput, _upload_file
    ),
}


def assemble_tools(config: Any) -> dict[str, Tool]:
    """The tools offered for one agent: built-ins, minus the opt-in/unavailable ones, plus custom ones."""
    tools = dict(BUILTIN_TOOLS)
    if not config.enable_javascript_tool:
        tools.pop("execute_javascript")
    if config.ask_user is None:
        tools.pop("ask_user")
    if config.request_takeover is None:
        tools.pop("request_takeover")
    if not config.upload_paths:
        tools.pop("upload_file")
    for name, custom in config.custom_tools.items():
        if custom is None:
            tools.pop(name, None)
        elif isinstance(custom, Tool):
            tools[name] = Tool(custom.description, strict(custom.input_model), custom.execute)
        else:
            raise TypeError(f"custom tool {name!r} must be made with tool() or be None, not {type(custom).__name__}")
    if "done" not in tools:
        raise ValueError("the done tool cannot be removed: the model needs a way to finish")
    return tools
