"""The bundled demo: a page and a recorded scripted model that fills it in (`tabpilot demo`)."""

from __future__ import annotations

from pathlib import Path

DEMO_DIR = Path(__file__).parent
PAGE = "page.html"
RECORDING = DEMO_DIR / "recording.json"
