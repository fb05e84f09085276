// tabpilot popup: task box, live timeline, Take over / Hand back / answers, settings, past tasks. All state
// comes from the host through the service worker; the popup keeps nothing (closing it loses nothing).
// Every word it shows comes from _locales (I18n.t, which formats a number as a quantity: an id goes in as text).
// The same page is the side panel (`?mode=panel`, the manifest's side_panel): it stays open while the user works
// in the page, and follows the window's tab.
"use strict";

const $ = (id) => document.getElementById(id);
const t = I18n.t;
const TERMINAL = new Set(["completed", "error", "stopped", "interrupted"]);
// "denied" / "refused" / "withdrawn": a task a page or an MCP client asked for that never ran (only in Past tasks:
// NOT_RUN); withdrawn: its question went before anyone answered (the asker went away, or tabpilot's helper did)
// "notDone": an error by the agent's own verdict (shownStatus)
const STATUSES = new Set(["idle", "running", "completed", "error", "stopped", "interrupted", "denied", "refused",
  "withdrawn", "notDone"]);
// Chromium's words (chrome.runtime.lastError) for a host that is not installed for this browser, or not
// for this extension: `tabpilot install` fixes those. Any other reason is not the user's to fix.
const HOST_NOT_INSTALLED = new Set([
  "Specified native messaging host not found.",
  "Access to the specified native messaging host is forbidden.",
]);
const HOST_EXITED = "Native host has exited.";
// Host error codes the popup words itself (PROTOCOL.md); any other error shows the host's message.
// host_down / host_gone: asked while no host is connected, or it went away meanwhile; the banner above says why and
// what to do, so each section says only that it has to wait (in the popup's language)
const ERROR_CODES = { not_configured: "errNotConfigured", busy: "errBusy", host_down: "errHostDown", host_gone: "errHostDown" };
const HOST_AWAY = new Set(["host_down", "host_gone"]);
const failedLoads = new Map(); // error element id -> the loader that failed there while the host was away
const PANEL = new URLSearchParams(location.search).get("mode") === "panel";
document.body.dataset.mode = PANEL ? "panel" : "popup";

const ui = {
  connected: false,
  taskId: null,
  taskText: "", // the shown task's words as they were given (its title shows a page's controls as codes)
  adopted: 0, // how many tasks this view started (refreshTasks keeps an answer from before one off the view)
  asker: { source: "popup", requester: null }, // who asked for the task shown: the person, a page, a program
  status: null,
  targetTabId: null,
  targetWindowId: null, // the window of that tab (whose side panel Run opens from the toolbar popup)
  pastTaskId: null,
  pastTask: null, // the past task open in the detail view: {task, url}
  lastExport: null, // the JSON text of the last export (tests read it; pages never can)
  control: null, // the host's task.control: who has the controls and why (null: the agent)
  question: null, // the agent's pending ask_user question
  approval: null, // the action waiting for the person's Allow / Deny
  activity: null, // what the agent is doing now (task.activity)
  thinkingSince: null, // when the agent began thinking about its step (epoch ms), while it does
  acting: null, // the action it takes, while it does (lib/working.js)
  overlayLowered: false, // the task's page keeps the overlay's question to allow out of the top layer
  unworkable: null, // why tabpilot cannot work in the target tab (Tabs.unworkable), or null
  gaveUp: false, // the task shown ended "error" by the agent's own verdict (the host's gaveUp)
};

// --- talking to the service worker -------------------------------------------------------------------
const waiting = new Map();
let nextRequestId = 1;
let worker = null;

// The worker may be stopped and restarted by Chromium at any time; connecting again wakes it.
function connectWorker() {
  worker = chrome.runtime.connect({ name: "popup" });
  worker.onMessage.addListener((message) => {
    if (message.kind === "reply") {
      const entry = waiting.get(message.id);
      if (!entry) return;
      waiting.delete(message.id);
      if (message.ok) entry.resolve(message.data);
      else entry.reject(Object.assign(new Error(message.error), { code: message.code }));
    } else if (message.kind === "host") {
      onHostState(message);
    } else if (message.kind === "push") {
      onPush(message.message);
    }
  });
  worker.onDisconnect.addListener(() => {
    for (const entry of waiting.values()) entry.reject(new Error(t("workerRestarted")));
    waiting.clear();
    onHostState({ connected: false, error: t("workerRestarted") });
    // the worker's native port, and with it the host and its questions, went: the new worker replays any open
    for (const approvalId of [...approvals.keys()]) closeApproval(approvalId);
    setTimeout(connectWorker, 500);
  });
}

function ask(type, fields = {}) {
  return new Promise((resolve, reject) => {
    const id = nextRequestId++;
    waiting.set(id, { resolve, reject });
    try {
      worker.postMessage({ kind: "request", id, request: { type, ...fields } });
    } catch (error) {
      waiting.delete(id);
      reject(error);
    }
  });
}

// --- host status ------------------------------------------------------------------------------------------
let retryTicker = null;

function onHostState(state) {
  const wasConnected = ui.connected;
  const wasDown = document.body.dataset.host === "down";
  ui.connected = !!state.connected;
  document.body.dataset.host = ui.connected ? "connected" : "down";
  $("host-dot").className = `dot ${ui.connected ? "on" : "off"}`;
  $("host-dot").title = ui.connected ? t("hostConnected", state.hostVersion || "") : t("hostNotConnected");
  $("host-down").hidden = ui.connected;
  offerRun();
  clearInterval(retryTicker);
  if (!ui.connected) {
    const exited = state.error === HOST_EXITED;
    $("host-down-title").textContent = state.connecting
      ? t("hostConnecting")
      : exited ? t("hostStopped") : t("hostNotConnected");
    PageText.set($("host-down-reason"), state.connecting
      ? ""
      : exited ? t("hostStoppedReason") : state.error || t("hostNotRunning"));
    $("host-down-fix").hidden = !!state.connecting || !HOST_NOT_INSTALLED.has(state.error);
    showRetry(state.retryInMs);
    if (ui.status === "running") {
      setStatus("interrupted");
      showResult(endedWithoutResult("interrupted", ui.asker));
    }
    others.clear();
    renderOthers();
    return;
  }
  if (state.task && state.task.tabId === ui.targetTabId) showTask(state.task); // hello names the latest task
  if (!wasConnected) refreshTasks();
  if (wasDown) reloadAfterReconnect();
}

// The host is back (Reconnect now, or the worker's own retry) after the popup saw it down: every "waiting for the
// helper" goes, and what failed to load while it was away is asked for again (a settings section, the past tasks,
// this site's access). Nothing that loaded is loaded again: a save that failed meanwhile leaves what the person
// typed in place, to save again.
function reloadAfterReconnect() {
  const reloads = [...new Set(failedLoads.values())];
  failedLoads.clear();
  for (const shown of document.querySelectorAll("[data-host-down]")) showError(shown.id, null);
  for (const reload of reloads) reload();
}

