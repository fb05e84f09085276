"""Page-side functions the actions call on a node (`this` = the node, via Runtime.callFunctionOn)."""

import json

from .dom.rules import SECRET_HINTS

CLICK_KIND = """function() {
  if (this.localName === 'input' && this.type === 'file') return 'file';
  if (this.localName === 'select') return 'select';
  if (this.localName === 'option' && this.closest('select')) return 'option';
  return 'other';
}"""

# After a click: the checked / pressed / expanded state of a toggle (or of a label's control), else ''.
TOGGLE_STATE = """function() {
  if (!this.isConnected) return '';
  const e = this.localName === 'label' && this.control ? this.control : this;
  if (e.localName === 'input' && (e.type === 'checkbox' || e.type === 'radio')) {
    return e.checked ? 'checked' : 'unchecked';
  }
  const checked = e.getAttribute('aria-checked');
  if (checked === 'true' || checked === 'false') return checked === 'true' ? 'checked' : 'unchecked';
  const pressed = e.getAttribute('aria-pressed');
  if (pressed === 'true' || pressed === 'false') return pressed === 'true' ? 'pressed' : 'not pressed';
  const expanded = e.getAttribute('aria-expanded');
  if (expanded === 'true' || expanded === 'false') return expanded === 'true' ? 'expanded' : 'collapsed';
  return '';
}"""

# The node to type into: the element itself, the control of a <label>, or the one field inside a wrapper.
# Returns a string saying why not when there is none.
FIND_TEXT_FIELD = """function() {
  const NOT_TEXT = {checkbox: 'it is a checkbox; click it instead', radio: 'it is a radio button; click it instead',
    file: 'it is a file input; use upload_file', submit: 'it is a button', button: 'it is a button',
    reset: 'it is a button', image: 'it is a button', hidden: 'it is hidden'};
  const isField = (e) => e.localName === 'textarea' || (e.localName === 'input' && !(e.type in NOT_TEXT))
    || e.isContentEditable;
  let e = this.nodeType === 1 ? this : this.parentElement;
  if (!e) return 'it is not an element';
  if (e.localName === 'label' && e.control) e = e.control;
  if (e.localName === 'input' && e.type in NOT_TEXT) return NOT_TEXT[e.type];
  if (!isField(e)) {
    const scope = e.shadowRoot || e;
    const inner = [...scope.querySelectorAll('input, textarea, [contenteditable]')].filter(isField);
    if (inner.length !== 1) return 'it is not a text field (input, textarea or editable area)';
    e = inner[0];
  }
  while (e.isContentEditable && e.parentElement && e.parentElement.isContentEditable) e = e.parentElement;
  if (e.disabled) return 'it is disabled';
  if (e.readOnly) return 'it is read-only';
  return e;
}"""

# tag and attrs let the host decide with its one rule (dom/rules.py: is_password_input) whether it is a password.
TEXT_FIELD_INFO = """function() {
  const SET = ['date', 'datetime-local', 'month', 'week', 'time', 'range', 'color'];
  const isInput = this.localName === 'input';
  return {mode: isInput && SET.includes(this.type) ? 'set' : 'type', tag: this.localName,
          attrs: Object.fromEntries([...this.attributes].map((a) => [a.name, a.value])),
          multiline: this.localName === 'textarea' || this.isContentEditable,
          focused: this.getRootNode().activeElement === this};
}"""

# Returns whether there was anything to select (then Delete clears it).
SELECT_ALL_CONTENT = """function() {
  if (this.localName === 'input' || this.localName === 'textarea') {
    try { this.select(); } catch (e) {}
    try { this.setSelectionRange(0, this.value.length); } catch (e) {}
    return this.value !== '';
  }
  const range = this.ownerDocument.createRange();
  range.selectNodeContents(this);
  const selection = this.ownerDocument.defaultView.getSelection();
  selection.removeAllRanges();
  selection.addRange(range);
  return this.innerText.replace(/\\n$/, '') !== '';
}"""

