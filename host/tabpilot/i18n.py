"""The host's words in each language it speaks: one table per language, looked up by key.

Everything a person or the model reads that the host writes itself (the per-step prompt's labels and
notes, `tabpilot run`'s lines, the errors and remedies the popup shows) comes from here, so a language
is added in one place and both tables are checked to hold the same keys and placeholders
(tests/test_i18n.py). Tags, tool and field names, URLs and the user's or the page's own text stay as
they are in every language."""

from __future__ import annotations

import os
import re
import string
import unicodedata
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import ValidationError
    from pydantic_core import ErrorDetails

from .language import DEFAULT_LANGUAGE, Language, language_of  # the tags, also imported from here
from .textsafety import quoted, short_url

EN_US: dict[str, str] = {
    # --- the per-step user message (agent/prompts.py, memory.py, types.py) ---------------------------
    "prompt.step_info": "Step {step} of {max_steps} max possible steps",
    "prompt.now": "Current date and time: {now}",
    "prompt.screenshot": "Screenshot of the viewport, each element's index drawn on it:",
    "history.condensed": "Steps {first}–{last} are condensed. Your memory after step {last}: {memory}",
    "history.no_memory": "(none recorded)",
    "step.evaluation": "Evaluation of Previous Step",
    "step.memory": "Memory",
    "step.next_goal": "Next Goal",
    "step.action": "Action",
    "step.results": "Action Results",
    "takeover.took_over": "The user took over",
    "takeover.for_seconds": " for {seconds} s",
    "takeover.asked": " (you asked them to)",
    "takeover.implicit": " (they used the page while you were working)",
    "takeover.did_nothing": ": they did nothing you can see",
    "takeover.page_now": "; page is now {url}",
    "takeover.note": ". Their note: {note}",
    "takeover.list_start": ": ",
    "takeover.list_separator": "; ",
    # the same account said to the user who took over (`tabpilot run`), where the words differ
    "takeover.user.took_over": "You took the controls",
    "takeover.user.asked": " (the agent asked you to)",
    "takeover.user.implicit": " (you used the page while the agent worked)",
    "takeover.user.did_nothing": ": no action of yours was recorded",
    "takeover.user.note": ". Your note: {note}",
    "did.clicked": "clicked {target}",
    "did.clicked_blank": "clicked an empty area of {target} (no control there)",
    "did.clicked_blank_page": "clicked an empty area of the page (no control there)",
    "did.clicked_blank_holding": "clicked an empty area of the {target} with {holding} (no control there)",
    "did.holding_separator": " and ",
    # a page's part with no name of its own (capture.js: an unnamed landmark), as a person calls it
    "did.clicked_blank_landmark": "clicked an empty area of {where} (no control there)",
    "did.clicked_blank_landmark_holding": "clicked an empty area of {where} with {holding} (no control there)",
    "did.landmark_banner": "the header",
    "did.landmark_contentinfo": "the footer",
    "did.landmark_navigation": "the navigation",
    "did.landmark_complementary": "the sidebar",
    "did.landmark_main": "the main content",
    "did.landmark_search": "the search area",
    "did.links": "links {names}",
    "did.list_separator": ", ",
    "did.typed": "typed in {target} → {value}",
    "did.typed_hidden": "typed in {target} (hidden)",
    "did.chose": "chose {value} in {target}",
    "did.checked": "checked {target}",
    "did.unchecked": "unchecked {target}",
    "did.submitted": "submitted {target}",
    "did.pressed": "pressed {key}",
    "did.pressed_in": "pressed {key} in {target}",
    "did.went_to": "went to {url}",
    "did.reloaded": "reloaded the page {url}",
    "did.page_script_went": "the page's own script changed its address to {url} (not the user)",
    "did.tab_loaded": "the tab loaded {url}",
    "did.scrolled": "scrolled {target} {how}",
    "did.the_page": "the page",
    "did.tab": "{what} {target}",
    "did.switched_to": "switched to",
    "did.tab_opened": "opened",
    "did.tab_closed": "closed",
    # the role a takeover's or an approval's element is named by (capture.js roleOf, guards/irreversible.py named)
    "role.button": "button",
    "role.link": "link",
    "role.checkbox": "checkbox",
    "role.radio": "radio",
    "role.switch": "switch",
    "role.tab": "tab",
    "role.menuitem": "menuitem",
    "role.menuitemcheckbox": "menuitemcheckbox",
    "role.menuitemradio": "menuitemradio",
    "role.option": "option",
    "role.textbox": "textbox",
    "role.searchbox": "searchbox",
    "role.combobox": "combobox",
    "role.listbox": "listbox",
    "role.slider": "slider",
    "role.spinbutton": "spinbutton",
    "role.scrollbar": "scrollbar",
    "role.treeitem": "treeitem",
    "role.gridcell": "gridcell",
    "role.cell": "cell",
    "role.columnheader": "columnheader",
    "role.rowheader": "rowheader",
    "role.heading": "heading",
    "role.img": "img",
    "role.form": "form",
    "role.label": "label",
    "role.text": "text",
    "role.page": "page",
    "role.dialog": "dialog",
    "role.alertdialog": "alertdialog",
    "role.region": "region",
    "role.article": "article",
    "role.group": "group",
    "role.table": "table",
    "role.navigation": "navigation",
    "role.main": "main",
    "role.banner": "banner",
    "role.contentinfo": "contentinfo",
    "role.complementary": "complementary",
    "role.search": "search",
    "role.menu": "menu",
    "role.menubar": "menubar",
    "role.list": "list",
    "role.listitem": "listitem",
    "role.row": "row",
    "role.tablist": "tablist",
    "role.toolbar": "toolbar",
    "role.a": "a",
    "role.input": "input",
    "role.select": "select",
    "role.textarea": "textarea",
    "role.summary": "summary",
    "did.scroll_down": "down {px}px",
    "did.scroll_up": "up {px}px",
    "did.scroll_left": "left {px}px",
    "did.scroll_right": "right {px}px",
    # what an action waiting for the person's yes does (guards/irreversible.py ACTION_WORDS)
    "approval.action.click": "click {target}",
    "approval.action.type_into": "type into {target}",
    "approval.action.choose": 'choose "{option}" in {target}',
    "approval.action.press": "press {keys}",
    "approval.action.open": "open {url}",
    "approval.action.go_back": "go back",
    "approval.action.run_script": "run a script on the page",
    "approval.action.upload_file": "upload a file to {target}",
    "approval.action.close_tab": "close the tab",
    "approval.this_page": "this page",  # where an action waits for a yes on a page with no site (a file)
    # a note the model was given, as the person's card says it (agent/types.py ObservationEvent.note)
    "card.note.navigated": "The page went to {url}",
    "card.note.navigated_meanwhile": "The page went to {url}, not by the agent's action",
    "card.note.reloaded": "The page was reloaded, not by the agent's action",
    "card.note.tab_closed": "The tab the agent worked in was closed; it is back in {url}",
    "card.note.vision_off": "The model does not take images: no more screenshots in this task",
    "card.note.action_cut_short": (
        "tabpilot's extension restarted during the action {action}: it may or may not have happened"
    ),
    # --- the agent's own notes to the model (agent/loop.py, tools.py) --------------------------------
    "privacy.secrets_here": (
        "Secrets of the user you may type on this page without knowing them: {secrets}. To type one, write "
        "it exactly so as the text of input_text; the real value is put in for you and never shown. Each goes only "
        "into a login field (a password, user name or e-mail, or one-time-code field), unless marked (any field)."
    ),
    "privacy.any_field": "(any field)",
    "privacy.masked": (
        "Personal data on the page is masked as placeholders such as [email 1] or [card 1] (the same value keeps "
        "its placeholder). Type a placeholder to enter the real value, on the site where it was seen."
    ),
    "note.navigated": "Page navigated to → {url}",
    "note.navigated_meanwhile": (
        "Page navigated to → {url} since you last read it, and not by an action of yours: this is a new page, "
        "anything typed into the last one is gone."
    ),
    "note.reloaded": (
        "The page was reloaded since you last read it, and not by an action of yours (same URL, a new document): "
        "anything typed into it before is gone and its elements have new indices. Read the page again before acting."
    ),
    "note.tab_closed": (
        "The tab you were working in was closed, not by an action of yours: you are back in the tab you worked in "
        "before it → {url}."
    ),
    "note.vision_off": "The model does not take images: no more screenshots in this task; the page text is all.",
    "note.waited": "You have waited {seconds} seconds in a row. Do not wait any longer unless you have a good reason.",
    "note.action_cut_short": (
        "tabpilot's extension restarted while your action {action} was under way: it may or may not have"
        " happened. Check the page before doing it again."
    ),
    "note.steps_left": "⚠️ Only {remaining} steps remaining. Wrap up, or call done with partial results.",
    "note.steps_critical": "⚠️ Critical: only {remaining} steps left! Finish the task or call done now.",
    "note.loop": (
        "LOOP DETECTED: you have done `{action}` {repeats} times in a row and the page has not changed. "
        "It is not working. Do something different: another element, scroll, go back, wait, "
        "or call done with what you have."
    ),
    "result.took_over": (
        "⏸ The user took the controls before this action finished, so it was abandoned (not an error). "
        "What they did is in their takeover note; read the page as it is now before going on."
    ),
    "result.allowed": "The user allowed this action: {action} on {site}.",
    "result.tab_closed_asking": "The tab was closed while the user was asked about {action} on {site}: not done.",
    "result.denied": (
        "The user denied this action: {action} on {site}. It was not done; do not try to do it another way. "
        "Ask the user what to do instead, or finish the task."
    ),
    "result.approval_expired": (
        "Nobody answered within {wait} whether to allow {action} on {site}, so it was not done. Do not try it "
        "another way: do what you can without it, ask the user with ask_user, or finish the task."
    ),
    "result.nobody_to_approve": (
        "{action} on {site} needs the user's approval (ask-before: {ask_before}), and nobody can answer here, so it "
        "was not done. {remedy}"
    ),
    # the question before an action (guards/irreversible.py): the action itself is named as the model named it
    "approval.wants": "The agent wants to {action} on {site}",
    "approval.wants_here": "The agent wants to {action}",
    "approval.why.name_says": 'its name says "{word}"',
    "approval.why.form_fields": "it submits a form with {fields} fields",
    "approval.why.every_action": "you asked to approve every action",
    "approval.field.payment": "payment",
    "approval.field.password": "password",
    "approval.field.personal": "personal",
    "approval.fields_and": " and ",
    "approval.remedy.settings": "Set ask-before to never in Settings to let the agent act without asking.",
    "approval.remedy.no_terminal": (
        "Standard input is not a terminal, so tabpilot run cannot ask you: run it again with --yes to let the agent "
        "do such actions without asking (or `tabpilot config set ask-before never`)."
    ),
    "approval.remedy.mcp": (
        "A tabpilot mcp server with --launch or --cdp-url has nobody to ask: to let it act without asking, "
        "`tabpilot config set ask-before never`."
    ),
    "result.done": "Task completed",
    "result.done_unfinished": "Task ended, not completed",
    "result.waited": "✅ Waited for {seconds} seconds.",
    "result.user_answered": "User answered: {answer}",
    "result.handed_back": (
        "✅ The user handed the controls back: what they did is in the user_takeover note before this step. Read the "
        "page again: it may have changed."
    ),
    "result.tool_failed": "❌ {tool} failed: {error}",
    # --- `tabpilot run`'s printed lines (commands/run.py) ---------------------------------------------
    "run.step": "step {step} · {goal}",
    "run.no_goal": "(no goal given)",
    "run.action": "    action: {action}",
    "run.result": "    result: {result}",
    "run.retry": "  ↻ retry {attempt}/{max_attempts}: {message}",
    "run.waiting": "  … the model has not answered for {seconds} s",
    "run.not_saved": "    (this could not be saved to the task history)",
    "run.outcome": "{mark} {status}: {data}",
    "run.status.completed": "completed",
    "run.status.error": "error",
    "run.status.stopped": "stopped",
    "run.status.not_done": "not done",
    "controls.help": (
        "⌨  Press Enter here to take the controls of the browser; press it again when you are done to hand them back."
    ),
    "controls.ask_note": "Note for the agent: what you did, or what it should do next (Enter for none):",
    "controls.question": "❓ The agent asks: {question}\n   Type your answer and press Enter:",
    "controls.no_reason": "(no reason given)",
    "controls.agent_asks_takeover": (
        "🙋 The agent asks you to take the controls: {reason}\n"
        "   Do it in the browser, then press Enter here to hand back."
    ),
    "controls.touched": "✋ You touched the page: the agent paused. Press Enter here when you are done to hand back.",
    "controls.approve": (
        "⚠  {sentence} ({why}).\n   Allow it? Type y and Enter to allow, n to deny{takeover}:"
    ),
    "controls.approve_takeover": ", t to take the controls",
    "controls.approved": "   ✔ allowed",
    "controls.denied": "   ✖ denied: the agent is told and the action is not done",
    "controls.late_answer": (
        "   ⌛ Too late: the question whether to allow {action} on {site} had expired, so it was not done; your "
        "answer changed nothing and the agent goes on without it."
    ),
    "controls.you_have_them": (
        "✋ You have the controls: the agent is paused. Press Enter here when you are done to hand back."
    ),
    "controls.note_hint": "   To leave the agent a note, type it before that Enter.",
    # --- errors and remedies ----------------------------------------------------------------------------
    "error.popup_not_configured": "No model set: open Settings and enter the base URL, model and API key.",
    "error.page_not_configured": "{message} In the popup: open Settings.",
    "error.page_no_model": (
        "PAGE_AGENT_EXT.execute(task, config): no model to run this task. Give baseURL and model in config (as "
        "page-agent requires), or ask the user to choose a model in tabpilot's Settings (this site may use theirs)."
    ),
    "error.page_no_key": (
        "PAGE_AGENT_EXT.execute(task, config): no API key for {base_url}. Give apiKey in config (tabpilot sends the "
        "user's key only to the address it was saved for)."
    ),
    "error.page_no_key_of_theirs": (
        "PAGE_AGENT_EXT.execute(task, config): the user's model at {base_url} has no API key. Give baseURL, model "
        "and apiKey in config, or ask the user to save the key in tabpilot's Settings."
    ),
    "error.cannot_work_in_tab": (
        "tabpilot cannot work in this tab (tab {tab}: {error}). Open a web page (http or https) in it, or use "
        "another tab, and start the task again."
    ),
    # a tab the extension's rule keeps tabpilot out of (extension/lib/tabs.js Tabs.unworkable), by its kind
    "error.tab_unworkable": "tabpilot cannot work in this tab: {why}. {fix}",
    "unworkable.browser": "it shows one of the browser's own pages",
    "unworkable.extension": "it shows an extension's page",
    "unworkable.store": "the browser keeps extensions out of its extension store",
    "unworkable.source": "it shows a page's source",
    "unworkable.file": "it shows a file on this computer, and tabpilot may not read files",
    "unworkable.other": "the browser keeps extensions out of it",
    "unworkable.fix": "Open a web page (http or https) in it, or use another tab, and start the task again.",
    "unworkable.fix_file": (
        "Open a web page in it instead, or let tabpilot read files (Extensions → tabpilot → Details → Allow access "
        "to file URLs), and start the task again."
    ),
    # the store is an https page itself: "open a web page (http or https)" was no advice there
    "unworkable.fix_store": "Open another site's page in it, or use another tab, and start the task again.",
    "error.no_model": "No model is configured.",
    "plan.allowed_domain": "allowed domain: {problem}",
    "plan.bad_settings": "cannot run with these settings: {problems}",
    "error.no_api_key": "No API key is configured for {base_url}.",
    "error.how_to_configure_terminal": (
        "Name one with `tabpilot config set model <name>` or --model (the OPENAI_API_KEY / OPENAI_BASE_URL "
        "environment variables give the key and the endpoint, never the model); for a provider other than OpenAI "
        "also `tabpilot config set base-url <url>` and `tabpilot config set api-key`."
    ),
    # --- `tabpilot doctor` (commands/doctor.py); Chromium's own messages are quoted as it says them ----
    "doctor.chromium_says": "Chromium says: \"{message}\"",  # quoted as Chromium says it, in English
    "doctor.level.ok": "OK",
    "doctor.level.warn": "WARN",
    "doctor.level.fail": "FAIL",
    "doctor.fix": "fix: {fix}",
    "doctor.all_good": "all good",
    "doctor.problems": "{count} problem(s) found",
    "doctor.extension_ok": "extension folder {folder} (id {extension_id})",
    "doctor.extension": "bundled extension",
    "install.no_browser": (
        "found no Chrome, Chromium, Edge or Brave: neither its program in the usual places nor its settings folder"
    ),
    "install.no_browser_fix": (
        "install one (from the browser's website, or `apt-get install chromium` on Debian) and run `tabpilot install` "
        "again. If yours lives somewhere unusual, name it: `tabpilot install --browser chrome` (or chromium, "
        "edge, brave); for a browser started with --user-data-dir=DIR: `tabpilot install --user-data-dir DIR`"
    ),
    "install.reinstall": (
        "reinstall tabpilot (pip install --force-reinstall tabpilot, or pipx reinstall tabpilot; "
        "in a source checkout, restore its extension/ folder)"
    ),
    "doctor.not_registered": "the native host is not registered",
    "doctor.not_registered_for": "the native host is not registered for {where}",
    "doctor.where_profile": "profile {profile}",
    "doctor.where_any": "any browser",
    "doctor.registers_for": "{command} (it registers for {browsers})",
    "doctor.not_registered_label": "{label}: the native host is not registered for it",
    "doctor.rewrite": "run `{command}` again to rewrite it",
    "doctor.in_use": (
        "a running browser (pid {pid}, {program}) uses its own profile folder {profile}: the native host is not "
        "registered there"
    ),
    "doctor.in_use.detail": (
        "a browser started with --user-data-dir reads the host's registration from that folder only, not from the "
        "usual ones. {chromium}"
    ),
    "doctor.run_again": "run `{command}` again",
    "doctor.manifest.unreadable": "cannot read it as JSON ({error}). {chromium}",
    "doctor.manifest.not_object": "it is not a JSON object. {chromium}",
    "doctor.manifest.field": "\"{field}\" is {value}, not {expected}. {chromium}",
    "doctor.manifest.no_origins": "\"allowed_origins\" is missing or empty. {chromium}",
    "doctor.manifest.no_slash": "allowed origin {origin} lacks the trailing slash. {chromium}",
    "doctor.manifest.bad_origin": "allowed origin {origin} is not chrome-extension://<id>/. {chromium}",
    "doctor.manifest.missing_id": "the bundled extension ({extension_id}) is not in allowed_origins. {chromium}",
    "doctor.manifest.other_copy": "{fix} (add --extension-id ID for another copy)",
    "doctor.manifest.no_path": "\"path\" is missing. {chromium}",
    "doctor.manifest.relative_path": "\"path\" {path} is not absolute. {chromium}",
    "doctor.manifest.no_launcher": "the launcher {path} does not exist. {chromium}",
    "doctor.manifest.not_executable": "the launcher {path} is not executable. {chromium}",
    "doctor.manifest.chmod": "chmod 755 {path}  (or {fix})",
    "doctor.manifest.ok": "launcher {path}",
    "doctor.launcher": "launcher {path}",
    "doctor.launcher.unreadable": "cannot read it: {error}",
    "doctor.launcher.python_gone": "it runs {python}, which no longer exists. {chromium}",
    "doctor.launcher.python_gone_fix": "reinstall tabpilot, then {fix}",
    "doctor.launcher.other_python": "it runs {python}, not this tabpilot's {this}",
    "doctor.ping": "host started through {launcher}",
    "doctor.ping.cannot_start": "cannot start it: {error}. {chromium}",
    "doctor.ping.no_reply": "no framed reply to hello. {chromium}",
    "doctor.ping.stderr": " Its error output: {stderr}",
    "doctor.ping.by_hand": "run the launcher by hand to see why; then `{command}`",
    "doctor.ping.ok": "answered a framed hello in {ms} ms (host {version})",
    "doctor.ping.other_version": "; this tabpilot is {version}",
    "doctor.settings": "settings",
    "doctor.settings_fix": "tabpilot config (or delete the file and set them again)",
    "doctor.llm": "LLM",
    "doctor.llm.configure": "tabpilot config set model <name> (or the popup's Settings)",
    "doctor.llm.endpoint": "LLM endpoint {base_url} (model {model})",
    "doctor.llm.key_refused": "the API key was refused (HTTP {status})",
    "doctor.llm.key_fix": (
        "tabpilot config set api-key (it asks for the key and does not show it; or the popup's Settings)"
    ),
    "doctor.llm.no_models": "it has no /models list, so the model name could not be checked",
    "doctor.llm.env_only": "{names} from this terminal's environment, not saved",
    "doctor.llm.env_only_detail": (
        "tasks from the extension run in a helper your browser starts, which sees this terminal's environment only "
        "if the browser was started from it"),
    "doctor.llm.env_only_fix": "save it for the browser too: {commands}",
    "doctor.llm.not_openai": "it answers with web pages (HTTP {status} for /models), not as an OpenAI-compatible API",
    "doctor.llm.http": "GET /models answered HTTP {status}",
    "doctor.llm.check_url": "check the base URL (`tabpilot config set base-url <url>`, or the popup's Settings)",
    "doctor.llm.unreachable": "cannot reach it: {reason}",
    "doctor.llm.unreachable_fix": "check the base URL and your connection",
    "doctor.llm.not_json": "GET /models did not answer JSON",
    "doctor.llm.not_listed": "reachable, but it does not list {model} (it has: {models})",
    "doctor.llm.pick_model": "tabpilot config set model <one of those>",
    "doctor.llm.ok": "reachable, key accepted",
    # --- a --record / --replay file (llm/replay.py), and a command's error line ---------------------------
    "recording.missing": "{path}: no such recording file",
    "recording.is_folder": "{path} is a folder: --record takes the file to save the recording in",
    "recording.no_folder": "{path}: the folder {folder} does not exist (--record makes no folders)",
    "recording.unreadable": "{path}: cannot read the recording: {reason}",
    "recording.not_json": "{path}: not JSON ({reason})",
    "recording.not_recording": "{path}: not a tabpilot recording (expected \"format\": \"{format}\")",
    "recording.version": (
        "{path}: recording version {version} is not supported (this tabpilot reads version {supported})"
    ),
    "recording.replies": "{path}: \"replies\" must be a list",
    "recording.reply": "{path}: reply {number} needs \"tool\" (a string) and \"arguments\"",
    "recording.script": "{path}: a script is a JSON list of replies (or a tabpilot recording)",
    "recording.arguments": "{path}: reply {number}: \"arguments\" must be an object or a string",
    "cli.error": "tabpilot {command}: {message}",
    "cli.error_bare": "tabpilot: {message}",
    "cli.user_data_dir_with_cdp": (
        "--user-data-dir is for a browser tabpilot launches; with --cdp-url the running browser's own profile is used"
    ),
    "cli.browser_with_cdp": (
        "--browser is the browser tabpilot launches; with --cdp-url it works in the browser already running there: "
        "give one or the other"
    ),
    "cli.tab_busy": (
        "another tabpilot task is working in this tab: wait for it to end, switch to another tab, or give --url to "
        "work in a new tab"
    ),
    "cli.url_script": "{url} is a script, not a page: give the address of a page to open (https://…, localhost:PORT)",
    "cli.url_empty": "give the address of the page to open",
    "cli.task_from_terminal": "Type the task, then press Ctrl-D on a line of its own:",
    "cli.did_you_mean": "did you mean {option}?",
    "cli.see_options": "`{command} --help` lists its options",
    "cli.quote_task": "the task is one argument: put it in quotes, e.g. {command}",
    "start.blocked_domain": (
        "The agent may not work on this page: {host} is on the blocked domains list ({domain}). Start the task on "
        "another page, or take {domain} off the blocked domains."
    ),
    "start.outside_domains": (
        "The agent may not work on this page: {host} is not among this task's allowed domains ({allowed}). Start "
        "the task on a page there, or add {host} to the allowed domains."
    ),
    "cli.url_outside_domains": (
        "--url {url} is outside the domains this task may reach (allowed: {allowed}; blocked: {blocked}): give a "
        "start page it may reach, or add --allow-domain {host}"
    ),
    "cli.url_blocked_domain": (
        "--url {url} is on a blocked domain ({domain}; blocked domains win over allowed ones): give another start "
        "page, or take {domain} off your blocked domains (`tabpilot config set blocked-domains …` without it, or "
        "`tabpilot config unset blocked-domains`)"
    ),
    "mcp.headless_without_launch": (
        "--headless and --browser are for the browser --launch (or --fallback launch) starts"
    ),
    "mcp.fallback_with_own_browser": (
        "--fallback launch is for tasks in your browser; --launch and --cdp-url never use it"
    ),
    "mcp.ask_without_popup": (
        "--approve ask needs the tabpilot popup in your browser; a browser of its own (--launch, --cdp-url) has none. "
        "Leave --approve out (or use --approve always)."
    ),
    "mcp.client_without_config": "--client and --write go with `tabpilot mcp config`",
    "mcp.launch_with_cdp_url": (
        "--launch starts a browser of its own and --cdp-url works in one already running: give one of them"
    ),
    # tabpilot mcp's own advice (its tool errors, its start-up line): the flags of the server's entry in the MCP
    # client's config, never `tabpilot run`'s
    "mcp.no_display": (
        "there is no display to show the browser window on (DISPLAY and WAYLAND_DISPLAY are not set), and "
        "tabpilot mcp {flag} opens one, so every task would fail: add --headless to this server's arguments in your "
        "MCP client's config (`tabpilot mcp config --client … {flag} --headless` prints them), or run it where there "
        "is a display (or under xvfb-run)."
    ),
    "mcp.cdp_unreachable": (
        "could not reach the browser at {address} ({detail}). Start that browser with --remote-debugging-port=9222 "
        "and give its address in this server's arguments in your MCP client's config (--cdp-url "
        "http://127.0.0.1:9222), or put --launch there instead of --cdp-url and tabpilot mcp starts a browser of "
        "its own."
    ),
    "mcp.client_gone": "tabpilot mcp: the MCP client went away (its connection to this server closed); exiting",
    # the result of a task an MCP client or a page ran in the person's browser and stopped, not the person: they see
    # it on the overlay (a bare "Task stopped" left them wondering what they had pressed)
    "mcp.stopped_by_client": (
        "Stopped by the MCP client {requester}: it cancelled its call, asked to stop the task, or closed"
    ),
    "mcp.stopped_client_gone": (
        "Stopped: the MCP client {requester} that asked for this task went away (it closed or lost its connection)"
    ),
    "page.stopped_by_page": (
        "Stopped by the page {requester} that asked for this task (it called PAGE_AGENT_EXT.stop())"
    ),
    # --- `tabpilot demo` and a browser `run` could not find ---------------------------------------------
    "demo.banner": "tabpilot demo — scripted demo model — no AI involved\ntask: {task}\n",
    "browser.not_found": (
        "no Chrome, Chromium, Edge or Brave found; install one (e.g. `apt-get install chromium`) "
        "or point {variable} at its binary"
    ),
    "browser.missing": (
        "the browser {path} does not exist (give the path of a Chrome, Chromium, Edge or Brave executable)"),
    "browser.kind_missing": (
        "no {browser} is installed here (looked in its usual places and on PATH): install it, or give the path of "
        "its program"),
    "browser.missing_env": (
        "{variable} {path} does not exist (give the path of a Chrome, Chromium, Edge or Brave executable)"),
    "browser.cannot_start": "could not start a browser: {error}",
    "browser.no_display": (
        "there is no display to show the browser window on (DISPLAY is not set): leave out --headed, or give "
        "--headless in its place, for a browser without a window; or run where there is one (set DISPLAY, or start "
        "the command under xvfb-run)"
    ),
    "browser.unreachable": (
        "could not reach the browser at {address} ({detail}). Start it with --remote-debugging-port=9222 and give "
        "that address (--cdp-url http://127.0.0.1:9222), or leave out --cdp-url and tabpilot starts a browser of "
        "its own."),
    "browser.not_devtools": (
        "{address} answered, but not as a browser's DevTools endpoint. Give the address the browser printed after "
        "\"DevTools listening on\", or its http://127.0.0.1:PORT."),
    "page.cannot_open": (
        "could not open {url} ({error}): check the address, and that the site can be reached from here."),
    "state.failed": "could not read the page: {error}",
    "state.url_needed": (
        "give the page to read: tabpilot state URL (a browser tabpilot launches has no page of its own; to read the "
        "tab a running browser shows, give its --cdp-url WS)"
    ),
    # --- failures by code (FAILURE_CODES; `run` prints these; the record keeps the English) ----------
    "failure.client_closed": "This model client is closed; make a new LLMClient to call the model again.",
    "failure.key_refused": (
        "The provider refused the API key (HTTP {status} from {base_url}: {detail}). Check the key: in the "
        "extension's Settings, or `tabpilot config set api-key`, the OPENAI_API_KEY environment variable, or --api-key."
    ),
    "failure.key_refused.page": (
        "The provider refused the API key (HTTP {status} from {base_url}: {detail}). The page chose this model: check "
        "the apiKey in its execute() config."
    ),
    "failure.quota": (
        "The provider says the account has no quota left (HTTP {status} from {base_url}: {detail}). Waiting will "
        "not help: check the plan and billing details with the provider, or use another key or model."
    ),
    "failure.context_too_long": (
        "The prompt is too long for the model {model} (HTTP {status} from {base_url}: {detail}). "
        "Use a model with a larger context window, or a task that needs less of the page."
    ),
    "failure.context_too_long.reply": "The prompt is too long for the model {model}: {detail}",
    "failure.context_too_long.cut_off": (
        "The model's reply was cut off (finish_reason=length): the prompt and the reply do not fit "
        "the context window of {model}."
    ),
    "failure.content_filtered": (
        "The provider's content filter blocked the request (HTTP {status} from {base_url}: {detail})."
    ),
    "failure.content_filtered.reply": (
        "The provider's content filter blocked the model's reply (finish_reason=content_filter)."
    ),
    "failure.not_found": (
        "Not found (HTTP {status} from {base_url}: {detail}). Check the base URL ({base_url}) "
        "and the model name ({model})."
    ),
    "failure.not_found.not_model_api": (
        "{base_url} does not take model requests (HTTP {status}: {detail}): it is not an OpenAI-compatible "
        "endpoint. Check the base URL (it usually ends in /v1)."
    ),
    "failure.rejected": "The provider rejected the request (HTTP {status} from {base_url}: {detail}).",
    "failure.rate_limited": "HTTP {status}: {detail}",
    "failure.rate_limited.html": "the endpoint answered {status} {reason} (an HTML error page)",
    "failure.server_error": "HTTP {status}: {detail}",
    "failure.server_error.html": "the endpoint answered {status} {reason} (an HTML error page)",
    "failure.timeout": "no reply within {timeout} s (timeout)",
    "failure.unreachable": "could not reach {base_url}: {detail}",
    "failure.unreachable.refused": "could not reach {base_url}: the connection was refused or failed",
    "failure.connection_cut": "{base_url} closed the connection before its reply was complete ({detail})",
    "failure.connection_cut.reset": "the connection to {base_url} was reset before its reply was complete",
    "failure.reply_too_large": (
        "the reply from {base_url} was larger than {limit} and was not read further "
        "(the max-reply-mb setting; is the base URL an OpenAI-compatible endpoint?)"
    ),
    "failure.bad_reply.unreadable": "could not read the reply from {base_url}: {detail}",
    "failure.bad_reply.too_deep": "the provider's reply is JSON nested too deeply to read",
    "failure.bad_reply.html": (
        "the endpoint answered with an HTML page ({gist}), not a chat completion "
        "(is {base_url} the OpenAI-compatible API's base URL?)"
    ),
    "failure.bad_reply.not_json": "the provider's reply is not JSON: {snippet}",
    "failure.bad_reply.not_object": "the provider's reply is not a JSON object",
    "failure.bad_reply.provider_error": "the provider returned an error: {detail}",
    "failure.bad_reply.no_choices": "the reply has no choices",
    "failure.bad_call": "{detail}",
    "failure.bad_call.arguments": "invalid arguments for {tool}: {detail}",
    "failure.bad_call.no_call": "the reply has no call of the tool {tool} (and no JSON in its text)",
    "failure.retries_exhausted": "The model call still failed after {retries} retries; last cause: {cause}",
    "failure.deadline": (
        "The model did not answer usefully within {elapsed} s ({retries} retries; one model call may take "
        "{deadline} s, the model-deadline setting); last cause: {cause}"
    ),
    "failure.deadline.asked": (
        "The model did not answer usefully within {elapsed} s ({retries} retries; one model call may take "
        "{deadline} s, the model-deadline setting); the provider asked to wait {retry_after} s before trying "
        "again; last cause: {cause}"
    ),
    "failure.browser_failed": "The browser failed: {detail}",
    "failure.page_busy": "The page stopped answering: {detail}",
    "failure.tab_closed": "The tab the task was working in was closed.",
    "failure.mask_too_slow": (
        "The mask pattern {pattern} took more than {seconds} s on the page's text, so nothing of the page went to "
        "the model: write it more simply (one repeat; alternatives that cannot match the same text) or remove it "
        "from the mask-patterns setting."
    ),
    "failure.crashed": "{kind}: {detail}",
    "failure.not_saved": (
        "The task's history could not be saved ({reason}), so the task was stopped: what it did after that point "
        "is not in the record."
    ),
    "failure.not_resumed": "The task could not go on after tabpilot's extension restarted: {reason}",
    "failure.not_resumed.cause": "The task could not go on after tabpilot's extension restarted: {cause}",
    "failure.record_incomplete": "its record is incomplete",
    "failure.tab_gone": "its tab ({tab}) is gone ({detail})",
    "failure.tab_busy": "another task runs in its tab ({tab})",
    "failure.max_steps": "Step count exceeded maximum limit",
    "sites.flag.ask": "ask before each task",
    "sites.flag.use_my_model": "may use your model",
    "sites.flag.all_tabs": "all tabs",
    "sites.flag.none": "runs without asking, brings its own model, its own tab(s) only",
    "sites.allowed": "allowed {origin}: {flags}",
    "sites.dropped": "  no longer: {flags} (allowing again replaces a site's grants; to keep them, add {options})",
    "sites.not_allowed": "tabpilot sites: {origin} was not allowed (see `tabpilot sites list`)",
    "sites.revoked": "revoked {origin}",
    "sites.client_not_allowed": (
        "tabpilot sites: the MCP client {name!r} was not always allowed (see `tabpilot sites list`)"
    ),
    "sites.client_revoked": "{name} will be asked again before its next task",
    "sites.new_token": "new page-agent token ({name}): {token}",
    "sites.site_flags": "({flags})",
    "sites.none": "No site may start tasks. Allow one with `tabpilot sites allow https://app.example.com`.",
    "sites.clients": "MCP clients that run tasks without asking (revoke with `tabpilot sites revoke-client NAME`):",
    "sites.client": "  {name}  (started by {program}: {path}; since {since})",
    "sites.client_program_unknown": (
        "  {name}  (program unknown: the system did not say which started it; since {since})"
    ),
    "sites.token": "page-agent token ({name}): {token}",
    "history.limit": "--limit must be at least 1",
    "history.more": "(the newest {limit}; `tabpilot history --limit N` shows more)",
    "history.no_match": "No recorded task matches.",
    "history.no_task": "no task with id {task_id!r}",
    "history.cannot_write": "cannot write {path}: {reason}",
    "history.exported": "Exported task {task_id} to {path}",
    "history.exported_many": "Exported {count} tasks to {path}",
    "history.export_what": "name the tasks to export (their ids), or --all for every one",
    "sites.not_origin": "{text!r} is not a web origin; give scheme://host[:port], e.g. https://app.example.com",
    "sites.wildcard": "{text!r}: wildcards are not allowed; name each origin exactly",
    "sites.credentials": "{text!r}: an origin has no user name or password",
    "sites.no_host": "{text!r} has no host name",
    "sites.bad_port": "{text!r}: {reason}",
    "sites.cannot_read": "cannot read the allowed-sites file {path}: {reason}",
    "sites.damaged": (
        "the allowed-sites file {path} is damaged ({reason}); fix it or delete it (deleting revokes every site)"
    ),
    "sites.cannot_save": "cannot save the allowed-sites file {path}: {reason}",
    "task.no_text": "a task needs some text saying what to do",
    "task.too_long": (
        "the task is {length} characters long, and a task may have at most {limit}: say what to do in fewer words, "
        "and put long material in a page or file the agent can open (give its address or path in the task)"
    ),
    "history.deleted": "Deleted task {task_id}",
    "history.deleted_many": "Tasks deleted: {count}",
    "history.delete_what": "name the tasks to delete (their ids), or --all for every one",
    "history.nothing_to_delete": "No tasks recorded: nothing to delete.",
    "history.confirm_delete_all": "Delete all {count} recorded tasks and their events? This cannot be undone. [y/N] ",
    "history.yes": "yes",
    "history.delete_all_needs_yes": (
        "--all deletes every recorded task ({count}); with no terminal to ask on, add --yes to say you mean it"
    ),
    "history.delete_cancelled": "cancelled; nothing was deleted",
    "history.kept_running": "Not deleted, still running: {ids} (stop a task before deleting it)",
    "history.no_id": "no task id given",
    "history.ambiguous": "task id {prefix!r} is ambiguous: it could be {ids}",
    "history.still_running": "task {task_id} is still running; stop it before deleting it",
    "history.cannot_open": "cannot open the task database {path}: {reason}",
    "history.busy": (
        "The task history is busy: another program is writing to {path}. Try again in a moment (if it stays busy, "
        "close other tabpilot commands, or whatever else has the file open)."
    ),
    "history.set_aside": "The task database was damaged: it is kept as {path} and a new record begins.",
    "timeline.no_tasks": "No tasks recorded yet. Run one with `tabpilot run TASK` or from the extension's popup.",
    "timeline.column.id": "ID",
    "timeline.column.started": "STARTED",
    "timeline.column.status": "STATUS",
    "timeline.column.steps": "STEPS",
    "timeline.column.tokens": "TOKENS",
    "timeline.column.task": "TASK",
    "timeline.column.by": "FROM",
    "timeline.column.took_over": "TAKEOVER",
    "timeline.took_over_mark": "you",
    "timeline.by.popup": "popup",
    "timeline.by.panel": "side panel",
    "timeline.by.terminal": "terminal",
    "timeline.by.page": "page {requester}",
    "timeline.by.mcp": "MCP {requester}",
    "timeline.status.running": "running",
    "timeline.status.completed": "completed",
    "timeline.status.error": "error",
    "timeline.status.stopped": "stopped",
    "result.stopped": "Task stopped",
    "timeline.status.interrupted": "interrupted",
    "timeline.status.denied": "denied",
    "timeline.status.refused": "refused",
    "timeline.status.withdrawn": "withdrawn",
    "timeline.status.not_done": "not done",
    "timeline.seconds": "{seconds} s",
    "timeline.minutes": "{minutes} min {seconds} s",
    "timeline.hours": "{hours} h {minutes} min",
    "timeline.task": "Task {task_id}: {task}",
    "timeline.summary": "{status} · started {started} · took {duration} · {steps} · {tokens}",
    "timeline.one_step": "{count} step",
    "timeline.steps": "{count} steps",
    "timeline.tokens": "{total} tokens ({prompt} prompt, {completion} completion)",
    "timeline.no_events": "(no events recorded)",
    "timeline.url": "url: {url}",
    "timeline.model": "model: {model}",
    "timeline.asked_by.page": "asked for by the page {requester}",
    "timeline.asked_by.mcp": "asked for by the MCP client {requester}",
    "timeline.step": "step {number}: {goal}",
    "timeline.evaluation": "evaluation: {evaluation}",
    "timeline.action": "action: {action}",
    "timeline.call": "call: {call}",
    "timeline.result": "result: {result}",
    "timeline.abandoned": "not done: you took the controls",
    "timeline.handed_back": "you handed the controls back",
    "timeline.observation": "observation: {content}",
    "timeline.retry": "retry {attempt}: {message}",
    "timeline.error": "error: {message}",
    "timeline.took_over": "you took over{took}",
    "timeline.took_for": " for {duration}",
    "timeline.more_actions": "… and {count} more",
    "timeline.note": "note: {note}",
    "timeline.result_of": "Result ({verdict}): {data}",
    "timeline.verdict.success": "success",
    "timeline.verdict.failed": "failed",
    "timeline.verdict.finished": "finished",
    "timeline.verdict.not_done": "not done",
    "timeline.verdict.stopped": "stopped",
    "timeline.verdict.never_ran": "never ran",
    "timeline.not_run.denied": "{requester} asked to run this task and you said no (or did not answer in time).",
    "timeline.not_run.refused": "{requester} asked to run this task and tabpilot refused it (not allowed, or not asked "
                                "for in the way you allowed).",
    "timeline.not_run.withdrawn": "{requester} asked to run this task, then the question was withdrawn before you "
                                  "answered (the page that asked went away, the program that asked stopped waiting, "
                                  "or tabpilot's helper stopped).",
    "timeline.not_run.why": "why (as recorded): {why}",
    "timeline.no_result.interrupted": "Result: none: the process running this task stopped before it finished.",
    "timeline.no_result.running": "Result: none yet: the task is still running.",
    "timeline.no_result": "Result: none recorded ({status}).",
    "settings.cannot_read": "cannot read the settings file {path}: {reason}",
    "settings.not_json": "the settings file {path} is not valid JSON (line {line}: {reason}); fix it or delete it",
    "settings.not_object": "the settings file {path} must hold a JSON object; fix it or delete it",
    "settings.bad_value": "the settings file {path} has a bad value: {detail}",
    "settings.unknown": "unknown setting {names}; settings are: {known}",
    "settings.invalid": "{detail}",
    "setting.problem": "{name}: {problem}",
    "wire.invalid": "invalid {kind}: {problems}",
    "wire.field_problem": "field '{name}': {problem}",
    "wire.true_false": "must be true or false",
    "wire.id": "must be text of at most {chars} characters or a whole number of at most {number}",
    "setting.problems_separator": "; ",
    "setting.whole_number": "must be a whole number, e.g. 40",
    "setting.number": "must be a number, e.g. 120",
    "setting.on_off": "must be on or off",
    "setting.text": "must be text",
    "setting.list": "must be a list",
    "setting.missing": "is missing",
    "setting.one_of": "must be one of {choices}",
    "setting.at_least": "must be at least {limit}",
    "setting.at_most": "must be at most {limit}",
    "setting.more_than": "must be more than {limit}",
    "setting.url": "must be an http:// or https:// URL, e.g. https://api.openai.com/v1",
    "setting.one_line": "must be one line of visible characters (no control or direction-changing characters)",
    "setting.too_long": "must be at most {limit} characters",
    "setting.too_many": "may hold at most {limit} entries",
    "domains.not_domain": (
        "{text!r} is not a domain: give a host name with a dot (example.com), localhost or an IP address"
    ),
    "domains.not_list": "expected a list of domains, e.g. example.com, shop.example",
    "setting.not_pattern": "{pattern} is not a valid regular expression: {reason}",
    "setting.other": "{message}",
    "regex.at": "{what} at character {character}",
    "regex.other": "{message}",
    "regex.unterminated_set": "a [ is never closed with ]",
    "regex.unclosed_group": "a ( is never closed with )",
    "regex.unbalanced": "a ) has no ( before it",
    "regex.nested_repeat": (
        "a repeat of something that repeats without end, like (a+)+: it can take forever on some pages; write it "
        "with one repeat"
    ),
    "regex.nothing_to_repeat": "a repeat (*, + or ?) with nothing before it",
    "regex.multiple_repeat": "two repeats in a row",
    "regex.trailing_backslash": "a \\ at the very end",
    "regex.bad_escape": "unknown escape {detail}",
    "regex.bad_range": "character range {detail} goes backwards",
    "regex.bad_repeat": "the least count of a repeat is more than the most",
    "regex.unknown_extension": "unknown group kind {detail}",
    "regex.lookbehind": "a look-behind must have a fixed width",
    "regex.unknown_group": "unknown group name {detail}",
    "regex.bad_group_name": "bad character in group name {detail}",
    "mcp_config.which_client": "tabpilot mcp config: say which client: --client {clients}",
    "mcp_config.add_this": "(add this to {path}, or run this again with --write)",
    "mcp_config.added": "Added tabpilot to {client}'s MCP servers in {path}; restart {client} to use it.",
    "mcp_config.already": (
        "tabpilot is already among {client}'s MCP servers in {path}, as it would be written: nothing changed."
    ),
    "install.launcher": "launcher: {path}",
    "install.registry": " (registry HKCU\\{key})",
    "install.registered": "registered for {label}: {path}{where}",
    "install.allowed_ids": "allowed extensions: {ids}",
    "install.in_use": (
        "a running browser (pid {pid}, {program}) uses its own profile folder {profile} and does not read the folders "
        "above; to register it too: {command}"
    ),
    "install.next": (
        "Next: open chrome://extensions, switch on Developer mode, click \"Load unpacked\" and choose\n"
        "  {folder}\n"
        "The extension finds the host by itself within seconds (it keeps retrying); press \"Reconnect now\"\n"
        "in its popup to connect at once. No browser restart is needed. `tabpilot doctor` checks it all."
    ),
    "uninstall.removed": "removed {path}",
    "uninstall.nothing": "nothing to remove: the host was not registered there",
    "extension_path.missing": "tabpilot: the extension folder is missing ({folder}); {fix}",
    "config.ask_key": "API key: ",
    "config.unknown": "unknown setting {key!r}; settings are: {keys}",
    "config.unknown_close": "unknown setting {key!r}; did you mean {close}?",
    "config.not_set": "(not set)",
    "config.none": "(none)",
    "config.key_from_env": "(not set; OPENAI_API_KEY from the environment is used)",
    "config.base_from_env": "(not set; OPENAI_BASE_URL from the environment is used: {url})",
    "config.model_deadline": "{seconds} s (one model call, retries included)",
    "config.max_reply": "{mb} MB (the largest model reply read)",
    "config.any_domain": "(any domain not blocked)",
    "config.ask_before": "{value} (never | irreversible | every: when the agent waits for your yes)",
    "config.use_vision": "{value} (screenshots for the model: auto, on or off)",
    "config.language_from_terminal": "{value} (not set: the terminal's language)",
    "config.file": "settings file: {path}",
    "config.no_key": "no API key given (expected it on stdin)",
    "config.no_key_typed": (
        "no API key typed, so nothing was saved: run it again and paste the key at the prompt (it is not shown "
        "as you type)"
    ),
    "config.cancelled": "cancelled; nothing was saved",
    "config.give_value": "give a value: tabpilot config set {key} VALUE",
    "config.give_choice": "give one of {choices}: tabpilot config set {key} VALUE",
    "config.set": "{key} set to {value}",
    "config.debug_on": "Raw LLM requests and responses, which hold page content, will now be kept in the task history.",
    "config.reset": "{key} reset to {value}",
    "config.cannot_save": "cannot save the settings file {path}: {reason}",
    "popup.no_secret": "there is no secret named {name}",
    "popup.delete_running": "that task is still running; stop it first",
    "popup.question_closed": "that question is no longer open (answered already, or it timed out)",
    "popup.no_question": "task {task_id} has no question waiting for an answer",
    "popup.no_approval": "task {task_id} has no action waiting for your approval",
    "popup.no_host_task": "this host has no task {task_id!r} (it may have ended long ago)",
    "popup.not_running": "task {task_id} is not running",
    "popup.starting": "starting",
    "popup.tab_busy": "a task is already running in this tab ({task_id}); stop it or use another tab",
    "popup.cannot_open": "could not open {url}: {error}",
    "popup.which_to_stop": "{count} tasks are running ({ids}); say which one to stop (taskId)",
    "popup.not_taken_over": "the user does not have the controls of task {task_id}",
    "popup.actions_not_taken_over": (
        "the user does not have the controls of task {task_id} (no task.takeover, or it was handed back): these "
        "actions were not recorded"
    ),
    "popup.no_takeover_ended": (
        "task {task_id} has no takeover that waits for what its page gave late: these actions were not recorded"
    ),
    "secrets.ask_value": "Value of {name} (not shown): ",
    "secrets.no_value": "no value given (type it when asked, or pipe it on stdin)",
    "secrets.saved": "saved {name} for {domain} (and its subdomains) in {backend}",
    "secrets.saved_address": "saved {name} for {domain} (that address only) in {backend}",
    "secrets.login_fields": "login fields only",
    "secrets.any_field": "any field",
    "secrets.unknown": "there is no secret named {name} (see `tabpilot secrets list`)",
    "secrets.deleted": "deleted {name}",
    "secrets.backend.file": "the owner-only file {path}",
    "secrets.backend.keychain": "the system keychain",
    "secrets.bad_name": (
        "{name!r} is not a usable secret name: use a letter, then letters, digits, _ . or - (up to 64), "
        "e.g. GITHUB_PASSWORD"
    ),
    "secrets.cannot_read": "cannot read the secrets file {path}: {reason}",
    "secrets.damaged": "the secrets file {path} is damaged ({reason}); fix it or delete it and set the secrets again",
    "secrets.too_short": "a secret's value needs at least {length} characters",
    "secrets.keychain_refused": (
        "the system keychain refused the secret ({reason}); set {variable}=file to keep it in an owner-only file "
        "instead"
    ),
    "secrets.cannot_save": "cannot save the secrets file {path}: {reason}",
    "secrets.cancelled": "cancelled; nothing was saved",
    "secrets.none": "No secrets. Add one with `tabpilot secrets set NAME --domain example.com`.",
    # --- the command line's progress, remedies and polish (commands/run.py, output.py, doctor, install) ---
    "error.how_to_configure_key": (
        "Give one with `tabpilot config set api-key` (asked without echo), the OPENAI_API_KEY environment "
        "variable, or --api-key."
    ),
    "error.key_for_another_address": (
        "No API key is configured for {base_url}: a saved key (or OPENAI_API_KEY) is only ever sent to the "
        "address it was given for. To keep using {base_url}, save it with its key: `tabpilot config set base-url "
        "{base_url}`, then `tabpilot config set api-key` (asked without echo); or set OPENAI_BASE_URL={base_url} "
        "with OPENAI_API_KEY; or give --api-key."
    ),
    "progress.starting_browser": "starting the browser…",
    "progress.connecting": "connecting to the browser…",
    "progress.opening": "opening {url}…",
    "progress.thinking": "step {step} · thinking…",
    "progress.acting": "step {step} · {doing}…",
    "progress.seconds": " {{seconds}} s",
    "run.remedy": "   → {remedy}",
    "remedy.endpoint": (
        "Check that the server at {base_url} is running and that the base URL is right (--base-url, or "
        "`tabpilot config set base-url <url>`); `tabpilot doctor` checks it."
    ),
    "remedy.slow": (
        "The model server is slow or overloaded: run the task again later, or give one model call longer "
        "(`tabpilot config set model-deadline <seconds>`)."
    ),
    "remedy.busy": "The provider is busy or failing: wait a minute and run the task again, or use another model.",
    "remedy.bad_reply": (
        "The endpoint did not answer like an OpenAI-compatible API: check the base URL (--base-url, or "
        "`tabpilot config set base-url <url>`); `tabpilot doctor` checks it."
    ),
    "remedy.bad_call": (
        "The model did not call the agent's tool properly: run the task again, or use a model that supports "
        "tool calls (--model, or `tabpilot config set model <name>`)."
    ),
    "remedy.rejected": (
        "Check the model name and the base URL (`tabpilot config set model <name>`, `tabpilot config set base-url "
        "<url>`); `tabpilot doctor` checks them."
    ),
    "remedy.filtered": "Reword the task, or use another model.",
    "remedy.context": "Use a model with a larger context window (--model), or a task that needs less of the page.",
    "remedy.max_steps": (
        "Raise the limit with --max-steps N (or `tabpilot config set max-steps N`), or split the task into "
        "smaller ones."
    ),
    "remedy.browser": "The browser closed or crashed under the task: run it again.",
    "remedy.page_busy": (
        "The page is busy (a script that never ends, or a dialog that stays open): reload or close it, then run "
        "the task again."
    ),
    "doctor.warnings": "no problems, {count} warning(s): see WARN above",
    "install.no_profile": (
        "{path} does not exist, nor does the folder it would go in ({parent}): is the path mistyped? Give the "
        "folder your browser is started with (--user-data-dir=DIR); for a new profile, create its parent "
        "folder first."
    ),
    "install.created_profile": "created the profile folder {path} (start the browser with --user-data-dir={path})",
    "profile.new": (
        "{path} does not exist yet: the browser starts a new, empty profile there (no logins or cookies). To work "
        "with your own logins, give the folder your browser keeps its profile in."
    ),
    "install.next_profile": (
        "Next: open chrome://extensions, switch on Developer mode, click \"Load unpacked\" and choose\n"
        "  {folder}\n"
        "The extension finds the host by itself within seconds (it keeps retrying); press \"Reconnect now\"\n"
        "in its popup to connect at once. No browser restart is needed. "
        "`tabpilot doctor --user-data-dir {profile}` checks it all."
    ),
    "host.on_a_terminal": (
        "tabpilot host is the helper your browser starts for the tabpilot extension (it talks in framed messages on "
        "its standard input and output): you do not run it yourself. To set it up: tabpilot install; to check it: "
        "tabpilot doctor. Press Ctrl-D to quit."
    ),
    "mcp.on_a_terminal": (
        "tabpilot mcp serves MCP on its standard input and output: an MCP client (Claude Desktop, Cursor, VS Code) "
        "starts it, you do not. To add it to one: tabpilot mcp config --client claude-desktop|cursor|vscode "
        "[--write]. Press Ctrl-C to quit."
    ),
}

