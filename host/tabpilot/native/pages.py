"""The host's side of the page bridge: may this web page start this task, and on whose model?

The extension says which origin asked (Chromium's word for the sending frame, never the page's); the
allowed-sites file decides (`store/sites.py`), read afresh for every task so a revoke counts at once,
also for a page that is still open. Sites allowed with "ask" wait for the user's answer
(`approvals.py`)."""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING

from .peer import RequestFailed

if TYPE_CHECKING:
    from collections.abc import Callable

    from .approvals import Approvals
    from .messages import TaskStart

HOW_TO_ALLOW = "the user can allow it from tabpilot's popup on that site, or with `tabpilot sites allow {origin}`"


async def admit_page_task(request: TaskStart, approvals: Approvals, check_free: Callable[[int], None]) -> bool:
    """Check a `source: "page"` task.start; returns whether it may use the user's own model. Raises
    RequestFailed: `not_allowed` (no such grant), `denied` (the user said no or did not answer), or what
    `check_free` raises for a tab another task holds, before the user is asked (asked first, they allowed a task
    that was then refused as busy)."""
    from ..store.sites import SiteError, SiteGrant, find, load_sites, normalize_origin, stop_asking

    if not request.origin:
        raise RequestFailed("a task started by a page must say the page's origin", "bad_request")
    try:
        origin = normalize_origin(request.origin)
        sites = load_sites()
    except SiteError as exc:
        raise RequestFailed(str(exc), "not_allowed") from exc
    grant = find(sites, origin)
    if grant is None and request.page_token and secrets.compare_digest(request.page_token.encode(),
                                                                        sites.token.encode()):  # any text
        grant = SiteGrant(origin=origin)  # page-agent's token scheme: allowed, with no further grant
    if grant is None:
        raise RequestFailed(f"{origin} may not start tasks in this browser; " + HOW_TO_ALLOW.format(origin=origin),
                            "not_allowed")
    config = request.config
    if config is not None and config.experimental_include_all_tabs and not grant.all_tabs:
        raise RequestFailed(
            f"{origin} asked for all your tabs (experimentalIncludeAllTabs) but is allowed only its own; "
            f"the user can grant all tabs in tabpilot's popup, or `tabpilot sites allow {origin} --all-tabs`",
            "not_allowed",
        )
    brings_model = config is not None and bool(config.base_url) and bool(config.model)
    if not brings_model and not grant.use_my_model:
        raise RequestFailed(
            f"{origin} named no model (baseURL and model in execute()'s config) and may not use the user's; "
            f"the user can let it in tabpilot's popup, or `tabpilot sites allow {origin} --use-my-model`",
            "not_allowed",
        )
    if grant.ask:
        check_free(request.tab_id)
        decision = await approvals.ask("page", origin, request.task, tab_id=request.tab_id)
        if decision == "always":
            stop_asking(origin)
    return grant.use_my_model
