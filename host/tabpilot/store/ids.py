"""Task ids: 12 lower-case characters, time first so they sort by creation, e.g. `01jd8x3k2m7q`."""

from __future__ import annotations

import threading
import time

_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"  # Crockford base32: no i, l, o, u
_TIME_CHARS = 9  # 45 bits of milliseconds: good until the year 3084
_RANDOM_CHARS = 3

_lock = threading.Lock()
_last_ms = 0


def _encode(number: int, width: int) -> str:
    chars = []
    for _ in range(width):
        number, digit = divmod(number, 32)
        chars.append(_ALPHABET[digit])
    return "".join(reversed(chars))


def new_task_id() -> str:
    import secrets  # here: the host answers its first frame without it (hmac, hashlib, random)

    global _last_ms
    with _lock:
        # Strictly increasing within a process, so ids sort even when two tasks start in the same ms.
        _last_ms = max(int(time.time() * 1000), _last_ms + 1)
        ms = _last_ms
    return _encode(ms, _TIME_CHARS) + _encode(secrets.randbits(5 * _RANDOM_CHARS), _RANDOM_CHARS)
