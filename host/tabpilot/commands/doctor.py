"""`tabpilot doctor`: check the installation end to end and say how to fix each problem.

Checks every registered host manifest (as Chromium reads it), the launcher, starts the host through
the launcher and exchanges a real framed hello with it, and asks the configured LLM endpoint for its
models. Chromium's own error for each broken manifest is quoted, so a user who saw it in the popup
can match it up.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import re
import struct
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .install import add_target_options

NOT_FOUND = 'Chromium says: "Specified native messaging host not found."'
FORBIDDEN = 'Chromium says: "Access to the specified native messaging host is forbidden."'
EXITED = 'Chromium says: "Native host has exited."'
ORIGIN_PATTERN = re.compile(r"^chrome-extension://[a-p]{32}/$")
HEADER = struct.Struct("=I")
PING_TIMEOUT = 20.0


@dataclass
class Finding:
    level: str  # ok | warn | fail
    what: str
    detail: str | None = None
    fix: str | None = None


def configure(parser: argparse.ArgumentParser) -> None:
    add_target_options(
        parser, default_browsers="every one `tabpilot install` registers for", profile="check only"
    )
    parser.add_argument("--skip-llm", action="store_true", help="do not contact the configured LLM endpoint")


def run(args: argparse.Namespace) -> int:
    findings = diagnose(args.browser, args.user_data_dir, check_llm_endpoint=not args.skip_llm)
    print("tabpilot doctor")
    for finding in findings:
        print(f"  {finding.level.upper():5} {finding.what}")
        if finding.detail:
            print(f"        {finding.detail}")
        if finding.fix:
            print(f"        fix: {finding.fix}")
    failures = sum(f.level == "fail" for f in findings)
    print("all good" if not failures else f"{failures} problem(s) found")
    return 1 if failures else 0


def diagnose(browser: str, user_data_dir: Path | None, *, check_llm_endpoint: bool = True) -> list[Finding]:
    from ..installer import (
        REINSTALL,
        InstallError,
        bundled_extension_id,
        extension_dir,
        manifest_targets,
        read_registry,
    )

    findings: list[Finding] = []
    install_command = install_command_for(browser, user_data_dir)
    try:
        extension_id = bundled_extension_id()
        findings.append(Finding("ok", f"extension folder {extension_dir()} (id {extension_id})"))
    except InstallError as exc:
        extension_id = None
        findings.append(Finding("fail", "bundled extension", str(exc), REINSTALL))

    targets = [t for t in manifest_targets(browser, user_data_dir=user_data_dir) if _registered(t, read_registry)]
    findings += check_coverage(browser, user_data_dir, {t.label for t in targets}, install_command)
    launchers: dict[str, str] = {}
    for target in targets:
        manifest_findings, launcher = check_manifest(target.label, target.manifest, extension_id, install_command)
        findings += manifest_findings
        if launcher and extension_id:
            launchers.setdefault(launcher, target.label)
    for launcher in launchers:
        findings.append(ping_host(launcher, extension_id or "", install_command))
    if check_llm_endpoint:
        findings += check_llm()
    return findings


def install_command_for(browser: str, user_data_dir: Path | None) -> str:
    if user_data_dir:
        return f"tabpilot install --user-data-dir {user_data_dir}"
    return "tabpilot install" + (f" --browser {browser}" if browser != "all" else "")


def check_coverage(
    browser: str, user_data_dir: Path | None, registered: set[str], install_command: str
) -> list[Finding]:
    """Is the host registered everywhere `install_command` would register it? The fix is always that
    command, or, where it would find no browser, what install itself says to do."""
    from ..installer import NO_BROWSER, NO_BROWSER_FIX, InstallError, install_targets

    try:
        wanted = [t.label for t in install_targets(browser, user_data_dir=user_data_dir)]
    except InstallError:
        return [] if registered else [Finding("fail", "the native host is not registered", NO_BROWSER, NO_BROWSER_FIX)]
    if not registered:
        where = f"profile {user_data_dir}" if user_data_dir else browser if browser != "all" else "any browser"
        fix = install_command
        if not user_data_dir and browser == "all":
            fix += f" (it registers for {', '.join(wanted)})"
        return [Finding("fail", f"the native host is not registered for {where}", NOT_FOUND, fix)]
    return [
        Finding("warn", f"{label}: the native host is not registered for it", NOT_FOUND, install_command)
        for label in wanted
        if label not in registered
    ]


def _registered(target: Any, read_registry: Any) -> bool:
    if target.registry_key:
        return read_registry(target.registry_key) is not None
    return bool(target.manifest.exists())


def check_manifest(
    label: str, manifest: Path, extension_id: str | None, install_command: str
) -> tuple[list[Finding], str | None]:
    """Findings for one manifest, and its launcher path if that one is fit to run."""
    from ..installer import HOST_NAME

    name = f"{label}: {manifest}"
    reinstall = f"run `{install_command}` again to rewrite it"
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return [Finding("fail", name, f"cannot read it as JSON ({exc}). {NOT_FOUND}", reinstall)], None
    if not isinstance(data, dict):
        return [Finding("fail", name, f"it is not a JSON object. {NOT_FOUND}", reinstall)], None
    problems: list[Finding] = []
    if data.get("name") != HOST_NAME:
        problems.append(Finding("fail", name, f"\"name\" is {data.get('name')!r}, not {HOST_NAME!r}. {NOT_FOUND}",
                                reinstall))
    if data.get("type") != "stdio":
        problems.append(Finding("fail", name, f"\"type\" is {data.get('type')!r}, not \"stdio\". {NOT_FOUND}",
                                reinstall))
    origins = data.get("allowed_origins")
    if not isinstance(origins, list) or not origins:
        problems.append(Finding("fail", name, f"\"allowed_origins\" is missing or empty. {FORBIDDEN}", reinstall))
        origins = []
    for entry in origins:
        if isinstance(entry, str) and ORIGIN_PATTERN.match(entry + "/"):
            problems.append(Finding("fail", name, f"allowed origin {entry!r} lacks the trailing slash. {NOT_FOUND}",
                                    reinstall))
        elif not isinstance(entry, str) or not ORIGIN_PATTERN.match(entry):
            problems.append(Finding("fail", name, f"allowed origin {entry!r} is not chrome-extension://<id>/. "
                                    f"{NOT_FOUND}", reinstall))
    listed = {entry.rstrip("/") for entry in origins if isinstance(entry, str)}
    if extension_id and f"chrome-extension://{extension_id}" not in listed:
        problems.append(Finding("fail", name, f"the bundled extension ({extension_id}) is not in allowed_origins. "
                                f"{FORBIDDEN}", f"{reinstall} (add --extension-id ID for another copy)"))
    launcher = data.get("path")
    launcher_ok = False
    if not isinstance(launcher, str) or not launcher:
        problems.append(Finding("fail", name, f"\"path\" is missing. {NOT_FOUND}", reinstall))
    elif not os.path.isabs(launcher):
        problems.append(Finding("fail", name, f"\"path\" {launcher!r} is not absolute. {NOT_FOUND}", reinstall))
    elif not os.path.isfile(launcher):
        problems.append(Finding("fail", name, f"the launcher {launcher} does not exist. {EXITED}", reinstall))
    elif os.name == "posix" and not os.access(launcher, os.X_OK):
        problems.append(Finding("fail", name, f"the launcher {launcher} is not executable. {EXITED}",
                                f"chmod 755 {launcher}  (or {reinstall})"))
    else:
        launcher_ok = True
        problems += check_launcher(launcher, reinstall)
    if not problems:
        problems.append(Finding("ok", name, f"launcher {launcher}"))
    return problems, launcher if launcher_ok and not any(p.level == "fail" for p in problems) else None


def check_launcher(launcher: str, reinstall: str) -> list[Finding]:
    """The Python the launcher runs must still exist (a deleted virtualenv is the usual cause)."""
    try:
        text = Path(launcher).read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        return [Finding("fail", f"launcher {launcher}", f"cannot read it: {exc}", reinstall)]
    match = re.search(r"""(?:exec\s+|^")'?"?([^'"\s]+python[^'"\s]*)'?"?\s+-m tabpilot""", text, re.MULTILINE)
    if match and not os.path.exists(match.group(1)):
        return [Finding("fail", f"launcher {launcher}", f"it runs {match.group(1)}, which no longer exists. {EXITED}",
                        f"reinstall tabpilot, then {reinstall}")]
    if match and os.path.realpath(match.group(1)) != os.path.realpath(sys.executable):
        return [Finding("warn", f"launcher {launcher}", f"it runs {match.group(1)}, not this tabpilot's "
                        f"{sys.executable}", reinstall)]
    return []


def ping_host(launcher: str, extension_id: str, install_command: str) -> Finding:
    """Start the host exactly as Chromium would and exchange one framed hello with it."""
    from .. import __version__

    what = f"host started through {launcher}"
    began = time.monotonic()
    try:
        process = subprocess.Popen(
            [launcher, f"chrome-extension://{extension_id}/"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
    except OSError as exc:
        return Finding("fail", what, f"cannot start it: {exc}. {EXITED}", f"run `{install_command}` again")
    replies: queue.Queue[bytes | None] = queue.Queue()
    threading.Thread(target=_read_one_frame, args=(process.stdout, replies), daemon=True).start()
    try:
        payload = json.dumps({"type": "hello", "id": "doctor", "extensionVersion": "doctor"}).encode()
        assert process.stdin is not None
        try:
            process.stdin.write(HEADER.pack(len(payload)) + payload)
            process.stdin.flush()
            raw = replies.get(timeout=PING_TIMEOUT)
        except (OSError, queue.Empty):  # it died before reading (broken pipe) or never answered
            raw = None
        elapsed = time.monotonic() - began
        reply = _parse(raw)
        if reply is None or reply.get("id") != "doctor" or not reply.get("ok"):
            process.kill()
            stderr = process.communicate(timeout=5)[1].decode("utf-8", "replace").strip()
            detail = f"no framed reply to hello. {EXITED}" + (f" Its error output: {stderr[-600:]}" if stderr else "")
            return Finding("fail", what, detail, f"run the launcher by hand to see why; then `{install_command}`")
        version = reply.get("data", {}).get("hostVersion")
        detail = f"answered a framed hello in {elapsed * 1000:.0f} ms (host {version})"
        if version != __version__:
            return Finding("warn", what, detail + f"; this tabpilot is {__version__}", f"run `{install_command}` again")
        return Finding("ok", what, detail)
    finally:
        if process.stdin is not None:
            try:
                process.stdin.close()
            except OSError:  # already broken: the host is gone
                pass
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


def _read_one_frame(stream: Any, out: queue.Queue[bytes | None]) -> None:
    try:
        header = stream.read(HEADER.size)
        if len(header) < HEADER.size:
            out.put(None)
            return
        (length,) = HEADER.unpack(header)
        out.put(stream.read(min(length, 1 << 20)))
    except (OSError, ValueError):
        out.put(None)


def _parse(raw: bytes | None) -> dict[str, Any] | None:
    if not raw:
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def check_llm() -> list[Finding]:
    import urllib.error
    import urllib.request

    from ..llm.config import LLMConfig, is_loopback_url
    from ..llm.errors import LLMNotConfigured
    from ..store.settings import SettingsError, load_settings

    try:
        settings = load_settings()
    except SettingsError as exc:
        return [Finding("fail", "settings", str(exc), "tabpilot config (or delete the file and set them again)")]
    try:
        endpoint = LLMConfig(base_url=settings.base_url, model=settings.model, api_key=settings.api_key).resolve()
    except LLMNotConfigured as exc:
        return [Finding("fail", "LLM", exc.message, "tabpilot config set model <name> (or the popup's Settings)")]
    what = f"LLM endpoint {endpoint.base_url} (model {endpoint.model})"
    request = urllib.request.Request(
        f"{endpoint.base_url}/models", headers={"Authorization": f"Bearer {endpoint.api_key}"}
    )
    handlers = [urllib.request.ProxyHandler({})] if is_loopback_url(endpoint.base_url) else []
    opener = urllib.request.build_opener(*handlers)
    try:
        with opener.open(request, timeout=5) as response:
            body = json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as exc:
        if exc.code in (401, 403):
            fix = "tabpilot config set api-key <key>"
            return [Finding("fail", what, f"the API key was refused (HTTP {exc.code})", fix)]
        if exc.code == 404:
            return [Finding("warn", what, "it has no /models list, so the model name could not be checked")]
        return [Finding("fail", what, f"GET /models answered HTTP {exc.code}", "check the base URL")]
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        return [Finding("fail", what, f"cannot reach it: {reason}", "check the base URL and your connection")]
    except ValueError:
        return [Finding("warn", what, "GET /models did not answer JSON")]
    models = [m.get("id") for m in body.get("data", []) if isinstance(m, dict)] if isinstance(body, dict) else []
    if models and endpoint.model not in models:
        shown = ", ".join(str(m) for m in models[:8])
        return [Finding("warn", what, f"reachable, but it does not list {endpoint.model!r} (it has: {shown})",
                        "tabpilot config set model <one of those>")]
    return [Finding("ok", what, "reachable, key accepted")]