ZH_CN: dict[str, str] = {
    "prompt.step_info": "第 {step} 步，最多 {max_steps} 步",
    "prompt.now": "当前日期和时间：{now}",
    "prompt.screenshot": "视口截图，每个元素的编号都画在图上：",
    "history.condensed": "第 {first}–{last} 步已压缩。你在第 {last} 步之后的记忆：{memory}",
    "history.no_memory": "（没有记录）",
    "step.evaluation": "对上一步的评估",
    "step.memory": "记忆",
    "step.next_goal": "下一个目标",
    "step.action": "动作",
    "step.results": "动作结果",
    "takeover.took_over": "用户接管了控制",
    "takeover.for_seconds": " {seconds} 秒",
    "takeover.asked": "（是你请求的）",
    "takeover.implicit": "（你工作时他们使用了页面）",
    "takeover.did_nothing": "：没有你能看到的操作",
    "takeover.page_now": "；页面现在是 {url}",
    "takeover.note": "。他们的留言：{note}",
    "takeover.list_start": "：",
    "takeover.list_separator": "；",
    "takeover.user.took_over": "你接管了控制",
    "takeover.user.asked": "（智能体请你接管的）",
    "takeover.user.implicit": "（智能体工作时你使用了页面）",
    "takeover.user.did_nothing": "：没有记录到你的操作",
    "takeover.user.note": "。你的留言：{note}",
    "did.clicked": "点击了 {target}",
    "did.clicked_blank": "点击了 {target} 中的空白处（那里没有控件）",
    "did.clicked_blank_page": "点击了页面上的空白处（那里没有控件）",
    "did.clicked_blank_holding": "点击了含有 {holding} 的 {target} 中的空白处（那里没有控件）",
    "did.holding_separator": "、",
    "did.clicked_blank_landmark": "点击了 {where} 中的空白处（那里没有控件）",
    "did.clicked_blank_landmark_holding": "点击了含有 {holding} 的 {where} 中的空白处（那里没有控件）",
    "did.landmark_banner": "页眉",
    "did.landmark_contentinfo": "页脚",
    "did.landmark_navigation": "导航栏",
    "did.landmark_complementary": "侧边栏",
    "did.landmark_main": "主要内容区",
    "did.landmark_search": "搜索区",
    "did.links": "链接 {names}",
    "did.list_separator": "、",
    "did.typed": "在 {target} 中输入了 {value}",
    "did.typed_hidden": "在 {target} 中输入了（隐藏的值）",
    "did.chose": "在 {target} 中选择了 {value}",
    "did.checked": "勾选了 {target}",
    "did.unchecked": "取消勾选了 {target}",
    "did.submitted": "提交了 {target}",
    "did.pressed": "按下了 {key}",
    "did.pressed_in": "在 {target} 中按下了 {key}",
    "did.went_to": "打开了 {url}",
    "did.reloaded": "重新加载了页面 {url}",
    "did.page_script_went": "页面自己的脚本把地址改成了 {url}（不是用户）",
    "did.tab_loaded": "标签页载入了 {url}",
    "did.scrolled": "滚动了{target} {how}",
    "did.the_page": "页面",
    "did.tab": "{what} {target}",
    "did.switched_to": "切换到",
    "did.tab_opened": "打开了标签页",
    "did.tab_closed": "关闭了标签页",
    "role.button": "按钮",
    "role.link": "链接",
    "role.checkbox": "复选框",
    "role.radio": "单选按钮",
    "role.switch": "开关",
    "role.tab": "选项卡",
    "role.menuitem": "菜单项",
    "role.menuitemcheckbox": "菜单复选项",
    "role.menuitemradio": "菜单单选项",
    "role.option": "选项",
    "role.textbox": "文本框",
    "role.searchbox": "搜索框",
    "role.combobox": "下拉框",
    "role.listbox": "列表框",
    "role.slider": "滑块",
    "role.spinbutton": "数字框",
    "role.scrollbar": "滚动条",
    "role.treeitem": "树节点",
    "role.gridcell": "单元格",
    "role.cell": "单元格",
    "role.columnheader": "列标题",
    "role.rowheader": "行标题",
    "role.heading": "标题",
    "role.img": "图片",
    "role.form": "表单",
    "role.label": "标签",
    "role.text": "文字",
    "role.page": "页面",
    "role.dialog": "对话框",
    "role.alertdialog": "提示对话框",
    "role.region": "区域",
    "role.article": "文章",
    "role.group": "分组",
    "role.table": "表格",
    "role.navigation": "导航栏",
    "role.main": "主要内容区",
    "role.banner": "页眉",
    "role.contentinfo": "页脚",
    "role.complementary": "侧边栏",
    "role.search": "搜索区",
    "role.menu": "菜单",
    "role.menubar": "菜单栏",
    "role.list": "列表",
    "role.listitem": "列表项",
    "role.row": "行",
    "role.tablist": "选项卡栏",
    "role.toolbar": "工具栏",
    "role.a": "链接",
    "role.input": "输入框",
    "role.select": "下拉框",
    "role.textarea": "文本框",
    "role.summary": "摘要",
    "did.scroll_down": "向下 {px}px",
    "did.scroll_up": "向上 {px}px",
    "did.scroll_left": "向左 {px}px",
    "did.scroll_right": "向右 {px}px",
    "approval.action.click": "点击 {target}",
    "approval.action.type_into": "在 {target} 中输入",
    "approval.action.choose": '在 {target} 中选择 "{option}"',
    "approval.action.press": "按下 {keys}",
    "approval.action.open": "打开 {url}",
    "approval.action.go_back": "返回上一页",
    "approval.action.run_script": "在页面上运行脚本",
    "approval.action.upload_file": "向 {target} 上传文件",
    "approval.action.close_tab": "关闭标签页",
    "approval.this_page": "此页面",
    "card.note.navigated": "页面跳转到了 {url}",
    "card.note.navigated_meanwhile": "页面跳转到了 {url}，不是智能体的操作",
    "card.note.reloaded": "页面被重新加载了，不是智能体的操作",
    "card.note.tab_closed": "智能体使用的标签页被关闭了；它回到了 {url}",
    "card.note.vision_off": "模型不接受图片：本任务不再发送截图",
    "card.note.action_cut_short": "tabpilot 的扩展程序在执行动作 {action} 时重启了：它可能执行了，也可能没有",
    "privacy.secrets_here": (
        "你可以在此页面上输入用户的这些机密，而无需知道它们的值：{secrets}。要输入其中一个，请原样写出它"
        "（作为 input_text 的 text）；真实的值会替你填入，并且永远不会显示出来。每个机密只能输入到登录字段"
        "（密码、用户名或电子邮件、一次性验证码字段）中，标有（任意字段）的除外。"
    ),
    "privacy.any_field": "（任意字段）",
    "privacy.masked": (
        "页面上的个人信息已被遮盖为 [email 1]、[card 1] 这样的占位符（同一个值始终使用同一个占位符）。"
        "输入占位符即可填入真实的值，但只能在看到它的网站上。"
    ),
    "note.navigated": "页面已跳转到 → {url}",
    "note.navigated_meanwhile": (
        "页面在你上次读取之后跳转到了 → {url}，不是你的操作造成的：这是一个新页面，之前输入的内容都已丢失。"
    ),
    "note.reloaded": (
        "页面在你上次读取之后被重新加载了（网址相同，是新的文档），不是你的操作造成的：之前输入的内容都已丢失，"
        "元素的编号也变了。行动之前请重新阅读页面。"
    ),
    "note.tab_closed": "你正在使用的标签页被关闭了，不是你的操作造成的：你回到了之前使用的标签页 → {url}。",
    "note.vision_off": "模型不接受图片：本任务不再发送截图，只有页面文本。",
    "note.waited": "你已经连续等待了 {seconds} 秒。除非有充分的理由，不要再等待。",
    "note.action_cut_short": (
        "tabpilot 扩展在你的操作 {action} 进行中时重新启动：该操作可能已经发生，也可能没有。"
        "再做一次之前请先查看页面。"
    ),
    "note.steps_left": "⚠️ 只剩 {remaining} 步了。请收尾，或者带着部分结果调用 done。",
    "note.steps_critical": "⚠️ 紧急：只剩 {remaining} 步了！现在就完成任务或调用 done。",
    "note.loop": (
        "检测到循环：你已经连续 {repeats} 次执行 `{action}`，页面却没有变化。这样行不通。换一种做法："
        "换一个元素、滚动、返回、等待，或者用已有的结果调用 done。"
    ),
    "result.took_over": (
        "⏸ 这个动作完成之前用户接管了控制，所以它被放弃了（不是错误）。用户做了什么见他们的接管记录；"
        "继续之前，先阅读页面现在的样子。"
    ),
    "result.allowed": "用户允许了这个操作：{action}（{site}）。",
    "result.tab_closed_asking": "在询问用户是否允许 {action}（{site}）时，标签页被关闭了：它没有执行。",
    "result.denied": (
        "用户拒绝了这个操作：{action}（{site}）。它没有执行；不要换一种方式去做。请询问用户该怎么做，或者结束任务。"
    ),
    "result.approval_expired": (
        "在 {wait}内没有人回答是否允许 {action}（{site}），所以它没有执行。不要换一种方式去做："
        "做没有它也能完成的部分，用 ask_user 询问用户，或者结束任务。"
    ),
    "result.nobody_to_approve": (
        "{action}（{site}）需要用户批准（ask-before：{ask_before}），但这里没有人能回答，所以它没有执行。{remedy}"
    ),
    "approval.wants": "智能体想在 {site} 上执行：{action}",
    "approval.wants_here": "智能体想执行：{action}",
    "approval.why.name_says": "它的名称含有“{word}”",
    "approval.why.form_fields": "它会提交一个含有{fields}字段的表单",
    "approval.why.every_action": "你要求每个操作都先经你批准",
    "approval.field.payment": "支付",
    "approval.field.password": "密码",
    "approval.field.personal": "个人信息",
    "approval.fields_and": "和",
    "approval.remedy.settings": "在“设置”中把 ask-before 设为 never，智能体就可以不经询问直接执行。",
    "approval.remedy.no_terminal": (
        "标准输入不是终端，tabpilot run 无法询问你：请加上 --yes 再运行一次，让智能体不经询问执行这类操作"
        "（或者 `tabpilot config set ask-before never`）。"
    ),
    "approval.remedy.mcp": (
        "使用 --launch 或 --cdp-url 的 tabpilot mcp 服务器没有人可以询问：要让它不经询问直接执行，"
        "请运行 `tabpilot config set ask-before never`。"
    ),
    "result.done": "任务已完成",
    "result.done_unfinished": "任务已结束，未完成",
    "result.waited": "✅ 已等待 {seconds} 秒。",
    "result.user_answered": "用户的回答：{answer}",
    "result.handed_back": (
        "✅ 用户交还了控制：他们做了什么，见这一步之前的 user_takeover 记录。请重新阅读页面：它可能已经变化。"
    ),
    "result.tool_failed": "❌ {tool} 执行失败：{error}",
    "run.step": "第 {step} 步 · {goal}",
    "run.no_goal": "（没有给出目标）",
    "run.action": "    动作：{action}",
    "run.result": "    结果：{result}",
    "run.retry": "  ↻ 重试 {attempt}/{max_attempts}：{message}",
    "run.waiting": "  … 模型已经 {seconds} 秒没有回应",
    "run.not_saved": "    （这一条没能保存到任务历史）",
    "run.outcome": "{mark} {status}：{data}",
    "run.status.completed": "已完成",
    "run.status.error": "出错",
    "run.status.stopped": "已停止",
    "run.status.not_done": "未完成",
    "controls.help": "⌨  在这里按 Enter 接管浏览器的控制；完成后再按一次，把控制交还给智能体。",
    "controls.ask_note": "给智能体的留言：你做了什么，或者它接下来该做什么（直接按 Enter 表示没有）：",
    "controls.question": "❓ 智能体问：{question}\n   输入你的回答并按 Enter：",
    "controls.no_reason": "（没有给出原因）",
    "controls.agent_asks_takeover": (
        "🙋 智能体请你接管控制：{reason}\n   请在浏览器中完成，然后在这里按 Enter 交还控制。"
    ),
    "controls.touched": "✋ 你操作了页面：智能体已暂停。完成后在这里按 Enter 交还控制。",
    "controls.approve": "⚠  {sentence}（{why}）。\n   允许吗？输入 y 并按 Enter 允许，n 拒绝{takeover}：",
    "controls.approve_takeover": "，t 接管控制",
    "controls.approved": "   ✔ 已允许",
    "controls.denied": "   ✖ 已拒绝：智能体会被告知，这个操作不会执行",
    "controls.late_answer": (
        "   ⌛ 太晚了：是否允许 {action}（{site}）的提问已经过期，所以它没有执行；"
        "你的回答没有改变任何事，智能体会不做它继续。"
    ),
    "controls.you_have_them": "✋ 控制在你手中：智能体已暂停。完成后在这里按 Enter 交还控制。",
    "controls.note_hint": "   想给智能体留言，就在按这个 Enter 之前输入。",
    "error.popup_not_configured": "尚未设置模型：请打开“设置”，填写 Base URL、模型和 API 密钥。",
    "error.page_not_configured": "{message} 在弹出窗口中：请打开“设置”。",
    "error.page_no_model": (
        "PAGE_AGENT_EXT.execute(task, config)：没有可用于此任务的模型。请在 config 中提供 baseURL 和 model"
        "（page-agent 也要求这两项），或请用户在 tabpilot 的“设置”中选择一个模型（此网站可以使用用户的模型）。"
    ),
    "error.page_no_key": (
        "PAGE_AGENT_EXT.execute(task, config)：没有 {base_url} 的 API 密钥。请在 config 中提供 apiKey"
        "（tabpilot 只会把用户的密钥发给当初为它保存的地址）。"
    ),
    "error.page_no_key_of_theirs": (
        "PAGE_AGENT_EXT.execute(task, config)：用户在 {base_url} 的模型没有 API 密钥。请在 config 中提供 baseURL、"
        "model 和 apiKey，或请用户在 tabpilot 的“设置”中保存密钥。"
    ),
    "error.cannot_work_in_tab": (
        "tabpilot 无法在这个标签页中工作（标签页 {tab}：{error}）。请在这个标签页中打开一个网页（http 或 https），"
        "或者换一个标签页，然后重新开始任务。"
    ),
    "error.tab_unworkable": "tabpilot 无法在这个标签页中工作：{why}。{fix}",
    "unworkable.browser": "这是浏览器自己的页面",
    "unworkable.extension": "这是某个扩展程序的页面",
    "unworkable.store": "浏览器不允许扩展程序在其扩展商店中操作",
    "unworkable.source": "它显示的是网页源代码",
    "unworkable.file": "它显示的是本机上的文件，而 tabpilot 无权读取文件",
    "unworkable.other": "浏览器不允许扩展程序在其中工作",
    "unworkable.fix": "请在这个标签页中打开一个网页（http 或 https），或者换一个标签页，然后重新开始任务。",
    "unworkable.fix_file": (
        "请改为在这个标签页中打开一个网页，或允许 tabpilot 读取文件（扩展程序 → tabpilot → 详情 → 允许访问文件网址），"
        "然后重新开始任务。"
    ),
    "unworkable.fix_store": "请在这个标签页中打开其他网站的网页，或者换一个标签页，然后重新开始任务。",
    "error.no_model": "尚未配置模型。",
    "plan.allowed_domain": "允许的域名：{problem}",
    "plan.bad_settings": "无法用这些设置运行：{problems}",
    "error.no_api_key": "尚未为 {base_url} 配置 API 密钥。",
    "error.how_to_configure_terminal": (
        "用 `tabpilot config set model <name>` 或 --model 指定一个（环境变量 OPENAI_API_KEY / OPENAI_BASE_URL "
        "只提供密钥和接口地址，不提供模型）；使用 OpenAI 以外的服务商时，还要 "
        "`tabpilot config set base-url <url>` 和 `tabpilot config set api-key`。"
    ),
    "doctor.chromium_says": "Chromium 的报错：\"{message}\"",
    "doctor.level.ok": "正常",
    "doctor.level.warn": "注意",
    "doctor.level.fail": "失败",
    "doctor.fix": "修复：{fix}",
    "doctor.all_good": "一切正常",
    "doctor.problems": "发现 {count} 个问题",
    "doctor.extension_ok": "扩展文件夹 {folder}（ID {extension_id}）",
    "doctor.extension": "随附的扩展",
    "install.no_browser": "没有找到 Chrome、Chromium、Edge 或 Brave：常见位置既没有它的程序，也没有它的设置文件夹",
    "install.no_browser_fix": (
        "请安装一个（从浏览器的官网，或在 Debian 上 `apt-get install chromium`），然后再次运行 `tabpilot install`。"
        "如果你的浏览器装在不常见的位置，请指明：`tabpilot install --browser chrome`（或 chromium、edge、brave）；"
        "对于用 --user-data-dir=DIR 启动的浏览器：`tabpilot install --user-data-dir DIR`"
    ),
    "install.reinstall": (
        "重新安装 tabpilot（pip install --force-reinstall tabpilot，或 pipx reinstall tabpilot；"
        "源码检出中请恢复它的 extension/ 文件夹）"
    ),
    "doctor.not_registered": "本机主机（native host）尚未注册",
    "doctor.not_registered_for": "本机主机（native host）尚未为 {where} 注册",
    "doctor.where_profile": "配置文件夹 {profile}",
    "doctor.where_any": "任何浏览器",
    "doctor.registers_for": "{command}（它会为 {browsers} 注册）",
    "doctor.not_registered_label": "{label}：本机主机尚未为它注册",
    "doctor.rewrite": "再次运行 `{command}` 以重写它",
    "doctor.in_use": (
        "正在运行的浏览器（pid {pid}，{program}）使用自己的配置文件夹 {profile}：本机主机（native host）尚未在那里注册"
    ),
    "doctor.in_use.detail": "用 --user-data-dir 启动的浏览器只从那个文件夹读取主机的注册，不读常用的文件夹。{chromium}",
    "doctor.run_again": "再次运行 `{command}`",
    "doctor.manifest.unreadable": "无法作为 JSON 读取（{error}）。{chromium}",
    "doctor.manifest.not_object": "它不是一个 JSON 对象。{chromium}",
    "doctor.manifest.field": "\"{field}\" 是 {value}，而不是 {expected}。{chromium}",
    "doctor.manifest.no_origins": "\"allowed_origins\" 缺失或为空。{chromium}",
    "doctor.manifest.no_slash": "允许的来源 {origin} 缺少末尾的斜杠。{chromium}",
    "doctor.manifest.bad_origin": "允许的来源 {origin} 不是 chrome-extension://<id>/ 的形式。{chromium}",
    "doctor.manifest.missing_id": "随附的扩展（{extension_id}）不在 allowed_origins 中。{chromium}",
    "doctor.manifest.other_copy": "{fix}（另一份扩展请加上 --extension-id ID）",
    "doctor.manifest.no_path": "缺少 \"path\"。{chromium}",
    "doctor.manifest.relative_path": "\"path\" {path} 不是绝对路径。{chromium}",
    "doctor.manifest.no_launcher": "启动脚本 {path} 不存在。{chromium}",
    "doctor.manifest.not_executable": "启动脚本 {path} 不可执行。{chromium}",
    "doctor.manifest.chmod": "chmod 755 {path}（或者{fix}）",
    "doctor.manifest.ok": "启动脚本 {path}",
    "doctor.launcher": "启动脚本 {path}",
    "doctor.launcher.unreadable": "无法读取：{error}",
    "doctor.launcher.python_gone": "它运行的 {python} 已不存在。{chromium}",
    "doctor.launcher.python_gone_fix": "重新安装 tabpilot，然后{fix}",
    "doctor.launcher.other_python": "它运行的是 {python}，而不是当前 tabpilot 的 {this}",
    "doctor.ping": "通过 {launcher} 启动的主机",
    "doctor.ping.cannot_start": "无法启动：{error}。{chromium}",
    "doctor.ping.no_reply": "hello 没有得到分帧的回复。{chromium}",
    "doctor.ping.stderr": " 它的错误输出：{stderr}",
    "doctor.ping.by_hand": "手动运行启动脚本查看原因；然后运行 `{command}`",
    "doctor.ping.ok": "{ms} 毫秒内回复了分帧的 hello（主机 {version}）",
    "doctor.ping.other_version": "；当前 tabpilot 是 {version}",
    "doctor.settings": "设置",
    "doctor.settings_fix": "tabpilot config（或删除该文件后重新设置）",
    "doctor.llm": "模型（LLM）",
    "doctor.llm.configure": "tabpilot config set model <名称>（或在弹出窗口的“设置”中填写）",
    "doctor.llm.endpoint": "模型端点 {base_url}（模型 {model}）",
    "doctor.llm.key_refused": "API 密钥被拒绝（HTTP {status}）",
    "doctor.llm.key_fix": "tabpilot config set api-key（它会提示输入密钥，输入时不显示；或在弹出窗口的“设置”中填写）",
    "doctor.llm.no_models": "它没有 /models 列表，所以无法核对模型名称",
    "doctor.llm.env_only": "{names} 来自这个终端的环境变量，没有保存",
    "doctor.llm.env_only_detail": (
        "扩展程序的任务由浏览器启动的助手运行；只有从这个终端启动的浏览器，它才能看到这些环境变量"),
    "doctor.llm.env_only_fix": "也为浏览器保存：{commands}",
    "doctor.llm.not_openai": "它返回的是网页（/models 返回 HTTP {status}），而不是 OpenAI 兼容的 API",
    "doctor.llm.http": "GET /models 返回了 HTTP {status}",
    "doctor.llm.check_url": "检查 Base URL（`tabpilot config set base-url <url>`，或弹出窗口的“设置”）",
    "doctor.llm.unreachable": "无法连接：{reason}",
    "doctor.llm.unreachable_fix": "检查 Base URL 和网络连接",
    "doctor.llm.not_json": "GET /models 返回的不是 JSON",
    "doctor.llm.not_listed": "可以连接，但它没有列出 {model}（它有：{models}）",
    "doctor.llm.pick_model": "tabpilot config set model <其中之一>",
    "doctor.llm.ok": "可以连接，密钥已被接受",
    "recording.missing": "{path}：没有这个录制文件",
    "recording.is_folder": "{path} 是一个文件夹：--record 需要的是保存录制内容的文件",
    "recording.no_folder": "{path}：文件夹 {folder} 不存在（--record 不会创建文件夹）",
    "recording.unreadable": "{path}：无法读取录制文件：{reason}",
    "recording.not_json": "{path}：不是 JSON（{reason}）",
    "recording.not_recording": "{path}：不是 tabpilot 录制文件（应有 \"format\": \"{format}\"）",
    "recording.version": "{path}：不支持录制文件版本 {version}（这个 tabpilot 读取版本 {supported}）",
    "recording.replies": "{path}：\"replies\" 必须是列表",
    "recording.reply": "{path}：第 {number} 个回复需要 \"tool\"（字符串）和 \"arguments\"",
    "recording.script": "{path}：脚本应是回复的 JSON 列表（或 tabpilot 录制文件）",
    "recording.arguments": "{path}：第 {number} 个回复的 \"arguments\" 必须是对象或字符串",
    "cli.error": "tabpilot {command}：{message}",
    "cli.error_bare": "tabpilot：{message}",
    "cli.user_data_dir_with_cdp": (
        "--user-data-dir 用于 tabpilot 启动的浏览器；使用 --cdp-url 时用的是那个正在运行的浏览器自己的配置文件夹"
    ),
    "cli.browser_with_cdp": (
        "--browser 是 tabpilot 要启动的浏览器；使用 --cdp-url 时它在那个已经运行的浏览器中工作：两者只给一个"
    ),
    "cli.tab_busy": (
        "另一个 tabpilot 任务正在这个标签页中工作：请等它结束、切换到另一个标签页，或用 --url 在新标签页中工作"
    ),
    "cli.url_script": "{url} 是脚本，不是网页：请给出要打开的网页地址（https://…、localhost:端口）",
    "cli.url_empty": "请给出要打开的网页地址",
    "cli.task_from_terminal": "请输入任务，然后在单独的一行按 Ctrl-D：",
    "cli.did_you_mean": "你是不是想用 {option}？",
    "cli.see_options": "`{command} --help` 会列出它的选项",
    "cli.quote_task": "任务是一个参数：请用引号把它括起来，例如 {command}",
    "start.blocked_domain": (
        "智能体不能在这个页面上工作：{host} 在禁止的域名列表中（{domain}）。请在别的页面上开始任务，或把 {domain} "
        "从禁止的域名中去掉。"
    ),
    "start.outside_domains": (
        "智能体不能在这个页面上工作：{host} 不在此任务允许的域名之内（{allowed}）。请在这些域名的页面上开始任务，"
        "或把 {host} 加入允许的域名。"
    ),
    "cli.url_outside_domains": (
        "--url {url} 不在此任务可以访问的域名之内（允许：{allowed}；禁止：{blocked}）：请给出它可以访问的起始页，"
        "或加上 --allow-domain {host}"
    ),
    "cli.url_blocked_domain": (
        "--url {url} 属于被禁止的域名（{domain}；禁止的域名优先于允许的域名）：请换一个起始页，或者把 {domain} "
        "从禁止的域名中去掉（`tabpilot config set blocked-domains …` 时不含它，"
        "或 `tabpilot config unset blocked-domains`）"
    ),
    "mcp.headless_without_launch": "--headless 和 --browser 用于 --launch（或 --fallback launch）启动的浏览器",
    "mcp.fallback_with_own_browser": "--fallback launch 用于在你的浏览器中运行的任务；--launch 和 --cdp-url 从不使用它",
    "mcp.ask_without_popup": (
        "--approve ask 需要你浏览器中的 tabpilot 弹出窗口；它自己的浏览器（--launch、--cdp-url）没有弹出窗口。"
        "请去掉 --approve（或者用 --approve always）。"
    ),
    "mcp.client_without_config": "--client 和 --write 要与 `tabpilot mcp config` 一起使用",
    "mcp.launch_with_cdp_url": (
        "--launch 会启动它自己的浏览器，--cdp-url 则使用一个已经在运行的浏览器：请只给出其中一个"
    ),
    "mcp.no_display": (
        "没有可以显示浏览器窗口的显示器（未设置 DISPLAY 和 WAYLAND_DISPLAY），而 tabpilot mcp {flag} 会打开一个窗口，"
        "所以每个任务都会失败：请在 MCP 客户端的配置中给这个服务器的参数加上 --headless"
        "（`tabpilot mcp config --client … {flag} --headless` 会打印出这些参数），"
        "或者在有显示器的环境中运行它（或用 xvfb-run 启动）。"
    ),
    "mcp.cdp_unreachable": (
        "无法连接到 {address} 的浏览器（{detail}）。请用 --remote-debugging-port=9222 启动那个浏览器，"
        "并在 MCP 客户端的配置中把它的地址写进这个服务器的参数（--cdp-url http://127.0.0.1:9222），"
        "或者在那里用 --launch 代替 --cdp-url，由 tabpilot mcp 自己启动一个浏览器。"
    ),
    "mcp.client_gone": "tabpilot mcp：MCP 客户端已经离开（它与这个服务器的连接已关闭）；正在退出",
    "mcp.stopped_by_client": "已被 MCP 客户端 {requester} 停止：它取消了调用、要求停止这个任务，或已经关闭",
    "mcp.stopped_client_gone": "已停止：请求这个任务的 MCP 客户端 {requester} 已经离开（它关闭了或失去了连接）",
    "page.stopped_by_page": "已被请求这个任务的页面 {requester} 停止（它调用了 PAGE_AGENT_EXT.stop()）",
    "demo.banner": "tabpilot 演示 — 脚本演示模型，不涉及任何 AI\n任务：{task}\n",
    "browser.not_found": (
        "没有找到 Chrome、Chromium、Edge 或 Brave；请安装一个（例如 `apt-get install chromium`），"
        "或者把 {variable} 指向它的可执行文件"
    ),
    "browser.missing": "浏览器 {path} 不存在（请给出 Chrome、Chromium、Edge 或 Brave 可执行文件的路径）",
    "browser.kind_missing": "这台电脑上没有安装 {browser}（已查找它的常见位置和 PATH）：请安装它，或给出它的程序路径",
    "browser.missing_env": "{variable} {path} 不存在（请给出 Chrome、Chromium、Edge 或 Brave 可执行文件的路径）",
    "browser.cannot_start": "无法启动浏览器：{error}",
    "browser.no_display": (
        "没有可以显示浏览器窗口的显示器（未设置 DISPLAY）：请去掉 --headed，或改用 --headless，让浏览器不显示窗口；"
        "或者在有显示器的环境中运行（设置 DISPLAY，或用 xvfb-run 启动这条命令）"
    ),
    "browser.unreachable": (
        "无法连接到 {address} 的浏览器（{detail}）。请用 --remote-debugging-port=9222 启动浏览器并给出该地址"
        "（--cdp-url http://127.0.0.1:9222），或者不写 --cdp-url，由 tabpilot 自己启动一个浏览器。"),
    "browser.not_devtools": (
        "{address} 有回应，但不是浏览器的 DevTools 端点。请给出浏览器在“DevTools listening on”之后打印的地址，"
        "或它的 http://127.0.0.1:端口。"),
    "page.cannot_open": "无法打开 {url}（{error}）：请检查地址，并确认从这台电脑能访问该网站。",
    "state.failed": "无法读取该页面：{error}",
    "state.url_needed": (
        "请给出要读取的网页：tabpilot state URL（tabpilot 启动的浏览器没有自己的网页；"
        "要读取一个正在运行的浏览器当前显示的标签页，请给出它的 --cdp-url WS）"
    ),
    "failure.client_closed": "这个模型客户端已关闭；要再次调用模型，请新建一个 LLMClient。",
    "failure.key_refused": (
        "服务商拒绝了 API 密钥（HTTP {status}，来自 {base_url}：{detail}）。请检查密钥：在扩展的“设置”中，"
        "或用 `tabpilot config set api-key`、环境变量 OPENAI_API_KEY，或者 --api-key。"
    ),
    "failure.key_refused.page": (
        "服务商拒绝了 API 密钥（HTTP {status}，来自 {base_url}：{detail}）。这个模型是页面选的：请检查它 execute() "
        "配置中的 apiKey。"
    ),
    "failure.quota": (
        "服务商表示该账户的额度已用完（HTTP {status}，来自 {base_url}：{detail}）。等待没有用："
        "请向服务商核对套餐和账单，或者换一个密钥或模型。"
    ),
    "failure.context_too_long": (
        "提示内容超出了模型 {model} 的长度上限（HTTP {status}，来自 {base_url}：{detail}）。"
        "请换一个上下文窗口更大的模型，或者给一个需要页面内容更少的任务。"
    ),
    "failure.context_too_long.reply": "提示内容超出了模型 {model} 的长度上限：{detail}",
    "failure.context_too_long.cut_off": (
        "模型的回复被截断了（finish_reason=length）：提示和回复放不进 {model} 的上下文窗口。"
    ),
    "failure.content_filtered": "服务商的内容过滤拦截了请求（HTTP {status}，来自 {base_url}：{detail}）。",
    "failure.content_filtered.reply": "服务商的内容过滤拦截了模型的回复（finish_reason=content_filter）。",
    "failure.not_found": (
        "未找到（HTTP {status}，来自 {base_url}：{detail}）。请检查 Base URL（{base_url}）和模型名称（{model}）。"
    ),
    "failure.not_found.not_model_api": (
        "{base_url} 不接受模型请求（HTTP {status}：{detail}）：它不是 OpenAI 兼容的端点。请检查 Base URL"
        "（通常以 /v1 结尾）。"
    ),
    "failure.rejected": "服务商拒绝了请求（HTTP {status}，来自 {base_url}：{detail}）。",
    "failure.rate_limited": "HTTP {status}（请求过于频繁）：{detail}",
    "failure.rate_limited.html": "端点返回了 {status} {reason}（一个 HTML 错误页）",
    "failure.server_error": "HTTP {status}（服务器出错）：{detail}",
    "failure.server_error.html": "端点返回了 {status} {reason}（一个 HTML 错误页）",
    "failure.timeout": "{timeout} 秒内没有回复（超时）",
    "failure.unreachable": "无法连接 {base_url}：{detail}",
    "failure.unreachable.refused": "无法连接 {base_url}：连接被拒绝或失败",
    "failure.connection_cut": "{base_url} 在回复完成之前关闭了连接（{detail}）",
    "failure.connection_cut.reset": "到 {base_url} 的连接在回复完成之前被重置",
    "failure.reply_too_large": (
        "来自 {base_url} 的回复超过了 {limit}，没有继续读取（max-reply-mb 设置；Base URL 是 OpenAI 兼容的端点吗？）"
    ),
    "failure.bad_reply.unreadable": "无法读取来自 {base_url} 的回复：{detail}",
    "failure.bad_reply.too_deep": "服务商的回复是嵌套过深的 JSON，无法读取",
    "failure.bad_reply.html": (
        "端点返回的是一个 HTML 页面（{gist}），而不是聊天补全结果（{base_url} 是 OpenAI 兼容 API 的 Base URL 吗？）"
    ),
    "failure.bad_reply.not_json": "服务商的回复不是 JSON：{snippet}",
    "failure.bad_reply.not_object": "服务商的回复不是一个 JSON 对象",
    "failure.bad_reply.provider_error": "服务商返回了一个错误：{detail}",
    "failure.bad_reply.no_choices": "回复中没有 choices",
    "failure.bad_call": "模型的回复无法使用：{detail}",
    "failure.bad_call.arguments": "{tool} 的参数无效：{detail}",
    "failure.bad_call.no_call": "模型的回复无法使用：回复中没有对工具 {tool} 的调用（文本中也没有 JSON）",
    "failure.retries_exhausted": "模型调用重试 {retries} 次后仍然失败；最后一次的原因：{cause}",
    "failure.deadline": (
        "模型在 {elapsed} 秒内没有给出可用的回答（重试了 {retries} 次；一次模型调用最多可用 {deadline} 秒，"
        "即 model-deadline 设置）；最后一次的原因：{cause}"
    ),
    "failure.deadline.asked": (
        "模型在 {elapsed} 秒内没有给出可用的回答（重试了 {retries} 次；一次模型调用最多可用 {deadline} 秒，"
        "即 model-deadline 设置）；服务商要求等待 {retry_after} 秒后再试；最后一次的原因：{cause}"
    ),
    "failure.browser_failed": "浏览器出错：{detail}",
    "failure.page_busy": "页面不再响应：{detail}",
    "failure.tab_closed": "任务正在使用的标签页被关闭了。",
    "failure.mask_too_slow": (
        "遮盖规则 {pattern} 在页面文字上运行超过了 {seconds} 秒，所以页面的任何内容都没有发给模型：请把它写得更简单"
        "（只重复一次；各个选项不能匹配同样的文字），或从 mask-patterns 设置中删除它。"
    ),
    "failure.crashed": "出现了意外的错误（{kind}）：{detail}",
    "failure.not_saved": "无法保存任务历史（{reason}），所以任务已停止：此后它做的事没有记录下来。",
    "failure.not_resumed": "tabpilot 的扩展重启后，任务无法继续：{reason}",
    "failure.not_resumed.cause": "tabpilot 的扩展重启后，任务无法继续：{cause}",
    "failure.record_incomplete": "它的记录不完整",
    "failure.tab_gone": "它的标签页（{tab}）已经不在了（{detail}）",
    "failure.tab_busy": "它的标签页（{tab}）中正在运行另一个任务",
    "failure.max_steps": "步数已超过上限，任务没有完成。",
    "sites.flag.ask": "每个任务前先询问",
    "sites.flag.use_my_model": "可使用你的模型",
    "sites.flag.all_tabs": "所有标签页",
    "sites.flag.none": "无需询问即可运行，使用它自己的模型，只能操作它自己的标签页",
    "sites.allowed": "已允许 {origin}：{flags}",
    "sites.dropped": "  不再：{flags}（再次允许会替换该网站的授权；要保留，请加上 {options}）",
    "sites.not_allowed": "tabpilot sites：{origin} 本来就未被允许（见 `tabpilot sites list`）",
    "sites.revoked": "已撤销 {origin}",
    "sites.client_not_allowed": "tabpilot sites：MCP 客户端 {name!r} 本来就不是“始终允许”（见 `tabpilot sites list`）",
    "sites.client_revoked": "{name} 下次运行任务前会再次询问",
    "sites.new_token": "新的 page-agent 令牌（{name}）：{token}",
    "sites.site_flags": "（{flags}）",
    "sites.none": "目前没有网站可以启动任务。可用 `tabpilot sites allow https://app.example.com` 允许一个。",
    "sites.clients": "无需询问即可运行任务的 MCP 客户端（用 `tabpilot sites revoke-client NAME` 撤销）：",
    "sites.client": "  {name}（由 {program} 启动：{path}；自 {since} 起）",
    "sites.client_program_unknown": "  {name}（程序未知：系统没有说明是哪个程序启动了它；自 {since} 起）",
    "sites.token": "page-agent 令牌（{name}）：{token}",
    "history.limit": "--limit 至少为 1",
    "history.more": "（最新的 {limit} 个；`tabpilot history --limit N` 可显示更多）",
    "history.no_match": "没有符合条件的任务记录。",
    "history.no_task": "没有 ID 为 {task_id!r} 的任务",
    "history.cannot_write": "无法写入 {path}：{reason}",
    "history.exported": "已将任务 {task_id} 导出到 {path}",
    "history.exported_many": "已将 {count} 个任务导出到 {path}",
    "history.export_what": "请给出要导出的任务 ID，或用 --all 导出全部任务",
    "sites.not_origin": "{text!r} 不是网站来源；请写成 scheme://host[:port]，例如 https://app.example.com",
    "sites.wildcard": "{text!r}：不允许使用通配符；请逐个写出每个来源",
    "sites.credentials": "{text!r}：来源中不能包含用户名或密码",
    "sites.no_host": "{text!r} 没有主机名",
    "sites.bad_port": "{text!r}：{reason}",
    "sites.cannot_read": "无法读取允许网站文件 {path}：{reason}",
    "sites.damaged": "允许网站文件 {path} 已损坏（{reason}）；请修正或删除它（删除会撤销所有网站）",
    "sites.cannot_save": "无法保存允许网站文件 {path}：{reason}",
    "task.no_text": "任务需要一段文字说明要做什么",
    "task.too_long": (
        "这个任务有 {length} 个字符，而一个任务最多 {limit} 个字符：请用更少的文字说明要做什么，"
        "把大段材料放进代理可以打开的网页或文件（在任务中给出它的地址或路径）"
    ),
    "history.deleted": "已删除任务 {task_id}",
    "history.deleted_many": "已删除 {count} 个任务",
    "history.delete_what": "请给出要删除的任务 ID，或用 --all 删除全部任务",
    "history.nothing_to_delete": "没有记录任何任务：没有可删除的内容。",
    "history.confirm_delete_all": "删除全部 {count} 个已记录的任务及其事件？此操作无法撤销。[y/N] ",
    "history.yes": "是",
    "history.delete_all_needs_yes": (
        "--all 会删除所有已记录的任务（{count} 个）；没有可以询问的终端，请加上 --yes 表示确认"
    ),
    "history.delete_cancelled": "已取消，没有删除任何内容",
    "history.kept_running": "未删除、仍在运行：{ids}（请先停止任务再删除）",
    "history.no_id": "没有给出任务 ID",
    "history.ambiguous": "任务 ID {prefix!r} 不明确：可能是 {ids}",
    "history.still_running": "任务 {task_id} 仍在运行；请先停止它再删除",
    "history.cannot_open": "无法打开任务数据库 {path}：{reason}",
    "history.busy": (
        "任务历史正忙：另一个程序正在写入 {path}。请稍后再试（如果一直很忙，请关闭其他 tabpilot 命令"
        "或其他打开了该文件的程序）。"
    ),
    "history.set_aside": "任务数据库已损坏：原文件保留为 {path}，并开始新的记录。",
    "timeline.no_tasks": "还没有记录任何任务。可用 `tabpilot run TASK` 或在扩展的弹出窗口中运行一个。",
    "timeline.column.id": "编号",
    "timeline.column.started": "开始时间",
    "timeline.column.status": "状态",
    "timeline.column.steps": "步数",
    "timeline.column.tokens": "令牌数",
    "timeline.column.task": "任务",
    "timeline.column.by": "来自",
    "timeline.column.took_over": "接管",
    "timeline.took_over_mark": "你",
    "timeline.by.popup": "弹出窗口",
    "timeline.by.panel": "侧边栏",
    "timeline.by.terminal": "终端",
    "timeline.by.page": "网页 {requester}",
    "timeline.by.mcp": "MCP 客户端 {requester}",
    "timeline.status.running": "运行中",
    "timeline.status.completed": "已完成",
    "timeline.status.error": "出错",
    "timeline.status.stopped": "已停止",
    "result.stopped": "任务已停止",
    "timeline.status.interrupted": "已中断",
    "timeline.status.denied": "已拒绝",
    "timeline.status.refused": "未获准",
    "timeline.status.withdrawn": "已撤回",
    "timeline.status.not_done": "未完成",
    "timeline.seconds": "{seconds} 秒",
    "timeline.minutes": "{minutes} 分 {seconds} 秒",
    "timeline.hours": "{hours} 小时 {minutes} 分",
    "timeline.task": "任务 {task_id}：{task}",
    "timeline.summary": "{status} · 开始于 {started} · 用时 {duration} · {steps} · {tokens}",
    "timeline.one_step": "{count} 步",
    "timeline.steps": "{count} 步",
    "timeline.tokens": "{total} 个令牌（提示 {prompt}，补全 {completion}）",
    "timeline.no_events": "（没有记录任何事件）",
    "timeline.url": "页面：{url}",
    "timeline.model": "模型：{model}",
    "timeline.asked_by.page": "由网页 {requester} 发起",
    "timeline.asked_by.mcp": "由 MCP 客户端 {requester} 发起",
    "timeline.step": "第 {number} 步：{goal}",
    "timeline.evaluation": "评估：{evaluation}",
    "timeline.action": "操作：{action}",
    "timeline.call": "调用：{call}",
    "timeline.result": "结果：{result}",
    "timeline.abandoned": "未执行：你接管了控制",
    "timeline.handed_back": "你交还了控制",
    "timeline.observation": "观察：{content}",
    "timeline.retry": "重试 {attempt}：{message}",
    "timeline.error": "错误：{message}",
    "timeline.took_over": "你接管了控制{took}",
    "timeline.took_for": "，共 {duration}",
    "timeline.more_actions": "……另有 {count} 项",
    "timeline.note": "备注：{note}",
    "timeline.result_of": "结果（{verdict}）：{data}",
    "timeline.verdict.success": "成功",
    "timeline.verdict.failed": "失败",
    "timeline.verdict.finished": "已结束",
    "timeline.verdict.not_done": "未完成",
    "timeline.verdict.stopped": "已停止",
    "timeline.verdict.never_ran": "未运行",
    "timeline.not_run.denied": "{requester} 请求运行此任务，你拒绝了（或未及时回答）。",
    "timeline.not_run.refused": "{requester} 请求运行此任务，tabpilot 拒绝了它（未获允许，或与你允许的方式不符）。",
    "timeline.not_run.withdrawn": "{requester} 请求运行此任务，但在你回答之前请求已被撤回"
                                  "（提出请求的页面已离开、程序不再等待，或 tabpilot 的助手已停止）。",
    "timeline.not_run.why": "原因（按记录）：{why}",
    "timeline.no_result.interrupted": "结果：无：运行此任务的进程在任务完成前停止了。",
    "timeline.no_result.running": "结果：暂无：任务仍在运行。",
    "timeline.no_result": "结果：没有记录（{status}）。",
    "settings.cannot_read": "无法读取设置文件 {path}：{reason}",
    "settings.not_json": "设置文件 {path} 不是有效的 JSON（第 {line} 行：{reason}）；请修正或删除它",
    "settings.not_object": "设置文件 {path} 必须是一个 JSON 对象；请修正或删除它",
    "settings.bad_value": "设置文件 {path} 中有错误的值：{detail}",
    "settings.unknown": "没有 {names} 这项设置；可用的设置有：{known}",
    "settings.invalid": "{detail}",
    "setting.problem": "{name}：{problem}",
    "wire.invalid": "无效的 {kind}：{problems}",
    "wire.field_problem": "字段 '{name}'：{problem}",
    "wire.true_false": "必须是 true 或 false",
    "wire.id": "必须是最多 {chars} 个字符的文本，或绝对值不超过 {number} 的整数",
    "setting.problems_separator": "；",
    "setting.whole_number": "必须是整数，例如 40",
    "setting.number": "必须是数字，例如 120",
    "setting.on_off": "必须是 on 或 off",
    "setting.text": "必须是文本",
    "setting.missing": "不能缺少",
    "setting.list": "必须是列表",
    "setting.one_of": "必须是以下之一：{choices}",
    "setting.at_least": "不能小于 {limit}",
    "setting.at_most": "不能大于 {limit}",
    "setting.more_than": "必须大于 {limit}",
    "setting.url": "必须是 http:// 或 https:// 开头的网址，例如 https://api.openai.com/v1",
    "setting.one_line": "必须是一行可见字符（不能含控制字符或改变文字方向的字符）",
    "setting.too_long": "不能超过 {limit} 个字符",
    "setting.too_many": "最多 {limit} 项",
    "domains.not_domain": "{text!r} 不是域名：请给出带点的主机名（例如 example.com）、localhost 或 IP 地址",
    "domains.not_list": "应为域名列表，例如 example.com, shop.example",
    "setting.not_pattern": "{pattern} 不是有效的正则表达式：{reason}",
    "setting.other": "{message}",
    "regex.at": "{what}（第 {character} 个字符处）",
    "regex.other": "{message}",
    "regex.unterminated_set": "[ 没有对应的 ]",
    "regex.unclosed_group": "( 没有对应的 )",
    "regex.unbalanced": ") 前面没有对应的 (",
    "regex.nested_repeat": "重复的部分本身又无限重复，比如 (a+)+：在某些页面上可能永远算不完；请改成只重复一次",
    "regex.nothing_to_repeat": "重复符号（*、+ 或 ?）前面没有内容",
    "regex.multiple_repeat": "连续出现了两个重复符号",
    "regex.trailing_backslash": "末尾有一个单独的 \\",
    "regex.bad_escape": "无效的转义 {detail}",
    "regex.bad_range": "字符范围 {detail} 的顺序反了",
    "regex.bad_repeat": "重复次数的最小值大于最大值",
    "regex.unknown_extension": "未知的分组写法 {detail}",
    "regex.lookbehind": "后行断言必须是固定长度",
    "regex.unknown_group": "未知的分组名 {detail}",
    "regex.bad_group_name": "分组名中有无效字符 {detail}",
    "mcp_config.which_client": "tabpilot mcp config：请指明客户端：--client {clients}",
    "mcp_config.add_this": "（把它加到 {path}，或加上 --write 再运行一次）",
    "mcp_config.added": "已把 tabpilot 加入 {client} 的 MCP 服务器（{path}）；重启 {client} 后即可使用。",
    "mcp_config.already": "tabpilot 已经在 {client} 的 MCP 服务器（{path}）中，内容相同：没有改动。",
    "install.launcher": "启动程序：{path}",
    "install.registry": "（注册表 HKCU\\{key}）",
    "install.registered": "已为 {label} 注册：{path}{where}",
    "install.allowed_ids": "允许的扩展：{ids}",
    "install.in_use": (
        "正在运行的浏览器（pid {pid}，{program}）使用自己的配置文件夹 {profile}，不会读取上面的文件夹；"
        "要也为它注册：{command}"
    ),
    "install.next": (
        "下一步：打开 chrome://extensions，开启“开发者模式”，点击“加载已解压的扩展程序”并选择\n"
        "  {folder}\n"
        "扩展会在几秒内自己找到主机（它会不断重试）；在它的弹出窗口中按“立即重新连接”可马上连接。\n"
        "无需重启浏览器。`tabpilot doctor` 会检查这一切。"
    ),
    "uninstall.removed": "已删除 {path}",
    "uninstall.nothing": "没有可删除的内容：主机没有在那里注册",
    "extension_path.missing": "tabpilot：扩展文件夹不见了（{folder}）；{fix}",
    "config.ask_key": "API 密钥：",
    "config.unknown": "没有 {key!r} 这项设置；可用的设置有：{keys}",
    "config.unknown_close": "没有 {key!r} 这项设置；是指 {close} 吗？",
    "config.not_set": "（未设置）",
    "config.none": "（无）",
    "config.key_from_env": "（未设置；使用环境变量 OPENAI_API_KEY）",
    "config.base_from_env": "（未设置；使用环境变量 OPENAI_BASE_URL：{url}）",
    "config.model_deadline": "{seconds} 秒（一次模型调用，含重试）",
    "config.max_reply": "{mb} MB（读取的模型回复的最大大小）",
    "config.any_domain": "（所有未被屏蔽的域名）",
    "config.ask_before": "{value}（never | irreversible | every：智能体何时等待你的同意）",
    "config.use_vision": "{value}（是否给模型看截图：auto、on 或 off）",
    "config.language_from_terminal": "{value}（未设置：沿用终端的语言）",
    "config.file": "设置文件：{path}",
    "config.no_key": "没有给出 API 密钥（应通过 stdin 传入）",
    "config.no_key_typed": "没有输入 API 密钥，所以没有保存任何内容：请再运行一次，在提示处粘贴密钥（输入时不显示）",
    "config.cancelled": "已取消，没有保存任何内容",
    "config.give_value": "请给出一个值：tabpilot config set {key} VALUE",
    "config.give_choice": "请给出 {choices} 之一：tabpilot config set {key} VALUE",
    "config.set": "{key} 已设为 {value}",
    "config.debug_on": "从现在起，原始的 LLM 请求和回复（其中含有页面内容）会保存在任务历史中。",
    "config.reset": "{key} 已恢复为 {value}",
    "config.cannot_save": "无法保存设置文件 {path}：{reason}",
    "popup.no_secret": "没有名为 {name} 的机密",
    "popup.delete_running": "该任务仍在运行，请先停止它",
    "popup.question_closed": "这个问题已经关闭（已经回答过，或已超时）",
    "popup.no_question": "任务 {task_id} 没有等待回答的问题",
    "popup.no_approval": "任务 {task_id} 没有等待你批准的操作",
    "popup.no_host_task": "此主机上没有任务 {task_id!r}（它可能早已结束）",
    "popup.not_running": "任务 {task_id} 没有在运行",
    "popup.starting": "正在启动",
    "popup.tab_busy": "这个标签页中已经有任务在运行（{task_id}）；请先停止它，或换一个标签页",
    "popup.cannot_open": "无法打开 {url}：{error}",
    "popup.which_to_stop": "有 {count} 个任务在运行（{ids}）；请指明要停止哪一个（taskId）",
    "popup.not_taken_over": "用户没有任务 {task_id} 的控制权",
    "popup.actions_not_taken_over": (
        "用户没有任务 {task_id} 的控制权（没有 task.takeover，或已经交还）：这些操作没有被记录"
    ),
    "popup.no_takeover_ended": "任务 {task_id} 没有在等待页面迟到回应的接管：这些操作没有被记录",
    "secrets.ask_value": "{name} 的值（输入时不显示）：",
    "secrets.no_value": "没有给出值（请在提示时输入，或通过 stdin 传入）",
    "secrets.saved": "已将 {name} 保存到 {backend}，可在 {domain}（及其子域名）上使用",
    "secrets.saved_address": "已将 {name} 保存到 {backend}，仅可在 {domain} 这个地址上使用",
    "secrets.login_fields": "仅登录字段",
    "secrets.any_field": "任意字段",
    "secrets.unknown": "没有名为 {name} 的机密（见 `tabpilot secrets list`）",
    "secrets.deleted": "已删除 {name}",
    "secrets.backend.file": "仅所有者可读写的文件 {path}",
    "secrets.backend.keychain": "系统钥匙串",
    "secrets.bad_name": (
        "{name!r} 不能用作机密名称：请以字母开头，后面是字母、数字、_ . 或 -（最多 64 个），例如 GITHUB_PASSWORD"
    ),
    "secrets.cannot_read": "无法读取机密文件 {path}：{reason}",
    "secrets.damaged": "机密文件 {path} 已损坏（{reason}）；请修正它，或删除它后重新设置机密",
    "secrets.too_short": "机密的值至少需要 {length} 个字符",
    "secrets.keychain_refused": (
        "系统钥匙串拒绝了这个机密（{reason}）；设置 {variable}=file 可改为保存在仅所有者可读写的文件中"
    ),
    "secrets.cannot_save": "无法保存机密文件 {path}：{reason}",
    "secrets.cancelled": "已取消，没有保存任何内容",
    "secrets.none": "还没有机密。可用 `tabpilot secrets set NAME --domain example.com` 添加一个。",
    # --- the command line's progress, remedies and polish (commands/run.py, output.py, doctor, install) ---
    "error.how_to_configure_key": (
        "可用 `tabpilot config set api-key`（输入时不显示）、环境变量 OPENAI_API_KEY 或 --api-key 提供一个。"
    ),
    "error.key_for_another_address": (
        "尚未为 {base_url} 配置 API 密钥：保存的密钥（或 OPENAI_API_KEY）只会发给当初为它设置的地址。"
        "要继续使用 {base_url}，请连同密钥一起保存：先 `tabpilot config set base-url {base_url}`，"
        "再 `tabpilot config set api-key`（输入时不显示）；或者设置 OPENAI_BASE_URL={base_url} 和 OPENAI_API_KEY；"
        "或者用 --api-key。"
    ),
    "progress.starting_browser": "正在启动浏览器…",
    "progress.connecting": "正在连接浏览器…",
    "progress.opening": "正在打开 {url}…",
    "progress.thinking": "第 {step} 步 · 思考中…",
    "progress.acting": "第 {step} 步 · {doing}…",
    "progress.seconds": " {{seconds}} 秒",
    "run.remedy": "   → {remedy}",
    "remedy.endpoint": (
        "请确认 {base_url} 上的服务器正在运行，并且接口地址正确（--base-url，或 "
        "`tabpilot config set base-url <url>`）；`tabpilot doctor` 可以检查它。"
    ),
    "remedy.slow": (
        "模型服务器很慢或负载过高：稍后再运行这个任务，或者给一次模型调用更长的时间"
        "（`tabpilot config set model-deadline <秒数>`）。"
    ),
    "remedy.busy": "服务商繁忙或出错：等一分钟后再运行这个任务，或者换一个模型。",
    "remedy.bad_reply": (
        "该端点的回答不像 OpenAI 兼容的 API：请检查接口地址（--base-url，或 "
        "`tabpilot config set base-url <url>`）；`tabpilot doctor` 可以检查它。"
    ),
    "remedy.bad_call": (
        "模型没有正确调用智能体的工具：再运行一次这个任务，或者换一个支持工具调用的模型"
        "（--model，或 `tabpilot config set model <name>`）。"
    ),
    "remedy.rejected": (
        "请检查模型名称和接口地址（`tabpilot config set model <name>`、`tabpilot config set base-url <url>`）；"
        "`tabpilot doctor` 可以检查它们。"
    ),
    "remedy.filtered": "请换一种说法描述任务，或者换一个模型。",
    "remedy.context": "请使用上下文窗口更大的模型（--model），或者换一个需要页面内容更少的任务。",
    "remedy.max_steps": (
        "可用 --max-steps N（或 `tabpilot config set max-steps N`）提高上限，或者把任务拆成更小的几个。"
    ),
    "remedy.browser": "浏览器在任务进行中关闭或崩溃了：请再运行一次。",
    "remedy.page_busy": "页面正忙（脚本一直不结束，或者对话框一直开着）：请重新加载或关闭它，然后再运行一次任务。",
    "doctor.warnings": "没有问题，有 {count} 个警告：见上面的 WARN",
    "install.no_profile": (
        "{path} 不存在，它所在的文件夹（{parent}）也不存在：路径是不是输错了？请给出启动浏览器时用的文件夹"
        "（--user-data-dir=DIR）；如果是新的配置文件夹，请先创建它的上一级文件夹。"
    ),
    "install.created_profile": "已创建配置文件夹 {path}（用 --user-data-dir={path} 启动浏览器）",
    "profile.new": (
        "{path} 还不存在：浏览器会在那里新建一个空的配置文件夹（没有任何登录信息或 Cookie）。"
        "要使用你自己的登录信息，请给出你的浏览器保存配置的文件夹。"
    ),
    "install.next_profile": (
        "下一步：打开 chrome://extensions，打开“开发者模式”，点击“加载已解压的扩展程序”，然后选择\n"
        "  {folder}\n"
        "扩展会在几秒内自己找到本机助手（它会不断重试）；在它的弹出窗口中按“立即重新连接”可马上连接。\n"
        "无需重启浏览器。`tabpilot doctor --user-data-dir {profile}` 会检查这一切。"
    ),
    "host.on_a_terminal": (
        "tabpilot host 是浏览器为 tabpilot 扩展启动的辅助程序（它在标准输入和输出上收发分帧消息）：不需要你手动运行。"
        "要设置它：tabpilot install；要检查它：tabpilot doctor。按 Ctrl-D 退出。"
    ),
    "mcp.on_a_terminal": (
        "tabpilot mcp 通过标准输入和输出提供 MCP 服务：由 MCP 客户端（Claude Desktop、Cursor、VS Code）启动它，"
        "而不是由你手动启动。要把它加入某个客户端：tabpilot mcp config --client claude-desktop|cursor|vscode "
        "[--write]。按 Ctrl-C 退出。"
    ),
}

