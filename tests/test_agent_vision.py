"""Optional vision (issue 15, item 7): with `use_vision` on, each request ends with a JPEG of the viewport
with the element indices drawn on it; off, no screenshot is taken at all; auto with an endpoint that
refuses images goes on without them. A real Chromium, the scripted model server over HTTP."""

from __future__ import annotations

import base64
import io
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from agent_support import done, index_of, on_page
from PIL import Image
from store_support import tabpilot as run_cli

from tabpilot.agent import Agent, AgentConfig
from tabpilot.agent.types import ObservationEvent
from tabpilot.browser.browser import Browser
from tabpilot.browser.screenshot import MAX_SIDE, labelled_screenshot
from tabpilot.browser.state import get_state
from tabpilot.llm import LLMConfig
from tabpilot.llm.scripted import HTTPError, ScriptedLLMServer
from tabpilot.llm.vision import remembered

pytestmark = [pytest.mark.browser]
in_module_loop = pytest.mark.asyncio(loop_scope="module")  # the module's browser lives in the module's loop
REFUSAL = "Invalid content type. image_url is only supported by certain models; this model does not support images."


def llm(server: ScriptedLLMServer, model: str = "scripted") -> LLMConfig:
    return LLMConfig(base_url=server.base_url, model=model, api_key="sk-test-key-not-real-0000", timeout=10.0,
                     backoff_base=0.0)


def images(body: dict[str, Any]) -> list[bytes]:
    found = []
    for message in body["messages"]:
        for part in message["content"] if isinstance(message["content"], list) else []:
            if part.get("type") == "image_url":
                url = part["image_url"]["url"]
                assert url.startswith("data:image/jpeg;base64,")
                found.append(base64.b64decode(url.split(",", 1)[1]))
    return found


async def overlay_record(tab: Any) -> list[dict[str, str]]:
    return await tab.evaluate("window.seen")


