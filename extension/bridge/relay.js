// tabpilot page bridge, isolated world: relays window.PAGE_AGENT_EXT's calls (bridge/main_world.js) to the
// service worker and its answers back, and shows the "may this site run this task?" prompt.
// Only messages from this very window and origin count (a cross-origin iframe's do not), only in the
// top frame. The prompt lives in a closed shadow root and answers only trusted pointer clicks: the page's
// scripts can neither read it nor press its buttons, and no window message answers it. Nor can they
// steer the person's own click onto it: a click counts only once the prompt has been in view, whole,
// unobscured and untouched by the page's effects for a moment (lib/seen.js, loaded before this file).
(() => {
  "use strict";
  if (window.top !== window || globalThis.__tabpilotBridgeRelay) return;
  globalThis.__tabpilotBridgeRelay = true; // isolated world: invisible to the page
  const CHANNEL = "tabpilot-bridge";
  const ORIGIN = location.origin;
  const ACTIONS = new Set(["execute", "stop", "attach"]);
  const CLICK_GRACE_MS = 400; // clicks this soon after the prompt is seen are ignored (no click-through)
  let port = null;

  function toPage(message) {
    window.postMessage({ channel: CHANNEL, dir: "to-page", ...message }, ORIGIN);
  }

  function connect() {
    if (port) return port;
    port = chrome.runtime.connect({ name: "bridge" });
    port.onMessage.addListener(fromWorker);
    port.onDisconnect.addListener(() => {
      port = null;
      for (const id of open) toPage({ id, kind: "error", message: "tabpilot's extension restarted, which ends the tasks it ran; start the task again" });
      open.clear();
    });
    return port;
  }
  const open = new Set(); // call ids still waiting for their end

  window.addEventListener("message", (event) => {
    if (event.source !== window || event.origin !== ORIGIN) return;
    const data = event.data;
    if (!data || data.channel !== CHANNEL || data.dir !== "to-content" || !ACTIONS.has(data.action)) return;
    if (typeof data.id !== "string" || data.id.length > 200) return;
    const request = { id: data.id, action: data.action };
    if (data.action === "execute") {
      request.task = typeof data.task === "string" ? data.task : "";
      request.config = data.config && typeof data.config === "object" ? data.config : {};
    }
    open.add(data.id);
    try {
      connect().postMessage(request);
    } catch (error) {
      open.delete(data.id);
      toPage({ id: data.id, kind: "error", message: `tabpilot's extension is not reachable: ${error.message}` });
    }
  });

  function fromWorker(message) {
    if (!message || typeof message !== "object") return;
    if (message.kind === "approval") return showPrompt(message);
    if (message.kind === "approval.closed") return closePrompt(message.approvalId);
    if (message.kind === "result" || message.kind === "error") open.delete(message.id);
    toPage(message);
  }

  // --- the prompt ------------------------------------------------------------------------------------
  const prompts = new Map(); // approvalId → {host, watcher}
  function t(name, substitutions) {
    return chrome.i18n.getMessage(name, substitutions) || name;
  }

  function showPrompt({ approvalId, requester, task, expiresAt }) {
    if (prompts.has(approvalId)) return;
    const host = document.createElement("tabpilot-prompt");
    host.style.setProperty("all", "initial", "important");
    host.style.setProperty("position", "fixed", "important");
    host.style.setProperty("inset", "16px 16px auto auto", "important");
    host.style.setProperty("z-index", "2147483647", "important");
    host.style.setProperty("display", "block", "important");
    const root = host.attachShadow({ mode: "closed" });
    const style = document.createElement("style");
    style.textContent = `
      .box { font: 14px/1.4 system-ui, sans-serif; color: #1d1d1f; background: #fff; width: 340px;
             border: 1px solid #c7c7cc; border-radius: 10px; box-shadow: 0 8px 28px rgba(0,0,0,.25); padding: 14px 16px; }
      .title { font-weight: 600; margin: 0 0 6px; }
      .who { font-weight: 600; word-break: break-all; }
      .task { margin: 6px 0 12px; padding: 8px; background: #f2f2f7; border-radius: 6px; white-space: pre-wrap;
              max-height: 160px; overflow: auto; word-break: break-word; }
      .note { font-size: 12px; color: #6e6e73; margin: 0 0 12px; }
      .left { font-size: 12px; color: #6e6e73; margin: -6px 0 12px; }
      .hint { font-size: 13px; font-weight: 600; color: #8a4b00; margin: -6px 0 12px; }
      .buttons { display: flex; gap: 8px; justify-content: flex-end; }
      button { font: inherit; padding: 6px 16px; border-radius: 6px; border: 1px solid #c7c7cc; background: #fff; cursor: pointer; }
      button.run { background: #0a64d8; border-color: #0a64d8; color: #fff; }
      button.task-more { margin: -6px 0 12px; padding: 2px 10px; font-size: 12px; }`;
    const box = document.createElement("div");
    box.className = "box";
    box.setAttribute("role", "alertdialog");
    const title = document.createElement("p");
    title.className = "title";
    title.textContent = t("bridgePromptTitle");
    const line = document.createElement("div");
    const who = document.createElement("span");
    who.className = "who";
    PageText.set(who, PageText.quote(PageText.site(requester)));
    line.append(who, document.createTextNode(` ${t("bridgePromptWants")}`));
    const quoted = document.createElement("div");
    quoted.className = "task";
    // all of it readable, a long one on asking (lib/task_text.js)
    const shown = TaskText.fill(quoted, task, (count) => t("taskShowAll", [count.toLocaleString()]), (text) => `"${text}"`);
    const note = document.createElement("p");
    note.className = "note";
    note.textContent = t("bridgePromptNote");
    // As the popup's card says it: how long until the host answers no for the person (approvalLeft)
    const left = document.createElement("p");
    left.className = "left";
    const tick = () => {
      left.textContent = t("approvalLeft", String(Math.max(0, Math.ceil((expiresAt - Date.now()) / 1000))));
    };
    left.hidden = typeof expiresAt !== "number";
    if (!left.hidden) tick();
    const ticker = left.hidden ? null : setInterval(tick, 1000);
    // why a press did nothing (lib/seen.js): said, and read out by a screen reader, not dropped in silence
    const hint = document.createElement("p");
    hint.className = "hint";
    hint.setAttribute("role", "status");
    hint.hidden = true;
    const buttons = document.createElement("div");
    buttons.className = "buttons";
    const deny = document.createElement("button");
    deny.className = "deny";
    deny.textContent = t("bridgePromptDeny");
    const run = document.createElement("button");
    run.className = "run";
    run.textContent = t("bridgePromptRun");
    // Not in the page's Tab order: the person's keys are the page's (see `answer`); the popup asks the same by keyboard
    deny.tabIndex = -1;
    run.tabIndex = -1;
    buttons.append(deny, run);
    box.append(title, line, ...shown, note, left, hint, buttons);
    root.append(style, box);
    let watcher = null;
    const answer = (decision) => (event) => {
      // A page script can call click() or dispatch events on our element: those are never trusted. A trusted
      // click on a prompt the person could not see (or only just saw) was aimed at something else. So was a click
      // a key made (Enter or Space on a focused button, detail 0): the page decides where the person's Tab goes
      // next (it focuses its last field, the prompt's buttons come after it), and their Enter meant its form.
      if (!event.isTrusted || !pointed(event)) return;
      if (!watcher || !watcher.seen()) { // the person pressed, too soon or on a prompt not in view whole: say so
        hint.textContent = watcher && watcher.why() === "soon" ? t("seenTooSoon") : t("seenHidden");
        hint.hidden = false;
        return;
      }
      closePrompt(approvalId);
      try {
        connect().postMessage({ action: "approval.answer", approvalId, decision });
      } catch (_) { /* the worker is gone: the host's timeout answers no */ }
    };
    run.addEventListener("click", answer("once"));
    deny.addEventListener("click", answer("deny"));
    (document.body || document.documentElement).appendChild(host);
    // In the top layer, above the page and outside its effects (lib/seen.js)
    Seen.raise(host);
    watcher = Seen.watch(box, CLICK_GRACE_MS);
    prompts.set(approvalId, { host, watcher, ticker });
  }

  // A click the pointer made (mouse, pen, touch): a key's click has detail 0
  function pointed(event) {
    return event.detail >= 1;
  }

  function closePrompt(approvalId) {
    const prompt = prompts.get(approvalId);
    if (!prompt) return;
    prompts.delete(approvalId);
    clearInterval(prompt.ticker);
    prompt.watcher.stop();
    prompt.host.remove();
  }
})();
