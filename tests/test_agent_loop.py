"""The agent loop in a real Chromium on fixture pages, its model a scripted OpenAI-compatible server
reached over HTTP by the real client."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest
from agent_support import browser_state, done, history_section, index_of, last_user_message, on_page, step
from pydantic import BaseModel

from tabpilot.agent import Agent, AgentBusy, AgentConfig, ToolContext, tool
from tabpilot.agent.types import ErrorEvent, ObservationEvent, RetryEvent, StepEvent, UserTakeoverEvent
from tabpilot.browser.browser import Browser
from tabpilot.llm import LLMConfig
from tabpilot.llm.scripted import Delay, Garbage, HTTPError, ScriptedLLMServer, Text

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]


def llm(server: ScriptedLLMServer, **kw: Any) -> LLMConfig:
    options = {"timeout": 5.0, "max_retries": 3, "backoff_base": 0.0, **kw}
    return LLMConfig(base_url=server.base_url, model="scripted", api_key="sk-test-key-not-real-0000", **options)


def config(**kw: Any) -> AgentConfig:
    return AgentConfig(step_delay=0, **kw)


async def page_log(tab) -> list[dict]:
    return json.loads(await tab.evaluate("sessionStorage.getItem('agentLog') || '[]'"))


async def test_multi_step_form_task_types_selects_submits_and_finishes(browser: Browser, pages) -> None:
    tab = await browser.new_tab(pages.url("agent_form.html"))
    replies = [
        on_page(lambda b: {"input_text": {"index": index_of(b, "Your name"), "text": "Ada Lovelace"}}),
        on_page(lambda b: {"input_text": {"index": index_of(b, "you@example.com"), "text": "ada@example.com"}}),
        on_page(lambda b: {"select_dropdown_option": {"index": index_of(b, "topic"), "text": "Science"}}),
        on_page(lambda b: {"click_element_by_index": {"index": index_of(b, "Sign up")}}, memory="form filled"),
        done("Signed up Ada Lovelace for Science"),
    ]
    statuses: list[str] = []
    with ScriptedLLMServer(replies) as server:
        agent = Agent(browser, llm(server), config())
        agent.on("statuschange", statuses.append)
        result = await agent.execute("Sign up Ada Lovelace, ada@example.com, for the Science newsletter")

    assert result.success and result.data == "Signed up Ada Lovelace for Science"
    assert statuses == ["running", "completed"] and agent.status == "completed"
    # the page's own record: trusted typing, the choice, the click, and the submitted form
    log = await page_log(browser.active or tab)
    typed = {e["field"]: e["value"] for e in log if e["event"] == "input"}
    assert typed == {"fullname": "Ada Lovelace", "email": "ada@example.com"}
    assert all(e["trusted"] for e in log if e["event"] in ("input", "click"))
    assert any(e["event"] == "change" and e["value"] == "science" for e in log)
    assert log[-1] == {"event": "submit", "data": {"fullname": "Ada Lovelace", "email": "ada@example.com",
                                                   "topic": "science"}}
    assert "You are signed up, Ada Lovelace (science)" in await (browser.active or tab).evaluate(
        "document.body.innerText")

    steps = [e for e in result.history if isinstance(e, StepEvent)]
    assert [s.action.name for s in steps] == [
        "input_text", "input_text", "select_dropdown_option", "click_element_by_index", "done"]
    assert [s.step_index for s in steps] == [0, 1, 2, 3, 4]
    assert all(s.usage.total_tokens > 0 and s.raw_request and s.raw_response for s in steps)
    navigations = [e.content for e in result.history if isinstance(e, ObservationEvent) and "navigated" in e.content]
    # one real navigation (the form went through); where the task started is not one
    assert len(navigations) == 1 and "agent_thanks.html" in navigations[0], navigations
    assert "not by an action of yours" not in navigations[0]  # the agent's own submit did it
    assert not isinstance(result.history[0], ObservationEvent)
    # the model saw what it typed (the field's value) in the next prompt
    assert "Ada Lovelace" in server.requests[1]["messages"][1]["content"].split("<browser_state>")[1]
    # every request forced the one macro tool
    assert all(r["tool_choice"] == {"type": "function", "function": {"name": "AgentOutput"}} for r in server.requests)
    await tab.evaluate("sessionStorage.clear()")


async def test_a_page_that_links_to_a_huge_url_costs_the_later_prompts_a_bounded_note(browser: Browser, pages) -> None:
    """The page's link goes to a URL of half a million characters: the note that says where the page went (kept in the
    history every later prompt repeats) names it cut short, as the header does, so the prompts stay small."""
    await browser.new_tab(pages.url("agent_long_link.html"))
    replies = [on_page(lambda b: {"click_element_by_index": {"index": index_of(b, "Next page")}}),
               step("wait", {"seconds": 0}), done("Went on")]
    with ScriptedLLMServer(replies) as server:
        result = await Agent(browser, llm(server), config()).execute("Go to the next page")
    assert result.success, result
    [navigated] = [e.content for e in result.history if isinstance(e, ObservationEvent) and "navigated" in e.content]
    assert f"agent_thanks.html?ref={'q' * 100}" in navigated and navigated.endswith("…"), navigated[:300]
    assert len(navigated) < 1100 and all(len(json.dumps(body)) < 100_000 for body in server.requests)


async def test_stop_during_a_model_call_settles_as_stopped(browser: Browser, pages) -> None:
    await browser.new_tab(pages.url("agent_form.html"))
    with ScriptedLLMServer([Delay(60, then=done())]) as server:
        agent = Agent(browser, llm(server, timeout=120), config())
        statuses: list[str] = []
        agent.on("statuschange", statuses.append)
        running = asyncio.create_task(agent.execute("wait for a very slow model"))
        for _ in range(1200):  # generous: the machine may be busy
            if server.requests:
                break
            await asyncio.sleep(0.05)
        assert server.requests, "the model call never started"
        await asyncio.wait_for(agent.stop(), 20)  # far less than the 60 s the reply is delayed
        assert running.done()
        result = running.result()
        for _ in range(200):  # the server notices the client hang up
            if server.dropped:
                break
            await asyncio.sleep(0.05)
        assert server.dropped == [0]
    assert agent.status == "stopped" and statuses == ["running", "stopped"]
    assert not result.success and result.data == "Task stopped"
    assert not any(isinstance(e, StepEvent) for e in result.history)
    await agent.stop()  # stopping a settled agent is harmless


async def test_a_second_execute_while_running_is_refused(browser: Browser, pages) -> None:
    await browser.new_tab(pages.url("agent_form.html"))
    with ScriptedLLMServer([Delay(30, then=done())]) as server:
        agent = Agent(browser, llm(server, timeout=60), config())
        running = asyncio.create_task(agent.execute("first"))
        await asyncio.sleep(0.2)
        with pytest.raises(AgentBusy, match="already running"):
            await agent.execute("second")
        with pytest.raises(ValueError, match="task"):
            await Agent(browser, llm(server), config()).execute("   ")
        await agent.stop()
        assert (await running).data == "Task stopped"
        # stopped before its first step even began: still settles as stopped, the agent stays usable
        early = asyncio.create_task(agent.execute("third"))
        await asyncio.sleep(0)
        await agent.stop()
        assert (await early).data == "Task stopped" and agent.status == "stopped"


async def test_transport_failures_are_retried_and_recorded(browser: Browser, pages) -> None:
    await browser.new_tab(pages.url("agent_form.html"))
    replies = [
        Delay(6, then=done("too late")),  # longer than the client's timeout
        HTTPError(429, "slow down", retry_after="0.1"),
        HTTPError(500, "upstream exploded"),
        Garbage(),
        done("made it"),
    ]
    retrying: list[tuple[int, int]] = []
    with ScriptedLLMServer(replies) as server:
        agent = Agent(browser, llm(server, timeout=2.0, max_retries=4), config())
        agent.on("activity", lambda a: a.type == "retrying" and retrying.append((a.attempt, a.max_attempts)))
        result = await agent.execute("finish")
    assert result.success and result.data == "made it"
    retries = [e for e in result.history if isinstance(e, RetryEvent)]
    assert [(r.attempt, r.max_attempts) for r in retries] == [(1, 4), (2, 4), (3, 4), (4, 4)] == retrying
    causes = [r.message for r in retries]
    assert "timeout" in causes[0]
    assert "429" in causes[1] and "slow down" in causes[1]
    assert "500" in causes[2] and "upstream exploded" in causes[2]
    assert "not JSON" in causes[3] or "not a chat completion" in causes[3]
    assert len(server.requests) == 5


async def test_bad_model_output_is_retried_with_the_error_fed_back(browser: Browser, pages) -> None:
    await browser.new_tab(pages.url("agent_form.html"))
    replies = [
        Text("I think I should click something."),  # no tool call, no JSON
        step("teleport", {"where": "moon"}),  # unknown action
        step("input_text", {"index": "first"}),  # invalid arguments
        done("ok"),
    ]
    with ScriptedLLMServer(replies) as server:
        agent = Agent(browser, llm(server, max_retries=3), config())
        result = await agent.execute("finish")
    assert result.success
    retries = [e.message for e in result.history if isinstance(e, RetryEvent)]
    assert len(retries) == 3
    assert "teleport" in retries[1] and "unknown action" in retries[1]
    assert "input_text" in retries[2] and "index" in retries[2]
    # the model got its mistake and the validation error back in the conversation
    last = server.requests[3]["messages"]
    fed_back = " ".join(str(m.get("content")) for m in last[2:])
    assert "unknown action 'teleport'" in fed_back and "invalid input for input_text" in fed_back


async def test_retries_exhausted_and_refused_keys_end_in_a_clear_error(browser: Browser, pages) -> None:
    await browser.new_tab(pages.url("agent_form.html"))
    with ScriptedLLMServer([HTTPError(500, "down for maintenance")] * 3) as server:
        agent = Agent(browser, llm(server, max_retries=2), config())
        errors: list[str] = []
        agent.on("activity", lambda a: a.type == "error" and errors.append(a.message))
        result = await agent.execute("anything")
    assert agent.status == "error" and not result.success
    assert "down for maintenance" in result.data and errors == [result.data]
    assert isinstance(result.history[-1], ErrorEvent) and result.history[-1].message == result.data
    assert sum(isinstance(e, RetryEvent) for e in result.history) == 2

    with ScriptedLLMServer([HTTPError(401, "Incorrect API key provided", type="invalid_request_error")]) as server:
        agent = Agent(browser, llm(server), config())
        result = await agent.execute("anything")
    assert agent.status == "error" and "API key" in result.data and len(server.requests) == 1
    assert "sk-test-key-not-real" not in json.dumps(result.to_wire())


async def test_max_steps_exceeded_ends_with_an_error_after_warnings(browser: Browser, pages) -> None:
    await browser.new_tab(pages.url("agent_form.html"))
    replies = [step("scroll", {"down": True, "pixels": 10 * (i + 1)}) for i in range(3)]
    with ScriptedLLMServer(replies) as server:
        agent = Agent(browser, llm(server), config(max_steps=3))
        result = await agent.execute("scroll forever")
    assert agent.status == "error" and result.data == "Step count exceeded maximum limit"
    assert sum(isinstance(e, StepEvent) for e in result.history) == 3
    assert isinstance(result.history[-1], ErrorEvent)
    assert "Step 3 of 3" in last_user_message(server.requests[2])
    assert "only 2 steps left" in history_section(server.requests[1])


async def test_hooks_and_events_come_in_order(browser: Browser, pages) -> None:
    await browser.new_tab(pages.url("agent_form.html"))
    seen: list[str] = []

    async def before_step(agent: Agent, step_number: int) -> None:
        seen.append(f"before_step {step_number}")

    config_ = config(
        on_before_task=lambda agent: seen.append("before_task"),
        on_before_step=before_step,
        on_after_step=lambda agent, history: seen.append(f"after_step {len(history)}"),
        on_after_task=lambda agent, result: seen.append(f"after_task {result.success}"),
        on_dispose=lambda agent, reason: seen.append(f"dispose hook {reason}"),
    )
    with ScriptedLLMServer([step("scroll", {"down": True}), done()]) as server:
        agent = Agent(browser, llm(server), config_)
        agent.on("statuschange", lambda s: seen.append(f"status {s}"))
        agent.on("historychange", lambda e: seen.append(f"history {e.type}"))
        agent.on("activity", lambda a: seen.append(f"activity {a.type}"))
        agent.on("dispose", lambda reason: seen.append(f"dispose {reason}"))
        await agent.execute("scroll then finish")
        await agent.dispose("test over")
    assert seen == [
        "status running", "before_task",
        "before_step 0", "activity thinking", "activity executing", "activity executed",
        "history step", "after_step 1",
        "before_step 1", "activity thinking", "activity executing", "activity executed", "history step",
        "after_step 2",
        "status completed", "after_task True",
        "dispose test over", "dispose hook test over",
    ]
    with pytest.raises(RuntimeError, match="disposed"):
        await agent.execute("again")


class NoteInput(BaseModel):
    text: str


async def test_custom_tools_add_override_remove_and_the_schema_sent_follows(browser: Browser, pages) -> None:
    await browser.new_tab(pages.url("agent_form.html"))
    notes: list[str] = []

    @tool("Write a note in the user's notebook", NoteInput)
    async def take_note(ctx: ToolContext, args: NoteInput) -> str:
        notes.append(args.text)
        ctx.push_observation(f"notebook now has {len(notes)} note(s)")
        return f"noted: {args.text}"

    quick_wait = tool("Wait (instantly, in this test)", NoteInput, lambda ctx, args: f"pretended to wait: {args.text}")
    config_ = config(custom_tools={"take_note": take_note, "wait": quick_wait, "go_back": None},
                     ask_user=lambda question: "blue")
    replies = [
        step("take_note", {"text": "milk"}),
        step("wait", {"text": "a bit"}),
        step("ask_user", {"question": "which colour?"}),
        step("go_back", {}),  # removed: an unknown action, retried
        done("noted"),
    ]
    with ScriptedLLMServer(replies) as server:
        agent = Agent(browser, llm(server), config_)
        result = await agent.execute("take a note")
    assert result.success and notes == ["milk"]
    outputs = [e.action.output for e in result.history if isinstance(e, StepEvent)]
    assert outputs[:3] == ["noted: milk", "pretended to wait: a bit", "User answered: blue"]
    variants = server.requests[0]["tools"][0]["function"]["parameters"]["properties"]["action"]["anyOf"]
    offered = {next(iter(v["properties"])): v for v in variants}
    assert "take_note" in offered and "go_back" not in offered and "ask_user" in offered
    assert offered["take_note"]["properties"]["take_note"]["properties"] == {"text": {"type": "string"}}
    assert offered["wait"]["description"] == "Wait (instantly, in this test)"
    assert "notebook now has 1 note(s)" in history_section(server.requests[1])
    assert any("go_back" in e.message for e in result.history if isinstance(e, RetryEvent))


async def test_a_bad_index_becomes_the_steps_output_and_the_task_goes_on(browser: Browser, pages) -> None:
    await browser.new_tab(pages.url("agent_form.html"))
    with ScriptedLLMServer([step("click_element_by_index", {"index": 9999}), done("gave up", success=False)]) as server:
        agent = Agent(browser, llm(server), config())
        result = await agent.execute("click something")
    first = next(e for e in result.history if isinstance(e, StepEvent))
    assert "9999" in first.action.output and first.action.output.startswith("❌")
    assert first.action.not_done  # its card says what it was doing, not that it clicked
    assert "There is no element with index 9999" in history_section(server.requests[1])
    assert not result.success and agent.status == "error" and result.data == "gave up"
    # the step that ended it says so: not "Task completed" (the terminal printed that, then "❌ error")
    last = [e for e in result.history if isinstance(e, StepEvent)][-1]
    assert (last.action.name, last.action.output) == ("done", "Task ended, not completed"), last.action


async def test_loop_detection_tells_the_model_to_try_something_else(browser: Browser, pages) -> None:
    tab = await browser.new_tab(pages.url("agent_form.html"))
    click_nothing = on_page(lambda b: {"click_element_by_index": {"index": index_of(b, "Does nothing")}})
    with ScriptedLLMServer([click_nothing, click_nothing, click_nothing, done()]) as server:
        agent = Agent(browser, llm(server), config())
        result = await agent.execute("press the button until something happens")
    assert sum(e["field"] == "nothing" for e in await page_log(tab)) == 3
    for request in server.requests[:3]:
        assert "LOOP DETECTED" not in last_user_message(request)
    assert "LOOP DETECTED" in history_section(server.requests[3])
    assert any("LOOP DETECTED" in e.content for e in result.history if isinstance(e, ObservationEvent))
    await tab.evaluate("sessionStorage.clear()")


async def test_prompt_history_leaves_out_retries_and_condenses_old_steps(browser: Browser, pages) -> None:
    await browser.new_tab(pages.url("agent_form.html"))

    @tool("Count", NoteInput)
    def count(ctx: ToolContext, args: NoteInput) -> str:
        return f"counted {args.text}"

    replies: list[Any] = [step("count", {"text": str(i)}, memory=f"counted up to {i}") for i in range(14)]
    replies.insert(3, HTTPError(500, "flaky upstream"))
    replies.append(done())
    masked: list[str] = []

    def mask(text: str) -> str:
        masked.append(text)
        return text.replace("4242-1111", "****-****")

    with ScriptedLLMServer(replies) as server:
        agent = Agent(browser, llm(server), config(
            custom_tools={"count": count}, transform_page_content=mask,
            system_instructions="Always be brief.", page_instructions=lambda url: f"Instructions for {url}",
        ))
        result = await agent.execute("count to fourteen")
    assert result.success
    assert any(isinstance(e, RetryEvent) for e in result.history)
    last = last_user_message(server.requests[-1])
    history = history_section(server.requests[-1])
    assert "flaky upstream" not in last and "retry" not in history.lower()
    assert "<earlier_steps>Steps 1–5 are condensed. Your memory after step 5: counted up to 4" in history
    assert "<earlier_steps>Steps 6–10 are condensed. Your memory after step 10: counted up to 9" in history
    assert history.count("Evaluation of Previous Step") == 4  # 14 steps: two blocks of five folded, four whole
    assert "<step_10>" not in history and "<step_11>" in history
    assert "Memory: counted up to 13" in history
    # instructions, masking
    assert "Always be brief." in last and "Instructions for " + pages.url("agent_form.html") in last
    assert "4242-1111" not in last and "****-****" in last and masked


class SecondsInput(BaseModel):
    seconds: float


async def test_accumulated_waiting_is_pointed_out(browser: Browser, pages) -> None:
    await browser.new_tab(pages.url("agent_form.html"))
    instant_wait = tool("Wait", SecondsInput, lambda ctx, args: f"waited {args.seconds:g} s")
    replies = [step("wait", {"seconds": 2}), step("wait", {"seconds": 2}), step("scroll", {"down": True}), done()]
    with ScriptedLLMServer(replies) as server:
        agent = Agent(browser, llm(server), config(custom_tools={"wait": instant_wait}))
        await agent.execute("wait a while")
    assert "You have waited" not in history_section(server.requests[1])  # 2 s is fine
    assert "You have waited 4 seconds in a row" in history_section(server.requests[2])
    assert history_section(server.requests[3]).count("You have waited") == 1  # reset by another action


async def test_stop_during_an_action_cancels_it(browser: Browser, pages) -> None:
    await browser.new_tab(pages.url("agent_form.html"))
    with ScriptedLLMServer([step("wait", {"seconds": 10}), done()]) as server:
        agent = Agent(browser, llm(server), config())
        executing = asyncio.Event()
        agent.on("activity", lambda a: a.type == "executing" and executing.set())
        running = asyncio.create_task(agent.execute("wait ten seconds"))
        await asyncio.wait_for(executing.wait(), 60)
        await asyncio.wait_for(agent.stop(), 8)  # before the ten seconds are up
        result = await running
    assert agent.status == "stopped" and result.data == "Task stopped"
    assert len(server.requests) == 1
    assert not any(isinstance(e, StepEvent) for e in result.history)  # the step never finished


async def test_a_user_takeover_is_recorded_and_shown_to_the_model(browser: Browser, pages) -> None:
    await browser.new_tab(pages.url("agent_form.html"))

    def after_step(agent: Agent, history: list) -> None:
        if sum(isinstance(e, StepEvent) for e in history) == 1:
            agent.push_takeover(UserTakeoverEvent(
                actions=[{"type": "input", "description": "typed 'Ada' into Your name"}],
                started_at=1_700_000_000_000, ended_at=1_700_000_004_000, note="I fixed the name",
            ))

    seen: list[str] = []
    with ScriptedLLMServer([step("scroll", {"down": True}), done()]) as server:
        agent = Agent(browser, llm(server), config(on_after_step=after_step))
        agent.on("historychange", lambda e: seen.append(e.type))
        result = await agent.execute("scroll")
    assert seen == ["step", "user_takeover", "step"]
    assert isinstance(result.history[1], UserTakeoverEvent)
    history = history_section(server.requests[1])
    assert "The user took over for 4 s" in history and "typed 'Ada' into Your name" in history
    assert "I fixed the name" in history


async def test_password_values_never_reach_the_model(browser: Browser, pages) -> None:
    await browser.new_tab(pages.url("agent_login.html"))
    replies = [
        on_page(lambda b: {"input_text": {"index": index_of(b, "Password"), "text": "typed-secret-99"}}),
        done("filled"),
    ]
    with ScriptedLLMServer(replies) as server:
        agent = Agent(browser, llm(server), config())
        result = await agent.execute("look at the login form")
    assert result.success
    sent = json.dumps(server.requests)
    assert "hunter2-saved-by-browser" not in sent  # the value the page held
    # after typing one, the page state and the action's result do not show it either
    assert "typed-secret-99" not in server.requests[1]["messages"][1]["content"].split("<browser_state>")[1]
    assert "typed-secret-99" not in result.history[1].action.output


async def test_the_model_is_warned_at_5_steps_remaining(browser: Browser, pages) -> None:
    await browser.new_tab(pages.url("agent_form.html"))
    with ScriptedLLMServer([step("scroll", {"down": True, "pixels": 10}), done()]) as server:
        result = await Agent(browser, llm(server), config(max_steps=6)).execute("scroll, then stop")
    assert result.success
    assert "5 steps remaining" not in history_section(server.requests[0])
    assert "Only 5 steps remaining" in history_section(server.requests[1])


async def test_step_delay_spaces_the_model_calls(browser: Browser, pages) -> None:
    await browser.new_tab(pages.url("agent_form.html"))
    arrivals: list[float] = []

    def timed(reply: Any) -> Any:
        def serve(body: dict) -> Any:
            arrivals.append(time.monotonic())
            return reply
        return serve

    with ScriptedLLMServer([timed(step("scroll", {"down": True, "pixels": 10})), timed(done())]) as server:
        result = await Agent(browser, llm(server), AgentConfig(step_delay=0.6)).execute("scroll, then stop")
    assert result.success and len(server.requests) == 2
    assert arrivals[1] - arrivals[0] >= 0.6


async def test_a_custom_system_prompt_is_what_the_model_gets_as_system_message(browser: Browser, pages) -> None:
    await browser.new_tab(pages.url("agent_form.html"))
    custom = "You are Pilot-7. Answer in haiku. Always call AgentOutput."
    with ScriptedLLMServer([done()]) as server:
        await Agent(browser, llm(server), config(custom_system_prompt=custom)).execute("say done")
    system = server.requests[0]["messages"][0]
    assert system["role"] == "system" and custom in system["content"]


async def test_dispose_closes_the_client_the_agent_made_and_leaves_a_given_one_open(browser: Browser, pages) -> None:
    from tabpilot.llm import LLMClient, LLMError, ToolSpec

    await browser.new_tab(pages.url("agent_form.html"))
    with ScriptedLLMServer([done(), done()]) as server:
        own = Agent(browser, llm(server), config())
        await own.execute("say done")
        await own.dispose()
        assert own.llm.closed
        with pytest.raises(LLMError, match="closed"):
            await own.llm.invoke([{"role": "user", "content": "hi"}], ToolSpec("AgentOutput", "", {}), parse=dict)
        given = LLMClient(llm(server))
        borrowed = Agent(browser, given, config())
        await borrowed.execute("say done")
        await borrowed.dispose()
        assert not given.closed  # the caller made it, the caller closes it
        await given.aclose()
    assert len(server.requests) == 2


async def wait_for(condition: Any, what: str, timeout: float = 60) -> None:
    for _ in range(int(timeout / 0.05)):
        if condition():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


async def test_pause_cancels_the_model_call_and_resume_asks_again_before_acting(browser: Browser, pages) -> None:
    tab = await browser.new_tab(pages.url("agent_form.html"))
    await tab.evaluate("sessionStorage.clear()")
    replies = [
        Delay(60, then=done("never acted on")),  # in flight when the pause comes: cancelled
        on_page(lambda b: {"input_text": {"index": index_of(b, "Your name"), "text": "Ada"}}),
        done("typed Ada"),
    ]
    activities: list[dict[str, Any]] = []
    with ScriptedLLMServer(replies) as server:
        agent = Agent(browser, llm(server, timeout=120), config())
        agent.on("activity", lambda a: activities.append(a.to_wire()))
        running = asyncio.create_task(agent.execute("type Ada into the name"))
        await wait_for(lambda: server.requests, "the first model call")
        assert agent.pause("the user took the controls")
        assert not agent.pause("twice")  # already paused
        await wait_for(lambda: server.dropped == [0], "the model call to be hung up")
        await asyncio.sleep(1.0)  # paused: nothing is asked and nothing is done
        assert len(server.requests) == 1 and not running.done()
        assert await page_log(tab) == []
        assert agent.status == "running"
        assert agent.resume() and not agent.resume()
        result = await asyncio.wait_for(running, 60)
    assert result.success and result.data == "typed Ada", result
    assert len(server.requests) == 3  # the cancelled question was asked again, then the next step
    assert [e["value"] for e in await page_log(tab) if e["event"] == "input"][-1] == "Ada"
    kinds = [a["type"] for a in activities]
    assert {"type": "paused", "reason": "the user took the controls"} in activities
    assert kinds.index("paused") < kinds.index("resumed") < kinds.index("executing")
    steps = [e for e in result.history if isinstance(e, StepEvent)]
    assert [s.step_index for s in steps] == [0, 1]  # the discarded answer is no step
    await tab.evaluate("sessionStorage.clear()")


async def test_a_pause_between_steps_holds_the_next_step_and_stop_while_paused_ends_stopped(
    browser: Browser, pages
) -> None:
    await browser.new_tab(pages.url("agent_form.html"))
    with ScriptedLLMServer([step("scroll", {"down": True, "pixels": 10}), done()]) as server:
        agent = Agent(browser, llm(server), config())
        executed = asyncio.Event()
        agent.on("activity", lambda a: a.type == "executed" and agent.pause() and executed.set())
        running = asyncio.create_task(agent.execute("scroll, then stop"))
        await asyncio.wait_for(executed.wait(), 60)
        await asyncio.sleep(1.0)
        assert len(server.requests) == 1 and agent.paused  # the step ended; the next waits
        await asyncio.wait_for(agent.stop(), 10)
        result = await running
    assert agent.status == "stopped" and result.data == "Task stopped"
    assert [e.action.name for e in result.history if isinstance(e, StepEvent)] == ["scroll"]
    assert not agent.paused  # the pause ended with its run


RELOADED = "The page was reloaded since you last read it, and not by an action of yours"


async def replaced_by_the_page(tab: Any, how: str) -> None:
    """The page's own script replaces its document (as a reload or a redirect the agent did not ask for does)."""
    await tab.evaluate(f"window.before = true; setTimeout(() => {{ {how}; }}, 0); true")
    for _ in range(400):
        try:
            if await tab.evaluate("document.readyState === 'complete' && !window.before"):
                return
        except Exception:  # the old document is going away
            pass
        await asyncio.sleep(0.05)
    raise AssertionError(f"the page never did {how}")