function showRetry(retryInMs) {
  const until = retryInMs == null ? null : Date.now() + retryInMs;
  const paint = () => {
    $("host-retry").textContent = until == null ? "" : t("retryingIn", Math.max(0, Math.ceil((until - Date.now()) / 1000)));
  };
  paint();
  if (until != null) retryTicker = setInterval(paint, 500);
}

$("reconnect").addEventListener("click", () => worker.postMessage({ kind: "reconnect" }));

// --- the current task -----------------------------------------------------------------------------------
// Several tasks run at once, one per tab (PROTOCOL.md). This view shows the task of its own tab (running, or the
// last one, also one a host before this one ran: the worker reads that from the record) and lists the other tabs'
// running tasks. `retarget`: the view now works on another tab, so a task of the tab before it leaves the view (a
// host that came back keeps showing what it had, interrupted).
async function refreshTasks({ retarget = false } = {}) {
  try {
    const adopted = ui.adopted;
    const [{ task }, { tasks }] = await Promise.all([
      ui.targetTabId === null ? { task: null } : ask("task.get", { tabId: ui.targetTabId }),
      ask("task.list"),
    ]);
    // A task this view started meanwhile stays shown: a side panel opened and Run pressed at once showed the tab's
    // task before it when this answer came last (its "Not done" over the new task's run).
    if (task && (ui.adopted === adopted || task.taskId === ui.taskId)) showTask(task);
    else if (retarget) clearTask();
    others.clear();
    for (const snapshot of tasks) {
      if (snapshot.tabId !== ui.targetTabId) others.set(snapshot.taskId, otherEntry(snapshot));
    }
    renderOthers();
  } catch (error) {
    showError("task-error", error);
  }
}

// A task a web page or another program asked for says so wherever it is shown ("from https://shop.example", "from
// Claude Desktop"): it is not the person's own. "" for the person's own.
function askedBy(snapshot) {
  return snapshot.requester ? t("pastFrom", PageText.requester(snapshot.source, snapshot.requester)) : "";
}

function clearTask() {
  ui.taskId = null;
  ui.taskText = "";
  $("task-head").hidden = true;
  $("idle-hint").hidden = false;
  showTaskTitle($("task-title"), "");
  $("task-from").hidden = true;
  $("timeline").replaceChildren();
  $("result").hidden = true;
  setStatus(null);
}

function showTask(snapshot) {
  ui.taskId = snapshot.taskId;
  ui.taskText = snapshot.task || "";
  $("idle-hint").hidden = true;
  $("task-head").hidden = false;
  showTaskTitle($("task-title"), snapshot.task || "");
  PageText.set($("task-from"), askedBy(snapshot));
  $("task-from").hidden = !snapshot.requester;
  ui.asker = { source: snapshot.source, requester: snapshot.requester };
  Timeline.render($("timeline"), snapshot.history);
  $("result").hidden = true;
  ui.gaveUp = !!snapshot.gaveUp;
  setStatus(snapshot.status);
  // one that ended before this opened
  showResult(snapshot.result || endedWithoutResult(snapshot.status, ui.asker), { follow: false });
  ui.activity = null; // this task's: thinking since the worker saw it begin (a popup opened meanwhile counts on from there)
  ui.thinkingSince = snapshot.thinkingSince ?? null;
  ui.acting = snapshot.acting ?? null; // the action under way, as the worker saw it begin
  setActivity(snapshot.status === "running" ? snapshot.activity : null);
  $("overlay-removed").hidden = !(snapshot.status === "running" && snapshot.overlayRemoved);
  ui.overlayLowered = !!snapshot.overlayLowered;
  setControl(snapshot.control || null, snapshot.question || null, snapshot.approval || null);
  placeView(snapshot.status);
}

// Where a popup opened on a task shows it: a running one at its newest step (at the bottom, where the next ones come);
// one that ended at the top, the box ready for the next task, its outcome in view all the same (its box sticks to the
// bottom). It opened at the bottom of a long timeline, or wherever the last paint left it.
function placeView(status) {
  if ($("view-task").hidden) return;
  window.scrollTo({ top: status === "running" ? document.documentElement.scrollHeight : 0 });
  followingEnd = status === "running";
}

// Whether the person is at the newest card: a new step is followed then, and not while they read further up.
function atTimelineEnd() {
  return window.scrollY + innerHeight >= document.documentElement.scrollHeight - 40;
}

// The view follows the newest card of a running task, unless the person scrolled away from it: also when the popup's
// size changes after it opened (Chromium fits the toolbar popup to its page; a shorter one hid the newest card).
let followingEnd = false;
window.addEventListener("scroll", () => { followingEnd = atTimelineEnd(); }, { passive: true });
window.addEventListener("resize", () => {
  if (followingEnd && ui.status === "running" && !$("view-task").hidden) {
    window.scrollTo({ top: document.documentElement.scrollHeight });
  }
});

// Who has the controls: the user (Take over, or they touched the page, or the agent asked) → Hand back
// with an optional note; a question of the agent → the answer box.
function setControl(control, question, approval = null) {
  const running = ui.status === "running";
  ui.control = running ? control : null;
  ui.question = running ? question : null;
  const asked = running && !ui.control ? approval : null; // an action waiting for Allow / Deny / Take over
  ui.approval = asked;
  document.body.dataset.control = ui.control ? ui.control.reason : "";
  paintTaskPill();
  // the side panel stays open on Past or Settings too: the Task tab says the agent waits on the person there
  const asks = asksNow();
  $("nav-task").classList.toggle("attention", Asking.waitsOnPerson(asks) && document.body.dataset.view !== "task");
  const { title, reason: said, why } = Asking.notice(asks, t);
  const reason = why ? `${said}\n${why}` : said; // an action to allow: why it waits, on a line of its own
  $("control").hidden = !title;
  PageText.set($("control-title"), title);
  PageText.set($("control-reason"), reason);
  $("control-reason").hidden = !reason;
  $("answer-form").hidden = !ui.question;
  $("approve-box").hidden = !asked;
  // the page keeps the overlay's question out of sight (content/overlay.js PUT_BACK_LIMIT): it is answered here
  $("overlay-lowered").hidden = !(asked && ui.overlayLowered);
  $("handback-box").hidden = !ui.control;
  $("takeover").hidden = !running || !!ui.control;
  setActivity(ui.activity);
}

// What the running task asks of the person now (lib/asking.js words it).
function asksNow() {
  return { control: ui.control, question: ui.question, approval: ui.approval };
}

function statusText(status) {
  return STATUSES.has(status) ? t(`status_${status}`) : status || "";
}

// The status as the person is told it: a task the agent ended "error" by its own verdict (done, success false: it
// finished but could not achieve it) is "Not done", not an error of tabpilot's or of the model's (PROTOCOL.md gaveUp).
function shownStatus(status, gaveUp) {
  return status === "error" && gaveUp ? "notDone" : status;
}

function paintPill(pill, status) {
  pill.textContent = statusText(status);
  pill.className = `pill status-${status}`;
  pill.dataset.status = status || "";
}

