// Which action of which step the agent takes now, kept from its activity pushes in one place for the service worker
// (the overlay's line) and the popup and side panel (their activity line): from the action's start until the next
// thought, its end included, with what it is on and since when. lib/timeline.js actingText words it. Both load this
// file before their own (popup.html; importScripts in service_worker.js).
"use strict";

var Working = globalThis.Working || (() => {
  // The action `activity` (a task.activity push) says is under way, after `previous` (what was said before): `step` is
  // the one it belongs to (the steps recorded so far, plus one). Null while the agent does not act (it thinks, waits on
  // the model or the person). {step, tool, target?, seconds?, since, took?}: target the element's name (agent/types.py
  // ExecutingActivity.target), seconds a wait's, since when it began (this clock: the push has no time), took how many
  // ms it took once it ended (ExecutedActivity.duration).
  function acting(previous, activity, step) {
    const type = activity && activity.type;
    if (type === "executing") {
      // told again (a snapshot of the task): the same action, counted from when it began
      if (previous && previous.took === undefined && previous.tool === activity.tool && previous.step === step) return previous;
      const input = activity.input;
      const seconds = input && Number.isFinite(input.seconds) ? input.seconds : undefined;
      return { step, tool: activity.tool, target: activity.target || undefined, seconds, since: Date.now() };
    }
    if (type !== "executed") return null;
    const took = Number.isFinite(activity.duration) ? activity.duration : 0;
    return previous && previous.tool === activity.tool ? { ...previous, took }
      : { step, tool: activity.tool, since: Date.now() - took, took };
  }

  return { acting };
})();
