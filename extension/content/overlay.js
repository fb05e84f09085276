// tabpilot's in-page overlay, on the tab a task runs in (issue 10). A content script in the extension's
// isolated world; its UI lives in a CLOSED shadow root under one host element marked
// data-tabpilot-overlay (the host's walker leaves that element out of the page state, capture.js leaves
// it out of the recorded actions). Page styles cannot reach inside; page scripts cannot find, read or
// press its buttons (they see only the host element, and their synthetic events are not trusted).
// Everything it shows comes from the service worker (the host owns the task's state). In frames other
// than the top one it only says hello, so the worker tells the frame's capture script its mode. Its words for
// what a task asks of the person come from lib/asking.js, which the worker injects before it. Allow, the one
// button that lets the agent do what it could not, counts a click only once the person could see it (lib/seen.js,
// injected before this file): the page can reach the host element, cover it with a click-through layer and draw a
// decoy where Allow is. While it asks that, the overlay is in the top layer, above the page and outside its effects
// (only then: anything in the top layer makes every element of the page "not visible" to the page's own
// IntersectionObserver v2, so widgets that guard their clicks with it would refuse the agent's). Its box is one size in
// every state (the page measures the host element). What it says of the
// task (its text, the agent's goal and questions, errors) is drawn as generated content (`say`), not text in the
// shadow root: the page's window.find() searches closed shadow roots too, and reads text there a letter at a time.
(() => {
  "use strict";
  // Injected at task start and registered for new documents. A document that loaded while another tab's
  // task had the scripts registered already runs one, idle (its hello found no task): injected again for a
  // task of its own, that one says hello again instead of a second overlay starting.
  if (typeof globalThis.__tabpilotOverlay === "function") return globalThis.__tabpilotOverlay();
  globalThis.__tabpilotOverlay = () => { if (!port) hello(); };

  const t = (key, ...subs) => chrome.i18n.getMessage(key, subs.map(String)) || key;
  const FINISHED_SHOWN_MS = 8000;
  const ALLOW_GRACE_MS = 400; // as the bridge's prompt: a click this soon after Allow is seen is not aimed at it
  const PILL = { running: "overlay_running", paused: "overlay_paused", asking: "overlay_asking" };
  // What capture.js reports as input: the overlay claims these when they are presses on itself.
  const PRESS_EVENTS = ["pointerdown", "mousedown", "mouseup", "click", "keydown", "keyup", "input", "wheel",
    "touchstart", "beforeinput", "change"];

  let host = null; // the element in the page
  let root = null; // its closed shadow root: kept only here
  let port = null;
  let state = null;
  let hideTimer = null;
  let nextId = 1;
  const waiting = new Map();
  let allowSeen = null; // Seen.watch of the Allow button

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
      else if (message.kind === "reply") {
        const done = waiting.get(message.id);
        waiting.delete(message.id);
        if (done) done(message);
      }
    });
    port.onDisconnect.addListener(() => {
      port = null;
      for (const done of waiting.values()) done({ ok: false, error: t("overlayWorkerGone") });
      waiting.clear();
      // the worker restarted: connecting again wakes it, and it re-learns the task from the host
      setTimeout(() => { if (!port && chrome.runtime.id) connect(); }, 500);
    });
  }

  function command(name, fields = {}) {
    return new Promise((resolve) => {
      if (!port) return resolve({ ok: false, error: t("overlayWorkerGone") });
      const id = nextId++;
      waiting.set(id, resolve);
      port.postMessage({ kind: "command", id, command: name, at: Date.now(), ...fields });
    });
  }

  // --- the UI ---------------------------------------------------------------------------------------------------
  // One size in every state (SIZE): the page sees the host element's box, which grew when a question came (it told
  // a page when to lay a decoy); what does not fit scrolls inside, the buttons stay in view at the bottom.
  const STYLE = `
    :host { all: initial !important; position: fixed !important; right: 16px !important; bottom: 16px !important;
      z-index: 2147483647 !important; display: block !important; box-sizing: border-box !important;
      width: min(320px, calc(100vw - 32px)) !important; height: min(240px, calc(100vh - 32px)) !important; }
    .panel { box-sizing: border-box; width: 100%; height: 100%; display: flex; flex-direction: column; padding: 10px 12px;
      font: 13px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; color: #f3f4f6; background: #111827;
      border: 1px solid #374151; border-radius: 12px; box-shadow: 0 8px 28px rgba(0,0,0,.35); }
    .body { flex: 1 1 auto; min-height: 0; overflow: auto; }
    .panel[data-state="user"], .panel[data-state="implicit"] { border-color: #f59e0b; }
    .panel[data-state="agent_request"], .panel[data-state="question"] { border-color: #60a5fa; }
    .panel[data-state="approval"] { border-color: #f87171; }
    .why { margin-top: 4px; font-weight: 400; color: #9ca3af; }
    .head { display: flex; align-items: center; gap: 8px; margin-bottom: 6px; }
    .brand { font-weight: 700; letter-spacing: .2px; }
    .pill { margin-left: auto; padding: 1px 8px; border-radius: 999px; font-size: 11px; background: #374151; }
    .pill[data-kind="running"] { background: #065f46; }
    .pill[data-kind="paused"] { background: #92400e; }
    .pill[data-kind="asking"] { background: #1e40af; }
    .task { color: #d1d5db; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
    .goal { margin-top: 4px; color: #9ca3af; }
    .notice { margin-top: 8px; padding: 8px; border-radius: 8px; background: #1f2937; font-weight: 600; }
    .reason { margin-top: 4px; font-weight: 400; white-space: pre-wrap; }
    textarea, input { box-sizing: border-box; width: 100%; margin-top: 8px; padding: 6px 8px; font: inherit;
      color: #f9fafb; background: #0b1220; border: 1px solid #4b5563; border-radius: 6px; }
    textarea { resize: none; min-height: 48px; }
    .buttons { flex: none; display: flex; gap: 6px; margin-top: 8px; justify-content: flex-end; align-items: center; }
    button { font: inherit; font-weight: 600; white-space: nowrap; padding: 6px 9px; border-radius: 6px; border: 1px solid #4b5563;
      color: #f9fafb; background: #374151; cursor: pointer; }
    button.primary { background: #2563eb; border-color: #2563eb; }
    button.danger { background: #7f1d1d; border-color: #991b1b; }
    button:disabled { opacity: .6; cursor: default; }
    .error { margin-top: 6px; color: #fca5a5; }
    [hidden] { display: none !important; }
    [data-text]::before { content: attr(data-text); }
  `;

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  // The page cannot find() generated content (a text node it can, closed shadow root or not)
  function say(node, text) {
    node.dataset.text = text || "";
  }

  const ui = {};
  function build() {
    host = document.createElement("tabpilot-overlay");
    host.setAttribute("data-tabpilot-overlay", "");
    // a landmark for screen readers; also how capture.js names it (the worker drops actions on it)
    host.setAttribute("role", "region");
    host.setAttribute("aria-label", "tabpilot");
    root = host.attachShadow({ mode: "closed" });
    const style = el("style");
    style.textContent = STYLE;
    const panel = ui.panel = el("div", "panel");
    panel.title = t("overlayLabel");
    const head = el("div", "head");
    head.append(el("span", "brand", "tabpilot"), (ui.pill = el("span", "pill")));
    ui.task = el("div", "task");
    ui.goal = el("div", "goal");
    ui.notice = el("div", "notice");
    ui.noticeTitle = el("div", "notice-title");
    ui.reason = el("div", "reason");
    ui.why = el("div", "why");
    ui.notice.append(ui.noticeTitle, ui.reason, ui.why);
    ui.note = el("textarea", "note");
    ui.note.placeholder = t("overlayNotePlaceholder");
    ui.answer = el("input", "answer");
    ui.answer.placeholder = t("overlayAnswerPlaceholder");
    ui.takeover = button("takeover", t("takeOver"), "primary");
    ui.handback = button("handback", t("handBack"), "primary");
    ui.send = button("answer", t("sendAnswer"), "primary");
    ui.allow = button("allow", t("approveAllow"), "primary");
    ui.deny = button("deny", t("approveDeny"), "danger");
    ui.stop = button("stop", t("stop"), "danger");
    ui.close = button("close", t("overlayClose"), "");
    const buttons = el("div", "buttons");
    buttons.append(ui.allow, ui.deny, ui.takeover, ui.handback, ui.send, ui.stop, ui.close);
    ui.error = el("div", "error");
    const body = el("div", "body");
    body.append(head, ui.task, ui.goal, ui.notice, ui.answer, ui.note, ui.error);
    panel.append(body, buttons);
    root.append(style, panel);
    allowSeen = Seen.watch(ui.allow, ALLOW_GRACE_MS);
    // the page may take it out of the top layer (hidePopover): it goes back while it asks to allow
    host.addEventListener("toggle", (event) => { if (asksToAllow() && event.newState === "closed") Seen.raise(host); });
    ui.answer.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && event.isTrusted) press("answer", event);
    });
  }

  function button(name, text, className) {
    const b = el("button", className, text);
    b.type = "button";
    b.dataset.command = name;
    // Only the user's real press: a page script's synthetic click is not trusted (and cannot reach here).
    b.addEventListener("click", (event) => {
      if (!event.isTrusted) return;
      if (name === "allow" && !allowSeen.seen()) return; // covered, hidden, just shown or moved: not seen
      press(name, event);
    });
    return b;
  }

  async function press(name) {
    if (name === "close") return remove();
    const fields = {};
    if (name === "handback") fields.note = ui.note.value;
    if (name === "answer") {
      fields.answer = ui.answer.value.trim();
      if (!fields.answer) return;
    }
    for (const b of [ui.allow, ui.deny, ui.takeover, ui.handback, ui.send, ui.stop]) b.disabled = true;
    say(ui.error, "");
    const reply = await command(name, fields);
    for (const b of [ui.allow, ui.deny, ui.takeover, ui.handback, ui.send, ui.stop]) b.disabled = false;
    if (!reply.ok) say(ui.error, reply.error || t("overlayFailed"));
    else if (name === "handback") ui.note.value = "";
    else if (name === "answer") ui.answer.value = "";
  }

  // The page may remove or restyle the host element: it comes back as it was.
  let guard = null;
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
        if (host.isConnected && asksToAllow()) Seen.raise(host); // its popover attribute changed
        if (host.parentNode !== document.documentElement) {
          guard.disconnect();
          guard = null;
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
    mount();
    const running = task.status === "running";
    const control = running ? task.control : null;
    const question = running ? task.question : null;
    const approval = running && !control ? task.approval : null;
    const asks = { control, question, approval };
    const kind = !running ? "finished" : Asking.pillKind(asks) || "running";
    ui.panel.dataset.state = approval ? "approval" : question ? "question" : control ? control.reason
      : running ? "running" : task.status;
    ui.pill.dataset.kind = kind;
    say(ui.pill, running ? t(PILL[kind]) : t(`status_${task.status}`));
    say(ui.task, task.task);
    ui.task.title = task.task || "";
    // nextGoal is the goal the last step's model reply gave, for the action that step took (page-agent's
    // next_goal): what the agent did last, not what it will do next
    say(ui.goal, running && !control && !question && task.nextGoal ? t("overlayLastGoal", task.nextGoal) : "");
    ui.goal.hidden = !ui.goal.dataset.text;
    const { title, reason, why } = Asking.notice(asks, t);
    say(ui.noticeTitle, title);
    say(ui.reason, reason);
    ui.reason.hidden = !reason;
    ui.notice.hidden = !title;
    say(ui.why, why);
    ui.why.hidden = !why;
    ui.allow.hidden = ui.deny.hidden = !approval;
    // a question to allow comes above whatever the page put in the top layer since (a page covering it again
    // only makes the click not count); answered, it leaves the top layer
    if (approval && !asked) Seen.raise(host, true);
    else if (!approval) Seen.lower(host);
    ui.answer.hidden = ui.send.hidden = !question;
    ui.note.hidden = ui.handback.hidden = !control;
    ui.takeover.hidden = !running || !!control;
    ui.takeover.className = question || approval ? "" : "primary"; // answering is the main way then
    ui.stop.hidden = !running;
    ui.close.hidden = running;
    if (!running) hideTimer = setTimeout(remove, FINISHED_SHOWN_MS);
  }

  // Presses on the overlay are the user's, not the page's: say so to the worker before capture.js (whose
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
