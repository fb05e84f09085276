"""tabpilot: an AI agent that works in the browser you already use."""

__version__ = "0.1.0"
