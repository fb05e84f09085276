// tabpilot's in-page overlay, on the tab a task runs in (issue 10). A content script in the extension's isolated
// world that puts one host element, marked data-tabpilot-overlay, in the page (the host's walker leaves it out of the
// page state, capture.js out of the recorded actions), with a CLOSED shadow root holding one frame: the overlay's
// panel. Everything the overlay says and every field the person types in is in that frame, which the page cannot
// read, search (window.find), listen to (the person's keys stay in the frame) or reach (a frame in a shadow tree is
// not in window.frames): see overlay/panel.js. The frame is not an extension page: a page can load any page the
// manifest makes web-accessible, so one answering 200 at chrome-extension://<id>/ told every site this extension is
// installed (tests/e2e/test_unreachable.py). It is an empty document of its own (srcdoc), sandboxed with nothing
// allowed: an opaque origin no page script runs in or reads; the worker puts the panel's files into it as content
// scripts (worker/takeover.js injectPanel) once it knows the frame is this overlay's: the frame's window name is
// PANEL_NAME and a key only this script and the worker know (told over this script's port, never in the page).
// The page sees only the host element, and cannot press anything (its synthetic events are not trusted, and do not
// reach the frame).
//
// This script keeps the host element: as tall as the panel needs (it tells the worker), so no more of the page is
// covered than is shown (one size for every state, tried against a page measuring it, covered 264 px of every page
// while the agent worked there, and the top layer tells the page when a question comes anyway); put back as it was when the page removes or restyles it; in the top layer
// while the overlay asks to allow an action (lib/seen.js, injected before this file: above the page and outside its
// effects, so the panel's Allow can be seen whole; only then: anything in the top layer makes every element of the
// page "not visible" to the page's own IntersectionObserver v2, so widgets that guard their clicks with it would
// refuse the agent's); gone when the task is. In frames other than the top one it only says hello, so the worker
// tells the frame's capture script its mode; in the panel's own frame it says which frame that is.
(() => {
  "use strict";
  const PANEL_NAME = "tabpilot-panel:"; // the panel frame's window name: this, then its key
  // The panel's own frame (registered scripts run in every frame of a task tab): the worker puts the panel in it
  if (window !== window.top && window.name.startsWith(PANEL_NAME)) {
    chrome.runtime.sendMessage({ type: "frame.hello", panel: window.name, at: Date.now() }).catch(() => {});
    return;
  }
  // Injected at task start and registered for new documents. A document that loaded while another tab's
  // task had the scripts registered already runs one, idle (its hello found no task): injected again for a
  // task of its own, that one says hello again instead of a second overlay starting.
  if (typeof globalThis.__tabpilotOverlay === "function") return globalThis.__tabpilotOverlay();
  globalThis.__tabpilotOverlay = () => { if (!port) hello(); };

  const FINISHED_SHOWN_MS = 8000;
  // The panel frame's document: empty, its own (the worker fills it); nothing the page can load by an address
  const PANEL_DOC = '<!doctype html><html><head><meta charset="utf-8"></head><body></body></html>';
  // What capture.js reports as input: the overlay claims these when they are presses on itself (the host element's
  // own box: the part of the panel's frame it shows fills it, and presses in the frame never reach the page).
  const PRESS_EVENTS = ["pointerdown", "mousedown", "mouseup", "click", "keydown", "keyup", "input", "wheel",
    "touchstart", "beforeinput", "change"];

  let host = null; // the element in the page
  let frame = null; // the panel's frame, in the host's closed shadow root: kept only here
  let key = null; // the panel's key: in its URL's fragment and told to the worker, never in the page
  let port = null;
  let state = null;
  let hideTimer = null;
  let size = null; // the host box's height, as tall as the panel needs (panel.js tellSize, through the worker)

  function hello() {
    chrome.runtime.sendMessage({ type: "frame.hello", at: Date.now() }).then((reply) => {
      if (reply && reply.active && window === window.top) connect();
    }, () => { /* the worker is starting: the registered script says hello again on the next document */ });
  }

  // --- the worker ------------------------------------------------------------------------------------------
  function connect() {
    try {
      port = chrome.runtime.connect({ name: "overlay" });
    } catch (_) {
      return; // the extension was reloaded: this document's script is orphaned
    }
    port.onMessage.addListener((message) => {
      if (message.kind === "state") show(message.task);
      else if (message.kind === "size" && size && Number.isFinite(message.height)) resize(message.height);
      else if (message.kind === "close") remove();
    });
    port.onDisconnect.addListener(() => {
      port = null;
      // the worker restarted: connecting again wakes it, and it re-learns the task from the host
      setTimeout(() => { if (!port && chrome.runtime.id) connect(); }, 500);
    });
    tellKey();
  }

  function tellKey() {
    if (port && key) port.postMessage({ kind: "panel", key });
  }

  // --- the host box's size ------------------------------------------------------------------------------------
  // It does not grow over the page under a press (lib/hold.js): a press on the page just above the overlay takes the
  // controls as it goes down, and the box grew for "You have the controls" before the button came up: the release
  // landed on the overlay, and the click the person aimed went to neither (tests/e2e/test_overlay_press.py). Presses on
  // the overlay itself are its panel's own (panel.js holds its state the same way).
  const resize = Hold.until((event) => !!host && !event.composedPath().includes(host), (height) => {
    if (size) size.textContent = `:host { --tabpilot-height: ${Math.max(40, Math.min(2000, Math.round(height)))}px; }`;
  });

  // --- the host element -----------------------------------------------------------------------------------------
  // The panel's frame is as tall as the host box may ever be, and stays put at its bottom: the host box shows (and
  // takes presses on) only the part the panel needs. A frame that grew with the box was laid out anew at once while
  // the browser routed the pointer by where the frame's top had been, for a frame or two: a press on Stop as a
  // question came landed on the notice 107 px above it, and did nothing (tests/e2e/test_overlay_press.py).
  const STYLE = `
    :host { all: initial !important; position: fixed !important; right: 16px !important; bottom: 16px !important;
      z-index: 2147483647 !important; display: block !important; box-sizing: border-box !important;
      overflow: hidden !important; width: min(320px, calc(100vw - 32px)) !important;
      height: min(var(--tabpilot-height, 96px), calc(100vh - 32px), 70vh) !important; }
    iframe { position: absolute; left: 0; bottom: 0; display: block; width: 100%; height: min(calc(100vh - 32px), 70vh);
      border: 0; margin: 0; padding: 0; background: transparent; }
  `;

  function build() {
    host = document.createElement("tabpilot-overlay");
    host.setAttribute("data-tabpilot-overlay", "");
    // a landmark for screen readers; also how capture.js names it (the worker drops actions on it)
    host.setAttribute("role", "region");
    host.setAttribute("aria-label", "tabpilot");
    const root = host.attachShadow({ mode: "closed" });
    const style = document.createElement("style");
    style.textContent = STYLE;
    size = document.createElement("style");
    key = crypto.randomUUID();
    frame = document.createElement("iframe");
    frame.title = "tabpilot";
    frame.setAttribute("sandbox", ""); // an opaque origin, no script of a page's: only the extension's content scripts
    frame.name = `${PANEL_NAME}${key}`;
    frame.srcdoc = PANEL_DOC;
    // loaded: the worker finds it by its name, should the registered scripts not have said hello from it
    frame.addEventListener("load", () => { if (port) port.postMessage({ kind: "panel-loaded" }); });
    root.append(style, size, frame);
    tellKey();
    // the page may take it out of the top layer (hidePopover): it goes back while it asks to allow
    host.addEventListener("toggle", (event) => { if (asksToAllow() && event.newState === "closed") keepRaised(); });
  }

  // The page may remove or restyle the host element, or take it out of the top layer while it asks to allow: it comes
  // back as it was, up to PUT_BACK_LIMIT times a state. A page whose own MutationObserver took it out whenever it came
  // back ran that observer and this one in turn, for ever: the page hung, and the agent's reads of it failed ("the page
  // is busy"); one that changed its popover attribute back whenever it was raised hung the same way
  // (tests/e2e/test_approvals.py). Past the limit it stays where the page put it until the next state the worker posts
  // (the next step, or what the agent does next), and the worker is told, so the popup and side panel say so.
  const PUT_BACK_LIMIT = 5;
  let putBack = 0;
  let guard = null;
  let lowered = false; // the worker was told this state's question is kept out of the top layer

  function keepRaised() {
    if (host.getAttribute("popover") === "manual" && host.matches(":popover-open")) return; // where it should be
    if (putBack >= PUT_BACK_LIMIT) {
      if (!lowered && port) port.postMessage({ kind: "lowered" });
      lowered = true;
      return;
    }
    putBack += 1;
    Seen.raise(host);
  }

  function mount() {
    if (!host) build();
    const parent = document.documentElement;
    if (!parent) return;
    if (host.parentNode !== parent) parent.append(host);
    if (asksToAllow()) Seen.raise(host);
    if (!guard) {
      guard = new MutationObserver(() => {
        if (!host || !state) return;
        if (host.hasAttribute("style")) host.removeAttribute("style");
        if (host.hasAttribute("hidden")) host.removeAttribute("hidden");
        if (host.isConnected && asksToAllow()) keepRaised(); // its popover attribute changed
        if (host.parentNode !== document.documentElement) {
          guard.disconnect();
          guard = null;
          if (putBack >= PUT_BACK_LIMIT) return taken();
          putBack += 1;
          mount();
        }
      });
      guard.observe(document, { childList: true }); // the root element replaced
      guard.observe(parent, { childList: true }); // the host element removed
      guard.observe(host, { attributes: true, attributeFilter: ["style", "hidden", "popover"] });
    }
  }

  function asksToAllow() {
    return !!(state && state.status === "running" && !state.control && state.approval);
  }

  function taken() {
    if (host) host.remove();
    if (port) port.postMessage({ kind: "removed" });
  }

  function remove() {
    clearTimeout(hideTimer);
    state = null;
    if (guard) guard.disconnect();
    guard = null;
    if (host) host.remove();
  }

  function show(task) {
    clearTimeout(hideTimer);
    if (!task) return remove();
    const asked = asksToAllow();
    state = task;
    putBack = 0;
    lowered = false;
    mount();
    // a question to allow comes above whatever the page put in the top layer since (a page covering it again
    // only makes the click not count); answered, it leaves the top layer
    const asks = asksToAllow();
    if (asks && !asked) Seen.raise(host, true);
    else if (!asks) Seen.lower(host);
    if (task.status !== "running") hideTimer = setTimeout(remove, FINISHED_SHOWN_MS);
  }

  // Presses on the host element are the user's, not the page's: say so to the worker before capture.js (whose
  // listeners come after these) reports the same event as input to the page.
  for (const type of PRESS_EVENTS) {
    window.addEventListener(type, (event) => {
      if (host && event.isTrusted && event.target === host) {
        chrome.runtime.sendMessage({ type: "overlay.pressed", kind: type, at: Date.now() }).catch(() => {});
      }
    }, true);
  }

  hello();
})();