# input_text's first look in one round trip: {stale: true} when the node left its document, {problem} when
# it is no text field, {elsewhere: true} when the field is another node (a label's control, the one field
# in a wrapper: the caller fetches it with FIND_TEXT_FIELD), else TEXT_FIELD_INFO's answer; a field that
# already has the focus gets its content selected too (`hadContent`: SELECT_ALL_CONTENT's answer), as
# typing into it would do next. Each round trip saved is ~3 ms over the extension relay.
TEXT_FIELD_HERE = f"""function() {{
  if (!this.isConnected) return {{stale: true}};
  const field = ({FIND_TEXT_FIELD}).call(this);
  if (typeof field === 'string') return {{problem: field}};
  if (field !== this) return {{elsewhere: true}};
  const info = ({TEXT_FIELD_INFO}).call(this);
  if (info.mode === 'type' && info.focused) info.hadContent = ({SELECT_ALL_CONTENT}).call(this);
  return info;
}}"""

# Pickers (date, colour, range) have no text to type: set the value the way the page's own code would see it.
SET_VALUE = """function(text) {
  Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set.call(this, text);
  this.dispatchEvent(new Event('input', {bubbles: true, composed: true}));
  this.dispatchEvent(new Event('change', {bubbles: true}));
  return this.value;
}"""

HAS_FOCUS = "function() { return this.getRootNode().activeElement === this; }"

DOCUMENT_HAS_FOCUS = "function() { return this.ownerDocument.hasFocus(); }"

READ_VALUE = """function() {
  if (this.localName === 'input' || this.localName === 'textarea') return this.value;
  return this.innerText.replace(/\\n$/, '');
}"""

CHOICE_KIND = """function() {
  if (this.localName === 'select') return 'native';
  const role = (this.getAttribute('role') || '').toLowerCase();
  if (role === 'option') return 'option';
  if (role === 'listbox') return 'listbox';
  const popup = (this.getAttribute('aria-haspopup') || '').toLowerCase();
  if (role === 'combobox' || popup === 'listbox') return 'combobox';
  return 'none';
}"""

SELECT_NATIVE_OPTION = """function(text) {
  const norm = (s) => (s || '').replace(/\\s+/g, ' ').trim();
  const want = norm(text);
  const options = [...this.options];
  const names = options.map((o) => norm(o.text));
  let i = names.indexOf(want);
  if (i < 0) i = names.findIndex((n) => n.toLowerCase() === want.toLowerCase());
  if (i < 0) i = options.findIndex((o) => o.value === text);
  if (i < 0) {
    const partial = names.flatMap((n, j) => n.toLowerCase().includes(want.toLowerCase()) ? [j] : []);
    if (partial.length === 1) i = partial[0];
  }
  if (i < 0) {
    const shown = names.slice(0, 30).map((n) => `'${n}'`).join(', ');
    return {ok: false, why: `it has no such option; its options are: ${shown}${names.length > 30 ? ', …' : ''}`};
  }
  if (options[i].disabled) return {ok: false, why: `the option '${names[i]}' is disabled`};
  if (this.disabled) return {ok: false, why: 'the dropdown is disabled'};
  if (this.multiple) options[i].selected = true; else this.selectedIndex = i;
  this.dispatchEvent(new Event('input', {bubbles: true, composed: true}));
  this.dispatchEvent(new Event('change', {bubbles: true}));
  return {ok: true, chosen: names[i]};
}"""

IS_EXPANDED = "function() { return this.getAttribute('aria-expanded') === 'true'; }"

IS_TEXT_FIELD = """function() {
  return this.localName === 'input' || this.localName === 'textarea' || this.isContentEditable;
}"""

