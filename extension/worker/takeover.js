// tabpilot service worker, part 2 (loaded by service_worker.js with importScripts): what the worker knows
// of the running tasks, for the user's takeover (issue 10). The host owns every task's state; this file
// keeps a copy learnt from hello / task.get snapshots and the task.* pushes, and with it:
// - puts the overlay (content/overlay.js) and the capture script (content/capture.js) into task tabs and
//   tells each frame its capture mode (watch while the agent has the controls, record while the user has);
// - tells the agent's input from the user's: the relay logs when it dispatched Input.* to a tab; trusted
//   input reported by capture.js outside those windows is the user's → implicit takeover, and from that
//   moment no Input.* reaches that tab until the user hands back;
// - relays the overlay's and the popup's Take over / Hand back / Answer / Stop, and the recorded actions
//   (batched) to the host;
// - shows a desktop notification when the agent asks for help or asks a question.
"use strict";

const TASK_SCRIPT_ID = "tabpilot-task-tab";
const SEEN_FILE = "lib/seen.js"; // the overlay's host element in the top layer while it asks to allow
const HOLD_FILE = "lib/hold.js"; // nothing of the overlay moves under a press
const OVERLAY_FILE = "content/overlay.js";
// The overlay's panel: a sandboxed frame of its own that content/overlay.js makes, named PANEL_NAME + its key; these
// files go into it once its name says it is the tab's overlay's (no extension page is web-accessible: a page could
// load it, and so learn the extension is installed)
const PANEL_NAME = "tabpilot-panel:";
const PANEL_FILES = ["lib/i18n.js", "lib/page_text.js", "lib/timeline.js", "lib/asking.js", SEEN_FILE, HOLD_FILE, "overlay/panel.js"];
const PANEL_CSS = "overlay/panel.css";
const CAPTURE_FILE = "content/capture.js";
const NAMES_FILE = "content/names.js"; // how capture.js names an icon-only control, as the agent's page state does
// How long after an Input.* call returned the page may still be handling the events it caused. Measured on
// the 20-step e2e task (tests/e2e/test_takeover.py, `takeoverStats.maxAgentLagMs`): 0 ms over 134 events
// (Chromium answers an Input.dispatch* call once the page has handled it); the rest is a margin for load.
const AGENT_INPUT_SLACK_MS = 150;
// A press on the overlay is the agent's only while its click is being dispatched (its coordinates landed on
// the overlay); a person pressing right after the agent typed is still the person.
const OVERLAY_PRESS_SLACK_MS = 30;
const INPUT_WINDOWS_KEPT = 200;
const ACTION_BATCH_MS = 100; // the person's actions go to the host in batches: one message per this long at most
const OVERLAY_CLAIM_MS = 150;
const OVERLAY_TARGET = 'region "tabpilot"'; // content/overlay.js: its host element's role and aria-label
const USER_TOOK_OVER = "the user took over";
// Input kinds that never mean the user took the controls (contract: mouse moves alone never count).
const PASSIVE_INPUT = new Set(["mousemove", "pointermove", "mouseover", "mouseout", "mouseenter", "mouseleave",
  "pointerover", "pointerout", "pointerenter", "pointerleave", "focus", "blur", "focusin", "focusout"]);

// taskId → {taskId, tabId, task, status, source, requester, control, question, nextGoal, activity, outcome, failure,
// steps, thinkingSince, acting, overlayRemoved, overlayLowered, gaveUp}
const tasks = new Map();
const openedBy = new Map(); // tabId → the task tab that opened it (the user's takeover follows into it)
const userHasControls = new Set(); // tabIds where Input.* relays are refused
const inputWindows = new Map(); // tabId → [{start, end}] of the Input.* calls relayed (end null: in flight)
const overlayPorts = new Map(); // tabId → the overlay's port in that tab's top frame (content/overlay.js)
// tabId → the key of the panel that tab's overlay framed (told over its port): the panel that gives it is that frame
const panelKeys = new Map();
const panelPorts = new Map(); // tabId → the port of the overlay's panel (overlay/panel.js): what it shows, its presses
const panelFrames = new Map(); // tabId → the frameId of the overlay's panel frame, once its files went in
const overlayClaims = new Map(); // tabId → time the overlay last saw the user press it
const pendingActions = new Map(); // taskId → {actions, late, timer}: not sent yet, or not taken (see flushActions)
const sentModes = new Map(); // tabId → the capture mode last sent to the tab
const captureFrames = new Map(); // tabId → Set of frameIds whose content scripts said hello
const notified = new Map(); // taskId → what was last notified ("agent_request:<message>" / "question:<q>" / "approval:…")
// Actions capture.js sent before this worker knew the tab's task: a restarted worker is woken by the first
// of them, before the host (which resumes the task) said hello. Kept until the task is known.
const unclaimedActions = new Map(); // tabId → [{action, takeover, at}]
const UNCLAIMED_KEPT_MS = 60000;
const UNCLAIMED_LIMIT = 500;
// Figures for tests and bench (looked at over CDP like the rest of the worker's state).
const takeoverStats = {
  implicit: 0, agentInput: 0, maxAgentLagMs: 0, refusedInput: 0, overlayInput: 0, inputMessages: 0,
};

// --- what the worker knows of tasks -------------------------------------------------------------------
function learnSnapshot(snapshot) {
  if (!snapshot || !snapshot.taskId) return null;
  const known = tasks.get(snapshot.taskId) || { taskId: snapshot.taskId, nextGoal: null, activity: null };
  Object.assign(known, {
    tabId: snapshot.tabId ?? known.tabId, task: snapshot.task ?? known.task, status: snapshot.status,
    source: snapshot.source ?? known.source, requester: snapshot.requester ?? known.requester ?? null,
    question: snapshot.question || null, approval: snapshot.approval || null,
  });
  learnControl(known, snapshot.control);
  if (snapshot.activity !== undefined) learnActivity(known, snapshot.activity);
  forgetEndedTasks();
  const steps = (snapshot.history || []).filter((e) => e && e.type === "step");
  if (steps.length) known.nextGoal = goalOf(steps[steps.length - 1]) ?? known.nextGoal;
  for (const step of steps) learnStep(known, step);
  const errors = (snapshot.history || []).filter((e) => e && e.type === "error");
  if (errors.length) known.failure = errorOf(errors[errors.length - 1]);
  if (snapshot.result) known.outcome = outcomeOf(snapshot.result, known.failure);
  known.gaveUp = !!snapshot.gaveUp;
  tasks.set(known.taskId, known);
  rememberTabTask(known.tabId, known.taskId);
  taskChanged(known);
  return known;
}

// The host keeps the record; this worker keeps only what the overlays and modes need.
const ENDED_TASKS_KEPT = 20;
function forgetEndedTasks() {
  const ended = [...tasks.values()].filter((t) => t.status !== "running");
  for (const task of ended.slice(0, Math.max(0, ended.length - ENDED_TASKS_KEPT))) {
    tasks.delete(task.taskId);
    notified.delete(task.taskId);
    asks.delete(task.taskId);
  }
}

