// The in-page side of the browser state. Runs in tabpilot's own isolated world (the page's scripts cannot
// see or change it) and returns what DOMSnapshot.captureSnapshot would, for the part of the page near the
// viewport only: subtrees far above or below are reduced to the elements a person could use in them.
// Evaluates to the world's walker object; `fast.py` keeps it as a global of the world named after this source.
(() => {
  const MARGIN = 200;  // px beyond the viewport that are still read (matches walk.SKIP_MARGIN)
  const DEFAULT_STYLE = ["block", "visible", "1", "auto", "visible", "visible", "auto", "static", "auto", "none"];
  const COUNTED = "a,button,input,select,textarea,summary,[role]";
  const FAR = COUNTED + ",iframe,label,[tabindex],[contenteditable]";
  const RULE_ATTRIBUTES = ["role", "href", "type", "tabindex", "contenteditable", "aria-hidden"];
  const NATIVE = new Set(["A", "BUTTON", "INPUT", "SELECT", "TEXTAREA", "SUMMARY", "LABEL", "IFRAME", "BODY"]);
  const OPAQUE = new Set(["SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE", "DATALIST", "TEXTAREA", "HEAD"]);
  const SHADOW_HOSTS = new Set(["article", "aside", "blockquote", "body", "div", "footer", "h1", "h2", "h3", "h4",
    "h5", "h6", "header", "main", "nav", "p", "section", "span"]);
  const SCROLLING = new Set(["auto", "scroll", "overlay"]);
  const CLIPPING = new Set(["auto", "scroll", "overlay", "hidden", "clip"]);

  const ids = new WeakMap();  // element -> its id, for as long as this world (this document) lives
  let nextId = 1;
  const wanted = new WeakSet();  // elements the host may act on (it looks them up by id: see element)
  const located = new Map();  // id -> a WeakRef to its element, for those
  let sweepAt = 1000;
  const clickable = new WeakSet();  // elements with click listeners (found by the host through CDP)
  let clickableList = [];  // the same, to look for
  const closedRoots = new WeakMap();  // host element -> its closed shadow root (handed over by the host)
  const checkedHosts = new WeakSet();  // elements already asked about a closed shadow root
  let walked = false;  // a walk was done for the host in this document
  let warming = false;  // the walk under way is only warming up (see warm): it leaves no trace
  let warmedUp = false;
  let hosts = [];
  let lastIds = [];  // the node ids of each document the last walk returned, and where each id is (when asked)
  let lastPlaces = null;
  let prunedIds = new Set();  // ids of the elements the last walk reduced to what is usable inside them
  let sealed = [];  // the ids of the iframes in view whose document this world cannot enter, met by the last walk
  // Every input that was a password field when tabpilot looked, for as long as the document lives: shared by
  // all walkers of this world (every task, every host) and read by execute_javascript's filter (scripts.py).
  const passwords = globalThis.__tabpilotPasswords || (globalThis.__tabpilotPasswords = new WeakSet());
  const token = Math.random().toString(36).slice(2) + Date.now().toString(36);

  function idOf(node) {
    let id = ids.get(node);
    if (id === undefined) {
      id = nextId++;
      ids.set(node, id);
    }
    return id;
  }

  function walk() {
    walked = walked || !warming;
    hosts = [];
    sealed = [];
    lastPlaces = null;
    prunedIds = new Set();
    styledSelectors = new Map();
    clickableUnder = null;
    const strings = [];
    const stringIds = new Map();
    const str = (value) => {
      let i = stringIds.get(value);
      if (i === undefined) {
        i = strings.length;
        strings.push(value);
        stringIds.set(value, i);
      }
      return i;
    };
    const PRUNED_STYLE = DEFAULT_STYLE.map(str);
    const secretValues = new Set();  // what the secret fields met hold: shown nowhere else either
    const documents = [];
    const reach = [];
    const insets = [];

    function want(element) {
      if (!wanted.has(element)) {
        wanted.add(element);
        remember(element);
      }
    }

    function walkDocument(doc) {
      const win = doc.defaultView;
      const sx = win.scrollX, sy = win.scrollY;
      const vw = win.innerWidth, vh = win.innerHeight;
      const root = doc.documentElement;
      for (const field of doc.querySelectorAll("input[type=password i]")) {
        passwords.add(field);
        secretValues.add(field.value);
      }
      const d = {
        documentURL: str(doc.URL), title: str(doc.title || ""), frameId: str(token),
        scrollOffsetX: sx, scrollOffsetY: sy,
        contentWidth: root ? root.scrollWidth : 0, contentHeight: root ? root.scrollHeight : 0,
        nodes: {
          parentIndex: [], nodeType: [], nodeName: [], nodeValue: [], backendNodeId: [], attributes: [],
          inputValue: { index: [], value: [] }, textValue: { index: [], value: [] }, inputChecked: { index: [] },
          optionSelected: { index: [] }, isClickable: { index: [] }, contentDocumentIndex: { index: [], value: [] },
        },
        layout: { nodeIndex: [], bounds: [], styles: [], paintOrders: [] },
      };
      const n = d.nodes, lay = d.layout;
      const points = {};
      documents.push(d);
      reach.push(points);

      function add(node, parent, type, name, value, counted) {
        const i = n.parentIndex.length;
        n.parentIndex.push(parent);
        n.nodeType.push(type);
        n.nodeName.push(str(name));
        n.nodeValue.push(value === null ? -1 : str(value));
        n.backendNodeId.push(idOf(node));
        const attrs = [];
        // A password field stays one for the host's rules whatever its type became ("show password").
        const secret = type === 1 && isSecret(node);
        if (secret) {
          attrs.push(...(node.localName === "input" ? [str("type"), str("password")] : [str(SECRET_FIELD), str("true")]));
          secretValues.add(secretHeld(node));
        }
        if (type === 1 && counted) {  // only counted, out of view: what makes it interactive is all that matters
          for (const name of RULE_ATTRIBUTES) {
            const value = node.getAttribute(name);
            if (value !== null && !(secret && name === "type")) attrs.push(str(name), str(value));
          }
          if (clickable.has(node)) n.isClickable.index.push(i);
        } else if (type === 1) {
          for (const a of node.attributes) {
            if (secret && (a.name === "value" || a.name === "type")) continue;
            attrs.push(str(a.name), str(a.value));
          }
          // As Chromium's isClickable: click listeners, and a <label> that clicks its control.
          const control = node.localName === "label" ? node.control : null;
          if (clickable.has(node) || (control && !control.disabled && control.localName !== "select")) {
            n.isClickable.index.push(i);
          }
        }
        n.attributes.push(attrs);
        return i;
      }

      function styleOf(cs) {  // in snapshot.STYLES order
        return [str(cs.display), str(cs.visibility), str(cs.opacity), str(cs.cursor), str(cs.overflowX),
          str(cs.overflowY), str(cs.pointerEvents), str(cs.position), str(cs.clip), str(cs.clipPath)];
      }

      function layout(i, r, style) {
        const bounds = [r.left + sx, r.top + sy, r.width, r.height];
        lay.nodeIndex.push(i);
        lay.bounds.push(bounds);
        lay.styles.push(style);
        lay.paintOrders.push(0);
      }

      function values(el, i) {
        const tag = el.localName;
        if (tag === "input") {
          const type = (el.type || "").toLowerCase();
          if (type === "checkbox" || type === "radio") {
            if (el.checked) n.inputChecked.index.push(i);
          } else if (isSecret(el)) {
            n.inputValue.index.push(i);
            n.inputValue.value.push(str(el.value ? "filled" : ""));  // never the value itself
          } else {
            n.inputValue.index.push(i);
            n.inputValue.value.push(str(el.value));
          }
        } else if (tag === "textarea") {
          n.textValue.index.push(i);
          n.textValue.value.push(str(isSecret(el) ? (el.value ? "filled" : "") : el.value));  // never the value itself
        } else if (tag === "option" && el.selected) {
          n.optionSelected.index.push(i);
        }
      }

      // The first of five points of the visible box where the element itself is hit, or null.
      function reachable(el, visible, clip) {
        const [x, y, w, h] = visible;
        const scope = el.getRootNode();
        const hitter = typeof scope.elementFromPoint === "function" ? scope : doc;
        const candidates = [];
        const boxes = el.getClientRects();
        if (boxes.length > 1) {  // text running over several lines: its bounding box is mostly not it
          for (const box of boxes) {
            const part = intersect(clip, [box.left, box.top, box.width, box.height]);
            if (part) candidates.push([part[0] + part[2] / 2, part[1] + part[3] / 2]);
          }
        }
        candidates.push([x + w / 2, y + h / 2], [x + w * 0.2, y + h * 0.2], [x + w * 0.8, y + h * 0.2],
          [x + w * 0.2, y + h * 0.8], [x + w * 0.8, y + h * 0.8]);
        for (const [px, py] of candidates) {
          const hit = hitter.elementFromPoint(px, py);
          if (hit && (hit === el || el.contains(hit))) return [px + sx, py + sy];
        }
        return null;
      }

      // Every element that could be counted, in document order, with its box; the ancestors of those
      // drawn near the viewport are never skipped (a fixed toolbar inside a footer is still on screen).
      const counted = root ? Array.from(doc.querySelectorAll(COUNTED)) : [];
      const keep = new Set();
      for (const c of counted) {
        const cr = c.getBoundingClientRect();
        if (cr.width > 0 && cr.height > 0 && cr.bottom >= -MARGIN && cr.top <= vh + MARGIN) {
          for (let up = c.parentElement; up && !keep.has(up); up = up.parentElement) keep.add(up);
        }
      }

      // Elements that may be usable far from the viewport, in document order (see farCandidates).
      const farList = root ? farCandidates(doc, doc) : [];
      let farSet = new Set(farList);
      let cursor = 0;

      // A subtree far from the viewport: no text, only the elements a person could use in there (the host
      // counts them by the same rules that offer them once in view), each with what those rules read.
      function prunedInside(el, parent, r) {
        if (keep.has(el)) return false;
        let inside = [];
        if (el.getRootNode() === doc) {
          while (cursor < farList.length && !el.contains(farList[cursor])
            && (el.compareDocumentPosition(farList[cursor]) & Node.DOCUMENT_POSITION_PRECEDING)) cursor++;
          while (cursor < farList.length && el.contains(farList[cursor])) inside.push(farList[cursor++]);
          if (inside[0] === el) inside.shift();
        } else {  // inside a shadow root: not in the document's list
          for (const c of el.querySelectorAll(COUNTED)) {
            const cr = c.getBoundingClientRect();
            if (cr.width > 0 && cr.height > 0 && cr.bottom >= -MARGIN && cr.top <= vh + MARGIN) return false;
          }
          inside = farCandidates(el, el.getRootNode());
          for (const c of inside) farSet.add(c);
        }
        const listed = new Set(inside);
        for (const c of clickableInside(el)) {
          if (!listed.has(c)) inside.push(c);
        }
        const i = farElement(el, parent, r);
        prunedIds.add(idOf(el));
        for (const c of inside) {
          if (!inFormula(c, el)) farElement(c, i, null);  // read as text in view, never a control (nor what is in it)
        }
        return true;
      }

      // One element of a far subtree, with the attributes and style the host's rules read. An element its
      // markup makes usable needs no computed style (a box it cannot be seen in is left out); others are
      // usable by their cursor, overflow or listeners, read here (a cursor only where it starts: inside a
      // pointer-cursor element, elements are not offered for their cursor).
      function farElement(el, parent, r) {
        const markup = byMarkup(el);
        const styled = !markup && (farSet.has(el) || clickable.has(el));
        if (!r && !markup && !styled) return null;
        const visible = (!markup && !styled) || (el.checkVisibility({ opacityProperty: true, visibilityProperty: true })
          && !el.closest("[aria-hidden=true]"));
        if (!visible && !r) return null;
        const i = add(el, parent, 1, el.nodeName, null, true);
        let style = PRUNED_STYLE;
        if (!visible) {
          style = PRUNED_STYLE.slice();
          style[1] = str("hidden");
        } else if (styled) {
          const cs = getComputedStyle(el);
          style = styleOf(cs);
          const up = el.parentElement;
          if (cs.cursor === "pointer" && up && getComputedStyle(up).cursor === "pointer") style[3] = str("auto");
        }
        layout(i, r || el.getBoundingClientRect(), style);
        if (el.localName === "iframe") {
          let inner = null;
          try { inner = el.contentDocument; } catch (e) { inner = null; }
          if (inner && inner.documentElement) {
            const innerSet = farSet;
            farSet = new Set(farCandidates(inner, inner));
            for (const c of farSet) farElement(c, i, null);
            farSet = innerSet;
          }
        }
        return i;
      }

      // Children as markup only (tags, attributes, text; no layout), under `at`: what formulas.py reads a formula from.
      function copyChildren(node, at) {
        for (let c = node.firstChild; c; c = c.nextSibling) {
          if (c.nodeType === 3) add(c, at, 3, "#text", c.data);
          else if (c.nodeType === 1) copyChildren(c, add(c, at, 1, c.nodeName, null));
        }
      }

      function visitChildren(node, parent, clip, parentRect, parentStyle) {
        for (let c = node.firstChild; c; c = c.nextSibling) visit(c, parent, clip, parentRect, parentStyle);
      }

      function visit(node, parent, clip, parentRect, parentStyle) {
        const type = node.nodeType;
        if (type === 3) {
          const text = node.data;
          const i = add(node, parent, 3, "#text", text);
          if (!text.trim()) {
            layout(i, parentRect, parentStyle);
          } else if (inside(parentRect, clip)) {
            layout(i, parentRect, parentStyle);
          } else {
            const range = doc.createRange();
            range.selectNodeContents(node);
            const r = range.getBoundingClientRect();
            if (r.width > 0 || r.height > 0) layout(i, r, parentStyle);
          }
          return;
        }
        if (type !== 1) return;
        const el = node;
        const tag = el.nodeName.toUpperCase();
        if (tag === "HEAD" || tag === "SCRIPT" || tag === "STYLE" || tag === "TEMPLATE") return;
        if (el.hasAttribute("data-tabpilot-overlay")) return;  // the extension's own overlay: not the page
        const r = el.getBoundingClientRect();
        if (r.height > 0 && (r.bottom < -MARGIN || r.top > vh + MARGIN) && tag !== "HTML" && tag !== "BODY") {
          if (prunedInside(el, parent, r)) return;
        }
        const cs = getComputedStyle(el);
        const i = add(el, parent, 1, el.nodeName, null);
        const display = cs.display;
        if (display === "none") return;
        const style = styleOf(cs);
        const rendered = display !== "contents";
        if (rendered) layout(i, r, style);
        values(el, i);
        const localTag = el.localName;
        let childClip = clip;
        if (rendered && tag !== "HTML" && tag !== "BODY"
          && (CLIPPING.has(cs.overflowX) || CLIPPING.has(cs.overflowY))) {
          childClip = intersect(clip, [r.left, r.top, r.width, r.height]) || [r.left, r.top, 0, 0];
        }
        // A formula is read as text, never offered (a focusable <mjx-container> is MathJax's menu): not hit-tested.
        const formula = rendered && cs.visibility === "visible" && isFormula(el, localTag);
        if (rendered && r.width > 0 && r.height > 0 && !formula) {
          const candidate = NATIVE.has(tag) || clickable.has(el) || cs.cursor === "pointer"
            || el.hasAttribute("role") || el.hasAttribute("tabindex") || el.hasAttribute("contenteditable")
            || SCROLLING.has(cs.overflowX) || SCROLLING.has(cs.overflowY);
          if (candidate) {
            const visible = intersect(clip, [r.left, r.top, r.width, r.height]);
            if (visible) {
              points[i] = reachable(el, visible, clip);
              want(el);
              nameIcon(el, n.attributes[i], str);
              fieldScroll(el, n.attributes[i], str);
              fieldValidity(el, n.attributes[i], str);
            }
          }
        }
        if (tag === "IFRAME") {
          want(el);
          const px = (name) => parseFloat(cs.getPropertyValue(name)) || 0;
          insets.push([idOf(el), px("border-left-width") + px("padding-left"), px("border-top-width") + px("padding-top"),
            px("border-right-width") + px("padding-right"), px("border-bottom-width") + px("padding-bottom")]);
          let inner = null;
          try { inner = el.contentDocument; } catch (e) { inner = null; }
          if (inner && inner.documentElement && rendered) {
            n.contentDocumentIndex.index.push(i);
            n.contentDocumentIndex.value.push(documents.length);
            walkDocument(inner);
          } else if (!inner && rendered) {
            sealed.push(idOf(el));  // another origin's document: read by the host, in a world of its own or another target
          }
          return;
        }
        if (tag === "SELECT") {
          for (const option of el.querySelectorAll("option")) {
            const k = add(option, i, 1, option.nodeName, null);
            if (option.selected) n.optionSelected.index.push(k);
            add(option, k, 3, "#text", option.text);
          }
          return;
        }
        if (OPAQUE.has(tag)) return;
        if (formula) {
          // The host reads a formula from its label or its MathML (formulas.py), never from the glyphs drawn for it:
          // those (1,121 elements on a page of MathJax samples, 6x page-agent's read) are not walked.
          if (localTag === FORMULAS.math) {
            copyChildren(el, i);
          } else if (!(el.getAttribute("aria-label") || "").trim()) {
            const math = el.querySelector(FORMULAS.math);
            if (math) copyChildren(math, add(math, i, 1, math.nodeName, null));
          }
          return;
        }
        const rect = rendered ? r : parentRect;
        const shown = rendered ? style : parentStyle;
        const secret = localTag === "input" ? null : secretHeld(el);
        if (secret !== null) {  // an editable element holding a secret: its text is said to be there, never what it is
          if (secret) layout(add(el, i, 3, "#text", SECRETS.hidden), rect, shown);
          return;
        }
        let shadow = el.shadowRoot || closedRoots.get(el) || null;
        // A closed shadow root is invisible here: ask the host (once per element) about custom elements and
        // about boxes that are drawn but have no content of their own.
        if (!shadow && !checkedHosts.has(el) && (localTag.includes("-")
          || (SHADOW_HOSTS.has(localTag) && r.width > 0 && r.height > 0 && !el.firstElementChild
            && !el.textContent.trim()))) {
          if (!warming) checkedHosts.add(el);
          hosts.push(el);
        }
        if (shadow) {
          const s = add(shadow, i, 11, "#document-fragment", null);
          visitChildren(shadow, s, childClip, rect, shown);
          return;  // light children are shown where their <slot> stands
        }
        if (tag === "DETAILS" && !el.open) {  // only its <summary> is drawn
          for (let c = el.firstElementChild; c; c = c.nextElementSibling) {
            if (c.localName === "summary") visit(c, i, childClip, rect, shown);
          }
          return;
        }
        if (tag === "SLOT") {
          const assigned = el.assignedNodes();
          if (assigned.length) {
            for (const c of assigned) visit(c, i, childClip, rect, shown);
            return;
          }
        }
        visitChildren(el, i, childClip, rect, shown);
      }

      const di = add(doc, -1, 9, "#document", null);
      if (root) visit(root, di, [0, 0, vw, vh], { left: 0, top: 0, width: vw, height: vh }, PRUNED_STYLE);
    }

    walkDocument(document);
    lastIds = documents.map((d) => d.nodes.backendNodeId);  // not the rest: it is the host's now
    const hidden = hideSecretValues(strings, documents, secretValues);
    // The values hidden go to the host only where another process's document may show one: a page with frames this
    // walker could not enter, or a frame's own (snapshot.hide_shared_secrets); else they never leave the page.
    let framed = sealed.length > 0;
    try { framed = framed || window !== window.top; } catch (e) { framed = true; }
    const shared = framed && hidden.length ? { secrets: hidden } : {};
    // One string crosses to the host far faster than the same data as a protocol object.
    return JSON.stringify({ strings, documents, reach, insets, hosts: hosts.length, sealed, ...shared });
  }

  // Where the last walk put each node id: [document, node index] (the first place: an <option>'s text shares
  // its id).
  function placeOf(node) {
    if (lastPlaces === null) {
      lastPlaces = new Map();
      lastIds.forEach((nodes, k) => nodes.forEach((id, i) => {
        if (!lastPlaces.has(id)) lastPlaces.set(id, [k, i]);
      }));
    }
    const id = ids.get(node);
    return id === undefined ? undefined : lastPlaces.get(id);
  }

  // Whether the last walk reads differently now that `el` is known to listen for clicks, beyond its own
  // isClickable flag. No, for what the host's rules offer whatever it listens for (walk.py: a control by its
  // markup, an element where a pointer cursor starts; <body> never is), for a node that is no element, and
  // for an element the walk did not meet (not drawn: under display:none, in a closed <details>...). Yes, for
  // any other element it met, and one inside a subtree it reduced to what is usable there.
  function readsDifferently(el) {
    if (el.nodeType !== 1) return false;
    if (placeOf(el)) return prunedIds.has(ids.get(el)) || !offeredAnyway(el);
    for (let up = parentOf(el); up; up = parentOf(up)) {
      if (placeOf(up)) return prunedIds.has(ids.get(up));
    }
    return false;
  }

  function offeredAnyway(el) {
    const tag = el.localName;
    if (tag === "button" || tag === "select" || tag === "textarea" || tag === "summary" || tag === "body") return true;
    if (tag === "input") return (el.getAttribute("type") || "").toLowerCase() !== "hidden";
    if (tag === "a" && el.hasAttribute("href")) return true;
    const up = el.assignedSlot || el.parentElement || (el.parentNode && el.parentNode.host) || null;
    return getComputedStyle(el).cursor === "pointer" && !(up && getComputedStyle(up).cursor === "pointer");
  }

  function parentOf(node) {  // across shadow roots and same-origin frames
    if (node.parentNode) return node.parentNode;
    if (node.nodeType === 11) return node.host || null;
    return (node.nodeType === 9 && node.defaultView && node.defaultView.frameElement) || null;
  }


  // An element an action may touch, by id: the host asks for its node only when one does (looking up every
  // listed element at the first look cost one CDP round trip each).
  function remember(element) {
    located.set(idOf(element), new WeakRef(element));
    if (located.size >= sweepAt) {  // a long-lived page replacing its elements: let the gone ones go
      for (const [id, ref] of located) if (!ref.deref()) located.delete(id);
      sweepAt = 2 * located.size + 1000;
    }
  }

  // What may be usable in `container` (a document or an element, in document order): by markup, and by
  // the style rules that give a pointer cursor or a scrolling overflow (a superset: the computed style
  // decides). A style sheet that cannot be read (another origin's, a file:// page's) is left out: taking
  // every element instead made Chromium 156 stop answering on the Python docs pages.
  function farCandidates(container, scope) {
    const styled = styledSelector(scope);
    return Array.from(container.querySelectorAll(styled === null ? FAR : FAR + "," + styled));
  }

  let clickableUnder = null;  // element -> the elements with click listeners inside it, for one walk

  // Asking every pruned subtree about every listening element took ~1 s a read on a list of 2,000 rows
  // that all listen for clicks; one pass over their ancestors costs a few ms.
  function clickableInside(el) {
    if (clickableUnder === null) {
      clickableUnder = new Map();
      for (const c of clickableList) {
        for (let up = c.parentElement; up; up = up.parentElement) {
          const under = clickableUnder.get(up);
          if (under) under.push(c);
          else clickableUnder.set(up, [c]);
        }
      }
    }
    return clickableUnder.get(el) || [];
  }

  let styledSelectors = new Map();  // document or shadow root -> its selector, for one walk (sheets change)

  function styledSelector(scope) {
    if (styledSelectors.has(scope)) return styledSelectors.get(scope);
    const sheets = [...(scope.styleSheets || []), ...(scope.adoptedStyleSheets || [])];
    const selectors = ['[style*="cursor"]', '[style*="overflow"]'];
    const wanted = (value) => value === "pointer" || SCROLLING.has(value) || value.includes("var(");
    const visitRules = (rules) => {
      for (const rule of rules) {
        const st = rule.style;
        if (rule.selectorText !== undefined && st && (wanted(st.cursor) || wanted(st.overflowX)
          || wanted(st.overflowY))) selectors.push(rule.selectorText);
        if (rule.cssRules) visitRules(rule.cssRules);
        if (rule.styleSheet) visitSheet(rule.styleSheet);
      }
    };
    const visitSheet = (sheet) => {
      let rules = null;
      try { rules = sheet.cssRules; } catch (e) { rules = null; }  // another origin's sheet: not readable
      if (rules) visitRules(rules);
    };
    for (const sheet of sheets) visitSheet(sheet);
    let selector = selectors.join(",");
    try {
      document.createDocumentFragment().querySelector(selector);
    } catch (e) {
      selector = null;
    }
    styledSelectors.set(scope, selector);
    return selector;
  }

  // --- names of icon-only controls ---------------------------------------------------------------------
  // What a person (or a screen reader) calls a control that shows only an icon: extension/content/names.js (the
  // takeover record names them with it too), put in here by fast.py as `tabpilotNames`.
  /*NAMES*/
  // Handed to the host as a pseudo-attribute no real one can clash with (names have no spaces): ICON_NAME,
  // or ICON_HINT for the guess. aria-label and title the host reads itself.
  const ICON_NAME = "tabpilot name", ICON_HINT = "tabpilot hint";
  // The fields named otherwise, the inputs a label does not name, ...: rules.py's, put in by fast.py.
  const ICON_RULES = /*ICON_RULES*/ { fields: [], unlabelled: [], fieldIdGeneric: [], boxes: [], labelledRoles: [],
    editable: [] };
  // What makes an element a formula: formulas.CONTAINER_TAGS, CONTAINER_CLASSES (a whole class attribute) and MATH_TAG.
  const FORMULAS = /*FORMULAS*/ { tags: [], classes: [], math: "math" };
  const FORMULA_TAGS = new Set(FORMULAS.tags), FORMULA_CLASSES = new Set(FORMULAS.classes);
  function isFormula(el, tag) {
    return tag === FORMULAS.math || FORMULA_TAGS.has(tag) || FORMULA_CLASSES.has(el.getAttribute("class"));
  }
  // `el` or an element around it, up to `top` (not included), is a formula.
  function inFormula(el, top) {
    for (let e = el; e && e !== top; e = e.parentElement) if (isFormula(e, e.localName)) return true;
    return false;
  }
  // passwords.HIDDEN, ECHOED_MIN_LENGTH and rules.SECRET_HINTS
  const SECRETS = /*SECRETS*/ { hidden: "", echoed: 6, hints: [] };
  const FIELDS = new Set(ICON_RULES.fields);

  function nameIcon(el, attrs, str) {
    if (FIELDS.has(el.localName)) {
      if (TYPED.has(el.localName)) nameField(el, attrs, str);
      return;
    }
    if (labelledControl(el)) {
      const { named, shown } = labelWords(el, labelsOf(el));
      if (named) attrs.push(str(FIELD_LABEL), str(named));
      if (named && shown) return;
    }
    const icon = tabpilotNames.iconName(el);
    if (icon && icon.named) attrs.push(str(ICON_NAME), str(icon.named));  // before an icon font's ligature ("more_vert")
    else if (icon && icon.guessed) attrs.push(str(ICON_HINT), str(icon.guessed));
  }

  // A field named by words drawn for screen readers only (a "visually hidden" <label>, an aria-labelledby
  // element that is hidden; with no label, the visually hidden text aria-describedby points at): they stand in no
  // line of the page, so they name the field there. A label a person sees is read where it stands: its words
  // name the field in what the model is told of its actions only (FIELD_LABEL), as do a hidden label's where the
  // line shows another name (aria-label, a title, a placeholder) and a checkbox's (its line shows its label's text).
  // (rules.SELF_NAMED_INPUTS: inputs named otherwise; rules.FIELD_LABEL.)
  const TYPED = new Set(["input", "select", "textarea"]);
  const UNNAMED_INPUTS = new Set(ICON_RULES.unlabelled), BOXES = new Set(ICON_RULES.boxes);
  const FIELD_ID_GENERIC = new Set(ICON_RULES.fieldIdGeneric);
  const FIELD_LABEL = "tabpilot label";
  function nameField(el, attrs, str) {
    if (el.localName === "input" && UNNAMED_INPUTS.has(el.type)) return;
    const otherName = el.hasAttribute("aria-label") || el.hasAttribute("title") || !!el.getAttribute("placeholder");
    const box = el.localName === "input" && BOXES.has(el.type);
    const labels = labelsOf(el);
    if (labels.length) {
      const { named, shown } = labelWords(el, labels);
      if (named) attrs.push(str(shown || otherName || box ? FIELD_LABEL : ICON_NAME), str(named));
      return;
    }
    if (otherName || box) return;
    const words = [];
    for (const label of idRefs(el, "aria-describedby")) {
      const texts = el.ownerDocument.createTreeWalker(label, NodeFilter.SHOW_TEXT);
      for (let t = texts.nextNode(); t; t = texts.nextNode()) {
        if (!t.data.trim() || el.contains(t)) continue;
        if (drawn(t.parentElement)) return;
        if (!laidOut(t.parentElement)) continue;  // a message shown later ("Required"): no name
        words.push(t.data);
      }
    }
    const named = words.join(" ").split(/\s+/).filter(Boolean).join(" ");
    if (named) {
      attrs.push(str(ICON_NAME), str(named));
    } else if (!el.getAttribute("name")) {  // no label: what its id says, a guess
      const guessed = tabpilotNames.meaningfulWords(el.id).filter((word) => !FIELD_ID_GENERIC.has(word));
      if (guessed.length) attrs.push(str(ICON_HINT), str(guessed.slice(0, tabpilotNames.words).join(" ")));
    }
  }

  function idRefs(el, name) {
    return (el.getAttribute(name) || "").split(/\s+/).filter(Boolean)
      .map((id) => el.ownerDocument.getElementById(id)).filter(Boolean);
  }

  // The elements that label a control, as a screen reader finds them: what aria-labelledby points at; else, with no
  // aria-label, its <label>s: a field's own, a custom control's (a label[for] it has, or the nearest label with no
  // `for` around it: no browser links those to a div, a person reads them so).
  const EDITABLE = new Set(ICON_RULES.editable), LABELLED_ROLES = new Set(ICON_RULES.labelledRoles);
  function labelsOf(el) {
    const byId = idRefs(el, "aria-labelledby");
    if (byId.length || el.hasAttribute("aria-label")) return byId;
    if (TYPED.has(el.localName)) return [...(el.labels || [])];
    const labels = el.id ? [...el.ownerDocument.querySelectorAll("label[for]")].filter((l) => l.htmlFor === el.id) : [];
    let around = el.parentElement;
    while (around && !(around.localName === "label" && !around.hasAttribute("for"))) around = around.parentElement;
    if (around) labels.push(around);
    return labels.sort((a, b) => (a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING ? -1 : 1));
  }

  function labelledControl(el) {
    const role = (el.getAttribute("role") || "").trim().split(/\s+/)[0].toLowerCase();
    const editable = el.getAttribute("contenteditable");
    return LABELLED_ROLES.has(role) || (editable !== null && EDITABLE.has(editable.toLowerCase())
      && el.localName !== "html" && el.localName !== "body");
  }

  // The words of `labels` (not those of the control inside one), and whether a person sees any of them.
  function labelWords(el, labels) {
    const words = [];
    let shown = false;
    for (const label of labels) {
      const texts = el.ownerDocument.createTreeWalker(label, NodeFilter.SHOW_TEXT);
      for (let t = texts.nextNode(); t; t = texts.nextNode()) {
        if (!t.data.trim() || el.contains(t)) continue;
        shown = shown || drawn(t.parentElement);
        words.push(t.data);
      }
    }
    return { named: words.join(" ").split(/\s+/).filter(Boolean).join(" "), shown };
  }

  // Whether `el` has a box and is visible, though perhaps cut to nothing (drawn for screen readers only).
  function laidOut(el) {
    return el.getClientRects().length > 0 && getComputedStyle(el).visibility === "visible";
  }

  // Whether text in `el` is drawn: `el` has a box and is visible, and no box around it is cut to less than MIN_SIZE
  // (the "visually hidden" pattern: 1px, overflow hidden), up to the document's root.
  function drawn(el) {
    if (!el.getClientRects().length || getComputedStyle(el).visibility !== "visible") return false;
    for (let e = el; e; e = e.parentElement) {
      const r = e.getBoundingClientRect();
      if (r.width >= 2 && r.height >= 2) continue;
      const cs = getComputedStyle(e);
      if (CLIPPING.has(cs.overflowX) || CLIPPING.has(cs.overflowY)) return false;
    }
    return true;
  }
  // --- how far a text area scrolls (its text is a value, not boxes the host could measure) ---------------
  const FIELD_SCROLL = "tabpilot scroll";

  function fieldScroll(el, attrs, str) {
    if (el.localName !== "textarea" || el.scrollHeight <= el.clientHeight + 1) return;
    const below = Math.max(0, el.scrollHeight - el.clientHeight - el.scrollTop);
    attrs.push(str(FIELD_SCROLL), str(Math.round(el.scrollTop) + "," + Math.round(below)));
  }

  // --- a field the browser found invalid once the user (or the agent) used it --------------------------
  const FIELD_INVALID = "tabpilot invalid";
  const SECRET_FIELD = "tabpilot secret"; // a text area or an editable element holding a secret (rules.SECRET_FIELD)

  function fieldValidity(el, attrs, str) {
    const tag = el.localName;
    if ((tag !== "input" && tag !== "select" && tag !== "textarea") || !el.matches(":user-invalid")) return;
    // The browser's message can quote the value ("'abc' is missing an '@'"): none for a password field.
    attrs.push(str(FIELD_INVALID), str(isSecret(el) ? "true" : el.validationMessage || "true"));
  }

  // Usable by its markup alone (walk.py's rules.interactive_role decides; this only picks the candidates).
  function byMarkup(el) {
    const tag = el.localName;
    if (tag === "button" || tag === "select" || tag === "textarea" || tag === "summary") return true;
    if (tag === "input") return (el.getAttribute("type") || "").toLowerCase() !== "hidden";
    if (tag === "a" && el.hasAttribute("href")) return true;
    return el.hasAttribute("role") || el.hasAttribute("tabindex") || el.hasAttribute("contenteditable");
  }

  // What a field holds: an input's or a text area's value, an editable element's text; null for any other element.
  function held(el) {
    const tag = el.localName;
    if (tag === "input" || tag === "textarea") return el.value;
    return el.hasAttribute("contenteditable") && el.isContentEditable ? el.textContent : null;
  }

  // A field holding a secret (rules.is_password_input says the same for the host): a password field, one
  // the page hints is for a password, a card's security code or a one-time code, or one it masks as it would
  // a password. Any kind of field: a text area or an editable element the page masks holds one as well as an input.
  function isSecret(el) {
    if (passwords.has(el)) return true;
    const value = held(el);
    if (value === null) return false;
    const hint = (el.getAttribute("autocomplete") || "").toLowerCase();
    const secret = (el.getAttribute("type") || "").toLowerCase() === "password" || (el.type || "") === "password"
      || SECRETS.hints.some((word) => hint.includes(word))
      || (value !== "" && (getComputedStyle(el).webkitTextSecurity || "none") !== "none");
    if (secret) passwords.add(el);
    return secret;
  }

  // The secret a field holds (its value, or an editable element's text), or null when `el` holds none: the one rule
  // for the page text, the secret values hidden in it, and find_text (scripts.py FIND_TEXT).
  function secretHeld(el) {
    return isSecret(el) ? held(el) ?? "" : null;
  }

  // The strings of a reading that show the page's content (text, the title, attribute and field values) with
  // the secret fields' values hidden: a page may show one elsewhere too (a strength meter, another field, its
  // title), and the model reads it nowhere. What the reading is made of stays whole: node and attribute names,
  // a field's type, styles, the document's URL and token (snapshot.hide_password_values does the same on the host).
  function hideSecretValues(strings, documents, values) {
    const hidden = [...values].filter((v) => v.length >= SECRETS.echoed).sort((a, b) => b.length - a.length);
    if (!hidden.length) return hidden;
    const kept = new Set();
    for (const d of documents) {
      kept.add(d.documentURL);
      kept.add(d.frameId);
      for (const name of d.nodes.nodeName) kept.add(name);
      for (const attrs of d.nodes.attributes) {
        for (let i = 0; i < attrs.length; i += 2) {
          kept.add(attrs[i]);
          if (strings[attrs[i]] === "type") kept.add(attrs[i + 1]);
        }
      }
      for (const style of d.layout.styles) for (const value of style) kept.add(value);
    }
    for (let i = 0; i < strings.length; i++) {
      if (kept.has(i)) continue;
      let text = strings[i];
      for (const value of hidden) if (text.includes(value)) text = text.split(value).join(SECRETS.hidden);
      strings[i] = text;
    }
    return hidden;
  }

  function intersect(a, b) {
    const x1 = Math.max(a[0], b[0]), y1 = Math.max(a[1], b[1]);
    const x2 = Math.min(a[0] + a[2], b[0] + b[2]), y2 = Math.min(a[1] + a[3], b[1] + b[3]);
    return x2 > x1 && y2 > y1 ? [x1, y1, x2 - x1, y2 - y1] : null;
  }

  function inside(r, clip) {
    return r.left >= clip[0] && r.top >= clip[1] && r.left + r.width <= clip[0] + clip[2]
      && r.top + r.height <= clip[1] + clip[3];
  }

  // A new document's first walk ran ~3x slower than the next (login page: 3.4 ms, then 1.0; the code is new
  // to this world): one done while the page is idle, before the host asks, takes that off the first look.
  // Only on small documents (up to WARM_LIMIT elements), where it is most of a walk's time: a large one's
  // first walk costs tens of ms, and warming saves a small part of it (shop page, 1.9k: 19.9 ms, then 15.5).
  // It leaves nothing the host asks about after its own walk; what stays is what any walk keeps for the
  // document's life: the ids given, the elements the host may look up, the password fields seen.
  const WARM_LIMIT = 1000;
  function warm() {
    if (walked || warmedUp || document.getElementsByTagName("*").length > WARM_LIMIT) return false;
    warmedUp = true;
    warming = true;
    try {
      walk();
    } finally {
      warming = false;
      hosts = [];
      sealed = [];
      lastIds = [];
      lastPlaces = null;
      prunedIds = new Set();
      styledSelectors = new Map();  // it held the documents and shadow roots walked
      clickableUnder = null;
    }
    return true;
  }

  return {
    walk,
    warm,
    warmedUp() { return warmedUp; },
    idOf,
    isSecret,
    secretHeld,
    token,
    element(id) { const ref = located.get(id); return (ref && ref.deref()) || null; },
    // The custom elements and empty boxes the last walk met that were never asked about before (0: none).
    hosts() { return hosts.length ? hosts : 0; },
    setRoot(root) { closedRoots.set(root.host, root); },
    // the shadow root drawn in place of `element`'s children, closed ones handed over included
    shadowOf(element) { return element.shadowRoot || closedRoots.get(element) || null; },
    markClickable(...elements) {
      for (const e of elements) clickable.add(e);
      clickableList = clickableList.filter((e) => e.isConnected).concat(elements);
    },
    // Marks `elements` as listening for clicks after the last walk: null when that walk needs doing again,
    // else where in it each of them is ([document, node index]), to flag as clickable there.
    markAfterWalk(...elements) {
      this.markClickable(...elements);
      if (elements.some(readsDifferently)) return null;
      return elements.map(placeOf).filter(Boolean);
    },
  };
})()
