"""Record a run's model replies to a file; replay them later through the scripted server.

`tabpilot run --record FILE` saves each reply the model gave (the tool call's arguments and the token
usage); `--replay FILE` serves them back, in order, from a ScriptedLLMServer, so a replay goes through
the real client over HTTP. The file (UTF-8 JSON):

    {
      "format": "tabpilot-recording",
      "version": 1,
      "model": "gpt-4.1-mini",                 optional: the model that answered
      "task": "find the cheapest flight",      optional: what was asked
      "replies": [
        {"tool": "AgentOutput",                the function called
         "arguments": {...},                   its arguments, after repair (what the agent acted on)
         "usage": {"prompt_tokens": 812, "completion_tokens": 64, "total_tokens": 876,
                   "prompt_tokens_details": {"cached_tokens": 512},          optional
                   "completion_tokens_details": {"reasoning_tokens": 0}}},   optional
        ...
      ]
    }

Only the replies are stored, never the prompts (they hold page content) nor the API key.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from ..i18n import WordedError
from .client import InvokeResult
from .scripted import ToolCall

FORMAT = "tabpilot-recording"
VERSION = 1


class RecordingError(WordedError):
    """A recording file that cannot be read; the message names the file and what is wrong (`str()` in
    English, `text(language)` in the reader's)."""


def check_record_path(path: str | Path) -> None:
    """Refuse, before a task runs, a --record path that cannot take the recording: a folder, or a file in a folder
    that does not exist (it was found out only after the task, and a missing folder was made)."""
    path = Path(path).expanduser()
    if path.is_dir():
        raise RecordingError("recording.is_folder", path=path)
    if not path.parent.is_dir():
        raise RecordingError("recording.no_folder", path=path, folder=path.parent)


def load_recording(path: str | Path) -> list[ToolCall]:
    """The replies a recording holds, ready for ScriptedLLMServer."""
    path = Path(path)
    return recording_replies(path, read_json(path))


def read_json(path: Path) -> Any:
    """The JSON document in a recording (or a scripted server's script) file."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RecordingError("recording.missing", path=path) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise RecordingError("recording.unreadable", path=path, reason=exc) from None
    except json.JSONDecodeError as exc:
        raise RecordingError("recording.not_json", path=path, reason=exc) from None


def recording_replies(path: Path, document: Any) -> list[ToolCall]:
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise RecordingError("recording.not_recording", path=path, format=FORMAT)
    if document.get("version") != VERSION:
        raise RecordingError("recording.version", path=path, version=repr(document.get("version")), supported=VERSION)
    replies = document.get("replies")
    if not isinstance(replies, list):
        raise RecordingError("recording.replies", path=path)
    return [tool_call(path, number, reply) for number, reply in enumerate(replies, 1)]


def tool_call(path: Path, number: int, reply: Any) -> ToolCall:
    """Reply `number` of a recording: {"tool", "arguments", "usage"?}."""
    if not isinstance(reply, dict) or not isinstance(reply.get("tool"), str) or "arguments" not in reply:
        raise RecordingError("recording.reply", path=path, number=number)
    arguments = reply["arguments"]
    if not isinstance(arguments, (dict, str)):
        raise RecordingError("recording.arguments", path=path, number=number)
    usage = reply.get("usage")
    return ToolCall(reply["tool"], arguments, usage if isinstance(usage, dict) else None)


class Recorder:
    """Collects the replies of a run and keeps the file on disk up to date after every one, so a run
    that dies midway still leaves a usable recording. Pass `record` as the hook for each InvokeResult."""

    def __init__(self, path: str | Path, *, model: str | None = None, task: str | None = None) -> None:
        self.path = Path(path)
        self.model = model
        self.task = task
        self.replies: list[dict[str, Any]] = []

    def record(self, result: InvokeResult[Any]) -> None:
        arguments = result.arguments
        if arguments is None:  # a result not made by LLMClient: fall back to the parsed value
            value = result.value
            arguments = value.model_dump(mode="json") if hasattr(value, "model_dump") else value
        self.replies.append({"tool": result.tool_name or "AgentOutput", "arguments": arguments,
                             "usage": result.usage.to_openai()})
        self.save()

    __call__ = record

    def document(self) -> dict[str, Any]:
        document: dict[str, Any] = {"format": FORMAT, "version": VERSION}
        if self.model:
            document["model"] = self.model
        if self.task:
            document["task"] = self.task
        document["replies"] = self.replies
        return document

    def save(self) -> None:
        """Write the file atomically: a crash mid-write leaves the previous version, never half a file."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=self.path.name + ".", suffix=".tmp", dir=self.path.parent)
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as file:
                json.dump(self.document(), file, ensure_ascii=False, indent=1)
                file.write("\n")
            os.replace(temporary, self.path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
