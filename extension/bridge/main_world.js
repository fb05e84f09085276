// tabpilot page bridge, main world: window.PAGE_AGENT_EXT, page-agent's extension API, on sites the user
// allowed (the service worker registers this file for exactly those origins). It only talks to
// tabpilot's isolated content script (bridge/relay.js) with window messages; it holds no secret and
// decides nothing: the host checks every task against the user's grants.
(() => {
  "use strict";
  if (window.top !== window || Object.prototype.hasOwnProperty.call(window, "PAGE_AGENT_EXT")) return;
  const VERSION = "0.1.0"; // = manifest.json's version (tests/test_extension_bridge_files.py checks)
  const CHANNEL = "tabpilot-bridge";
  const ORIGIN = location.origin;
  const post = window.postMessage.bind(window); // taken before any page script runs
  const calls = new Map(); // call id → {resolve, reject, callbacks}
  let nextId = 1;

  const CONFIG_FIELDS = ["baseURL", "model", "apiKey", "systemInstruction", "includeInitialTab",
    "experimentalIncludeAllTabs", "maxSteps", "language"];

  function callback(call, name, value) {
    const fn = call.callbacks && call.callbacks[name];
    if (typeof fn !== "function") return;
    try { fn(value); } catch (error) { setTimeout(() => { throw error; }); } // the page's error, not ours
  }

  window.addEventListener("message", (event) => {
    if (event.source !== window || event.origin !== ORIGIN) return;
    const data = event.data;
    if (!data || data.channel !== CHANNEL || data.dir !== "to-page") return;
    const call = calls.get(data.id);
    if (!call) return;
    switch (data.kind) {
      case "status": callback(call, "onStatusChange", data.status); break;
      case "activity": callback(call, "onActivity", data.activity); break;
      case "history": callback(call, "onHistoryUpdate", data.history); break;
      case "result": calls.delete(data.id); call.resolve(data.result); break;
      case "error": calls.delete(data.id); call.reject(new Error(data.message)); break;
      default: break; // a kind this version does not know
    }
  });

  function request(action, fields, callbacks) {
    const id = `${ORIGIN}#${nextId++}`;
    return new Promise((resolve, reject) => {
      calls.set(id, { resolve, reject, callbacks });
      try {
        post({ channel: CHANNEL, dir: "to-content", id, action, ...fields }, ORIGIN);
      } catch (error) { // a value structured clone cannot copy (a function, a DOM node): refused, not kept waiting
        calls.delete(id);
        reject(new TypeError(`PAGE_AGENT_EXT.${action}(…): ${error && error.message ? error.message : error}`));
      }
    });
  }

  function callbacksOf(config) {
    const source = config && typeof config === "object" ? config : {};
    return { onStatusChange: source.onStatusChange, onActivity: source.onActivity, onHistoryUpdate: source.onHistoryUpdate };
  }

  function execute(task, config) {
    if (typeof task !== "string" || !task.trim()) {
      return Promise.reject(new TypeError("PAGE_AGENT_EXT.execute(task, config): task must be a non-empty string"));
    }
    if (config !== undefined && config !== null && (typeof config !== "object" || Array.isArray(config))) {
      return Promise.reject(new TypeError("PAGE_AGENT_EXT.execute(task, config): config must be an object, e.g. "
        + "{ baseURL, model, onStatusChange }, or left out"));
    }
    const wire = {};
    for (const field of CONFIG_FIELDS) {
      if (config && config[field] !== undefined && config[field] !== null) wire[field] = config[field];
    }
    return request("execute", { task, config: wire }, callbacksOf(config));
  }

  // Stops the task this page started (no other). Resolves once it has ended.
  function stop() {
    return request("stop", {}, null);
  }

  // tabpilot's addition: after a reload or navigation (same origin, same tab), the result of the task this
  // page started; the callbacks given are subscribed again. Resolves null when there is none.
  function attach(config) {
    return request("attach", {}, callbacksOf(config));
  }

  const api = Object.freeze({ version: VERSION, execute, stop, attach });
  Object.defineProperty(window, "PAGE_AGENT_EXT_VERSION", { value: VERSION, enumerable: true });
  Object.defineProperty(window, "PAGE_AGENT_EXT", { value: api, enumerable: true });
})();