// The task's pill says what the page's overlay says (content/overlay.js): Paused while the person has the
// controls, Needs you while the agent waits on them (a question, an action to allow, a request for help).
function paintTaskPill() {
  const pill = $("task-status");
  paintPill(pill, shownStatus(ui.status, ui.gaveUp));
  const kind = ui.status !== "running" ? "" : Asking.pillKind(asksNow()) || "";
  pill.dataset.kind = kind;
  if (!kind) return;
  pill.textContent = t(`overlay_${kind}`);
  pill.classList.add(`status-${kind}`);
}

function setStatus(status) {
  ui.status = status;
  paintTaskPill();
  document.body.dataset.status = status || "";
  const running = status === "running";
  $("run").hidden = running;
  $("stop").hidden = !running;
  $("stop").disabled = false;
  $("takeover").hidden = !running || !!ui.control;
  $("task-input").disabled = running;
  if (!running) $("overlay-removed").hidden = true;
  if (TERMINAL.has(status)) setActivity(null);
  if (!running) setControl(null, null);
  if (status === "interrupted") offerToRunAgain();
}

// An interrupted task says "Run it again": the person's own is put back in the empty box, so that is one press
// of Run (a popup reopened after the crash, or the side panel the popup handed over to, had an empty box).
function offerToRunAgain() {
  if ($("task-from").hidden && !$("task-input").value.trim()) $("task-input").value = ui.taskText;
}

// What the agent is doing now; not while it waits on the person (the box above says what for): "Clicking…"
// under "Approve this action?" said it was doing what it waits for a yes to do; nor while the person has the
// controls ("Done wait in 1,147 ms" under Paused, of a wait their taking over had cut short).
function setActivity(activity) {
  const thinking = !!activity && activity.type === "thinking";
  if (!thinking) ui.thinkingSince = null;
  else if (!ui.activity || ui.activity.type !== "thinking") ui.thinkingSince ??= Date.now();
  // the step an action belongs to: the one after the steps shown (its own card comes once it ended)
  ui.acting = Working.acting(ui.acting, activity, stepsShown() + 1);
  ui.activity = activity;
  clearInterval(activityTicker);
  const counting = thinking || (!!ui.acting && ui.acting.took === undefined);
  activityTicker = counting ? setInterval(paintActivity, 1000) : null; // the seconds count on
  paintActivity();
}

function stepsShown() {
  return $("timeline").querySelectorAll(".card-step").length;
}

let activityTicker = null;
function paintActivity() {
  const activity = ui.activity;
  // the step it thinks about: the one after the steps shown
  const thinking = ui.thinkingSince && { step: stepsShown() + 1, since: ui.thinkingSince };
  const text = Timeline.activityText(activity, { thinking, acting: ui.acting });
  PageText.set($("activity"), text);
  $("activity").hidden = !text || !!Asking.pillKind(asksNow());
  $("activity").dataset.type = activity ? activity.type : "";
}

// A task this view started: its pushes may come before the task.start reply (placeTask shows those).
function adoptTask(taskId, taskText) {
  ui.adopted += 1;
  others.delete(taskId);
  if (ui.taskId !== taskId) {
    ui.taskId = taskId;
    $("idle-hint").hidden = true;
    $("task-head").hidden = false;
    $("task-from").hidden = true; // the person's own, started here
    ui.asker = { source: "popup", requester: null };
    $("timeline").replaceChildren();
    $("result").hidden = true;
    $("task-error").hidden = true;
  }
  ui.taskText = taskText;
  showTaskTitle($("task-title"), taskText);
  renderOthers();
}

// Pushes carry the taskId only: a task this view does not know yet is asked for once (task.get), and its
// pushes meanwhile are in the snapshot that comes back (the worker keeps the host's order).
const placing = new Set();
function anotherTasksPush(message) {
  if (others.has(message.taskId)) otherPush(message);
  else if (!placing.has(message.taskId)) placeTask(message.taskId);
}

async function placeTask(taskId) {
  placing.add(taskId);
  try {
    const { task } = await ask("task.get", { taskId });
    if (task && task.tabId === ui.targetTabId) {
      others.delete(taskId);
      showTask(task); // a task begun on this tab elsewhere (another popup, a page)
    } else if (task && task.status === "running") {
      others.set(taskId, otherEntry(task));
    }
    renderOthers();
  } catch (_) {
    /* the task's next push asks again */
  } finally {
    placing.delete(taskId);
  }
}

// Past tasks follows what ends while its list is in view, or comes into view soon after: a task's result, a question
// closed (a request not run is recorded just after its question closes, on the host's writer thread, which a loaded
// machine may hold up for seconds): the list is read again every 0.5 s for 5 s after either.
const PAST_FOLLOW_MS = 5000;
let pastFollowUntil = 0;
let pastFollower = null;
function pastMayHaveChanged() {
  pastFollowUntil = Date.now() + PAST_FOLLOW_MS;
  pastFollower ??= setInterval(() => {
    if (Date.now() > pastFollowUntil) {
      clearInterval(pastFollower);
      pastFollower = null;
    } else if (document.body.dataset.view === "past" && !$("past-list-wrap").hidden) {
      loadPast();
    }
  }, 500);
}

function onPush(message) {
  if (!message) return;
  if (message.type === "approval.closed" || message.type === "task.result") pastMayHaveChanged();
  switch (message.type) {
    case "approval.request":
      return showApproval(message);
    case "approval.closed":
      return closeApproval(message.approvalId);
    case "sites.changed":
      return sitesChanged(message); // popup_sites.js
  }
  if (!message.taskId) return;
  if (message.type === "task.amended") { // an event shown before, changed: wherever the task's timeline is shown
    if (message.taskId === ui.taskId) Timeline.amend($("timeline"), message.event);
    if (message.taskId === ui.pastTaskId) Timeline.amend($("past-timeline"), message.event);
    return;
  }
  if (message.taskId !== ui.taskId) return anotherTasksPush(message);
  switch (message.type) {
    case "task.status":
      ui.gaveUp = !!message.gaveUp;
      setStatus(message.status);
      break;
    case "task.activity":
      if (ui.status === "running" || ui.status === null) setActivity(message.activity);
      break;
    case "task.overlay": // the worker's: the task's page took its overlay away, or it is back; kept its question down
      $("overlay-removed").hidden = !(message.removed && ui.status === "running");
      ui.overlayLowered = !!message.lowered;
      setControl(ui.control, ui.question, ui.approval);
      break;
    case "task.event": {
      if (!Timeline.shown(message.event)) break;
      const following = atTimelineEnd();
      $("timeline").append(Timeline.renderEvent(message.event));
      if (following) $("timeline").lastElementChild.scrollIntoView({ block: "nearest" });
      break;
    }
    case "task.result":
      ui.gaveUp = !!message.gaveUp;
      paintTaskPill();
      showResult(message.result);
      break;
    case "task.control":
      setControl(message.control || null, message.question || null, message.approval || null);
      break;
  }
}

// --- MCP clients and pages asking to run a task: Allow once / Always allow for this client / Deny ------------------
// An MCP client has no page, so it is asked here; a page's question (an --ask site) is shown in that page and here
// too (Allow once / Deny), so it is in view wherever the person looks. The worker replays the open ones to a view
// that connects later; approval.closed (answered anywhere, timed out) removes it.
const approvals = new Map(); // approvalId → {request, li}
let approvalTicker = null;

