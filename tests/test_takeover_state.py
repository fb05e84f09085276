"""The takeover a run keeps while the user has the controls (taskrun/takeover.py), browser-free: how the actions
capture.js sends are kept, and the event it becomes if its host dies before Hand back."""

from __future__ import annotations

from tabpilot.taskrun.takeover import (
    ANSWERED_LATE,
    CUT_SHORT,
    MAX_ACTIONS,
    PAGE_SILENT,
    Takeover,
    with_late_actions,
    with_late_answer,
)


def typed(value: str, target: str = 'textbox "Email"', at: int = 10) -> dict:
    return {"kind": "input", "target": target, "value": value, "url": "https://a.example/", "at": at}


def typed_again(value: str, target: str = 'textbox "Email"', at: int = 10) -> dict:
    return {**typed(value, target, at), "again": True}


def test_a_field_reported_again_after_a_pause_stays_one_action_with_its_latest_value() -> None:
    takeover = Takeover(reason="user", started_at=1)
    takeover.add([typed("ada@"), {"kind": "key", "target": 'textbox "Email"', "value": "Tab", "url": "x", "at": 11}])
    takeover.add([typed("ada@ex", target='textbox "Password"', at=12),
                  typed_again("•••", target='textbox "Password"', at=13)])
    takeover.add([typed("lyon", target='textbox "City"', at=14), typed_again("lyon", target='textbox "City"', at=15)])
    takeover.add([typed("ada@example.org", at=16)])  # the same field again after other actions: a new action
    # two fields that read alike (each cart row's "Quantity"), typed in one after the other: two actions
    takeover.add([typed("3", target='spinbutton "Quantity"', at=17), typed("5", target='spinbutton "Quantity"', at=18)])
    assert [(a["target"], a["value"]) for a in takeover.actions] == [
        ('textbox "Email"', "ada@"), ('textbox "Email"', "Tab"), ('textbox "Password"', "•••"),
        ('textbox "City"', "lyon"), ('textbox "Email"', "ada@example.org"), ('spinbutton "Quantity"', "3"),
        ('spinbutton "Quantity"', "5")]
    assert not any("again" in action for action in takeover.actions)  # how it was reported is not recorded


def test_what_two_frames_report_is_kept_in_the_order_the_person_did_it() -> None:
    """A frame reports a field up to 0.2 s after its key, each frame on its own: typing in a cross-site frame, then
    clicking in the page, arrives as the click first. The record tells it as it happened; typing resumed after
    something else was done in between is a new action, and a field typed on is still one."""
    takeover = Takeover(reason="user", started_at=1)
    click = {"kind": "click", "target": 'button "Submit"', "url": "https://a.example/", "at": 30}
    takeover.add([click])
    takeover.add([typed("Ly", target='textbox "City"', at=20)])  # its report came after the click
    takeover.add([typed_again("Lyon", target='textbox "City"', at=25)])  # typed on before the click: still one
    takeover.add([typed_again("Lyons", target='textbox "City"', at=40)])  # typed on after it: a new action
    # typing on in the city after typing in another field: never that field replaced
    takeover.add([typed("ada@", at=50), typed_again("Lyons, France", target='textbox "City"', at=60)])
    assert [(a["target"], a.get("value")) for a in takeover.actions] == [
        ('textbox "City"', "Lyon"), ('button "Submit"', None), ('textbox "City"', "Lyons"), ('textbox "Email"', "ada@"),
        ('textbox "City"', "Lyons, France")]
    told = takeover.event(url_after=None, note=None).to_prompt()
    assert told.index('"Lyon"') < told.index('Submit') < told.index('"Lyons"'), told


def test_a_long_takeover_keeps_its_first_actions_and_counts_the_rest() -> None:
    takeover = Takeover(reason="user", started_at=1)
    takeover.add([{"kind": "click", "target": f"button {i}", "url": "x", "at": i} for i in range(MAX_ACTIONS + 3)])
    assert len(takeover.actions) == MAX_ACTIONS and takeover.dropped == 3
    assert takeover.event(url_after=None, note=None).actions[-1]["description"] == "(and 3 more actions, not kept)"


