// tabpilot service worker, part 4 (loaded by service_worker.js with importScripts): a task's allowed and
// blocked domains as chrome.declarativeNetRequest session rules for the tabs the task's tabs open (window.open,
// target=_blank, a redirect there), so their first page load to a refused domain is blocked before its
// request leaves: the host's Fetch interception cannot hold a new tab, chrome.debugger reaches a tab only once
// it exists. The task's own tabs (the host's `tabIds`) are left to Fetch, which keeps the page where it was
// and tells the model and the user (measured: where both apply, the rule blocks a redirect hop first and
// the tab shows Chromium's blocked page), except the tabs they opened: those stay under the rules, and the
// host closes one that shows a refused address and tells the model (relay.py `_guard_new_tab`). The user's
// tabs are excluded by id; a tab the user opens from a page on the task's own domain could be judged as the
// task's until tabs.onCreated has named it the user's. Session rules outlive a worker restart (not the browser): which
// rules are whose is kept in chrome.storage.session, and the rules of a task no running host knows are
// removed on the next hello.
"use strict";

const GUARD_STORE_KEY = "guardRules"; // {taskId: {tabIds, opened, allowed, blocked, ruleIds}}
const GUARD_RESOURCE_TYPES = ["main_frame", "sub_frame"];
let guardQueue = Promise.resolve(); // one change at a time: each reads what the one before wrote

function guardChange(change) {
  const next = guardQueue.then(change);
  guardQueue = next.catch(() => {});
  return next;
}

async function storedGuards() {
  return (await chrome.storage.session.get(GUARD_STORE_KEY))[GUARD_STORE_KEY] || {};
}

function domainList(value, name) {
  if (!Array.isArray(value) || !value.every((d) => typeof d === "string" && d)) {
    throw Object.assign(new Error(`guard.rules needs ${name} as a list of domains`), { code: "bad_request" });
  }
  return value;
}

// A domain as the rules must name it: declarativeNetRequest compares a domain with the URL's host as Chromium
// spells it, so an IPv6 address only matches in brackets ("::1" matches nothing, "[::1]" does; measured on
// Chromium 156), and an IPv4 address has a second spelling Chromium keeps apart: http://[::ffff:127.0.0.1]/
// reaches 127.0.0.1 and is shown as [::ffff:7f00:1] (the host's guard takes them as one host, domains.py).
// So are the IPv6 addresses that reach it through NAT64 ([64:ff9b::7f00:1]) and 6to4 ([2002:7f00:1::], this one
// only with no subnet or interface given: a rule cannot name the rest of 2002:7f00:1::/48). Other spellings of
// an IPv4 address (127.1, 0x7f000001, a trailing dot) and of a name (case, a trailing dot) Chromium brings to one
// form itself before the rules see them.
const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;

function ruleDomains(domains) {
  const spelled = [];
  for (const domain of domains) {
    if (domain.includes(":")) {
      spelled.push(canonicalHost(`[${domain.replace(/^\[|\]$/g, "")}]`) || domain);
    } else if (IPV4.test(domain)) {
      spelled.push(domain);
      const [a, b, c, d] = domain.split(".").map(Number);
      const sixToFour = `2002:${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}::`;
      for (const carried of [`::ffff:${domain}`, `64:ff9b::${domain}`, sixToFour]) {
        const spelling = canonicalHost(`[${carried}]`);
        if (spelling) spelled.push(spelling);
      }
    } else {
      spelled.push(domain);
    }
  }
  return [...new Set(spelled)];
}

// `host` as Chromium writes it in a URL (its own URL parser), or null when it is none.
function canonicalHost(host) {
  try {
    return new URL(`http://${host}/`).hostname;
  } catch (_) {
    return null;
  }
}

// The rules of one task, each blocking its blocked domains or everything but its allowed ones:
// - in the tabs its tabs opened (known from tabs.onCreated's openerTabId), attached by the host or not yet;
// - in any tab but the task's own and the ones known as the user's, for a load its pages start (initiatorDomains: the domains of
//   the task's tabs): a new tab's first request can beat tabs.onCreated and the rule update that follows
//   (measured, bench/bench_popup_rules.py: without this rule 13-14 of 20 popups reached their server; with it 0).
function rulesOf(entry, firstId, context) {
  const conditions = [];
  // a tab the task's tabs opened stays under the rules after the host attached it too: a page that sends its
  // popup somewhere every millisecond got loads through while Fetch took the tab over (4 runs in 4; 2 in 10
  // when the host named the tab only once its Fetch was on)
  if (entry.opened.length) conditions.push({ tabIds: entry.opened, resourceTypes: GUARD_RESOURCE_TYPES });
  const initiators = [...new Set(entry.tabIds.map((tabId) => context.hosts.get(tabId)).filter(Boolean))];
  const users = context.tabIds.filter((tabId) => !entry.tabIds.includes(tabId) && !entry.opened.includes(tabId));
  if (initiators.length) {
    const excludedTabIds = [...users, ...entry.tabIds]; // the task's own tabs: Fetch, which tells the model
    conditions.push({ initiatorDomains: initiators, excludedTabIds, resourceTypes: ["main_frame"] });
  }
  const rules = [];
  const blocked = ruleDomains(entry.blocked);
  const allowed = ruleDomains(entry.allowed);
  for (const condition of conditions) {
    if (blocked.length) rules.push({ ...condition, requestDomains: blocked });
    if (allowed.length) rules.push({ ...condition, excludedRequestDomains: allowed });
  }
  return rules.map((c, n) => ({ id: firstId + n, priority: 1, action: { type: "block" }, condition: c }));
}

