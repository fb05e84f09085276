// tabpilot page bridge, service-worker side (loaded by service_worker.js with importScripts): registers
// bridge/main_world.js + bridge/relay.js for exactly the origins the user allowed (the host says which,
// at connect and on every change), turns a page's execute/stop/attach into task.start/task.stop/task.get
// with source "page" and the origin Chromium reports for the calling frame, streams the task's pushes to
// the page that started it (also after a reload: attach), and relays the host's approval prompts.
// Uses service_worker.js's requestHost and host; every request a page makes goes through bridgeRequestHost.
"use strict";

const BRIDGE_SCRIPTS = [
  { id: "tabpilot-bridge-relay", js: ["lib/seen.js", "lib/page_text.js", "lib/task_text.js", "bridge/relay.js"] }, // the prompt's clicks, text
  { id: "tabpilot-bridge-main", js: ["bridge/main_world.js"], world: "MAIN" },
];
// A page's task.start may wait for the user's answer to the prompt (the host gives up after 60 s).
const BRIDGE_START_TIMEOUT_MS = 90000;
// page-agent's token scheme: this probe runs on every web page and speaks only if the page holds a token.
const BRIDGE_TOKEN_PROBE = {
  id: "tabpilot-bridge-token", js: ["bridge/token_probe.js"], matches: ["http://*/*", "https://*/*"],
  runAt: "document_start", allFrames: false, persistAcrossSessions: false,
};
const BRIDGE_KEEP_ENDED = 20;
// A page's request that comes while the host is being respawned (it was killed or crashed: Chromium starts a new
// one, which says hello about 1 s later, after the first 0.5 s backoff) waits for it, as `tabpilot mcp` does (up to
// 10 s), instead of failing at once; a host not due back within that time is not waited for.
const BRIDGE_HOST_WAIT_MS = 10000;
const BRIDGE_HOST_POLL_MS = 100;
// What a page hears of its task when the host dies under it. "error" is page-agent's status for a task that failed
// (it has no "interrupted"); the record and the popup say interrupted.
const BRIDGE_HOST_BACK = "tabpilot starts a new host by itself: call PAGE_AGENT_EXT.execute() again";
const BRIDGE_HOST_STOPPED = "tabpilot's host stopped before this task finished (it was closed or crashed), so the "
  + `task was interrupted; ${BRIDGE_HOST_BACK} to run it anew`;
const BRIDGE_HOST_STOPPED_AT_START = `tabpilot's host stopped before this task started (it was closed or crashed); ${BRIDGE_HOST_BACK}`;
// A page's request while no host is connected, nor coming back (not installed for this browser, or its launcher
// fails): Chromium's reason alone ("Specified native messaging host not found.") left the app nothing to tell the
// user (a new user's trial); the popup shows the reason with the fix.
const bridgeHostDownSaid = (reason) => `tabpilot's host is not running (${reason || "not started"}); the user can `
  + "open tabpilot's popup, which says why and what to do (when tabpilot is not set up for this browser: "
  + "`tabpilot install`, then `tabpilot doctor`, in a terminal), then call PAGE_AGENT_EXT.execute() again";

const bridge = {
  sites: [], // [{origin, ask, useMyModel, allTabs}] as the host last said
  token: null, // page-agent's token, as Settings show it
  tokenTabs: new Map(), // tab → the origin whose page in that tab held the token (page-agent's scheme)
  registering: Promise.resolve(),
  tasks: new Map(), // taskId → {callerTabId, origin, port, callId, status, history, result}
  byTab: new Map(), // caller tab → the taskId its page started last
  starting: new Map(), // caller tab → the caller port whose page's task.start is under way
  promptTabs: new Map(), // task's tab → the caller port whose page shows that task's prompt
  approvals: new Map(), // approvalId → caller port
  // Ports whose page went away (reload, navigation, closed tab). What was under way for one is settled when it
  // goes (bridgePortGone): its questions are withdrawn, its start no longer holds the tab, and an answer that
  // comes for it later (a start, an attach) is not taken as the page's.
  gone: new WeakSet(),
};