// How a finished task ended, for its overlay: the person watching the page learns there what came of it (the
// answer, or what went wrong and what to do), not only "Error". The error event the result came from carries the
// code the popup words a failure by (lib/timeline.js failure()).
const OUTCOME_CHARS = 280;
function errorOf(event) {
  const { message, text, code, params } = event;
  return { message: String(message || ""), text, code, params };
}

function outcomeOf(result, failure) {
  const data = result && result.data !== undefined && result.data !== null ? String(result.data) : "";
  const error = !result.success && failure && failure.message === data ? failure : null;
  return { success: !!result.success, data: data.length > OUTCOME_CHARS ? `${data.slice(0, OUTCOME_CHARS)}…` : data,
    error };
}

// What the agent does now: since when it thinks about its step (this worker's clock: the push has no time), or which
// action of which step it takes (lib/working.js).
function learnActivity(task, activity) {
  const type = activity && activity.type;
  task.thinkingSince = type === "thinking" ? task.thinkingSince ?? Date.now() : null;
  task.acting = Working.acting(task.acting, activity, (task.steps || 0) + 1);
  task.activity = activity || null;
}

function learnStep(task, step) {
  task.steps = Math.max(task.steps || 0, (Number.isInteger(step.stepIndex) ? step.stepIndex : 0) + 1);
}

// What this worker knows of the task `taskId` that the host does not, for a popup's snapshot of it: since when it
// thinks (null: it does not, or this worker did not see it begin), which action it takes since when, and whether its
// page took its overlay away.
function workerViewOf(taskId) {
  const known = tasks.get(taskId);
  return { thinkingSince: (known && known.thinkingSince) || null, acting: (known && known.acting) || null,
    overlayRemoved: !!(known && known.overlayRemoved), overlayLowered: !!(known && known.overlayLowered) };
}

// A page that took the overlay out whenever it came back (content/overlay.js PUT_BACK_LIMIT): the popup and side panel
// say so, as the person watching the page no longer sees it, until a panel is in the page again. One that kept its
// question to allow out of the top layer (`lowered`): they say the question can be answered there, while it is asked.
// `change`: {removed} or {lowered}; the other stays as it was.
function overlayChanged(tabId, change) {
  const task = runningTaskOfTab(tabId);
  if (!task) return;
  const { removed = !!task.overlayRemoved, lowered = !!task.overlayLowered } = change;
  if (removed === !!task.overlayRemoved && lowered === !!task.overlayLowered) return;
  task.overlayRemoved = removed;
  task.overlayLowered = lowered;
  broadcast({ kind: "push", message: { type: "task.overlay", taskId: task.taskId, removed, lowered } });
}

// The host's word on who has the controls. A takeover this worker began (`own`: its start is the person's press, which
// the host takes as the takeover's) that the host had begun already (the agent asked for help at that moment) keeps
// this worker's start too (`was`): the frames told it record for it, and say so with what they recorded (routeActions)
function learnControl(task, control) {
  const before = task.control;
  task.control = control ? { ...control } : null;
  if (before && before.own && task.control && task.control.startedAt !== before.startedAt) {
    task.control.was = before.startedAt;
  }
}

// Whether `takeover` ({startedAt, was}: a task's control, or a late answer awaited) is the one begun at `startedAt`
const begunAt = (takeover, startedAt) => !!takeover && (takeover.startedAt === startedAt || takeover.was === startedAt);

function goalOf(step) {
  return step && step.reflection && step.reflection.next_goal ? String(step.reflection.next_goal) : null;
}

// Every task the host runs, after a hello (a new host, or this worker restarted): what it says is all.
function learnTasks(snapshots) {
  const running = new Set();
  for (const snapshot of snapshots || []) {
    const task = learnSnapshot(snapshot);
    if (task) running.add(task.taskId);
  }
  for (const task of tasks.values()) {
    if (!running.has(task.taskId) && task.status === "running") {
      task.status = "interrupted";
      task.control = null;
      task.question = null;
      task.approval = null;
      taskChanged(task);
    }
  }
  claimActions();
  // what no host took yet (the one before went, or this worker restarted: chrome.storage.session), to this one
  outboxLoaded.then(() => { for (const taskId of [...pendingActions.keys()]) flushActions(taskId); });
  for (const tabId of overlayPorts.keys()) postOverlay(tabId); // overlays that connected before the hello
  syncContentScripts(); // a registration left from before this worker started goes when no task runs
}

// The host went away. A task the person has the controls of stays theirs here, recorded as before, until the next
// host's hello says what became of it (learnTasks): what they do meanwhile is kept for that host.
function forgetAllTasks() {
  for (const task of tasks.values()) {
    if (task.status !== "running" || task.control) continue;
    task.status = "interrupted";
    task.control = null;
    task.question = null;
    taskChanged(task);
  }
}

const lookingUp = new Set();
async function lookUpTask(taskId) {
  if (lookingUp.has(taskId)) return;
  lookingUp.add(taskId);
  try {
    const data = await requestHost({ type: "task.get", taskId });
    if (data && data.task) learnSnapshot(data.task);
  } catch (error) {
    console.warn("tabpilot: could not learn task", taskId, error.message);
  } finally {
    lookingUp.delete(taskId);
  }
}

// A task.* push from the host (also relayed to popups by the caller).
function onTaskPush(message) {
  const task = tasks.get(message.taskId);
  if (!task) {
    lookUpTask(message.taskId); // started elsewhere (a page, another popup before this worker started)
    return;
  }
  switch (message.type) {
    case "task.status":
      task.status = message.status;
      task.gaveUp = !!message.gaveUp;
      if (message.status !== "running") {
        task.control = null;
        task.question = null;
        task.approval = null;
      }
      break;
    case "task.activity":
      learnActivity(task, message.activity);
      if (task.activity && task.activity.type === "question") task.question = task.activity.question || task.question;
      break;
    case "task.event":
      if (message.event && message.event.type === "step") {
        task.nextGoal = goalOf(message.event) ?? task.nextGoal;
        learnStep(task, message.event);
      }
      if (message.event && message.event.type === "error") task.failure = errorOf(message.event);
      break;
    case "task.control":
      learnControl(task, message.control);
      task.question = message.question || null;
      task.approval = message.approval || null;
      if (!task.approval) overlayChanged(task.tabId, { lowered: false }); // the question was answered
      break;
    case "task.result":
      task.outcome = outcomeOf(message.result || {}, task.failure);
      task.gaveUp = !!message.gaveUp;
      break;
    default:
      return;
  }
  taskChanged(task);
}

function runningTaskOfTab(tabId) {
  let owner = tabId;
  for (let hops = 0; owner !== undefined && hops < 10; hops++, owner = openedBy.get(owner)) {
    for (const task of tasks.values()) if (task.tabId === owner && task.status === "running") return task;
  }
  return null;
}

// The newest (task ids sort by when they started): not the one learnt last, which may be an older task looked up again
// for a late push of its own (its overlay then showed that task's end over the newer one's).
function lastTaskOfTab(tabId) {
  let found = null;
  for (const task of tasks.values()) if (task.tabId === tabId && (!found || task.taskId > found.taskId)) found = task;
  return found;
}

function tabsOfTask(task) {
  const tabs = [task.tabId];
  for (const [tabId, opener] of openedBy) if (tabs.includes(opener) && !tabs.includes(tabId)) tabs.push(tabId);
  return tabs;
}

