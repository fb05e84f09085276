// tabpilot service worker: a relay between the native host (which runs the agent) and the browser.
// It holds no agent logic. Wire format: host/tabpilot/native/PROTOCOL.md.
"use strict";
importScripts("bridge/worker.js"); // the page bridge (window.PAGE_AGENT_EXT): its own file
importScripts("lib/tabs.js");
importScripts("lib/page_text.js"); // a page's words in the notifications, as the views show them
importScripts("lib/working.js"); // what the agent does now, for the overlays

importScripts("worker/takeover.js");
importScripts("worker/approvals.js"); // the MCP clients' requests, shown in the popup / side panel
importScripts("worker/guards.js"); // the tasks' domains as declarativeNetRequest rules
importScripts("worker/tab_tasks.js"); // each tab's last task, for a popup opened after the host that ran it went

const HOST_NAME = "com.tabpilot.host";
const EXTENSION_VERSION = chrome.runtime.getManifest().version;
const DEBUGGER_PROTOCOL = "1.3";
const BACKOFF_FIRST_MS = 500;
const BACKOFF_MAX_MS = 8000;
const HOST_REQUEST_TIMEOUT_MS = 30000;
const HOST_GONE = "host_gone"; // the code of a request the host went away under (hostDown)
const HOST_DOWN = "host_down"; // the code of a request made while no host is connected (postToHost)
const DISPATCHED_INPUT_LIMIT = 1000;
// What the popup may ask the host. Everything else (cdp.*, tabs.*) flows host → extension only.
const POPUP_REQUEST_TYPES = new Set([
  "ping", "task.start", "task.stop", "task.get", "task.list", "task.pause", "task.resume",
  "task.takeover", "task.handback", "task.answer", "task.approve",
  "settings.get", "settings.set", "settings.test", "secrets.list", "secrets.set", "secrets.delete",
  "history.list", "history.get", "history.export", "history.delete",
  "sites.list", "sites.allow", "sites.revoke", "sites.rotate", "clients.revoke",
  "approval.answer", // an MCP client's request to run a task: the person's answer (worker/approvals.js)
]);
// Host requests beyond the first protocol's: hello lists them, so a host sends them only to a worker that has them.
const OPTIONAL_HOST_REQUESTS = new Set(["cdp.batch", "cdp.input"]);
const TASK_PUSH_TYPES = new Set(["task.status", "task.activity", "task.event", "task.amended", "task.result", "task.control"]);
// Takeover requests the worker carries out itself on the way to the host (worker/takeover.js): the tab's
// input is refused at once, recorded actions are sent first.
const TAKEOVER_REQUEST_TYPES = new Set(["task.takeover", "task.handback", "task.answer", "task.approve"]);
const BRIDGE_PUSH_TYPES = new Set(["sites.changed", "approval.request", "approval.closed"]); // popups hear them too

// --- state (memory only; the host owns everything long-lived) ---------------------------------------
const host = {
  port: null,
  connected: false, // true once the host answered hello
  hostVersion: null,
  error: null, // why it is down (chrome.runtime.lastError message)
  backoffMs: BACKOFF_FIRST_MS,
  retryAt: null,
  retryTimer: null,
  nextId: 1,
  pending: new Map(), // request id → {resolve, reject, timer}
  chunks: new Map(), // chunkId → {count, parts}
};
const attachedTabs = new Set();
const popupPorts = new Set();
// Every input command (Input.dispatch*, insertText, ime*, synthesize*) this worker relayed: how the
// takeover feature tells its own input from the user's (CDP input is isTrusted like a real mouse).
// Never exposed to pages.
const dispatchedInput = [];
const SELF_INPUT_METHOD = /^Input\.(dispatch|insertText|ime|synthesize)/;