// --- which sites get the bridge -----------------------------------------------------------------------------
function bridgeHostConnected() {
  requestHost({ type: "sites.list" })
    .then((data) => {
      bridge.token = data.token || null;
      bridgeRegisterTokenProbe();
      return bridgeSetSites(data.sites || []);
    })
    .catch((error) => console.warn("tabpilot: could not read the allowed sites:", error.message));
}

function bridgeSetSites(sites) {
  const before = new Set(bridge.sites.map((site) => site.origin));
  bridge.sites = Array.isArray(sites) ? sites : [];
  const matches = bridge.sites.map((site) => `${site.origin}/*`);
  const added = matches.filter((match) => !before.has(match.slice(0, -2)));
  // One change at a time, in order: the last list the host sent is what ends up registered.
  // A list that still names the same origins (a push about MCP clients, the token, a site's options) leaves
  // the scripts alone, and a changed one is updated in place: unregistering first left a moment in which a
  // page of an allowed site loaded without window.PAGE_AGENT_EXT (seen on CI).
  bridge.registering = bridge.registering.then(async () => {
    const ids = BRIDGE_SCRIPTS.map((script) => script.id);
    const existing = await chrome.scripting.getRegisteredContentScripts({ ids });
    if (!matches.length) {
      if (existing.length) await chrome.scripting.unregisterContentScripts({ ids: existing.map((s) => s.id) });
      return;
    }
    const wanted = JSON.stringify([...matches].sort());
    const scripts = BRIDGE_SCRIPTS.map((script) => ({
      ...script, matches, runAt: "document_start", allFrames: false, persistAcrossSessions: false,
    }));
    if (existing.length === ids.length) {
      if (existing.every((s) => JSON.stringify([...s.matches].sort()) === wanted)) return;
      await chrome.scripting.updateContentScripts(scripts);
      return;
    }
    if (existing.length) await chrome.scripting.unregisterContentScripts({ ids: existing.map((s) => s.id) });
    await chrome.scripting.registerContentScripts(scripts);
  }).then(() => bridgeGiveOpenPages(added))
    .catch((error) => console.warn("tabpilot: could not register the page bridge:", error.message));
  return bridge.registering;
}

// A site just allowed gets the bridge in the pages of it already open, without a reload (the registered
// scripts reach only pages loaded from now on). Both files do nothing a second time in a page.
async function bridgeGiveOpenPages(matches) {
  if (!matches.length) return;
  for (const tab of await chrome.tabs.query({ url: matches })) {
    const target = { tabId: tab.id, frameIds: [0] };
    try {
      for (const { js, world } of BRIDGE_SCRIPTS) {  // in their order: the relay listens before the page's side speaks
        await chrome.scripting.executeScript({ target, files: js, injectImmediately: true, ...(world && { world }) });
      }
    } catch (error) {
      console.warn("tabpilot: could not give an open page the bridge:", error.message);
    }
  }
}

function bridgeSiteOf(origin) {
  return bridge.sites.find((site) => site.origin === origin) || null;
}

// May this caller use the bridge: its origin is allowed, or its page held page-agent's token at load.
function bridgeAllowed(caller) {
  return !!bridgeSiteOf(caller.origin) || bridge.tokenTabs.get(caller.tabId) === caller.origin;
}

function bridgeRegisterTokenProbe() {
  bridge.registering = bridge.registering.then(async () => {
    const existing = await chrome.scripting.getRegisteredContentScripts({ ids: [BRIDGE_TOKEN_PROBE.id] });
    if (!existing.length) await chrome.scripting.registerContentScripts([BRIDGE_TOKEN_PROBE]);
  }).catch((error) => console.warn("tabpilot: could not register the token probe:", error.message));
}

