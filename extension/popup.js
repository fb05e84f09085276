// tabpilot popup: task box, live timeline, settings, past tasks. All state comes from the host through
// the service worker; the popup keeps nothing (closing it loses nothing).
"use strict";

const $ = (id) => document.getElementById(id);
const TERMINAL = new Set(["completed", "error", "stopped", "interrupted"]);
// Chromium's words (chrome.runtime.lastError) for a host that is not installed for this browser, or not
// for this extension: `tabpilot install` fixes those. Any other reason is not the user's to fix.
const HOST_NOT_INSTALLED = new Set([
  "Specified native messaging host not found.",
  "Access to the specified native messaging host is forbidden.",
]);
const HOST_EXITED = "Native host has exited.";

const ui = {
  connected: false,
  taskId: null,
  status: null,
  targetTabId: null,
  pastTaskId: null,
  lastExport: null, // the JSON text of the last export (tests read it; pages never can)
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
    for (const entry of waiting.values()) entry.reject(new Error("the extension's service worker restarted; try again"));
    waiting.clear();
    onHostState({ connected: false, error: "The extension's service worker restarted; reconnecting…" });
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
  ui.connected = !!state.connected;
  document.body.dataset.host = ui.connected ? "connected" : "down";
  $("host-dot").className = `dot ${ui.connected ? "on" : "off"}`;
  $("host-dot").title = ui.connected ? `host ${state.hostVersion || ""} connected` : "host not connected";
  $("host-down").hidden = ui.connected;
  $("run").disabled = !ui.connected;
  clearInterval(retryTicker);
  if (!ui.connected) {
    const exited = state.error === HOST_EXITED;
    $("host-down-title").textContent = state.connecting
      ? "Connecting to the host…"
      : exited ? "The host stopped" : "Host not connected";
    $("host-down-reason").textContent = state.connecting
      ? ""
      : exited
        ? "tabpilot's local host stopped (it crashed or was ended). Reconnecting to a new one…"
        : state.error || "The native host is not running.";
    $("host-down-fix").hidden = !!state.connecting || !HOST_NOT_INSTALLED.has(state.error);
    showRetry(state.retryInMs);
    if (ui.status === "running") setStatus("interrupted");
    return;
  }
  if (state.task) showTask(state.task);
  if (!wasConnected) refreshCurrentTask();
}

function showRetry(retryInMs) {
  const until = retryInMs == null ? null : Date.now() + retryInMs;
  const paint = () => {
    $("host-retry").textContent = until == null ? "" : `Retrying in ${Math.max(0, Math.ceil((until - Date.now()) / 1000))} s…`;
  };
  paint();
  if (until != null) retryTicker = setInterval(paint, 500);
}

$("reconnect").addEventListener("click", () => worker.postMessage({ kind: "reconnect" }));

// --- the current task -----------------------------------------------------------------------------------
async function refreshCurrentTask() {
  try {
    const { task } = await ask("task.get");
    if (task) showTask(task);
  } catch (error) {
    showError("task-error", error);
  }
}

function showTask(snapshot) {
  ui.taskId = snapshot.taskId;
  $("idle-hint").hidden = true;
  $("task-head").hidden = false;
  $("task-title").textContent = snapshot.task || "";
  Timeline.render($("timeline"), snapshot.history);
  $("result").hidden = true;
  showResult(snapshot.result); // a task that ended before this popup opened
  setStatus(snapshot.status);
  setActivity(snapshot.status === "running" ? snapshot.activity : null);
}

function setStatus(status) {
  ui.status = status;
  const pill = $("task-status");
  pill.textContent = status || "";
  pill.className = `pill status-${status}`;
  document.body.dataset.status = status || "";
  const running = status === "running";
  $("run").hidden = running;
  $("stop").hidden = !running;
  $("stop").disabled = false;
  $("task-input").disabled = running;
  if (TERMINAL.has(status)) setActivity(null);
}

