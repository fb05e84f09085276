"""Addresses and places a person types on the command line (a page's, the model's endpoint), and a browser window
asked for where there is no display: opened, refused or explained the same way by every command."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from store_support import tabpilot, tabpilot_process

MODEL = ("--model", "m")
NOT_A_PAGE = ("javascript:alert(1) is a script, not a page: give the address of a page to open "
              "(https://…, localhost:PORT)")
NOT_AN_ENDPOINT = "must be an http:// or https:// URL, e.g. https://api.openai.com/v1"


@pytest.mark.browser
def test_state_opens_an_address_without_a_scheme_as_run_does(pages, tmp_path: Path) -> None:
    for typed in (pages.url("state_modal.html", host="localhost"), pages.url("state_modal.html")):
        shown = tabpilot_process(tmp_path, "state", typed.removeprefix("http://"), timeout=120)
        assert shown.returncode == 0, shown.stderr
        assert shown.stdout.splitlines()[0] == f"Current tab [1]: State: modal — {typed}"


@pytest.mark.browser
def test_a_file_named_by_its_path_is_opened_as_that_file(tmp_path: Path) -> None:
    # `--url /path/page.html` became https:///path/page.html (net::ERR_NAME_NOT_RESOLVED), found by a new user.
    page = tmp_path / "my page.html"
    page.write_text("<title>Mine</title><p>mine")
    shown = tabpilot_process(tmp_path, "state", str(page), timeout=120)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines()[0] == f"Current tab [1]: Mine — {page.as_uri()}"


def test_a_record_path_that_cannot_take_the_recording_is_refused_before_the_task(tmp_path: Path) -> None:
    # Found by a new user: a folder failed only after the task had run, and a missing folder was made.
    for record, said in ((tmp_path, f"{tmp_path} is a folder: --record takes the file to save the recording in"),
                         (tmp_path / "nowhere" / "r.json",
                          f"{tmp_path / 'nowhere' / 'r.json'}: the folder {tmp_path / 'nowhere'} does not exist")):
        run = tabpilot(tmp_path, "run", "x", "--record", str(record), "--base-url", "http://127.0.0.1:9/v1", *MODEL)
        assert run.returncode == 2 and said in run.stderr, run.stderr
    assert not (tmp_path / "nowhere").exists()


def test_a_script_for_an_address_is_refused_in_one_line_by_state_and_run(tmp_path: Path) -> None:
    state = tabpilot(tmp_path, "state", "javascript:alert(1)")
    assert (state.returncode, state.stdout, state.stderr) == (1, "", f"tabpilot state: {NOT_A_PAGE}\n")
    run = tabpilot(tmp_path, "run", "x", "--url", "javascript:alert(1)", "--base-url", "http://127.0.0.1:9/v1", *MODEL)
    assert run.returncode == 1 and run.stderr.endswith(f"tabpilot: --url: {NOT_A_PAGE}\n"), run.stderr
    assert "execute_javascript" not in run.stderr  # the model's words, not the user's


@pytest.mark.parametrize("address", ["127.0.0.1:18001/v1", "ftp://127.0.0.1:18001/v1"])
def test_a_base_url_that_is_not_http_is_refused_at_once_as_config_refuses_it(tmp_path: Path, address: str) -> None:
    refused = tabpilot(tmp_path, "config", "set", "base-url", address)
    assert refused.stderr == f"tabpilot config: base-url: {NOT_AN_ENDPOINT}\n"
    for given, env in ((("--base-url", address), {}), ((), {"OPENAI_BASE_URL": address})):
        run = tabpilot(tmp_path, "run", "hi", *given, *MODEL, env=env)
        assert (run.returncode, run.stdout) == (2, ""), run.stderr
        # all it says: not after attempts at the model (each says "retry n/3"), nor a browser started for it
        assert run.stderr == f"tabpilot: {given[0] if given else 'OPENAI_BASE_URL'}: {NOT_AN_ENDPOINT}\n"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a display is X11's or Wayland's")
@pytest.mark.parametrize("command", [("state", "about:blank"), ("demo",), ("run", "x", "--base-url",
                                                                          "http://127.0.0.1:9/v1", *MODEL)])
def test_a_window_asked_for_without_a_display_says_there_is_none_and_what_to_do(tmp_path: Path, command) -> None:
    # The advice named --headless, which only `tabpilot mcp` took (found by a new user): every command takes it now,
    # and following the advice starts the browser without a window. A stand-in browser says what it was started
    # with, so no real one is needed.
    fake = tmp_path / "fake-browser"
    fake.write_text('#!/bin/sh\nprintf "%s\\n" "$@" > "$FAKE_BROWSER_ARGS"\nexit 3\n')
    fake.chmod(0o755)
    started_with = tmp_path / "args.txt"
    env = {"DISPLAY": "", "WAYLAND_DISPLAY": "", "TABPILOT_BROWSER": str(fake), "FAKE_BROWSER_ARGS": str(started_with)}
    shown = tabpilot(tmp_path, *command, "--headed", env=env)
    assert shown.returncode == 1 and "Traceback" not in shown.stderr
    said = shown.stderr.strip().splitlines()[-1]
    assert said.endswith("there is no display to show the browser window on (DISPLAY is not set): leave out "
                         "--headed, or give --headless in its place, for a browser without a window; or run where "
                         "there is one (set DISPLAY, or start the command under xvfb-run)"), said
    assert not started_with.exists()  # refused before a browser was started

    for window in ((), ("--headless",)):
        started = tabpilot(tmp_path, *command, *window, env=env)
        assert started.returncode == 1 and "exited with code 3 during start-up" in started.stderr, started.stderr
        assert "no display" not in started.stderr
        assert "--headless=new" in started_with.read_text().splitlines()
        started_with.unlink()


def test_state_without_an_address_says_to_give_one_instead_of_reading_a_blank_page(tmp_path: Path) -> None:
    # Found by a new user: `tabpilot state` launched a browser and printed the state of about:blank.
    fake = tmp_path / "fake-browser"
    fake.write_text("#!/bin/sh\ntouch \"$0.started\"\nexit 3\n")
    fake.chmod(0o755)
    for args in ((), ("--headed",), ("--json", "--user-data-dir", str(tmp_path / "profile"))):
        shown = tabpilot(tmp_path, "state", *args, env={"TABPILOT_BROWSER": str(fake)})
        assert (shown.returncode, shown.stdout) == (2, ""), shown
        assert shown.stderr.endswith(  # after a new --user-data-dir profile is said to be one
            "tabpilot state: give the page to read: tabpilot state URL (a browser tabpilot launches has no page of its "
            "own; to read the tab a running browser shows, give its --cdp-url WS)\n"), shown.stderr
    assert not (tmp_path / "fake-browser.started").exists()
    chinese = tabpilot(tmp_path, "state", env={"LANGUAGE": "", "LC_ALL": "", "LANG": "zh_CN.UTF-8"})
    assert chinese.returncode == 2
    assert chinese.stderr.startswith("tabpilot state：请给出要读取的网页：tabpilot state URL"), chinese.stderr


def test_doctor_asks_for_a_missing_key_at_the_prompt_not_on_the_command_line(tmp_path: Path) -> None:
    assert tabpilot(tmp_path, "config", "set", "model", "gpt-test").returncode == 0
    shown = tabpilot(tmp_path, "doctor")
    assert "No API key is configured" in shown.stdout
    assert ("fix: tabpilot config set api-key (it asks for the key and does not show it; or the popup's Settings)"
            in shown.stdout), shown.stdout
    assert "api-key <key>" not in shown.stdout


def test_a_start_page_outside_the_allowed_domains_is_refused_before_anything_starts(tmp_path: Path) -> None:
    # The guard stops navigations: a start page outside --allow-domain was opened and worked in unremarked.
    from tabpilot.llm.scripted import ScriptedLLMServer

    with ScriptedLLMServer([]) as server:
        run = tabpilot(tmp_path, "run", "Buy the book", "--url", "127.0.0.1:8000/shop", "--allow-domain",
                       "example.com", "--base-url", server.base_url, "--api-key", "sk-test-0000000000000000", *MODEL)
    assert run.returncode == 2 and server.requests == [], run.stderr
    assert run.stderr == ("tabpilot: --url http://127.0.0.1:8000/shop is outside the domains this task may reach "
                          "(allowed: example.com; blocked: -): give a start page it may reach, or add --allow-domain "
                          "127.0.0.1\n"), run.stderr
    # A blocked domain: --allow-domain would not help (blocked wins), so it is not what is suggested.
    assert tabpilot(tmp_path, "config", "set", "blocked-domains", "127.0.0.1").returncode == 0
    run = tabpilot(tmp_path, "run", "Buy the book", "--url", "127.0.0.1:8000/shop", "--allow-domain", "127.0.0.1",
                   "--base-url", "http://127.0.0.1:9/v1", "--api-key", "sk-test-0000000000000000", *MODEL)
    assert run.returncode == 2 and "--allow-domain" not in run.stderr, run.stderr
    assert run.stderr.startswith("tabpilot: --url http://127.0.0.1:8000/shop is on a blocked domain (127.0.0.1; "
                                 "blocked domains win over allowed ones)"), run.stderr
    assert "`tabpilot config unset blocked-domains`" in run.stderr, run.stderr


@pytest.mark.browser
def test_a_task_longer_than_a_command_line_is_read_from_standard_input(pages, tmp_path: Path) -> None:
    # `run -`: Linux takes at most 128 KiB in one argument; a longer task goes in on standard input.
    from agent_support import done

    from tabpilot.llm.scripted import ScriptedLLMServer

    task = "Read the page and tell me its title. " + "Background: " + "x" * 140_000 + " (end of the task)"
    with ScriptedLLMServer([done("read it")]) as server:
        run = tabpilot_process(tmp_path, "run", "-", "--url", pages.url("basic.html"), "--base-url", server.base_url,
                       "--api-key", "sk-test-0000000000000000", *MODEL, stdin=task + "\n", timeout=120)
        asked = json.dumps(server.requests[0])
    assert run.returncode == 0, run.stderr
    assert "Read the page and tell me its title." in asked and "(end of the task)" in asked


@pytest.mark.browser
def test_a_task_read_from_standard_input_asks_nobody_there(pages, tmp_path: Path) -> None:
    # Its standard input is used up by the task: in a browser the person sees (--cdp-url), the model is not offered
    # to ask them or hand them the controls there (an answer would never come).
    from agent_support import done

    from tabpilot.browser.launcher import launch_browser
    from tabpilot.llm.scripted import ScriptedLLMServer

    launched = launch_browser(headless=True, env={"HOME": str(tmp_path)})
    try:
        with ScriptedLLMServer([done("read it")]) as server:
            run = tabpilot_process(tmp_path, "run", "-", "--cdp-url", launched.ws_url, "--url", pages.url("basic.html"),
                           "--base-url", server.base_url, "--api-key", "sk-test-0000000000000000", *MODEL,
                           stdin="Read the page\n", timeout=120)
            offered = json.dumps(server.requests[0]["tools"])
    finally:
        launched.close()
    assert run.returncode == 0, run.stderr
    assert "ask_user" not in offered and "request_takeover" not in offered
