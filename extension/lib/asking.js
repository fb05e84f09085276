// What a running task asks of the person, in one place for the popup (popup.js) and the page's overlay
// (overlay/panel.js): whether the agent waits on them, the task pill's kind, and the notice's words. Both
// load this file before their own (popup.html; the overlay's panel frame, worker/takeover.js PANEL_FILES).
"use strict";

var Asking = globalThis.Asking || (() => {
  // `asks` is what the task has now: {control, question, approval}, each null when not there.

  // The agent waits on the person: a question, an action to allow, or its own request for help.
  function waitsOnPerson({ control, question, approval }) {
    return !!(question || approval || (control && control.reason === "agent_request"));
  }

  // A running task's pill: "asking" while the agent waits on the person, "paused" while they have the
  // controls, null while the agent works.
  function pillKind(asks) {
    return waitsOnPerson(asks) ? "asking" : asks.control ? "paused" : null;
  }

  // The notice's title, the reason under it and (for an action to allow) why it waits for a yes, each ""
  // when there is none, the page's and the model's words in them quoted (lib/page_text.js: PageText.set shows
  // them); `t` is the caller's chrome.i18n lookup.
  function notice({ control, question, approval }, t) {
    const { quote, site } = PageText;
    if (approval) {
      const action = approval.actionText || approval.action; // actionText: the host's words in our language
      const reason = approval.site ? t("approveWants", quote(action), quote(site(approval.site)))
        : t("approveWantsHere", quote(action));
      // whyText: the host's words in our language, quoting the page's word ("order")
      return { title: t("approveTitle"), reason, why: t("approveWhy", quote(approval.whyText || approval.why)) };
    }
    if (question) return { title: t("overlayQuestion"), reason: quote(question), why: "" };
    if (control && control.reason === "agent_request") {
      return { title: t("overlayAgentAsks"), reason: control.message ? quote(control.message) : "", why: "" };
    }
    if (control) {
      return { title: t(control.reason === "implicit" ? "overlayImplicit" : "overlayYouHaveControls"), reason: "", why: "" };
    }
    return { title: "", reason: "", why: "" };
  }

  return { waitsOnPerson, pillKind, notice };
})();
