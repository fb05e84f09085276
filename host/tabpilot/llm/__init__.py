"""The model side: an OpenAI-compatible client with forced tool calls, retries and output repair
(client.py, repair.py), the scripted server tests and the demo use (scripted.py), record/replay
(replay.py). Importing this package does not import openai; the first request does."""

from .client import InvokeResult, LLMClient, RetryInfo, ToolSpec, Usage, WaitInfo
from .config import LLMConfig
from .errors import (
    LLMAuthError,
    LLMContentFiltered,
    LLMContextTooLong,
    LLMError,
    LLMNotConfigured,
    LLMQuotaExceeded,
    LLMRetriesExhausted,
)

__all__ = [
    "InvokeResult",
    "LLMAuthError",
    "LLMClient",
    "LLMConfig",
    "LLMContentFiltered",
    "LLMContextTooLong",
    "LLMError",
    "LLMNotConfigured",
    "LLMQuotaExceeded",
    "LLMRetriesExhausted",
    "RetryInfo",
    "ToolSpec",
    "Usage",
    "WaitInfo",
]