def test_an_unfinished_takeover_claims_no_end_and_says_what_came_after_is_not_known() -> None:
    takeover = Takeover(reason="implicit", started_at=1, url_before="https://a.example/start")
    empty = takeover.unfinished()
    assert (empty.url_after, empty.actions) == ("https://a.example/start", [{"kind": "note", "description": CUT_SHORT}])
    takeover.add([typed("ada@", at=40)])
    event = takeover.unfinished()
    assert (event.reason, event.started_at, event.url_after) == ("implicit", 1, "https://a.example/")
    assert empty.ended_at is None and event.ended_at is None and "endedAt" not in event.to_wire()  # not known
    assert event.actions == [typed("ada@", at=40), {"kind": "note", "description": CUT_SHORT}]
    assert event.note is None and takeover.actions == [typed("ada@", at=40)]  # the takeover itself goes on unchanged


def went(target: str, url: str, at: int = 20) -> dict:
    return {"kind": "navigate", "target": target, "value": url, "url": url, "at": at}


def test_a_navigation_is_told_once_by_who_started_it_and_the_pages_own_never_as_the_persons() -> None:
    """capture.js tells a navigation to another document twice: the document left says who started it ("page" the
    person, "script" the page's own script), the one arrived at that the tab loaded it ("loaded", "reload")."""
    takeover = Takeover(reason="user", started_at=1)
    takeover.add([went("script", "https://shop.example/checkout/confirmed")])  # pushState: nothing arrives after it
    takeover.add([went("page", "https://shop.example/cart"), typed("2", target='spinbutton "Quantity"'),
                  went("loaded", "https://shop.example/cart")])  # the person's link: the arrival is the same one
    takeover.add([went("script", "https://shop.example/pay"), went("loaded", "https://shop.example/paid")])  # redirect
    takeover.add([went("reload", "https://shop.example/paid")])  # the person's reload: only the new document says it
    takeover.add([went("loaded", "https://elsewhere.example/")])  # the address bar: no document before told it
    assert [(a["target"], a["value"]) for a in takeover.actions if a["kind"] == "navigate"] == [
        ("script", "https://shop.example/checkout/confirmed"), ("page", "https://shop.example/cart"),
        ("script", "https://shop.example/pay"), ("loaded", "https://shop.example/paid"),
        ("reload", "https://shop.example/paid"), ("loaded", "https://elsewhere.example/")]
    told = takeover.event(url_after="https://elsewhere.example/", note=None).to_prompt()
    assert "the page's own script changed its address to https://shop.example/checkout/confirmed (not the user)" in told
    assert "went to https://shop.example/cart;" in told and "went to https://shop.example/checkout" not in told
    assert "the tab loaded https://shop.example/paid; reloaded the page https://shop.example/paid" in told


def test_a_batch_sent_again_after_its_host_went_is_kept_once() -> None:
    # the extension sends a batch again when the host went before answering it: that host may have kept it
    takeover = Takeover(reason="user", started_at=1)
    click = {"kind": "click", "target": 'button "Add"', "url": "x", "at": 30}
    takeover.add([typed("ada@", at=20), typed_again("ada@ex", at=25), click])
    takeover.add([typed_again("ada@ex", at=25), click, typed("lyon", target='textbox "City"', at=40)])
    assert [(a["target"], a.get("value")) for a in takeover.actions] == [
        ('textbox "Email"', "ada@ex"), ('button "Add"', None), ('textbox "City"', "lyon")]
    takeover.add([{**click, "at": 50}])  # the same button pressed again, later: a new action
    assert len(takeover.actions) == 4


def test_what_the_person_did_after_the_host_died_goes_into_the_takeover_it_cut_short() -> None:
    takeover = Takeover(reason="implicit", started_at=1, url_before="https://a.example/start")
    takeover.add([typed("ada@", at=20)])
    cut_short = takeover.unfinished().to_wire()
    late = with_late_actions(cut_short, [typed_again("ada@example.org", at=21),
                                         {"kind": "click", "target": 'button "Save"', "url": "https://a.example/b",
                                          "at": 22}])
    assert late is not None
    assert late["actions"] == [typed("ada@example.org", at=21), {"kind": "click", "target": 'button "Save"',
                                                                  "url": "https://a.example/b", "at": 22},
                               {"kind": "note", "description": CUT_SHORT}]
    assert (late["urlAfter"], late["reason"], late["startedAt"], late["urlBefore"]) == (
        "https://a.example/b", "implicit", 1, "https://a.example/start")
    assert "endedAt" not in late  # still not known
    assert with_late_actions(late, [typed("x", at=23)]) is not None  # again, later: the same takeover goes on
    handed_back = takeover.event(url_after=None, note=None).to_wire()
    assert with_late_actions(handed_back, [typed("x", at=23)]) is None  # ended by the person: nothing to add