function setActivity(activity) {
  const text = Timeline.activityText(activity);
  $("activity").textContent = text;
  $("activity").hidden = !text;
  $("activity").dataset.type = activity ? activity.type : "";
}

function adoptTask(taskId, taskText) {
  if (ui.taskId === taskId) return;
  ui.taskId = taskId;
  $("idle-hint").hidden = true;
  $("task-head").hidden = false;
  $("task-title").textContent = taskText || $("task-input").value;
  $("timeline").replaceChildren();
  $("result").hidden = true;
  $("task-error").hidden = true;
}

function onPush(message) {
  if (!message || !message.taskId) return;
  adoptTask(message.taskId); // one task runs at a time: a push for another task means a new one began
  switch (message.type) {
    case "task.status":
      setStatus(message.status);
      break;
    case "task.activity":
      if (ui.status === "running" || ui.status === null) setActivity(message.activity);
      break;
    case "task.event":
      $("timeline").append(Timeline.renderEvent(message.event));
      $("timeline").lastElementChild.scrollIntoView({ block: "nearest" });
      break;
    case "task.result":
      showResult(message.result);
      break;
  }
}

function showResult(result) {
  if (!result) return;
  const box = $("result");
  box.hidden = false;
  box.className = `result ${result.success ? "ok" : "failed"}`;
  box.textContent = result.data ? String(result.data) : (result.success ? "Done." : "The task did not succeed.");
}

async function currentTargetTab() {
  const named = new URLSearchParams(location.search).get("tabId");
  if (named) {
    const tabId = Number(named);
    try {
      return await chrome.tabs.get(tabId);
    } catch (_) {
      return { id: tabId, title: `tab ${tabId}`, url: "" };
    }
  }
  const [tab] = await chrome.tabs.query({ active: true, lastFocusedWindow: true });
  return tab || null;
}

async function showTargetTab() {
  const tab = await currentTargetTab();
  ui.targetTabId = tab ? tab.id : null;
  $("target-tab").textContent = tab ? `on: ${tab.title || tab.url || `tab ${tab.id}`}` : "no tab to work on";
  $("target-tab").title = tab ? tab.url || "" : "";
}

$("task-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const task = $("task-input").value.trim();
  if (!task) return;
  $("task-error").hidden = true;
  if (ui.targetTabId === null) await showTargetTab();
  if (ui.targetTabId === null) return showError("task-error", new Error("There is no tab to work on."));
  $("run").disabled = true;
  try {
    const { taskId } = await ask("task.start", { task, tabId: ui.targetTabId, source: "popup" });
    adoptTask(taskId, task);
    if (ui.status === null || TERMINAL.has(ui.status)) setStatus("running");
  } catch (error) {
    showError("task-error", error);
    $("nav-settings").classList.toggle("attention", error.code === "not_configured");
  } finally {
    $("run").disabled = !ui.connected;
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
    await ask("task.stop");
  } catch (error) {
    showError("task-error", error);
    $("stop").disabled = false;
  }
});

// --- views ---------------------------------------------------------------------------------------------------
function showView(name) {
  for (const button of document.querySelectorAll("nav .nav")) button.classList.toggle("active", button.dataset.view === name);
  for (const view of ["task", "past", "settings"]) $(`view-${view}`).hidden = view !== name;
  document.body.dataset.view = name;
  if (name === "settings") $("nav-settings").classList.remove("attention");
  if (name === "settings") loadSettings();
  if (name === "past") loadPast();
}

for (const button of document.querySelectorAll("nav .nav")) {
  button.addEventListener("click", () => showView(button.dataset.view));
}

function showError(id, error) {
  $(id).textContent = error.message || String(error);
  $(id).hidden = false;
}

