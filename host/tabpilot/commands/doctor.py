"""`tabpilot doctor`: check the installation end to end and say how to fix each problem.

Checks every registered host manifest (as Chromium reads it), and the profile folder of each browser
running with one of its own (--user-data-dir: it reads the host from there only), the launcher, starts
the host through the launcher and exchanges a real framed hello with it, and asks the configured LLM
endpoint for its models. Chromium's own error for each broken manifest is quoted, so a user who saw it in the popup
can match it up. Everything else is said in the run's language (the settings' language, else the
terminal's: i18n.py).
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
from typing import TYPE_CHECKING, Any

from ..browser.running import PROC
from ..i18n import DEFAULT_LANGUAGE, Language, Words, column
from ..i18n import text as say
from .install import add_target_options

if TYPE_CHECKING:
    from ..installer import Target
    from ..llm.config import ResolvedEndpoint

NOT_FOUND = Words("doctor.chromium_says", message="Specified native messaging host not found.")
FORBIDDEN = Words("doctor.chromium_says", message="Access to the specified native messaging host is forbidden.")
EXITED = Words("doctor.chromium_says", message="Native host has exited.")
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
    from .run import terminal_language

    language = terminal_language()
    findings = diagnose(args.browser, args.user_data_dir, check_llm_endpoint=not args.skip_llm, language=language)
    print("tabpilot doctor")
    for finding in findings:
        print(f"  {column(say(f'doctor.level.{finding.level}', language), 5)} {finding.what}")
        if finding.detail:
            print(f"        {finding.detail}")
        if finding.fix:
            print(f"        {say('doctor.fix', language, fix=finding.fix)}")
    failures = sum(f.level == "fail" for f in findings)
    warnings = sum(f.level == "warn" for f in findings)
    if failures:
        print(say("doctor.problems", language, count=failures))
    else:
        print(say("doctor.warnings", language, count=warnings) if warnings else say("doctor.all_good", language))
    return 1 if failures else 0


def diagnose(browser: str, user_data_dir: Path | None, *, check_llm_endpoint: bool = True,
             language: Language = DEFAULT_LANGUAGE, proc_root: Path = PROC) -> list[Finding]:
    from ..installer import (
        InstallError,
        bundled_extension_id,
        extension_dir,
        install_command,
        manifest_targets,
        read_registry,
        registered_profiles,
    )

    findings: list[Finding] = []
    command = install_command(browser, user_data_dir)
    try:
        extension_id = bundled_extension_id()
        findings.append(Finding("ok", say("doctor.extension_ok", language, folder=extension_dir(),
                                          extension_id=extension_id)))
    except InstallError as exc:
        extension_id = None
        findings.append(Finding("fail", say("doctor.extension", language), str(exc),
                                say("install.reinstall", language)))

    targets = [t for t in manifest_targets(browser, user_data_dir=user_data_dir) if _registered(t, read_registry)]
    unregistered_in_use: list[Finding] = []
    if user_data_dir is None and browser == "all":  # and the profile folders `install --user-data-dir` wrote to
        targets += registered_profiles()
        in_use, unregistered_in_use = check_profiles_in_use({t.manifest for t in targets}, proc_root, language)
        targets += in_use
    findings += check_coverage(browser, user_data_dir, {t.label for t in targets}, command, language)
    findings += unregistered_in_use
    launchers: dict[str, str] = {}
    for target in targets:
        fix = install_command(browser, target.profile) if target.profile and user_data_dir is None else command
        manifest_findings, launcher = check_manifest(target.label, target.manifest, extension_id, fix, language)
        findings += manifest_findings
        if launcher and extension_id:
            launchers.setdefault(launcher, fix)
    for launcher, fix in launchers.items():
        findings.append(ping_host(launcher, extension_id or "", fix, language))
    if check_llm_endpoint:
        findings += check_llm(language)
    return findings


def check_profiles_in_use(checked: set[Path], proc_root: Path, language: Language
                          ) -> tuple[list[Target], list[Finding]]:
    """The browsers running now with a profile folder of their own (`--user-data-dir`), but for the manifests
    `checked` already: where each one's folder has the host's manifest, to be checked like any other; and a problem
    for each whose folder has none, as its popup says ("native messaging host not found") whatever the browsers'
    usual folders hold."""
    from ..installer import install_command, profiles_in_use

    targets, findings = [], []
    for running, target in profiles_in_use(proc_root):
        if target.manifest in checked:
            continue
        if target.manifest.exists():
            targets.append(target)
            continue
        findings.append(Finding("fail", say("doctor.in_use", language, pid=running.pid, program=running.program,
                                            profile=running.profile),
                                say("doctor.in_use.detail", language, chromium=NOT_FOUND),
                                install_command("all", running.profile)))
    return targets, findings


def check_coverage(
    browser: str, user_data_dir: Path | None, registered: set[str], install_command: str,
    language: Language = DEFAULT_LANGUAGE,
) -> list[Finding]:
    """Is the host registered everywhere `install_command` would register it? The fix is always that
    command, or, where it would find no browser, what install itself says to do."""
    from ..installer import InstallError, install_targets

    try:
        wanted = [t.label for t in install_targets(browser, user_data_dir=user_data_dir)]
    except InstallError:
        if registered:
            return []
        return [Finding("fail", say("doctor.not_registered", language), say("install.no_browser", language),
                        say("install.no_browser_fix", language))]
    if not registered:
        where = (say("doctor.where_profile", language, profile=user_data_dir) if user_data_dir
                 else browser if browser != "all" else say("doctor.where_any", language))
        fix = install_command
        if not user_data_dir and browser == "all":
            fix = say("doctor.registers_for", language, command=install_command, browsers=", ".join(wanted))
        return [Finding("fail", say("doctor.not_registered_for", language, where=where), NOT_FOUND.text(language),
                        fix)]
    return [
        Finding("warn", say("doctor.not_registered_label", language, label=label), NOT_FOUND.text(language),
                install_command)
        for label in wanted
        if label not in registered
    ]


def _registered(target: Any, read_registry: Any) -> bool:
    if target.registry_key:
        return read_registry(target.registry_key) is not None
    return bool(target.manifest.exists())


def check_manifest(
    label: str, manifest: Path, extension_id: str | None, install_command: str,
    language: Language = DEFAULT_LANGUAGE,
) -> tuple[list[Finding], str | None]:
    """Findings for one manifest, and its launcher path if that one is fit to run."""
    from ..installer import HOST_NAME

    name = f"{label}: {manifest}"
    reinstall = say("doctor.rewrite", language, command=install_command)

    def broken(key: str, chromium: Words = NOT_FOUND, fix: str = reinstall, **values: object) -> Finding:
        return Finding("fail", name, say(f"doctor.manifest.{key}", language, chromium=chromium, **values), fix)

    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return [broken("unreadable", error=exc)], None
    if not isinstance(data, dict):
        return [broken("not_object")], None
    problems: list[Finding] = []
    if data.get("name") != HOST_NAME:
        problems.append(broken("field", field="name", value=repr(data.get("name")), expected=repr(HOST_NAME)))
    if data.get("type") != "stdio":
        problems.append(broken("field", field="type", value=repr(data.get("type")), expected='"stdio"'))
    origins = data.get("allowed_origins")
    if not isinstance(origins, list) or not origins:
        problems.append(broken("no_origins", FORBIDDEN))
        origins = []
    for entry in origins:
        if isinstance(entry, str) and ORIGIN_PATTERN.match(entry + "/"):
            problems.append(broken("no_slash", origin=repr(entry)))
        elif not isinstance(entry, str) or not ORIGIN_PATTERN.match(entry):
            problems.append(broken("bad_origin", origin=repr(entry)))
    listed = {entry.rstrip("/") for entry in origins if isinstance(entry, str)}
    if extension_id and f"chrome-extension://{extension_id}" not in listed:
        problems.append(broken("missing_id", FORBIDDEN, say("doctor.manifest.other_copy", language, fix=reinstall),
                               extension_id=extension_id))
    launcher = data.get("path")
    launcher_ok = False
    if not isinstance(launcher, str) or not launcher:
        problems.append(broken("no_path"))
    elif not os.path.isabs(launcher):
        problems.append(broken("relative_path", path=repr(launcher)))
    elif not os.path.isfile(launcher):
        problems.append(broken("no_launcher", EXITED, path=launcher))
    elif os.name == "posix" and not os.access(launcher, os.X_OK):
        problems.append(broken("not_executable", EXITED, say("doctor.manifest.chmod", language, path=launcher,
                                                              fix=reinstall), path=launcher))
    else:
        launcher_ok = True
        problems += check_launcher(launcher, reinstall, language)
    if not problems:
        problems.append(Finding("ok", name, say("doctor.manifest.ok", language, path=launcher)))
    return problems, launcher if launcher_ok and not any(p.level == "fail" for p in problems) else None


def check_launcher(launcher: str, reinstall: str, language: Language = DEFAULT_LANGUAGE) -> list[Finding]:
    """The Python the launcher runs must still exist (a deleted virtualenv is the usual cause)."""
    what = say("doctor.launcher", language, path=launcher)
    try:
        text = Path(launcher).read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        return [Finding("fail", what, say("doctor.launcher.unreadable", language, error=exc), reinstall)]
    match = re.search(r"""(?:exec\s+|^")'?"?([^'"\s]+python[^'"\s]*)'?"?\s+-m tabpilot""", text, re.MULTILINE)
    if match and not os.path.exists(match.group(1)):
        return [Finding("fail", what, say("doctor.launcher.python_gone", language, python=match.group(1),
                                          chromium=EXITED),
                        say("doctor.launcher.python_gone_fix", language, fix=reinstall))]
    if match and os.path.realpath(match.group(1)) != os.path.realpath(sys.executable):
        return [Finding("warn", what, say("doctor.launcher.other_python", language, python=match.group(1),
                                          this=sys.executable), reinstall)]
    return []


def ping_host(launcher: str, extension_id: str, install_command: str, language: Language = DEFAULT_LANGUAGE
              ) -> Finding:
    """Start the host exactly as Chromium would and exchange one framed hello with it."""
    from .. import __version__
    from ..native.process import HOST_CHECK_ENV

    what = say("doctor.ping", language, launcher=launcher)
    run_again = say("doctor.run_again", language, command=install_command)
    began = time.monotonic()
    try:
        process = subprocess.Popen(
            [launcher, f"chrome-extension://{extension_id}/"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, HOST_CHECK_ENV: "1"},
        )
    except OSError as exc:
        return Finding("fail", what, say("doctor.ping.cannot_start", language, error=exc, chromium=EXITED), run_again)
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
            detail = say("doctor.ping.no_reply", language, chromium=EXITED)
            if stderr:
                detail += say("doctor.ping.stderr", language, stderr=stderr[-600:])
            return Finding("fail", what, detail, say("doctor.ping.by_hand", language, command=install_command))
        version = reply.get("data", {}).get("hostVersion")
        detail = say("doctor.ping.ok", language, ms=f"{elapsed * 1000:.0f}", version=version)
        if version != __version__:
            return Finding("warn", what, detail + say("doctor.ping.other_version", language, version=__version__),
                           run_again)
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


def check_llm(language: Language = DEFAULT_LANGUAGE) -> list[Finding]:
    from ..llm.config import LLMConfig
    from ..llm.errors import LLMNotConfigured
    from ..store.settings import SettingsError, load_settings

    try:
        settings = load_settings()
    except SettingsError as exc:
        fix = say("doctor.settings_fix", language)
        return [Finding("fail", say("doctor.settings", language), exc.text(language), fix)]
    try:
        endpoint = LLMConfig(base_url=settings.base_url, model=settings.model, api_key=settings.api_key).resolve()
    except LLMNotConfigured as exc:
        missing = say("error.no_api_key" if exc.missing == "api_key" else "error.no_model", language,
                      base_url=exc.base_url)
        fix = "doctor.llm.key_fix" if exc.missing == "api_key" else "doctor.llm.configure"
        return [Finding("fail", say("doctor.llm", language), missing, say(fix, language))]
    return _check_endpoint(endpoint, language) + _environment_only(settings.api_key, settings.base_url, language)


def _environment_only(saved_key: str | None, saved_base_url: str | None, language: Language) -> list[Finding]:
    """OPENAI_API_KEY / OPENAI_BASE_URL that only this terminal has: the helper a browser starts from the desktop
    (every task from the extension) does not see them, so the doctor's own check would pass while the popup's
    tasks fail for want of a key."""
    names = [name for name, saved in (("OPENAI_API_KEY", saved_key), ("OPENAI_BASE_URL", saved_base_url))
             if not saved and os.environ.get(name)]
    if not names:
        return []
    fixes = {"OPENAI_API_KEY": "tabpilot config set api-key", "OPENAI_BASE_URL": "tabpilot config set base-url <url>"}
    return [Finding("warn", say("doctor.llm.env_only", language, names=" / ".join(names)),
                    say("doctor.llm.env_only_detail", language),
                    say("doctor.llm.env_only_fix", language, commands=" ; ".join(fixes[name] for name in names)))]


def _check_endpoint(endpoint: ResolvedEndpoint, language: Language) -> list[Finding]:
    import urllib.error
    import urllib.request

    from ..llm.config import is_loopback_url

    what = say("doctor.llm.endpoint", language, base_url=endpoint.base_url, model=endpoint.model)
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
            return [Finding("fail", what, say("doctor.llm.key_refused", language, status=exc.code),
                            say("doctor.llm.key_fix", language))]
        if exc.code == 404 and "html" in str(exc.headers.get("content-type", "")).lower():  # a web server's page
            return [Finding("fail", what, say("doctor.llm.not_openai", language, status=exc.code),
                            say("doctor.llm.check_url", language))]
        if exc.code == 404:
            return [Finding("warn", what, say("doctor.llm.no_models", language))]
        return [Finding("fail", what, say("doctor.llm.http", language, status=exc.code),
                        say("doctor.llm.check_url", language))]
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        return [Finding("fail", what, say("doctor.llm.unreachable", language, reason=reason),
                        say("doctor.llm.unreachable_fix", language))]
    except ValueError:
        return [Finding("warn", what, say("doctor.llm.not_json", language))]
    models = [m.get("id") for m in body.get("data", []) if isinstance(m, dict)] if isinstance(body, dict) else []
    if models and endpoint.model not in models:  # a task would fail with "not found"
        shown = ", ".join(str(m) for m in models[:8])
        return [Finding("fail", what, say("doctor.llm.not_listed", language, model=repr(endpoint.model),
                                          models=shown), say("doctor.llm.pick_model", language))]
    return [Finding("ok", what, say("doctor.llm.ok", language))]
