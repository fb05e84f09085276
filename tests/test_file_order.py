"""The slowest test files start first (tests/file_order.py): the list names files that exist, the order puts them
first without mixing a file's tests, and xdist keeps it."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from file_order import SLOWEST_FIRST, slowest_files_first

ROOT = Path(__file__).parent.parent


def test_every_file_listed_as_slow_is_a_test_file_and_listed_once() -> None:
    missing = [path for path in SLOWEST_FIRST if not (ROOT / path).is_file()]
    assert not missing, f"renamed or removed: update tests/file_order.py: {missing}"
    assert len(set(SLOWEST_FIRST)) == len(SLOWEST_FIRST)


@dataclass
class _Item:
    nodeid: str


def test_the_listed_files_come_first_in_the_lists_order_and_the_others_as_they_were() -> None:
    slowest, next_slowest = SLOWEST_FIRST[:2]
    items = [_Item("tests/test_quick.py::test_a"), _Item(f"{next_slowest}::test_b"), _Item(f"{slowest}::test_c"),
             _Item("tests/test_quick.py::test_d"), _Item(f"{slowest}::test_e"), _Item("tests/test_other.py::test_f")]
    slowest_files_first(items)  # type: ignore[arg-type]
    assert [item.nodeid for item in items] == [
        f"{slowest}::test_c", f"{slowest}::test_e", f"{next_slowest}::test_b",
        "tests/test_quick.py::test_a", "tests/test_quick.py::test_d", "tests/test_other.py::test_f"]


def test_xdist_keeps_the_order_the_files_are_collected_in() -> None:
    options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]["addopts"]
    assert "--dist loadfile" in options and "--no-loadscope-reorder" in options, options
