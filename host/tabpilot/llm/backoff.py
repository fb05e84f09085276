"""How long to wait before the next attempt: exponential backoff with jitter, or what the provider's
Retry-After header asks for (seconds or an HTTP date), capped so a bad header cannot stall a task."""

from __future__ import annotations

import random
import time
from collections.abc import Mapping
from email.utils import parsedate_to_datetime

MAX_BACKOFF = 30.0
MAX_RETRY_AFTER = 60.0


def backoff_delay(retry_number: int, base: float) -> float:
    """Delay before retry `retry_number` (1-based): base·2^(n-1), scaled by a random factor in [0.5, 1)."""
    ceiling = min(MAX_BACKOFF, base * 2.0 ** (retry_number - 1))
    return ceiling * (0.5 + random.random() / 2)


def retry_after_seconds(headers: Mapping[str, str], now: float | None = None, *,
                        cap: float | None = MAX_RETRY_AFTER) -> float | None:
    """Seconds the server asked us to wait (`retry-after-ms`, `Retry-After` as seconds or HTTP date),
    capped at `cap` (None: as asked); None when there is no usable header."""
    lowered = {key.lower(): value for key, value in headers.items()}
    seconds: float | None = None
    if "retry-after-ms" in lowered:
        try:
            seconds = float(lowered["retry-after-ms"]) / 1000
        except ValueError:
            seconds = None
    if seconds is None and "retry-after" in lowered:
        value = lowered["retry-after"].strip()
        try:
            seconds = float(value)
        except ValueError:
            try:
                when = parsedate_to_datetime(value)
            except (TypeError, ValueError, IndexError):
                return None
            seconds = when.timestamp() - (time.time() if now is None else now)
    if seconds is None or seconds != seconds:  # NaN
        return None
    return max(0.0, seconds if cap is None else min(seconds, cap))
