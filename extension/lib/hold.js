// What is under a press does not change before the press ends: a value that comes while the person's pointer button is
// down is applied once it is up (after its click), at most MAX_MS later, since the release may never reach this
// document (it went up outside the browser). overlay/panel.js holds the panel's state (a question arriving while Take
// over was held put Send where Take over was: the click went to neither); content/overlay.js holds the host box's size
// (it grew over the page button the person was pressing). A document may get this file twice (registered, then
// injected): `var` and the guard make the second run keep the first.
"use strict";

var Hold = globalThis.Hold || (() => {
  const MAX_MS = 5000;

  // `holds(event)`: whether this trusted pointerdown is a press to hold for; `apply(value)`: what to do with a value
  // once nothing is held. Returns the function to hand values to.
  function until(holds, apply) {
    let held = null; // while a press is down: {came, value} that came meanwhile, {timer}

    function release() {
      if (!held) return;
      clearTimeout(held.timer);
      const { came, value } = held;
      held = null;
      if (came) apply(value);
    }

    window.addEventListener("pointerdown", (event) => {
      if (!event.isTrusted || !holds(event)) return;
      if (held) clearTimeout(held.timer);
      held = { came: held ? held.came : false, value: held ? held.value : undefined, timer: setTimeout(release, MAX_MS) };
    }, true);
    // the click comes in the same task as the release: what waited is applied after it
    const letGo = () => { if (held) setTimeout(release); };
    window.addEventListener("pointerup", letGo, true);
    window.addEventListener("pointercancel", letGo, true);

    return (value) => {
      if (!held) apply(value);
      else Object.assign(held, { came: true, value });
    };
  }

  return { until };
})();