// --- native host connection ------------------------------------------------------------------------
function connectHost() {
  clearTimeout(host.retryTimer);
  host.retryTimer = null;
  host.retryAt = null;
  if (host.port) return;
  let port;
  try {
    port = chrome.runtime.connectNative(HOST_NAME);
  } catch (error) {
    hostDown(String(error && error.message ? error.message : error));
    return;
  }
  host.port = port;
  port.onMessage.addListener((message) => onHostFrame(port, message));
  port.onDisconnect.addListener(() => {
    const reason = (chrome.runtime.lastError && chrome.runtime.lastError.message) || "The host closed the connection.";
    if (host.port === port) hostDown(reason);
  });
  // The UI's language, for the host's messages: the locale the extension's own strings were picked in
  // (getUILanguage() can say en-US under --lang=zh-CN, while the popup shows the zh_CN strings).
  const uiLanguage = chrome.i18n.getMessage("locale") || chrome.i18n.getUILanguage();
  requestHost({ type: "hello", extensionVersion: EXTENSION_VERSION, uiLanguage, features: [...OPTIONAL_HOST_REQUESTS] })
    .then((data) => {
      if (host.port !== port) return;
      host.connected = true;
      host.error = null;
      host.hostVersion = data && data.hostVersion;
      host.backoffMs = BACKOFF_FIRST_MS;
      learnTasks(data && data.tasks);
      clearStaleGuards(data && data.tasks).catch((error) => console.warn("tabpilot: stale rules:", error.message));
      broadcastHostState(data ? data.task : null);
      bridgeHostConnected();
    })
    .catch((error) => {
      // A host that cannot say hello is no use: drop it (closing its stdin ends it) and retry later.
      if (host.port === port) hostDown(`The host did not answer: ${error.message}`);
    });
}

function hostDown(reason) {
  const port = host.port;
  host.port = null;
  host.connected = false;
  host.error = reason;
  for (const [id, entry] of host.pending) {
    clearTimeout(entry.timer);
    entry.reject(Object.assign(new Error(`tabpilot host is not connected: ${reason}`), { code: HOST_GONE }));
    host.pending.delete(id);
  }
  host.chunks.clear();
  forgetAllTasks();
  forgetApprovals();
  bridgeHostDown();
  if (port) {
    try { port.disconnect(); } catch (_) { /* already gone */ }
  }
  // The task that used these tabs died with the host: release them (and their infobar).
  for (const tabId of [...attachedTabs]) {
    chrome.debugger.detach({ tabId }).catch(() => {});
    attachedTabs.delete(tabId);
  }
  const delay = host.backoffMs;
  host.backoffMs = Math.min(host.backoffMs * 2, BACKOFF_MAX_MS);
  host.retryAt = Date.now() + delay;
  host.retryTimer = setTimeout(connectHost, delay);
  broadcastHostState(null);
}

function postToHost(message) {
  if (!host.port) {
    throw Object.assign(new Error(`tabpilot host is not connected: ${host.error || "not started"}`), { code: HOST_DOWN });
  }
  host.port.postMessage(message);
}

function requestHost(message, timeoutMs = HOST_REQUEST_TIMEOUT_MS) {
  return new Promise((resolve, reject) => {
    const id = `x${host.nextId++}`;
    const timer = setTimeout(() => {
      host.pending.delete(id);
      reject(new Error(`the host did not answer ${message.type} within ${timeoutMs / 1000} s`));
    }, timeoutMs);
    host.pending.set(id, { resolve, reject, timer });
    try {
      postToHost({ ...message, id });
    } catch (error) {
      clearTimeout(timer);
      host.pending.delete(id);
      reject(error);
    }
  });
}

function onHostFrame(port, message) {
  if (host.port !== port || !message || typeof message !== "object") return;
  if (message.type === "chunk") {
    const whole = joinChunk(message);
    if (whole !== null) onHostMessage(whole);
    return;
  }
  onHostMessage(message);
}

function joinChunk({ chunkId, index, count, data }) {
  let entry = host.chunks.get(chunkId);
  if (!entry) {
    entry = { count, parts: new Array(count), received: 0 };
    host.chunks.set(chunkId, entry);
  }
  if (entry.parts[index] === undefined) entry.received += 1;
  entry.parts[index] = data;
  if (entry.received < entry.count) return null;
  host.chunks.delete(chunkId);
  try {
    return JSON.parse(entry.parts.join(""));
  } catch (error) {
    console.warn("tabpilot: a chunked message did not parse:", error.message);
    return null;
  }
}