function showApproval(request) {
  if (!["mcp", "page"].includes(request.kind) || approvals.has(request.approvalId)) return;
  const li = Timeline.el("li", "approval-card");
  li.dataset.approvalId = request.approvalId;
  li.dataset.kind = request.kind;
  const title = Timeline.el("div", "approval-title", t("approvalWants", PageText.requester(request.kind, request.requester)));
  // all of it readable, a long one on asking
  const task = TaskText.fill(Timeline.el("blockquote", "approval-task"), request.task, (count) => t("taskShowAll", count));
  const where = Timeline.el("div", "approval-where");
  const left = Timeline.el("div", "approval-left muted");
  const buttons = Timeline.el("div", "row approval-buttons");
  const choices = [["once", "approvalOnce", ""], ["always", "approvalAlways", "secondary"], ["deny", "approvalDeny", "danger"]];
  // a page's question (its origin asks; --ask sites) is also in that page; "always" there is the site's Settings
  for (const [decision, key, style] of choices.filter(([decision]) => request.kind === "mcp" || decision !== "always")) {
    const button = Timeline.el("button", `${style} approval-${decision}`.trim(), t(key));
    button.type = "button";
    button.dataset.decision = decision;
    button.addEventListener("click", () => answerApproval(request.approvalId, decision, li));
    buttons.append(button);
  }
  li.append(title, ...task, where, left, buttons);
  approvals.set(request.approvalId, { request, li });
  $("approval-list").append(li);
  renderApprovals();
  showWhere(request, where);
}

// Where the task will work, so the person decides knowing which of their tabs it gets: the tab's title and
// origin (as Chromium has them now), or a new tab; and the page it opens first, by its origin.
async function showWhere(request, where) {
  const opens = request.url ? originOf(request.url) : "";
  if (request.newTab || request.tabId == null) {
    PageText.set(where, opens ? t("approvalWhereNewTabAt", PageText.quote(opens)) : t("approvalWhereNewTab"));
    return;
  }
  const tab = await chrome.tabs.get(request.tabId).catch(() => null);
  const origin = PageText.quote(originOf(tab ? tab.url : ""));
  const place = tab ? t("approvalWhereTab", shownTitle(tab.title) || origin, origin)
    : t("approvalWhereTabGone", request.tabId);
  PageText.set(where, opens ? `${place} ${t("approvalWhereOpens", PageText.quote(opens))}` : place);
  where.dataset.tabId = String(request.tabId);
}

// A page's title as the card shows it: the page chose it, so it is quoted (lib/page_text.js: its controls and bidi
// overrides, which could make it read as another site, shown as codes), and a long one is cut. "" when it has none.
function shownTitle(title) {
  const words = String(title || "").trim();
  return words ? PageText.quote(Timeline.short(words, 79)) : "";
}

// A URL's origin, its host as the browser spells it (the URL API's punycode).
function originOf(url) {
  try {
    const parsed = new URL(url);
    return parsed.origin !== "null" ? parsed.origin : PageText.site(url); // about:blank, data: … say themselves
  } catch (_) {
    return PageText.site(url || "");
  }
}

// A task's words as its title: quoted (a page or a program may have asked for it), whole on hover.
function showTaskTitle(element, task) {
  PageText.set(element, task ? PageText.quote(task) : "");
  element.title = PageText.visible(task);
}

function closeApproval(approvalId) {
  const entry = approvals.get(approvalId);
  if (!entry) return;
  entry.li.remove();
  approvals.delete(approvalId);
  renderApprovals();
}

// The task's head sticks right under the questions (both stay in view): it needs their height.
new ResizeObserver(() => {
  document.documentElement.style.setProperty("--approvals-h", `${$("approvals").offsetHeight}px`);
}).observe($("approvals"));

function renderApprovals() {
  $("approvals").hidden = approvals.size === 0;
  if (approvals.size === 0) $("approval-error").hidden = true;
  clearInterval(approvalTicker);
  approvalTicker = null;
  if (approvals.size === 0) return;
  const paint = () => {
    for (const { request, li } of approvals.values()) {
      const seconds = Math.max(0, Math.ceil(((request.expiresAt || 0) - Date.now()) / 1000));
      li.querySelector(".approval-left").textContent = t("approvalLeft", seconds);
    }
  };
  paint();
  approvalTicker = setInterval(paint, 1000);
}

async function answerApproval(approvalId, decision, li) {
  $("approval-error").hidden = true;
  for (const button of li.querySelectorAll("button")) button.disabled = true;
  try {
    await ask("approval.answer", { approvalId, decision });
    closeApproval(approvalId); // approval.closed follows; the card goes at once
  } catch (error) {
    showError("approval-error", error.code === "not_found" ? new Error(t("approvalGone")) : error);
    closeApproval(approvalId); // answered elsewhere or timed out: nothing is left to answer
  }
}

// --- the other tabs' running tasks: Switch to, Stop -------------------------------------------------------------
const others = new Map(); // taskId → {taskId, task, tabId, status, requester}

function otherEntry(snapshot) {
  return { taskId: snapshot.taskId, task: snapshot.task || "", tabId: snapshot.tabId, status: snapshot.status,
    source: snapshot.source || null, requester: snapshot.requester || null };
}

function otherPush(message) {
  const entry = others.get(message.taskId);
  if (message.type === "task.result" || (message.type === "task.status" && TERMINAL.has(message.status))) {
    others.delete(message.taskId); // it ended: it leaves the list
  } else if (message.type === "task.status") {
    entry.status = message.status;
  } else {
    return;
  }
  renderOthers();
}

function renderOthers() {
  const items = [...others.values()].map((entry) => {
    const li = Timeline.el("li", "other-item");
    li.dataset.taskId = entry.taskId;
    li.dataset.tabId = String(entry.tabId);
    const pill = Timeline.el("span");
    paintPill(pill, entry.status);
    const text = Timeline.el("span", "other-text");
    const title = Timeline.el("span", "other-task");
    showTaskTitle(title, entry.task);
    const tab = Timeline.el("span", "other-tab muted", t("tabNumber", String(entry.tabId)));
    text.append(title);
    if (entry.requester) text.append(Timeline.el("span", "other-from muted", askedBy(entry)));
    text.append(tab);
    const switchTo = Timeline.el("button", "secondary other-switch", t("switchTo"));
    switchTo.type = "button";
    switchTo.title = t("switchToTitle");
    switchTo.addEventListener("click", () => switchToTab(entry.tabId));
    const stop = Timeline.el("button", "danger other-stop", t("stop"));
    stop.type = "button";
    stop.addEventListener("click", () => stopOther(entry.taskId, stop));
    li.append(pill, text, switchTo, stop);
    nameTab(tab, entry.tabId);
    return li;
  });
  $("other-list").replaceChildren(...items);
  $("other-tasks").hidden = items.length === 0;
}

