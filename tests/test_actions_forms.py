"""Typing, choosing options and uploading files in a real Chromium, proven by what the page's handlers saw."""

from __future__ import annotations

import pytest
import pytest_asyncio
from actions_support import evaluate, events, ref

from tabpilot.browser import actions
from tabpilot.browser.browser import Browser
from tabpilot.browser.errors import ActionError
from tabpilot.browser.keys import typing_events

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]


@pytest_asyncio.fixture(loop_scope="module")
async def tab(browser: Browser, pages):
    tab = await browser.new_tab()
    await actions.go_to_url(browser, tab, pages.url("actions_forms.html"))
    yield tab
    if not tab.closed:
        await browser.close_tab(tab.target_id)


async def test_input_replaces_old_value_with_trusted_input(browser, tab) -> None:
    result = await actions.input_text(browser, tab, await ref(tab, "#name", name="Name"), "Ada Lovelace")
    assert result.endswith("input 'Name'; its value is now 'Ada Lovelace'.")
    inputs = await events(tab, "input")
    assert inputs[-1] == {"type": "input", "id": "name", "value": "Ada Lovelace", "trusted": True}
    assert all(i["trusted"] for i in inputs)
    assert "old name" not in inputs[-1]["value"]


async def test_typing_again_into_the_focused_field_replaces_what_was_typed(browser, tab) -> None:
    # The second time the field has the focus already: its text is selected in the same look at the field.
    name = await ref(tab, "#name", name="Name")
    await actions.input_text(browser, tab, name, "first")
    assert (await actions.input_text(browser, tab, name, "second")).endswith("its value is now 'second'.")
    keys = [k["key"] for k in await events(tab, "keyup")]
    assert keys[-7:] == ["Delete", "s", "e", "c", "o", "n", "d"]
    assert (await events(tab, "input"))[-1]["value"] == "second"


async def test_typing_into_a_field_removed_since_it_was_read_says_so(browser, tab) -> None:
    name = await ref(tab, "#name", name="Name")
    await evaluate(tab, "document.getElementById('name').remove()")
    with pytest.raises(ActionError, match=r"\[\d+\] input 'Name' is no longer on the page"):
        await actions.input_text(browser, tab, name, "lost")


async def test_typing_sends_keys_a_keyboard_would(browser, tab) -> None:
    name = await ref(tab, "#name", name="Name")
    result = await actions.input_text(browser, tab, name, "Zoë 3!\nok")
    assert result.endswith("its value is now 'Zoë 3!ok'.")  # a one-line field drops the line break
    keys = [k["key"] for k in await events(tab, "keyup") if k["key"] != "Shift"]
    assert keys == ["Delete", "Z", "o", " ", "3", "!", "o", "k"]  # clearing, then each key; no key makes "ë"
    assert all(k["trusted"] for k in await events(tab, "keyup"))


async def test_long_typing_reaches_the_page_complete_and_in_order(browser, tab) -> None:
    text = ("Héllo, World! 中文 typed fast 😀 — punctuation: a-b_c=d+e[f]{g}|h\\i;j'k\"l,m.n/o?p`q~r "
            "UPPER lower 0123456789 日本語 end 🎉é")
    assert len(text) >= 100
    result = await actions.input_text(browser, tab, await ref(tab, "#keylog", name="Key log"), text)
    assert result.endswith(f"its value is now '{text}'.")
    seen = await evaluate(tab, "window.__keylog")
    assert all(event["trusted"] for event in seen)
    # A key per character a US keyboard types (keydown, keypress, input, keyup, with Shift held around
    # where needed); each run of other characters arrives as one input event, its text as data.
    expected: list[tuple[str, str]] = []
    run = ""
    for char in text:
        if typing_events(char) is None:
            run += char
            continue
        if run:
            expected.append(("input", run))
            run = ""
        expected += [("keydown", char), ("keypress", char), ("input", char), ("keyup", char)]
    if run:
        expected.append(("input", run))
    assert [(e["type"], e["key"]) for e in seen if e["key"] != "Shift"] == expected
    # Each input event saw the value grow by exactly its data: nothing dropped, duplicated or reordered.
    values = [e["value"] for e in seen if e["type"] == "input"]
    assert values == [text[: len(value)] for value in values] and values[-1] == text
    assert await evaluate(tab, "document.getElementById('keylog').value") == text


async def test_typing_through_label_reaches_its_control(browser, tab) -> None:
    label = await ref(tab, "label", name="Name")
    await actions.input_text(browser, tab, label, "via label")
    assert await evaluate(tab, "document.getElementById('name').value") == "via label"


async def test_react_style_controlled_input_takes_the_text(browser, tab) -> None:
    result = await actions.input_text(browser, tab, await ref(tab, "#controlled", name="Controlled"), "hello")
    assert result.endswith("its value is now 'hello'.")
    # The page's own state followed (setting .value from script would have been ignored and reverted).
    assert await evaluate(tab, "document.getElementById('controlled-state').textContent") == "hello"
    assert [s["value"] for s in await events(tab, "state")] == ["", "h", "he", "hel", "hell", "hello"]