function captureMode(task) {
  if (!task || task.status !== "running") return "off";
  return task.control ? "record" : "watch";
}

// One place where a change of a task reaches the tabs: input refusal, capture modes, overlays, the
// content-script registration, notifications.
function taskChanged(task) {
  const running = task.status === "running";
  for (const tabId of tabsOfTask(task)) {
    // A push of a task this tab no longer runs (its late end, or the task looked up again) changes that task only:
    // the tab's input refusal and capture are the task's it runs now. Applied, a late "stopped" of the one before
    // lifted the refusal and stopped the recording of a person who had the controls of the new one (the field they
    // were typing in went to the task before).
    const current = runningTaskOfTab(tabId);
    if (current && current !== task) continue;
    if (running && task.control) userHasControls.add(tabId);
    else userHasControls.delete(tabId);
    // a frame that stops recording hands over the field still being typed in: the person's, sent as the rest
    sendMode(tabId, captureMode(task)).then(({ actions }) => { for (const action of actions) queueAction(task, action); });
    postOverlay(tabId);
  }
  if (running && !task.control) flushActions(task.taskId);
  notifyIfAsked(task);
  syncContentScripts();
  if (running) injectInto(task.tabId);
}

// --- the content scripts in task tabs ----------------------------------------------------------------------
let captureExists = null;
async function taskTabFiles() {
  if (captureExists === null) {
    captureExists = await fetch(chrome.runtime.getURL(CAPTURE_FILE)).then((r) => r.ok, () => false);
  }
  const overlay = [SEEN_FILE, HOLD_FILE, OVERLAY_FILE];
  return captureExists ? [...overlay, NAMES_FILE, CAPTURE_FILE] : overlay;
}

// Registered (document_start, every frame) while a task runs, so a frame that loads in a task tab — after
// a navigation, a reload, a new iframe, a tab the task opens — has them before the page's own scripts run.
// In a tab without a task they ask the worker once (frame.hello) and stay idle.
let registration = Promise.resolve();
let registered = null; // whether they are, as this worker last made or saw it (null: not looked yet)
function syncContentScripts() {
  registration = registration.then(async () => {
    const wanted = [...tasks.values()].some((t) => t.status === "running");
    if (wanted === registered) return; // every task push comes here: no call into the browser for nothing
    const have = registered ?? (await chrome.scripting.getRegisteredContentScripts({ ids: [TASK_SCRIPT_ID] })).length > 0;
    if (wanted && !have) {
      await chrome.scripting.registerContentScripts([{
        id: TASK_SCRIPT_ID, matches: ["<all_urls>"], js: await taskTabFiles(), allFrames: true,
        matchOriginAsFallback: true, runAt: "document_start", persistAcrossSessions: false,
      }]);
    } else if (!wanted && have) {
      await chrome.scripting.unregisterContentScripts({ ids: [TASK_SCRIPT_ID] });
    }
    registered = wanted;
  }).catch((error) => console.warn("tabpilot: content script registration:", error.message));
  return registration;
}

// The documents already loaded when the task started get the scripts now (both guard against running
// twice in one document).
const injected = new Map(); // tabId → taskId the scripts were injected for
async function injectInto(tabId) {
  const task = runningTaskOfTab(tabId);
  if (!task || injected.get(tabId) === task.taskId) return;
  injected.set(tabId, task.taskId);
  try {
    await chrome.scripting.executeScript({ target: { tabId, allFrames: true }, files: await taskTabFiles() });
  } catch (error) {
    // a page extensions may not script (chrome://, the web store): no overlay there, the popup still works
    console.warn(`tabpilot: no overlay in tab ${tabId}:`, error.message);
  }
}

// Tell every frame of the tab its capture mode. A frame leaving "record" answers with the actions it still
// held (the field being typed in): they are returned, in frame order, for the caller to send before
// handing back. `answerBy`: until when the frames' answers are waited for (asked at `askedAt`); the frames that have not
// answered by then are returned as `late` ({tabId, frameId, answer}: what they held is not waited for). A frame that
// reads the change only after `answerBy` knows it is late: it gives its answer as `capture.late` (onCaptureLate).
async function sendMode(tabId, mode, { frameId, askedAt, answerBy } = {}) {
  const told = modeOf(tabId, mode);
  if (frameId === undefined) {
    const key = JSON.stringify(told);
    if (sentModes.get(tabId) === key) return { actions: [], late: [] };
    sentModes.set(tabId, key);
  }
  const frameIds = frameId !== undefined ? [frameId] : [...(captureFrames.get(tabId) || [0])];
  const answers = frameIds.map((id) =>
    chrome.tabs.sendMessage(tabId, { type: "capture.mode", ...told, askedAt, answerBy }, { frameId: id })
      .catch(() => null));
  const patience = answerBy === undefined ? undefined : Math.max(0, answerBy - Date.now());
  const replies = await Promise.all(answers.map((answer) => answerWithin(patience, answer)));
  return {
    actions: replies.flatMap(actionsOf),
    late: frameIds.map((id, i) => ({ tabId, frameId: id, answer: answers[i] })).filter((_, i) => replies[i] === SILENT),
  };
}

// A frame's capture mode; "record" says which takeover: since when the input was the user's (capture.js reports what it
// saw from then on) and of which task, which the frame tells with what it records (routeActions)
function modeOf(tabId, mode) {
  const task = runningTaskOfTab(tabId);
  if (mode !== "record" || !task || !task.control) return { mode };
  return { mode, since: task.control.startedAt, taskId: task.taskId };
}

const actionsOf = (reply) => (reply && reply !== SILENT && Array.isArray(reply.actions) ? reply.actions : []);

const SILENT = Symbol("no answer in time");
function answerWithin(patience, answer) {
  if (patience === undefined) return answer;
  let timer;
  return Promise.race([answer, new Promise((resolve) => { timer = setTimeout(resolve, patience, SILENT); })])
    .finally(() => clearTimeout(timer));
}

// How long Hand back and Stop wait for the frames' last actions (the field still being typed in). A frame answers
// within milliseconds unless its page's own script is busy, and one that hangs answers only when it is done, maybe
// never: Hand back and Stop waited for it, and the person could neither give the controls back nor stop the task.
const FRAMES_PATIENCE_MS = 1000;

// Before the controls go back (or the task stops): every frame stops recording, and what it still held is
// sent to the host after what it sent already. Returns the frames that did not answer in time (their page is slow,
// or hangs) as a late answer (`awaitLate`), or null when all did.
async function collectActions(task, mode) {
  const { startedAt, was } = task.control || {}; // the takeover that ends (its control may go while frames answer)
  const endedAt = Date.now();
  const asked = { askedAt: endedAt, answerBy: endedAt + FRAMES_PATIENCE_MS };
  const told = await Promise.all(tabsOfTask(task).map((tabId) => sendMode(tabId, mode, asked)));
  for (const { actions } of told) for (const action of actions) queueAction(task, action);
  await flushActions(task.taskId);
  const late = told.flatMap((frames) => frames.late);
  return late.length ? awaitLate(task, { startedAt, was }, late, asked) : null;
}

