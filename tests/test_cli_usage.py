"""A command line typed wrong, as a new user types it: each subcommand answers with its own usage and says what
to type instead (the closest option, the task in quotes), and a number that makes no sense is refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from store_support import tabpilot

ENGLISH = {"LANGUAGE": "", "LC_ALL": "", "LC_MESSAGES": "", "LANG": "C.UTF-8"}
CHINESE = {**ENGLISH, "LANG": "zh_CN.UTF-8"}
TOP_USAGE = "usage: tabpilot [-h] [--version] COMMAND"


@pytest.mark.parametrize(
    ("args", "usage", "hint"),
    [
        (("state", "--tiemout", "5", "example.com"), "usage: tabpilot state [", "did you mean --timeout?"),
        (("state", "--timeout=5", "--jsno", "example.com"), "usage: tabpilot state [", "did you mean --json?"),
        (("run", "--modle", "m", "read the title"), "usage: tabpilot run [", "did you mean --model?"),
        (("run", "x", "--allow-domains", "example.com"), "usage: tabpilot run [", "did you mean --allow-domain?"),
        (("run", "--tiemout", "5", "read the title"), "usage: tabpilot run [",
         "`tabpilot run --help` lists its options"),  # run has no --timeout
        (("history", "--limt", "3"), "usage: tabpilot history [", "did you mean --limit?"),
        (("history", "delete", "--alll"), "usage: tabpilot history delete [", "did you mean --all?"),
        (("config", "set", "--jsn", "model", "m"), "usage: tabpilot config set [", "`tabpilot config set --help`"),
        (("mcp", "--lauch"), "usage: tabpilot mcp [", "did you mean --launch?"),
        (("--verison",), TOP_USAGE, "did you mean --version?"),
    ],
)
def test_a_mistyped_option_gets_its_commands_usage_and_the_closest_option(
    tmp_path: Path, args: tuple[str, ...], usage: str, hint: str
) -> None:
    # Found by a new user: `run --tiemout 5 "task"` showed the top-level usage, and suggested nothing.
    said = tabpilot(tmp_path, *args, env=ENGLISH)
    assert said.returncode == 2 and said.stdout == "", said
    assert said.stderr.startswith(usage), said.stderr
    if usage != TOP_USAGE:
        assert TOP_USAGE not in said.stderr
    typed = next(arg for arg in args if arg.startswith("--") and "=" not in arg)
    assert f"error: unrecognized arguments: {typed}\n{hint}" in said.stderr, said.stderr
    assert not (tmp_path / "data").exists()  # nothing ran


def test_a_mistyped_option_is_answered_in_the_language_setting(tmp_path: Path) -> None:
    said = tabpilot(tmp_path, "state", "--tiemout", "5", "example.com", env=CHINESE)
    assert said.returncode == 2 and said.stderr.startswith("用法：tabpilot state ["), said.stderr
    assert "tabpilot state：错误：无法识别的参数：--tiemout\n你是不是想用 --timeout？" in said.stderr, said.stderr


@pytest.mark.parametrize(
    ("args", "quoted"),
    [
        (("open", "example.com", "and", "read", "the", "title"),
         'tabpilot run "open example.com and read the title"'),
        (("--model", "m", "open", "example.com", "--json", "and", "say", "it's", "done"),
         'tabpilot run --model m "open example.com and say it\'s done" --json'),
        (("say", "$HOME", "is", "mine"), "tabpilot run 'say $HOME is mine'"),  # as a POSIX shell takes it literally
        # an option's value that is also a word of the task stays the option's (review: "--url" lost its value)
        (("open", "example", "--url", "example"), 'tabpilot run "open example" --url example'),
    ],
)
def test_an_unquoted_task_is_shown_quoted(tmp_path: Path, args: tuple[str, ...], quoted: str) -> None:
    # Found by a new user: `tabpilot run open example.com and read the title` said "unrecognized arguments" only.
    said = tabpilot(tmp_path, "run", *args, env=ENGLISH)
    assert said.returncode == 2 and said.stderr.startswith("usage: tabpilot run ["), said.stderr
    assert said.stderr.endswith(f"the task is one argument: put it in quotes, e.g. {quoted}\n"), said.stderr
    chinese = tabpilot(tmp_path, "run", *args, env=CHINESE)
    assert chinese.stderr.endswith(f"任务是一个参数：请用引号把它括起来，例如 {quoted}\n"), chinese.stderr


def test_words_left_over_elsewhere_are_not_called_a_task(tmp_path: Path) -> None:
    said = tabpilot(tmp_path, "history", "show", "abc", "def", env=ENGLISH)
    assert said.returncode == 2 and said.stderr.startswith("usage: tabpilot history show ["), said.stderr
    assert said.stderr.endswith("error: unrecognized arguments: def\n"), said.stderr


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("state", "example.com", "--timeout", "0"), "argument --timeout: must be more than 0"),
        (("state", "example.com", "--timeout", "-5"), "argument --timeout: must be more than 0"),
        (("state", "example.com", "--timeout", "nan"), "argument --timeout: must be a number, e.g. 120"),
        (("state", "example.com", "--timeout", "soon"), "argument --timeout: must be a number, e.g. 120"),
        (("mcp", "--approve-timeout", "0"), "argument --approve-timeout: must be more than 0"),
        (("mcp", "--approve-timeout", "-1"), "argument --approve-timeout: must be more than 0"),
        (("run", "x", "--max-steps", "0"), "argument --max-steps: must be at least 1"),
        (("run", "x", "--max-steps", "-3"), "argument --max-steps: must be at least 1"),
    ],
)
def test_a_number_that_makes_no_sense_at_zero_or_below_is_refused(
    tmp_path: Path, args: tuple[str, ...], said: str
) -> None:
    # Found by a new user: `--timeout 0` was taken, and every page then failed to load at once.
    refused = tabpilot(tmp_path, *args, env=ENGLISH)
    assert refused.returncode == 2, refused
    assert refused.stderr.startswith(f"usage: tabpilot {args[0]} ["), refused.stderr
    assert refused.stderr.endswith(f"tabpilot {args[0]}: error: {said}\n"), refused.stderr


def test_headed_and_headless_together_are_refused(tmp_path: Path) -> None:
    for command in (("run", "x"), ("state", "example.com"), ("demo",)):
        refused = tabpilot(tmp_path, *command, "--headed", "--headless", env=ENGLISH)
        assert refused.returncode == 2
        assert "error: argument --headless: not allowed with argument --headed" in refused.stderr, refused.stderr


MODEL = ("--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--api-key", "k")  # never reached: no browser


@pytest.mark.parametrize("command", [("run", "read the title", *MODEL), ("demo",), ("state", "example.com")])
def test_every_command_that_launches_a_browser_takes_browser(tmp_path: Path, command: tuple[str, ...]) -> None:
    """Found by a new user: `state --browser PATH` and `mcp --browser PATH` worked, but `run --browser PATH` was
    refused with "did you mean --base-url?", and demo had no way to name a browser at all. Each launching command
    takes --browser, checked before anything starts, twice over."""
    for missing in ("/no/such/browser", "/no/such/other"):
        said = tabpilot(tmp_path, *command, "--browser", missing, env=ENGLISH)
        assert said.returncode == 1, said
        assert f"the browser '{missing}' does not exist" in said.stderr, said.stderr


def test_browser_with_cdp_url_is_refused_saying_why(tmp_path: Path) -> None:
    for command in (("run", "read the title"), ("state",)):
        said = tabpilot(tmp_path, *command, "--browser", "chromium", "--cdp-url", "http://127.0.0.1:9", env=ENGLISH)
        assert said.returncode == 2 and "with --cdp-url it works in the browser already running there" in said.stderr


def test_a_browser_is_named_as_install_names_it() -> None:
    """`install --browser chromium` names a browser; so does --browser (and TABPILOT_BROWSER) of the launching
    commands, which took only a path (`--browser chrome` said "the browser 'chrome' does not exist")."""
    from tabpilot.browser.launcher import BrowserNotFound, find_browser
    from tabpilot.browser.programs import BROWSERS, is_program, program_candidates

    for kind in BROWSERS:
        installed = [path for browser, path in program_candidates() if browser == kind and is_program(path)]
        if installed:
            assert find_browser(kind) == find_browser(kind.upper()) == installed[0]
        else:
            with pytest.raises(BrowserNotFound) as refused:
                find_browser(kind)
            assert refused.value.key == "browser.kind_missing" and f"no {kind} is installed here" in str(refused.value)