async def test_textarea_multiline_and_contenteditable(browser, tab) -> None:
    result = await actions.input_text(browser, tab, await ref(tab, "#notes"), "line one\nline two")
    assert result.endswith("its value is now 'line one line two'.")  # whitespace folded in the sentence only
    assert await evaluate(tab, "document.getElementById('notes').value") == "line one\nline two"
    result = await actions.input_text(browser, tab, await ref(tab, "#editor"), "fresh text")
    assert result.endswith("its value is now 'fresh text'.")
    edits = [e for e in await events(tab, "input") if e["id"] == "editor"]
    assert edits[-1]["value"] == "fresh text" and edits[-1]["trusted"] is True


async def test_password_value_is_never_echoed(browser, tab) -> None:
    result = await actions.input_text(browser, tab, await ref(tab, "#password", name="Password"), "s3cret-pw")
    assert "s3cret" not in result and "9 characters" in result
    assert await evaluate(tab, "document.getElementById('password').value") == "s3cret-pw"


async def test_script_cannot_hand_a_password_to_the_model(browser, tab) -> None:
    await actions.input_text(browser, tab, await ref(tab, "#password"), "hunter2-secret")
    read = "document.getElementById('password').value"
    result = await actions.execute_javascript(browser, tab, f"({{pw: {read}, len: {read}.length}})")
    assert result == 'The script returned: {"pw":"[password hidden]","len":14}'
    failed = await actions.execute_javascript(browser, tab, f"throw new Error('got ' + {read})")
    assert "hunter2" not in failed and "[password hidden]" in failed
    cleared = await actions.execute_javascript(browser, tab, f"const v = {read}; {read} = ''; v")
    assert "hunter2" not in cleared  # read before the script emptied the field


async def test_date_input_value_is_set(browser, tab) -> None:
    result = await actions.input_text(browser, tab, await ref(tab, "#when"), "2026-11-21")
    assert result.endswith("its value is now '2026-11-21'.")
    assert [e["value"] for e in await events(tab, "input") if e["id"] == "when"] == ["2026-11-21"]


async def test_input_into_wrong_kind_of_element_is_a_clear_error(browser, tab) -> None:
    with pytest.raises(ActionError, match="it is a checkbox; click it instead"):
        await actions.input_text(browser, tab, await ref(tab, "#agree"), "yes")
    with pytest.raises(ActionError, match="read-only"):
        await actions.input_text(browser, tab, await ref(tab, "#readonly"), "x")
    with pytest.raises(ActionError, match="not a text field"):
        await actions.input_text(browser, tab, await ref(tab, "h1"), "x")


async def test_native_select_by_text_fires_change(browser, tab) -> None:
    fruit = await ref(tab, "#fruit", name="Fruit")
    assert await actions.select_option(browser, tab, fruit, "banana") == (
        f"Selected 'Banana split' in [{fruit.index}] select 'Fruit'."
    )
    assert await events(tab, "change") == [{"type": "change", "id": "fruit", "value": "b"}]
    await actions.select_option(browser, tab, fruit, "Apple")
    assert await evaluate(tab, "document.getElementById('fruit').value") == "a"
    with pytest.raises(ActionError, match=r"no such option; its options are: 'Choose…', 'Apple'"):
        await actions.select_option(browser, tab, fruit, "Durian")
    with pytest.raises(ActionError, match="'Cherry' is disabled"):
        await actions.select_option(browser, tab, fruit, "Cherry")


async def test_aria_combobox_is_opened_and_option_clicked(browser, tab) -> None:
    color = await ref(tab, "#color", name="Pick a color")
    result = await actions.select_option(browser, tab, color, "Green")
    assert result == f"Selected 'Green' in [{color.index}] combobox 'Pick a color'."
    assert await events(tab, "aria-change") == [
        {"type": "aria-change", "id": "color", "value": "Green", "trusted": True}
    ]
    assert await evaluate(tab, "document.getElementById('color').textContent") == "Green"
    with pytest.raises(ActionError, match="its options are: 'Red', 'Green', 'Blue'"):
        await actions.select_option(browser, tab, color, "Purple")


async def test_aria_listbox_option_is_clicked(browser, tab) -> None:
    sizes = await ref(tab, "#sizes", name="Size")
    await actions.select_option(browser, tab, sizes, "large")
    assert await events(tab, "aria-change") == [
        {"type": "aria-change", "id": "sizes", "value": "Large", "trusted": True}
    ]
    with pytest.raises(ActionError, match="not a dropdown"):
        await actions.select_option(browser, tab, await ref(tab, "h1"), "x")


async def test_upload_file_page_sees_name_and_size(browser, tab, tmp_path) -> None:
    report = tmp_path / "report.csv"
    report.write_bytes(b"a,b\n" * 300)
    notes = tmp_path / "notes.txt"
    notes.write_text("hello")
    upload = await ref(tab, "#upload", name="Upload")
    result = await actions.upload_file(browser, tab, upload, [str(report), str(notes)])
    assert result == (f"Attached report.csv (1.2 KB), notes.txt (5 bytes) to [{upload.index}] file input 'Upload'; "
                      "it now holds 2 files.")
    files = await events(tab, "files")
    assert files == [{"type": "files", "id": "upload",
                      "files": [{"name": "report.csv", "size": 1200}, {"name": "notes.txt", "size": 5}]}]


