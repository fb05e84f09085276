"""The allowed-sites file (`store/sites.py`) and `tabpilot sites`: exact origins, grants, the token.
Browser-free; a temporary TABPILOT_HOME."""

from __future__ import annotations

import json
import multiprocessing
import os
import stat
import subprocess
from pathlib import Path

import pytest
from cli_support import tabpilot_here

from tabpilot.store import sites
from tabpilot.store.settings import load_settings, update_settings


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TABPILOT_HOME", str(tmp_path))
    return tmp_path


@pytest.mark.parametrize(("given", "origin"), [
    ("https://App.Example.com", "https://app.example.com"),
    ("https://app.example.com:443/some/page?q=1", "https://app.example.com"),
    ("http://127.0.0.1:8000/", "http://127.0.0.1:8000"),
    ("http://localhost:80", "http://localhost"),
    ("https://app.example.com:8443", "https://app.example.com:8443"),
    ("http://[::1]:9000/x", "http://[::1]:9000"),
    ("https://Bücher.example", "https://xn--bcher-kva.example"),  # Chromium reports the punycode
    # as Chromium spells them (UTS 46): IDNA 2003 allowed https://strasse.de, another site, for straße.de; a Cyrillic а
    ("https://straße.de", "https://xn--strae-oqa.de"),
    ("https://аpple.com", "https://xn--pple-43d.com"),
    ("http://intranet:8080", "http://intranet:8080"),
])
def test_an_origin_is_written_as_the_browser_reports_it(given: str, origin: str) -> None:
    assert sites.normalize_origin(given) == origin


@pytest.mark.parametrize(("given", "says"), [
    ("app.example.com", "scheme://host"),
    ("file:///etc/passwd", "scheme://host"),
    ("chrome-extension://abc/", "scheme://host"),
    ("https://*.example.com", "wildcards"),
    ("https://user:pw@example.com", "user name"),
    ("http://example.com:99999", "Port"),
    ("https://a\x00b.example", "not a web origin"),  # no origin a browser reports holds these
    ("https://app.exa mple.com", "not a web origin"),
    ("https://ex\u202eelpmaxe.com", "not a web origin"),
    ("https://a..example", "not a web origin"),
])
def test_what_is_not_an_exact_web_origin_is_refused_saying_why(given: str, says: str) -> None:
    with pytest.raises(sites.SiteError) as info:
        sites.normalize_origin(given)
    assert says.lower() in str(info.value).lower()


def test_allow_revoke_and_the_token_persist_in_an_owner_only_file(home: Path) -> None:
    first = sites.load_sites()
    assert len(first.token) >= 24 and first.sites == []
    sites.allow("https://app.example.com/x", ask=True, use_my_model=True)
    sites.allow("http://127.0.0.1:8000")
    sites.allow("https://app.example.com", all_tabs=True)  # again: its grants are replaced, not added
    saved = sites.load_sites()
    assert saved.token == first.token  # made once
    assert [(s.origin, s.ask, s.use_my_model, s.all_tabs) for s in saved.sites] == [
        ("http://127.0.0.1:8000", False, False, False), ("https://app.example.com", False, False, True),
    ]
    path = home / "config" / "sites.json"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert sites.revoke("https://app.example.com") and not sites.revoke("https://app.example.com")
    assert [s.origin for s in sites.load_sites().sites] == ["http://127.0.0.1:8000"]


def test_always_stops_asking_that_site_only(home: Path) -> None:
    sites.allow("https://a.example", ask=True)
    sites.allow("https://b.example", ask=True)
    sites.stop_asking("https://a.example")
    asks = {s.origin: s.ask for s in sites.load_sites().sites}
    assert asks == {"https://a.example": False, "https://b.example": True}


def test_a_damaged_file_says_what_to_do(home: Path) -> None:
    (home / "config").mkdir(parents=True, exist_ok=True)
    (home / "config" / "sites.json").write_text("{oops")
    with pytest.raises(sites.SiteError) as info:
        sites.load_sites()
    assert "sites.json" in str(info.value) and "delete it" in str(info.value)


def cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`tabpilot sites ARGS` in this process (cli_support); test_page_permissions runs it as a process."""
    return tabpilot_here(["sites", *args], {**os.environ, "TABPILOT_HOME": str(home)})


def test_the_sites_command_lists_allows_and_revokes(home: Path) -> None:
    empty = cli(home, "list")
    assert empty.returncode == 0 and "No site may start tasks" in empty.stdout
    assert "PageAgentExtUserAuthToken" in empty.stdout
    allowed = cli(home, "allow", "https://app.example.com/", "--ask", "--use-my-model", "--all-tabs")
    assert allowed.returncode == 0 and "allowed https://app.example.com" in allowed.stdout
    listed = json.loads(cli(home, "list", "--json").stdout)
    assert listed["sites"][0] | {"allowedAt": 0} == {
        "origin": "https://app.example.com", "ask": True, "useMyModel": True, "allTabs": True, "allowedAt": 0,
    }
    assert listed["tokenName"] == "PageAgentExtUserAuthToken" and listed["token"] == sites.load_sites().token
    bad = cli(home, "allow", "*.example.com")
    assert bad.returncode == 1 and "tabpilot sites:" in bad.stderr and "Traceback" not in bad.stderr
    renewed = cli(home, "new-token")
    assert renewed.returncode == 0 and listed["token"] not in renewed.stdout
    assert sites.load_sites().token in renewed.stdout
    assert cli(home, "revoke", "https://app.example.com").returncode == 0
    missing = cli(home, "revoke", "https://app.example.com")
    assert missing.returncode == 1 and "was not allowed" in missing.stderr


def test_allowing_a_site_again_says_which_of_its_grants_go(home: Path) -> None:
    # "Ask me before each task", ticked in the popup, went without a word when the site was allowed again from the
    # terminal with another option (allowing again replaces a site's grants, as its help says).
    assert cli(home, "allow", "https://app.example.com", "--ask", "--all-tabs").returncode == 0
    again = cli(home, "allow", "https://app.example.com", "--use-my-model")
    assert again.returncode == 0, again.stderr
    assert "no longer: ask before each task, all tabs" in again.stdout and "add --ask --all-tabs" in again.stdout
    same = cli(home, "allow", "https://app.example.com", "--use-my-model")
    assert "no longer" not in same.stdout, same.stdout
    assert sites.find(sites.load_sites(), "https://app.example.com").to_wire()["useMyModel"] is True


def test_mcp_clients_always_allowed_are_kept_listed_and_revoked(home: Path) -> None:
    """"Always allow for this client" lives in the same file as the sites: listed and revoked from the CLI."""
    claude = "/opt/Claude/claude"  # the program that started its `tabpilot mcp`
    sites.allow_client("Claude Desktop", claude)
    sites.allow_client("Claude Desktop", claude)  # answered twice: listed once
    assert sites.client_allowed("Claude Desktop", claude) and not sites.client_allowed("Cursor", claude)
    assert not sites.client_allowed("Claude Desktop", "/usr/bin/python3")  # another program taking its name
    assert stat.S_IMODE(os.stat(sites.sites_path()).st_mode) == 0o600
    listed = cli(home, "list")
    assert listed.returncode == 0 and "MCP clients that run tasks without asking" in listed.stdout
    assert "  Claude Desktop  (started by claude: /opt/Claude/claude; since " in listed.stdout
    assert [c["name"] for c in json.loads(cli(home, "list", "--json").stdout)["mcpClients"]] == ["Claude Desktop"]
    revoked = cli(home, "revoke-client", "Claude Desktop")
    assert revoked.returncode == 0 and "asked again" in revoked.stdout
    assert not sites.client_allowed("Claude Desktop", claude)
    missing = cli(home, "revoke-client", "Claude Desktop")
    assert missing.returncode == 1 and "was not always allowed" in missing.stderr


def test_each_always_allowed_client_is_listed_with_the_program_its_grant_is_tied_to(home: Path) -> None:
    # A grant is the client's name and the program that started it, but `sites list` showed the name only: two
    # grants of one name (the real client and another program that took its name) looked the same.
    sites.allow_client("Claude Desktop", "/opt/Claude/claude")
    sites.allow_client("Claude Desktop", "/home/me/.local/bin/lookalike")
    sites.allow_client("Old Agent", None)  # the system did not say which program it was
    listed = cli(home, "list")
    assert listed.returncode == 0, listed.stderr
    lines = [line for line in listed.stdout.splitlines() if line.startswith("  ")]
    assert [line.split("; since ")[0] for line in lines] == [
        "  Claude Desktop  (started by claude: /opt/Claude/claude",
        "  Claude Desktop  (started by lookalike: /home/me/.local/bin/lookalike",
        "  Old Agent  (program unknown: the system did not say which started it",
    ]


def _allow_client_together(start: object, name: str) -> None:
    start.wait()  # type: ignore[attr-defined]
    sites.allow_client(name, None)


def _set_together(start: object, key: str, value: object) -> None:
    start.wait()  # type: ignore[attr-defined]
    update_settings({key: value})


def test_changes_made_at_the_same_moment_by_several_processes_are_all_kept(home: Path) -> None:
    """The host, `tabpilot config` / `tabpilot sites` and every `tabpilot mcp` change the same files: two
    MCP clients allowed at once, or a setting saved in the popup while one is set in a terminal, each kept."""
    context = multiprocessing.get_context("spawn")  # fresh interpreters, as separate commands are
    names = [f"Client {n}" for n in range(6)]
    changes = {"model": "m", "maxSteps": 7, "maskEmails": True, "maskPhones": True, "maskIbans": True,
               "askBefore": "every"}
    start = context.Barrier(len(names) + len(changes))
    workers = [context.Process(target=_allow_client_together, args=(start, name)) for name in names]
    workers += [context.Process(target=_set_together, args=(start, key, value)) for key, value in changes.items()]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0
    assert sorted(client.name for client in sites.load_sites().mcp_clients) == names
    saved = load_settings().model_dump(by_alias=True)
    assert {key: saved[key] for key in changes} == changes
