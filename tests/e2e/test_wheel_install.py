"""A user who runs `pip install tabpilot` / `pipx install tabpilot` gets a wheel, not this checkout. Built
here from the working tree with `python -m build` (an sdist, then the wheel from that sdist, each in an
isolated build environment, as for a release), the wheel is installed (not editable) into a fresh
virtualenv, and everything a user does next is run from that virtualenv: `extension-path`,
`install --user-data-dir`, `doctor`, and a real Chromium loading the installed extension and spawning
the installed host.

The fresh virtualenv reuses this test run's installed dependencies through a .pth line (a path added
that way is searched after the virtualenv's own site-packages, and its .pth files, such as this
checkout's editable install, are not processed), so `tabpilot` itself can only come from the wheel.
"""

from __future__ import annotations

import asyncio
import filecmp
import json
import os
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

import pytest
from e2e_support import EXTENSION_ID, Harness

from tabpilot.browser.browser import Browser

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]  # the first test also builds and installs

ROOT = Path(__file__).resolve().parents[2]
SOURCE_EXTENSION = ROOT / "extension"
# Not part of what pip builds from; leaving them out keeps the copy small and earlier builds' leftovers out.
NOT_BUILT_FROM = (".git", ".venv", "build", "dist", "tests", "bench", "*.egg-info", "__pycache__", ".*_cache")


@dataclass
class Installed:
    venv: Path
    python: Path
    site_packages: Path
    tabpilot: Path  # the console script pip wrote

    def run(self, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(self.tabpilot), *args], capture_output=True, text=True, env=env, timeout=120)