// A page that holds the token gets the bridge now (it missed document_start: page-agent's own pages wait
// up to a second for it). A wrong token gets nothing, and no answer that says so.
chrome.runtime.onMessage.addListener((message, sender) => {
  if (!message || message.kind !== "bridge.token" || !sender.tab || sender.frameId !== 0 || !sender.origin) return;
  bridge.tokenTabs.delete(sender.tab.id);
  if (!bridge.token || message.token !== bridge.token || bridgeSiteOf(sender.origin)) return;
  bridge.tokenTabs.set(sender.tab.id, sender.origin);
  const target = { tabId: sender.tab.id, frameIds: [0] };
  chrome.scripting.executeScript({ target, files: BRIDGE_SCRIPTS[0].js, injectImmediately: true })
    .then(() => chrome.scripting.executeScript({ target, files: ["bridge/main_world.js"], world: "MAIN", injectImmediately: true }))
    .catch((error) => console.warn("tabpilot: could not give a token page the bridge:", error.message));
});

// --- host pushes ------------------------------------------------------------------------------------------------
// True when the push was the bridge's alone.
function bridgeOnHostPush(message) {
  switch (message.type) {
    case "sites.changed":
      if (message.token !== undefined && message.token !== bridge.token) {
        bridge.token = message.token; // a new token: pages allowed by the old one are no longer
        bridge.tokenTabs.clear();
      }
      bridgeSetSites(message.sites || []);
      return false; // the popup's allowed-sites list listens too
    case "approval.request": {
      const port = message.kind === "page" ? bridge.promptTabs.get(message.tabId) : null;
      if (!port) return false; // not a page's question (MCP): for the popup / side panel
      if (bridge.gone.has(port)) { // the page left while its start was on the way: nobody to ask for
        bridgeWithdraw(message.approvalId);
        return true; // nor is it shown in the popup or side panel
      }
      bridge.approvals.set(message.approvalId, port);
      bridgePost(port, {
        kind: "approval", approvalId: message.approvalId, requester: message.requester, task: message.task,
        expiresAt: message.expiresAt,
      });
      return false; // the popup and the side panel show it too: answered in either, it goes from both
    }
    case "approval.closed": {
      const port = bridge.approvals.get(message.approvalId);
      bridge.approvals.delete(message.approvalId);
      if (port) bridgePost(port, { kind: "approval.closed", approvalId: message.approvalId });
      return false;
    }
    case "task.status": case "task.activity": case "task.event": case "task.amended": case "task.result":
      bridgeOnTaskPush(message);
      return false; // the popup shows page tasks too
    default:
      return false;
  }
}

function bridgeOnTaskPush(message) {
  const entry = bridge.tasks.get(message.taskId);
  if (!entry) return;
  if (message.type === "task.status") {
    entry.status = message.status;
    bridgeTell(entry, { kind: "status", status: message.status });
  } else if (message.type === "task.activity") {
    bridgeTell(entry, { kind: "activity", activity: message.activity });
  } else if (message.type === "task.event") {
    entry.history.push(message.event);
    bridgeTell(entry, { kind: "history", history: entry.history });
  } else if (message.type === "task.amended") { // in place of the event it amends (PROTOCOL.md)
    const { type, startedAt } = message.event || {};
    const at = entry.history.findLastIndex((event) => event && event.type === type && event.startedAt === startedAt);
    if (at < 0) return;
    entry.history[at] = message.event;
    bridgeTell(entry, { kind: "history", history: entry.history });
  } else if (message.type === "task.result") {
    entry.result = message.result;
    bridgeTell(entry, { kind: "result", result: message.result });
    entry.callId = null;
    bridgeForgetOld();
  }
}

// The host died (killed or crashed; hostDown in service_worker.js): the pages' tasks died with it. Each ends for
// its page now, as a failure that says so (else its execute() waited for ever and the page's next one was refused
// as "still running"), and a prompt of the dead host goes (nobody is left to answer it).
function bridgeHostDown() {
  for (const entry of bridge.tasks.values()) {
    if (entry.result) continue;
    entry.status = "error";
    entry.result = { success: false, data: BRIDGE_HOST_STOPPED, history: entry.history };
    bridgeTell(entry, { kind: "status", status: entry.status });
    bridgeTell(entry, { kind: "result", result: entry.result });
    entry.callId = null;
  }
  bridgeForgetOld();
  for (const [approvalId, port] of bridge.approvals) bridgePost(port, { kind: "approval.closed", approvalId });
  bridge.approvals.clear();
}