function onHostMessage(message) {
  if (message.type === "reply") {
    const entry = host.pending.get(message.id);
    if (!entry) return;
    host.pending.delete(message.id);
    clearTimeout(entry.timer);
    if (message.ok) entry.resolve(message.data);
    else entry.reject(Object.assign(new Error((message.error && message.error.message) || "host error"), {
      code: message.error && message.error.code,
    }));
    return;
  }
  // When a question answers itself no, in this clock: the page's prompt, the popup and the side panel count down to it
  if (message.type === "approval.request") message.expiresAt = Date.now() + (message.timeoutMs || 0);
  if (message.type !== "reply" && message.id == null && bridgeOnHostPush(message)) return;
  if (TASK_PUSH_TYPES.has(message.type)) onTaskPush(message);
  if (BRIDGE_PUSH_TYPES.has(message.type)) onApprovalPush(message);
  if (TASK_PUSH_TYPES.has(message.type) || BRIDGE_PUSH_TYPES.has(message.type)) {
    broadcast({ kind: "push", message });
    return;
  }
  if (message.id !== undefined && message.id !== null) {
    handleHostRequest(message).then(
      (data) => safePost({ type: "reply", id: message.id, ok: true, data: data || {} }),
      (error) => safePost({
        type: "reply", id: message.id, ok: false,
        error: { message: error.message || String(error), ...(error.code !== undefined ? { code: error.code } : {}) },
      }),
    );
  }
}

function safePost(message) {
  try {
    postToHost(message);
  } catch (error) {
    console.warn("tabpilot: could not answer the host:", error.message);
  }
}

// --- host → extension requests: chrome.debugger and chrome.tabs ---------------------------------------
async function handleHostRequest(message) {
  switch (message.type) {
    case "cdp.attach": return attach(requireTabId(message));
    case "cdp.detach": return detach(requireTabId(message));
    case "cdp.send": return sendCommand(message);
    case "cdp.batch": return sendBatch(message);
    case "cdp.input": return sendInputRun(message);
    case "guard.rules": return setGuardRules(message);
    case "guard.clear": return clearGuardRule(message);
    case "tabs.query": return { tabs: (await chrome.tabs.query({})).filter(isAgentTab).map(tabInfo) };
    case "tabs.create": {
      // behind when the host says so (a local client's tab while a question waits for the person: endpoint.py)
      const tab = await chrome.tabs.create({ url: message.url || "about:blank", active: message.active !== false });
      await Tabs.firstPageLoaded(tab.id); // a task started there next starts on the page, not on about:blank
      return { tab: tabInfo(await chrome.tabs.get(tab.id).catch(() => tab)) };
    }
    case "tabs.activate": {
      const tab = await chrome.tabs.update(requireTabId(message), { active: true });
      await chrome.windows.update(tab.windowId, { focused: true }).catch(() => {});
      return {};
    }
    case "tabs.close": {
      await chrome.tabs.remove(requireTabId(message));
      return {};
    }
    default:
      throw Object.assign(new Error(`unknown request type ${JSON.stringify(message.type)}`), { code: "bad_request" });
  }
}

function requireTabId(message) {
  if (!Number.isInteger(message.tabId)) {
    throw Object.assign(new Error(`${message.type} needs an integer tabId`), { code: "bad_request" });
  }
  return message.tabId;
}

async function attach(tabId) {
  if (attachedTabs.has(tabId)) return {};
  await refuseUnworkableTab(tabId);
  await leaveNewTabPage(tabId);
  try {
    await chrome.debugger.attach({ tabId }, DEBUGGER_PROTOCOL);
  } catch (error) {
    // After a worker restart we may still hold the attachment from before.
    const targets = await chrome.debugger.getTargets();
    const mine = targets.find((t) => t.tabId === tabId && t.attached && !t.extensionId);
    if (!/already attached/i.test(error.message) || !mine) throw error;
  }
  attachedTabs.add(tabId);
  return {};
}