async def test_a_page_replaced_while_the_model_thinks_is_told_at_the_next_step(browser: Browser, pages) -> None:
    """A reload (same URL, new document) and a navigation the agent did not make, each while the model thought:
    the next step's input says so plainly, as "Page navigated to" says the agent's own navigation."""
    tab = await browser.new_tab(pages.url("agent_form.html"))
    click_nothing = on_page(lambda b: {"click_element_by_index": {"index": index_of(b, "Does nothing")}})
    replies = [
        on_page(lambda b: {"input_text": {"index": index_of(b, "Your name"), "text": "Ada"}}),
        Delay(3, then=click_nothing),  # the page reloads meanwhile: Ada is gone, the element is stale
        Delay(3, then=click_nothing),  # the page goes elsewhere meanwhile
        done("told twice"),
    ]
    with ScriptedLLMServer(replies) as server:
        agent = Agent(browser, llm(server, timeout=30), config())
        running = asyncio.create_task(agent.execute("type Ada, then press the button that does nothing"))
        await wait_for(lambda: len(server.requests) == 2, "the second model call")
        await replaced_by_the_page(tab, "location.reload()")
        await wait_for(lambda: len(server.requests) == 3, "the third model call")
        await replaced_by_the_page(tab, "location.href = 'agent_thanks.html'")
        result = await asyncio.wait_for(running, 60)
    assert result.success and result.data == "told twice", result
    assert RELOADED not in last_user_message(server.requests[1])  # typing is no replacement
    assert RELOADED in history_section(server.requests[2])
    [name_field] = [line for line in browser_state(server.requests[2]).splitlines() if "Your name" in line]
    assert "Ada" not in name_field, name_field  # the reload emptied it, as the note says
    assert "Ada" in next(line for line in browser_state(server.requests[1]).splitlines() if "Your name" in line)
    moved = history_section(server.requests[3])
    assert "agent_thanks.html since you last read it, and not by an action of yours" in moved, moved
    assert moved.count(RELOADED) == 1  # said once, where it happened
    notes = [e.content for e in result.history if isinstance(e, ObservationEvent)]
    assert notes == [RELOADED + " (same URL, a new document): anything typed into it before is gone and its elements "
                     "have new indices. Read the page again before acting.",
                     f"Page navigated to → {pages.url('agent_thanks.html')} since you last read it, and not by an "
                     "action of yours: this is a new page, anything typed into the last one is gone."], notes
    await tab.evaluate("sessionStorage.clear()")