// --- settings ----------------------------------------------------------------------------------------------
function fillSettings(settings) {
  $("set-base-url").value = settings.baseURL || "";
  $("set-model").value = settings.model || "";
  $("set-api-key").value = "";
  $("set-api-key").placeholder = settings.apiKeySet ? settings.apiKeyHint || "set" : "not set";
  $("api-key-hint").textContent = settings.apiKeySet
    ? `Key set (${settings.apiKeyHint || "hidden"}). Type a new one to replace it.`
    : "No key set. It is kept by the local host, never in the browser.";
  $("set-max-steps").value = settings.maxSteps ?? "";
  if (settings.maxStepsLimit) $("set-max-steps").max = settings.maxStepsLimit; // the host's one limit
  $("set-language").value = settings.language || "en-US";
}

async function loadSettings() {
  $("settings-error").hidden = true;
  $("settings-saved").textContent = "";
  $("settings-form").dataset.loaded = "false";
  try {
    fillSettings(await ask("settings.get"));
    $("settings-form").dataset.loaded = "true";
  } catch (error) {
    showError("settings-error", error);
  }
}

$("settings-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  $("settings-error").hidden = true;
  const fields = {
    baseURL: $("set-base-url").value.trim(),
    model: $("set-model").value.trim(),
    language: $("set-language").value,
  };
  const maxSteps = $("set-max-steps").value.trim();
  if (maxSteps) fields.maxSteps = Number(maxSteps);
  const apiKey = $("set-api-key").value.trim();
  if (apiKey) fields.apiKey = apiKey;
  try {
    fillSettings(await ask("settings.set", fields));
    $("settings-saved").textContent = "Saved.";
  } catch (error) {
    showError("settings-error", error);
  }
});

// --- past tasks ---------------------------------------------------------------------------------------------
function formatTime(value) {
  if (!value) return "";
  const date = new Date(typeof value === "number" && value < 1e12 ? value * 1000 : value);
  return Number.isNaN(date.getTime()) ? String(value) : date.toLocaleString();
}

function plural(count, noun) {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

async function loadPast() {
  $("past-error").hidden = true;
  $("past-detail").hidden = true;
  $("past-list-wrap").hidden = false;
  try {
    const { tasks } = await ask("history.list", { limit: 50 });
    const items = tasks.map((row) => {
      const li = Timeline.el("li", "past-item");
      li.dataset.taskId = row.taskId;
      li.tabIndex = 0;
      li.append(
        Timeline.el("span", `pill status-${row.status}`, row.status),
        Timeline.el("span", "past-task", row.task),
        Timeline.el("span", "past-meta muted",
          `${formatTime(row.startedAt)} · ${plural(row.steps ?? 0, "step")}${row.totalTokens ? ` · ${plural(row.totalTokens, "token")}` : ""}`),
      );
      li.addEventListener("click", () => openPast(row.taskId));
      return li;
    });
    $("past-list").replaceChildren(...items);
    $("past-empty").hidden = items.length > 0;
  } catch (error) {
    showError("past-error", error);
  }
}

async function openPast(taskId) {
  $("past-error").hidden = true;
  try {
    const { task, events } = await ask("history.get", { taskId });
    const row = task && typeof task === "object" ? task : { task, status: "" };
    ui.pastTaskId = taskId;
    $("past-title").textContent = row.task || "";
    $("past-status").textContent = row.status || "";
    $("past-status").className = `pill status-${row.status}`;
    Timeline.render($("past-timeline"), events);
    $("past-delete").textContent = "Delete";
    $("past-list-wrap").hidden = true;
    $("past-detail").hidden = false;
  } catch (error) {
    showError("past-error", error);
  }
}

$("past-back").addEventListener("click", loadPast);

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
  if (button.textContent !== "Really delete?") {
    button.textContent = "Really delete?";
    return;
  }
  try {
    await ask("history.delete", { taskId: ui.pastTaskId });
    await loadPast();
  } catch (error) {
    showError("past-error", error);
  }
});

connectWorker();
showView("task");
showTargetTab();