// A slow page (not a hung one; a loaded machine) answers a moment after Hand back or Stop went on without it: what
// it gives then (the field typed in up to then, in the answer or reported on its own just before it) goes to the host
// for the takeover that ended, so nothing the person did is lost. Listened to this long at most.
const LATE_PATIENCE_MS = 10000;
// tabId → the late answers its frames are awaited for, oldest first: {taskId, startedAt, endedAt, answerBy, takeover,
// tabs, frames, actions, until} (`startedAt`: of the takeover that ended, as its frames were told to record for it;
// `takeover`: the host's startedAt of it, as its reply to Hand back or Stop said; `frames`: "tabId:frameId" of those
// still silent), with `done`: whether one was still silent at the end.
// Kept in chrome.storage.session with the outbox until they are in it (`lateKept`): a worker stopped meanwhile (idle
// 30 s, an update) lost them, and the page's answer, which then wakes the next worker, went nowhere.
const lateAnswers = new Map();
const lateKept = new Set();
const frameKey = (tabId, frameId) => `${tabId}:${frameId}`;

function awaitLate(task, { startedAt, was }, silent, { askedAt, answerBy }) {
  const late = waitForLate({ taskId: task.taskId, startedAt, was, endedAt: askedAt, answerBy, takeover: undefined,
    tabs: tabsOfTask(task), frames: silent.map(({ tabId, frameId }) => frameKey(tabId, frameId)), actions: [],
    until: askedAt + LATE_PATIENCE_MS });
  for (const { tabId, frameId, answer } of silent) answer.then((reply) => lateFrameAnswered(late, tabId, frameId, actionsOf(reply)));
  return late;
}

// `late` waited for until its frames answered or its time is up: one this worker asked, or one the worker before kept
function waitForLate(late) {
  late.done = new Promise((resolve) => { late.settle = resolve; });
  late.timer = setTimeout(() => settleLate(late), Math.max(0, late.until - Date.now()));
  for (const tabId of late.tabs) lateAnswers.set(tabId, [...(lateAnswers.get(tabId) || []), late]);
  lateKept.add(late);
  if (!late.frames.length) settleLate(late); // all had answered when the worker before stopped
  saveOutbox();
  return late;
}

function settleLate(late) {
  if (!late.settle) return;
  clearTimeout(late.timer);
  for (const tabId of late.tabs) {
    const left = (lateAnswers.get(tabId) || []).filter((waiting) => waiting !== late);
    if (left.length) lateAnswers.set(tabId, left);
    else lateAnswers.delete(tabId);
  }
  late.settle(late.frames.length > 0);
  late.settle = null;
}

// A frame's late answer: in its reply, or given again (capture.late) to whichever worker runs then. Each action once.
function lateFrameAnswered(late, tabId, frameId, actions) {
  if (!late.settle) return;
  addLate(late, actions);
  late.frames = late.frames.filter((key) => key !== frameKey(tabId, frameId));
  if (!late.frames.length) settleLate(late);
  else saveOutbox();
}

function addLate(late, actions) {
  const had = new Set(late.actions.map((action) => JSON.stringify(action)));
  for (const action of actions) if (!had.has(JSON.stringify(action))) late.actions.push(action);
}

// capture.js read a Hand back's or Stop's mode change after `answerBy`: it gives what it held then (and what it
// reported on its own meanwhile) here, and gives it again until told it is taken (kept for the host). Once that
// answer is no longer waited for, it goes to the takeover the frame recorded for all the same.
async function onCaptureLate(tabId, frameId, message) {
  await outboxLoaded;
  const actions = (Array.isArray(message.actions) ? message.actions : []).filter((a) => a && typeof a === "object");
  const late = (lateAnswers.get(tabId) || []).find((waiting) => waiting.answerBy === message.answerBy);
  if (late) lateFrameAnswered(late, tabId, frameId, actions);
  else if (takeoverOf(message)) routeActions(tabId, actions, takeoverOf(message));
  await saveOutbox();
}

// After Hand back or Stop: what the late frames gave, and whether one is still silent (then the record keeps saying the
// last of it may be missing), for the takeover that ended (the host knows which), through the outbox as the on-time
// actions go. Nothing to say when none answered.
async function sendLate(late) {
  const stillSilent = await late.done;
  lateKept.delete(late);
  if (!stillSilent || late.actions.length) {
    outboxOf(late.taskId).late.push({ actions: late.actions.slice(0, ACTIONS_PER_MESSAGE),
      ...(stillSilent ? { pageSilent: true } : {}), ...(Number.isFinite(late.takeover) ? { startedAt: late.takeover } : {}) });
  }
  saveOutbox();
  flushActions(late.taskId);
}

// A late answer no takeover ended for (the host refused the Hand back or Stop): forgotten once over
function dropLate(late) {
  late.done.then(() => {
    lateKept.delete(late);
    saveOutbox();
  });
}

// --- the agent's input and the user's ---------------------------------------------------------------------
// Called by the relay around every Input.* command it sends: refused while the user has the controls.
function agentInputStarted(tabId) {
  refuseInputIfTakenOver(tabId);
  let windows = inputWindows.get(tabId);
  if (!windows) inputWindows.set(tabId, (windows = []));
  const window = { start: Date.now(), end: null };
  windows.push(window);
  if (windows.length > INPUT_WINDOWS_KEPT) windows.splice(0, windows.length - INPUT_WINDOWS_KEPT);
  return window;
}

// Within a window already started (a run the worker paces): the next command is refused from the moment the
// user has the controls.
function refuseInputIfTakenOver(tabId) {
  if (userHasControls.has(tabId)) {
    takeoverStats.refusedInput += 1;
    throw Object.assign(new Error(USER_TOOK_OVER), { code: "user_takeover" });
  }
}

function agentInputEnded(window) {
  window.end = Date.now();
}

// Whether input the page saw at `at` (epoch ms) came from an Input.* call this worker relayed to that tab.
// Its lag: how long after that call returned (0 while one is in flight), or null: not the agent's.
function agentLag(tabId, at, slack = AGENT_INPUT_SLACK_MS) {
  const windows = inputWindows.get(tabId) || [];
  let lag = null;
  for (let i = windows.length - 1; i >= 0; i--) { // newest first: the call just before `at` is the cause
    const window = windows[i];
    if (window.end === null) {
      if (at >= window.start - 20) return 0;
      continue; // in flight, begun after `at`
    }
    if (at < window.start - 20) continue;
    if (at <= window.end + slack) lag = Math.max(0, at - window.end);
    break;
  }
  return lag;
}

// capture.js reports trusted input `{events: [{kind, at}]}`, the first event at once and those that follow
// it in batches: each is told apart by its own time, the first that is not the agent's takes the controls.
function onCaptureInput(tabId, message) {
  if (!message.trusted || !Array.isArray(message.events)) return;
  takeoverStats.inputMessages += 1;
  for (const event of message.events) {
    if (event && tookControls(tabId, event.kind, event.at)) return;
  }
}

