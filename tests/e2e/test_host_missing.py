"""Without the host installed, the extension still loads and the popup says what is wrong and how to fix it."""

from __future__ import annotations

import asyncio
import os
import shlex
import signal
import subprocess
import sys

import pytest
from e2e_support import SCREENS, install_host, start_harness, wait_until

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]


async def test_popup_explains_a_missing_host(browser_binary: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    harness = await start_harness(browser_binary, tmp_path_factory.mktemp("nohost"), install=False)
    try:
        state = await wait_until(
            lambda: harness.sw("host.error && {connected: host.connected, error: host.error}"),
            "the worker to give up on the host",
        )
        assert state["connected"] is False
        assert "native messaging host not found" in state["error"].lower()

        # over a page (opened as a tab with none named, the popup's own page would be its tab: one tabpilot cannot
        # work in, where Run stays off once the host is there too)
        popup = await harness.open_popup(await harness.browser.new_tab("about:blank"))
        await popup.wait_for("document.body.dataset.host === 'down'", "the popup's host-down state")
        assert await popup.visible("#host-down")
        assert "native messaging host not found" in (await popup.text("#host-down-reason")).lower()
        assert await popup.visible("#host-down-fix")  # not installed: this is the user's to fix, and how
        fix = await popup.text("#host-down-fix")
        assert "tabpilot install" in fix and "tabpilot doctor" in fix
        # a browser started with its own profile folder reads the host from that folder only: the other fix
        assert ("If this browser was started with --user-data-dir=DIR, run tabpilot install --user-data-dir DIR "
                "instead.") in " ".join(fix.split()), fix
        assert await popup.js("document.getElementById('run').disabled") is True
        # the worker keeps retrying with a growing backoff, and says so
        await popup.wait_for("/Retrying in \\d+ s/.test(document.getElementById('host-retry').textContent)",
                             "the retry countdown")
        await wait_until(lambda: harness.sw("host.backoffMs >= 2000"), "the backoff to grow")
        await popup.screenshot(SCREENS / "host-missing.png")

        # the user follows the fix and presses Reconnect now: no browser restart needed
        env = {"HOME": str(harness.home), "TABPILOT_HOME": str(harness.tabpilot_home)}
        told = await asyncio.to_thread(install_host, harness.profile, env)
        assert "Reconnect now" in told and "restart" not in told.replace("No browser restart is needed", "")
        await popup.click("#reconnect")
        await popup.wait_for("document.body.dataset.host === 'connected'", "the popup to see the host", 10)
        assert not await popup.visible("#host-down")
        assert await popup.js("document.getElementById('run').disabled") is False
        assert await harness.sw("host.backoffMs") == 500  # reset once connected
    finally:
        await harness.browser.close()


async def test_settings_opened_while_the_host_is_missing_load_once_it_connects(
    browser_binary: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The user opens Settings before installing the host: each section says, in the popup's words, that it waits
    for the helper (the banner says why); after `tabpilot install` and Reconnect now the sections load, with no
    error left from when the host was away (they kept "tabpilot host is not connected: …", in English, and an
    empty form whose Save would have sent nothing the host had)."""
    harness = await start_harness(browser_binary, tmp_path_factory.mktemp("nohost-settings"), install=False)
    try:
        await wait_until(lambda: harness.sw("host.error"), "the worker to give up on the host")
        popup = await harness.open_popup()
        await popup.wait_for("document.body.dataset.host === 'down'", "the popup's host-down state")
        shown_errors = ("[...document.querySelectorAll('#view-settings .error')]"
                        ".filter(e => !e.closest('[hidden]')).map(e => e.textContent)")
        await popup.click("#nav-settings")
        errors = await popup.wait_for(f"(() => {{ const e = {shown_errors}; return e.length >= 4 && e; }})()",
                                      "each settings section to say it cannot load")
        assert set(errors) == {"Waiting for tabpilot's helper to connect (see above)."}, errors
        await popup.screenshot(SCREENS / "host-missing-settings.png")

        env = {"HOME": str(harness.home), "TABPILOT_HOME": str(harness.tabpilot_home)}
        await asyncio.to_thread(install_host, harness.profile, env)
        await popup.click("#reconnect")
        await popup.wait_for("document.body.dataset.host === 'connected'", "the popup to see the host", 10)
        await popup.wait_for("document.getElementById('settings-form').dataset.loaded === 'true'",
                             "the settings to load from the host that came back", 10)
        await popup.wait_for(f"{shown_errors}.length === 0", "the sections' errors to go", 10)
        assert await popup.js("document.getElementById('set-max-steps').value") != ""  # the host's values
        assert await popup.visible("#mask-cards") and await popup.js("document.getElementById('mask-cards').checked")

        # The host goes away again while the person edits the model: Save says it waits, and once the host is
        # back what they typed is still there to save (reloading every section on reconnect replaced it).
        uninstalled = await asyncio.to_thread(subprocess.run, [
            sys.executable, "-m", "tabpilot", "uninstall", "--user-data-dir", str(harness.profile)],
            env={**os.environ, **env}, capture_output=True, text=True, timeout=60)
        assert uninstalled.returncode == 0, uninstalled.stderr
        for pid in harness.host_pids():
            os.kill(pid, signal.SIGKILL)
        await popup.wait_for("document.body.dataset.host === 'down'", "the popup to see the host gone", 10)
        await popup.fill("#set-model", "my-own-model")
        await popup.click("#settings-save")
        await popup.wait_for(f"{shown_errors}.includes(\"Waiting for tabpilot's helper to connect (see above).\")",
                             "Save to say it waits for the host")
        await asyncio.to_thread(install_host, harness.profile, env)
        await popup.click("#reconnect")
        await popup.wait_for("document.body.dataset.host === 'connected'", "the popup to see the host again", 10)
        await popup.wait_for(f"{shown_errors}.length === 0", "the waiting words to go", 10)
        assert await popup.js("document.getElementById('set-model').value") == "my-own-model"  # kept, to save
        await popup.click("#settings-save")
        await popup.wait_for("document.getElementById('settings-saved').textContent !== ''", "the save to go through")
        assert (await harness.sw("(await requestHost({type: 'settings.get'})).model")) == "my-own-model"
    finally:
        await harness.browser.close()


async def test_doctor_finds_the_running_browser_started_with_its_own_profile_and_its_fix_works(
    browser_binary: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The new user's dead end: Chromium started with --user-data-dir reads the host's registration from that folder
    only, so after the popup's `tabpilot install` (the usual folders) it still found no host, and `tabpilot doctor`
    said all was well. Now install says which running browser it did not reach, doctor fails naming that folder and
    the command, and the command printed is the one that connects the browser."""
    harness = await start_harness(browser_binary, tmp_path_factory.mktemp("doctor-profile"), install=False)
    env = {**os.environ, "HOME": str(harness.home), "TABPILOT_HOME": str(harness.tabpilot_home)}
    env.pop("XDG_CONFIG_HOME", None)

    def tabpilot(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "tabpilot", *args], env=env, capture_output=True, text=True,
                              timeout=90)

    profile = harness.profile
    fix = f"tabpilot install --user-data-dir {shlex.quote(str(profile))}"
    try:
        popup = await harness.open_popup()
        await popup.wait_for("document.body.dataset.host === 'down'", "the popup's host-down state")

        installed = await asyncio.to_thread(tabpilot, "install")
        assert installed.returncode == 0, installed.stderr
        assert "registered for chromium" in installed.stdout
        assert (f"uses its own profile folder {profile} and does not read the folders above; to register it too: "
                f"{fix}\n") in installed.stdout, installed.stdout

        before = await asyncio.to_thread(tabpilot, "doctor", "--skip-llm")
        assert before.returncode == 1, before.stdout
        assert (f"FAIL  a running browser (pid {harness.browser.launched.process.pid}, {browser_binary}) uses its own "
                f"profile folder {profile}: the native host is not registered there") in before.stdout, before.stdout
        assert f"fix: {fix}\n" in before.stdout

        done = await asyncio.to_thread(subprocess.run, [sys.executable, "-m", *shlex.split(fix)], env=env,
                                       capture_output=True, text=True, timeout=90)
        assert done.returncode == 0, done.stderr
        after = await asyncio.to_thread(tabpilot, "doctor", "--skip-llm")
        assert after.returncode == 0 and "FAIL" not in after.stdout, after.stdout
        assert f"OK    profile {profile}: {profile / 'NativeMessagingHosts' / 'com.tabpilot.host.json'}" in after.stdout
        assert f"host started through {profile / 'NativeMessagingHosts' / 'tabpilot-host'}" in after.stdout
        again = await asyncio.to_thread(tabpilot, "install")
        assert "its own profile folder" not in again.stdout, again.stdout

        await popup.click("#reconnect")
        await popup.wait_for("document.body.dataset.host === 'connected'", "the popup to see the host", 10)
    except BaseException as exc:
        raise AssertionError(f"{exc}\n{harness.logs()}") from exc
    finally:
        await harness.browser.close()
