"""Keeps the extension's copy of the allowed sites (and the MCP clients always allowed) current: it asks
once (`sites.list`) and then hears `sites.changed {sites, mcpClients, token}` whenever the list changes —
from the popup, an "always" answer, or `tabpilot sites` in a terminal (another process: the host notices
the file change itself), so a running browser registers or drops the page bridge at once, without a
restart."""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

POLL_SECONDS = 0.5  # a stat() per half second: an allow in a terminal reaches the browser within it


class SiteFeed:
    def __init__(self, push: Callable[[dict[str, Any]], None]) -> None:
        self._push = push
        self._last: dict[str, Any] | None = None  # the sites and token the extension has
        self._signature: tuple[int, int, int] | None = None
        self._watcher: asyncio.Task[None] | None = None

    def view(self) -> dict[str, Any]:
        """The `sites.list` reply; from then on changes are pushed."""
        from ..store.sites import load_sites, public_view, sites_path

        view = public_view(load_sites())
        self._last = _pushed(view)
        self._signature = _signature(sites_path())
        if self._watcher is None or self._watcher.done():
            self._watcher = asyncio.get_running_loop().create_task(self._watch())
        return view

    def check(self) -> None:
        """Push `sites.changed` if the list or the token differs from what the extension last got."""
        from ..store.sites import SiteError, load_sites, public_view

        if self._last is None:
            return  # the extension has not asked yet: it will get the list when it does
        try:
            now = _pushed(public_view(load_sites()))
        except SiteError as exc:
            log.error("allowed sites unreadable: %s", exc)
            now = {"sites": [], "mcpClients": [], "token": None}  # a damaged file allows nobody
        if now != self._last:
            self._last = now
            from .messages import SitesChangedPush

            self._push(SitesChangedPush.model_validate(now).to_frame())

    async def _watch(self) -> None:
        from ..store.sites import sites_path

        path = sites_path()
        while True:
            await asyncio.sleep(POLL_SECONDS)
            signature = _signature(path)
            if signature != self._signature:
                self._signature = signature
                try:
                    self.check()
                except Exception:
                    log.exception("could not check the allowed sites")

    def close(self) -> None:
        if self._watcher is not None:
            self._watcher.cancel()


def _pushed(view: dict[str, Any]) -> dict[str, Any]:
    return {"sites": view["sites"], "mcpClients": view["mcpClients"], "token": view["token"]}


def _signature(path: os.PathLike[str]) -> tuple[int, int, int] | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return (stat.st_mtime_ns, stat.st_size, stat.st_ino)