TAB_CLOSED = "The tab you were working in was closed, not by an action of yours"


async def test_a_failed_navigation_of_the_agents_own_is_not_told_as_someone_elses(browser: Browser, pages) -> None:
    # Chromium's error page after a go_to_url that failed is part of that action, not a change found later.
    await browser.new_tab(pages.url("agent_form.html"))
    replies = [step("go_to_url", {"url": "http://127.0.0.1:9/"}), done("could not reach it")]
    with ScriptedLLMServer(replies) as server:
        agent = Agent(browser, llm(server), config())
        result = await agent.execute("open the page on port 9")
    assert result.success, result
    second = last_user_message(server.requests[1])
    assert "net::ERR" in second and "not by an action of yours" not in second, second


@pytest.mark.parametrize("button", ["Allow", "Allow and close in a moment"])
async def test_a_popup_that_closes_itself_takes_the_agent_back_to_the_tab_it_came_from(browser: Browser, pages,
                                                                                         button: str) -> None:
    # Closed by the agent's own click ("Allow"), its result says so; closed a moment later, while the model thinks,
    # the next step is told. Either way the agent is back in the shop, never in the person's tab.
    async with await Browser.connect(browser.launched.ws_url) as own:  # a task's browser: no tab worked in yet
        person = await own.connection.root.send("Target.createTarget", {"url": pages.url("basic.html")})
        await own.activate((await own.new_tab(pages.url("agent_popup_opener.html"))).target_id)
        replies = [
            on_page(lambda b: {"click_element_by_index": {"index": index_of(b, "Sign in with Example")}}),
            on_page(lambda b: {"click_element_by_index": {"index": index_of(b, button)}}),
            Delay(2, then=step("wait", {"seconds": 1})),
            done("signed in"),
        ]
        with ScriptedLLMServer(replies) as server:
            result = await Agent(own, llm(server, timeout=30), config()).execute("sign in to the shop")
        assert result.success, result
        told = [TAB_CLOSED in history_section(body) for body in server.requests]
        assert told == ([False] * 4 if button == "Allow" else [False, False, False, True]), told
        assert "Signed in" in browser_state(server.requests[-1]) and "agent_popup_opener.html" in \
            last_user_message(server.requests[-1])
        assert own.active is not None and own.active.target_id != person["targetId"]
        await own.connection.root.send("Target.closeTarget", {"targetId": person["targetId"]})