// A tab as a person recognizes it: its title; until its page has one (still loading: a new tab has no address yet
// either, only the one it is going to), its address shortened host first ("shop.example/checkout"); its number only
// when it has neither. `tab.title` is "" then, and the popup said "on: tab 1234".
function tabName(tab) {
  const name = tab.title || shortAddress(tabAddress(tab));
  return name ? PageText.quote(name) : t("tabNumber", String(tab.id));
}

function tabAddress(tab) {
  return tab.url || tab.pendingUrl || "";
}

const SHORT_ADDRESS_CHARS = 60; // an address with no host (data:, a long file: path) is cut, the tooltip has it whole

function shortAddress(url) {
  let parsed = null;
  try {
    parsed = new URL(url);
  } catch (_) { /* not an address URL can read: shown as it is */ }
  if (parsed && parsed.host) return parsed.host + (parsed.pathname === "/" ? "" : parsed.pathname);
  return url.length > SHORT_ADDRESS_CHARS ? `${url.slice(0, SHORT_ADDRESS_CHARS - 1)}…` : url;
}

// Which tab another task works in, by tabName (its whole address as the tooltip).
async function nameTab(label, tabId) {
  const tab = await chrome.tabs.get(tabId).catch(() => null);
  if (!tab) return;
  PageText.set(label, tabName(tab));
  label.title = PageText.visible(PageText.site(tabAddress(tab)));
}

chrome.tabs.onUpdated.addListener((tabId, change, tab) => {
  if (change.title === undefined && change.url === undefined) return;
  for (const label of document.querySelectorAll(`#other-list .other-item[data-tab-id="${tabId}"] .other-tab`)) {
    nameTab(label, tabId);
  }
  // this view's own tab went to another page (the side panel stays open meanwhile): "on: …" and the site that
  // "Let this site start tasks" would allow follow it, or a tick there would allow the site the tab has left
  if (tabId === ui.targetTabId) {
    showTargetTab(tab);
    if (change.url !== undefined) loadSiteAccess();
  }
});

// In the toolbar popup, bringing another tab forward closes the popup; the side panel follows that tab.
async function switchToTab(tabId) {
  $("other-error").hidden = true;
  try {
    const tab = await chrome.tabs.update(tabId, { active: true });
    await chrome.windows.update(tab.windowId, { focused: true });
  } catch (error) {
    showError("other-error", error);
  }
}

async function stopOther(taskId, button) {
  $("other-error").hidden = true;
  button.disabled = true;
  try {
    await ask("task.stop", { taskId }); // answered once the task has ended
    others.delete(taskId);
    renderOthers();
  } catch (error) {
    showError("other-error", error);
    button.disabled = false;
  }
}

// The outcome, said once: a failure's text is already the last error card, so that card steps aside and
// the result box (which stays in view) says it, with the remedy for a popup user.
// `shown`: the task's status as the pill shows it (shownStatus): a task stopped or not done is no error, and its box
// says so in the pill's amber, not an error's red (a Stop the person pressed read as a failure).
const RESULT_TONES = { notDone: "not-done", stopped: "stopped" };

// `asker`: the task's {source, model}, for the remedy (Timeline.failure).
function paintResult(prefix, result, timeline, shown = "error", asker = null) {
  const box = $(prefix);
  if (!result) {
    box.hidden = true;
    return;
  }
  const text = result.data ? String(result.data) : "";
  box.hidden = false;
  box.className = `result ${result.success ? "ok" : RESULT_TONES[shown] || "failed"}`;
  const said = result.success ? { headline: text || t("resultDone"), remedy: "", detail: "" }
    : text ? Timeline.failure(Timeline.failedEvent(timeline, text), asker)
      : { headline: t("resultFailed"), remedy: "", detail: "" };
  PageText.set($(`${prefix}-text`), result.success && text ? PageText.quote(text) : said.headline);
  PageText.set($(`${prefix}-remedy`), said.remedy);
  $(`${prefix}-remedy`).hidden = !said.remedy;
  PageText.set($(`${prefix}-detail-text`), said.detail);
  $(`${prefix}-details`).hidden = !said.detail;
  for (const card of timeline.querySelectorAll(".card-error")) card.hidden = !result.success && card.dataset.message === text;
}

// What a task that ended with no result of its own says: an interrupted one, that tabpilot's host stopped
// under it (closed or crashed), and what to do, as who asked for it can (`asker`: {source, requester}).
function endedWithoutResult(status, asker) {
  return status === "interrupted" ? { success: false, data: Timeline.interrupted(asker.source, asker.requester) } : null;
}

// `follow`: the task ended while in view; the box is sticky, so it is in view already: scroll to the end so it covers no
// card either (a popup opened on it afterwards places its view itself, placeView).
function showResult(result, { follow = true } = {}) {
  if (!result) return;
  paintResult("result", result, $("timeline"), shownStatus(ui.status, ui.gaveUp), ui.asker);
  if (follow && !$("view-task").hidden) window.scrollTo({ top: document.documentElement.scrollHeight });
}

async function currentTargetTab() {
  const named = new URLSearchParams(location.search).get("tabId");
  if (named) {
    const tabId = Number(named);
    try {
      return await chrome.tabs.get(tabId);
    } catch (_) {
      return { id: tabId, title: "", url: "" };
    }
  }
  const [tab] = await chrome.tabs.query(PANEL ? { active: true, currentWindow: true } : { active: true, lastFocusedWindow: true });
  return tab || null;
}

// What to do instead, by the kind of tab (Tabs.unworkable): the Web Store is an https page itself, so "open a web
// page (http:// or https://)" was no advice there.
const UNWORKABLE_FIXES = { file: "unworkableFixFile", store: "unworkableFixStore" };

async function showTargetTab(chosen = null) {
  const tab = chosen || await currentTargetTab();
  ui.targetTabId = tab ? tab.id : null;
  ui.targetWindowId = tab && tab.windowId !== undefined ? tab.windowId : null;
  PageText.set($("target-tab"), tab ? t("onTab", tabName(tab)) : t("noTab"));
  $("target-tab").title = tab ? PageText.visible(PageText.site(tabAddress(tab))) : "";
  const unworkable = tab ? await Tabs.unworkable(tabAddress(tab)) : null;
  if (ui.targetTabId !== (tab ? tab.id : null)) return; // another tab was shown meanwhile
  ui.unworkable = unworkable;
  $("tab-unworkable").hidden = !unworkable;
  $("tab-unworkable-why").textContent = unworkable ? t(`unworkable_${unworkable}`) : "";
  $("tab-unworkable-fix").textContent = unworkable ? t(UNWORKABLE_FIXES[unworkable] || "unworkableFix") : "";
  offerRun();
}

// Run (and Rerun here) is offered when the host is there and the tab is one tabpilot can work in; Rerun in a new tab
// needs the host only.
function offerRun() {
  $("run").disabled = !ui.connected || !!ui.unworkable;
  $("past-rerun").disabled = !ui.connected || !!ui.unworkable;
  $("past-rerun-new").disabled = !ui.connected;
}

function errorText(error) {
  const key = ERROR_CODES[error.code];
  return key ? t(key) : error.message || String(error);
}

