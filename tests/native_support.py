"""Helpers for the native host tests: the host as a real subprocess, spoken to in frames."""

from __future__ import annotations

import json
import os
import queue
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

HEADER = struct.Struct("=I")


def frame(message: dict[str, Any] | bytes) -> bytes:
    payload = message if isinstance(message, bytes) else json.dumps(message).encode()
    return HEADER.pack(len(payload)) + payload


class HostProcess:
    """`python -m tabpilot host chrome-extension://x/`, exactly as Chromium starts it."""

    def __init__(self, home: Path | None, extra_env: dict[str, str] | None = None) -> None:
        """`home` None: no TABPILOT_HOME (the platform's folders under the HOME in `extra_env`, as users have).
        Its stdout is read as it comes, unless `reading` is cleared (a browser that takes no answers)."""
        env = {**os.environ, **({} if home is None else {"TABPILOT_HOME": str(home)}), **(extra_env or {})}
        if home is None:
            env.pop("TABPILOT_HOME", None)
        env.pop("OPENAI_API_KEY", None)
        env.pop("OPENAI_BASE_URL", None)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tabpilot", "host", "chrome-extension://testextension/"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        self.raw = bytearray()  # every byte the host wrote to stdout
        self.frames: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.reading = threading.Event()
        self.reading.set()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._ids = 0

    def _read(self) -> None:
        assert self.proc.stdout is not None
        buffer = b""
        while self.reading.wait() and (chunk := self.proc.stdout.read1(1 << 16)):
            self.raw += chunk
            buffer += chunk
            while len(buffer) >= 4:
                (length,) = HEADER.unpack(buffer[:4])
                if len(buffer) < 4 + length:
                    break
                self.frames.put(json.loads(buffer[4 : 4 + length]))
                buffer = buffer[4 + length :]
        self.frames.put(None)

    def write(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.write(frame(message))

    def next_frame(self, timeout: float = 20.0) -> dict[str, Any]:
        item = self.frames.get(timeout=timeout)
        if item is None:
            raise EOFError("the host closed stdout")
        return item

    def request(self, type: str, timeout: float = 20.0, **fields: Any) -> dict[str, Any]:
        """Send a request; return its reply (pushes seen meanwhile are kept in `self.pushes`)."""
        self._ids += 1
        request_id = f"t{self._ids}"
        self.send({"type": type, "id": request_id, **fields})
        return self.reply_to(request_id, timeout)

    def reply_to(self, request_id: str, timeout: float = 20.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            message = self.next_frame(max(0.01, deadline - time.monotonic()))
            if message.get("type") == "reply" and message.get("id") == request_id:
                return message
            self.unclaimed.append(message)

    @property
    def unclaimed(self) -> list[dict[str, Any]]:
        if not hasattr(self, "_unclaimed"):
            self._unclaimed: list[dict[str, Any]] = []
        return self._unclaimed

    def close_stdin(self) -> float:
        """Close stdin (what Chromium does when the port closes); seconds until the host exited."""
        assert self.proc.stdin is not None
        began = time.monotonic()
        self.proc.stdin.close()
        self.proc.wait(timeout=10)
        return time.monotonic() - began

    def stop(self) -> None:
        self.reading.set()
        if self.proc.poll() is None:
            try:
                self.close_stdin()
            except (subprocess.TimeoutExpired, OSError, ValueError):
                self.proc.kill()
                self.proc.wait()
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()
        self._reader.join(timeout=5)


def split_frames(raw: bytes) -> list[bytes]:
    """The payloads of a byte stream that must consist of whole frames only."""
    payloads = []
    position = 0
    while position < len(raw):
        assert position + 4 <= len(raw), "stdout ends in the middle of a frame header"
        (length,) = HEADER.unpack(raw[position : position + 4])
        assert position + 4 + length <= len(raw), "stdout ends in the middle of a frame"
        payloads.append(bytes(raw[position + 4 : position + 4 + length]))
        position += 4 + length
    return payloads