async def test_the_only_tab_worked_in_closed_by_the_person_ends_the_task_in_none_of_theirs(browser: Browser,
                                                                                           pages) -> None:
    async with await Browser.connect(browser.launched.ws_url) as own:
        person = await own.connection.root.send("Target.createTarget", {"url": pages.url("basic.html")})
        tab = await own.new_tab(pages.url("agent_form.html"))
        replies = [Delay(2, then=step("wait", {"seconds": 1})), done("should not get here")]
        with ScriptedLLMServer(replies) as server:
            running = asyncio.create_task(Agent(own, llm(server, timeout=30), config()).execute("fill the form"))
            await wait_for(lambda: len(server.requests) == 1, "the first model call")
            await own.connection.root.send("Target.closeTarget", {"targetId": tab.target_id})
            result = await asyncio.wait_for(running, 60)
        assert not result.success and result.data == "The tab the task was working in was closed.", result
        assert len(server.requests) == 1  # nothing was read or done in the person's other tab
        await own.connection.root.send("Target.closeTarget", {"targetId": person["targetId"]})


async def test_the_agents_own_close_tab_goes_back_to_the_tab_it_worked_in_before_without_a_note(
        browser: Browser, pages) -> None:
    async with await Browser.connect(browser.launched.ws_url) as own:
        person = await own.connection.root.send("Target.createTarget", {"url": pages.url("basic.html")})
        start = await own.new_tab(pages.url("agent_form.html"))

        def close_the_new_one(body: dict[str, Any]) -> Any:
            current = next(line for line in browser_state(body).splitlines() if line.startswith("Current tab ["))
            return step("close_tab", {"tab_id": int(current.split("[")[1].split("]")[0])})

        replies = [step("go_to_url", {"url": pages.url("agent_thanks.html"), "new_tab": True}),
                   close_the_new_one, done("closed it")]
        with ScriptedLLMServer(replies) as server:
            result = await Agent(own, llm(server), config()).execute("open the thanks page, then close it")
        assert result.success, result
        after = last_user_message(server.requests[2])
        assert TAB_CLOSED not in after and "is now the active tab" in after, after
        assert own.active is start and own.active.target_id != person["targetId"]
        await own.connection.root.send("Target.closeTarget", {"targetId": person["targetId"]})