async function startTask(task, tabId) {
  $("task-error").hidden = true;
  const { taskId } = await ask("task.start", { task, tabId, source: PANEL ? "panel" : "popup" });
  ui.gaveUp = false;
  adoptTask(taskId, task);
  // the box is for the next task: left holding this one, the next task a person typed in the side panel was run
  // glued to its end ("…what I tell youType bob as user")
  $("task-input").value = "";
  if (ui.status === null || TERMINAL.has(ui.status)) setStatus("running");
  return taskId;
}

function startFailed(error) {
  showError("task-error", error);
  $("nav-settings").classList.toggle("attention", error.code === "not_configured");
}

$("task-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const task = $("task-input").value.trim();
  if (!task) return;
  $("task-error").hidden = true;
  if (ui.targetTabId === null) await showTargetTab();
  if (ui.targetTabId === null) return showError("task-error", new Error(t("noTab")));
  $("run").disabled = true;
  try {
    await startTask(task, ui.targetTabId);
    watchInSidePanel();
  } catch (error) {
    startFailed(error);
  } finally {
    offerRun();
  }
});

$("task-input").addEventListener("keydown", (event) => {
  if (event.key === "Enter" && (event.ctrlKey || event.metaKey) && !$("run").disabled && !$("run").hidden) {
    event.preventDefault();
    $("task-form").requestSubmit();
  }
});

$("stop").addEventListener("click", async () => {
  $("stop").disabled = true;
  try {
    await ask("task.stop", ui.taskId ? { taskId: ui.taskId } : {});
  } catch (error) {
    showError("task-error", error);
    $("stop").disabled = false;
  }
});

// Take over / Hand back / Answer: the worker refuses the agent's input to the tab at once and tells the host.
async function controlRequest(button, type, fields = {}) {
  $("task-error").hidden = true;
  button.disabled = true;
  try {
    await ask(type, { taskId: ui.taskId, ...fields });
    return true;
  } catch (error) {
    showError("task-error", error);
    return false;
  } finally {
    button.disabled = false;
  }
}

$("takeover").addEventListener("click", () => controlRequest($("takeover"), "task.takeover"));
$("approve-allow").addEventListener("click", () => controlRequest($("approve-allow"), "task.approve", { decision: "allow" }));
$("approve-deny").addEventListener("click", () => controlRequest($("approve-deny"), "task.approve", { decision: "deny" }));
$("handback").addEventListener("click", async () => {
  if (await controlRequest($("handback"), "task.handback", { note: $("handback-note").value })) $("handback-note").value = "";
});
$("answer-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const answer = $("answer-input").value.trim();
  if (answer && await controlRequest($("answer"), "task.answer", { answer })) $("answer-input").value = "";
});

// The side panel stays open while the user works in the page (the toolbar popup closes at the first click).
$("open-panel").hidden = PANEL || !chrome.sidePanel;
// The popup opens ready for the task: with nothing focused, what a person typed at once went nowhere. Not the side
// panel, which opens beside a page the person may be typing in.
if (!PANEL) $("task-input").focus();
// Run in the toolbar popup also opens the side panel of the task's window, so the task stays in view once the
// agent's first click on the page has closed the popup (Chromium closes it when the page takes the focus). Only once
// the host has taken the task: the panel takes the focus too, and opened at the press it closed the popup before a
// refusal ("No model set: open Settings…", a new user's first Run) could show, so the person saw nothing at all. The
// person's press on Run is what lets it open, for 5 s (measured: opened 4.5 s after it, refused 6 s after); a later
// start leaves the task in the popup. Not from the popup page opened as a tab (it stays open) nor from the panel.
let toolbarPopup = false;
if (!PANEL && chrome.sidePanel) chrome.tabs.getCurrent().then((own) => { toolbarPopup = !own; }, () => {});
function watchInSidePanel() {
  if (toolbarPopup && ui.connected && ui.targetWindowId !== null) {
    chrome.sidePanel.open({ windowId: ui.targetWindowId }).catch(() => {}); // refused without a person's press
  }
}
$("open-panel").addEventListener("click", async () => {
  const tab = ui.targetTabId !== null ? await chrome.tabs.get(ui.targetTabId).catch(() => null) : null;
  const windowId = tab ? tab.windowId : (await chrome.windows.getCurrent()).id;
  await chrome.sidePanel.open({ windowId });
  window.close();
});

if (PANEL) {
  // the panel belongs to a window: it works on that window's tab, whichever the user brings forward
  chrome.tabs.onActivated.addListener(async ({ tabId, windowId }) => {
    const own = await chrome.windows.getCurrent();
    if (windowId !== own.id || new URLSearchParams(location.search).get("tabId")) return;
    ui.targetTabId = tabId;
    await showTargetTab();
    loadSiteAccess(); // the site of the tab now in front, not the one the panel opened on
    if (ui.connected) refreshTasks({ retarget: true });
  });
}

// --- views ---------------------------------------------------------------------------------------------------
function showView(name) {
  for (const button of document.querySelectorAll("nav .nav")) button.classList.toggle("active", button.dataset.view === name);
  for (const view of ["task", "past", "settings"]) $(`view-${view}`).hidden = view !== name;
  document.body.dataset.view = name;
  if (name === "settings") $("nav-settings").classList.remove("attention");
  if (name === "task") $("nav-task").classList.remove("attention");
  if (name === "settings") loadSettings();
  if (name === "past") loadPast();
}

for (const button of document.querySelectorAll("nav .nav")) {
  button.addEventListener("click", () => showView(button.dataset.view));
}

// `error` in the person's words in the element `id`; null clears it.
// Show `error` in the element `id` (null: clear it). `reload`: the loader whose failure this is, run again when the
// host comes back if it failed for want of one (see reloadAfterReconnect).
function showError(id, error, reload = null) {
  PageText.set($(id), error ? errorText(error) : "");
  $(id).hidden = !error;
  const hostDown = !!error && HOST_AWAY.has(error.code);
  if (hostDown) $(id).dataset.hostDown = "true"; else delete $(id).dataset.hostDown;
  if (hostDown && reload) failedLoads.set(id, reload); else failedLoads.delete(id);
}

// Do `work` (asking the host, painting its reply): what went wrong is shown in the element `errorId`, which work
// that succeeded clears; `reload` as for showError.
async function attempt(errorId, work, reload = null) {
  try {
    await work();
    showError(errorId, null);
  } catch (error) {
    showError(errorId, error, reload);
  }
}

// One row of a list whose entries the person can remove (allowed sites and MCP clients, secrets): the name, a
// line about it, and a button (`button`: its class and words) that runs `remove`; a failure is shown in the element
// `errorId`, which a removal that worked clears.
function removableRow(label, detail, button, remove, errorId) {
  const li = document.createElement("li");
  li.dataset.name = label;
  const name = document.createElement("span");
  name.className = "site-name";
  PageText.set(name, PageText.quote(label));
  const about = document.createElement("span");
  about.className = "site-flags";
  PageText.set(about, detail);
  name.append(about);
  const press = document.createElement("button");
  press.type = "button";
  press.className = `secondary ${button.className}`;
  press.textContent = button.text;
  press.addEventListener("click", () => attempt(errorId, remove));
  li.append(name, press);
  return li;
}