CATALOG: dict[Language, dict[str, str]] = {"en-US": EN_US, "zh-CN": ZH_CN}


def environment_language(environ: Mapping[str, str] | None = None) -> Language:
    """The terminal's language from the POSIX locale variables, in their order of precedence."""
    environ = os.environ if environ is None else environ
    for name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"):
        value = environ.get(name)
        if value:
            return language_of(value.split(":")[0])
    return DEFAULT_LANGUAGE


# The values a message repeats that whoever sent them chose (a popup, a page, a local program, the command line):
# each is shown as textsafety.quoted shows it, never whole.
# A URL a message names: a page chose it, and a note or a takeover's account stays in the history every later prompt
# repeats (a page's link took a task to a URL of 500,000 characters; a takeover that ended there said it whole).
URL_LIMIT = 1000
QUOTED_VALUES = frozenset({"name", "domain", "pattern", "task_id", "text", "origin", "host", "site", "requester",
                           "client", "key", "option", "prefix"})


def text(key: str, language: str | None = None, /, **values: object) -> str:
    """The message `key` in `language` (English for a language or key the catalog lacks), filled in. A value
    that is itself worded (Words, WordedError, or a list of them) is worded in the same language; one named in
    QUOTED_VALUES is cut short and its controls shown (textsafety.quoted); a `url` is cut to URL_LIMIT characters
    (textsafety.short_url)."""
    language = language_of(language)
    template = CATALOG[language].get(key, EN_US[key])
    filled = {name: _worded(value, language) for name, value in values.items()}
    for name, value in filled.items():
        if name in QUOTED_VALUES and isinstance(value, str):
            filled[name] = quoted(value, escaped=f"{{{name}!r}}" in template)
        elif name == "url" and isinstance(value, str):
            filled[name] = short_url(value, URL_LIMIT)
    return _fill_chinese(template, filled) if language == "zh-CN" else template.format(**filled)


