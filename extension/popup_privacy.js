// The popup's Privacy section (Settings view): what is masked in page text before it reaches the model,
// and the user's secrets (names and domains; Add sends the value straight to the host, which keeps it —
// it is never put in extension storage or shown again). Also the "masking on" mark of the task view.
// Uses popup.js's $, t, ask, attempt and removableRow.
"use strict";

const MASK_TOGGLES = [["mask-emails", "maskEmails"], ["mask-phones", "maskPhones"], ["mask-cards", "maskCards"],
  ["mask-ibans", "maskIbans"]];

// The task view's mark: which kinds of personal data the model does not see.
function paintMaskingMark(settings) {
  const kinds = MASK_TOGGLES.filter(([, key]) => settings[key]).map(([id]) => t(`maskKind_${id.slice(5)}`));
  if ((settings.maskPatterns || []).length) kinds.push(t("maskKind_patterns"));
  $("masking-mark").hidden = kinds.length === 0;
  $("masking-mark").title = t("maskingMarkTitle", kinds.join(", "));
}

function paintMasking(settings) {
  for (const [id, key] of MASK_TOGGLES) $(id).checked = !!settings[key];
  $("mask-patterns").value = (settings.maskPatterns || []).join("\n");
  paintMaskingMark(settings);
}

async function saveMasking(fields) {
  $("privacy-saved").textContent = "";
  await attempt("privacy-error", async () => {
    paintMasking(await ask("settings.set", fields));
    $("privacy-saved").textContent = t("saved");
  });
}

for (const [id, key] of MASK_TOGGLES) {
  $(id).addEventListener("change", () => saveMasking({ [key]: $(id).checked }));
}
$("mask-patterns").addEventListener("change", () => {
  const patterns = $("mask-patterns").value.split("\n").map((line) => line.trim()).filter(Boolean);
  saveMasking({ maskPatterns: patterns });
});

function paintSecrets(view) {
  const list = $("secrets-list");
  list.replaceChildren();
  for (const secret of view.secrets || []) {
    const remove = async () => paintSecrets(await ask("secrets.delete", { name: secret.name }));
    const where = `${secret.domain} · ${t(secret.anyField ? "secretAnyField" : "secretLoginFields")}`;
    list.append(removableRow(secret.name, where, { className: "secret-delete", text: t("delete") }, remove,
      "privacy-error"));
  }
  $("secrets-empty").hidden = (view.secrets || []).length > 0;
  $("privacy").dataset.loaded = "true";
  listedSecrets = view.secrets || [];
  showStoredChoice();
}

// A secret saved again keeps its "any field" unless the person changes the box: the box shows what is stored for
// the name typed, and the host is told only a choice the person made (it keeps the stored one otherwise).
let listedSecrets = [];
let anyFieldChosen = false;

function showStoredChoice() {
  if (anyFieldChosen) return;
  const stored = listedSecrets.find((secret) => secret.name === $("secret-name").value.trim());
  $("secret-any-field").checked = !!(stored && stored.anyField);
}

$("secret-name").addEventListener("input", showStoredChoice);
$("secret-any-field").addEventListener("change", () => { anyFieldChosen = true; });

$("secret-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const value = $("secret-value");
  await attempt("privacy-error", async () => {
    const chosen = anyFieldChosen ? { anyField: $("secret-any-field").checked } : {};
    const saved = await ask("secrets.set", {
      name: $("secret-name").value.trim(), domain: $("secret-domain").value.trim(), value: value.value, ...chosen,
    });
    $("secret-name").value = $("secret-domain").value = "";
    anyFieldChosen = false;
    paintSecrets(saved);
  });
  value.value = ""; // the value is gone from the popup whatever the host said
});

async function loadPrivacy() {
  $("privacy").dataset.loaded = "false";
  await attempt("privacy-error", async () => {
    paintMasking(await ask("settings.get"));
    paintSecrets(await ask("secrets.list"));
  }, loadPrivacy);
}

// The mark, once the host answers (it may still be starting as the popup opens; a host that is down has its
// own banner).
async function loadMaskingMark(attempt = 0) {
  try {
    paintMaskingMark(await ask("settings.get"));
  } catch (_) {
    if (attempt < 40) setTimeout(() => loadMaskingMark(attempt + 1), 500);
  }
}

$("nav-settings").addEventListener("click", loadPrivacy);
loadMaskingMark();
