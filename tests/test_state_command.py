"""`tabpilot state` as a user runs it: a subprocess that launches (or attaches to) a real Chromium."""

from __future__ import annotations

import http.server
import json
import os
import socketserver
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest
from store_support import processes_using

from tabpilot.browser.launcher import launch_browser

pytestmark = [pytest.mark.browser]


def _run_state(args: list[str], tmp_path: Path, **environ: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        **environ,
        "TMPDIR": str(tmp_path),  # the temporary profile lands here, so leftovers are easy to spot
        "HOME": str(tmp_path),
        "TABPILOT_HOME": str(tmp_path / "tabpilot"),
    }
    return subprocess.run(
        [sys.executable, "-m", "tabpilot", "state", *args],
        capture_output=True, text=True, timeout=120, env=env,
    )


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="process check reads /proc")
def test_state_prints_the_model_view_and_leaves_nothing_running(pages, tmp_path: Path) -> None:
    result = _run_state([pages.url("state_modal.html")], tmp_path)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == f"Current tab [1]: State: modal — {pages.url('state_modal.html')}"
    assert "[1]<button>Accept all" in lines and "[2]<button>Reject" in lines
    assert "Buy now" not in " ".join(line for line in lines if line.startswith("["))  # covered: not offered
    assert not list(tmp_path.glob("tabpilot-profile-*")), "temporary profile left behind"
    assert processes_using(tmp_path) == []


@pytest.mark.skipif(not hasattr(os, "chown") or os.geteuid() != 0, reason="makes a folder another user owns")
def test_state_reads_the_page_where_its_log_folder_is_another_users_and_writes_nothing_there(pages, tmp_path):
    # `state` logs to cli.log; a log folder another user made first is not written to (its owner could read it),
    # and a command that only reads a page still runs, its warnings on stderr instead.
    log = tmp_path / "tabpilot" / "log"
    log.mkdir(parents=True)
    log.chmod(0o777)
    os.chown(log, 65534, -1)  # nobody's
    result = _run_state([pages.url("state_modal.html")], tmp_path)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    assert "[1]<button>Accept all" in result.stdout.splitlines()
    assert list(log.iterdir()) == []


def test_state_json(pages, tmp_path: Path) -> None:
    result = _run_state([pages.url("state_shadow.html"), "--json"], tmp_path)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["url"] == pages.url("state_shadow.html")
    assert data["title"] == "State: shadow DOM"
    assert "[2]<input placeholder=\"Closed shadow input\">" in data["text"]
    elements = {e["index"]: e for e in data["elements"]}
    assert elements[1] == {**elements[1], "tag": "button", "name": "Open shadow button"}
    assert elements[2]["name"] == "Closed shadow input" and elements[2]["tag"] == "input"
    assert elements[3]["name"] == "Closed listener target"


def test_state_unreachable_page_is_one_clear_line(tmp_path: Path) -> None:
    result = _run_state(["http://127.0.0.1:9/nothing-listens-here"], tmp_path)
    assert result.returncode == 1
    assert result.stderr.startswith("tabpilot state: could not open http://127.0.0.1:9/")
    assert "check the address" in result.stderr
    assert "Traceback" not in result.stderr
    assert not list(tmp_path.glob("tabpilot-profile-*"))


def test_a_browser_that_cannot_be_reached_says_what_to_do_in_the_users_language(tmp_path: Path) -> None:
    refused = _run_state(["--cdp-url", "http://127.0.0.1:9"], tmp_path)
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    assert refused.stderr.strip() == (
        "tabpilot state: could not reach the browser at http://127.0.0.1:9 (Connection refused). Start it with "
        "--remote-debugging-port=9222 and give that address (--cdp-url http://127.0.0.1:9222), or leave out "
        "--cdp-url and tabpilot starts a browser of its own."), refused.stderr
    chinese = _run_state(["--cdp-url", "ws://127.0.0.1:9/devtools/browser/x"], tmp_path, LANG="zh_CN.UTF-8")
    assert chinese.returncode == 1
    said = chinese.stderr
    assert said.startswith("tabpilot state：无法连接到 ws://127.0.0.1:9/devtools/browser/x 的浏览器（"), said
    assert "--remote-debugging-port=9222" in chinese.stderr and "could not" not in chinese.stderr
    with socketserver.TCPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler) as web:  # any web server
        threading.Thread(target=web.serve_forever, daemon=True).start()
        address = f"http://127.0.0.1:{web.server_address[1]}"
        not_a_browser = _run_state(["--cdp-url", address], tmp_path)
        web.shutdown()
    assert not_a_browser.returncode == 1
    assert not_a_browser.stderr.strip() == (
        f"tabpilot state: {address} answered, but not as a browser's DevTools endpoint. Give the address the "
        "browser printed after \"DevTools listening on\", or its http://127.0.0.1:PORT."), not_a_browser.stderr