# Waits up to timeoutMs for a visible option with that text in the element's listbox; returns the option
# node, or a string saying what the list offers instead.
FIND_ARIA_OPTION = """async function(text, timeoutMs) {
  const clean = (s) => (s || '').replace(/\\s+/g, ' ').trim();
  const want = clean(text).toLowerCase();
  const doc = this.ownerDocument;
  const root = this.getRootNode();
  const byId = (id) => (root.getElementById && root.getElementById(id)) || doc.getElementById(id);
  const visible = (e) => {
    const r = e.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && getComputedStyle(e).visibility !== 'hidden';
  };
  const listboxes = () => {
    if (this.getAttribute('role') === 'listbox') return [this];
    const ids = [this.getAttribute('aria-controls'), this.getAttribute('aria-owns')].join(' ').split(/\\s+/);
    const found = ids.filter(Boolean).map(byId).filter(Boolean);
    found.push(...this.querySelectorAll('[role=listbox]'));
    if (found.length) return found;
    return [...doc.querySelectorAll('[role=listbox]')].filter(visible);
  };
  const options = () => listboxes().flatMap(
    (box) => box.getAttribute('role') === 'option' ? [box] : [...box.querySelectorAll('[role=option]')]
  ).filter(visible);
  const deadline = Date.now() + timeoutMs;
  let names = [];
  for (;;) {
    const found = options();
    names = found.map((o) => clean(o.innerText || o.textContent));
    let i = names.findIndex((n) => n.toLowerCase() === want);
    if (i < 0) {
      const partial = names.flatMap((n, j) => n.toLowerCase().includes(want) ? [j] : []);
      if (partial.length === 1) i = partial[0];
    }
    if (i >= 0) {
      if (found[i].getAttribute('aria-disabled') === 'true') return `the option '${names[i]}' is disabled`;
      return found[i];
    }
    if (Date.now() > deadline) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  if (!names.length) return 'no list of options appeared';
  const shown = names.slice(0, 30).map((n) => `'${n}'`).join(', ');
  return `it has no such option; its options are: ${shown}${names.length > 30 ? ', …' : ''}`;
}"""

VISIBLE_TEXT = "function() { return (this.innerText || this.textContent || '').replace(/\\s+/g, ' ').trim(); }"

SHOWN_CHOICE = """function() {
  if (this.localName === 'input' || this.localName === 'textarea') return this.value;
  return (this.innerText || this.textContent || '').replace(/\\s+/g, ' ').trim();
}"""

# scroll(el, axis, sign, pixels, pages): scrolls el's nearest scrollable container (el null: the page, or the
# page's main scrolling area when the document itself does not scroll). Reports what moved and what is left.
SCROLL = """function(el, axis, sign, pixels, pages) {
  const y = axis === 'y';
  const doc = el ? el.ownerDocument : document;
  const win = doc.defaultView;
  const page = doc.scrollingElement || doc.documentElement;
  const room = (e) => y ? e.scrollHeight - e.clientHeight : e.scrollWidth - e.clientWidth;
  const canScroll = (e) => {
    if (room(e) < 1) return false;
    if (e === page) return true;
    const overflow = getComputedStyle(e)[y ? 'overflowY' : 'overflowX'];
    return overflow === 'auto' || overflow === 'scroll' || overflow === 'overlay';
  };
  const label = (e) => {
    let s = e.localName;
    if (e.id) s += '#' + e.id;
    else if (e.classList.length) s += '.' + [...e.classList].slice(0, 2).join('.');
    return s;
  };
  let scroller = null;
  if (el) {
    for (let e = el; e; e = e.parentElement || (e.getRootNode().host || null)) {
      if (e.nodeType === 1 && canScroll(e)) { scroller = e; break; }
    }
  } else if (canScroll(page)) {
    scroller = page;
  } else {
    let bestArea = 0;
    for (const e of doc.querySelectorAll('*')) {
      if (!canScroll(e)) continue;
      const r = e.getBoundingClientRect();
      const w = Math.min(r.right, win.innerWidth) - Math.max(r.left, 0);
      const h = Math.min(r.bottom, win.innerHeight) - Math.max(r.top, 0);
      if (w > 0 && h > 0 && w * h > bestArea) { scroller = e; bestArea = w * h; }
    }
  }
  if (!scroller) return {scroller: null};
  const isPage = scroller === page;
  const viewport = y ? scroller.clientHeight : scroller.clientWidth;  // for the page: the viewport without scrollbars
  const amount = sign * (pixels != null ? pixels : Math.max(1, Math.round(pages * viewport)));
  const position = () => y ? scroller.scrollTop : scroller.scrollLeft;
  const before = position();
  scroller.scrollBy({[y ? 'top' : 'left']: amount, behavior: 'instant'});
  const after = position();
  const remaining = sign > 0 ? room(scroller) - after : after;
  const name = scroller === el || (isPage && !el) ? 'self' : isPage ? 'the page' : label(scroller);
  return {scroller: name, moved: after - before, remaining: Math.max(0, remaining)};
}"""

