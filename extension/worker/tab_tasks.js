// tabpilot service worker, part 5 (loaded by service_worker.js with importScripts): each tab's last task, for a popup
// opened on that tab after the host that ran it went. A host knows only its own tasks' tabs, and the record keeps no
// tab (a tab id means nothing once the browser restarts): a popup opened after a host crash (the worker reconnects
// to a new host by itself) or after the worker restarted (a new host again) showed nothing of the tab's task, only
// Past tasks listed it. So the worker remembers the newest task it saw in each tab, in chrome.storage.session (memory
// only; kept across a worker restart, gone with the browser as its tab ids are), and a popup's task.get of a tab the
// host has no task for is answered from the record (history.get): the task as it ended there, e.g. interrupted.
"use strict";

const TAB_TASKS_KEY = "tabTasks";
const tabTasks = new Map(); // tabId → the id of the newest task seen in it (task ids sort by when they started)
const tabTasksLoaded = chrome.storage.session.get(TAB_TASKS_KEY).then((stored) => {
  for (const [tabId, taskId] of Object.entries((stored && stored[TAB_TASKS_KEY]) || {})) keepNewer(Number(tabId), taskId);
}).catch((error) => console.warn("tabpilot: the tabs' last tasks:", error.message));

function keepNewer(tabId, taskId) {
  const known = tabTasks.get(tabId);
  if (known !== undefined && known >= taskId) return false; // a snapshot of an older task, learnt late
  tabTasks.set(tabId, taskId);
  return true;
}

// A task seen in a tab (worker/takeover.js learnSnapshot: started here, by a page, by an MCP client, or resumed).
function rememberTabTask(tabId, taskId) {
  if (Number.isInteger(tabId) && typeof taskId === "string" && keepNewer(tabId, taskId)) saveTabTasks();
}

let tabTasksSaved = Promise.resolve();
function saveTabTasks() {
  tabTasksSaved = tabTasksSaved.then(async () => {
    await tabTasksLoaded;
    await chrome.storage.session.set({ [TAB_TASKS_KEY]: Object.fromEntries(tabTasks) });
  }).catch((error) => console.warn("tabpilot: could not keep the tabs' last tasks:", error.message));
}

chrome.tabs.onRemoved.addListener(async (tabId) => {
  await tabTasksLoaded;
  if (tabTasks.delete(tabId)) saveTabTasks();
});

// A popup's task.get of its tab: the host's task there (running, or the last this host ran), else the tab's last
// task as the record has it; none when the record has it no more (deleted in Past tasks).
async function taskOfTab(request) {
  const data = await requestHost(request);
  if (data.task) return data;
  await tabTasksLoaded;
  const taskId = tabTasks.get(request.tabId);
  if (!taskId) return data;
  let record;
  try {
    record = await requestHost({ type: "history.get", taskId });
  } catch (error) {
    if (error.code === "not_found") return data;
    throw error;
  }
  return { task: recordedSnapshot(record, request.tabId) };
}

// A task no host runs, as a snapshot (PROTOCOL.md): what the record has of it; nothing waits on anyone.
function recordedSnapshot({ task: summary, result, events }, tabId) {
  const snapshot = {
    taskId: summary.taskId, task: summary.task, tabId, status: summary.status, history: events || [],
    activity: null, control: null, question: null, approval: null, source: summary.source,
  };
  if (summary.requester) snapshot.requester = summary.requester; // a page's origin, an MCP client's name
  if (result) Object.assign(snapshot, { result, gaveUp: !!summary.gaveUp });
  return snapshot;
}
