"""How cache-friendly the model requests are (issue 16, item 4): a scripted 20-step task in a real
headless Chromium; for each request, the share of its tokens (o200k, via quicktok) that equals the start
of the previous request — what a provider's prompt cache (OpenAI: automatic above 1,024 tokens) can
serve from cache. The request is read as the provider reads it: tool schema, then the messages.

    .venv/bin/python bench/bench_prompt_cache.py

Uses the bundled demo page, TABPILOT_HOME in a temporary folder, step delay 0. Prints; asserts nothing.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile

from bench_agent import reply_for  # the same scripted task on the demo page

STEPS = 20


def common_prefix_length(a: str, b: str) -> int:
    length = min(len(a), len(b))
    for i in range(length):
        if a[i] != b[i]:
            return i
    return length


async def main() -> None:
    import quicktok

    from tabpilot.agent import Agent, AgentConfig
    from tabpilot.browser.browser import Browser
    from tabpilot.demo import DEMO_DIR, PAGE
    from tabpilot.llm import LLMConfig
    from tabpilot.llm.scripted import ScriptedLLMServer, request_text
    from tabpilot.localfiles import LocalFiles

    pages = LocalFiles(DEMO_DIR)
    with ScriptedLLMServer([reply_for(i, STEPS) for i in range(STEPS)]) as server:
        browser = await Browser.launch(headless=True, env={"HOME": os.environ["TABPILOT_HOME"]})
        try:
            await browser.new_tab(pages.url(PAGE))
            agent = Agent(browser, LLMConfig(base_url=server.base_url, model="scripted", api_key="bench"),
                          AgentConfig(max_steps=STEPS + 5, step_delay=0))
            result = await agent.execute("Keep the reading-club form filled in, twenty steps long.")
            await agent.dispose()
        finally:
            await browser.close()
    pages.close()
    if not result.success:
        sys.exit(f"the scripted task did not finish: {result.data}")

    encoding = quicktok.get_encoding("o200k_base")
    texts = [request_text(body) for body in server.requests]
    print(f"{len(texts)} requests (scripted model, headless Chromium, demo page)")
    print("step  tokens  same as previous request's start   page state")
    shares = []
    for number, text in enumerate(texts, start=1):
        total = len(encoding.encode(text))
        page = len(encoding.encode(text[text.rindex("<browser_state>"):]))
        if number == 1:
            print(f"{number:>4}  {total:>6}  {'—':>8}                          {page:>6}")
            continue
        shared = len(encoding.encode(text[: common_prefix_length(texts[number - 2], text)]))
        share = shared / total
        if number >= 3:
            shares.append(share)
        print(f"{number:>4}  {total:>6}  {shared:>8} ({share:6.1%})                {page:>6}")
    print(f"from step 3 on: lowest {min(shares):.2%}, mean {sum(shares) / len(shares):.1%} (target ≥ 80 %)")


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as home:
        os.environ["TABPILOT_HOME"] = home
        asyncio.run(main())