# The places in the page's text a person sees that show `wanted` (case and spacing aside), in reading order,
# open shadow roots included: how many, and the `nth` (1-based) brought to the middle of the viewport. Words split
# over elements (<code><span>x</span> <span>or</span></code>) match as they read.
# find_text in one document, called on tabpilot's walker (`this`, which knows the closed shadow roots handed to it).
# The text a person sees is read in the order it is drawn: a shadow root where its host stands, a <slot>'s nodes
# where the slot stands. The document's frames are searched each in its own world: `owners` are <iframe> elements;
# `frames[i]` is how many places come before owners[i] (-1: not met here, -2: hidden), `met[i]` the order they were
# met in. No words run on across a frame. `nth` 0 only counts; else the nth place is scrolled to the centre.
FIND_TEXT = """function(wanted, nth, echoed, hidden, ...owners) {
  const norm = (s) => s.replace(/\\s+/g, ' ').toLowerCase();
  const needle = norm(wanted).trim();
  // the secret fields' values of `echoed` (passwords.ECHOED_MIN_LENGTH) characters or more: this document's, and
  // `hidden`, those of the page's other documents (returned as `secrets` by their searches)
  const secrets = new Set(hidden.map(norm));
  const SKIP = new Set(['script', 'style', 'noscript', 'template', 'textarea', 'head']);
  const VISIBLE = {visibilityProperty: true, opacityProperty: true};
  const nodes = [], starts = [], blocks = new Map();
  const blockOf = (e) => {  // the nearest element around that is not inline: its words run together
    if (!blocks.has(e)) {
      const up = e.parentElement;
      const display = e.ownerDocument.defaultView.getComputedStyle(e).display;
      blocks.set(e, (display !== 'inline' && display !== 'contents') || !up ? e : blockOf(up));
    }
    return blocks.get(e);
  };
  const ownerAt = new Map(owners.map((o, i) => [o, i]));
  const frameAt = owners.map(() => -1), met = owners.map(() => -1);
  // the overlay's panel is a frame of the page: a task's own words (its text, the last goal) counted as places the
  // page showed, and words only the overlay said were "found" (a new user's trial). -2: left out, as a hidden frame.
  const inOverlay = (e) => {
    for (let n = e; n; n = n.parentNode || n.host) {
      if (n.nodeType === 1 && n.hasAttribute('data-tabpilot-overlay')) return true;
    }
    return false;
  };
  owners.forEach((o, i) => { if (inOverlay(o)) frameAt[i] = -2; });
  let text = '', last = null, seen = 0;
  const holder = (n) => n.parentElement || (n.parentNode && n.parentNode.host) || null;  // a shadow root's own text
  const stack = [document.documentElement];
  while (stack.length) {
    const n = stack.pop();
    if (n.nodeType === 3) {
      const parent = holder(n);
      if (!parent || !parent.checkVisibility(VISIBLE)) continue;
      const piece = norm(n.data);
      if (!piece) continue;
      // Words in two blocks or cells are apart ("Row 271" "813 EUR" is not "row 2718"); "<b>un</b>done" is one word.
      const block = blockOf(parent);
      if (text && block !== last && !text.endsWith(' ') && !piece.startsWith(' ')) text += ' ';
      nodes.push(n); starts.push(text.length); text += piece;
      last = block;
      continue;
    }
    if (n.nodeType !== 1) continue;
    const tag = n.localName;
    const secret = this.secretHeld(n);  // any kind of field (walker.js isSecret): its text is never searched either
    if (secret !== null) {
      if (secret.length >= echoed) secrets.add(norm(secret));
      continue;
    }
    if (SKIP.has(tag) || n.hasAttribute('data-tabpilot-overlay')) continue;
    if (ownerAt.has(n)) {
      const i = ownerAt.get(n);
      frameAt[i] = n.checkVisibility(VISIBLE) ? text.length : -2;
      met[i] = seen++;
      text += '\\n';  // never in what is looked for: no place runs across the frame
      last = null;
      continue;
    }
    // a frame not named in `owners` is not searched here; what its element holds shows only without frames
    if (tag === 'iframe' || tag === 'frame') continue;
    let inner = [];
    if (tag === 'slot') inner = n.assignedNodes({flatten: true});
    if (!inner.length) {
      const root = this.shadowOf(n);
      inner = (root || n).childNodes;
    }
    for (let i = inner.length - 1; i >= 0; i--) stack.push(inner[i]);
  }
  // The page text the model reads shows a secret field's value nowhere (walker.js hideSecretValues): a search that
  // found one where the page shows it (a strength meter) told the model the password a letter at a time. Each is
  // blanked with as many line breaks, never in what is looked for: every place and frame stays where it stood.
  for (const value of secrets) if (value.trim()) text = text.split(value).join('\\n'.repeat(value.length));
  const found = [];
  for (let at = text.indexOf(needle); at >= 0 && needle; at = text.indexOf(needle, at + needle.length)) found.push(at);
  const frames = frameAt.map((at) => at < 0 ? at : found.filter((place) => place < at).length);
  if (nth < 1 || nth > found.length) return {count: found.length, frames, met, secrets: [...secrets]};
  const at = found[nth - 1];
  let i = starts.length - 1;
  while (i > 0 && starts[i] > at) i--;
  holder(nodes[i]).scrollIntoView({block: 'center', inline: 'nearest', behavior: 'instant'});
  return {count: found.length, frames, met, shown: nth};
}"""

