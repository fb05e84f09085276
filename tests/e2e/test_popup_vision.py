"""Vision from the popup (issue 15, item 7): the Settings selector saves `useVision` in the host's
settings, and a task started from the popup with it on sends the model a labelled screenshot taken
through the extension's debugger relay. Screenshots of the popup go to $TABPILOT_SCREENS."""

from __future__ import annotations

import base64
import io
import json

import pytest
from e2e_support import SCREENS, Harness, configure, done, run_in_popup, wait_status
from PIL import Image

from tabpilot.browser.tab import Tab
from tabpilot.llm.scripted import ScriptedLLMServer

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]


def sent_images(body: dict) -> list[Image.Image]:
    found = []
    for message in body["messages"]:
        for part in message["content"] if isinstance(message["content"], list) else []:
            if part.get("type") == "image_url":
                data = base64.b64decode(part["image_url"]["url"].split(",", 1)[1])
                found.append(Image.open(io.BytesIO(data)))
    return found


async def test_the_settings_selector_turns_screenshots_on_for_a_popup_task(
        harness: Harness, llm: ScriptedLLMServer, form_tab: Tab) -> None:
    popup = await harness.open_popup(form_tab)
    await configure(popup, llm.base_url)
    await popup.click("#nav-settings")
    await popup.wait_for("document.getElementById('settings-form').dataset.loaded === 'true'", "settings to load")
    assert await popup.js("document.getElementById('set-vision').value") == "auto"  # the default
    options = await popup.js("[...document.querySelectorAll('#set-vision option')].map((o) => o.textContent)")
    assert options == ["Auto: when the model takes images", "On", "Off: page text only"]
    await popup.js("document.getElementById('set-vision').value = 'on'; "
                   "document.getElementById('settings-saved').textContent = ''")
    await popup.click("#settings-save")
    await popup.wait_for("document.getElementById('settings-saved').textContent !== ''", "settings to save")
    await popup.screenshot(SCREENS / "settings-vision-on.png")
    saved = json.loads((harness.tabpilot_home / "config" / "config.json").read_text())
    assert saved["useVision"] == "on"

    llm.add(done("Looked at it"))
    await popup.click("#nav-task")
    await run_in_popup(popup, "Look at the form")
    assert await wait_status(popup, "completed") == "completed"
    [picture] = sent_images(llm.requests[-1])
    assert picture.format == "JPEG" and max(picture.size) <= 1024 and min(picture.size) > 200
    assert await form_tab.evaluate("document.querySelectorAll('tabpilot-vision').length") == 0

    # a reopened Settings shows what was saved; Off sends none
    await harness.browser.close_tab(popup.tab.target_id)
    popup = await harness.open_popup(form_tab)
    await popup.click("#nav-settings")
    await popup.wait_for("document.getElementById('settings-form').dataset.loaded === 'true'", "settings to load")
    assert await popup.js("document.getElementById('set-vision').value") == "on"
    await popup.js("document.getElementById('set-vision').value = 'off'; "
                   "document.getElementById('settings-saved').textContent = ''")
    await popup.click("#settings-save")
    await popup.wait_for("document.getElementById('settings-saved').textContent !== ''", "settings to save")
    llm.add(done("Read it"))
    await popup.click("#nav-task")
    await run_in_popup(popup, "Read the form")
    assert await wait_status(popup, "completed") == "completed"
    assert sent_images(llm.requests[-1]) == []
    await harness.browser.close_tab(popup.tab.target_id)