function bridgeTell(entry, message) {
  if (!entry.port || !entry.callId) return;
  let told = message;
  if (message.kind === "history") told = { ...message, history: bridgeHistoryFor(message.history, entry.origin) };
  if (message.kind === "result" && message.result && Array.isArray(message.result.history)) {
    told = { ...message, result: { ...message.result, history: bridgeHistoryFor(message.result.history, entry.origin) } };
  }
  const known = message.kind === "result" && message.result && Array.isArray(message.result.history)
    ? message.result.history : entry.history;
  const hide = bridgeHider(known, entry.origin);
  for (const field of ["history", "activity", "result"]) {
    if (field in told) told = { ...told, [field]: hide(told[field]) };
  }
  bridgePost(entry.port, { ...told, id: entry.callId });
}

// What the person did while they had the controls, as the page that started the task may see it: all of it in its
// own origin's documents; elsewhere (another site's sign-in or payment frame, another site they went to) that they
// did something, not what: the values (text typed, options chosen, keys, addresses) hidden as capture.js hides a
// password's, those documents' addresses cut to their origin, and no `description` (the host's words hold the
// value). The person's record, the popup and the model keep everything. Events are sent camelCased (urlBefore).
const BRIDGE_HIDDEN = "•••";

function bridgeHistoryFor(history, origin) {
  if (!Array.isArray(history)) return history;
  return history.map((event) => (event && event.type === "user_takeover" ? bridgeTakeoverFor(event, origin) : event));
}

function bridgeTakeoverFor(event, origin) {
  const originOf = (url) => {
    try {
      return new URL(url).origin;
    } catch {
      return "null";
    }
  };
  const seen = (url) => (typeof url !== "string" || originOf(url) === origin ? url : originOf(url));
  const actions = Array.isArray(event.actions) ? event.actions.map((action) => {
    if (!action || typeof action !== "object") return action;
    // a navigation's value is where it went: cut to its origin when that is another's, wherever it started
    if (action.kind === "navigate" && originOf(action.url) === origin && seen(action.value) !== action.value) {
      const { description: _words, ...shown } = action;
      return { ...shown, value: seen(action.value) };
    }
    if (originOf(action.url) === origin) return action;
    const { description: _words, ...shown } = { ...action, url: originOf(action.url) };
    if (action.value !== null && action.value !== undefined) shown.value = BRIDGE_HIDDEN;
    return shown;
  }) : event.actions;
  return { ...event, actions, urlBefore: seen(event.urlBefore), urlAfter: seen(event.urlAfter) };
}

