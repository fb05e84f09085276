// tabpilot page bridge, page-agent's token scheme (for apps written for page-agent's extension): on every
// web page, top frame, isolated world. If the page's localStorage holds `PageAgentExtUserAuthToken`, its
// value goes to the worker, which compares it with the token tabpilot's Settings show and, on a match,
// gives this page the bridge. Nothing is added to the page, and pages without the key send nothing.
(() => {
  "use strict";
  if (window.top !== window) return;
  let token = null;
  try {
    token = window.localStorage.getItem("PageAgentExtUserAuthToken");
  } catch (_) {
    return; // storage blocked for this page
  }
  if (typeof token === "string" && token.length > 0 && token.length < 512) {
    chrome.runtime.sendMessage({ kind: "bridge.token", token }).catch(() => {});
  }
})();
