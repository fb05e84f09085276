// Rendering of page-agent-shaped history events and activities as timeline cards (no frameworks), and
// the one way the popup words a failure: what went wrong, and what to do about it in the popup.
"use strict";

const Timeline = (() => {
  const t = I18n.t;
  const { quote, site, visible } = PageText; // the page's words in ours (lib/page_text.js)

  // `text`: ours, any page's words in it quoted (PageText.quote)
  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) PageText.set(node, String(text));
    return node;
  }

  function short(value, limit = 300) {
    const text = typeof value === "string" ? value : JSON.stringify(value);
    if (text === undefined) return "";
    return text.length > limit ? `${text.slice(0, limit)}…` : text;
  }

  // The status mark an action's result opens with for the model (page-agent's "✅ Waited for 2 seconds.", "❌ …",
  // tabpilot's ⏸ and ⚠️): the words say it already, and a Chromium without an emoji font showed an empty box.
  const STATUS_MARK = /^(?:\u2705|\u274C|\u23F8|\u26A0)\uFE0F?\s*/u;
  function withoutMark(text) {
    return typeof text === "string" ? text.replace(STATUS_MARK, "") : text;
  }

  function describeInput(input) {
    if (input === undefined || input === null) return "";
    if (typeof input !== "object") return short(input);
    return Object.entries(input).map(([k, v]) => `${k}: ${short(v, 120)}`).join(", ");
  }

  function card(type, label) {
    const li = el("li", `card card-${type}`);
    li.dataset.type = type;
    li.append(el("div", "card-label", label));
    return li;
  }

  function line(parent, className, label, text) {
    if (text === undefined || text === null || text === "") return;
    const row = el("div", `card-line ${className}`);
    row.append(el("span", "k", label), el("span", "v", text));
    parent.append(row);
    return row;
  }

  // Retries are counted page-agent's way everywhere (retry n of maxAttempts retries, as on the wire), as
  // the CLI's "retry 1/3" and the final "still failed after 3 retries" count them.
  function retries(attempt, maxAttempts) {
    return [Number.isFinite(attempt) ? attempt : "?", Number.isFinite(maxAttempts) ? maxAttempts : "?"];
  }

  function seconds(ms) {
    return Math.max(0, Math.round(ms / 100) / 10);
  }

  const SHOWN_ACTIONS = 8; // of a takeover, in its card: the last ones; Export has them all
  const GUARD_LABELS = { blocked: "cardBlocked", denied: "cardDenied", expired: "cardExpired", unasked: "cardUnasked", allowed: "cardAllowed" };

  // What a guard stopped, said to the person: the event's content is said to the model, with what it should do next
  // ("do not try to do it another way. Ask the user…", a new user's trial). "" for a record without it (older).
  function guardWords(event) {
    const what = event.params && typeof event.params === "object" ? event.params : null;
    if (!what || !GUARD_LABELS[event.guard]) return "";
    if (event.guard === "blocked") return what.url ? t("guardBlockedText", quote(site(short(what.url, 200)))) : "";
    if (!what.action) return "";
    // actionText: the host's words in our language
    return t(`guard${event.guard[0].toUpperCase()}${event.guard.slice(1)}Text`, quote(what.actionText || what.action),
      quote(site(what.site || "")));
  }

  function renderEvent(event) {
    switch (event && event.type) {
      case "step": {
        const action = event.action || {};
        // a step whose action was not done (refused, failed, or the person took the controls) is told apart at a
        // glance: only its words' tense did ("clicking" for "clicked"), the terminal's ❌ having no place here
        const notDone = Boolean(action.notDone || action.abandoned);
        const li = card("step", t(notDone ? "cardStepNotDone" : "cardStep", (event.stepIndex ?? 0) + 1));
        if (notDone) li.classList.add("card-not-done");
        const reflection = event.reflection || {};
        // the model's verdict on the step before, first and labelled so: under this card's own result it read as a
        // verdict on it ("Success" under an action the user had denied). Step 1 has no step before it: its card
        // opened with "Previous step: Success".
        if (reflection.evaluation_previous_goal && event.stepIndex !== 0) line(li, "eval muted", t("cardEval"), quote(reflection.evaluation_previous_goal));
        if (reflection.next_goal) line(li, "goal", t("cardGoal"), quote(reflection.next_goal));
        // the exact call, for whoever wants it, on hovering the words
        const call = `${action.name || "?"}${action.input !== undefined ? `(${describeInput(action.input)})` : ""}`;
        const said = line(li, "action", t("cardAction"), stepWords(action));
        if (said) said.title = visible(call);
        line(li, "output", t("cardResult"), resultWords(action));
        return li;
      }
      case "observation": {
        // tabpilot's guards: a navigation the allowed domains stopped, an action the user denied, one nobody
        // allowed in time
        const label = GUARD_LABELS[event.guard];
        const li = label ? card(event.guard, t(label)) : card("observation", t("cardObservation"));
        // text: a note's words for the person in our language (the host's, naming the page's address or title);
        // content is the model's, in the agent's
        li.append(el("div", "card-text", guardWords(event) || quote(short(event.text || withoutMark(event.content), 500))));
        return li;
      }
      case "retry": {
        const li = card("retry", t("cardRetry", ...retries(event.attempt, event.maxAttempts)));
        li.append(el("div", "card-text", short(event.text || event.message, 500))); // text: the host's words in our language
        return li;
      }
      case "error": {
        const li = card("error", t("cardError"));
        li.dataset.message = event.message || "";
        if (event.code) li.dataset.code = event.code;
        if (event.params) li.dataset.params = JSON.stringify(event.params);
        if (event.text) li.dataset.text = event.text;
        li.append(el("div", "card-text", short(event.text || event.message, 800))); // text: the host's words in our language
        return li;
      }
      case "user_takeover": {
        // agent/types.py UserTakeoverEvent: actions [{description, …}], startedAt/endedAt (epoch ms), note
        const took = Number.isFinite(event.startedAt) && Number.isFinite(event.endedAt)
          ? t("tookOverFor", seconds(event.endedAt - event.startedAt)) : t("tookOver");
        const li = card("user_takeover", took);
        if (Number.isFinite(event.startedAt)) li.dataset.startedAt = String(event.startedAt); // what `amend` finds it by
        const actions = Array.isArray(event.actions) ? event.actions : [];
        if (actions.length) {
          const list = el("ul", "card-actions");
          // the last few in the card; the ones before them are counted, never silently left out (the first of a
          // long takeover, often the sign-in, had gone without a word)
          if (actions.length > SHOWN_ACTIONS) list.append(el("li", "card-actions-more", t("earlierActions", actions.length - SHOWN_ACTIONS)));
          for (const action of actions.slice(-SHOWN_ACTIONS)) {
            list.append(el("li", "", quote(short(action && typeof action === "object" ? action.description || action : action, 160))));
          }
          li.append(list);
        }
        if (event.note) line(li, "note", t("cardNote"), quote(short(event.note, 500)));
        return li;
      }
      default: {
        const li = card("other", (event && event.type) || "event");
        li.append(el("div", "card-text", short(event, 300)));
        return li;
      }
    }
  }

  // A model's reply can take a minute: "Thinking…" alone left the person wondering whether anything happened. The step
  // it thinks about and the seconds since it began, counted here (the activity push is page-agent's {type:'thinking'}).
  // `thinking`: {step, since} (since: epoch ms).
  function thinkingText(thinking) {
    return t("activityThinkingStep", thinking.step, Math.max(0, Math.floor((Date.now() - thinking.since) / 1000)));
  }

  // What an action does or did, in words: 'clicking "Sign in"' while it runs (`tense` "acting"), 'clicked "Sign in"' in
  // its step's card ("did"). The popup said "Executing click_element_by_index (index: 12)" and its card "Action:
  // click_element_by_index(index: 12)" (a new user's trial). The words are the messages <tense>_<tool> and, on what the
  // action is on (`target`: the element's name, or the address it opens; agent/types.py ExecutingActivity.target,
  // StepAction.target), <tense>On_<tool>: one per built-in tool (tests/test_extension_locales.py), read by the terminal
  // too (host/tabpilot/actionwords.py). A tool of the caller's own (AgentConfig's custom_tools) is named as it is: it
  // has no other name. `seconds`: a wait's.
  function actionWords(tense, tool, target, seconds) {
    const named = /^\w+$/.test(String(tool)); // a message's name: a custom tool's may be any string
    return (named && target ? I18n.optional(`${tense}On_${tool}`, quote(target)) : "")
      || (named ? I18n.optional(`${tense}_${tool}`, seconds ?? 1) : "")
      || t(`${tense}Other`, quote(tool));
  }

  // Between its thoughts the agent acts: 'Step 3 · clicking "Sign in"… 2 s', the seconds counting on while it runs.
  // `acting`: lib/working.js's.
  function actingText(acting) {
    const doing = actionWords("acting", acting.tool, acting.target, acting.seconds);
    const ms = acting.took ?? Date.now() - (acting.since ?? Date.now());
    return t("actingStep", acting.step, doing, Math.max(0, Math.floor(ms / 1000)));
  }

  // A step's result as its card says it: the model's words, but for an action the person's taking the controls
  // stopped and the agent's request for the controls when the person handed back, said to them, not the model's
  // instructions in output ("what they did is in the user_takeover note…"); i18n.py step_result for the terminal.
  function resultWords(action) {
    if (action.abandoned === "took_over") return t("cardTookOverResult");
    if (action.name === "request_takeover" && !action.notDone) return t("cardHandedBackResult");
    return action.output === undefined || action.output === null || action.output === "" ? ""
      : quote(short(withoutMark(action.output)));
  }

  // A step's action as its card says it: what it did, or, when it was not done (the person took the controls, it was
  // refused or failed: its result says which), what it was doing.
  function stepWords(action) {
    const tense = action.abandoned || action.notDone ? "acting" : "did";
    const seconds = action.input && Number.isFinite(action.input.seconds) ? action.input.seconds : undefined;
    return actionWords(tense, action.name || "?", action.target, seconds);
  }

  // `now`: {thinking, acting} (thinkingText's and actingText's), what the activity alone does not say.
  function activityText(activity, now = {}) {
    if (!activity) return "";
    switch (activity.type) {
      case "thinking": return now.thinking ? thinkingText(now.thinking) : t("activityThinking");
      case "executing": case "executed": return now.acting ? actingText(now.acting) : "";
      case "retrying": return t("activityRetrying", ...retries(activity.attempt, activity.maxAttempts));
      case "error": return t("activityError", activity.message);
      case "waiting": return t("activityWaiting", Math.round(activity.seconds ?? 0));
      default: return "";
    }
  }

  // Whether the person is shown the event: not a note said to the model about its own way of working (`nudge`:
  // "Do something different", "only 2 steps left"), worded as an instruction to it.
  function shown(event) {
    return !(event && event.type === "observation" && event.nudge);
  }

  function render(list, events) {
    list.replaceChildren(...(events || []).filter(shown).map(renderEvent));
  }

  // An event shown before, changed (task.amended: a takeover the page's late answer completed): its card, the last of
  // its type with its startedAt, is drawn anew in its place. False when the list has no such card.
  function amend(list, event) {
    const cards = [...list.querySelectorAll(`.card-${CSS.escape(String(event && event.type))}`)]
      .filter((node) => node.dataset.startedAt === String(event.startedAt));
    if (!cards.length) return false;
    cards[cards.length - 1].replaceWith(renderEvent(event));
    return true;
  }

  // What went wrong, as the popup says it: a headline and the remedy where the user is (Settings), in the
  // user's language; the host's own full text goes under Details. An error event names its kind by `code`
  // (host/tabpilot/i18n.py FAILURE_CODES); a failure that gave up after retries is known by its last
  // cause. Unknown failures show the host's text.
  const CODE_KINDS = {
    key_refused: "key",
    quota: "quota",
    unreachable: "unreachable",
    timeout: "unreachable",
    not_found: "notFound",
    context_too_long: "context",
    max_steps: "maxSteps",
    server_error: "server",
    rate_limited: "server",
    connection_cut: "server",
    bad_reply: "badReply",
    reply_too_large: "badReply",
    bad_call: "badCall",
    content_filtered: "filtered",
  };

  function kindOfCode(code, params) {
    const cause = params && typeof params === "object" ? params.cause : null;
    if ((code === "retries_exhausted" || code === "deadline") && cause && typeof cause === "object") {
      return kindOfCode(cause.code, cause.params);
    }
    return CODE_KINDS[code] || null;
  }

  // Records written before error events had a code: recognised by the causes the host names in English
  // (HTTP status, an unreachable URL), never by its remedy wording.
  const FAILURE_MARKERS = [
    { kind: "key", test: /refused the API key|HTTP 40[13]\b/ },
    { kind: "quota", test: /no quota left|insufficient_quota/i },
    { kind: "unreachable", test: /could not reach|connection (error|refused)|no reply within|timed? ?out/i },
    { kind: "notFound", test: /HTTP 404\b|Not found \(/ },
    { kind: "context", test: /too long for the model|context window/i },
    { kind: "maxSteps", test: /Step count exceeded maximum limit/ },
  ];

  // The host's remedy sentences name a terminal's ways (commands, environment variables, flags); the popup
  // says its own remedy instead, so Details keep only the cause.
  const HOST_REMEDY = /\.\s+(Check|Configure|Use|Set|Pass|Run)\b[\s\S]*$/;

  const TERMINAL_SOURCES = new Set(["cli", "demo"]); // host/tabpilot/taskrun/plan.py TERMINAL_SOURCES
  // A task stopped with Stop ends with page-agent's English words (host/tabpilot/i18n.py STOPPED_MESSAGE): said in the
  // reader's language.
  const STOPPED_MESSAGE = "Task stopped";

  // A task started in a terminal (`tabpilot run`, `demo`) ran with that terminal's flags and OPENAI_* variables over
  // the settings: its remedy is said there. A run with --model gpt-typo was told "Check the Base URL and the Model in
  // Settings", which it had not used (a new user's trial).
  // A web page that named its own model (its execute() config: the error's params.chosen, from the host) ran without
  // the person's Settings: the remedy is the page's to make.
  function remedy(kind, asker, params) {
    if (params && params.chosen === "page" && kind !== "maxSteps") return t("fixPageModel");
    if (!asker || !TERMINAL_SOURCES.has(asker.source)) return t(`fix_${kind}`);
    return kind === "maxSteps" ? t("fixTerminalSteps") : t("fixTerminal", asker.model || "?");
  }

  // `source`: an error event ({message, text?, code?, params?}) or just the host's text; `asker`: the task's {source,
  // model} (a record's), who started it and with which model.
  function failure(source, asker = null) {
    const event = source && typeof source === "object" ? source : { message: source };
    const message = String(event.message || "");
    if (message === STOPPED_MESSAGE) return { kind: "stopped", headline: t("resultStopped"), remedy: "", detail: "" };
    const kind = event.code ? kindOfCode(event.code, event.params)
      : (FAILURE_MARKERS.find((entry) => entry.test.test(message)) || {}).kind;
    if (!kind) return { kind: "other", headline: String(event.text || message), remedy: "", detail: "" };
    return { kind, headline: t(`fail_${kind}`), remedy: remedy(kind, asker, event.params),
      detail: message.replace(HOST_REMEDY, ".") };
  }

  // The error event a result's `data` came from, read back from its card in `list` (the last one saying
  // exactly that text), so its code is known; just the text when no card says it.
  function failedEvent(list, text) {
    const cards = [...list.querySelectorAll(".card-error")].filter((node) => node.dataset.message === text);
    const last = cards[cards.length - 1];
    if (!last || !last.dataset.code) return { message: text };
    let params = null;
    try {
      params = last.dataset.params ? JSON.parse(last.dataset.params) : null;
    } catch (_) {
      params = null;
    }
    return { message: text, text: last.dataset.text, code: last.dataset.code, params };
  }

  // What a task tabpilot's host stopped under says the person can do, by who asked for it (a task snapshot's or a
  // record's `source` and `requester`): their own is run again from the box (the popup puts it back there); a page's
  // or a program's is not theirs to run from an empty box: the one that asked can ask again.
  function interrupted(source, requester) {
    if (requester && source === "page") return t("interruptedPageResult", PageText.requester(source, requester));
    if (requester && source === "mcp") return t("interruptedProgramResult", PageText.requester(source, requester));
    return t("interruptedResult");
  }

  return { renderEvent, shown, activityText, thinkingText, actingText, render, amend, el, short, failure, failedEvent,
    interrupted };
})();
