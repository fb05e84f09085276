// tabpilot's capture script: what the user does in a page while they have the controls (issue 10).
//
// ONE file, run in an isolated world in every frame: as the extension's content script, and injected
// by the host over CDP in `tabpilot run --headed` (then a binding `tabpilotCapture` exists in this
// world). Modes: "off" (nothing), "watch" (the agent has the controls: report each trusted input event
// as `capture.input`, for implicit takeover), "record" (the user has the controls: report semantic
// actions `{kind, target, value?, url, at}` as `capture.action`). See TAKEOVER_CONTRACT.md. content/names.js comes
// first (the worker loads both; the host injects both): an icon-only control is named by the agent's page state's rules.
//
// In "watch" the trusted input events go to the worker in `capture.input` messages `{events: [{kind, at}]}`:
// the first after a quiet moment at once (the person's first touch pauses the agent at once), those that
// follow within WATCH_BATCH_MS together at its end, and so on while input goes on. One message per event
// (the agent's own keys included) cost typing 100 characters in a task ~200 messages and more than its keys
// (issue 16). In `tabpilot run --headed` (the binding) each event goes alone, as `{kind, at}`.
//
// In "watch" the actions are worked out all the same and kept here a moment (TENTATIVE_MS), unsent: only
// the worker can tell the agent's input from the user's, and its "record" comes a round trip after the
// user's first input. It says since when the input was the user's (`since`): what they did from then on
// (the click that took the controls, keys typed within milliseconds of it) is reported, the rest dropped.
//
// Navigations: only one the person started is told as theirs (`navigate` with target "page": "went to"). The
// Navigation API's navigate event says so (`userInitiated`: their trusted click on a link, their form submission, the
// browser's back / forward); a page's own script changing the address (history.pushState / replaceState,
// location.hash, location.assign, a meta refresh, a synthetic click on a link) is not, and is told as the page's
// ("script"), whenever the person had the controls: a page that pushed "/checkout/confirmed" while they did was
// recorded as if they went there. A new document this script saw no cause for (the address bar, another window) says
// only that the tab loaded it ("loaded"); the host drops it when the document before told the same navigation.
//
// Secrets: the value of a password field, of a one-time-code or card (cc-*) field, and of any field
// that ever was type=password is never read: it is reported as "•••". Key events report no key of
// plain typing (only Enter, Escape, Tab, … and shortcuts such as Control+a), and `capture.input`
// reports only the kind of event.
(() => {
  "use strict";
  // Injected twice into one world: the first one works, and says hello again (the worker may have
  // forgotten this frame since its first hello: a worker restart, an SPA navigation).
  if (typeof globalThis.__tabpilotCapture === "function") return globalThis.__tabpilotCapture();
  globalThis.__tabpilotCapture = () => hello();

  const HIDDEN = "•••";
  const NAME_LIMIT = 80;
  const VALUE_LIMIT = 2000;
  // An action's address (its `url`, a navigate's `value`) as long as the host takes it (native/messages.py
  // TakeoverAction, as VALUE_LIMIT is for any other value): one longer made the host refuse the whole batch, and
  // nothing the person did on a page at a long address, or after choosing in a list of long options, was kept
  const URL_LIMIT = 10000;
  const SCROLL_IDLE_MS = 1000; // a scroll gesture ends after this long without a wheel event
  // A field typed in is reported at most this long after a key, while the person may go on typing in it (the host
  // keeps one action per field, its latest value; each later report is `again`): what they typed is in the record
  // even if tabpilot's host dies before they leave the field or hand back. Reported only once typing had paused for
  // 1 s, a host killed within that second lost the field, and a person typing on without a pause lost all of it.
  const FIELD_REPORT_MS = 200;
  const NAVIGATE_WINDOW_MS = 3000; // a top frame told "record" this soon after it started was navigated to
  const TENTATIVE_MS = 5000; // how long "watch" keeps what it worked out, for a "record" that says `since`
  // How long trusted input that follows a reported event is held to go in one message. Decisions on it reach
  // the agent this much later: only input right after other input waits (the agent's own typing, the person
  // typing on); the first event after a quiet moment goes at once.
  const WATCH_BATCH_MS = 50;
  const NAMED_KEYS = new Set([
    "Enter", "Escape", "Tab", "PageUp", "PageDown", "F1", "F2", "F3", "F4", "F5", "F6", "F7", "F8", "F9",
    "F10", "F11", "F12",
  ]);
  const KEYS_OUTSIDE_FIELDS = new Set(["ArrowUp", "ArrowDown", "ArrowLeft", "ArrowRight", "Home", "End", "Backspace", "Delete", " "]);
  const TEXT_INPUT_TYPES = new Set(["", "text", "email", "search", "tel", "url", "password", "number"]);

  const binding = typeof globalThis.tabpilotCapture === "function" ? globalThis.tabpilotCapture : null;
  const startedAt = Date.now();
  let mode = "off";
  let modeSetCount = 0;
  let lastUrl = location.href;
  let pendingField = null; // the field being typed in: one `input` action when the user is done with it
  let pendingFieldAt = 0; // when it was last typed in
  let pendingFieldSince = 0; // when the typing it is reported for began: its first key since its last report
  let lastInput = null; // the field the last action reported typing in, while no other action came after it
  let fieldTimer = null; // in "record": reports the field typed in so far (FIELD_REPORT_MS after a key)
  let pendingScroll = null; // {target, dx, dy, timer}
  let flushed = null; // while leaving "record": the actions flushed, returned in the mode change's reply
  // in "record": the takeover recorded for, as the worker told it ({taskId, startedAt}), sent with each action and with
  // what is given when leaving "record": a frame whose script hung across a Stop answered after the tab's next task had
  // been taken over, and the worker, going by the tab's task then, filed the stopped task's last letter under the new one
  let recording = null;
  // in "record": the latest actions sent, with when and for which takeover ([{action, sent, recording}]), for a mode
  // change read late to give again: one sent after the worker asked may have gone to a worker that stopped. As many as
  // the host tells a resent one among (taskrun/takeover.py RESENT_LOOKBACK)
  let sentLately = [];
  const SENT_KEPT = 50;
  let tentative = []; // in "watch": [{action, origin}], origin the time of the input it comes from
  let lastWheelReport = 0;
  let watchBatch = null; // in "watch", after an event was reported: {events, lastAt, timer} held for WATCH_BATCH_MS
  const everPassword = new WeakSet();
  const watchedRoots = new WeakSet();
  const NAVIGATIONS_KEPT = 20;
  const navigations = []; // this document's latest navigate events: [{url, person}], newest last
  let leaving = null; // a navigation to another document under way: {url, person, reload, event}

  // --- the two channels ---------------------------------------------------------------------------
  function send(message) {
    try {
      if (binding) {
        binding(JSON.stringify(message));
      } else if (globalThis.chrome?.runtime?.id) {
        const sent = chrome.runtime.sendMessage(message);
        if (sent && typeof sent.catch === "function") sent.catch(() => {}); // no listener / extension reloaded
      }
    } catch {
      // the extension was reloaded under this page: nothing to report to any more
    }
  }

  // `origin`: the time of the input it comes from, the last of it ("watch" tells the agent's from the person's by
  // it); `at`: when the person did it, the first of it. Each frame reports on its own, a field up to FIELD_REPORT_MS
  // after its key: the host puts what two frames report in the order of their `at`
  function report(action, origin = Date.now(), at = origin) {
    if (action.kind !== "navigate") checkNavigation(); // a URL changed since the last action comes first
    if (action.kind !== "input") lastInput = null;
    action.url = clean(location.href, URL_LIMIT);
    if (action.value !== undefined) action.value = clean(action.value, action.kind === "navigate" ? URL_LIMIT : VALUE_LIMIT);
    action.at = at;
    if (mode === "watch") keepTentative(action, origin);
    else if (flushed) flushed.push(action);
    else {
      sendAction(action);
      sentLately = [...sentLately.slice(1 - SENT_KEPT), { action, sent: Date.now(), recording }];
    }
  }

  function sendAction(action) {
    send({ type: "capture.action", action, ...(recording ? { takeover: recording } : {}) });
  }

  function keepTentative(action, origin) {
    const oldest = Date.now() - TENTATIVE_MS;
    tentative = tentative.filter((kept) => kept.origin >= oldest);
    tentative.push({ action, origin });
  }

  // "watch" → "record": what came from input since `since` is the user's; the rest was the agent's
  function adoptTentative(since) {
    const start = Number.isFinite(since) ? since : Date.now();
    if (pendingField && pendingFieldAt < start) pendingField = null;
    if (pendingScroll && pendingScroll.last < start) {
      clearTimeout(pendingScroll.timer);
      pendingScroll = null;
    }
    const theirs = tentative.filter((kept) => kept.origin >= start).map((kept) => kept.action);
    tentative = [];
    return theirs;
  }

  // --- modes --------------------------------------------------------------------------------------
  // `taskId` (the worker's, with "record"): the task whose takeover begun at `since` this frame records for
  function setMode(next, since, taskId) {
    if (next !== "record" && next !== "watch" && next !== "off") return [];
    if (next !== "watch") sendWatchBatch(); // what the person did before is theirs to report all the same
    const first = modeSetCount++ === 0;
    const leaving = mode === "record" && next !== "record";
    const theirs = mode === "watch" && next === "record" ? adoptTentative(since) : [];
    if (mode === "watch" && next !== "watch") {
      tentative = [];
      if (next === "off") pendingField = pendingScroll = null; // the agent's, never reported
    }
    let actions = [];
    if (leaving) {
      flushed = [];
      flushPending();
      actions = flushed;
      flushed = null;
    }
    const told = next === "record" && typeof taskId === "string" && Number.isFinite(since) ? { taskId, startedAt: since }
      : null;
    if (!told || !recording || told.taskId !== recording.taskId || told.startedAt !== recording.startedAt) recording = told;
    if (next === "record" && mode !== "record") {
      markPasswordFields(document);
      lastUrl = location.href;
      if (first && window === window.top && Date.now() - startedAt < NAVIGATE_WINDOW_MS) {
        // a reload keeps its URL: "went to" the page it was on would say nothing of what the person did
        report({ kind: "navigate", target: reloaded() ? "reload" : "loaded", value: location.href });
      }
    }
    mode = next;
    for (const action of theirs) sendAction(action);
    return actions;
  }

  if (binding) {
    globalThis.tabpilotCaptureMode = (next, since) => JSON.stringify(setMode(next, since));
  } else if (globalThis.chrome?.runtime?.onMessage) {
    chrome.runtime.onMessage.addListener((message, _sender, sendResponse) => {
      if (!message || message.type !== "capture.mode") return false;
      const left = recording; // what leaving "record" gives is that takeover's
      const actions = setMode(message.mode, message.since, message.taskId);
      if (!(Date.now() > message.answerBy)) {
        sendResponse({ actions });
        return false;
      }
      // read after the worker stopped waiting (Hand back, Stop): it may be another worker by now, which never
      // hears this reply
      const again = sentLately.filter(({ sent, recording: sentFor }) => sent >= message.askedAt && sentFor === left)
        .map(({ action }) => action);
      giveLate({ type: "capture.late", answerBy: message.answerBy, actions: [...again, ...actions],
        ...(left ? { takeover: left } : {}) })
        .then((taken) => sendResponse({ actions: taken ? [] : actions }));
      return true;
    });
  }

  // Given until a worker says it keeps it: a worker that is stopping takes nothing, and the message wakes the next one
  // (after a stopped worker, its successor took it at the first try, in 4 of 4 runs of the e2e tests that stop one).
  const LATE_TRIES = 20;
  const LATE_RETRY_MS = 500;
  async function giveLate(message) {
    for (let tries = 0; tries < LATE_TRIES && globalThis.chrome?.runtime?.id; tries++) {
      try {
        const reply = await chrome.runtime.sendMessage(message);
        if (reply && reply.taken) return true;
      } catch {
        // no worker to take it yet
      }
      await new Promise((resolve) => setTimeout(resolve, LATE_RETRY_MS));
    }
    return false;
  }

  // --- naming elements as a person would: role + accessible name -----------------------------------
  function roleOf(el) {
    const explicit = (el.getAttribute("role") || "").trim().split(/\s+/)[0];
    if (explicit) return explicit;
    const tag = el.localName;
    if (tag === "a") return el.hasAttribute("href") ? "link" : "generic";
    if (tag === "button" || tag === "summary") return "button";
    if (tag === "select") return el.multiple || el.size > 1 ? "listbox" : "combobox";
    if (tag === "textarea") return "textbox";
    if (tag === "input") {
      const type = (el.getAttribute("type") || "text").toLowerCase();
      if (type === "checkbox") return "checkbox";
      if (type === "radio") return "radio";
      if (type === "search") return "searchbox";
      if (type === "range") return "slider";
      if (type === "number") return "spinbutton";
      if (["submit", "button", "reset", "image"].includes(type)) return "button";
      return "textbox";
    }
    if (el.isContentEditable) return "textbox";
    if (/^h[1-6]$/.test(tag)) return "heading";
    if (tag === "img") return "img";
    if (tag === "form") return "form";
    if (tag === "option") return "option";
    if (tag === "label") return "label";
    return tag;
  }

  function clean(text, limit = NAME_LIMIT) {
    const line = String(text || "").replace(/\s+/g, " ").trim();
    return line.length > limit ? line.slice(0, limit - 1) + "…" : line;
  }

  function textOf(el, without = null) {
    // visible text, without the values of fields inside it (a label wrapping a password field) nor `without`'s
    let text = "";
    const walk = (node) => {
      for (const child of node.childNodes) {
        if (child.nodeType === Node.TEXT_NODE) text += child.data + " ";
        else if (child.nodeType === Node.ELEMENT_NODE && child !== without
          && !["input", "textarea", "select", "script", "style"].includes(child.localName)) {
          if (child.localName === "img") text += (child.getAttribute("alt") || "") + " ";
          else walk(child);
        }
        if (text.length > 400) return;
      }
    };
    walk(el);
    return clean(text);
  }

  function byIds(el, ids) {
    const root = el.getRootNode();
    return ids.split(/\s+/).map((id) => (root.getElementById ? root.getElementById(id) : document.getElementById(id)))
      .filter(Boolean).map(textOf).join(" ");
  }

  function nameOf(el) {
    const labelledBy = el.getAttribute("aria-labelledby");
    if (labelledBy) {
      const text = clean(byIds(el, labelledBy));
      if (text) return text;
    }
    const aria = clean(el.getAttribute("aria-label"));
    if (aria) return aria;
    const tag = el.localName;
    if (tag === "input" || tag === "textarea" || tag === "select") {
      const type = (el.getAttribute("type") || "").toLowerCase();
      if (tag === "input" && ["submit", "button", "reset"].includes(type)) {
        return clean(el.getAttribute("value") || (type === "submit" ? "Submit" : type === "reset" ? "Reset" : ""));
      }
      const labels = labelText(el);
      if (labels) return labels;
      for (const attribute of ["placeholder", "title", "alt", "name", "id"]) {
        const text = clean(el.getAttribute(attribute));
        if (text) return text;
      }
      return "";
    }
    if (LABELLED_ROLES.has(roleOf(el))) {
      const labels = labelText(el);
      if (labels) return labels;
      // an editor's words are what the person wrote, not its name
      if (el.isContentEditable) return clean(el.getAttribute("title") || el.getAttribute("aria-placeholder"));
    }
    if (tag === "form") {
      return clean(el.getAttribute("title") || el.getAttribute("name") || el.id || "");
    }
    if (tag === "img") return clean(el.getAttribute("alt") || el.getAttribute("title"));
    // an icon-only control, named as the agent's page state names it (content/names.js, loaded before this script;
    // none in a frame whose scripts were registered by an older version of the extension: named as before)
    const names = namesHere();
    const icon = names ? names.iconName(el) : null;
    if (icon && icon.named) return clean(icon.named);
    const text = icon && !icon.inner ? "" : textOf(el); // no words drawn: hidden ones name nothing a person sees
    return text || clean(el.getAttribute("title")) || clean(icon ? icon.guessed : "") || addressWords(el);
  }

  // content/names.js, or null where it is not loaded (then a page's element with id="tabpilotNames" is what the name
  // finds: a window's named property)
  function namesHere() {
    const names = globalThis.tabpilotNames;
    return names && typeof names.iconName === "function" && typeof names.fileWords === "function" ? names : null;
  }

  // A link named by nothing else, by the last part of its address ("/share/twitter": twitter), as the page state
  // names it (dom/render.py accessible_name)
  function addressWords(el) {
    const names = namesHere();
    const href = el.localName === "a" ? (el.getAttribute("href") || "").trim() : "";
    if (!names || !href || /^(javascript:|#)/i.test(href)) return "";
    return names.fileWords(href).slice(0, names.words).join(" ");
  }

  // The <label>s of a control: a field's own; a custom control's or an editor's label[for] and the label around it
  // (no browser links those to a div, a person reads them so: the host's state names them alike, walker.js labelsOf).
  const LABELLED_ROLES = new Set(["combobox", "listbox", "checkbox", "radio", "switch", "slider", "spinbutton",
    "textbox", "searchbox"]);
  function labelText(el) {
    let labels = el.labels ? Array.from(el.labels) : null;
    if (!labels) {
      const root = el.getRootNode();
      labels = el.id && root.querySelectorAll ? [...root.querySelectorAll("label[for]")].filter((l) => l.htmlFor === el.id) : [];
      const around = el.parentElement && el.parentElement.closest("label");
      if (around && !around.hasAttribute("for")) labels.push(around);
    }
    return clean(labels.map((label) => textOf(label, el)).join(" "));
  }

  function describe(el) {
    if (!el || el.nodeType !== Node.ELEMENT_NODE) return "page";
    const role = roleOf(el);
    const name = nameOf(el);
    return name ? `${role} ${JSON.stringify(name)}` : role;
  }

  // --- what counts as what ---------------------------------------------------------------------------
  function isTextField(el) {
    if (!el || el.nodeType !== Node.ELEMENT_NODE) return false;
    if (el.localName === "textarea") return true;
    if (el.localName === "input") return TEXT_INPUT_TYPES.has((el.getAttribute("type") || "").toLowerCase());
    return el.isContentEditable === true;
  }

  function isChoice(el) {
    if (!el || el.localName !== "input") return false;
    const type = (el.getAttribute("type") || "").toLowerCase();
    return type === "checkbox" || type === "radio";
  }

  function markPasswordFields(root) {
    try {
      for (const field of root.querySelectorAll("input[type=password i]")) everPassword.add(field);
    } catch {
      // a document being torn down
    }
  }

  function isSensitive(el) {
    if (el.localName === "input" && (el.getAttribute("type") || "").toLowerCase() === "password") {
      everPassword.add(el);
      return true;
    }
    if (everPassword.has(el)) return true;
    const autocomplete = (el.getAttribute("autocomplete") || "").toLowerCase();
    return /(^|\s)(one-time-code|cc-[a-z-]+|current-password|new-password)(\s|$)/.test(autocomplete);
  }

  function valueOf(el) {
    if (isSensitive(el)) return HIDDEN; // never read
    const value = el.isContentEditable && el.localName !== "input" && el.localName !== "textarea" ? el.innerText : el.value;
    return clean(value, VALUE_LIMIT);
  }

  // the element the person meant: the innermost target (open shadow roots included), or the nearest
  // ancestor a person would name (a button around an icon, a link around a span)
  function innermost(event) {
    const path = event.composedPath();
    return path.length && path[0].nodeType === Node.ELEMENT_NODE ? path[0] : path.find((n) => n.nodeType === Node.ELEMENT_NODE) || null;
  }

  // A control: what a person clicks to make something happen. A role counts when it is a control's: a region, a
  // dialog, a group or a list is where controls are, and tabindex="-1" only lets a script focus a box.
  const CONTROLS = "a[href],button,input,select,textarea,summary,label,option,[contenteditable=''],[contenteditable=true],[onclick],[tabindex]:not([tabindex^='-'])";
  const CONTROL_ROLES = new Set(["button", "link", "checkbox", "radio", "switch", "tab", "menuitem", "menuitemcheckbox",
    "menuitemradio", "option", "textbox", "searchbox", "combobox", "listbox", "slider", "spinbutton", "scrollbar",
    "treeitem", "gridcell", "columnheader", "rowheader"]);

  function isControl(node) {
    const role = (node.getAttribute("role") || "").trim().split(/\s+/)[0];
    if (role === "presentation" || role === "none") return false;
    return CONTROL_ROLES.has(role) || node.matches(CONTROLS);
  }

  function controlOf(event) {
    for (const node of event.composedPath()) {
      if (node.nodeType !== Node.ELEMENT_NODE) continue;
      if (isControl(node)) return node;
      if (node.localName === "body" || node.localName === "html") break;
    }
    return null;
  }

  // A click that reached no control, said as what it landed on: a picture or a heading by its name; words (a div a
  // script made clickable says "Save" and nothing else) as `text "Save"`; anywhere else (a form's or a card's padding,
  // the page's margin) as an empty area (`blank`) of the nearest area a person would tell — a form, a dialog, a
  // section by its label or heading, else by what it holds (`holding`: a form's first field and the button that
  // sends it, another area's first words) — or of the page. Told by its tag ("clicked form", "clicked div") the model
  // took it for a control it could press again; an area with no name of its own was told as "the page".
  const SPOT_TEXT_LIMIT = 40; // longer words with none of their own (a card's whole text) are around the spot, not at it
  const AREAS = "form,fieldset,dialog,section,article,aside,nav,main,header,footer,table,details,[role]";
  const AREA_ROLES = { form: "form", fieldset: "group", dialog: "dialog", section: "region", article: "article",
    aside: "complementary", nav: "navigation", main: "main", header: "banner", footer: "contentinfo", table: "table",
    details: "group" };

  function spotOf(event) {
    const path = event.composedPath().filter((node) => node.nodeType === Node.ELEMENT_NODE);
    const el = path[0];
    if (el && el.localName !== "body" && el.localName !== "html") {
      if (el.localName === "img" || /^h[1-6]$/.test(el.localName)) {
        if (nameOf(el)) return { kind: "click", target: describe(el) };
      } else {
        const own = Array.from(el.childNodes).some((node) => node.nodeType === Node.TEXT_NODE && node.data.trim());
        const text = textOf(el);
        // words of its own, or a few in a box with no control, heading or area in it (a form's are its labels')
        const plain = !el.matches(AREAS) && !el.querySelector(`${CONTROLS},${AREAS},h1,h2,h3,h4,h5,h6`);
        if (text && (own || (plain && text.length <= SPOT_TEXT_LIMIT))) {
          return { kind: "click", target: `text ${JSON.stringify(text)}` };
        }
      }
    }
    return { kind: "click", ...areaOf(path), blank: true };
  }

  // Landmarks with no name are the page's big parts, told by their role ("the header", "the footer"; the host words
  // them): a navigation by its first links, as a person says "the menu with Home, Pricing". They were told as "the
  // page". A <header> or <footer> inside an article or a section is that part's, not the page's: not told (it was
  // told as a "banner" by the article's heading).
  const LANDMARKS = new Set(["main", "banner", "contentinfo", "navigation", "complementary", "search"]);
  const SECTIONING = "article,aside,main,nav,section";

  function areaOf(path) {
    for (const node of path) {
      if (node.localName === "body" || node.localName === "html") break;
      if (!node.matches(AREAS) || ["presentation", "none"].includes(node.getAttribute("role"))) continue;
      if (!node.hasAttribute("role") && ["header", "footer"].includes(node.localName)
        && node.parentElement && node.parentElement.closest(SECTIONING)) continue;
      const role = node.getAttribute("role") || AREA_ROLES[node.localName];
      const name = areaName(node);
      if (name) return { target: `${role} ${JSON.stringify(name)}` };
      if (LANDMARKS.has(role)) {
        const holding = role === "navigation" ? namedControls(node, 3) : [];
        return holding.length ? { target: role, holding } : { target: role };
      }
      const holding = areaHolding(node, role);
      if (holding.length) return { target: role, holding };
    }
    return { target: "page" };
  }

  // What a person sees in an area that has no name: a form's first field and the button that sends it (a person
  // says "the form with Email and Sign in"); else its first words; else its first control with a name.
  const FIELDS = "input:not([type=hidden i],[type=submit i],[type=button i],[type=reset i],[type=image i]),select,textarea";
  const SUBMITS = "button:not([type]),button[type=submit i],input[type=submit i],input[type=image i]";
  function areaHolding(node, role) {
    if (role === "form") {
      const told = [firstShown(node, FIELDS), firstShown(node, SUBMITS)].filter((el) => el && nameOf(el)).map(describe);
      if (told.length) return told;
    }
    const words = firstWords(node);
    if (words) return [`text ${JSON.stringify(words)}`];
    return namedControls(node, 1);
  }

  function namedControls(node, most) {
    const told = [];
    for (const el of node.querySelectorAll(CONTROLS)) {
      if (told.length === most) break;
      if (shown(el) && nameOf(el)) told.push(describe(el));
    }
    return told;
  }

  function shown(el) {
    return typeof el.checkVisibility !== "function" || el.checkVisibility();
  }

  function firstShown(node, selector) {
    return [...node.querySelectorAll(selector)].find(shown) || null;
  }

  function firstWords(node) {
    const walker = document.createTreeWalker(node, NodeFilter.SHOW_TEXT);
    for (let text = walker.nextNode(); text; text = walker.nextNode()) {
      const parent = text.parentElement;
      if (!text.data.trim() || !parent || parent.closest("script,style,textarea,select,option") || !shown(parent)) continue;
      return clean(text.data, SPOT_TEXT_LIMIT);
    }
    return "";
  }

  function areaName(node) {
    const labelledBy = node.getAttribute("aria-labelledby");
    const named = (labelledBy && clean(byIds(node, labelledBy))) || clean(node.getAttribute("aria-label"));
    if (named) return named;
    const legend = node.localName === "fieldset" ? node.querySelector(":scope > legend") : null;
    const caption = node.localName === "table" ? node.querySelector(":scope > caption") : null;
    const summary = node.localName === "details" ? node.querySelector(":scope > summary") : null;
    const heading = legend || caption || summary || node.querySelector("h1, h2, h3, h4, h5, h6, [role=heading]");
    const text = heading ? textOf(heading) : "";
    if (text) return text;
    return node.localName === "form" ? clean(node.getAttribute("title") || node.getAttribute("name") || "") : "";
  }

  // non-composed events (change, submit) stop at a shadow root: listen on every open root the user reaches
  function watchShadowRoots(event) {
    for (const node of event.composedPath()) {
      if (node instanceof ShadowRoot && !watchedRoots.has(node)) {
        watchedRoots.add(node);
        node.addEventListener("change", onChange, true);
        node.addEventListener("submit", onSubmit, true);
        markPasswordFields(node);
      }
    }
  }

  // --- pending actions: typing merged per field, scrolls summarised ----------------------------------
  function flushField() {
    clearTimeout(fieldTimer);
    fieldTimer = null;
    const field = pendingField;
    if (!field) return;
    pendingField = null;
    // typing on in the field the last action typed in (reported so far: FIELD_REPORT_MS) is the same action,
    // which the host keeps once; two fields that read alike (each cart row's "Quantity") are two
    const again = field === lastInput;
    report({ kind: "input", target: describe(field), value: valueOf(field), ...(again ? { again } : {}) },
      pendingFieldAt, pendingFieldSince);
    lastInput = field;
  }

  function flushScroll() {
    const scroll = pendingScroll;
    if (!scroll) return;
    pendingScroll = null;
    clearTimeout(scroll.timer);
    const parts = [];
    if (scroll.dy) parts.push(`${scroll.dy > 0 ? "down" : "up"} ${Math.round(Math.abs(scroll.dy))}px`);
    if (scroll.dx) parts.push(`${scroll.dx > 0 ? "right" : "left"} ${Math.round(Math.abs(scroll.dx))}px`);
    if (parts.length) report({ kind: "scroll", target: scroll.target, value: parts.join(", ") }, scroll.last, scroll.first);
  }

  function reloaded() {
    const [entry] = performance.getEntriesByType("navigation");
    return Boolean(entry && entry.type === "reload");
  }

  function checkNavigation() {
    if (mode === "record" && location.href !== lastUrl) {
      lastUrl = location.href;
      report({ kind: "navigate", target: navigatedBy(location.href), value: location.href });
    }
  }

  // Who moved this document to `url`: the person when the last navigate event to it said they started it, else the
  // page's script (no such event seen is not the person's either: a page may stop our listener's sight of one)
  function navigatedBy(url) {
    for (let i = navigations.length - 1; i >= 0; i--) {
      if (navigations[i].url === url) return navigations[i].person ? "page" : "script";
    }
    return "script";
  }

  function onNavigate(event) {
    const url = event.destination && event.destination.url;
    if (!url) return;
    const person = event.userInitiated === true;
    navigations.push({ url, person });
    if (navigations.length > NAVIGATIONS_KEPT) navigations.shift();
    if (event.destination.sameDocument) {
      queueMicrotask(() => { if (!flushed) checkNavigation(); }); // the address changes as the event ends
    } else {
      leaving = { url, person, reload: event.navigationType === "reload", event };
    }
  }

  // The document is going: the navigation to another one that was under way (not cancelled) is told here, with who
  // started it; the new document's own word of it ("loaded") is then dropped by the host. A reload the person made
  // is told by the new document ("reload"). The top frame's only, as the new document's word is (a frame's own
  // documents, an ad's rotating, were never told).
  function reportLeaving() {
    const left = leaving;
    leaving = null;
    if (!left || window !== window.top || left.event.defaultPrevented || (left.reload && left.person)) return;
    report({ kind: "navigate", target: left.person ? "page" : "script", value: left.url });
  }

  function flushPending() {
    flushField();
    flushScroll();
    checkNavigation();
  }

  // --- listeners ---------------------------------------------------------------------------------------
  // the user's trusted input is worked out into actions in "record", and tentatively in "watch"
  function working(event) {
    return (mode === "record" || mode === "watch") && event.isTrusted;
  }

  function watch(event) {
    if (mode !== "watch" || !event.isTrusted) return;
    if (event.type === "wheel") {
      const now = Date.now();
      if (now - lastWheelReport < 100) return; // a scroll gesture is dozens of wheel events
      lastWheelReport = now;
    }
    const at = Date.now();
    if (binding) {
      send({ type: "capture.input", kind: event.type, at, trusted: true });
    } else if (!watchBatch) {
      send({ type: "capture.input", events: [{ kind: event.type, at }], trusted: true });
      holdWatchBatch(at);
    } else if (at !== watchBatch.lastAt) { // events of one millisecond get one verdict: the first is enough
      watchBatch.events.push({ kind: event.type, at });
      watchBatch.lastAt = at;
    }
  }

  function holdWatchBatch(lastAt) {
    watchBatch = { events: [], lastAt, timer: setTimeout(() => sendWatchBatch(true), WATCH_BATCH_MS) };
  }

  // Sends what is held; `goingOn`: input may still be coming (the timer), so the next events are held again
  function sendWatchBatch(goingOn = false) {
    const batch = watchBatch;
    if (!batch) return;
    clearTimeout(batch.timer);
    watchBatch = null;
    if (!batch.events.length) return;
    send({ type: "capture.input", events: batch.events, trusted: true });
    if (goingOn) holdWatchBatch(batch.lastAt);
  }

  function onClick(event) {
    watch(event);
    if (!working(event)) return;
    watchShadowRoots(event);
    const control = controlOf(event);
    const el = control || innermost(event);
    // a click into a field, on a checkbox / radio / select (or a label for one) is told by what follows it
    if (isTextField(el) || isChoice(el) || (el && (el.localName === "select" || el.localName === "option"))) {
      return;
    }
    if (el && el.localName === "label" && el.control) return;
    // a click made by a key (Enter submitting a form, Space on a button) is told as that key
    if (event.detail === 0 && !event.pointerType) return;
    flushPending();
    report(control ? { kind: "click", target: describe(control) } : spotOf(event));
    soonCheckNavigation();
  }

  function onInput(event) {
    watch(event);
    if (!working(event)) return;
    watchShadowRoots(event);
    const el = innermost(event);
    if (!isTextField(el)) return;
    if (pendingField && pendingField !== el) flushField();
    else flushScroll();
    if (isSensitive(el)) everPassword.add(el);
    if (pendingField !== el) pendingFieldSince = Date.now();
    pendingField = el;
    pendingFieldAt = Date.now();
    if (mode === "record" && !fieldTimer) {
      fieldTimer = setTimeout(() => {
        fieldTimer = null;
        if (mode === "record" && !flushed) flushField();
      }, FIELD_REPORT_MS);
    }
  }

  function onChange(event) {
    if (!working(event)) return;
    const el = innermost(event);
    if (!el) return;
    if (el.localName === "select") {
      flushPending();
      const labels = Array.from(el.selectedOptions || []).map((o) => clean(o.label || o.textContent, 200));
      report({ kind: "select", target: describe(el), value: isSensitive(el) ? HIDDEN : labels.join(", ") });
    } else if (isChoice(el)) {
      flushPending();
      report({ kind: "check", target: describe(el), value: el.checked ? "checked" : "unchecked" });
    } else if (isTextField(el) && el === pendingField) {
      flushField(); // the user is done with this field (blur, Enter in some fields)
    }
  }

  function onSubmit(event) {
    if (!working(event)) return;
    flushPending();
    const form = innermost(event);
    const submitter = event.submitter ? ` via ${describe(event.submitter)}` : "";
    report({ kind: "submit", target: describe(form) + submitter });
    soonCheckNavigation();
  }

  function keyName(event) {
    const key = event.key;
    if (!key || ["Control", "Shift", "Alt", "Meta"].includes(key)) return null;
    const combo = event.ctrlKey || event.metaKey || event.altKey;
    if (combo) {
      const parts = [];
      if (event.ctrlKey) parts.push("Control");
      if (event.altKey) parts.push("Alt");
      if (event.metaKey) parts.push("Meta");
      if (event.shiftKey) parts.push("Shift");
      parts.push(key.length === 1 ? key.toLowerCase() : key);
      return parts.join("+");
    }
    if (NAMED_KEYS.has(key)) return event.shiftKey && key === "Tab" ? "Shift+Tab" : key;
    if (KEYS_OUTSIDE_FIELDS.has(key) && !isTextField(innermost(event))) return key === " " ? "Space" : key;
    return null; // plain typing: told as the field's value, never key by key
  }

  function onKeydown(event) {
    watch(event);
    if (!working(event)) return;
    watchShadowRoots(event);
    const name = keyName(event);
    if (!name) return;
    const el = innermost(event);
    if (isTextField(el) && el === pendingField) flushField();
    else flushPending();
    const focused = el && el !== document.body && el !== document.documentElement ? describe(el) : "";
    report({ kind: "key", target: focused, value: name });
    soonCheckNavigation();
  }

  // the page's own handlers run after ours: a history.pushState they make is seen a moment later
  function soonCheckNavigation() {
    setTimeout(() => { if (!flushed) checkNavigation(); }, 50);
  }

  function onWheel(event) {
    watch(event);
    if (!working(event)) return;
    if (pendingField) flushField();
    const target = scrollTarget(event);
    if (pendingScroll && pendingScroll.target !== target) flushScroll();
    if (!pendingScroll) pendingScroll = { target, dx: 0, dy: 0, timer: 0, first: Date.now(), last: 0 };
    pendingScroll.last = Date.now();
    const unit = event.deltaMode === 1 ? 40 : event.deltaMode === 2 ? window.innerHeight : 1;
    pendingScroll.dx += event.deltaX * unit;
    pendingScroll.dy += event.deltaY * unit;
    clearTimeout(pendingScroll.timer);
    pendingScroll.timer = setTimeout(flushScroll, SCROLL_IDLE_MS);
  }

  function scrollTarget(event) {
    for (const node of event.composedPath()) {
      if (node.nodeType !== Node.ELEMENT_NODE || node === document.body || node === document.documentElement) continue;
      const style = getComputedStyle(node);
      const scrollable = /(auto|scroll)/.test(style.overflowY + style.overflowX);
      if (scrollable && (node.scrollHeight > node.clientHeight || node.scrollWidth > node.clientWidth)) {
        return describe(node);
      }
    }
    return "page";
  }

  function onFocusOut(event) {
    if (mode === "off") return;
    if (pendingField && innermost(event) === pendingField) flushField();
  }

  function onFocusIn(event) {
    if (mode === "off") return;
    watchShadowRoots(event);
    const el = innermost(event);
    if (el && el.localName === "input") isSensitive(el); // remember password fields before they change type
  }

  function onOtherInput(event) {
    watch(event); // pointerdown, touchstart: only ever reported in watch mode
  }

  const options = { capture: true, passive: true };
  window.addEventListener("click", onClick, options);
  window.addEventListener("input", onInput, options);
  window.addEventListener("change", onChange, options);
  window.addEventListener("submit", onSubmit, options);
  window.addEventListener("keydown", onKeydown, options);
  window.addEventListener("wheel", onWheel, options);
  window.addEventListener("focusout", onFocusOut, options);
  window.addEventListener("focusin", onFocusIn, options);
  window.addEventListener("pointerdown", onOtherInput, options);
  window.addEventListener("touchstart", onOtherInput, options);
  window.addEventListener("hashchange", checkNavigation, options);
  window.addEventListener("popstate", checkNavigation, options);
  window.addEventListener("pagehide", () => {
    sendWatchBatch();
    if (mode === "record") {
      flushPending();
      reportLeaving();
    }
  }, options);
  if (globalThis.navigation && typeof navigation.addEventListener === "function") {
    navigation.addEventListener("navigate", onNavigate);
  }
  // a tab put away may be frozen or discarded before its timers run
  document.addEventListener("visibilitychange", () => document.visibilityState === "hidden" && sendWatchBatch(), options);

  // a field that stops being a password field (a "show password" toggle) keeps its value hidden
  try {
    new MutationObserver((records) => {
      for (const record of records) {
        if (record.oldValue && record.oldValue.toLowerCase() === "password") everPassword.add(record.target);
      }
    }).observe(document, { subtree: true, attributes: true, attributeFilter: ["type"], attributeOldValue: true });
  } catch {
    // no document element yet: password fields are also marked when focused or typed in
  }
  markPasswordFields(document);

  // ask for the mode: the host answers through tabpilotCaptureMode, the extension in its reply
  function hello() {
    if (binding) {
      send({ type: "capture.hello", url: location.href });
    } else if (globalThis.chrome?.runtime?.id) {
      // the overlay's panel frame (content/overlay.js) says so by its name: the worker tells it "off"
      const panel = window.name.startsWith("tabpilot-panel:") ? window.name : undefined;
      chrome.runtime.sendMessage({ type: "capture.hello", url: location.href, panel })
        .then((reply) => { if (reply && reply.mode && modeSetCount === 0) setMode(reply.mode, reply.since, reply.taskId); })
        .catch(() => {}); // no service worker listening: stays "off" until told
    }
  }
  hello();
})();
