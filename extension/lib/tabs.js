// A tab opened for a task, in one place for the popup (Rerun in a new tab) and the service worker (a client's
// tabs.create). Both load this file before their own (popup.html; importScripts in service_worker.js).
"use strict";

var Tabs = globalThis.Tabs || (() => {
  // A new tab shows about:blank until its first page commits, a moment after chrome.tabs.create answers (longer
  // on a busy machine or a slow site): a task started before that was recorded, and first looked, at about:blank.
  // Resolves once the page has loaded, or after `limitMs` on a page that never finishes loading; at once for a
  // tab that is closed or was opened on about:blank.
  const FIRST_PAGE_WAIT_MS = 15000;

  function firstPageLoaded(tabId, limitMs = FIRST_PAGE_WAIT_MS) {
    return new Promise((resolve) => {
      const finish = () => {
        chrome.tabs.onUpdated.removeListener(updated);
        chrome.tabs.onRemoved.removeListener(removed);
        clearTimeout(timer);
        resolve();
      };
      const loaded = (tab) => tab.status === "complete" && !!tab.url && tab.url !== "about:blank";
      const updated = (id, change, tab) => { if (id === tabId && loaded(tab)) finish(); };
      const removed = (id) => { if (id === tabId) finish(); };
      const timer = setTimeout(finish, limitMs);
      chrome.tabs.onUpdated.addListener(updated);
      chrome.tabs.onRemoved.addListener(removed);
      chrome.tabs.get(tabId).then((tab) => {
        if (loaded(tab) || (tab.pendingUrl || tab.url) === "about:blank") finish();
      }, finish);
    });
  }

  return { firstPageLoaded };
})();
