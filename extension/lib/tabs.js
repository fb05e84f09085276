// A tab opened for a task, and whether tabpilot can work in a tab at all, in one place for the popup (Rerun in a new
// tab; Run offered or not) and the service worker (a client's tabs.create; the debugger's attach). Both load this file
// before their own (popup.html; importScripts in service_worker.js).
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

  // The browser's New Tab page refuses the debugger (a chrome:// page) and holds nothing of the person's: a task started
  // there starts on a blank page instead (the worker's attach turns it so).
  // (Chromium's is chrome://new-tab-page-third-party/ with a search engine other than Google's.)
  const NEW_TAB_PAGE =
    /^(chrome|edge|brave|vivaldi):\/\/(newtab|new-tab-page|new-tab-page-third-party)\/?([?#].*)?$|^chrome-search:\/\/local-ntp\//;
  // Pages the debugger refuses to attach to (Chromium: "Cannot access a chrome:// URL", "… a chrome-extension:// URL of
  // different extension", "The extensions gallery cannot be scripted.", "Cannot access contents of url file://…"
  // without file access). By kind: what the popup tells the person, before they press Run.
  const WEB_STORE = /^https:\/\/(chromewebstore\.google\.com|chrome\.google\.com\/webstore|microsoftedge\.microsoft\.com\/addons)([/?#]|$)/;
  const WORKABLE_SCHEMES = new Set(["http:", "https:", "data:", "blob:"]);
  const EXTENSION_SCHEMES = new Set(["chrome-extension:", "extension:", "moz-extension:"]);

  function isNewTabPage(url) {
    return NEW_TAB_PAGE.test(url || "");
  }

  // Why tabpilot cannot work in a tab at `url` ("browser", "extension", "store", "source", "file"), or null when it
  // can (a page it is not told the address of is left to the attach to judge).
  async function unworkable(url) {
    if (!url || isNewTabPage(url) || /^about:(blank|srcdoc)([?#]|$)/.test(url)) return null;
    if (WEB_STORE.test(url)) return "store";
    const scheme = (/^[a-z][a-z0-9+.-]*:/i.exec(url) || [""])[0].toLowerCase();
    if (WORKABLE_SCHEMES.has(scheme)) return null;
    if (scheme === "view-source:") return "source";
    if (EXTENSION_SCHEMES.has(scheme)) return "extension";
    if (scheme === "file:") return (await chrome.extension.isAllowedFileSchemeAccess()) ? null : "file";
    return "browser";
  }

  return { firstPageLoaded, isNewTabPage, unworkable };
})();
