"""What the LLM client costs on the host side, with the model's own time taken out: importing openai,
making the client, one invoke round trip against the scripted server on loopback (request building,
HTTP, parsing, repair, validation), and the repair functions alone. Prints numbers; asserts nothing.

    .venv/bin/python bench/bench_llm.py
"""

from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
import sys
import time

from pydantic import BaseModel, ConfigDict

from tabpilot.llm import LLMClient, LLMConfig, ToolSpec
from tabpilot.llm.repair import action_variants, extract_call, repair_arguments
from tabpilot.llm.scripted import ScriptedLLMServer, ToolCall

ROUNDS = 200


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ClickInput(_Strict):
    index: int


class ClickAction(_Strict):
    click_element_by_index: ClickInput


class Output(_Strict):
    evaluation_previous_goal: str
    memory: str
    next_goal: str
    action: ClickAction


TOOL = ToolSpec("AgentOutput", "reflection and one action", Output.model_json_schema())
ARGUMENTS = {"evaluation_previous_goal": "ok", "memory": "m" * 400, "next_goal": "click", "action":
             {"click_element_by_index": {"index": 5}}}
PAGE = "[12]<button>OK</button>\n" * 2000  # ~50 kB of page text in the prompt, like a real page
MESSAGES = [{"role": "system", "content": "You drive a browser."}, {"role": "user", "content": PAGE}]


def median_ms(samples: list[float]) -> str:
    p90 = sorted(samples)[int(len(samples) * 0.9)]
    return f"median {statistics.median(samples) * 1000:.2f} ms, p90 {p90 * 1000:.2f} ms"


def import_cost() -> float:
    code = "import time; t = time.perf_counter(); import openai; print(time.perf_counter() - t)"
    runs = [float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
            for _ in range(3)]
    return statistics.median(runs)


async def round_trips() -> tuple[float, list[float]]:
    with ScriptedLLMServer([ToolCall("AgentOutput", ARGUMENTS)] * (ROUNDS + 1)) as server:
        config = LLMConfig(base_url=server.base_url, model="scripted", api_key="bench")
        async with LLMClient(config) as client:
            import openai  # noqa: F401 - measured above; keep it out of the next number

            started = time.perf_counter()
            client._client()  # the one-off cost of making the openai client (mostly loading CA certificates)
            made = time.perf_counter() - started
            await client.invoke(MESSAGES, TOOL, parse=Output.model_validate)  # warm up
            samples = []
            for _ in range(ROUNDS):
                started = time.perf_counter()
                await client.invoke(MESSAGES, TOOL, parse=Output.model_validate)
                samples.append(time.perf_counter() - started)
    return made, samples


def repair_cost() -> list[float]:
    message = {"role": "assistant", "content": f"```json\n{json.dumps(ARGUMENTS)}\n```"}
    variants = set(action_variants(TOOL.parameters))
    samples = []
    for _ in range(ROUNDS * 10):
        started = time.perf_counter()
        repair_arguments(extract_call(message, "AgentOutput", variants), "AgentOutput", TOOL.parameters)
        samples.append(time.perf_counter() - started)
    return samples


def main() -> None:
    print(f"import openai (fresh process):         {import_cost() * 1000:.0f} ms")
    made, samples = asyncio.run(round_trips())
    print(f"make the openai client (once/session): {made * 1000:.0f} ms")
    print(f"invoke round trip, ~{len(PAGE) // 1000} kB prompt, {ROUNDS} calls (incl. the in-process scripted server):")
    print(f"                                       {median_ms(samples)}")
    print(f"repair of JSON in a code fence:        {median_ms(repair_cost())}")


if __name__ == "__main__":
    main()