_HAN_OR_FULL_WIDTH = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")


def _fill_chinese(template: str, values: Mapping[str, object]) -> str:
    """`template.format(**values)` as Chinese writes it: the catalog puts a space either side of a value, as
    a Latin word or number needs between Chinese characters ("尚未为 {base_url} 配置"); next to a value that
    itself begins or ends in Chinese ("配置文件夹 /tmp/x") that space goes ("尚未为配置文件夹 /tmp/x 注册")."""
    formatter = string.Formatter()
    said = ""
    for literal, field, spec, conversion in formatter.parse(template):
        if literal.startswith(" ") and _HAN_OR_FULL_WIDTH.match(said[-1:]) and _HAN_OR_FULL_WIDTH.match(literal[1:2]):
            literal = literal[1:]  # a Chinese value, then the sentence goes on in Chinese
        said += literal
        if field is None:
            continue
        value = formatter.convert_field(formatter.get_field(field, (), values)[0], conversion)
        shown = formatter.format_field(value, formatter.vformat(spec or "", (), values))
        if said.endswith(" ") and _HAN_OR_FULL_WIDTH.match(said[-2:-1]) and _HAN_OR_FULL_WIDTH.match(shown[:1]):
            said = said[:-1]  # the sentence in Chinese, then a value beginning in Chinese
        said += shown
    return said