// --- settings ----------------------------------------------------------------------------------------------
function fillSettings(settings) {
  $("set-base-url").value = settings.baseURL || "";
  $("set-model").value = settings.model || "";
  $("set-api-key").value = "";
  $("set-api-key").placeholder = settings.apiKeySet ? settings.apiKeyHint || t("keySetShort") : t("keyNotSet");
  $("api-key-hint").textContent = settings.apiKeySet
    ? t("keySetHint", settings.apiKeyHint || t("keyHidden"))
    : t("keyNotSetHint");
  $("clear-key").hidden = !settings.apiKeySet;
  $("set-max-steps").value = settings.maxSteps ?? "";
  if (settings.maxStepsLimit) $("set-max-steps").max = settings.maxStepsLimit; // the host's one limit
  $("set-language").value = settings.language || "en-US";
  $("set-vision").value = settings.useVision || "auto";
  settingsShown = settingsFields();
}

// The model settings as the form holds them (the key apart: it is never shown).
function settingsFields() {
  const fields = {
    baseURL: $("set-base-url").value.trim(),
    model: $("set-model").value.trim(),
    language: $("set-language").value,
    useVision: $("set-vision").value,
  };
  const maxSteps = $("set-max-steps").value.trim();
  if (maxSteps) fields.maxSteps = Number(maxSteps);
  return fields;
}

let settingsShown = {};

// A save sends only what the person changed since the form showed the host's values: a change made meanwhile
// elsewhere (`tabpilot config set` in a terminal) is not undone by the values the popup opened with.
function changedFields(fields, shown) {
  return Object.fromEntries(
    Object.entries(fields).filter(([name, value]) => JSON.stringify(value) !== JSON.stringify(shown[name])));
}

// A form's fields are locked while the host's values are on their way: what was typed meanwhile would be
// painted over by the reply, and a save would send what the popup opened with. (Fields already disabled for
// another reason stay so.)
async function whileLoading(form, load) {
  const unlocked = [...form.elements].filter((field) => !field.disabled);
  for (const field of unlocked) field.disabled = true;
  try {
    return await load();
  } finally {
    for (const field of unlocked) field.disabled = false;
  }
}

async function loadSettings() {
  $("settings-error").hidden = true;
  $("settings-saved").textContent = "";
  $("test-result").hidden = true;
  $("settings-form").dataset.loaded = "false";
  try {
    await whileLoading($("settings-form"), async () => fillSettings(await ask("settings.get")));
    $("settings-form").dataset.loaded = "true";
  } catch (error) {
    showError("settings-error", error, loadSettings);
  }
}

async function saveSettings(fields, savedText) {
  $("settings-error").hidden = true;
  $("settings-saved").textContent = "";
  try {
    fillSettings(await ask("settings.set", fields));
    $("settings-saved").textContent = savedText;
  } catch (error) {
    showError("settings-error", error);
  }
}

$("settings-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const fields = changedFields(settingsFields(), settingsShown);
  const apiKey = $("set-api-key").value.trim();
  if (apiKey) fields.apiKey = apiKey;
  await saveSettings(fields, t("saved"));
});

// An empty key clears it (PROTOCOL.md settings.set).
$("clear-key").addEventListener("click", () => saveSettings({ apiKey: "" }, t("keyCleared")));

// Test connection: what the form holds now (saved or not); the host fills in the saved values for what is
// left empty and says what works or exactly what does not.
$("settings-test").addEventListener("click", async () => {
  const button = $("settings-test");
  const box = $("test-result");
  button.disabled = true;
  box.hidden = false;
  box.className = "test-result testing";
  box.dataset.state = "testing";
  $("test-headline").textContent = t("testing");
  $("test-remedy").hidden = $("test-detail").hidden = true;
  const fields = {};
  for (const [id, key] of [["set-base-url", "baseURL"], ["set-model", "model"], ["set-api-key", "apiKey"]]) {
    const value = $(id).value.trim();
    if (value) fields[key] = value;
  }
  try {
    showTestResult(await ask("settings.test", fields));
  } catch (error) {
    showTestResult({ ok: false, problem: "request", message: errorText(error) });
  } finally {
    button.disabled = false;
  }
});

function showTestResult(outcome) {
  const box = $("test-result");
  box.className = `test-result ${outcome.ok ? "ok" : "failed"}`;
  box.dataset.state = outcome.ok ? "ok" : "failed";
  box.dataset.problem = outcome.problem || "";
  const model = outcome.model || "";
  let headline;
  let remedy = "";
  let detail = outcome.detail || "";
  if (outcome.ok) {
    headline = t("testOk", outcome.baseURL, model);
    if (outcome.modelListed === false) detail = t("testNotListed", model);
  } else if (outcome.problem === "request") {
    headline = outcome.message;
  } else {
    const subs = { unreachable: [outcome.baseURL], timeout: [outcome.baseURL], key_refused: [outcome.status ?? ""],
      not_openai: [outcome.baseURL], model_unknown: [model], rejected: [outcome.status ?? ""], not_configured: [] };
    headline = subs[outcome.problem] ? t(`test_${outcome.problem}`, ...subs[outcome.problem]) : outcome.message;
    remedy = subs[outcome.problem] ? t(`testFix_${outcome.problem}`) : "";
    if (outcome.problem === "model_unknown" && outcome.models && outcome.models.length) {
      detail = t("testModelsOffered", outcome.models.slice(0, 8).join(", "));
    }
  }
  PageText.set($("test-headline"), headline); // a server's words (its error, the models it lists) in them
  $("test-remedy").textContent = remedy;
  $("test-remedy").hidden = !remedy;
  PageText.set($("test-detail"), detail);
  $("test-detail").hidden = !detail;
}

// --- past tasks ---------------------------------------------------------------------------------------------
// startedAt / endedAt are epoch milliseconds (store/tasks.py TaskSummary.to_wire).
function formatTime(ms) {
  if (!Number.isFinite(ms)) return "";
  return new Date(ms).toLocaleString(I18n.language, { dateStyle: "medium", timeStyle: "short" });
}

function count(value, one, many) {
  return value === 1 ? t(one, value) : t(many, value);
}

const NOT_RUN = new Set(["denied", "refused", "withdrawn"]); // asked for by a page or an MCP client, never run: no steps

// Who started a past task, where not this popup or side panel (the host's `startedBy`, store TaskSummary.started_by).
const STARTED_BY = { terminal: "pastFromTerminal", page: "pastFromPage", mcp: "pastFromMcp" };

function pastMeta(row) {
  const parts = [formatTime(row.startedAt), NOT_RUN.has(row.status) ? "" : count(row.steps ?? 0, "stepsOne", "stepsMany")];
  if (row.totalTokens) parts.push(count(row.totalTokens, "tokensOne", "tokensMany"));
  if (STARTED_BY[row.startedBy]) parts.push(t(STARTED_BY[row.startedBy], row.requester ? PageText.requester(row.startedBy, row.requester) : "?"));
  return parts.filter(Boolean).join(" · ");
}