// A tab the debugger refuses is refused here first, by the rule the popup offers Run by (Tabs.unworkable), not in
// Chromium's words ("Cannot access a chrome:// URL"): the message is the rule's kind, which the host words in the
// person's language (its i18n `unworkable.<kind>`), with what to do.
async function refuseUnworkableTab(tabId) {
  const tab = await chrome.tabs.get(tabId).catch(() => null);
  const kind = tab ? await Tabs.unworkable(tab.url || tab.pendingUrl || "") : null;
  if (kind) throw Object.assign(new Error(kind), { code: "tab_unworkable" });
}

// A task started on the New Tab page, as a new user's first "Open example.com and …" is, starts on a blank page
// instead (it was refused with Chromium's "Cannot access a chrome:// URL").
const LEAVING_NEW_TAB_MS = 5000;

async function leaveNewTabPage(tabId) {
  const tab = await chrome.tabs.get(tabId).catch(() => null);
  if (!tab || !Tabs.isNewTabPage(tab.url || tab.pendingUrl || "")) return;
  const blank = (t) => t.url === "about:blank" && t.status === "complete";
  await new Promise((resolve) => {
    const finish = () => {
      chrome.tabs.onUpdated.removeListener(updated);
      clearTimeout(timer);
      resolve();
    };
    const updated = (id, change, t) => { if (id === tabId && blank(t)) finish(); };
    const timer = setTimeout(finish, LEAVING_NEW_TAB_MS); // the attach then says what is wrong
    chrome.tabs.onUpdated.addListener(updated);
    chrome.tabs.update(tabId, { url: "about:blank" }).then((t) => { if (blank(t)) finish(); }, finish);
  });
}

async function detach(tabId) {
  attachedTabs.delete(tabId);
  try {
    await chrome.debugger.detach({ tabId });
  } catch (error) {
    if (!/not attached/i.test(error.message)) throw error;
  }
  return {};
}

async function sendCommand(command) {
  const [outcome] = await sendCommands([command]);
  if (outcome.error) throw Object.assign(new Error(outcome.error.message), { code: outcome.error.code });
  return outcome.result;
}

// Several commands from one frame: all sent at once, in order (chrome.debugger keeps a tab's commands in
// the order they are sent, as a DevTools websocket does), each outcome in its place of the reply.
async function sendBatch({ commands }) {
  return { results: await sendCommands(commands) };
}

function requireCommands(commands) {
  if (!Array.isArray(commands)) {
    throw Object.assign(new Error("a batch needs a list of commands"), { code: "bad_request" });
  }
  for (const { tabId, method } of commands) {
    if (!Number.isInteger(tabId) || typeof method !== "string") {
      throw Object.assign(new Error("a CDP command needs an integer tabId and a method"), { code: "bad_request" });
    }
  }
}

// Commands sent at once. Input commands are refused while the user has the controls of their tab (the lot:
// they leave together), and share one input window (worker/takeover.js).
async function sendCommands(commands) {
  requireCommands(commands);
  const inputWindows = new Map(); // tabId → its window, or the refusal
  const sent = commands.map((command) => {
    const refusal = runRefusal(inputWindows, command);
    return refusal ? Promise.reject(refusal) : dispatch(command);
  });
  const settled = await Promise.allSettled(sent);
  for (const window of inputWindows.values()) {
    if (!(window instanceof Error)) agentInputEnded(window);
  }
  return settled.map((outcome) => (outcome.status === "fulfilled"
    ? { result: outcome.value || {} } : failedOutcome(outcome.reason)));
}

