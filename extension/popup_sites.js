// The popup's part of the page bridge: "Let this site start tasks in your browser" for the site of the
// popup's tab (task view), and the allowed sites with Revoke plus page-agent's token (Settings view), and
// the MCP clients the person always allows, with Revoke (they are asked again before their next task).
// The host's allowed-sites file is the truth (sites.list / sites.allow / sites.revoke / clients.revoke,
// sites.changed when it changes elsewhere); a change reaches the browser's registration at once.
// Uses popup.js's $, t, ask, currentTargetTab, showView, attempt and removableRow.
"use strict";

const sitesUi = { origin: null, sites: [] };

function webOrigin(url) {
  try {
    const parsed = new URL(url);
    return parsed.protocol === "http:" || parsed.protocol === "https:" ? parsed.origin : null;
  } catch (_) {
    return null;
  }
}

// --- the task view: this site --------------------------------------------------------------------------------
function paintSiteAccess() {
  const grant = sitesUi.sites.find((site) => site.origin === sitesUi.origin) || null;
  $("site-access").hidden = !sitesUi.origin;
  PageText.set($("site-origin"), sitesUi.origin ? PageText.quote(PageText.site(sitesUi.origin)) : "");
  $("site-allow").checked = !!grant;
  $("site-options").hidden = !grant;
  $("site-use-my-model").checked = !!(grant && grant.useMyModel);
  $("site-all-tabs").checked = !!(grant && grant.allTabs);
  $("site-ask").checked = !!(grant && grant.ask);
}

async function loadSiteAccess() {
  const tab = await currentTargetTab();
  sitesUi.origin = tab ? webOrigin(tab.url || "") : null;
  if (!sitesUi.origin) return paintSiteAccess();
  await attempt("site-error", async () => {
    sitesUi.sites = (await ask("sites.list")).sites || [];
  }, loadSiteAccess);
  paintSiteAccess();
}

async function changeSiteAccess() {
  const allowed = $("site-allow").checked;
  await attempt("site-error", async () => {
    const reply = allowed
      ? await ask("sites.allow", {
        origin: sitesUi.origin, useMyModel: $("site-use-my-model").checked,
        allTabs: $("site-all-tabs").checked, ask: $("site-ask").checked,
      })
      : await ask("sites.revoke", { origin: sitesUi.origin });
    sitesUi.sites = reply.sites || [];
  });
  paintSiteAccess();
}

for (const id of ["site-allow", "site-use-my-model", "site-all-tabs", "site-ask"]) {
  $(id).addEventListener("change", changeSiteAccess);
}

// --- the settings view: every allowed site ---------------------------------------------------------------------
function siteFlags(site) {
  const flags = [site.ask && t("sitesFlagAsk"), site.useMyModel && t("sitesFlagModel"), site.allTabs && t("sitesFlagTabs")];
  return flags.filter(Boolean).join(" · ") || t("sitesFlagNone");
}

function paintSites(view) {
  sitesUi.sites = view.sites || [];
  const list = $("sites-list");
  list.replaceChildren();
  for (const site of sitesUi.sites) {
    list.append(revocableRow(PageText.site(site.origin), siteFlags(site), async () => {
      paintSites(await ask("sites.revoke", { origin: site.origin }));
      paintSiteAccess();
    }));
  }
  $("sites-empty").hidden = sitesUi.sites.length > 0;
  if (view.token) $("sites-token").value = view.token;
  paintClients(view.mcpClients || []);
  $("sites").dataset.loaded = "true";
}

function paintClients(clients) {
  const list = $("mcp-clients-list");
  list.replaceChildren();
  for (const client of clients) {
    const since = t("mcpClientsSince", formatTime(client.allowedAt * 1000)); // allowedAt: epoch seconds
    const row = revocableRow(client.name, since, async () => paintSites(await ask("clients.revoke", { name: client.name })));
    row.querySelector(".site-name").append(programLine(client.program));
    list.append(row);
  }
  $("mcp-clients-empty").hidden = clients.length > 0;
}

// The program a client's "always" is tied to (the grant is its name plus that program): the executable's name, its
// whole path on hover; a grant made where the system does not say which program it was, says that.
function programLine(program) {
  const line = document.createElement("span");
  line.className = "site-flags client-program";
  if (program) {
    line.textContent = t("mcpClientsProgram", program.split(/[\\/]/).pop() || program);
    line.title = program;
  } else {
    line.textContent = t("mcpClientsProgramUnknown");
  }
  return line;
}

// One row of an allowed list: the name, a line about it, and Revoke (its errors shown under the lists).
function revocableRow(label, detail, revoke) {
  return removableRow(label, detail, { className: "site-revoke", text: t("sitesRevoke") }, revoke, "sites-error");
}

// The list changed elsewhere (an "always" answer, `tabpilot sites` in a terminal): a shown list follows it.
function sitesChanged(message) {
  if ($("sites").dataset.loaded === "true") paintSites(message);
  else sitesUi.sites = message.sites || [];
  paintSiteAccess();
}

async function loadSites() {
  $("sites").dataset.loaded = "false";
  await attempt("sites-error", async () => paintSites(await ask("sites.list")), loadSites);
}

$("sites-new-token").addEventListener("click", () => attempt("sites-error", async () => paintSites(await ask("sites.rotate"))));

$("nav-settings").addEventListener("click", loadSites);
loadSiteAccess();