SCROLL_WRAPPED = "function(axis, sign, pixels, pages) { return (" + SCROLL + ")(this, axis, sign, pixels, pages); }"

FIND_FILE_INPUT = """function() {
  const isFile = (e) => e && e.localName === 'input' && e.type === 'file';
  if (isFile(this)) return this;
  if (this.localName === 'label' && isFile(this.control)) return this.control;
  const inner = (this.shadowRoot || this).querySelectorAll('input[type=file]');
  if (inner.length === 1) return inner[0];
  // a styled button next to a hidden file input
  let e = this.parentElement;
  for (let i = 0; i < 3 && e; i++, e = e.parentElement) {
    const found = e.querySelectorAll('input[type=file]');
    if (found.length === 1) return found[0];
    if (found.length > 1) break;
  }
  return 'none';
}"""

# Every input that holds a value, with its attributes, in the document, its open shadow roots and its
# same-origin frames (a script can read all of those), so the host can pick out the passwords with its one
# rule (dom/rules.py: is_password_input). Run in tabpilot's isolated world: `was_password` says the walker
# saw the field as a password field earlier (dom/walker.js keeps them), whatever its type is now; a text area or
# an editable element comes only when the walker found it holds a secret (its isSecret).
INPUT_VALUES = """(() => {
  const found = [];
  const passwords = globalThis.__tabpilotPasswords || (globalThis.__tabpilotPasswords = new WeakSet());
  const attributes = (e) => Object.fromEntries([...e.attributes].map((a) => [a.name, a.value]));
  const visit = (root) => {
    for (const e of root.querySelectorAll('*')) {
      if (e.localName === 'input' && e.type === 'password') passwords.add(e);
      if (e.localName === 'input' && e.value) {
        found.push({attrs: attributes(e), value: e.value, was_password: passwords.has(e)});
      } else if (passwords.has(e)) {  // a text area or an editable element the walker found holds a secret
        const value = e.localName === 'textarea' ? e.value : e.textContent;
        if (value) found.push({attrs: attributes(e), value, was_password: true});
      }
      if (e.shadowRoot) visit(e.shadowRoot);
      if (e.localName === 'iframe' || e.localName === 'frame') {
        let doc = null;
        try { doc = e.contentDocument; } catch (err) {}  // another site's frame: the script cannot read it
        if (doc) visit(doc);
      }
    }
  };
  visit(document);
  return found;
})()"""

# The whole of what an element shows or a field holds, for read_text; never a password field's value.
READ_TEXT = """function() {
  const passwords = globalThis.__tabpilotPasswords;
  const hint = (e) => (e.getAttribute('autocomplete') || '').toLowerCase();
  const secret = (e) => e.localName === 'input' && (e.type === 'password'
    || HINTS.some((word) => hint(e).includes(word)) || (passwords && passwords.has(e)));
  if (secret(this)) return {secret: true};
  if (this.localName === 'input' || this.localName === 'textarea') return {text: this.value};
  if (this.localName === 'select') return {text: Array.from(this.selectedOptions, (o) => o.text).join(', ')};
  return {text: this.innerText || this.textContent || ''};
}""".replace("HINTS", json.dumps(SECRET_HINTS))
