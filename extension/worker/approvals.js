// tabpilot service worker, part 3 (loaded by service_worker.js with importScripts): the MCP clients' and the
// pages' requests to run a task (approval.request of kind "mcp", issue 12, or "page"). The popup and the side
// panel show each open one
// with Allow once / Always allow / Deny; this file keeps the open ones (learnt from the host's pushes) so a
// popup opened after the request arrived still shows it, marks the toolbar button, and raises a desktop
// notification whose click opens the side panel (or the popup) where the question is.
// The host and this worker live and die together (the native port), so what this worker heard is all there is.
"use strict";

const MCP_APPROVAL_PREFIX = "tabpilot-approval-";
const openApprovals = new Map(); // approvalId → the approval.request push, with the window it arrived in

// A host push of the approvals (also relayed to popups by the caller).
// A page's question (kind "page") is kept too, for the popup and side panel; its page shows it already, so
// it raises no desktop notification.
function onApprovalPush(message) {
  if (message.type === "approval.request" && (message.kind === "mcp" || message.kind === "page")) {
    openApprovals.set(message.approvalId, message);
    if (message.kind === "mcp") notifyApproval(message);
  } else if (message.type === "approval.closed" && openApprovals.delete(message.approvalId)) {
    chrome.notifications.clear(MCP_APPROVAL_PREFIX + message.approvalId).catch(() => {});
  }
  markActionButton();
}

// The host went away: its questions went with it (each was a no to the client that asked).
function forgetApprovals() {
  for (const approvalId of openApprovals.keys()) {
    chrome.notifications.clear(MCP_APPROVAL_PREFIX + approvalId).catch(() => {});
    broadcast({ kind: "push", message: { type: "approval.closed", approvalId, decision: "deny" } });
  }
  openApprovals.clear();
  markActionButton();
}

// A worker that starts knows no open question (they died with the last worker's host): a desktop notification
// of one stays on screen (requireInteraction) and its click opens nothing. Those go; new ones are kept.
chrome.notifications.getAll().then((shown) => {
  for (const id of Object.keys(shown || {})) {
    if (id.startsWith(MCP_APPROVAL_PREFIX) && !openApprovals.has(id.slice(MCP_APPROVAL_PREFIX.length))) {
      chrome.notifications.clear(id).catch(() => {});
    }
  }
}).catch(() => {});

// A popup or side panel that just connected hears every open question, as the pushes it missed.
function replayApprovals(port) {
  for (const request of openApprovals.values()) port.postMessage({ kind: "push", message: request });
}

function markActionButton() {
  const waiting = openApprovals.size > 0;
  chrome.action.setBadgeText({ text: waiting ? "?" : "" }).catch(() => {});
  if (waiting) chrome.action.setBadgeBackgroundColor({ color: "#b45309" }).catch(() => {});
  chrome.action.setTitle({ title: chrome.i18n.getMessage(waiting ? "approvalActionTitle" : "actionTitle") }).catch(() => {});
}

async function notifyApproval(request) {
  // the window the person is in: the notification's click opens the side panel there, synchronously (it
  // needs the click's user gesture, which an await before the call would lose)
  const focused = await chrome.windows.getLastFocused({ windowTypes: ["normal"] }).catch(() => null);
  if (!openApprovals.has(request.approvalId)) return; // closed meanwhile (taken back at once): nothing to point to
  request.windowId = focused ? focused.id : null;
  chrome.notifications.create(MCP_APPROVAL_PREFIX + request.approvalId, {
    type: "basic", iconUrl: "icons/icon-128.png", priority: 2, requireInteraction: true,
    title: chrome.i18n.getMessage("approvalNotifyTitle", [PageText.requester(request.kind, request.requester)]),
    message: PageText.visible(String(request.task || "").slice(0, 300)),
    contextMessage: chrome.i18n.getMessage("approvalNotifyContext"),
  }).then(() => { // closed while it was being raised: its clear found nothing to clear yet
    if (!openApprovals.has(request.approvalId)) chrome.notifications.clear(MCP_APPROVAL_PREFIX + request.approvalId);
  }).catch((error) => console.warn("tabpilot: notification:", error.message));
}

chrome.notifications.onClicked.addListener(onApprovalNotificationClicked);

function onApprovalNotificationClicked(id) {
  if (!id.startsWith(MCP_APPROVAL_PREFIX)) return;
  const request = openApprovals.get(id.slice(MCP_APPROVAL_PREFIX.length));
  chrome.notifications.clear(id).catch(() => {});
  if (!request) return;
  openWhereAsked(request).catch(() => tellToOpenTheButton(request));
}

// The side panel in the window the person was in, else the toolbar popup; Chromium allows either only from
// the person's click, and may refuse both (no window, a gesture it does not count): then it says where to look.
async function openWhereAsked(request) {
  const opening = request.windowId !== null && chrome.sidePanel
    ? chrome.sidePanel.open({ windowId: request.windowId }) : Promise.reject(new Error("no window"));
  try {
    await opening;
  } catch (_) {
    await chrome.action.openPopup();
  }
}

function tellToOpenTheButton(request) {
  chrome.notifications.create(MCP_APPROVAL_PREFIX + request.approvalId, {
    type: "basic", iconUrl: "icons/icon-128.png", priority: 2, requireInteraction: true,
    title: chrome.i18n.getMessage("approvalNotifyTitle", [PageText.requester(request.kind, request.requester)]),
    message: chrome.i18n.getMessage("approvalOpenButton"),
  }).catch(() => {});
}