def test_state_attached_to_a_running_browser(pages, tmp_path: Path, browser_binary: str) -> None:
    launched = launch_browser(executable=browser_binary, headless=True, env={"HOME": str(tmp_path)})
    try:
        # With a URL: opened in a new tab, which is closed again afterwards.
        result = _run_state([pages.url("state_frames.html"), "--cdp-url", launched.http_url], tmp_path)
        assert result.returncode == 0, result.stderr
        assert "Frame cross" in result.stdout and "[5]<span>Pay cross" in result.stdout
        time.sleep(0.2)
        with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(launched.http_url + "/json/list") as r:
            urls = [t["url"] for t in json.loads(r.read()) if t["type"] == "page"]
        assert pages.url("state_frames.html") not in urls
        # Without a URL: the browser's current tab, and the browser keeps running.
        result = _run_state(["--cdp-url", launched.ws_url], tmp_path)
        assert result.returncode == 0, result.stderr
        assert result.stdout.startswith("Current tab [1]: about:blank")
        assert launched.process.poll() is None
    finally:
        launched.close()


def test_state_attached_without_a_url_reads_the_tab_the_user_is_looking_at(
    pages, tmp_path: Path, browser_binary: str
) -> None:
    import asyncio

    from tabpilot.browser.browser import Browser

    async def look_at_the_middle_of_three_tabs_and_ask(ws_url: str) -> subprocess.CompletedProcess[str]:
        browser = await Browser.connect(ws_url)  # stays connected, like another DevTools client would
        try:
            [blank] = await browser.tabs()
            tabs = [await browser.new_tab(pages.url(name)) for name in ("basic.html", "state_modal.html",
                                                                        "state_table.html")]
            await browser.close_tab(blank.target_id)
            for tab in tabs:  # the test's own sessions must not make every tab look shown (Tab.render_as_if_shown)
                await tab.send("Emulation.setFocusEmulationEnabled", {"enabled": False})
            await browser.connection.root.send("Target.activateTarget", {"targetId": tabs[1].target_id})
            result = await asyncio.to_thread(_run_state, ["--cdp-url", ws_url], tmp_path)
            assert await tabs[1].evaluate("document.visibilityState") == "visible"  # the view did not change
            return result
        finally:
            await browser.close()

    launched = launch_browser(executable=browser_binary, headless=True, env={"HOME": str(tmp_path)})
    try:
        result = asyncio.run(look_at_the_middle_of_three_tabs_and_ask(launched.ws_url))
        assert result.returncode == 0, result.stderr
        assert result.stdout.startswith(f"Current tab [1]: State: modal — {pages.url('state_modal.html')}")
        assert launched.process.poll() is None
    finally:
        launched.close()


def test_state_shows_the_page_with_what_the_model_may_not_see_hidden(pages, tmp_path: Path) -> None:
    # "exactly as the model sees it": a stored secret the page shows and a card number (masked by default) are
    # hidden as a task's model gets them, in the text and in --json; the page itself is read as usual.
    home = tmp_path / "tabpilot"
    saved = subprocess.run([sys.executable, "-m", "tabpilot", "secrets", "set", "BILLING_KEY", "--domain", "127.0.0.1"],
                           input="tp-live-Quartz-Falcon-93\n", capture_output=True, text=True, timeout=60,
                           env={**os.environ, "TABPILOT_HOME": str(home), "HOME": str(tmp_path)})
    assert saved.returncode == 0, saved.stderr
    for json_output in (False, True):
        result = _run_state([pages.url("state_private.html"), *(["--json"] if json_output else [])], tmp_path)
        assert result.returncode == 0, result.stderr
        assert "tp-live-Quartz-Falcon-93" not in result.stdout and "4111 1111" not in result.stdout, result.stdout
        text = json.loads(result.stdout)["text"] if json_output else result.stdout
        assert "API key: <secret>BILLING_KEY</secret>" in text and "Card on file: [card 1]" in text, text
        assert "[1]<button>Update card" in text, text


def test_state_prints_a_pages_separators_and_format_characters_as_codes(pages, tmp_path: Path) -> None:
    # the page's view went to the terminal raw: a bidi override reversed the rest of a line (the state itself
    # already makes separators spaces and drops zero-width characters; the same rule covers them here)
    for args in ([], ["--json"]):
        result = _run_state([pages.url("state_separators.html"), *args], tmp_path)
        assert result.returncode == 0, result.stderr
        raw = [c for c in "\u2028\u2029\u200b\ufeff\u2060\u202e" if c in result.stdout]
        assert raw == [], (args, raw, result.stdout)
        shown = json.loads(result.stdout)["text"] if args else result.stdout  # JSON: the same text, escaped
        assert ("Pay Approved \u202eSU 001" if args else "Pay Approved \\u202eSU 001") in shown
