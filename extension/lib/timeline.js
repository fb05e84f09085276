// Rendering of page-agent-shaped history events and activities as timeline cards (no frameworks).
"use strict";

const Timeline = (() => {
  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function short(value, limit = 300) {
    const text = typeof value === "string" ? value : JSON.stringify(value);
    if (text === undefined) return "";
    return text.length > limit ? `${text.slice(0, limit)}…` : text;
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
  }

  function renderEvent(event) {
    switch (event && event.type) {
      case "step": {
        const li = card("step", `Step ${(event.stepIndex ?? 0) + 1}`);
        const reflection = event.reflection || {};
        const action = event.action || {};
        line(li, "goal", "Goal", reflection.next_goal ?? reflection.nextGoal);
        line(li, "action", "Action", `${action.name || "?"}${action.input !== undefined ? `(${describeInput(action.input)})` : ""}`);
        line(li, "output", "Result", short(action.output));
        const evaluation = reflection.evaluation_previous_goal ?? reflection.evaluationPreviousGoal;
        if (evaluation) line(li, "eval muted", "Eval", evaluation);
        return li;
      }
      case "observation": {
        const li = card("observation", "Observation");
        li.append(el("div", "card-text", short(event.content, 500)));
        return li;
      }
      case "retry": {
        const li = card("retry", `Retry ${event.attempt ?? "?"} of ${event.maxAttempts ?? "?"}`);
        li.append(el("div", "card-text", short(event.message, 500)));
        return li;
      }
      case "error": {
        const li = card("error", "Error");
        li.append(el("div", "card-text", short(event.message, 800)));
        return li;
      }
      case "user_takeover": {
        const li = card("user_takeover", "You took over");
        const parts = [event.note, event.summary].filter(Boolean);
        if (parts.length) li.append(el("div", "card-text", short(parts.join(" — "), 500)));
        return li;
      }
      default: {
        const li = card("other", (event && event.type) || "event");
        li.append(el("div", "card-text", short(event, 300)));
        return li;
      }
    }
  }

  function activityText(activity) {
    if (!activity) return "";
    switch (activity.type) {
      case "thinking": return "Thinking…";
      case "executing": return `Executing ${activity.tool}${activity.input !== undefined ? ` (${describeInput(activity.input)})` : ""}`;
      case "executed": return `Done ${activity.tool}${activity.duration !== undefined ? ` in ${Math.round(activity.duration)} ms` : ""}`;
      case "retrying": return `Retrying ${activity.attempt} of ${activity.maxAttempts}…`;
      case "error": return `Error: ${activity.message}`;
      default: return "";
    }
  }

  function render(list, events) {
    list.replaceChildren(...(events || []).map(renderEvent));
  }

  return { renderEvent, activityText, render, el, short };
})();
