"""What typing the protocol costs per CDP call on the relay's hot path, in the host's CPU: building a
`cdp.send` frame from its model and typing the reply's data, against the hand-built dicts it replaced,
and parsing one `cdp.event` push (parsed before the models too). Browser-free.

    .venv/bin/python bench/bench_protocol.py [--runs 20000]

For scale: one native messaging round trip is ~0.45 ms median (DESIGN.md). Prints; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable

from tabpilot.native.messages import CdpSend, TabsQuery, parse_incoming

PARAMS = {"expression": "document.title", "returnByValue": True, "awaitPromise": False}
RESULT = {"result": {"type": "string", "value": "A page title"}}
TABS = {"tabs": [{"tabId": n, "url": f"http://s{n}.test/", "title": f"Tab {n}", "active": n == 1} for n in range(12)]}
EVENT = {
    "type": "cdp.event", "tabId": 7, "method": "Network.requestWillBeSent",
    "params": {"requestId": "1.2", "request": {"url": "http://a.test/x.js", "method": "GET", "headers": {"A": "b"}}},
}


def per_call_us(work: Callable[[], object], runs: int) -> float:
    """Median over 5 rounds of the mean time of one call, in microseconds."""
    rounds = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(runs):
            work()
        rounds.append((time.perf_counter() - start) / runs * 1e6)
    return statistics.median(rounds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20_000)
    runs = parser.parse_args().runs
    request = CdpSend(tab_id=7, method="Runtime.evaluate", params=PARAMS)
    query = TabsQuery()
    figures = {
        "cdp.send frame, hand-built dict (before)": lambda: {
            "tabId": 7, "method": "Runtime.evaluate", "params": PARAMS, "type": "cdp.send", "id": "h1",
        },
        "cdp.send frame, model → to_frame()": lambda: {
            **CdpSend(tab_id=7, method="Runtime.evaluate", params=PARAMS).to_frame(), "id": "h1",
        },
        "cdp.send reply data typed (dict[str, Any])": lambda: request.parse_reply(RESULT),
        "tabs.query reply data typed (12 tabs)": lambda: query.parse_reply(TABS),
        "cdp.event push parsed into its model": lambda: parse_incoming(EVENT),
    }
    print(f"load average: {os.getloadavg()[0]:.2f} (cores: {os.cpu_count()}); {runs} calls × 5 rounds, median")
    for label, work in figures.items():
        print(f"  {label:<45} {per_call_us(work, runs):7.2f} µs")


if __name__ == "__main__":
    main()
