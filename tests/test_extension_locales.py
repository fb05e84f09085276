"""The extension's words: both languages have the same keys, and every key the popup's, the overlay's and the
worker's HTML and JS use (literal or built from a list the code keeps) exists. Browser-free: it reads the
files."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import get_args

from tabpilot.llm.probe import Problem

EXTENSION = Path(__file__).resolve().parents[1] / "extension"
LOCALES = EXTENSION / "_locales"
LANGUAGES = ("en", "zh_CN")


def messages(language: str) -> dict[str, dict[str, str]]:
    return json.loads((LOCALES / language / "messages.json").read_text(encoding="utf-8"))


def source(*names: str) -> str:
    return "\n".join((EXTENSION / name).read_text(encoding="utf-8") for name in names)


def used_keys() -> set[str]:
    html = source("popup.html")
    scripts = source("popup.js", "popup_sites.js", "popup_privacy.js", "bridge/relay.js", "lib/timeline.js",
                     "lib/i18n.js", "lib/asking.js", "overlay/panel.js", "worker/takeover.js", "worker/approvals.js")
    js = re.sub(r"^\s*//.*$", "", scripts, flags=re.M)
    manifest = source("manifest.json")
    keys = set(re.findall(r'data-i18n(?:-placeholder|-title)?="(\w+)"', html))
    keys |= set(re.findall(r'\bt\(\s*"(\w+)"', js))  # t("key", …)
    keys |= set(re.findall(r'getMessage\(\s*"(\w+)"', js))
    keys |= set(re.findall(r"__MSG_(\w+)__", manifest))
    keys |= set(re.findall(r'\b(?:one|many)?\s*"(\w+(?:One|Many))"', js))  # count(n, "stepsOne", "stepsMany")
    error_codes = re.search(r"const ERROR_CODES = \{(.*?)\};", js, re.S)
    assert error_codes, "popup.js has no ERROR_CODES"
    keys |= set(re.findall(r'\w+: "(err\w+)"', error_codes.group(1)))
    keys |= set(re.findall(r'\w+: "(overlay_\w+)"', js))  # the overlay's PILL words
    keys |= action_word_keys()  # timeline.js actionWords: <tense>_<tool>, <tense>On_<tool>, <tense>Other
    # keys built from a kind: t(`fail_${kind}`), t(`status_${status}`), t(`test_${problem}`)
    kinds = set(popup_failure_kinds().values())
    markers = re.search(r"const FAILURE_MARKERS = \[(.*?)\];", js, re.S)
    assert markers, "timeline.js has no FAILURE_MARKERS list"
    kinds |= set(re.findall(r'\{ kind: "(\w+)"', markers.group(1)))
    keys |= {f"{prefix}_{kind}" for kind in kinds for prefix in ("fail", "fix")}
    statuses = re.search(r"const STATUSES = new Set\(\[([^\]]*)\]\)", js)
    assert statuses
    keys |= {f"status_{s}" for s in re.findall(r'"(\w+)"', statuses.group(1))}
    # every problem the host's Test connection can name has its words (host and popup stay in step)
    keys |= {f"{prefix}_{problem}" for problem in get_args(Problem) for prefix in ("test", "testFix")}
    return keys


def popup_failure_kinds() -> dict[str, str]:
    """timeline.js CODE_KINDS: the host's failure code → the popup's failure kind."""
    found = re.search(r"const CODE_KINDS = \{(.*?)\};", source("lib/timeline.js"), re.S)
    assert found, "timeline.js has no CODE_KINDS"
    kinds = dict(re.findall(r"(\w+): \"(\w+)\"", found.group(1)))
    assert kinds, "timeline.js maps no failure codes"
    return kinds


def test_the_popup_knows_failures_only_by_codes_the_host_sends() -> None:
    from tabpilot.i18n import FAILURE_CODES

    unknown = sorted(set(popup_failure_kinds()) - set(FAILURE_CODES))
    assert not unknown, f"timeline.js maps codes the host never sends: {unknown}"


TENSES = ("acting", "did")  # timeline.js actionWords: what an action does while it runs, what its step did


def action_word_keys() -> set[str]:
    """Every built-in tool's words in each tense, on what it is on where it can be on something: an element (an
    `index` input) or the address go_to_url opens (agent/loop.py _target); a custom tool's neutral line."""
    from tabpilot.agent.tools import BUILTIN_TOOLS

    keys = {f"{tense}Other" for tense in TENSES}
    for name, tool in BUILTIN_TOOLS.items():
        keys |= {f"{tense}_{name}" for tense in TENSES}
        if "index" in tool.input_model.model_fields or name == "go_to_url":
            keys |= {f"{tense}On_{name}" for tense in TENSES}
    return keys


def test_every_action_says_what_the_agent_does_and_did_in_words() -> None:
    # the overlay's 'Step 3 · clicking "Sign in"…', a step card's and `tabpilot run`'s 'clicked "Sign in"'
    # (timeline.js actionWords, host/tabpilot/actionwords.py): an action missing there was named by its tool
    from tabpilot.agent.tools import BUILTIN_TOOLS

    wanted = action_word_keys()
    for language in LANGUAGES:
        words = messages(language)
        missing = sorted(wanted - set(words))
        assert not missing, f"{language} lacks {missing}"
        per_tool = {key for key in words if re.fullmatch(rf"(?:{'|'.join(TENSES)})(?:On)?_\w+", key)}
        stale = sorted(key for key in per_tool if key.split("_", 1)[1] not in BUILTIN_TOOLS)
        assert not stale, f"{language} words tools there are none of: {stale}"
        for key in wanted:
            on = re.match(r"\w+On_", key) is not None
            assert ("$1" in words[key]["message"]) == (on or key.endswith(("Other", "_wait"))), (language, key)


def test_both_languages_have_the_same_keys() -> None:
    english, chinese = messages("en"), messages("zh_CN")
    assert set(english) == set(chinese), {
        "only in en": sorted(set(english) - set(chinese)), "only in zh_CN": sorted(set(chinese) - set(english)),
    }


def test_every_key_used_exists_in_every_language() -> None:
    used = used_keys()
    assert len(used) > 60
    for language in LANGUAGES:
        missing = sorted(used - set(messages(language)))
        assert not missing, f"{language} lacks {missing}"


def test_the_chinese_messages_are_chinese_and_keep_their_substitutions() -> None:
    english, chinese = messages("en"), messages("zh_CN")
    han = re.compile(r"[\u4e00-\u9fff]")
    untranslated = [
        key for key, value in chinese.items()
        if not han.search(value["message"]) and value["message"] == english[key]["message"]
        and re.search(r"[A-Za-z]{4,}", value["message"]) and key not in ("extName", "locale")
    ]
    assert not untranslated, untranslated
    for key, value in english.items():
        places = sorted(re.findall(r"\$\d", value["message"]))
        assert places == sorted(re.findall(r"\$\d", chinese[key]["message"])), key


def test_the_manifest_names_the_default_locale_and_every_icon_exists() -> None:
    manifest = json.loads(source("manifest.json"))
    assert manifest["default_locale"] == "en"
    for size in ("16", "32", "48", "128"):
        icon = EXTENSION / manifest["icons"][size]
        data = icon.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
        assert (width, height) == (int(size), int(size)), icon
        assert manifest["action"]["default_icon"][size] == manifest["icons"][size]