function tookControls(tabId, kind, at) {
  if (PASSIVE_INPUT.has(kind)) return false;
  const task = runningTaskOfTab(tabId);
  if (!task || task.control) return false;
  if (!Number.isFinite(at)) at = Date.now();
  const lag = agentLag(tabId, at);
  if (lag !== null) {
    takeoverStats.agentInput += 1;
    takeoverStats.maxAgentLagMs = Math.max(takeoverStats.maxAgentLagMs, lag);
    return false;
  }
  // The user pressing the overlay itself (Take over, Stop): the overlay says so before capture.js does.
  const claimed = overlayClaims.get(tabId);
  if (claimed && Math.abs(at - claimed) < OVERLAY_CLAIM_MS) {
    takeoverStats.overlayInput += 1;
    return false;
  }
  takeoverStats.implicit += 1;
  takeControls(task, "implicit", at).catch((error) => console.warn("tabpilot: implicit takeover:", error.message));
  return true;
}

// --- takeover requests (from the overlay, the popup, or implicit) ------------------------------------------
// `since`: the page's time of the user's input that took the controls (their press, their first touch)
async function takeControls(task, reason, since = Date.now()) {
  if (!task.control) {
    // at once, before the host hears of it: from here on no Input.* reaches the page
    task.control = { by: "user", reason, startedAt: since, own: true };
    taskChanged(task);
  }
  // the host takes its start as the takeover's, by which what the frames record is told to be of it (routeActions)
  await requestHost({ type: "task.takeover", taskId: task.taskId, reason, startedAt: task.control.startedAt });
}

async function handBack(task, note) {
  const late = await collectActions(task, "watch");
  const request = { type: "task.handback", taskId: task.taskId };
  if (note && note.trim()) request.note = note.trim();
  if (late) request.pageSilent = true;
  await endTakeover(request, late);
  task.control = null;
  taskChanged(task);
}

async function stopTask(task) {
  const late = task.control ? await collectActions(task, "off") : null;
  await endTakeover({ type: "task.stop", taskId: task.taskId, ...(late ? { pageSilent: true } : {}) }, late);
}

// Hand back or Stop, then what the page gives late (sendLate): also when the host went before it answered, as it may
// have recorded the end first (seen: the task stopped in the record, the answer lost with the host); not when it was
// refused (nothing ended to add it to).
async function endTakeover(request, late) {
  let reply;
  try {
    reply = await requestHost(request);
  } catch (error) {
    if (late && hostNotThere(error)) sendLate(late);
    else if (late) dropLate(late);
    throw error;
  }
  if (!late) return;
  late.takeover = reply && reply.startedAt; // which takeover ended: another may end waiting for the page before it answers
  saveOutbox();
  sendLate(late);
}

async function answerTask(task, answer) {
  await requestHost({ type: "task.answer", taskId: task.taskId, answer });
}

// The action the agent waits on (an irreversible one, guards/irreversible.py): Allow runs it, Deny refuses it.
// Take over is the ordinary takeover: the action is abandoned and the user has the controls.
async function approveTask(task, decision) {
  if (decision === "takeover") return takeControls(task, "user");
  await requestHost({ type: "task.approve", taskId: task.taskId, decision });
}

// A popup / side panel request about takeover goes through the same steps as the overlay's.
async function popupTakeoverRequest(request) {
  const task = tasks.get(request.taskId) || (request.tabId !== undefined ? runningTaskOfTab(request.tabId) : null);
  if (!task || task.status !== "running") {
    throw Object.assign(new Error("no task is running there"), { code: "bad_request" });
  }
  if (request.type === "task.takeover") await takeControls(task, "user");
  else if (request.type === "task.handback") await handBack(task, request.note);
  else if (request.type === "task.answer") await answerTask(task, String(request.answer || ""));
  else if (request.type === "task.approve") await approveTask(task, String(request.decision || ""));
  else if (request.type === "task.stop") await stopTask(task);
  return {};
}

// --- recorded actions -------------------------------------------------------------------------------------------
function onCaptureAction(tabId, action, takeover) {
  if (!action || typeof action !== "object") return;
  // the user pressing the overlay (Hand back, the note) is not something they did in the page: capture.js
  // names the overlay's host element by its role and label (the overlay's UI is out of its sight)
  if (action.target === OVERLAY_TARGET) return;
  routeActions(tabId, [action], takeover);
}

// The takeover a frame says it recorded for ({taskId, startedAt}, as modeOf told it), or null
function takeoverOf(message) {
  const takeover = message && message.takeover;
  return takeover && typeof takeover.taskId === "string" && Number.isFinite(takeover.startedAt) ? takeover : null;
}

// What a frame recorded goes to the takeover it recorded for, never to the tab's task now: a frame whose script hung
// across a Stop for longer than its late answer was waited for answered after the tab's next task had been taken
// over, and the stopped task's last letter went into the new task's takeover. That takeover's late answer still
// waited for (a slow frame reporting on its own what it held as the controls went back: the host takes no more actions
// for a takeover once it ended); the one going on; or, ended, its late answer all the same (the host adds it to the
// takeover begun then). A worker just started knows no task yet: kept until the host says which run.
function routeActions(tabId, actions, takeover) {
  if (!takeover) return;
  const late = (lateAnswers.get(tabId) || []).find((waiting) =>
    waiting.taskId === takeover.taskId && begunAt(waiting, takeover.startedAt));
  if (late) {
    addLate(late, actions);
    saveOutbox();
    return;
  }
  const task = tasks.get(takeover.taskId);
  if (task && task.status === "running" && begunAt(task.control, takeover.startedAt)) {
    for (const action of actions) queueAction(task, action);
    return;
  }
  if (!task && !host.connected) {
    const kept = unclaimedActions.get(tabId) || [];
    for (const action of actions) kept.push({ action, takeover, at: Date.now() });
    unclaimedActions.set(tabId, kept.slice(-UNCLAIMED_LIMIT));
    return;
  }
  outboxOf(takeover.taskId).late.push({ actions: actions.slice(0, ACTIONS_PER_MESSAGE), startedAt: takeover.startedAt });
  saveOutbox();
  flushActions(takeover.taskId);
}

// After the host's hello: what frames recorded while this worker knew no task, to the takeovers they recorded for
function claimActions() {
  const since = Date.now() - UNCLAIMED_KEPT_MS;
  const kept = [...unclaimedActions];
  unclaimedActions.clear();
  for (const [tabId, actions] of kept) {
    for (const { action, takeover, at } of actions) if (at >= since) routeActions(tabId, [action], takeover);
  }
}

function queueAction(task, action) {
  const pending = outboxOf(task.taskId);
  if (pending.actions.length >= OUTBOX_LIMIT) return;
  pending.actions.push(action);
  saveOutbox();
  if (!pending.timer) pending.timer = setTimeout(() => flushActions(task.taskId), ACTION_BATCH_MS);
}

