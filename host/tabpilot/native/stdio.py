"""The host's I/O once its first hello is answered (process.py): frames from stdin, frames to stdout.

stdin and stdout are served by two daemon threads (blocking reads and writes work the same on every OS); the
asyncio loop does the thinking.
"""

from __future__ import annotations

import asyncio
import logging
import os
import queue
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from .codec import FrameError, Message, NotFrames
from .host import NativeHost
from .process import DEBUG_PORT_ENV, HOST_CHECK_ENV, READ_SIZE

if TYPE_CHECKING:
    from .endpoint import LocalEndpoint
    from .process import Greeting

log = logging.getLogger(__name__)

EXIT_FLUSH_TIMEOUT = 0.3
# The host reads no faster than its answers are taken: stdin is read at most READ_AHEAD reads ahead of the loop,
# and not at all while more than WRITE_BACKLOG bytes wait to be written, until half of them are. Unbounded, a peer
# that sent 300,000 pings and read nothing grew the host by 66 MB (bench-free: tests/test_host_hardening.py).
READ_AHEAD = 16
WRITE_BACKLOG = 8 << 20


class FrameWriter:
    """Writes frames in order from its own thread, so a slow reader never blocks the loop."""

    def __init__(self, fd: int, backlog_limit: int = WRITE_BACKLOG) -> None:
        self._fd = fd
        self._queue: queue.SimpleQueue[bytes | Callable[[], None] | None] = queue.SimpleQueue()
        self.broken = False
        self.backlog = 0  # bytes queued and not yet written
        self.backlog_limit = backlog_limit
        self._lock = threading.Lock()
        self._room: tuple[asyncio.AbstractEventLoop, asyncio.Event] | None = None
        self._thread = threading.Thread(target=self._run, name="frames-out", daemon=True)
        self._thread.start()

    def write(self, frame: bytes) -> None:
        if not self.broken:
            with self._lock:
                self.backlog += len(frame)
            self._queue.put(frame)

    @property
    def full(self) -> bool:
        return self.backlog > self.backlog_limit

    async def room(self) -> None:
        """Returns once at most half the backlog limit waits to be written (or nothing more can be)."""
        event = asyncio.Event()
        with self._lock:
            if self.backlog <= self.backlog_limit // 2 or self.broken:
                return
            self._room = (asyncio.get_running_loop(), event)
        await event.wait()

    def _written(self, size: int) -> None:
        with self._lock:
            self.backlog -= size
            waiting = self._room if self.broken or self.backlog <= self.backlog_limit // 2 else None
            if waiting is not None:
                self._room = None
        if waiting is not None:
            loop, event = waiting
            loop.call_soon_threadsafe(event.set)

    def after_written(self, callback: Callable[[], None]) -> None:
        """Call back (from the writer thread) once every frame queued so far is written."""
        self._queue.put(callback)

    def _run(self) -> None:
        while (frame := self._queue.get()) is not None:
            if callable(frame):
                frame()
                continue
            view = memoryview(frame)
            try:
                while view:
                    view = view[os.write(self._fd, view) :]
            except OSError:
                self.broken = True  # the browser is gone; nothing more can be said
                self._written(len(frame))
                return
            self._written(len(frame))

    def close(self, timeout: float) -> None:
        """Finish writing what is queued (bounded), then stop."""
        self._queue.put(None)
        self._thread.join(timeout)


def _read_stdin(loop: asyncio.AbstractEventLoop, chunks: asyncio.Queue[bytes | None], fd: int,
                read_ahead: threading.Semaphore) -> None:
    while True:
        read_ahead.acquire()  # released as the loop takes a chunk
        try:
            data = os.read(fd, READ_SIZE)
        except OSError:
            data = b""
        loop.call_soon_threadsafe(chunks.put_nowait, data or None)
        if not data:
            return


async def serve(in_fd: int, out_fd: int, greeting: Greeting) -> None:
    """Serve the extension from the frames `greeting` read on (its first hello answered already, or not)."""
    writer = FrameWriter(out_fd)
    host = NativeHost(writer.write, after_written=writer.after_written)
    debug_server = None
    if os.environ.get(DEBUG_PORT_ENV):
        from .debug import DebugAccess, start_debug_server

        try:
            access = DebugAccess.parse(os.environ[DEBUG_PORT_ENV])
        except ValueError as exc:
            log.error("no debug socket: %s", exc)
        else:
            debug_server = await start_debug_server(host, access)
    loop = asyncio.get_running_loop()
    chunks: asyncio.Queue[bytes | None] = asyncio.Queue()
    read_ahead = threading.Semaphore(READ_AHEAD)
    decoder = greeting.decoder
    if greeting.ended:
        chunks.put_nowait(None)
    else:
        threading.Thread(target=_read_stdin, args=(loop, chunks, in_fd, read_ahead), name="frames-in",
                         daemon=True).start()
    # The local endpoint opens once the answers to the extension's first frames are written: its import and its
    # token's (~5 ms of a cold start under load, bench/bench_host.py) would hold them back; `tabpilot mcp`
    # waits for a host's socket to appear.
    answered = asyncio.Event()
    # A host `tabpilot doctor` starts to exchange one hello opens none: it took the socket from the browser's own
    # host and removed it as it exited, so `tabpilot mcp` said no host was running while the browser was open.
    opening = None if os.environ.get(HOST_CHECK_ENV) else loop.create_task(_open_local_endpoint(host, after=answered))

    def written() -> None:  # called from the writer's thread
        loop.call_soon_threadsafe(answered.set)

    def deliver(items: list[Message | FrameError]) -> None:
        for item in items:
            if isinstance(item, NotFrames):  # nothing after it can be read: the connection ends here
                log.error("%s; the host ends the connection", item.message)
            else:
                host.receive(item)
        if not answered.is_set():
            writer.after_written(written)

    if greeting.answered:
        first, *rest = greeting.items
        assert not isinstance(first, FrameError)
        host.greeted(first)
        answered.set()
        deliver(rest)
    elif greeting.items:
        deliver(greeting.items)
    while decoder.broken is None and (data := await chunks.get()) is not None:
        read_ahead.release()
        deliver(decoder.feed(data))
        if writer.full:
            log.warning("%d bytes of answers are not taken yet; reading no more frames until half are",
                        writer.backlog)
            await writer.room()
    ended = time.monotonic()
    endpoint = None
    if opening is not None and answered.is_set():
        endpoint = await opening
    elif opening is not None:  # nothing asked, or nothing could be written: no endpoint was opened
        opening.cancel()
    log.info("%s; shutting down", "no more frames" if decoder.broken else "stdin closed")
    if decoder.pending_bytes:
        log.warning("the last frame was cut off (%d bytes)", decoder.pending_bytes)
    if endpoint is not None:
        await endpoint.close()  # first: a local client's next call must not reach a host on its way out
    await host.shutdown(timeout=0.5)
    if debug_server is not None:
        debug_server.close()
    await asyncio.sleep(0)  # let cancelled request tasks write their last replies
    writer.close(EXIT_FLUSH_TIMEOUT)
    log.info("host exited %.3f s after stdin closed", time.monotonic() - ended)


async def _open_local_endpoint(host: NativeHost, *, after: asyncio.Event) -> LocalEndpoint | None:
    """The socket `tabpilot mcp` reaches this host on (endpoint.py), once `after` is set; without it the
    extension still works."""
    await after.wait()
    from .endpoint import LocalEndpoint

    try:
        endpoint = LocalEndpoint(host)
        await endpoint.start()
    except Exception as exc:
        log.error("no local endpoint for tabpilot mcp: %s", exc)
        return None
    return endpoint