// A past task's second line: when and who as pastMeta says it, then a mark where the person took over during it.
function paintPastMeta(line, row) {
  line.replaceChildren(PageText.nodes(pastMeta(row)));
  if (row.tookOver) line.append(" · ", Timeline.el("span", "past-took-over", t("pastTookOver")));
}

async function loadPast() {
  $("past-error").hidden = true;
  $("past-detail").hidden = true;
  $("past-list-wrap").hidden = false;
  try {
    const search = $("past-search").value.trim();
    const { tasks } = await ask("history.list", search ? { limit: 50, search } : { limit: 50 });
    const items = tasks.map((row) => {
      const li = Timeline.el("li", "past-item");
      li.dataset.taskId = row.taskId;
      li.tabIndex = 0;
      const pill = Timeline.el("span");
      paintPill(pill, shownStatus(row.status, row.gaveUp));
      const task = Timeline.el("span", "past-task");
      showTaskTitle(task, row.task);
      const meta = Timeline.el("span", "past-meta muted");
      paintPastMeta(meta, row);
      li.append(pill, task, meta);
      // how it ended, in a line (the host's: its result's first line, or the error it ended with); one never run as
      // its detail says it: the host's why is English ("The person using the browser refused…" in a Chinese popup)
      const said = NOT_RUN.has(row.status) ? notRunWords(row) : row.outcome;
      if (said) {
        const shown = NOT_RUN.has(row.status) ? said : PageText.quote(said);
        const outcome = Timeline.el("span", "past-outcome", shown);
        outcome.title = PageText.plain(shown);
        li.append(outcome);
      }
      li.addEventListener("click", () => openPast(row.taskId));
      li.addEventListener("keydown", (event) => { if (event.key === "Enter") openPast(row.taskId); });
      return li;
    });
    if (search !== $("past-search").value.trim()) return; // typed on meanwhile: that listing is on its way
    $("past-list").replaceChildren(...items);
    $("past-empty").textContent = t(search ? "pastNoMatch" : "pastEmpty");
    $("past-empty").hidden = items.length > 0;
  } catch (error) {
    showError("past-error", error, loadPast);
  }
}

async function openPast(taskId) {
  $("past-error").hidden = true;
  try {
    const { task, result, events } = await ask("history.get", { taskId });
    const row = task && typeof task === "object" ? task : { task, status: "" };
    ui.pastTaskId = row.taskId || taskId;
    ui.pastTask = { task: row.task || "", url: row.url || "" };
    showTaskTitle($("past-title"), row.task || "");
    paintPill($("past-status"), shownStatus(row.status, row.gaveUp));
    paintPastMeta($("past-meta"), row);
    Timeline.render($("past-timeline"), events);
    if (NOT_RUN.has(row.status)) paintNotRun(row, result);
    else {
      paintResult("past-result", pastResult(row, result) || endedWithoutResult(row.status, row), $("past-timeline"),
        shownStatus(row.status, row.gaveUp), row);
    }
    $("past-delete").textContent = t("delete");
    $("past-delete").dataset.armed = "false";
    // A request refused or denied is not offered again: one click would run what the person said no to.
    $("past-rerun").hidden = NOT_RUN.has(row.status);
    $("past-rerun-new").hidden = NOT_RUN.has(row.status) || !/^(https?|file):/.test(ui.pastTask.url);
    $("past-list-wrap").hidden = true;
    $("past-detail").hidden = false;
  } catch (error) {
    showError("past-error", error);
  }
}

// A task asked for and never run says so in the person's language, who asked, and the recorded why (the host's
// words, in English) under Details.
function paintNotRun(row, result) {
  const why = result && typeof result.data === "string" ? result.data : "";
  $("past-result").hidden = false;
  $("past-result").className = "result failed";
  PageText.set($("past-result-text"), notRunWords(row));
  $("past-result-remedy").hidden = true;
  PageText.set($("past-result-detail-text"), why);
  $("past-result-details").hidden = !why;
}

function notRunWords(row) {
  const said = { denied: "pastDenied", refused: "pastRefused", withdrawn: "pastWithdrawn" }[row.status];
  return t(said, row.requester ? PageText.requester(row.startedBy, row.requester) : "?");
}

// The stored result ({success, data}) of a task that ended; a task with none (interrupted) has none to show.
function pastResult(row, result) {
  if (result && typeof result === "object" && (result.data || typeof result.success === "boolean")) {
    return { success: result.success === true, data: result.data };
  }
  if (row.resultText) return { success: row.success === true, data: row.resultText };
  return null;
}

// Rerun: the same task text, on the tab this popup works on, or on a new tab opened at the task's page.
async function rerun(newTab) {
  if (!ui.pastTask) return;
  $("past-error").hidden = true;
  try {
    let tabId = ui.targetTabId;
    // Opened in the background: bringing a tab forward closes the toolbar popup, so that waits until the
    // task has started (the host has it then; input into a background tab is slow, so it does come forward).
    if (newTab) {
      const tab = await chrome.tabs.create({ url: ui.pastTask.url, active: false });
      tabId = tab.id;
      showTargetTab(tab); // this view now works on that tab: its task is the one shown
      await Tabs.firstPageLoaded(tabId);
    }
    if (tabId === null) throw new Error(t("noTab"));
    $("task-input").value = ui.pastTask.task;
    showView("task");
    await startTask(ui.pastTask.task, tabId);
    if (newTab) await chrome.tabs.update(tabId, { active: true });
  } catch (error) {
    showView("task");
    startFailed(error);
  }
}

$("past-rerun").addEventListener("click", () => rerun(false));
$("past-rerun-new").addEventListener("click", () => rerun(true));
$("past-back").addEventListener("click", loadPast);
// The list follows what is typed, once the typing pauses.
$("past-search").addEventListener("input", () => {
  clearTimeout(ui.pastSearchTimer);
  ui.pastSearchTimer = setTimeout(loadPast, 200);
});

$("past-export").addEventListener("click", async () => {
  try {
    const data = await ask("history.export", { taskId: ui.pastTaskId });
    ui.lastExport = JSON.stringify(data, null, 2);
    const url = URL.createObjectURL(new Blob([ui.lastExport], { type: "application/json" }));
    const link = Timeline.el("a");
    link.href = url;
    link.download = `tabpilot-task-${ui.pastTaskId}.json`;
    link.click();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
  } catch (error) {
    showError("past-error", error);
  }
});

// Two clicks to delete: no confirm() dialog, which would block the popup.
$("past-delete").addEventListener("click", async () => {
  const button = $("past-delete");
  if (button.dataset.armed !== "true") {
    button.dataset.armed = "true";
    button.textContent = t("reallyDelete");
    return;
  }
  button.dataset.armed = "false";
  try {
    await ask("history.delete", { taskId: ui.pastTaskId });
    await loadPast();
  } catch (error) {
    showError("past-error", error);
  }
});

I18n.apply();
showView("task");
showTargetTab().finally(connectWorker); // the view asks for its tab's task: it needs the tab first
