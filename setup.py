"""Build hook (the rest of the configuration is in pyproject.toml): the wheel carries the browser
extension as package data, `tabpilot/extension/`, copied at build time from the repository's
`extension/` folder, which stays the only copy in the source tree. An editable install needs no copy:
`tabpilot.installer.extension_dir()` finds `extension/` next to `host/` there."""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

EXTENSION = Path(__file__).resolve().parent / "extension"


class BuildPyWithExtension(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        if not (EXTENSION / "manifest.json").is_file():
            raise SystemExit(f"cannot build tabpilot: the extension folder {EXTENSION} is missing")
        target = Path(self.build_lib) / "tabpilot" / "extension"
        shutil.rmtree(target, ignore_errors=True)  # no file of an earlier build may survive in the wheel
        shutil.copytree(EXTENSION, target, ignore=shutil.ignore_patterns(".*", "__pycache__"))


setup(cmdclass={"build_py": BuildPyWithExtension})