// A run of input commands (typing's key events) paced here: at most `window` unanswered at once, the next
// sent the moment the oldest is answered. Sent in windows from the host, chrome.debugger sat idle for each
// window's answer to reach the host and the next window to come back (~10 ms a window, 4 windows for 100
// characters). The user taking the controls refuses the rest of the run, unsent: what reaches the page
// after it is at most the window already on its way, as when the host paces.
async function sendInputRun({ commands, window: inFlight }) {
  requireCommands(commands);
  if (!Number.isInteger(inFlight) || inFlight < 1) {
    throw Object.assign(new Error("cdp.input needs a window of at least 1"), { code: "bad_request" });
  }
  if (!commands.every(({ method }) => method.startsWith("Input."))) {
    throw Object.assign(new Error("cdp.input takes Input.* commands only"), { code: "bad_request" });
  }
  const windows = new Map(); // tabId → its input window, or the refusal that ended the run there
  const results = new Array(commands.length);
  let next = 0;
  let failed = null; // after a command failed (the page went away…), the rest of the run is not sent
  const lane = async () => {
    while (next < commands.length) {
      const index = next++;
      const refusal = failed || runRefusal(windows, commands[index]);
      if (refusal) {
        results[index] = failedOutcome(refusal);
        continue;
      }
      try {
        results[index] = { result: (await dispatch(commands[index])) || {} };
      } catch (error) {
        failed = failed || error;
        results[index] = failedOutcome(error);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(inFlight, commands.length) }, lane));
  for (const window of windows.values()) {
    if (!(window instanceof Error)) agentInputEnded(window);
  }
  return { results };
}

// Whether a run may send this command on (null) or refuses it: its tab's input window starts with the run's
// first command there, and from the moment the user has the controls that command and the rest of the run
// there are refused (the refusal is kept in `windows`).
function runRefusal(windows, { tabId, method }) {
  if (!SELF_INPUT_METHOD.test(method)) return null; // e.g. Input.setIgnoreInputEvents: no input to the page
  const window = windows.get(tabId);
  if (window instanceof Error) return window;
  try {
    if (window === undefined) windows.set(tabId, agentInputStarted(tabId));
    else refuseInputIfTakenOver(tabId);
    return null;
  } catch (refusal) {
    if (window) agentInputEnded(window);
    windows.set(tabId, refusal);
    return refusal;
  }
}

// The one way a command reaches chrome.debugger (input is recorded as the agent's first); fails with CDP's error.
function dispatch({ tabId, sessionId, method, params }) {
  if (SELF_INPUT_METHOD.test(method)) recordDispatchedInput(tabId, sessionId, method, params || {});
  const target = sessionId ? { tabId, sessionId } : { tabId };
  return chrome.debugger.sendCommand(target, method, params || {}).catch((error) => { throw cdpError(method, error); });
}

function failedOutcome(error) {
  return { error: { message: error.message || String(error), ...(error.code !== undefined ? { code: error.code } : {}) } };
}

// chrome.debugger reports a CDP error as the JSON text of {code, message}.
function cdpError(method, error) {
  const text = error && error.message ? error.message : String(error);
  try {
    const parsed = JSON.parse(text);
    if (parsed && typeof parsed.message === "string") {
      return Object.assign(new Error(parsed.message), { code: parsed.code });
    }
  } catch (_) { /* not JSON: a chrome.debugger error such as "Debugger is not attached" */ }
  return new Error(`${method}: ${text}`);
}

function recordDispatchedInput(tabId, sessionId, method, params) {
  dispatchedInput.push({
    time: Date.now(), tabId, sessionId: sessionId || null, method,
    type: params.type || null, x: params.x ?? null, y: params.y ?? null,
    key: params.key ?? null,
    // how much text, never the text itself (it may be a password)
    textLength: typeof params.text === "string" ? params.text.length : null,
  });
  if (dispatchedInput.length > DISPATCHED_INPUT_LIMIT) dispatchedInput.splice(0, dispatchedInput.length - DISPATCHED_INPUT_LIMIT);
}

function isAgentTab(tab) {
  return !(tab.url || "").startsWith(`chrome-extension://${chrome.runtime.id}/`);
}

function tabInfo(tab) {
  return {
    tabId: tab.id, url: tab.url || tab.pendingUrl || "", title: tab.title || "", active: !!tab.active,
    openerTabId: tab.openerTabId ?? null, // which task a new tab belongs to (the one whose tab opened it)
  };
}