// What the person typed in another origin's documents is hidden in the takeover event, and must not come back in
// other words: the model keeps it (it is the agent's task) and may quote it in any later text — its reflection, an
// action's arguments, a tool's output, the `done` text (the result's data). So every string that leaves for the page
// (history, activity, result) has each such value replaced by •••, and each address cut to its origin in the event by
// that origin. A value matches whatever its case, and however the model spaced or grouped it: spaces, "-" and "." in
// it or between its characters count for nothing ("4111 1111 1111 1111" is found as "4111-1111-1111-1111" and as
// "4111111111111111"); a value that starts or ends with a letter or digit matches only as a whole word, so a CVV
// "123" is hidden in "CVV 123" but not in "41234", nor a "Lyon" in "Lyonnais" (BRIDGE_SPACED).
// A value is hidden from 3 characters on (separators not counted): a 3-digit CVV is; one or two characters (a month
// "12", a state "CA", an answer "No") are not — as whole words they are everywhere in ordinary text ("step 12",
// "no button"), hiding them blanked the model's sentences for the page, and alone they say next to nothing.
// Key names and the words of a checkbox (Enter, checked) are the recorder's vocabulary, not what the person wrote.
const BRIDGE_MIN_HIDDEN = 3;
const BRIDGE_NOT_WRITTEN = new Set(["key", "check"]);
const BRIDGE_SEPARATORS = /[\s.\-]/u;
// Letters of scripts written with spaces between words, and digits: where a word ends. Chinese or Japanese text runs
// its words together ("用户输入了ada-nick-7f3e作为昵称"), so a letter of theirs never keeps a value from matching.
const BRIDGE_SPACED = /[\p{sc=Latin}\p{sc=Greek}\p{sc=Cyrillic}\p{N}]/u;
// Fields the page reads as names, not words (event types, statuses, tools, codes, times, ids): never rewritten.
const BRIDGE_FIXED_FIELDS = new Set(["type", "kind", "status", "tool", "name", "reason", "code", "guard", "at"]);
// The model may also quote a PART of such a value, and the parts a value is made of are hidden too (the whole value
// still wins where both match: the longer first):
// - an address (typed, or one the event cut to its origin): as written without its scheme ("example.com/reset?
//   token=…"), and its host and path without the query, each cut to the host as the address is cut to its origin
//   (or hidden, for a typed one); the values of its query, its fragment and the path's segments with a digit in them
//   (a reset token, an account number). Its host alone is not hidden: the page is told the site anyway, and the
//   model names sites in ordinary sentences.
// - an e-mail address: its local part and its domain, but not a domain the page is on itself (it knows its own name).
// - a value of several words: each word.
// A part is hidden from 4 characters on (BRIDGE_MIN_PART; a whole value from 3): a surname, a card's last four digits
// and a street name are, everyday short words ("New", "Rue", "de", "12") are not — as parts they would blank the
// model's sentences for the page. The cost, accepted: a longer everyday word that was part of such a value ("Street"
// of "10 Downing Street", "Paris") is hidden wherever the model writes it in what this task tells the page.
const BRIDGE_MIN_PART = 4;

function bridgeHider(history, origin) {
  const whole = []; // [what to find, what the page sees instead]
  for (const event of Array.isArray(history) ? history : []) {
    if (!event || event.type !== "user_takeover") continue;
    const told = bridgeTakeoverFor(event, origin);
    for (const key of ["urlBefore", "urlAfter"]) {
      if (typeof event[key] === "string" && told[key] !== event[key]) whole.push([event[key], told[key]]);
    }
    (Array.isArray(event.actions) ? event.actions : []).forEach((action, index) => {
      const shown = told.actions[index];
      if (!action || typeof action !== "object" || !shown) return;
      if (typeof action.url === "string" && shown.url !== action.url) whole.push([action.url, shown.url]);
      const value = typeof action.value === "string" ? action.value.replace(/…$/u, "") : null; // capture.js cut it
      if (value === null || shown.value === action.value || value === BRIDGE_HIDDEN) return;
      if (BRIDGE_NOT_WRITTEN.has(action.kind)) return;
      whole.push([value, shown.value]);
    });
  }
  const found = new Map(whole); // what to find → what the page sees instead
  const pageHost = bridgeHostOf(origin);
  for (const [value, by] of whole) {
    for (const [part, partBy] of bridgeParts(value, by, pageHost)) {
      const counted = [...part].filter((char) => !BRIDGE_SEPARATORS.test(char)).length;
      if (counted >= BRIDGE_MIN_PART && !found.has(part)) found.set(part, partBy);
    }
  }
  const patterns = [...found].map(([value, by]) => [bridgeValuePattern(value), by])
    .filter(([pattern]) => pattern).sort(([a], [b]) => b.length - a.length); // the longer first where they overlap
  if (!patterns.length) return (told) => told;
  // one pass over each string: a pattern per value took 30 ms a push on a 100-step history with 20 values
  const all = new RegExp(patterns.map(([pattern]) => `(${pattern})`).join("|"), "giu");
  const inText = (text) => text.replace(all, (...groups) => patterns[groups.slice(1).findIndex((g) => g !== undefined)][1]);
  // a number among an action's arguments is the model's words too (an amount, a code it was told): hidden as text
  const walk = (value, key, inArguments) => {
    if (typeof value === "string") return key && (BRIDGE_FIXED_FIELDS.has(key) || /(At|Id)$/u.test(key)) ? value : inText(value);
    if (typeof value === "number" && inArguments) return inText(String(value)) === String(value) ? value : BRIDGE_HIDDEN;
    if (Array.isArray(value)) return value.map((item) => walk(item, null, inArguments));
    if (value && typeof value === "object") {
      return Object.fromEntries(Object.entries(value).map(([k, item]) => [k, walk(item, k, inArguments || k === "input")]));
    }
    return value;
  };
  return (told) => walk(told, null, false);
}

