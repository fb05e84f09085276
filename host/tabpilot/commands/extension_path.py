"""`tabpilot extension-path`: the folder to load as an unpacked extension."""

from __future__ import annotations

import argparse
import sys

from ..i18n import text as say


def configure(parser: argparse.ArgumentParser) -> None:
    pass


def run(args: argparse.Namespace) -> int:
    from ..installer import extension_dir
    from .run import terminal_language

    folder = extension_dir()
    if not (folder / "manifest.json").is_file():
        language = terminal_language()
        print(say("extension_path.missing", language, folder=folder, fix=say("install.reinstall", language)),
              file=sys.stderr)
        return 1
    print(folder)
    return 0