def _worded(value: object, language: Language) -> object:
    if isinstance(value, Words | WordedError):
        return value.text(language)
    if isinstance(value, list) and value and all(isinstance(item, Words | WordedError) for item in value):
        return text("setting.problems_separator", language).join(item.text(language) for item in value)
    return value


# --- the command line's help and argparse's own words (cli.py), by their English -------------------------
# gettext's way: a help text is written once, in English, where its argument is defined; its Chinese is
# found here by that English (tests/test_cli_help.py checks every one of them has it). argparse's own
# texts ("usage: ", "invalid choice: …") are its msgids, with its %-placeholders.
ZH_CN_COMMAND_LINE: dict[str, str] = {
    # argparse's own (Python 3.11's msgids)
    "usage: ": "用法：",
    ":": "：",  # after a section heading ("options:")
    "positional arguments": "位置参数",
    "options": "选项",
    "show this help message and exit": "显示此帮助信息并退出",
    "show program's version number and exit": "显示程序的版本号并退出",
    "%(prog)s: error: %(message)s\n": "%(prog)s：错误：%(message)s\n",
    "argument %(argument_name)s: %(message)s": "参数 %(argument_name)s：%(message)s",
    "invalid choice: %(value)r (choose from %(choices)s)": "无效的选择：%(value)r（可选：%(choices)s）",
    "invalid %(type)s value: %(value)r": "无效的 %(type)s 值：%(value)r",
    "the following arguments are required: %s": "缺少以下必需参数：%s",
    "unrecognized arguments: %s": "无法识别的参数：%s",
    "expected one argument": "需要一个参数",
    "expected at most one argument": "最多需要一个参数",
    "expected at least one argument": "至少需要一个参数",
    "expected %s argument": "需要 %s 个参数",
    "expected %s arguments": "需要 %s 个参数",
    "ambiguous option: %(option)s could match %(matches)s": "有歧义的选项：%(option)s 可能是 %(matches)s",
    "not allowed with argument %s": "不能与参数 %s 一起使用",
    "one of the arguments %s is required": "需要参数 %s 中的一个",
    "ignored explicit argument %r": "忽略了显式参数 %r",
    "can't open '%(filename)s': %(error)s": "无法打开 '%(filename)s'：%(error)s",
    # tabpilot's own (cli.py and each commands/<name>.py's configure)
    "An AI agent that works in the browser you use.": "在你使用的浏览器中工作的 AI 智能体。",
    "print a page exactly as the model sees it": "按模型看到的样子原样打印一个页面",
    "run a task in a browser, printing each step": "在浏览器中运行一个任务，并打印每一步",
    "replay a bundled scripted model on a bundled page (no API key needed)":
        "在自带的页面上重放自带的脚本模型（无需 API 密钥）",
    "list, show, export or delete past tasks": "列出、显示、导出或删除过去的任务",
    "show or change settings (model, base URL, API key, ...)": "显示或修改设置（模型、Base URL、API 密钥……）",
    "values the agent may type on one site without the model seeing them":
        "智能体可以在某个网站上输入、而模型看不到的值",
    "which web sites may start tasks in your browser: list, allow, revoke":
        "哪些网站可以在你的浏览器中启动任务：列出、允许、撤销",
    "register the native messaging host with your browsers": "向你的浏览器注册原生消息主机",
    "remove the native messaging host registration that install wrote": "删除 install 写入的原生消息主机注册",
    "print the folder to load as an unpacked extension": "打印要作为已解压扩展加载的文件夹",
    "check the installation and say how to fix each problem": "检查安装情况，并说明如何修复每个问题",
    "serve MCP clients (Claude Desktop, Cursor, VS Code): tasks run in your browser":
        "为 MCP 客户端（Claude Desktop、Cursor、VS Code）提供服务：任务在你的浏览器中运行",
    "run the native messaging host (the browser starts this itself)": "运行原生消息主机（浏览器会自己启动它）",
    "the page to open (needed, but with --cdp-url: without it, that browser's current tab)":
        "要打开的页面（默认：使用 --cdp-url 时，为那个浏览器的当前标签页）",
    "print {url, title, text, elements: [{index, tag, name, ...}]} as JSON":
        "以 JSON 打印 {url, title, text, elements: [{index, tag, name, ...}]}",
    "show the launched browser window": "显示启动的浏览器窗口",
    "launch the browser without a window (the default)": "启动不显示窗口的浏览器（默认）",
    "use a running browser's DevTools endpoint (ws:// or http://)": "使用一个正在运行的浏览器的 DevTools 端点（ws:// 或 http://）",
    "the browser to launch: chrome, chromium, edge, brave, or the path of its program (default: found)":
        "要启动的浏览器：chrome、chromium、edge、brave，或它的程序路径（默认：自动查找）",
    "launch on this browser profile (its logins and cookies) instead of a temporary one":
        "使用这个浏览器配置文件夹（其中的登录状态和 Cookie）启动，而不是临时的",
    "page load timeout (default 30)": "页面加载超时秒数（默认 30）",
    "what the agent should do, in plain words ('-': read it from standard input, for a task longer than a command "
    "line takes)": "智能体要做什么，用平常的话说（'-'：从标准输入读取，用于命令行放不下的长任务）",
    "open this page first": "先打开这个页面",
    "work in an already running browser (ws://… or http://host:port)": "在一个已经运行的浏览器中工作（ws://… 或 http://host:port）",
    "OpenAI-compatible endpoint, e.g. http://localhost:11434/v1": "OpenAI 兼容的端点，例如 http://localhost:11434/v1",
    "model name": "模型名称",
    "API key; other users of this computer can see it in the process list while the task runs: prefer "
    "`tabpilot config set api-key` or the OPENAI_API_KEY environment variable":
        "API 密钥；任务运行期间，这台电脑的其他用户能在进程列表中看到它：最好用 "
        "`tabpilot config set api-key` 或环境变量 OPENAI_API_KEY",
    "give up after N steps (default 40)": "N 步后放弃（默认 40）",
    "send the model screenshots with the element numbers drawn on: auto (when the model takes images), on, off "
    "(default: the use-vision setting, auto)":
        "把标有元素编号的截图发给模型：auto（模型接受图片时）、on、off（默认：use-vision 设置，即 auto）",
    "print only the final result, as JSON": "只以 JSON 打印最终结果",
    "save the model's replies to FILE for --replay": "把模型的回复保存到 FILE，供 --replay 使用",
    "play a recording back instead of calling a model": "重放一个录制文件，而不调用模型",
    "let the agent go only to this domain and its subdomains (repeatable; added to the allowed-domains setting); "
    "a navigation anywhere else is stopped before it leaves":
        "只让智能体访问这个域名及其子域名（可重复；会加到 allowed-domains 设置上）；去往其他地方的导航在发出前就被拦下",
    "do actions that need your approval (ask-before setting: payments, sending, deleting…) without asking; without "
    "it they are asked in the terminal, or refused when standard input is not a terminal":
        "不经询问就执行需要你批准的操作（ask-before 设置：付款、发送、删除……）；不加此选项时会在终端中询问，"
        "标准输入不是终端时则拒绝",
    "show the browser window while it works": "工作时显示浏览器窗口",
    "how many tasks to list (default 50)": "列出多少个任务（默认 50）",
    "list as JSON": "以 JSON 列出",
    "only the tasks with every one of WORDS in their text or their result (any case, any language)":
        "只列出任务文字或结果中包含 WORDS 每一个词的任务（不分大小写，任何语言）",
    "only the tasks started by WHO: popup, panel, terminal, page, mcp, or a part of the page's origin or the MCP "
    "client's name that asked for them":
        "只列出由 WHO 发起的任务：popup、panel、terminal、page、mcp（或“弹出窗口”“侧边栏”“终端”“网页”），或请求它们的"
        "网页来源或 MCP 客户端名称的一部分",
    "JSON (what export always writes)": "JSON（export 总是写出 JSON）",
    "print one task as a timeline": "以时间线打印一个任务",
    "write tasks as page-agent-shaped JSON: one task as an object, several (or --all) as a list, newest first":
        "以 page-agent 格式的 JSON 写出任务：一个任务为一个对象，多个（或 --all）为一个列表，最新的在前",
    "every recorded task": "所有已记录的任务",
    "delete tasks and their events: the ones named, or --all": "删除任务及其事件：给出 ID 的那些，或用 --all 删除全部",
    "every recorded task but a running one (asks first; without a terminal, needs --yes)":
        "除正在运行的任务外的所有已记录任务（会先询问；没有终端时需要 --yes）",
    "with --all: delete without asking": "与 --all 一起用：不经询问直接删除",
    "list past tasks, newest first (the default)": "列出过去的任务，最新的在前（默认）",
    "print the stored task and its events as JSON": "以 JSON 打印保存的任务及其事件",
    "write to FILE instead of stdout": "写入 FILE，而不是标准输出",
    "print the settings (key masked) as JSON": "以 JSON 打印设置（密钥已遮盖）",
    "change one setting": "修改一项设置",
    "every setting and its value (the default)": "每一项设置及其值（默认）",
    "print one setting's value, as the list shows it (the key masked)":
        "打印一项设置的值，与列表显示的一致（密钥已遮盖）",
    "reset one setting to its default": "把一项设置恢复为默认值",
    "for api-key: omit (or -) to read it from stdin": "对于 api-key：省略（或写 -）则从标准输入读取",
    "language (en-US or zh-CN) is the language the agent works in (its instructions, its notes to the model\n"
    "and so its replies) and the language of these commands' messages (without it: the terminal's LANG). The\n"
    "extension's popup follows Chrome's own language instead.\n":
        "language（en-US 或 zh-CN）是智能体工作所用的语言（它的指令、给模型的说明，因而也是它的回复），\n"
        "也是这些命令的消息所用的语言（未设置时：终端的 LANG）。扩展的弹出窗口则跟随 Chrome 自己的语言。\n",
    "A domain matches that host and its subdomains on any port: a secret for example.com can be typed on\n"
    "https://login.example.com:8443 but not on example.org. localhost and 127.0.0.1 are different domains.\n"
    "It is typed only into a login field there (a password, user name or e-mail, or one-time-code field), never\n"
    "into a search box, a comment or any other field, unless it is stored with --any-field (e.g. an API key\n"
    "for a settings page).\n\n"
    "examples:\n"
    "  tabpilot secrets set GITHUB_PASSWORD --domain github.com      (asks for the value, without echo)\n"
    "  printf %s \"$TOKEN\" | tabpilot secrets set API_TOKEN --domain api.example.com --any-field\n"
    "  tabpilot secrets list\n"
    "  tabpilot secrets delete GITHUB_PASSWORD\n":
        "一个域名匹配该主机及其子域名，任何端口均可：example.com 的机密可以在\n"
        "https://login.example.com:8443 上输入，但不能在 example.org 上输入。localhost 和 127.0.0.1 是不同的域名。\n"
        "在那里它只会输入到登录字段（密码、用户名或电子邮件、一次性验证码字段）中，绝不会输入到搜索框、评论\n"
        "或其他字段中，除非保存时用了 --any-field（例如设置页面上的 API 密钥）。\n\n"
        "示例：\n"
        "  tabpilot secrets set GITHUB_PASSWORD --domain github.com      （不回显地询问值）\n"
        "  printf %s \"$TOKEN\" | tabpilot secrets set API_TOKEN --domain api.example.com --any-field\n"
        "  tabpilot secrets list\n"
        "  tabpilot secrets delete GITHUB_PASSWORD\n",
    "print the list as JSON": "以 JSON 打印列表",
    "the secrets' names and domains (the default; never a value)": "机密的名称和域名（默认；从不显示值）",
    "store a secret (again: replaces it); the value is read from the terminal or stdin":
        "保存一个机密（再次保存会替换它）；值从终端或标准输入读取",
    "forget a secret": "删除一个机密",
    "type it into any text field there, not only a login field (e.g. an API key); --no-any-field: login fields "
    "only; saved again with neither, it keeps its setting":
        "在那里可输入到任何文本字段，而不仅是登录字段（例如 API 密钥）；--no-any-field：仅登录字段；"
        "再次保存时两者都不写，则保留原来的设置",
    "Store a secret. Its value is asked for without echo, or read from stdin when that is not a terminal; it never "
    "goes on the command line.":
        "保存一个机密。它的值会不回显地询问，标准输入不是终端时则从标准输入读取；它从不出现在命令行上。",
    "what the model calls it, e.g. GITHUB_PASSWORD": "模型对它的称呼，例如 GITHUB_PASSWORD",
    "the site it may be typed on (and its subdomains), e.g. github.com":
        "可以输入它的网站（及其子域名），例如 github.com",
    "the allowed sites and their grants (the default)": "已允许的网站及其授权（默认）",
    "let one origin start tasks (again: replaces its grants)": "让一个来源启动任务（再次允许会替换它的授权）",
    "take a site's permission away": "收回一个网站的权限",
    "ask an always-allowed MCP client again before its next task":
        "让一个“始终允许”的 MCP 客户端在下一个任务前再次询问",
    "replace page-agent's token: pages holding the old one lose access":
        "更换 page-agent 令牌：持有旧令牌的页面将失去访问权限",
    "exactly scheme://host[:port], e.g. https://app.example.com":
        "严格为 scheme://host[:port]，例如 https://app.example.com",
    "ask in the browser before each task": "每个任务前在浏览器中询问",
    "a task that names no model of its own may use yours (your key stays with your endpoint)":
        "没有指定自己模型的任务可以使用你的模型（你的密钥只发往你的端点）",
    "the site may ask for all your tabs (experimentalIncludeAllTabs)":
        "该网站可以请求使用你的所有标签页（experimentalIncludeAllTabs）",
    "the client's name, as `tabpilot sites list` shows it": "客户端的名称，与 `tabpilot sites list` 显示的一致",
    "which browser (default: every one installed on this computer or with a settings folder for this user)":
        "哪个浏览器（默认：这台电脑上安装的、或这个用户有设置文件夹的每一个浏览器）",
    "register for the one profile folder a browser was started with (--user-data-dir=DIR)":
        "只为某个浏览器启动时使用的配置文件夹（--user-data-dir=DIR）注册",
    "also allow this extension id (e.g. a copy loaded from another folder); repeatable":
        "同时允许这个扩展 ID（例如从另一个文件夹加载的副本）；可重复",
    "which browser (default: all of them)": "哪个浏览器（默认：全部）",
    "remove it from the one profile folder a browser was started with (--user-data-dir=DIR)":
        "从某个浏览器启动时使用的配置文件夹（--user-data-dir=DIR）中删除",
    "which browser (default: every one `tabpilot install` registers for)":
        "哪个浏览器（默认：`tabpilot install` 注册的每一个）",
    "check only the one profile folder a browser was started with (--user-data-dir=DIR)":
        "只检查某个浏览器启动时使用的配置文件夹（--user-data-dir=DIR）",
    "do not contact the configured LLM endpoint": "不连接已配置的 LLM 端点",
    "config: print (or --write) the entry that starts this server in an MCP client":
        "config：打印（或用 --write 写入）在 MCP 客户端中启动这个服务器的配置项",
    "with config: which MCP client's config file": "与 config 一起用：哪个 MCP 客户端的配置文件",
    "with config: merge the entry into that client's config file (other entries kept)":
        "与 config 一起用：把配置项合并进那个客户端的配置文件（保留其他配置项）",
    "run tasks in a Chromium of its own instead of your browser (no extension needed)":
        "在它自己的 Chromium 中运行任务，而不是你的浏览器（无需扩展）",
    "launch: when your browser is not reachable (not open, no tabpilot host), run the task in a Chromium of its own "
    "instead of failing":
        "launch：当你的浏览器无法连接（没有打开、没有 tabpilot 主机）时，在它自己的 Chromium 中运行任务，而不是失败",
    "with --launch or --fallback launch: no browser window":
        "与 --launch 或 --fallback launch 一起用：不显示浏览器窗口",
    "run tasks in the browser at this DevTools endpoint": "在这个 DevTools 端点的浏览器中运行任务",
    "with --launch or --fallback launch: the browser to launch: chrome, chromium, edge, brave, or the path of its "
    "program (default: found)":
        "与 --launch 或 --fallback launch 一起用：要启动的浏览器：chrome、chromium、edge、brave，"
        "或它的程序路径（默认：自动查找）",
    "ask: the person allows each new MCP client in the tabpilot popup (default in your browser); always: run without "
    "asking (the default, and the only choice, with --launch/--cdp-url, which have no popup to ask in)":
        "ask：由用户在 tabpilot 弹出窗口中允许每个新的 MCP 客户端（在你的浏览器中时的默认值）；always：不经询问直接运行"
        "（使用 --launch/--cdp-url 时的默认值，也是唯一的选择，因为那里没有可以询问的弹出窗口）",
    "with --approve ask: refuse when nobody answered within S seconds (default 120)":
        "与 --approve ask 一起用：S 秒内无人回答则拒绝（默认 120）",
    "the calling extension's origin (Chromium passes it)": "调用方扩展的来源（由 Chromium 传入）",
}