function bridgeHostOf(url) {
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    return "";
  }
}

// The parts of a hidden value (see BRIDGE_MIN_PART), each with what the page sees instead: [part, by].
function bridgeParts(value, by, pageHost) {
  const text = value.trim();
  let address = null;
  try {
    address = /^[a-z][a-z0-9+.-]*:\/\/[^\s]+$/iu.test(text) ? new URL(text) : null;
  } catch {
    address = null;
  }
  if (address && address.host) {
    const site = by === BRIDGE_HIDDEN ? BRIDGE_HIDDEN : address.host;
    const path = address.pathname.length > 1 ? address.pathname : "";
    const pieces = [...address.searchParams.values(), address.hash.slice(1),
      ...address.pathname.split("/").filter((segment) => /\p{N}/u.test(segment))];
    return [[text.slice(text.indexOf("//") + 2), site], [address.host + path, site],
      ...pieces.map((piece) => [piece, BRIDGE_HIDDEN])];
  }
  const email = /^([^@\s]+)@([^@\s]+\.[^@\s]+)$/u.exec(text);
  if (email) {
    const domain = email[2].toLowerCase();
    const own = pageHost === domain || pageHost.endsWith(`.${domain}`);
    return own ? [[email[1], by]] : [[email[1], by], [email[2], by]];
  }
  return text.split(/\s+/u).map((word) => [word, by]);
}

function bridgeValuePattern(value) {
  const chars = [...value.trim()].filter((char) => !BRIDGE_SEPARATORS.test(char));
  if (chars.length < BRIDGE_MIN_HIDDEN) return null;
  const body = chars.map((char) => char.replace(/[.*+?^${}()|[\]\\/]/gu, "\\$&")).join("[\\s.\\-]*");
  const before = BRIDGE_SPACED.test(chars[0]) ? `(?<!${BRIDGE_SPACED.source})` : "";
  const after = BRIDGE_SPACED.test(chars[chars.length - 1]) ? `(?!${BRIDGE_SPACED.source})` : "";
  return before + body + after;
}

function bridgePost(port, message) {
  try { port.postMessage(message); } catch (_) { /* the page went away: attach() picks the task up again */ }
}

function bridgeForgetOld() {
  const ended = [...bridge.tasks].filter(([, entry]) => entry.result);
  for (const [taskId, entry] of ended.slice(0, Math.max(0, ended.length - BRIDGE_KEEP_ENDED))) {
    bridge.tasks.delete(taskId);
    if (bridge.byTab.get(entry.callerTabId) === taskId) bridge.byTab.delete(entry.callerTabId);
  }
}

// --- the pages' requests --------------------------------------------------------------------------------------
// The one way a page's request reaches the host: after the wait for a host being respawned.
async function bridgeRequestHost(message, timeoutMs) {
  const deadline = Date.now() + BRIDGE_HOST_WAIT_MS;
  const comingBack = () => !!host.port || (host.retryAt !== null && host.retryAt < deadline);
  while (!host.connected && Date.now() < deadline && comingBack()) {
    await new Promise((resolve) => setTimeout(resolve, BRIDGE_HOST_POLL_MS));
  }
  return requestHost(message, timeoutMs);
}