chrome.debugger.onEvent.addListener((source, method, params) => {
  if (source.tabId === undefined || !attachedTabs.has(source.tabId) || !host.port) return;
  const event = { type: "cdp.event", tabId: source.tabId, method, params: params || {} };
  if (source.sessionId) event.sessionId = source.sessionId;
  safePost(event);
});

// Chromium detached us: the tab closed or navigated where extensions may not go, or the user pressed
// Cancel on the debugging infobar (reason canceled_by_user: the host stops the task).
function onDebuggerDetach(source, reason) {
  if (source.tabId === undefined) return;
  attachedTabs.delete(source.tabId);
  if (host.port) safePost({ type: "cdp.detached", tabId: source.tabId, reason });
}

chrome.debugger.onDetach.addListener(onDebuggerDetach);

function pushTabEvent(event, tab) {
  if (!host.connected) return;
  if (tab.url !== undefined && !isAgentTab(tab)) return;
  safePost({ type: "tabs.event", event, tab });
}

chrome.tabs.onCreated.addListener((tab) => pushTabEvent("created", tabInfo(tab)));
chrome.tabs.onRemoved.addListener((tabId) => pushTabEvent("removed", { tabId }));
chrome.tabs.onUpdated.addListener((tabId, change, tab) => {
  if (change.url !== undefined || change.title !== undefined || change.status === "complete") {
    pushTabEvent("updated", tabInfo(tab));
  }
});

// --- popups --------------------------------------------------------------------------------------------
function hostState(task) {
  return {
    kind: "host",
    connected: host.connected,
    connecting: !!host.port && !host.connected,
    hostVersion: host.hostVersion,
    error: host.error,
    retryInMs: host.retryAt ? Math.max(0, host.retryAt - Date.now()) : null,
    task: task === undefined ? null : task,
  };
}

function broadcastHostState(task) {
  broadcast(hostState(task));
}

function broadcast(message) {
  for (const port of popupPorts) {
    try { port.postMessage(message); } catch (_) { popupPorts.delete(port); }
  }
}

chrome.runtime.onConnect.addListener((port) => {
  if (port.name !== "popup" || port.sender.id !== chrome.runtime.id) return;
  popupPorts.add(port);
  port.onDisconnect.addListener(() => popupPorts.delete(port));
  port.onMessage.addListener((message) => onPopupMessage(port, message));
  port.postMessage(hostState(null));
  replayApprovals(port);
});

async function onPopupMessage(port, message) {
  if (!message || typeof message !== "object") return;
  if (message.kind === "reconnect") {
    if (!host.port) connectHost();
    return;
  }
  if (message.kind !== "request") return;
  const request = message.request || {};
  let reply;
  try {
    if (!POPUP_REQUEST_TYPES.has(request.type)) throw new Error(`the popup may not send ${request.type}`);
    let data;
    const known = tasks.get(request.taskId);
    // Stop of a task the user has the controls of: what capture.js still holds is sent first
    if (TAKEOVER_REQUEST_TYPES.has(request.type) || (request.type === "task.stop" && known && known.control)) {
      data = await popupTakeoverRequest(request);
    } else if (request.type === "task.get" && request.taskId === undefined && request.tabId !== undefined) {
      data = await taskOfTab(request);
    } else {
      data = await requestHost(request);
      if (request.type === "task.start" && data && data.taskId) {
        learnSnapshot({ taskId: data.taskId, tabId: request.tabId, task: request.task, status: "running",
          source: request.source });
      }
    }
    // a task thinking counts its seconds on from when this worker saw it begin, in a popup opened since; one whose page
    // took its overlay away says so there
    if (request.type === "task.get" && data && data.task) Object.assign(data.task, workerViewOf(data.task.taskId));
    reply = { kind: "reply", id: message.id, ok: true, data };
  } catch (error) {
    reply = { kind: "reply", id: message.id, ok: false, error: error.message || String(error), code: error.code };
  }
  try { port.postMessage(reply); } catch (_) { /* popup closed meanwhile */ }
}

connectHost();
