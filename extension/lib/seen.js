// Whether the person could see a button before their click on it, for the page's prompts that grant something
// (bridge/relay.js: "may this site run this task?"; overlay/panel.js: Allow an irreversible action). Loaded before
// those files (content scripts; the worker injects them into the overlay's panel frame); content/overlay.js uses `raise` / `lower`. The page reaches their host
// elements: it can make one transparent, cover it
// (a top-layer popover that lets clicks through), filter or transform it, slide it half out of view or under the
// person's pointer, and draw a decoy where the button is for the person to click. IntersectionObserver v2 says
// whether the box is shown as drawn, unobscured, at full opacity: `seen()` is true once it has been so, whole,
// for `forMs` without a break, and where it is now. (No v2: the delay since shown.) A press `seen()` refuses is not
// dropped in silence: `why()` says what the person is told ("soon": it just appeared, or moved, there, or the browser
// has not said yet whether it is seen; "hidden": it is not in view whole now, covered, transparent or partly off
// screen). `renew()`: the same watch on a new observer. A document may get these files
// twice (registered, then injected): `var` and the guard make the second run keep the first.
"use strict";

var Seen = globalThis.Seen || (() => {
  const WHOLE = 0.99; // of the box in the viewport (rounding keeps a whole box just under 1)
  // How long after an element is shown IntersectionObserver v2 may take to first say it is seen (its `delay`, 100 ms,
  // and a frame or two): a press before that is too soon, not on a hidden element
  const FIRST_REPORT_MS = 300;

  // `shownAt`: when the element was shown (performance.now()); `lost`: when it was last seen whole, and where (a watch
  // that takes over from an earlier one: renew)
  function watch(element, forMs, shownAt = performance.now(), lost = null) {
    if (!("isVisible" in IntersectionObserverEntry.prototype)) {
      const seen = () => performance.now() - shownAt >= forMs;
      return { seen, whole: () => true, why: () => "soon", stop: () => {}, renew: () => watch(element, forMs, shownAt) };
    }
    let since = null;
    let place = null; // where it was when `since` began: moved under the pointer since, it was not seen there
    const where = () => {
      const box = element.getBoundingClientRect();
      return `${Math.round(box.left)},${Math.round(box.top)},${Math.round(box.width)},${Math.round(box.height)}`;
    };
    const observer = new IntersectionObserver((entries) => {
      for (const entry of entries) {
        const whole = entry.isVisible && entry.isIntersecting && entry.intersectionRatio >= WHOLE;
        if (!whole) {
          if (since !== null) lost = { at: performance.now(), place };
          since = null;
        } else if (since === null) {
          since = performance.now();
          place = where();
        }
      }
    }, { trackVisibility: true, delay: 100, threshold: [0, WHOLE, 1] });
    observer.observe(element);
    const seen = () => {
      if (since === null) return false;
      const now = where();
      if (now !== place) { // the page moved it (a prompt slid under the person's pointer): seen afresh from now
        since = performance.now();
        place = now;
        return false;
      }
      return performance.now() - since >= forMs;
    };
    // `whole`: seen whole now, however briefly (what `seen` waits on for `forMs`); `why`: after `seen()` said no, why.
    // Not whole a moment after it was, somewhere else now: it moved, in view. The window made shorter moves the overlay,
    // and Chromium says its Allow is out of view for the frame or two it takes to lay it out anew (measured: 75-115 ms,
    // isIntersecting false): a press then was told Allow was covered or off screen, while the person saw it move.
    const moved = () => !!lost && performance.now() - lost.at < forMs + FIRST_REPORT_MS && where() !== lost.place;
    const why = () => (since !== null || performance.now() - shownAt < forMs + FIRST_REPORT_MS || moved() ? "soon"
      : "hidden");
    const stop = () => observer.disconnect();
    const renew = () => {
      stop();
      return watch(element, forMs, shownAt, since !== null ? { at: performance.now(), place } : lost);
    };
    return { seen, whole: () => since !== null, why, stop, renew };
  }

  // Puts a page-reachable host element in the top layer, above the page and outside its effects (a page-wide
  // filter or opacity, a grayscale day of mourning, a dark-mode filter on <html>, made a box in the page never
  // "visible" to `watch`, so no click counted). `onTop`: above what the page put in the top layer since. False
  // where there is no top layer: it stays a fixed box.
  function raise(host, onTop = false) {
    try {
      if (host.getAttribute("popover") !== "manual") host.popover = "manual";
      if (onTop && host.matches(":popover-open")) host.hidePopover();
      if (!host.matches(":popover-open")) host.showPopover();
      return true;
    } catch (_) {
      return false;
    }
  }

  // Out of the top layer again: while anything is there, Chromium's IntersectionObserver v2 says no element of the
  // page is visible (the page's own click guards, a sign-in or payment frame's, would refuse every click).
  function lower(host) {
    if (!host.hasAttribute("popover")) return;
    try {
      if (host.matches(":popover-open")) host.hidePopover();
    } catch (_) { /* not in the top layer */ }
    host.removeAttribute("popover");
  }

  return { watch, raise, lower };
})();