chrome.runtime.onConnect.addListener((port) => {
  if (port.name !== "bridge") return;
  const sender = port.sender || {};
  // Chromium's word for who is calling, never the page's: the top frame of a tab. Whether its origin is
  // allowed is asked at each request (a page open since before a revoke is told so).
  if (!sender.tab || sender.frameId !== 0 || !sender.origin) {
    port.disconnect();
    return;
  }
  const caller = { port, tabId: sender.tab.id, windowId: sender.tab.windowId, origin: sender.origin };
  port.onMessage.addListener((message) => bridgeOnPageRequest(caller, message));
  port.onDisconnect.addListener(() => bridgePortGone(port));
});

// A page's port closed: the page was reloaded, left or closed. A task it started goes on (attach() in its next
// page picks it up); everything else that waited on this page is settled now. Its open questions are withdrawn
// at the host (they go from the popup and side panel too, and their task does not start: nobody is left to run it
// for), a question still on its way is withdrawn when it comes (approval.request above), and its start no longer
// makes the tab's next page wait as if a task ran.
function bridgePortGone(port) {
  bridge.gone.add(port);
  for (const entry of bridge.tasks.values()) {
    if (entry.port === port) { entry.port = null; entry.callId = null; }
  }
  for (const [approvalId, owner] of bridge.approvals) {
    if (owner !== port) continue;
    bridge.approvals.delete(approvalId);
    bridgeWithdraw(approvalId);
  }
  for (const [tabId, owner] of bridge.starting) if (owner === port) bridge.starting.delete(tabId);
}

function bridgeWithdraw(approvalId) {
  requestHost({ type: "approval.withdraw", approvalId })
    .catch((error) => console.info("tabpilot: a question of a page that went away:", error.message)); // answered meanwhile
}

async function bridgeOnPageRequest(caller, message) {
  if (!message || typeof message !== "object") return;
  if (!bridgeAllowed(caller)) { // revoked while the page was open
    if (message.id) bridgePost(caller.port, { id: message.id, kind: "error", message: `${caller.origin} may no longer start tasks in this browser` });
    return;
  }
  try {
    switch (message.action) {
      case "execute": return await bridgeExecute(caller, message);
      case "stop": return await bridgeStop(caller, message);
      case "attach": return await bridgeAttach(caller, message);
      case "approval.answer": return await bridgeAnswer(caller, message);
      default: return undefined;
    }
  } catch (error) {
    const said = error.code === HOST_DOWN ? bridgeHostDownSaid(host.error) : error.message || String(error);
    if (message.id) bridgePost(caller.port, { id: message.id, kind: "error", message: said });
  }
}

function bridgeRunningTask(caller) {
  const taskId = bridge.byTab.get(caller.tabId);
  const entry = taskId && bridge.tasks.get(taskId);
  return entry && entry.origin === caller.origin && !entry.result ? { taskId, entry } : null;
}

// The host's refusal of a start it cannot read names its own request (invalid task.start: field 'config.baseURL': …);
// the page called execute(), and its fields are the config's it gave: said as the call it made.
const HOST_START_INVALID = "invalid task.start: ";
function bridgeCallersWords(error) {
  const message = error && error.message ? String(error.message) : "";
  if (!message.startsWith(HOST_START_INVALID)) return error;
  return new Error(`PAGE_AGENT_EXT.execute(task, config): ${message.slice(HOST_START_INVALID.length)}`);
}