// Every tab's id and the host of its page (http(s) only), as the rules need them: as Chromium spells it, an
// IPv6 address in its brackets (without them an initiator domain matches nothing).
async function tabContext() {
  const tabs = await chrome.tabs.query({});
  const hosts = new Map();
  for (const tab of tabs) {
    try {
      const url = new URL(tab.url || tab.pendingUrl || "");
      if (url.protocol === "http:" || url.protocol === "https:") hosts.set(tab.id, url.hostname);
    } catch (_) { /* no URL yet */ }
  }
  return { tabIds: tabs.map((tab) => tab.id), hosts };
}

// Write `guards` (taskId → entry) as the session rules, replacing those the tasks in `changed` had in `before`.
async function writeGuards(before, guards, changed) {
  const existing = await chrome.declarativeNetRequest.getSessionRules();
  let nextId = existing.reduce((top, rule) => Math.max(top, rule.id), 0) + 1;
  const context = await tabContext();
  const removeRuleIds = [];
  const addRules = [];
  for (const taskId of changed) {
    if (before[taskId]) removeRuleIds.push(...before[taskId].ruleIds);
    const entry = guards[taskId];
    if (!entry) continue;
    const rules = rulesOf(entry, nextId, context);
    nextId += rules.length;
    entry.ruleIds = rules.map((rule) => rule.id);
    addRules.push(...rules);
  }
  await chrome.declarativeNetRequest.updateSessionRules({ removeRuleIds, addRules });
  await chrome.storage.session.set({ [GUARD_STORE_KEY]: guards });
}

// guard.rules from the host: the task's tabs (added to those it had) and its domains (replacing its old ones).
function setGuardRules(message) {
  if (typeof message.taskId !== "string" || !message.taskId || !Array.isArray(message.tabIds)
      || !message.tabIds.every(Number.isInteger)) {
    throw Object.assign(new Error("guard.rules needs a taskId and a list of integer tabIds"), { code: "bad_request" });
  }
  const allowed = domainList(message.allowedDomains, "allowedDomains");
  const blocked = domainList(message.blockedDomains, "blockedDomains");
  return guardChange(async () => {
    const before = await storedGuards();
    const had = before[message.taskId] || { tabIds: [], opened: [] };
    const tabIds = [...new Set([...had.tabIds, ...message.tabIds])];
    const entry = { tabIds, opened: had.opened, allowed, blocked };
    await writeGuards(before, { ...before, [message.taskId]: entry }, [message.taskId]);
    return {};
  });
}

function clearGuardRules(taskIds) {
  return guardChange(async () => {
    const before = await storedGuards();
    const gone = taskIds.filter((taskId) => before[taskId]);
    const after = { ...before };
    for (const taskId of gone) delete after[taskId];
    if (gone.length) await writeGuards(before, after, gone);
    return {};
  });
}

// guard.clear from the host: the task ended, or the user has its controls.
function clearGuardRule(message) {
  if (typeof message.taskId !== "string" || !message.taskId) {
    throw Object.assign(new Error("guard.clear needs a taskId"), { code: "bad_request" });
  }
  return clearGuardRules([message.taskId]);
}

// A new host said hello: the rules of any task it does not run are a dead host's (the worker restarted).
async function clearStaleGuards(runningTasks) {
  const running = new Set((runningTasks || []).map((task) => task.taskId));
  const guards = await storedGuards();
  await clearGuardRules(Object.keys(guards).filter((taskId) => !running.has(taskId)));
}

// A tab opened by a task's tab (or by one it opened) is the task's: its rules cover it from now on. Any other
// new tab is the user's: the rules leave it alone.
chrome.tabs.onCreated.addListener((tab) => {
  guardChange(async () => {
    const before = await storedGuards();
    const owns = (entry) => entry.tabIds.includes(tab.openerTabId) || entry.opened.includes(tab.openerTabId);
    const after = { ...before };
    for (const taskId of Object.keys(before)) {
      if (owns(before[taskId])) after[taskId] = { ...before[taskId], opened: [...before[taskId].opened, tab.id] };
    }
    if (Object.keys(before).length) await writeGuards(before, after, Object.keys(before));
  }).catch((error) => console.warn("tabpilot: could not guard a new tab:", error.message));
});

// A task's tab went to another site: loads its page starts are judged from that site now.
chrome.tabs.onUpdated.addListener((tabId, change) => {
  if (change.url === undefined) return;
  guardChange(async () => {
    const before = await storedGuards();
    const owners = Object.keys(before).filter((taskId) => before[taskId].tabIds.includes(tabId));
    if (owners.length) await writeGuards(before, { ...before }, owners);
  }).catch((error) => console.warn("tabpilot: could not follow a task's tab:", error.message));
});