def _pip(*args: str, cwd: Path | None = None) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pip", "--disable-pip-version-check", *args],
        capture_output=True, text=True, cwd=cwd, timeout=300,
    )
    assert result.returncode == 0, f"pip {' '.join(args)} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    base = tmp_path_factory.mktemp("wheel")
    source = base / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(*NOT_BUILT_FROM))
    dist = base / "dist"
    # the source distribution first, then the wheel from it: what PyPI gets, and what pip builds from it
    built = subprocess.run([sys.executable, "-m", "build", "--outdir", str(dist), str(source)],
                           capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, f"python -m build failed:\n{built.stdout[-3000:]}\n{built.stderr[-3000:]}"
    (wheel,) = dist.glob("tabpilot-*.whl")

    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    paths = json.loads(subprocess.check_output(
        [str(python), "-c", "import json, sysconfig; print(json.dumps(sysconfig.get_paths()))"], text=True
    ))
    site_packages = Path(paths["purelib"])
    (site_packages / "test-run-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    _pip("--python", str(python), "install", "--no-deps", "--no-index", str(wheel))
    script = Path(paths["scripts"]) / ("tabpilot.exe" if os.name == "nt" else "tabpilot")
    return Installed(venv, python, site_packages, script)


@pytest.fixture
def user(tmp_path: Path) -> dict[str, str]:
    env = {**os.environ, "HOME": str(tmp_path / "home"), "TABPILOT_HOME": str(tmp_path / "tabpilot")}
    for name in ("XDG_CONFIG_HOME", "OPENAI_API_KEY", "OPENAI_BASE_URL", "PYTHONPATH"):
        env.pop(name, None)
    return env


def test_the_wheel_carries_the_extension_and_extension_path_finds_it(installed: Installed, user: dict[str, str]):
    result = installed.run("extension-path", env=user)
    assert result.returncode == 0, result.stderr
    folder = Path(result.stdout.strip())
    assert folder == installed.site_packages / "tabpilot" / "extension"
    # the same files as the checkout's extension/, byte for byte
    expected = sorted(p.relative_to(SOURCE_EXTENSION) for p in SOURCE_EXTENSION.rglob("*") if p.is_file())
    shipped = sorted(p.relative_to(folder) for p in folder.rglob("*") if p.is_file())
    assert shipped == expected
    _match, mismatch, errors = filecmp.cmpfiles(SOURCE_EXTENSION, folder, [str(p) for p in expected], shallow=False)
    assert mismatch == [] and errors == []
    # and the tabpilot that ran is the installed one, not this checkout
    where = subprocess.run([str(installed.python), "-c", "import tabpilot; print(tabpilot.__file__)"],
                           capture_output=True, text=True, env=user, check=True).stdout.strip()
    assert Path(where).is_relative_to(installed.site_packages)
    # the terminal words a step from the wheel's copy of the extension's messages (tabpilot/actionwords.py)
    code = ("from tabpilot.actionwords import step_words;"
            " print(step_words({'name': 'click_element_by_index', 'target': 'Sign in'}, 'zh-CN'))")
    worded = subprocess.run([str(installed.python), "-c", code], capture_output=True, text=True, env=user,
                            check=True).stdout.strip()
    assert worded == "点击了“Sign in”"


@pytest.fixture
def profile(installed: Installed, user: dict[str, str], tmp_path: Path) -> Path:
    """`tabpilot install --user-data-dir` run from the virtualenv, into a fresh profile."""
    profile = tmp_path / "profile"
    result = installed.run("install", "--user-data-dir", str(profile), env=user)
    assert result.returncode == 0, result.stderr
    extension = installed.site_packages / "tabpilot" / "extension"
    assert str(extension) in result.stdout  # "Load unpacked … choose <this folder>"
    Path(user["HOME"]).mkdir(parents=True, exist_ok=True)
    return profile


def test_install_and_doctor_from_the_installed_wheel(installed: Installed, user: dict[str, str], profile: Path):
    manifest = json.loads((profile / "NativeMessagingHosts" / "com.tabpilot.host.json").read_text())
    assert manifest["allowed_origins"] == [f"chrome-extension://{EXTENSION_ID}/"]
    assert str(installed.python) in Path(manifest["path"]).read_text()  # the host runs the virtualenv's Python

    doctor = installed.run("doctor", "--user-data-dir", str(profile), "--skip-llm", env=user)
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert f"extension folder {installed.site_packages / 'tabpilot' / 'extension'}" in doctor.stdout
    assert "answered a framed hello" in doctor.stdout and "all good" in doctor.stdout


def spawned_by(pid: int) -> str:
    return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode()


@pytest.mark.asyncio(loop_scope="module")
async def test_a_real_chromium_loads_the_installed_extension_and_spawns_the_installed_host(
    installed: Installed, user: dict[str, str], profile: Path, tmp_path: Path, browser_binary: str
):
    browser = await Browser.launch(
        executable=browser_binary,
        headless=True,
        user_data_dir=profile,
        extension_dir=installed.site_packages / "tabpilot" / "extension",
        extra_args=["--silent-debugger-extension-api"],
        env={"HOME": user["HOME"], "TABPILOT_HOME": user["TABPILOT_HOME"]},
        log_path=str(tmp_path / "chromium.log"),
    )
    harness = Harness(browser, Path(user["HOME"]), Path(user["TABPILOT_HOME"]), profile, tmp_path / "chromium.log")
    try:
        await harness.attach_worker()
        await harness.wait_host_connected()
        state = await harness.host_state()
        assert state["connected"] is True and state["error"] is None
        (host,) = harness.host_pids()
        assert await asyncio.to_thread(spawned_by, host) == str(installed.python)  # the installed host
    except BaseException as exc:
        raise AssertionError(f"{exc}\n{harness.logs()}") from exc
    finally:
        await browser.close()


def test_an_installed_tabpilot_missing_its_extension_says_how_to_reinstall(installed: Installed, user: dict[str, str]):
    folder = installed.site_packages / "tabpilot" / "extension"
    moved = folder.with_name("extension-moved-away")
    folder.rename(moved)
    try:
        result = installed.run("extension-path", env=user)
        assert result.returncode == 1 and f"the extension folder is missing ({folder})" in result.stderr
        assert "pip install --force-reinstall tabpilot" in result.stderr and "from source" not in result.stderr
        doctor = installed.run("doctor", "--skip-llm", env=user)
        assert "FAIL  bundled extension" in doctor.stdout and "fix: reinstall tabpilot" in doctor.stdout
    finally:
        moved.rename(folder)