@in_module_loop
async def test_vision_on_ends_each_request_with_a_labelled_jpeg_of_the_viewport(
        browser: Browser, pages, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TABPILOT_HOME", str(tmp_path))
    tab = await browser.new_tab(pages.url("vision.html"))
    replies = [on_page(lambda b: {"click_element_by_index": {"index": index_of(b, "Star")}}), done("starred")]
    with ScriptedLLMServer(replies) as server:
        agent = Agent(browser, llm(server), AgentConfig(step_delay=0, use_vision="on"))
        result = await agent.execute("Star the message")
        await agent.dispose()
    assert result.success, result.data
    assert len(server.requests) == 2
    for body in server.requests:
        _system, user, last = body["messages"]
        assert isinstance(user["content"], str) and "<browser_state>" in user["content"]  # the text as without
        assert last["role"] == "user" and [p["type"] for p in last["content"]] == ["text", "image_url"]
        [data] = images(body)
        picture = Image.open(io.BytesIO(data))
        assert picture.format == "JPEG" and max(picture.size) == MAX_SIDE and min(picture.size) > 300
    # the page saw the overlay come and go once per request, and could not look inside it
    record = await overlay_record(tab)
    assert record == [{"added": "tabpilot-vision", "shadowRoot": "null"}, {"removed": "tabpilot-vision"}] * 2
    assert await tab.evaluate("document.querySelectorAll('tabpilot-vision').length") == 0
    # the labels are on the image the model got: the last one against the same viewport without them
    state = await get_state(browser, tab)
    plain = Image.open(io.BytesIO((await labelled_screenshot(tab, [])).data)).convert("RGB")
    labelled = Image.open(io.BytesIO(images(server.requests[-1])[0])).convert("RGB")
    assert labelled.size == plain.size
    scale = plain.size[0] / state.viewport[0]

    def change(left: float, top: float, right: float, bottom: float) -> int:
        """The largest colour change from the plain image in a box of the page (CSS px)."""
        return max(sum(abs(a - b) for a, b in zip(labelled.getpixel((px, py)), plain.getpixel((px, py)), strict=True))
                   for px in range(round(left * scale), round(right * scale) + 1)
                   for py in range(round(top * scale), round(bottom * scale) + 1))

    assert len(state.elements) == 3
    for element in state.elements.values():
        x, y, width, height = element.bounds
        assert change(x, y + height / 2, x + 1, y + height / 2) > 100, element.index  # the box's border
        assert change(x + width - 12, y - 12, x + width - 1, y - 2) > 300, element.index  # its index, above right
        assert change(x + 8, y + 8, x + width - 8, y + height - 8) < 60, element.index  # the element itself shows
    assert remembered(server.base_url, "scripted") is True  # the endpoint took images: auto uses them from now
    await browser.close_tab(tab.target_id)


@in_module_loop
async def test_a_password_field_is_covered_in_the_screenshot_also_once_shown_as_text(
        browser: Browser, pages) -> None:
    tab = await browser.new_tab(pages.url("actions_show_password.html"))
    await tab.evaluate("document.getElementById('pw').value = 'hunter2-hunter2-hunter2'")
    state = await get_state(browser, tab)  # the walker sees a password field
    await tab.evaluate("document.getElementById('eye').click()")  # "show password": now a plain text field
    assert await tab.evaluate("document.getElementById('pw').type") == "text"
    shot = await labelled_screenshot(tab, [])
    picture = Image.open(io.BytesIO(shot.data)).convert("RGB")
    x, y, width, height = await tab.evaluate(
        "(() => { const r = document.getElementById('pw').getBoundingClientRect(); "
        "return [r.left, r.top, r.width, r.height]; })()")
    scale = picture.size[0] / state.viewport[0]
    inside = [picture.getpixel((round(px * scale), round(py * scale)))
              for px in range(round(x) + 2, round(x + width) - 2, 2)
              for py in range(round(y) + 2, round(y + height) - 2)]
    assert all(abs(channel - 0x77) < 24 for pixel in inside for channel in pixel)  # one grey cover, no text
    await browser.close_tab(tab.target_id)


@in_module_loop
async def test_a_page_showing_a_password_fields_value_elsewhere_is_sent_without_a_screenshot(
        browser: Browser, pages) -> None:
    # The text hides the echo ("Strength of [password hidden]"); a picture of the page would show it.
    tab = await browser.new_tab(pages.url("privacy_echo.html"))
    replies = [on_page(lambda b: {"click_element_by_index": {"index": index_of(b, "Save")}}), done("saved")]
    with ScriptedLLMServer(replies) as server:
        agent = Agent(browser, llm(server, model="gpt-4o"), AgentConfig(step_delay=0, use_vision="on"))
        result = await agent.execute("Save the new password")
        await agent.dispose()
    assert result.success, result
    assert "[password hidden]" in json.dumps(server.requests[0])
    assert not any(images(body) for body in server.requests)
    await browser.close_tab(tab.target_id)


@in_module_loop
async def test_vision_off_takes_no_screenshot(browser: Browser, pages) -> None:
    tab = await browser.new_tab(pages.url("vision.html"))
    replies = [on_page(lambda b: {"click_element_by_index": {"index": index_of(b, "Reply")}}), done("replied")]
    with ScriptedLLMServer(replies) as server:
        agent = Agent(browser, llm(server, model="gpt-4o"), AgentConfig(step_delay=0, use_vision="off"))
        result = await agent.execute("Reply to the message")
        await agent.dispose()
    assert result.success
    assert [len(body["messages"]) for body in server.requests] == [2, 2]
    assert not any(images(body) for body in server.requests)
    assert await overlay_record(tab) == []  # no overlay was ever drawn
    await browser.close_tab(tab.target_id)


@in_module_loop
async def test_auto_with_an_endpoint_refusing_images_goes_on_without_them_and_remembers(
        browser: Browser, pages, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TABPILOT_HOME", str(tmp_path))
    tab = await browser.new_tab(pages.url("vision.html"))
    replies = [HTTPError(400, REFUSAL, type="invalid_request_error"),
               on_page(lambda b: {"click_element_by_index": {"index": index_of(b, "Star")}}), done("starred")]
    with ScriptedLLMServer(replies) as server:
        agent = Agent(browser, llm(server, model="gpt-4o"), AgentConfig(step_delay=0))  # auto: gpt-4o takes images
        result = await agent.execute("Star the message")
        assert result.success, result.data
        assert [len(images(body)) for body in server.requests] == [1, 0, 0]  # refused, asked again without
        notes = [e.content for e in result.history if isinstance(e, ObservationEvent)]
        assert any("does not take images" in note for note in notes)
        assert "does not take images" in server.requests[2]["messages"][1]["content"]  # the model is told
        assert remembered(server.base_url, "gpt-4o") is False
        # a second task on the same endpoint does not try again
        server.add(done("nothing to do"))
        second = await agent.execute("Say done")
        await agent.dispose()
    assert second.success and not images(server.requests[3])
    assert len(await overlay_record(tab)) == 2  # drawn for the refused request only
    await browser.close_tab(tab.target_id)


def tabpilot(*args: str, home: Path, **extra_env: str) -> subprocess.CompletedProcess[str]:
    return run_cli(home, *args, env={"HOME": str(home), **extra_env})


def test_run_vision_flag_and_setting_and_the_note_when_images_are_refused(pages, tmp_path: Path) -> None:
    url = pages.url("vision.html")
    common = ("--url", url, "--api-key", "sk-test-0123456789abcdefghijklmnop")
    with ScriptedLLMServer([HTTPError(400, REFUSAL), done("ok")]) as server:
        run = tabpilot("run", "Say ok", *common, "--model", "gpt-4o", home=tmp_path, OPENAI_BASE_URL=server.base_url)
    assert run.returncode == 0, run.stderr
    assert "does not take images" in run.stdout  # the run goes on, and says why there are no screenshots
    assert [len(images(body)) for body in server.requests] == [1, 0]
    with ScriptedLLMServer([done("ok")]) as server:
        run = tabpilot("run", "Say ok", *common, "--model", "gpt-4o", "--vision", "off", home=tmp_path,
                       OPENAI_BASE_URL=server.base_url)
    assert run.returncode == 0 and not images(server.requests[0])
    assert tabpilot("config", "set", "use-vision", "on", home=tmp_path).returncode == 0
    shown = json.loads(tabpilot("config", "--json", home=tmp_path).stdout)
    assert shown["useVision"] == "on"
    with ScriptedLLMServer([done("ok")]) as server:
        run = tabpilot("run", "Say ok", *common, "--model", "scripted", home=tmp_path, OPENAI_BASE_URL=server.base_url)
    assert run.returncode == 0 and len(images(server.requests[0])) == 1  # the setting, for a model not known
    bad = tabpilot("config", "set", "use-vision", "sometimes", home=tmp_path)
    assert bad.returncode != 0 and "use-vision" in bad.stderr and "one of auto, on, off" in bad.stderr