def command_line_text(english: str, language: str | None) -> str:
    """A command-line help text or argparse message in `language`, found by its English (itself when the
    language is English or the text has no translation)."""
    if language_of(language) == "zh-CN":
        return ZH_CN_COMMAND_LINE.get(english, english)
    return english


class Words:
    """A message from the catalog by key, worded when it is read: `str()` is the English, `text(language)`
    the reader's language. Used as a value of another message (a setting's problem inside an error)."""

    def __init__(self, key: str, /, **values: object) -> None:
        self.key, self.values = key, values

    def text(self, language: str | None) -> str:
        return text(self.key, language, **self.values)

    def __str__(self) -> str:
        return self.text("en-US")

    def __repr__(self) -> str:
        return f"Words({self.key!r}, {self.values!r})"


class WordedError(ValueError):
    """An error whose message comes from the catalog by key: `str()` is the English (what logs and older
    callers read), `text(language)` the same message in the reader's language."""

    def __init__(self, key: str, **values: object) -> None:
        super().__init__(text(key, "en-US", **values))
        self.key, self.values = key, values

    def text(self, language: str | None) -> str:
        return text(self.key, language, **self.values)


def value_problem(item: Mapping[str, Any], choices: tuple[object, ...] = ()) -> WordedError | Words:
    """One of pydantic's errors (`ValidationError.errors()` item) in the catalog's words: the common kinds
    (a number, a bound, one of `choices`), a validator's own WordedError; any other kind as pydantic says it."""
    kind, ctx = item["type"], item.get("ctx") or {}
    error = ctx.get("error")
    if kind == "value_error" and isinstance(error, WordedError):
        return error  # one of our validators, already worded
    if kind in ("int_parsing", "int_type", "int_from_float"):
        return Words("setting.whole_number")
    if kind in ("float_parsing", "float_type", "finite_number"):
        return Words("setting.number")
    if kind in ("bool_parsing", "bool_type"):
        return Words("setting.on_off")
    if kind == "string_type":
        return Words("setting.text")
    if kind == "list_type":
        return Words("setting.list")
    if kind == "missing":
        return Words("setting.missing")
    if kind == "literal_error" and (choices or ctx.get("expected")):
        return Words("setting.one_of", choices=", ".join(map(str, choices)) if choices else ctx["expected"])
    bounds = {"greater_than_equal": ("ge", "setting.at_least"), "less_than_equal": ("le", "setting.at_most"),
              "greater_than": ("gt", "setting.more_than")}
    if kind in bounds and bounds[kind][0] in ctx:
        limit, key = ctx[bounds[kind][0]], bounds[kind][1]
        return Words(key, limit=f"{limit:g}" if isinstance(limit, float) else limit)
    if kind in ("string_too_long", "too_long") and "max_length" in ctx:
        return Words("setting.too_long" if kind == "string_too_long" else "setting.too_many", limit=ctx["max_length"])
    message = str(item["msg"]).removeprefix("Value error, ")
    return Words("setting.other", message=f"{message[:1].lower()}{message[1:]}")