// Nothing the person did is lost on the way to the record: a batch the host did not take because it went away
// (mid-request, or none is connected: it died, or is being restarted) is kept, in order before what came after it,
// and sent to the next host once it said hello (a task it does not run gets them added to its takeover, cut short by
// the host's death). So is what the page gave late (`late`: takeover.late messages, after the task's actions). Kept
// in chrome.storage.session too (memory only, never on disk; password values never leave the page), for a worker that
// restarts meanwhile. A batch the host refused (the task is not the person's) goes.
const OUTBOX_KEY = "takeoverOutbox";
const OUTBOX_LIMIT = 2000; // a task's, as the host keeps of one takeover (taskrun/takeover.py MAX_ACTIONS)
const ACTIONS_PER_MESSAGE = 500; // the host takes up to 1,000 a message (native/messages.py TakeoverActions)
// the host went, or none is connected, or it did not answer in time (no code): not refused
const hostNotThere = (error) => [HOST_GONE, HOST_DOWN, undefined].includes(error.code);
const sending = new Map(); // taskId → the batch on its way to the host: {actions, late}

function outboxOf(taskId) {
  let pending = pendingActions.get(taskId);
  if (!pending) pendingActions.set(taskId, (pending = { actions: [], late: [], timer: null }));
  return pending;
}

const outboxLoaded = chrome.storage.session.get(OUTBOX_KEY).then((stored) => {
  for (const [taskId, kept] of Object.entries((stored && stored[OUTBOX_KEY]) || {})) {
    const pending = outboxOf(taskId);
    pending.actions.unshift(...(Array.isArray(kept && kept.actions) ? kept.actions : []));
    pending.late.unshift(...(Array.isArray(kept && kept.late) ? kept.late : []));
    // the late answers the worker before waited for: the pages answer this one; the replies it waited for are gone
    for (const late of Array.isArray(kept && kept.waiting) ? kept.waiting : []) sendLate(waitForLate({ ...late, taskId }));
  }
}).catch((error) => console.warn("tabpilot: the actions kept for the host:", error.message));

const KEPT_OF_LATE = ["startedAt", "was", "endedAt", "answerBy", "takeover", "tabs", "frames", "actions", "until"];

let outboxSaved = Promise.resolve();
let outboxDirty = false;
// Resolves once what is held now is kept
function saveOutbox() {
  if (outboxDirty) return outboxSaved; // a save already waits: it writes the latest
  outboxDirty = true;
  outboxSaved = outboxSaved.then(async () => {
    await outboxLoaded;
    outboxDirty = false;
    const kept = {};
    const keptOf = (taskId) => (kept[taskId] ||= { actions: [], late: [], waiting: [] });
    for (const [taskId, { actions, late }] of [...sending, ...pendingActions]) {
      if (!actions.length && !late.length) continue;
      keptOf(taskId).actions.push(...actions);
      keptOf(taskId).late.push(...late);
    }
    for (const late of lateKept) {
      keptOf(late.taskId).waiting.push(Object.fromEntries(KEPT_OF_LATE.map((key) => [key, late[key]])));
    }
    await chrome.storage.session.set({ [OUTBOX_KEY]: kept });
  }).catch((error) => console.warn("tabpilot: could not keep the actions for the host:", error.message));
  return outboxSaved;
}

// In order, one batch at a time: the task's actions, then what its page gave late.
let flushing = Promise.resolve();
function flushActions(taskId) {
  flushing = flushing.then(async () => {
    await outboxLoaded;
    const pending = pendingActions.get(taskId);
    if (!pending) return;
    clearTimeout(pending.timer);
    pending.timer = null;
    if (!host.connected) return; // kept for the next host's hello (learnTasks)
    pendingActions.delete(taskId);
    const batch = { actions: pending.actions, late: pending.late };
    sending.set(taskId, batch);
    let sent = 0;
    let lateSent = 0;
    try {
      for (; sent < batch.actions.length; sent += ACTIONS_PER_MESSAGE) {
        await requestHost({ type: "takeover.actions", taskId, actions: batch.actions.slice(sent, sent + ACTIONS_PER_MESSAGE) });
      }
      for (; lateSent < batch.late.length; lateSent += 1) {
        await requestHost({ type: "takeover.late", taskId, ...batch.late[lateSent] });
      }
    } catch (error) {
      if (hostNotThere(error)) {
        const later = pendingActions.get(taskId);
        pendingActions.set(taskId, {
          actions: [...batch.actions.slice(sent), ...(later ? later.actions : [])],
          late: [...batch.late.slice(lateSent), ...(later ? later.late : [])], timer: null,
        });
        if (later) clearTimeout(later.timer);
      } else {
        console.warn("tabpilot: the host did not take what the person did:", error.message);
      }
    } finally {
      sending.delete(taskId);
      saveOutbox();
    }
  });
  return flushing;
}

// --- messages from the content scripts ------------------------------------------------------------------------
chrome.runtime.onMessage.addListener((message, sender, sendResponse) => {
  if (sender.id !== chrome.runtime.id || !sender.tab || !message || typeof message !== "object") return false;
  const tabId = sender.tab.id;
  switch (message.type) {
    case "frame.hello":
    case "capture.hello": {
      if (isPanelFrame(tabId, sender.frameId, message.panel)) { // the overlay's own panel: no page, nothing to capture
        sendResponse({ active: false, mode: "off" });
        if (message.type === "frame.hello") injectPanel(tabId, sender.frameId);
        return false;
      }
      if (mayBePanel(tabId, message.panel)) { // its key not told yet: the frame's load finds it (findPanel)
        sendResponse({ active: false, mode: "off" });
        return false;
      }
      if (!captureFrames.has(tabId)) captureFrames.set(tabId, new Set());
      captureFrames.get(tabId).add(sender.frameId);
      const task = runningTaskOfTab(tabId);
      const mode = captureMode(task);
      sendResponse({ active: !!task, ...modeOf(tabId, mode) });
      // capture.js in that frame hears its mode the way it always does
      if (mode !== "off") sendMode(tabId, mode, { frameId: sender.frameId });
      return false;
    }
    case "capture.input":
      onCaptureInput(tabId, message);
      return false;
    case "capture.action": // a worker just started may hold the late answer it belongs to (chrome.storage.session)
      outboxLoaded.then(() => onCaptureAction(tabId, message.action, takeoverOf(message)));
      return false;
    case "capture.late":
      onCaptureLate(tabId, sender.frameId, message).then(() => sendResponse({ taken: true }),
        (error) => sendResponse({ taken: false, error: error.message }));
      return true;
    case "overlay.pressed": // the user's trusted press on the overlay (it runs before capture.js)
      overlayClaims.set(tabId, Number.isFinite(message.at) ? message.at : Date.now());
      return false;
    default:
      return false;
  }
});

// --- the overlay ---------------------------------------------------------------------------------------------------
// What the overlay shows: not the activity, which changes as the agent acts in the page; only whether it thinks (about
// which step, since when) or which action it takes, which change as a step begins and as its action does.
function overlayState(tabId) {
  const task = runningTaskOfTab(tabId) || lastTaskOfTab(tabId);
  if (!task) return { kind: "state", task: null };
  const { taskId, task: text, status, control, question, approval, nextGoal, source, requester, gaveUp } = task;
  const outcome = status === "running" ? null : task.outcome || null;
  const thinking = status === "running" && task.thinkingSince ? { step: (task.steps || 0) + 1, since: task.thinkingSince }
    : null;
  const acting = status === "running" && !thinking ? task.acting || null : null;
  return { kind: "state", task: { taskId, task: text, status, control, question, approval, nextGoal, thinking, acting,
    outcome, source, requester, gaveUp: !!gaveUp } };
}