async def test_upload_through_styled_button_and_bad_paths(browser, tab, tmp_path) -> None:
    photo = tmp_path / "photo.png"
    photo.write_bytes(b"\x89PNG" + bytes(96))
    button = await ref(tab, "#upload-button", name="Choose a file")
    await actions.upload_file(browser, tab, button, [str(photo)])
    assert (await events(tab, "files"))[-1] == {"type": "files", "id": "upload-native",
                                                 "files": [{"name": "photo.png", "size": 100}]}
    with pytest.raises(ActionError, match="There is no file at"):
        await actions.upload_file(browser, tab, button, [str(tmp_path / "missing.pdf")])
    with pytest.raises(ActionError, match="takes only one file"):
        await actions.upload_file(browser, tab, button, [str(photo), str(photo)])
    with pytest.raises(ActionError, match="not a file upload field"):
        await actions.upload_file(browser, tab, await ref(tab, "#fruit"), [str(photo)])


async def test_click_reports_toggle_state_and_selects_native_option(browser, tab) -> None:
    agree = await ref(tab, "#agree", name="Agree")
    assert await actions.click(browser, tab, agree) == f"Clicked [{agree.index}] checkbox 'Agree'. It is now checked."
    assert await evaluate(tab, "document.getElementById('agree').checked") is True
    assert (await actions.click(browser, tab, agree)).endswith("It is now unchecked.")
    color = await ref(tab, "#color", name="Pick a color")
    assert (await actions.click(browser, tab, color)).endswith("It is now expanded.")
    option = await ref(tab, "#fruit option[value=b]")
    assert (await actions.click(browser, tab, option)).startswith("Selected 'Banana split' in [")
    assert await events(tab, "change") == [{"type": "change", "id": "fruit", "value": "b"}]


async def test_upload_refuses_tabpilots_own_files_and_credentials(browser, tab, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("TABPILOT_HOME", str(tmp_path / "tabpilot"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    config = tmp_path / "tabpilot" / "config" / "config.json"
    key = tmp_path / "home" / ".ssh" / "id_ed25519"
    for secret in (config, key):
        secret.parent.mkdir(parents=True, exist_ok=True)
        secret.write_text("secret")
        with pytest.raises(ActionError, match="is not uploaded: it is in tabpilot's own files or where credentials"):
            await actions.upload_file(browser, tab, await ref(tab, "#upload"), [str(secret)])
    assert await events(tab, "files") == []  # nothing reached the page


async def test_typing_stops_within_a_window_of_commands_once_the_user_has_the_controls(browser, tab) -> None:
    """The user takes the controls while the agent types: the commands already on their way (at most one
    window) still arrive, in order; not one more leaves, and the action fails."""
    text = ("Typed By The Agent, " * 10)[:200]  # 200 characters: still typed key by key
    field = await ref(tab, "#keylog", name="Key log")
    # The page says when its 30th key went down (as the capture script reports the user's input).
    await tab.session.send("Runtime.addBinding", {"name": "__thirtiethKey"})
    await evaluate(tab, """(() => { let keys = 0; window.__keylog = [];
        document.getElementById('keylog').addEventListener('keydown', () => {
            if (++keys === 30) window.__thirtiethKey('');
        });
    })()""")
    sent: list[str] = []  # the input commands that left, as the user took over and after
    answered: list[str] = []
    send = tab.session.send

    async def counted(method: str, params: dict | None = None, **options: object) -> dict:
        if method.startswith("Input."):
            sent.append(method)
        reply = await send(method, params, **options)
        if method.startswith("Input."):
            answered.append(method)
        return reply

    at_takeover: list[tuple[int, int]] = []

    def user_takes_over(params: dict) -> None:
        if params.get("name") == "__thirtiethKey":
            tab.input_log.refused = "The user has the controls."
            at_takeover.append((len(sent), len(answered)))

    tab.session.on("Runtime.bindingCalled", user_takes_over)
    tab.session.send = counted
    try:
        with pytest.raises(ActionError, match="The user has the controls"):
            await actions.input_text(browser, tab, field, text)
    finally:
        del tab.session.send
        tab.session.off("Runtime.bindingCalled", user_takes_over)
        tab.input_log.refused = None
    [(sent_then, answered_then)] = at_takeover
    assert len(sent) == sent_then  # nothing left after the takeover
    assert sent_then - answered_then <= actions.TYPING_WINDOW  # what was on its way: one window at most
    seen = await evaluate(tab, "window.__keylog")
    assert len([e for e in seen if e["type"] in ("keydown", "keyup")]) <= sent_then
    value = await evaluate(tab, "document.getElementById('keylog').value")
    assert value and text.startswith(value) and len(value) < len(text), value  # in order, and it stopped
