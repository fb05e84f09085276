// tabpilot's overlay panel: everything the in-page overlay shows and every field the person types in (the answer to
// the agent's question, the Hand back note, and any field to come), in a frame of its own that content/overlay.js
// makes inside the overlay's closed shadow root: an empty srcdoc document, sandboxed with nothing allowed (an opaque
// origin, no page script runs in it), into which the worker puts this file, lib/ and panel.css as content scripts
// (worker/takeover.js injectPanel). No address of the extension is framed: nothing the manifest makes web-accessible,
// which any page could load and so tell the extension is installed. The page in the tab reaches nothing of the frame:
// not its text (window.find() searches closed shadow roots, and found what the person typed in the overlay's fields, a
// letter at a time), not the person's keys (their key, input and composition events stay in this document: in a
// shadow root they reached the page's own listeners with every key), not a selection or a copy; and a frame in a
// shadow tree is not in the page's window.frames, so the page cannot reach this window to navigate it or post to it.
// capture.js, registered in every frame of a task tab, is told "off" here (the worker knows this frame), so none of
// the person's typing here is recorded as input to the page.
//
// It talks to the worker itself, over a port named `overlay-panel`: its first message carries the key in this
// frame's window name, which only the overlay's content script (which made the frame) and the worker know. A page
// that names a frame of its own so cannot know the key: nothing goes into it. Everything it shows comes from the worker
// (the host owns the task's state); it acts only on the person's trusted presses, and Allow counts a click only once
// the person could see it (lib/seen.js: IntersectionObserver v2 sees through the frame to the page around it).
(() => {
  "use strict";
  if (globalThis.__tabpilotPanel) return; // put in twice (a frame found twice): the first one works
  globalThis.__tabpilotPanel = true;

  const t = (key, ...subs) => chrome.i18n.getMessage(key, subs.map(String)) || key;
  const PANEL_NAME = "tabpilot-panel:"; // content/overlay.js names the frame so
  const KEY = window.name.startsWith(PANEL_NAME) ? window.name.slice(PANEL_NAME.length) : "";
  if (!KEY) return;
  const ALLOW_GRACE_MS = 400; // as the bridge's prompt: a click this soon after Allow is seen is not aimed at it
  const RECONNECT_MS = 500;
  const FIRST_TRIES = 10; // a panel the worker never took (its key is not the tab's) stops asking after these
  const PILL = { running: "overlay_running", paused: "overlay_paused", asking: "overlay_asking" };
  // Allow is watched from when it shows, and afresh this often while it is not seen whole: Chromium's
  // IntersectionObserver v2 in a frame out of the page's process kept the "not visible" it worked out as the overlay
  // went into the top layer (measured: no change in over a second, while an observer made then saw it visible at
  // once). A new observer is told afresh, and what it says is what the page shows now (a cover still hides it).
  const REWATCH_MS = 250;

  const PRESS_WAITS_MS = 3000; // how long a press made while the worker restarts waits for it
  // How long a press waits for the worker's answer before the person is told it has none yet and may press again:
  // the worker waits on the page's frames (at most 1 s) and on the host (up to 30 s), with the buttons greyed and
  // nothing said meanwhile
  const REPLY_WAITS_MS = 5000;
  let port = null;
  let welcomed = false; // the worker took this port (it knew the key)
  const afterWelcome = []; // presses made meanwhile
  let taken = false; // the worker took this panel once: it keeps asking again after a worker restart
  let tries = 0;
  let nextId = 1;
  const waiting = new Map();
  const ui = {};
  let allowSeen = null; // Seen.watch of Allow while it is shown
  let rewatch = null;

  // --- the worker -----------------------------------------------------------------------------------------------
  function connect() {
    tries += 1;
    try {
      port = chrome.runtime.connect({ name: "overlay-panel" });
    } catch (_) {
      return; // the extension was reloaded: this frame is orphaned
    }
    port.onMessage.addListener((message) => {
      if (message.kind === "welcome") {
        taken = welcomed = true;
        toldHeight = 0; // a restarted worker, or a new overlay port: told afresh
        for (const go of afterWelcome.splice(0)) go();
        tellSize();
      } else if (message.kind === "state") {
        showAfterPress(message.task);
      } else if (message.kind === "reply") {
        const done = waiting.get(message.id);
        waiting.delete(message.id);
        if (done) done(message);
      }
    });
    port.onDisconnect.addListener(() => {
      port = null;
      welcomed = false;
      for (const done of waiting.values()) done({ ok: false, error: t("overlayWorkerGone") });
      waiting.clear();
      // the worker restarted (or does not know this tab's key yet): what is shown stays until it says otherwise
      if (taken || tries < FIRST_TRIES) setTimeout(() => { if (!port && chrome.runtime.id) connect(); }, RECONNECT_MS);
    });
    port.postMessage({ kind: "hello", key: KEY });
  }

  // A press while the worker restarts (the port is being made again) is carried out once it is back, for a moment.
  // A press the worker has not answered within REPLY_WAITS_MS is answered "not yet" (the buttons can be pressed
  // again), and its real answer, should it come, is `late`.
  function command(name, fields = {}) {
    const at = Date.now();
    return new Promise((resolve) => {
      const send = () => {
        if (!port || !welcomed) return resolve({ ok: false, error: t("overlayWorkerGone") });
        const id = nextId++;
        let lateAnswer = null;
        const timer = setTimeout(() => {
          resolve({ ok: false, error: t("overlayNoReply"), late: new Promise((late) => { lateAnswer = late; }) });
        }, REPLY_WAITS_MS);
        waiting.set(id, (reply) => {
          clearTimeout(timer);
          if (lateAnswer) lateAnswer(reply);
          else resolve(reply);
        });
        port.postMessage({ kind: "command", id, command: name, at, ...fields });
      };
      if (welcomed) return send();
      const timer = setTimeout(() => {
        const i = afterWelcome.indexOf(go);
        if (i >= 0) afterWelcome.splice(i, 1);
        send();
      }, PRESS_WAITS_MS);
      const go = () => { clearTimeout(timer); send(); };
      afterWelcome.push(go);
    });
  }

  // --- the UI ---------------------------------------------------------------------------------------------------
  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) PageText.set(node, text);
    return node;
  }

  function build() {
    const panel = ui.panel = el("div", "panel");
    panel.title = t("overlayLabel");
    const head = el("div", "head");
    head.append(el("span", "brand", "tabpilot"), (ui.pill = el("span", "pill")));
    ui.task = el("div", "task");
    ui.goal = el("div", "goal");
    ui.thinking = el("div", "thinking");
    ui.outcome = el("div", "outcome");
    ui.outcomeText = el("div", "outcome-text");
    ui.remedy = el("div", "remedy");
    ui.outcome.append(ui.outcomeText, ui.remedy);
    ui.notice = el("div", "notice");
    ui.noticeTitle = el("div", "notice-title");
    ui.reason = el("div", "reason");
    ui.why = el("div", "why");
    ui.notice.append(ui.noticeTitle, ui.reason, ui.why);
    ui.note = el("textarea", "note");
    ui.note.placeholder = t("overlayNotePlaceholder");
    ui.answer = el("input", "answer");
    ui.answer.placeholder = t("overlayAnswerPlaceholder");
    for (const field of [ui.note, ui.answer]) field.autocomplete = "off";
    ui.takeover = button("takeover", t("takeOver"), "primary");
    ui.handback = button("handback", t("handBack"), "primary");
    ui.send = button("answer", t("sendAnswer"), "primary");
    ui.allow = button("allow", t("approveAllow"), "primary");
    ui.deny = button("deny", t("approveDeny"), "danger");
    ui.stop = button("stop", t("stop"), "danger");
    ui.close = button("close", t("overlayClose"), "");
    const buttons = el("div", "buttons");
    buttons.append(ui.allow, ui.deny, ui.takeover, ui.handback, ui.send, ui.stop, ui.close);
    ui.error = el("div", "error");
    // why a press on Allow did nothing (lib/seen.js): said, and read out by a screen reader, not dropped in silence
    ui.hint = el("div", "hint");
    ui.hint.setAttribute("role", "status");
    ui.hint.hidden = true;
    const body = ui.body = el("div", "body");
    const content = ui.content = el("div", "content"); // its height is what the body needs: body scrolls beyond
    content.append(head, ui.task, ui.thinking, ui.goal, ui.outcome, ui.notice, ui.answer, ui.note, ui.error);
    body.append(content);
    panel.append(body, ui.hint, buttons); // above the buttons, out of what scrolls: in view however short the page
    // the overlay's host box follows what the panel needs (content/overlay.js caps it): no more of the page covered
    new ResizeObserver(tellSize).observe(content);
    window.addEventListener("resize", tellSize); // the page's viewport, and so this frame, changed height
    document.body.append(panel);
    ui.answer.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && event.isTrusted) press("answer");
    });
  }

  function button(name, text, className) {
    const b = el("button", className, text);
    b.type = "button";
    b.dataset.command = name;
    // Only the person's real press (the agent's click landing here is refused by the worker, which dispatched it)
    b.addEventListener("click", (event) => {
      if (!event.isTrusted) return;
      if (name === "allow" && !(allowSeen && allowSeen.seen())) return refused(allowSeen); // covered, just shown, moved
      press(name);
    });
    return b;
  }

  // A press the seen-guard did not count: the person learns why, and that pressing again works (counted in
  // data-refused: a press told the same words again shows no change otherwise)
  function refused(watcher) {
    ui.hint.dataset.refused = String(Number(ui.hint.dataset.refused || 0) + 1);
    say(watcher && watcher.why() === "soon" ? t("seenTooSoon") : t("seenHidden"));
  }

  function say(hint) {
    if (ui.hint.textContent === hint) return;
    ui.hint.textContent = hint;
    ui.hint.hidden = !hint;
    tellSize();
  }

  const PRESSABLE = () => [ui.allow, ui.deny, ui.takeover, ui.handback, ui.send, ui.stop];

  async function press(name) {
    if (name === "close") return command("close");
    const fields = {};
    if (name === "handback") fields.note = ui.note.value;
    if (name === "answer") {
      fields.answer = ui.answer.value.trim();
      if (!fields.answer) { // nothing to send: said, not a press that does nothing
        ui.error.textContent = t("overlayAnswerEmpty");
        return ui.answer.focus();
      }
    }
    for (const b of PRESSABLE()) b.disabled = true;
    ui.error.textContent = "";
    say("");
    const reply = await command(name, fields);
    for (const b of PRESSABLE()) b.disabled = false;
    answered(name, reply);
    // the answer that came too late for the press: what it says replaces "no answer yet", unless a press since said
    if (reply.late) {
      const said = ui.error.textContent;
      reply.late.then((late) => { if (ui.error.textContent === said) answered(name, late); });
    }
  }

  function answered(name, reply) {
    PageText.set(ui.error, reply.ok ? "" : reply.error || t("overlayFailed"));
    if (reply.ok && name === "handback") ui.note.value = "";
    else if (reply.ok && name === "answer") ui.answer.value = "";
  }

  // The buttons do not change under a press (lib/hold.js): a state that comes between the person's button going down and
  // coming up is shown once it is up. Shown at once, Send came in where Take over was: the release landed on Send, so
  // the click went to neither button, and the press did nothing (tests/e2e/test_overlay_press.py).
  const showAfterPress = Hold.until(
    (event) => event.button === 0 && event.target instanceof Element && !!event.target.closest("button"),
    (task) => show(task));

  function show(task) {
    if (!task) {
      delete ui.panel.dataset.state;
      return;
    }
    const running = task.status === "running";
    const control = running ? task.control : null;
    const question = running ? task.question : null;
    const approval = running && !control ? task.approval : null;
    const asks = { control, question, approval };
    const kind = !running ? "finished" : Asking.pillKind(asks) || "running";
    ui.panel.dataset.state = approval ? "approval" : question ? "question" : control ? control.reason
      : running ? "running" : task.status;
    ui.pill.dataset.kind = kind;
    // an error by the agent's own verdict is "Not done" (PROTOCOL.md gaveUp), as the popup says it
    const ended = task.status === "error" && task.gaveUp ? "notDone" : task.status;
    ui.pill.textContent = running ? t(PILL[kind]) : t(`status_${ended}`);
    PageText.set(ui.task, PageText.quote(task.task || ""));
    ui.task.title = PageText.visible(task.task || "");
    // nextGoal is the goal the last step's model reply gave, for the action that step took (page-agent's
    // next_goal): what the agent did last, not what it will do next
    PageText.set(ui.goal, running && !control && !question && task.nextGoal ? t("overlayLastGoal", PageText.quote(task.nextGoal)) : "");
    ui.goal.hidden = !ui.goal.textContent;
    const working = running && !control && !question && !approval;
    showWorkLine(working ? task : null);
    showOutcome(running ? null : task);
    const { title, reason, why } = Asking.notice(asks, t);
    PageText.set(ui.noticeTitle, title);
    PageText.set(ui.reason, reason);
    ui.reason.hidden = !reason;
    ui.notice.hidden = !title;
    PageText.set(ui.why, why);
    ui.why.hidden = !why;
    ui.allow.hidden = ui.deny.hidden = !approval;
    if (!approval) say(""); // answered, or gone: what a refused press was told goes with it
    watchAllow(!!approval);
    ui.answer.hidden = ui.send.hidden = !question;
    ui.note.hidden = ui.handback.hidden = !control;
    ui.takeover.hidden = !running || !!control;
    ui.takeover.className = question || approval ? "" : "primary"; // answering is the main way then
    ui.stop.hidden = !running;
    ui.close.hidden = running;
    tellSize();
  }

  // "Step 3 · thinking… 12 s", counting on each second while the model thinks, and 'Step 3 · clicking "Sign in"… 2 s'
  // while the step's action runs (lib/timeline.js words both). While the agent works the line keeps its place: shown and gone at
  // each step, it grew the box by a line over what lay just above it, and a person's press aimed there landed on the box
  // (test_overlay_press, 1 run in 6); kept but blank while the action ran, it looked like a gap in a broken box.
  let workTicker = null;
  function showWorkLine(working) {
    clearInterval(workTicker);
    workTicker = null;
    const thinking = working && working.thinking;
    const acting = working && !thinking ? working.acting : null;
    const said = () => (thinking ? Timeline.thinkingText(thinking) : acting ? Timeline.actingText(acting) : "");
    const paint = () => PageText.set(ui.thinking, said() || "\u00a0");
    paint();
    ui.thinking.hidden = !working;
    ui.thinking.style.visibility = thinking || acting ? "" : "hidden";
    if (thinking || (acting && acting.took === undefined)) workTicker = setInterval(paint, 1000);
  }

  // A finished task: its answer, or what went wrong and what to do, worded as the popup words it (lib/timeline.js);
  // the person watching the page learns it here, not only "Error" (a page's or an MCP client's task has no popup open).
  function showOutcome(task) {
    const outcome = task && task.outcome;
    let said = null;
    if (outcome && outcome.success) said = { headline: outcome.data ? PageText.quote(outcome.data) : t("resultDone"), remedy: "" };
    else if (outcome) said = outcome.data ? Timeline.failure(outcome.error || { message: outcome.data }) : { headline: t("resultFailed"), remedy: "" };
    else if (task && task.status === "interrupted") said = { headline: Timeline.interrupted(task.source, task.requester), remedy: "" };
    ui.outcome.hidden = !said;
    ui.outcome.dataset.kind = !outcome ? "failed" : outcome.success ? "ok" : task.gaveUp ? "not-done"
      : task.status === "stopped" ? "stopped" : "failed";  // a Stop is no error: amber, as the popup's pill
    PageText.set(ui.outcomeText, said ? said.headline : "");
    PageText.set(ui.remedy, said && said.remedy ? `${said.remedy} ${t("overlayMoreInPopup")}` : "");
    ui.remedy.hidden = !ui.remedy.textContent;
  }

  // The height the panel needs to show everything without scrolling: the panel takes it at once, up to its frame's
  // height (what the host box may be), and the host box follows (told through the worker: a message to the parent
  // window would go to the page). The frame itself keeps its size, so what is under the person's pointer does not
  // move while the host box catches up.
  let toldHeight = 0;
  function tellSize() {
    if (!ui.panel.dataset.state) return;
    const height = Math.ceil(ui.panel.offsetHeight - ui.body.clientHeight + ui.content.offsetHeight);
    ui.panel.style.height = `${Math.min(height, innerHeight)}px`;
    if (!port || !welcomed || height === toldHeight) return;
    toldHeight = height;
    port.postMessage({ kind: "size", height });
  }

  function watchAllow(shown) {
    if (!shown) {
      clearInterval(rewatch);
      rewatch = null;
      if (allowSeen) allowSeen.stop();
      allowSeen = null;
      return;
    }
    if (allowSeen) return;
    allowSeen = Seen.watch(ui.allow, ALLOW_GRACE_MS); // a refused press soon after is told it came too soon (Seen why)
    rewatch = setInterval(() => {
      if (allowSeen && !allowSeen.whole()) allowSeen = allowSeen.renew();
    }, REWATCH_MS);
  }

  build();
  connect();
})();