def test_a_long_takeover_cut_short_counts_what_came_after_it_too() -> None:
    takeover = Takeover(reason="user", started_at=1)
    takeover.add([{"kind": "click", "target": f"button {i}", "url": "x", "at": i} for i in range(MAX_ACTIONS + 3)])
    late = with_late_actions(takeover.unfinished().to_wire(), [typed("late", at=10**6)])
    assert late is not None and len(late["actions"]) == MAX_ACTIONS + 2
    assert late["actions"][-2:] == [{"kind": "note", "description": "(and 4 more actions, not kept)"},
                                    {"kind": "note", "description": CUT_SHORT}]


def note(description: str) -> dict:
    return {"kind": "note", "description": description}


def test_what_a_slow_page_gives_after_hand_back_goes_into_that_takeover_and_its_note_says_so() -> None:
    """Hand back waits 1 s for the page's frames; a slow one answers later with the field still being typed in (the
    extension sends it, `takeover.late`): it is added as it would have been in time, and the note that the last of
    it may be missing says instead that the page answered late."""
    takeover = Takeover(reason="agent_request", started_at=7, url_before="https://a.example/")
    takeover.add([typed("Osaka", target='textbox "City"', at=20)])
    takeover.page_silent = True
    handed_back = takeover.event(url_after="https://a.example/", note="done", ended_at=90).to_wire()
    assert handed_back["actions"][-1] == note(PAGE_SILENT)
    late = with_late_answer(handed_back, [typed_again("Osaka Bay", target='textbox "City"', at=25)],
                            still_silent=False)
    assert late is not None
    assert late["actions"] == [typed("Osaka Bay", target='textbox "City"', at=25), note(ANSWERED_LATE)]
    assert {k: v for k, v in late.items() if k != "actions"} == {k: v for k, v in handed_back.items() if k != "actions"}
    # a frame still silent: the word that the last of it may be missing stays, after what the others gave
    still = with_late_answer(handed_back, [typed("Kobe", target='textbox "Town"', at=26)], still_silent=True)
    assert still is not None and still["actions"][-2:] == [typed("Kobe", target='textbox "Town"', at=26),
                                                           note(PAGE_SILENT)]
    # the same answer again (its host went before answering, the extension kept it): the takeover stays as it was
    assert with_late_answer(late, [typed_again("Osaka Bay", target='textbox "City"', at=25)],
                            still_silent=False) == late
    assert with_late_answer(takeover.unfinished().to_wire(), [typed("x")], still_silent=False) is None  # not ended
    takeover.page_silent = False  # the page answered in time: nothing of it comes late
    on_time = takeover.event(url_after="https://a.example/", note=None, ended_at=90).to_wire()
    assert with_late_answer(on_time, [typed("x")], still_silent=False) is None


def test_a_long_takeover_answered_late_still_counts_what_it_did_not_keep() -> None:
    takeover = Takeover(reason="user", started_at=1, page_silent=True)
    takeover.add([{"kind": "click", "target": f"button {i}", "url": "x", "at": i} for i in range(MAX_ACTIONS + 3)])
    late = with_late_answer(takeover.event(url_after=None, note=None, ended_at=5).to_wire(),
                            [typed("late", at=10**6)], still_silent=False)
    assert late is not None and len(late["actions"]) == MAX_ACTIONS + 2
    assert late["actions"][-2:] == [note("(and 4 more actions, not kept)"), note(ANSWERED_LATE)]


def test_a_takeover_the_page_did_not_answer_for_keeps_saying_so_after_its_host_dies() -> None:
    """The page did not answer when the controls came back, and the host died before it recorded the takeover: the
    next host (resuming it from its run state, or settling it as cut short) says the last of it may be missing too."""
    takeover = Takeover(reason="user", started_at=1)
    takeover.add([typed("ada@", at=20)])
    takeover.page_silent = True
    assert Takeover.from_state(takeover.state()).event(url_after=None, note=None).actions[-1] == note(PAGE_SILENT)
    cut_short = takeover.unfinished().to_wire()
    assert cut_short["actions"][-2:] == [note(PAGE_SILENT), note(CUT_SHORT)]
    late = with_late_actions(cut_short, [typed_again("ada@example.org", at=21)])
    assert late is not None
    assert late["actions"] == [typed("ada@example.org", at=21), note(PAGE_SILENT), note(CUT_SHORT)]
