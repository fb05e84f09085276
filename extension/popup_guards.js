// The popup's Safety settings (issue 13): when the agent asks before acting (askBefore), and the domains every
// task may go to or never go to (allowedDomains / blockedDomains; a domain is a host and its subdomains).
// The host's settings are the truth (settings.get / settings.set); `tabpilot config` edits the same ones.
// Uses popup.js's $, t, ask, showError, whileLoading and changedFields.
"use strict";

// One domain a line or between commas, as the host splits them (guards/domains.py LIST_SEPARATORS): never on
// spaces, so a line "not a domain!" is refused whole by the host instead of passing as "not" and "a".
function domainList(text) {
  return text.split(/[\r\n,]+/).map((d) => d.trim()).filter(Boolean);
}

function paintGuards(settings) {
  $("guards-ask-before").value = settings.askBefore || "irreversible";
  $("guards-allowed").value = (settings.allowedDomains || []).join("\n");
  $("guards-blocked").value = (settings.blockedDomains || []).join("\n");
  guardsShown = guardsFields();
}

function guardsFields() {
  return {
    askBefore: $("guards-ask-before").value,
    allowedDomains: domainList($("guards-allowed").value),
    blockedDomains: domainList($("guards-blocked").value),
  };
}

let guardsShown = {};

async function loadGuards() {
  $("guards").dataset.loaded = "false";
  $("guards-error").hidden = true;
  try {
    await whileLoading($("guards-form"), async () => paintGuards(await ask("settings.get")));
  } catch (error) {
    showError("guards-error", error, loadGuards);
  } finally {
    $("guards").dataset.loaded = "true";
  }
}

$("guards-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  $("guards-error").hidden = true;
  $("guards-saved").textContent = "";
  $("guards-save").disabled = true;
  try {
    paintGuards(await ask("settings.set", changedFields(guardsFields(), guardsShown)));
    $("guards-saved").textContent = t("saved");
  } catch (error) { // a bad domain: the host's message names it ("allowed-domains: 'a b' is not a domain …")
    showError("guards-error", error);
  } finally {
    $("guards-save").disabled = false;
  }
});

$("nav-settings").addEventListener("click", loadGuards);