async function bridgeExecute(caller, { id, task, config }) {
  const running = bridgeRunningTask(caller);
  if (running || bridge.starting.has(caller.tabId)) {
    throw new Error(`this page's task${running ? ` (${running.taskId})` : ""} is still running; `
      + "wait for its result, or call PAGE_AGENT_EXT.stop() first");
  }
  bridge.starting.set(caller.tabId, caller.port);
  // This call is now the page's latest: attach() no longer hands back an earlier task's result as if it were this
  // call's (a start refused, denied or withdrawn leaves nothing to attach to).
  const earlier = bridge.tasks.get(bridge.byTab.get(caller.tabId));
  if (earlier && earlier.origin === caller.origin) bridge.byTab.delete(caller.tabId);
  let taskTabId = caller.tabId;
  try {
    if (config && config.includeInitialTab === false) {
      const tab = await chrome.tabs.create({ url: "about:blank", openerTabId: caller.tabId, windowId: caller.windowId, active: true });
      taskTabId = tab.id;
    }
    bridge.promptTabs.set(taskTabId, caller.port);
    const start = {
      type: "task.start", task, tabId: taskTabId, config: config || {}, source: "page", origin: caller.origin,
    };
    if (!bridgeSiteOf(caller.origin)) start.pageToken = bridge.token; // its page held the token
    const data = await bridgeRequestHost(start, BRIDGE_START_TIMEOUT_MS);
    const here = !bridge.gone.has(caller.port); // else it started as its page went: attach() in the next page gets it
    const entry = {
      callerTabId: caller.tabId, origin: caller.origin, port: here ? caller.port : null, callId: here ? id : null,
      status: "running", history: [], result: null,
    };
    bridge.tasks.set(data.taskId, entry);
    bridge.byTab.set(caller.tabId, data.taskId);
  } catch (error) {
    if (taskTabId !== caller.tabId) chrome.tabs.remove(taskTabId).catch(() => {});
    throw error.code === HOST_GONE ? new Error(BRIDGE_HOST_STOPPED_AT_START) : bridgeCallersWords(error);
  } finally {
    if (bridge.starting.get(caller.tabId) === caller.port) bridge.starting.delete(caller.tabId);
    if (bridge.promptTabs.get(taskTabId) === caller.port) bridge.promptTabs.delete(taskTabId);
  }
}

async function bridgeStop(caller, { id }) {
  const running = bridgeRunningTask(caller);
  if (running) {
    const stop = { type: "task.stop", taskId: running.taskId, origin: caller.origin }; // the record says who stopped it
    await bridgeRequestHost(stop, BRIDGE_START_TIMEOUT_MS);
  }
  bridgePost(caller.port, { id, kind: "result", result: null });
}

async function bridgeAttach(caller, { id }) {
  const taskId = bridge.byTab.get(caller.tabId);
  const entry = taskId && bridge.tasks.get(taskId);
  if (!entry || entry.origin !== caller.origin) {
    bridgePost(caller.port, { id, kind: "result", result: null });
    return;
  }
  // The host's record is the truth (pushes may have gone by while no page listened). A host that dies meanwhile
  // has ended the task here (bridgeHostDown): that ending is the answer.
  let snapshot = null;
  try {
    snapshot = (await bridgeRequestHost({ type: "task.get", taskId })).task;
  } catch (error) {
    if (error.code !== HOST_GONE) throw error;
  }
  if (bridge.gone.has(caller.port)) return; // its page went meanwhile: the next page's attach takes the task
  if (snapshot) {
    entry.history = snapshot.history || entry.history;
    entry.status = snapshot.status || entry.status;
    if (snapshot.result && !entry.result) entry.result = snapshot.result;
  }
  entry.port = caller.port;
  entry.callId = id;
  bridgeTell(entry, { kind: "status", status: entry.status });
  if (entry.history.length) bridgeTell(entry, { kind: "history", history: entry.history });
  if (entry.result) {
    bridgeTell(entry, { kind: "result", result: entry.result });
    entry.callId = null;
  }
}

async function bridgeAnswer(caller, { approvalId, decision }) {
  if (bridge.approvals.get(approvalId) !== caller.port || !["once", "deny"].includes(decision)) return;
  bridge.approvals.delete(approvalId);
  await bridgeRequestHost({ type: "approval.answer", approvalId, decision });
}
