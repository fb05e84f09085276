"""The host process as the browser starts it: stdout kept for frames, the log opened, the browser's first hello
answered, and only then asyncio and the host loaded to serve the rest (stdio.py).

The extension waits for that answer before anything else. Answered from the loop, it came 82 ms after the spawn,
most of it importing asyncio and the host's modules; answered here, 56 ms (bench/bench_host.py, bytecode cached,
quiet 2-core machine; the bare interpreter answering one frame takes 21 ms). A first frame that is not a plain hello,
or a hello when a task a previous host left running may be resumed (its reply must carry it), goes to the host as it
came."""

from __future__ import annotations

import logging
import os
import sys

from .. import paths
from ..logfile import log_to_file
from ..paths import NotYours
from ..store.resumable import none_resumable
from .codec import FrameDecoder, FrameError, Message, encode_frame
from .replies import hello_data, plain_hello, reply_ok, request_id_of

log = logging.getLogger(__name__)

READ_SIZE = 1 << 16
DEBUG_PORT_ENV = "TABPILOT_HOST_DEBUG_PORT"  # a test's debug socket (native/debug.py)
HOST_CHECK_ENV = "TABPILOT_HOST_CHECK"  # set by `tabpilot doctor` for a host it starts only to exchange a hello


def take_stdout() -> int:
    """A private descriptor for the real stdout; fd 1 and sys.stdout now lead to stderr."""
    sys.stdout.flush()
    frames_fd = os.dup(1)
    try:
        os.dup2(2, 1)
    except OSError:  # no usable stderr (a GUI parent may give none): stray output goes nowhere
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)
    sys.stdout = sys.stderr if sys.stderr is not None else open(os.devnull, "w")  # noqa: SIM115
    if sys.platform == "win32":
        import msvcrt

        msvcrt.setmode(frames_fd, os.O_BINARY)  # type: ignore[attr-defined]
        msvcrt.setmode(0, os.O_BINARY)  # type: ignore[attr-defined]
    return frames_fd


class Greeting:
    """The frames read before the host's loop starts: `items` decoded so far (the first one answered when
    `answered`), and the decoder holding what follows of a frame cut off."""

    def __init__(self) -> None:
        self.decoder = FrameDecoder()
        self.items: list[Message | FrameError] = []
        self.answered = False
        self.ended = False  # stdin closed (or no more frames can be read) before a whole frame came

    def read_first(self, in_fd: int) -> None:
        """Read until one whole frame (or whatever ends the stream) has come."""
        while not self.items and self.decoder.broken is None:
            try:
                data = os.read(in_fd, READ_SIZE)
            except OSError:
                data = b""
            if not data:
                self.ended = True
                return
            self.items.extend(self.decoder.feed(data))

    def answer(self, out_fd: int) -> None:
        """Answer a plain first hello now, when no task is waiting to be resumed (which the reply must carry)."""
        first = self.items[0] if self.items else None
        if isinstance(first, FrameError) or first is None or not plain_hello(first):
            return
        if not none_resumable(paths.database_path()):
            return
        reply = encode_frame(reply_ok(request_id_of(first), hello_data()))
        view = memoryview(reply)
        try:
            while view:
                view = view[os.write(out_fd, view):]
        except OSError:
            return  # the browser is gone: the host finds out as it reads on
        self.answered = True


def greet(in_fd: int, out_fd: int, *, answer: bool = True) -> Greeting:
    greeting = Greeting()
    greeting.read_first(in_fd)  # the codec never raises: whatever came is in `items`
    if not answer:
        return greeting
    try:
        greeting.answer(out_fd)
    except Exception:  # the host answers it then (a hello without an id killed the host here once)
        log.exception("could not answer the first hello before the host started")
    return greeting


def main(origin: str | None = None) -> int:
    out_fd = take_stdout()
    try:
        log_to_file("host.log")
    except NotYours as exc:  # nothing is written there, nor served from there
        print(f"tabpilot host: {exc}", file=sys.stderr)
        return 1
    log.info("host %s starting for %s (python %s)", os.getpid(), origin, sys.executable)
    # A test's debug socket (native/debug.py) opens before the first answer, as a test takes that answer to mean the
    # host is ready for it: with it, the host answers the first hello from its loop.
    greeting = greet(0, out_fd, answer=not os.environ.get(DEBUG_PORT_ENV))
    import asyncio

    from .stdio import serve

    try:
        asyncio.run(serve(0, out_fd, greeting))
    except KeyboardInterrupt:
        pass
    except Exception:
        log.exception("host crashed")
        return 1
    return 0


def exit_now(code: int) -> None:
    """Leave without the interpreter's teardown: with openai and the agent loaded it took seconds on
    a busy machine, and Chromium kills a host that lingers after the port closed. Everything that
    matters is already done: each event was committed when it happened, frames are written."""
    logging.shutdown()
    if sys.stderr is not None:
        sys.stderr.flush()
    os._exit(code)
