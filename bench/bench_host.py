"""Native host figures: start → first frame answered, and a framed round trip (median of many).

    .venv/bin/python bench/bench_host.py

Runs the host exactly as Chromium does (a subprocess speaking frames on stdin/stdout) with
TABPILOT_HOME in a temporary folder. Prints numbers; asserts nothing.
"""

from __future__ import annotations

import json
import os
import statistics
import struct
import subprocess
import sys
import tempfile
import time

HEADER = struct.Struct("=I")


def frame(message: dict) -> bytes:
    data = json.dumps(message).encode()
    return HEADER.pack(len(data)) + data


def read_frame(stream) -> dict:  # type: ignore[no-untyped-def]
    (length,) = HEADER.unpack(stream.read(4))
    return json.loads(stream.read(length))


def start_host(home: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "tabpilot", "chrome-extension://benchmark/"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env={**os.environ, "TABPILOT_HOME": home},
    )


def main() -> None:
    with tempfile.TemporaryDirectory() as home:
        starts = []
        for _ in range(7):
            began = time.perf_counter()
            host = start_host(home)
            assert host.stdin and host.stdout
            host.stdin.write(frame({"type": "hello", "id": "1", "extensionVersion": "bench"}))
            host.stdin.flush()
            read_frame(host.stdout)
            starts.append(time.perf_counter() - began)
            host.stdin.close()
            host.wait()
        print(f"host start → first frame answered: median {statistics.median(starts) * 1000:.0f} ms "
              f"(min {min(starts) * 1000:.0f}, max {max(starts) * 1000:.0f}; target < 250 ms)")

        host = start_host(home)
        assert host.stdin and host.stdout
        trips = []
        for n in range(500):
            began = time.perf_counter()
            host.stdin.write(frame({"type": "ping", "id": str(n)}))
            host.stdin.flush()
            read_frame(host.stdout)
            trips.append(time.perf_counter() - began)
        print(f"framed ping round trip to the host: median {statistics.median(trips) * 1000:.3f} ms, "
              f"p95 {sorted(trips)[int(len(trips) * 0.95)] * 1000:.3f} ms")
        began = time.perf_counter()
        host.stdin.close()
        host.wait()
        print(f"exit after stdin EOF: {(time.perf_counter() - began) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
