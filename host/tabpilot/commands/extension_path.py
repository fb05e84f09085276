"""`tabpilot extension-path`: the folder to load as an unpacked extension."""

from __future__ import annotations

import argparse
import sys


def configure(parser: argparse.ArgumentParser) -> None:
    pass


def run(args: argparse.Namespace) -> int:
    from ..installer import REINSTALL, extension_dir

    folder = extension_dir()
    if not (folder / "manifest.json").is_file():
        print(f"tabpilot: the extension folder is missing ({folder}); {REINSTALL}", file=sys.stderr)
        return 1
    print(folder)
    return 0