// Posted only when it changed: each post re-renders the overlay in the page, and the pushes of a step come
// as the agent types there (with the popup's pulse, 100 characters in a task took ~160 ms against ~100 ms
// outside one: bench/bench_typing.py).
const overlayPosted = new WeakMap(); // port → the state last posted to it, as JSON
function postOverlay(tabId) {
  const state = overlayState(tabId);
  const posted = JSON.stringify(state);
  for (const ports of [overlayPorts, panelPorts]) {
    const port = ports.get(tabId);
    if (!port || overlayPosted.get(port) === posted) continue;
    try {
      port.postMessage(state);
      overlayPosted.set(port, posted);
    } catch (_) { ports.delete(tabId); }
  }
}

// A worker that just started knows no task yet: the overlay keeps what it shows until the host's hello says
// (learnTasks), rather than vanishing and coming back.
function greet(port, tabId) {
  if (host.connected || runningTaskOfTab(tabId)) {
    const state = overlayState(tabId);
    port.postMessage(state);
    overlayPosted.set(port, JSON.stringify(state));
  }
}

chrome.runtime.onConnect.addListener((port) => {
  if (port.sender.id !== chrome.runtime.id || !port.sender.tab) return;
  if (port.name === "overlay") overlayConnected(port);
  else if (port.name === "overlay-panel") panelConnected(port);
});

// The overlay's content script in a tab's top frame: it keeps the host element (shown, in the top layer or not,
// gone) and tells the key of the panel it framed.
function overlayConnected(port) {
  if (port.sender.frameId !== 0) return port.disconnect();
  const tabId = port.sender.tab.id;
  overlayPorts.set(tabId, port);
  port.onDisconnect.addListener(() => {
    if (overlayPorts.get(tabId) !== port) return;
    overlayPorts.delete(tabId);
    // its document is gone (or the extension reloads): the next document's overlay frames a panel with a new key
    panelKeys.delete(tabId);
    panelFrames.delete(tabId);
  });
  if (panelHeights.has(tabId)) port.postMessage({ kind: "size", height: panelHeights.get(tabId) });
  port.onMessage.addListener((message) => {
    if (message && message.kind === "panel" && typeof message.key === "string" && message.key) {
      panelKeyTold(tabId, message.key);
    } else if (message && message.kind === "panel-loaded") {
      findPanel(tabId);
    } else if (message && (message.kind === "removed" || message.kind === "lowered")) {
      overlayChanged(tabId, { [message.kind]: true });
    }
  });
  greet(port, tabId);
}

// The overlay's panel frame: the one whose window name has the key the tab's overlay told (a page may name a frame of
// its own the same way, but cannot know the key). Its files go in once, as content scripts: the frame is the
// extension's isolated world there, and a sandboxed document no page script runs in.
function isPanelFrame(tabId, frameId, name) {
  if (frameId === 0) return false;
  if (panelFrames.get(tabId) === frameId) return true;
  const key = panelKeys.get(tabId);
  return !!key && typeof name === "string" && name === `${PANEL_NAME}${key}`;
}

// A frame named as the panel is before the tab's overlay told this worker its key (a hello overtook the port)
function mayBePanel(tabId, name) {
  return typeof name === "string" && name.startsWith(PANEL_NAME) && !panelKeys.has(tabId);
}

async function injectPanel(tabId, frameId) {
  if (panelFrames.get(tabId) === frameId) return;
  panelFrames.set(tabId, frameId);
  const target = { tabId, frameIds: [frameId] };
  try {
    await chrome.scripting.insertCSS({ target, files: [PANEL_CSS] });
    await chrome.scripting.executeScript({ target, files: PANEL_FILES });
  } catch (error) {
    if (panelFrames.get(tabId) === frameId) panelFrames.delete(tabId);
    console.warn(`tabpilot: no overlay panel in tab ${tabId}:`, error.message);
  }
}

// The panel frame by its name, among the tab's frames: when it loaded before the scripts registered for new documents
// (which say hello from it), or before its key was told.
async function findPanel(tabId) {
  const key = panelKeys.get(tabId);
  if (!key) return;
  try {
    const found = await chrome.scripting.executeScript({
      target: { tabId, allFrames: true }, func: (name) => window.name === name, args: [`${PANEL_NAME}${key}`],
    });
    for (const { frameId, result } of found) if (result === true && frameId !== 0) injectPanel(tabId, frameId);
  } catch (error) {
    console.warn(`tabpilot: looking for the overlay panel in tab ${tabId}:`, error.message);
  }
}

// The overlay's panel: only the frame the tab's overlay made (its key), never one a page made itself.
// A panel whose key this worker does not know yet waits for it a moment (a restarted worker hears the panel and the
// content script reconnect in either order); a wrong one is hung up on when that moment is over.
const PANEL_KEY_WAIT_MS = 5000;
const panelHeights = new Map(); // tabId → the height its overlay's panel last said it needs
const panelsWaiting = new Map(); // tabId → Set of {port, key, timer}: panels whose key the tab's overlay has not told
function panelConnected(port) {
  const tabId = port.sender.tab.id;
  if (!port.sender.frameId) return port.disconnect(); // the panel is a frame, never a page's top document
  let known = false;
  let waiting = null;
  port.onDisconnect.addListener(() => {
    if (panelPorts.get(tabId) === port) panelPorts.delete(tabId);
    if (waiting) forgetWaitingPanel(tabId, waiting);
  });
  port.onMessage.addListener((message) => {
    if (!message || typeof message !== "object") return;
    if (known && message.kind === "size") { // the height the panel needs: the host box follows it
      if (!Number.isFinite(message.height)) return;
      panelHeights.set(tabId, message.height);
      const overlay = overlayPorts.get(tabId);
      if (overlay) overlay.postMessage({ kind: "size", height: message.height });
      return;
    }
    if (known) return onOverlayCommand(port, tabId, message);
    if (message.kind !== "hello" || typeof message.key !== "string" || !message.key || waiting) {
      return port.disconnect();
    }
    const admit = () => {
      known = true;
      panelPorts.set(tabId, port);
      overlayChanged(tabId, { removed: false });
      port.postMessage({ kind: "welcome" });
      greet(port, tabId);
    };
    if (message.key === panelKeys.get(tabId)) return admit();
    waiting = { key: message.key, admit, timer: setTimeout(() => port.disconnect(), PANEL_KEY_WAIT_MS) };
    if (!panelsWaiting.has(tabId)) panelsWaiting.set(tabId, new Set());
    panelsWaiting.get(tabId).add(waiting);
  });
}

function forgetWaitingPanel(tabId, waiting) {
  clearTimeout(waiting.timer);
  const set = panelsWaiting.get(tabId);
  if (set) set.delete(waiting);
}

// The tab's overlay told its panel's key: the panel that waits with it is the overlay's
function panelKeyTold(tabId, key) {
  panelKeys.set(tabId, key);
  for (const waiting of [...(panelsWaiting.get(tabId) || [])]) {
    if (waiting.key !== key) continue;
    forgetWaitingPanel(tabId, waiting);
    waiting.admit();
  }
}