def dotted(location: tuple[int | str, ...]) -> str:
    """A field's place in the input as pydantic's `loc` gives it, joined by dots ("config.maxSteps")."""
    return ".".join(map(str, location))


def listed_problems(error: ValidationError, key: str = "setting.problem", *,
                    name: Callable[[tuple[int | str, ...]], str] = dotted,
                    problem: Callable[[ErrorDetails], WordedError | Words] = value_problem,
                    most: int | None = None) -> list[Words]:
    """Each of `error`'s problems (the first `most`) as the message `key` ("{name}: {problem}"), the field named
    from its location by `name` and the problem worded by `problem`: read in the reader's language."""
    items = error.errors(include_url=False)[:most]
    return [Words(key, name=name(item["loc"]), problem=problem(item)) for item in items]


def shown_width(value: str) -> int:
    """How many columns a terminal gives `value` (a Chinese character takes two)."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in value)


def column(value: str, width: int, right: bool = False) -> str:
    """`value` padded to `width` columns as a terminal shows them, on the right side or (`right`) the left."""
    padding = " " * max(width - shown_width(value), 0)
    return padding + value if right else value + padding


# Every code a failure may carry → its forms ("" is the plain one); the catalog words each as
# `failure.<code>` or `failure.<code>.<form>` (llm/errors.py says what each code means).
FAILURE_CODES: dict[str, tuple[str, ...]] = {
    "not_configured": ("model", "api_key"),
    "client_closed": ("",),
    "key_refused": ("", "page"),  # page: the key a web page gave in its execute() config (params.chosen)
    "quota": ("",),
    "context_too_long": ("", "reply", "cut_off"),
    "content_filtered": ("", "reply"),
    "not_found": ("", "not_model_api"),
    "rejected": ("",),
    # the causes a retry may fix (the `cause` of retries_exhausted / deadline)
    "rate_limited": ("", "html"),
    "server_error": ("", "html"),
    "timeout": ("",),
    "unreachable": ("", "refused"),
    "connection_cut": ("", "reset"),
    "reply_too_large": ("",),
    "bad_reply": ("unreadable", "too_deep", "html", "not_json", "not_object", "provider_error", "no_choices"),
    "bad_call": ("", "arguments", "no_call"),
    # what ended a model call after retryable causes
    "retries_exhausted": ("",),
    "deadline": ("", "asked"),
    # the agent's own
    "max_steps": ("",),
    # the task run's (agent/loop.py, taskrun/run.py, native/tasks.py); `detail`/`reason` are as the cause says it
    "browser_failed": ("",),
    "page_busy": ("",),  # a BrowserError whose cause is a command the page never answered
    "tab_closed": ("",),
    "mask_too_slow": ("",),  # privacy/masking.py PatternTooSlow
    "crashed": ("",),
    "not_saved": ("",),
    "not_resumed": ("", "cause"),
    # why a suspended task could not go on (the `cause` of not_resumed)
    "record_incomplete": ("",),
    "tab_gone": ("",),
    "tab_busy": ("",),
}


# failure code → the name of what to do about it (the catalog's `remedy.<name>` at the terminal; MCP's own words in
# mcp/progress.py), for the failures whose words lack one. context_too_long: its plain form says it already.
REMEDIES: dict[str, str] = {
    "unreachable": "endpoint", "connection_cut": "endpoint", "timeout": "slow", "deadline": "slow",
    "rate_limited": "busy", "server_error": "busy", "reply_too_large": "bad_reply", "bad_reply": "bad_reply",
    "bad_call": "bad_call", "rejected": "rejected", "content_filtered": "filtered", "max_steps": "max_steps",
    "browser_failed": "browser", "page_busy": "page_busy",
}
REMEDY_FORMS: dict[str, tuple[str, ...]] = {"context_too_long": ("reply", "cut_off")}  # → "context"


def failure_remedy(event: Mapping[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """The name of what to do about an error event's failure (a key of REMEDIES' values, or "context") and the
    failure's params, or None when its words say it already (or it names no code). A failure after retries is
    remedied by its last cause."""
    code, params = event.get("code"), event.get("params")
    values = dict(params) if isinstance(params, Mapping) else {}
    while code in ("retries_exhausted", "deadline") and isinstance(values.get("cause"), Mapping):
        cause = values["cause"]
        code, values = cause.get("code"), {**values, **dict(cause.get("params") or {})}
    if code in REMEDY_FORMS and values.get("form") in REMEDY_FORMS[code]:
        return "context", values
    if not isinstance(code, str) or code not in REMEDIES:
        return None
    return REMEDIES[code], values


def failure_text(code: str, params: Mapping[str, object] | None = None, language: str | None = None, /) -> str:
    """The failure `code` in words, in `language`, with the terminal's remedy. `params["form"]` picks a
    wording; `params["cause"]` ({code, params}) is a nested failure, worded the same way."""
    values = dict(params or {})
    if code == "not_configured":
        return not_configured_text(str(values.get("form")), values.get("base_url"), language)
    cause = values.get("cause")
    if isinstance(cause, Mapping):
        values["cause"] = failure_text(str(cause.get("code")), cause.get("params"), language)
    attempts = values.get("attempts")
    if code in ("retries_exhausted", "deadline") and "retries" not in values and isinstance(attempts, int):
        values["retries"] = attempts - 1  # recorded before retries were counted page-agent's way
    form = values.get("form")
    if not form and values.get("chosen") == "page" and "page" in FAILURE_CODES.get(code, ()):
        form = "page"  # the remedy is the page's config, not the person's settings
    return text(f"failure.{code}.{form}" if form else f"failure.{code}", language, **values)


def not_configured_text(missing: str, base_url: object, language: str | None) -> str:
    """What is missing to call a model (`model` or `api_key`) and how to give it, at the terminal."""
    if missing == "api_key":
        said, how = text("error.no_api_key", language, base_url=base_url), text("error.how_to_configure_key", language)
    else:
        said, how = text("error.no_model", language), text("error.how_to_configure_terminal", language)
    return f"{said}{'' if said.endswith('。') else ' '}{how}"  # no space after a Chinese full stop


# The result's text of a task stopped with Stop (page-agent's words): kept so in the record and sent so to a page; a
# reader gets it in their language (`result_words`; the extension's lib/timeline.js words it by the same text).
STOPPED_MESSAGE = "Task stopped"


def result_words(data: str, language: str | None) -> str:
    """A task's result text as a reader in `language` is told it: the stop's words in that language."""
    return text("result.stopped", language) if data == STOPPED_MESSAGE else data


def event_text(event: Mapping[str, Any], language: str | None) -> str | None:
    """A retry's or error's cause in `language` when the event names it by a code the catalog words, else None
    (an older record, a code this version does not know: its English `message` stands)."""
    code, params = event.get("code"), event.get("params")
    if event.get("type") not in ("retry", "error") or not isinstance(code, str) or code not in FAILURE_CODES:
        return None
    try:
        return failure_text(code, params if isinstance(params, Mapping) else None, language)
    except (KeyError, IndexError, ValueError):  # params the catalog's words do not fit: the English stands
        return None


def step_result(action: Mapping[str, Any], language: str | None) -> str:
    """A step's result as the person reads it: the model's words (`output`), unless the action was not done because
    the person took the controls (`abandoned`), or the agent's request for them came back (handed back): the model is
    told each with instructions of its own ("what they did is in the user_takeover note…", a new user's trial)."""
    if action.get("abandoned") == "took_over":
        return text("timeline.abandoned", language)
    if action.get("name") == "request_takeover" and not action.get("notDone"):
        return text("timeline.handed_back", language)
    return str(action.get("output") or "")


def for_reader(event: Mapping[str, Any], language: str | None) -> dict[str, Any]:
    """A recorded event as sent to a reader in `language` (the popup): a retry or error that names its cause by
    code also carries `text`, that cause in the reader's language; the record keeps the English `message`. Each
    action of a takeover carries its `description` in that language (the record keeps what capture.js sent). A note
    the model was given (an observation with a `note`) carries `text`, its card's words; a guard's, what it stopped
    (`params.actionText`)."""
    if event.get("type") == "user_takeover" and isinstance(event.get("actions"), list):
        from .agent.types import describe_action

        described = [{**a, "description": describe_action(a, language)} if isinstance(a, dict) else a
                     for a in event["actions"]]
        return {**event, "actions": described}
    if event.get("type") == "observation":
        return _observation_for_reader(event, language)
    worded = event_text(event, language)
    return dict(event) if worded is None else {**event, "text": worded}


def _observation_for_reader(event: Mapping[str, Any], language: str | None) -> dict[str, Any]:
    note, params = event.get("note"), event.get("params")
    params = params if isinstance(params, Mapping) else {}
    if isinstance(note, str) and f"card.{note}" in EN_US:
        try:
            return {**event, "text": text(f"card.{note}", language, **params)}
        except (KeyError, IndexError, ValueError):  # params the catalog's words do not fit: the model's words stand
            return dict(event)
    action = _action_text(params.get("actionCode"), params, language)
    if action is None:
        return dict(event)
    site = {"site": text("approval.this_page", language)} if params.get("noSite") else {}
    return {**event, "params": {**params, "actionText": action, **site}}


def result_for_reader(result: Any, language: str | None) -> Any:
    """A task's result (page-agent's ExecutionResult) as sent to a reader in `language`: its history as the
    reader got each event (`for_reader`), so the two are the same events."""
    if isinstance(result, Mapping) and isinstance(result.get("history"), list):
        history = [for_reader(e, language) if isinstance(e, Mapping) else e for e in result["history"]]
        return {**result, "history": history}
    return result


# Why an action waits for the user's yes (the `whyCode` of a task's `approval`, guards/irreversible.py) → the
# names its `whyParams` carry; the catalog words each as `approval.why.<code>`.
APPROVAL_REASONS: dict[str, tuple[str, ...]] = {
    "name_says": ("word",),  # the word of the element's name that makes it irreversible
    "form_fields": ("kinds",),  # the sensitive kinds of fields the form has: payment, password, personal
    "every_action": (),  # ask-before: every
}


def approval_why(code: str, params: Mapping[str, Any], language: str | None = None, /) -> str:
    """Why the action waits for a yes, in `language`: `form_fields`' kinds are worded and joined here."""
    values = dict(params)
    if code == "form_fields":
        values["fields"] = text("approval.fields_and", language).join(
            text(f"approval.field.{kind}", language) for kind in values.pop("kinds"))
    return text(f"approval.why.{code}", language, **values)


# What an action waiting for the user's yes does (the `actionCode` of a task's `approval`, guards/irreversible.py) →
# the names its `actionParams` carry; the catalog words each as `approval.action.<code>`.
APPROVAL_ACTIONS: dict[str, tuple[str, ...]] = {
    "click": ("target",), "type_into": ("target",), "choose": ("option", "target"), "press": ("keys",),
    "open": ("url",), "go_back": (), "run_script": (), "upload_file": ("target",), "close_tab": (),
}


def approval_action(code: str, params: Mapping[str, Any], language: str | None = None, /) -> str:
    """What the action waiting for a yes does, in `language`: 'click button "Place order"' (点击 按钮 "Place order")."""
    values = {name: str(params[name]) for name in APPROVAL_ACTIONS[code]}
    if "target" in values:
        values["target"] = role_words(values["target"], language)
    return text(f"approval.action.{code}", language, **values)


def approval_for_reader(approval: Mapping[str, Any] | None, language: str | None) -> dict[str, Any] | None:
    """A task's `approval` as sent to a reader in `language` (the popup, the overlay): with `whyText`, its reason
    in that language, and `actionText`, what it does, when its codes are ones this version words; the English `why`
    and `action` stay as they are."""
    if approval is None:
        return None
    worded = dict(approval)
    code, params = approval.get("whyCode"), approval.get("whyParams")
    if code in APPROVAL_REASONS and isinstance(params, Mapping):
        try:
            worded["whyText"] = approval_why(str(code), params, language)
        except (KeyError, IndexError, ValueError, TypeError):  # params the catalog's words do not fit: English stands
            pass
    action = _action_text(approval.get("actionCode"), approval.get("actionParams"), language)
    if action is not None:
        worded["actionText"] = action
    return worded


def _action_text(code: object, params: object, language: str | None) -> str | None:
    """approval_action, or None for a record without the codes (older) or with ones this version does not know."""
    if not isinstance(code, str) or code not in APPROVAL_ACTIONS or not isinstance(params, Mapping):
        return None
    try:
        return approval_action(code, params, language)
    except (KeyError, IndexError, ValueError, TypeError):
        return None


# A role word in an element's description: at its start or after " via ", before its name or at its end (capture.js:
# 'button "Delete"', 'form "Login" via button "Sign in"', 'page'; guards/irreversible.py named: 'button "Place order"')
_ROLE = re.compile(r'(?:^|(?<= via ))([a-z]+)(?= "| via |$)')


def role_words(target: str, language: str | None) -> str:
    """An element's description with its role in `language` (`按钮 "Delete"`); its name is the page's and stays, as
    does a role the catalog does not word (a tag: "div")."""
    words = CATALOG[language_of(language)]
    return _ROLE.sub(lambda found: words.get(f"role.{found.group(1)}", found.group(1)), target)
