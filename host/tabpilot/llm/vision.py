"""Whether a model takes images, and what an image costs.

`use_vision: auto` sends screenshots when the model is known to be multimodal by its name, or when its
endpoint accepted an image before (remembered per endpoint and model in `vision.json` in the data
folder); an endpoint that refused images is remembered too, so `auto` does not ask it again."""

from __future__ import annotations

import json
import logging
import math
import re
from pathlib import Path
from typing import Literal

from .. import paths

VisionMode = Literal["auto", "on", "off"]
VISION_MODES: tuple[VisionMode, ...] = ("auto", "on", "off")
log = logging.getLogger(__name__)

# Model names that take images (OpenAI, Anthropic, Google, Mistral, Qwen, open vision models).
_MULTIMODAL = re.compile(
    r"gpt-4o|gpt-4\.1|gpt-4-turbo|gpt-4-vision|gpt-5|chatgpt-4o|(?:^|/)o[134](?:-|$)(?!mini)|o4-mini|"
    r"claude-(?:3|sonnet|opus|haiku)|gemini|pixtral|mistral-(?:medium|small)-(?:3|latest)|"
    r"-vl\b|vl-|qvq|llava|bakllava|minicpm-v|glm-4v|glm-4\.\dv|internvl|moondream|llama-?3\.2-vision|"
    r"llama-4|gemma-?3|vision",
    re.IGNORECASE,
)
# Text-only names that the pattern above would take for multimodal.
_TEXT_ONLY = re.compile(r"o1-mini|o3-mini|gpt-4o-(?:mini-)?(?:audio|realtime|transcribe|search)", re.IGNORECASE)


def known_multimodal(model: str) -> bool:
    """The model's name says it takes images."""
    return bool(_MULTIMODAL.search(model)) and not _TEXT_ONLY.search(model)


def _memory_path() -> Path:
    return paths.data_dir() / "vision.json"


def _key(base_url: str, model: str) -> str:
    return f"{base_url.rstrip('/')} {model}"


def remembered(base_url: str, model: str) -> bool | None:
    """True: this endpoint and model accepted an image before; False: refused; None: never asked."""
    try:
        data = json.loads(_memory_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    value = data.get(_key(base_url, model)) if isinstance(data, dict) else None
    return value if isinstance(value, bool) else None


def remember(base_url: str, model: str, accepted: bool) -> None:
    """Note that this endpoint and model accepted (or refused) an image; a failure to write is logged only."""
    from ..store.settings import write_private

    if remembered(base_url, model) is accepted:
        return
    path = _memory_path()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = {}
    if not isinstance(data, dict):
        data = {}
    data[_key(base_url, model)] = accepted
    try:
        write_private(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n", prefix=".vision-")
    except OSError as exc:
        log.warning("could not remember image support in %s: %s", path, exc)


def wants_images(mode: VisionMode, base_url: str, model: str) -> bool:
    """Whether a task starting now sends screenshots."""
    if mode != "auto":
        return mode == "on"
    earlier = remembered(base_url, model)
    return earlier if earlier is not None else known_multimodal(model)


def openai_image_tokens(width: int, height: int, detail: Literal["low", "high"] = "high") -> int:
    """What OpenAI's GPT-4o-class models bill for one image: 85 at low detail; at high detail the image
    is fitted into 2048×2048, its shorter side brought down to 768, then 85 + 170 per 512-px tile."""
    if detail == "low":
        return 85
    fit = min(1.0, 2048 / max(width, height))
    shorter = min(1.0, 768 / (min(width, height) * fit))
    scale = fit * shorter
    return 85 + 170 * math.ceil(width * scale / 512) * math.ceil(height * scale / 512)