// The overlay acts only on the user's trusted presses (it checks isTrusted); the agent's clicks are
// trusted too, so a press at a moment this worker was dispatching input to the tab is not the user's.
async function onOverlayCommand(port, tabId, message) {
  if (!message || message.kind !== "command") return;
  const reply = (fields) => { try { port.postMessage({ kind: "reply", id: message.id, ...fields }); } catch (_) { /* gone */ } };
  const task = runningTaskOfTab(tabId);
  try {
    if (message.command === "close") { // the finished task's overlay, closed: the content script takes it away
      const overlay = overlayPorts.get(tabId);
      if (overlay) overlay.postMessage({ kind: "close" });
      return reply({ ok: true });
    }
    if (!task) throw new Error(chrome.i18n.getMessage("overlayNoTask"));
    const at = Number.isFinite(message.at) ? message.at : Date.now();
    if (agentLag(tabId, at, OVERLAY_PRESS_SLACK_MS) !== null) throw new Error(chrome.i18n.getMessage("overlayAgentPress"));
    switch (message.command) {
      case "takeover": await takeControls(task, "user", at); break;
      case "handback": await handBack(task, message.note); break;
      case "answer": await answerTask(task, String(message.answer || "")); break;
      case "allow": await approveTask(task, "allow"); break;
      case "deny": await approveTask(task, "deny"); break;
      case "stop": await stopTask(task); break;
      default: throw new Error(`unknown command ${message.command}`);
    }
    reply({ ok: true });
  } catch (error) {
    reply({ ok: false, error: error.message || String(error) });
  }
}

// --- notifications ----------------------------------------------------------------------------------------------------
// A question for the person (the agent asks for help or asks something, or an action waits for their yes) is asked by
// the overlay in the task's tab; a desktop notification is for when they are not looking at it. One raised over the
// tab they are looking at only covered the overlay: on Linux without a notification daemon Chromium draws its own
// popup at the bottom right, over the overlay's buttons. So it is raised while none of the task's tabs is the active
// tab of the focused window, and taken away when the person comes to one; if they go elsewhere while it is still
// asked, it is raised then.
const asks = new Map(); // taskId → {key, options}: what the person is asked now, notified or not

function notifyIfAsked(task) {
  let key = null;
  let message = null;
  if (task.status === "running" && task.control && task.control.reason === "agent_request") {
    key = `agent_request:${task.control.message || ""}`;
    message = task.control.message ? PageText.quote(task.control.message) : chrome.i18n.getMessage("agentAsksHelp");
  } else if (task.status === "running" && task.question) {
    key = `question:${task.question}`;
    message = PageText.quote(task.question);
  } else if (task.status === "running" && task.approval && !task.control) {
    const { action, site } = task.approval;
    key = `approval:${action}:${site}`;
    // actionText: the host's words in our language; plain text: FSI … PDI isolate
    const [what, where] = [PageText.quote(task.approval.actionText || action), PageText.quote(PageText.site(site))];
    message = site ? chrome.i18n.getMessage("approveWants", [what, where]) : chrome.i18n.getMessage("approveWantsHere", [what]);
  }
  if (key === null) {
    asks.delete(task.taskId);
    unnotify(task.taskId);
    return;
  }
  if (asks.has(task.taskId) && asks.get(task.taskId).key === key) return;
  asks.set(task.taskId, {
    key,
    options: {
      type: "basic", iconUrl: "icons/icon-128.png", priority: 2, requireInteraction: true,
      title: chrome.i18n.getMessage(key.startsWith("question:") ? "notifyQuestionTitle"
        : key.startsWith("approval:") ? "approveTitle" : "notifyHelpTitle"),
      message: message.slice(0, 300), contextMessage: PageText.visible((task.task || "").slice(0, 120)),
    },
  });
  notifyUnlessSeen(task.taskId);
}

function unnotify(taskId) {
  if (notified.has(taskId)) chrome.notifications.clear(`tabpilot-${taskId}`).catch(() => {});
  notified.delete(taskId);
}

async function notifyUnlessSeen(taskId) {
  const ask = asks.get(taskId);
  const task = tasks.get(taskId);
  if (!ask || !task) return;
  const seen = await taskInView(task);
  if (asks.get(taskId) !== ask) return; // answered or changed meanwhile: its own call decides
  if (seen) {
    unnotify(taskId);
    return;
  }
  if (notified.get(taskId) === ask.key) return;
  notified.set(taskId, ask.key);
  chrome.notifications.create(`tabpilot-${taskId}`, ask.options).then(() => {
    if (!asks.has(taskId)) unnotify(taskId); // answered while it was being raised: its clear found nothing yet
  }).catch((error) => console.warn("tabpilot: notification:", error.message));
}

// Whether the person is looking at one of the task's tabs: the active tab of the window that has the focus. Headless
// Chromium says `focused` of every window; the last focused one is the one the person (or a test) went to last.
async function taskInView(task) {
  try {
    const front = await chrome.windows.getLastFocused({ windowTypes: ["normal", "popup"] });
    if (!front || !front.focused) return false; // the browser is not the application in front
    const [active] = await chrome.tabs.query({ windowId: front.id, active: true });
    return !!active && tabsOfTask(task).includes(active.id);
  } catch (_) {
    return false; // no window: nobody looks at the overlay
  }
}

function recheckAsks() {
  for (const taskId of asks.keys()) notifyUnlessSeen(taskId);
}
chrome.tabs.onActivated.addListener(recheckAsks);
chrome.windows.onFocusChanged.addListener(recheckAsks);
chrome.windows.onRemoved.addListener(recheckAsks); // the window in front closed: the one under it is (headless: no focus event)

// Clicking the notification brings the task's tab forward, where the overlay says what to do.
chrome.notifications.onClicked.addListener(async (id) => {
  const task = tasks.get(id.replace(/^tabpilot-/, ""));
  chrome.notifications.clear(id).catch(() => {});
  if (!task) return;
  try {
    const tab = await chrome.tabs.update(task.tabId, { active: true });
    await chrome.windows.update(tab.windowId, { focused: true });
  } catch (_) { /* the tab is gone */ }
});

// --- tabs ---------------------------------------------------------------------------------------------------------------
chrome.tabs.onCreated.addListener((tab) => {
  if (tab.openerTabId !== undefined && runningTaskOfTab(tab.openerTabId)) openedBy.set(tab.id, tab.openerTabId);
});
chrome.tabs.onRemoved.addListener((tabId) => {
  openedBy.delete(tabId);
  unclaimedActions.delete(tabId);
  inputWindows.delete(tabId);
  sentModes.delete(tabId);
  captureFrames.delete(tabId);
  injected.delete(tabId);
  overlayClaims.delete(tabId);
  panelKeys.delete(tabId);
  panelFrames.delete(tabId);
  panelHeights.delete(tabId);
  for (const waiting of panelsWaiting.get(tabId) || []) clearTimeout(waiting.timer);
  panelsWaiting.delete(tabId);
});
// A new document forgets its mode: the content scripts ask again (frame.hello), so send it afresh.
chrome.tabs.onUpdated.addListener((tabId, change) => {
  if (change.status !== "loading") return;
  sentModes.delete(tabId);
  if (change.url !== undefined) captureFrames.delete(tabId); // a new top document: its frames say hello anew
});
