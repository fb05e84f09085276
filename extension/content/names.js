// What a person (or a screen reader) calls a control that shows only an icon: ONE copy of these rules, for both
// readers of the page. The agent's page state (host/tabpilot/browser/dom/walker.js: host/tabpilot/browser/dom/fast.py
// puts this file into it) and the takeover record (content/capture.js: this file is the content script before it, and
// host/tabpilot/browser/capture.py injects it with it) name an icon button alike, so the model reads of the person's
// click on button "Delete" what it reads on the page. The rules' words (RULES, JSON between its markers) are read by
// the host too (rules.py), for the whole-page snapshot reader (dom/icons.py).
//
// In this order: the elements aria-labelledby points at, an image's alt, an SVG's aria-label, <title> or <desc>, the
// <title> of the sprite symbol an SVG <use> draws, an image's title, a tooltip attribute, the words CSS generated
// content (::before, ::after) draws; failing those, a guess from the meaningful words of the sprite symbol's id, the
// icon an icon library's attribute names (data-icon), the image's file name and the class names of the element and
// its only children (icon-reply, fa-trash, btn-send). What is inside another control within it (a card's "Save"
// heart) is that control's, not the element's. aria-label and title name a control before all these (each reader
// reads them itself).
var tabpilotNames = ((ICON_RULES) => {
  "use strict";
  const TOOLTIPS = ICON_RULES.tooltips;
  const GENERIC = new Set(ICON_RULES.generic);
  const INNER_TAGS = new Set(ICON_RULES.innerTags), INNER_ROLES = new Set(ICON_RULES.innerRoles);

  // How `el` is named if it shows no words: {named} (the name the page gives it), {guessed} (words its markup
  // suggests: may be ""; `inner`: the words it shows are only those of the controls within it), or null: it has an
  // aria-label or a title, words of its own, or only an icon font's ligature ("more_vert"), which are its name.
  function iconName(el) {
    if (el.hasAttribute("aria-label") || el.hasAttribute("title")) return null;
    const text = ownText(el);
    if (text === WORDS) return null;
    const parts = ownParts(el);
    const named = givenIconName(el, parts) || (text === NONE ? generatedWords(el, parts) : "");
    if (named) return { named };
    if (text === LIGATURE) return null;
    // Words only inside the controls within it (a card's "Save" button): its class names are no guess then
    // (<li class="menu-item"><a>Home</a>), only what its own picture's file name says.
    return { guessed: iconWords(el, parts, text === NONE), inner: text === INNER_WORDS };
  }

  // A control inside another (rules.is_inner_control): by tag (an <a> only with an href), or its role's first word.
  function innerControl(e) {
    const tag = e.localName;
    if (INNER_TAGS.has(tag)) return tag !== "a" || e.hasAttribute("href");
    const role = (e.getAttribute("role") || "").trim().split(/\s+/)[0].toLowerCase();
    return role !== "" && INNER_ROLES.has(role);
  }

  // The elements inside `el` that are its own, in document order: not inside another control within it
  // (`inner`: there is such a control).
  function ownParts(el) {
    const list = [];
    let inner = false;
    const walker = el.ownerDocument.createTreeWalker(el, NodeFilter.SHOW_ELEMENT, (e) => {
      if (!innerControl(e)) return NodeFilter.FILTER_ACCEPT;
      inner = true;
      return NodeFilter.FILTER_REJECT;
    });
    for (let e = walker.nextNode(); e; e = walker.nextNode()) list.push(e);
    return { list, inner };
  }


  const NONE = 0, LIGATURE = 1, WORDS = 2, INNER_WORDS = 3;
  const LIGATURE_FONT = new RegExp("(^|\\s)(" + ICON_RULES.fonts.join("|") + ")");

  // What text a person reads in the element: none, only an icon font's ligatures (drawn as icons), words, or
  // words only inside the controls within it (INNER_WORDS). An SVG's <title> and <desc> are not drawn, nor is
  // text under display:none or visibility:hidden (a label shown at other widths).
  function ownText(el) {
    let found = NONE, inner = false;
    const texts = el.ownerDocument.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let t = texts.nextNode(); t; t = texts.nextNode()) {
      const up = t.parentElement;
      if (!t.data.trim() || up.closest("title, desc, style, script")) continue;
      if (up !== el && insideInner(up, el)) {
        if (shownText(t, up)) inner = true;
        continue;
      }
      if (up !== el && !shownText(t, up)) continue;  // (the element itself is drawn: it is being offered)
      if (!LIGATURE_FONT.test(up.className)) return WORDS;
      found = LIGATURE;
    }
    return inner ? INNER_WORDS : found;
  }

  // A text node is drawn (checkVisibility says no for a display:contents parent: its boxes decide then).
  function shownText(t, up) {
    if (up.checkVisibility({ visibilityProperty: true })) return true;
    if (getComputedStyle(up).visibility !== "visible") return false;
    const range = t.ownerDocument.createRange();
    range.selectNodeContents(t);
    return range.getClientRects().length > 0;
  }

  function insideInner(e, el) {
    for (; e && e !== el; e = e.parentElement) if (innerControl(e)) return true;
    return false;
  }

  function givenIconName(el, parts) {
    const doc = el.ownerDocument;
    const labelledBy = (el.getAttribute("aria-labelledby") || "").split(/\s+/).filter(Boolean)
      .map((id) => doc.getElementById(id)).filter(Boolean)
      .map((label) => label.getAttribute("aria-label") || label.textContent).join(" ").trim();
    if (labelledBy) return labelledBy;
    const own = parts.list;
    const first = (test) => own.find(test) || null;
    const image = el.matches("img[alt], input[type=image i][alt]") ? el
      : first((e) => e.localName === "img" && e.hasAttribute("alt"));
    if (image && image.getAttribute("alt").trim()) return image.getAttribute("alt").trim();
    const svgLabel = first((e) => e.localName === "svg" && e.hasAttribute("aria-label"));
    if (svgLabel && svgLabel.getAttribute("aria-label").trim()) return svgLabel.getAttribute("aria-label").trim();
    const svgTitle = first((e) => e.localName === "title" && inSvg(e, el));
    if (svgTitle && svgTitle.textContent.trim()) return svgTitle.textContent.trim();
    const svgDesc = first((e) => e.localName === "desc" && inSvg(e, el));
    if (svgDesc && svgDesc.textContent.trim()) return svgDesc.textContent.trim();
    const symbol = spriteSymbol(first((e) => e.localName === "use" && inSvg(e, el)));
    const symbolTitle = symbol && [...symbol.children].find((c) => c.localName === "title");
    if (symbolTitle && symbolTitle.textContent.trim() && !IDENTIFIER.test(symbolTitle.textContent.trim())) {
      return symbolTitle.textContent.trim();
    }
    const titled = first((e) => e.localName === "img" && e.hasAttribute("title"));
    if (titled && titled.getAttribute("title").trim()) return titled.getAttribute("title").trim();
    for (let part = el; part && (part === el || !innerControl(part)); part = onlyChild(part)) {
      for (const name of TOOLTIPS) {
        const value = (part.getAttribute(name) || "").trim();
        if (value) return value;
      }
      if (part !== el && (part.getAttribute("aria-label") || part.getAttribute("title") || "").trim()) {
        return (part.getAttribute("aria-label") || part.getAttribute("title")).trim();
      }
    }
    return "";
  }

  // A file's or an icon's name rather than words ("arrow-left", "more_vert"): sprite tools write the symbol's
  // file name as its <title>. rules.IDENTIFIER
  const IDENTIFIER = /^[a-z0-9]+([-_][a-z0-9]+)+$/;

  function inSvg(e, el) {
    const svg = e.parentElement && e.parentElement.closest("svg");
    return !!svg && (svg === el || el.contains(svg));
  }

  function useHref(use) {
    return use ? use.getAttribute("href") || use.getAttribute("xlink:href") || "" : "";
  }

  // The <symbol> (or <svg>) of this document an SVG <use href="#id"> draws.
  function spriteSymbol(use) {
    const href = useHref(use);
    if (!href.startsWith("#")) return null;
    const symbol = use.ownerDocument.getElementById(href.slice(1));
    return symbol && (symbol.localName === "symbol" || symbol.localName === "svg") ? symbol : null;
  }

  // Real words that CSS generated content (::before, ::after) draws on the element and its own parts shown: a
  // label a style sheet writes ("Read more"), not an icon font's glyph (a private-use character).
  // Read on the element and its first GENERATED_PARTS own parts of HTML (an SVG's elements draw none): an icon's
  // <span> or <i>, not every element of a large wrapper (each pseudo-element's style costs a style resolution).
  const HTML = "http://www.w3.org/1999/xhtml", GENERATED_PARTS = 3;
  function generatedWords(el, parts) {
    const words = [];
    const html = parts.list.filter((e) => e.namespaceURI === HTML).slice(0, GENERATED_PARTS);
    for (const e of [el, ...html]) {
      if (e !== el && !e.checkVisibility({ visibilityProperty: true })) continue;
      for (const which of ["::before", "::after"]) {
        const cs = getComputedStyle(e, which);
        if (cs.display === "none" || cs.visibility !== "visible") continue;
        const content = cs.content;
        if (!content || content === "none" || content === "normal") continue;
        let drawnText = "";  // the strings and attr() of one content value run on, as CSS draws them
        for (const m of content.matchAll(/"((?:[^"\\]|\\.)*)"|attr\(\s*([^\s)]+)\s*\)/g)) {
          drawnText += m[1] !== undefined ? m[1].replace(/\\(.)/g, "$1") : (e.getAttribute(m[2]) || "");
        }
        words.push(drawnText);
      }
    }
    const text = words.join(" ").replace(/[\uE000-\uF8FF]/g, " ").split(/\s+/).filter(Boolean).join(" ");
    return /\p{L}{2,}/u.test(text) && !IDENTIFIER.test(text) ? text : "";
  }

  function onlyChild(el) {
    return el.children.length === 1 ? el.firstElementChild : null;
  }

  // A guess from the meaningful words of the sprite symbol an SVG draws (<use href="#icon-search">), the icon an
  // icon library's attribute names (<i data-feather="x">), the file name of the image it shows (factorio-logo.png)
  // and the class names of the element and its only children ("btn btn-send" → "send"; "fa fa-trash-can" →
  // "trash can"). At most three words.
  function iconWords(el, parts, classes) {
    const words = [];
    const add = (found) => {
      for (const word of found) if (!words.includes(word)) words.push(word);
    };
    const use = parts.list.find((e) => e.localName === "use" && inSvg(e, el));
    const href = useHref(use);
    if (href.includes("#")) add(meaningfulWords(href.slice(href.indexOf("#") + 1)));
    const dataIcon = classes ? [el, ...parts.list].map(dataIconName).find(Boolean) : "";
    if (dataIcon) add(meaningfulWords(dataIcon));
    const image = el.localName === "img" ? el : parts.list.find((e) => e.localName === "img");
    if (image) add(fileWords(image.getAttribute("src") || ""));
    for (let part = classes ? el : null; part && (part === el || !innerControl(part)); part = onlyChild(part)) {
      for (const name of part.classList) add(meaningfulWords(name));
    }
    return words.slice(0, ICON_RULES.words).join(" ");
  }

  // The icon an icon library's attribute names (rules.ICON_DATA_ATTRIBUTES): <i data-feather="x">.
  function dataIconName(e) {
    for (const name of ICON_RULES.data) {
      const value = (e.getAttribute(name) || "").trim();
      if (value) return value;
    }
    return "";
  }

  // rules.meaningful_words: "btnSendMail" → send, mail; "octicon-x" → close; parts with digits, short or generic
  // ones left out.
  const SYNONYMS = new Map(Object.entries(ICON_RULES.synonyms));
  function meaningfulWords(name) {
    const words = name.replace(/([a-z])([A-Z])/g, "$1-$2").toLowerCase()
      .replace(/(?<![a-z0-9])x[-_]mark(?![a-z0-9])/g, "xmark").split(/[-_.\s]+/)
      .filter((word) => SYNONYMS.has(word) || (word.length > 2 && /^[a-z]+$/.test(word) && !GENERIC.has(word)));
    if (words.length === 1 && SYNONYMS.has(words[0])) return [SYNONYMS.get(words[0])];
    return words.filter((word) => word.length > 2);
  }

  // The meaningful words of an image's file name (rules.file_words), none for a data: URL: "factorio-logo.png" →
  // factorio.
  function fileWords(src) {
    if (src.trim().toLowerCase().startsWith("data:")) return [];
    const file = src.split("#")[0].split("?")[0].replace(/\/+$/, "").split("/").pop();
    return meaningfulWords(file.includes(".") ? file.slice(0, file.lastIndexOf(".")) : file);
  }

  return { iconName, meaningfulWords, fileWords, words: ICON_RULES.words };
})(
  /*RULES*/
  {
    // tooltip attributes, in the order they are read
    "tooltips": ["data-tooltip", "data-title", "data-original-title", "data-bs-original-title", "data-tip"],
    // class-name words that say nothing of what an icon means; icon sets' own prefixes and drawing styles among them
    // ("lucide lucide-search", "ri-close-line", "bx bxs-trash")
    "generic": [
      "action", "actions", "active", "and", "bar", "base", "bi", "big", "black", "block", "bottom", "btn", "button",
      "bxl", "bxs", "circle", "clickable", "codicon", "col", "container", "control", "css", "ctrl", "dark", "default",
      "desktop", "disabled", "div", "duotone", "el", "enabled", "fa", "fab", "fad", "fal", "false", "far", "fas",
      "fass", "feather", "fill", "filled", "flat", "flex", "float", "focus", "for", "fw", "ghost", "glyphicon",
      "glyphicons", "has", "heroicon", "heroicons", "hidden", "hover", "ico", "icon", "iconify", "icons", "image",
      "img", "inline", "inner", "ion", "ionicon", "is", "item", "js", "la", "label", "lar", "large", "las", "left",
      "lg", "light", "line", "link", "lucide", "mat", "material", "md", "mdi", "medium", "mini", "mobile", "muted",
      "nav", "none", "octicon", "only", "open", "original", "outer", "outline", "outlined", "phosphor", "plain",
      "pointer", "primary", "pull", "regular", "retina", "right", "round", "rounded", "row", "secondary", "selected",
      "sharp", "show", "shown", "sm", "small", "solid", "span", "sprite", "square", "svg", "symbol", "symbols",
      "tabler", "tablet", "text", "the", "thumb", "thumbnail", "ti", "tool", "toolbar", "top", "true", "twotone",
      "ui", "uil", "visible", "white", "with", "wrap", "wrapper", "xl", "xs", "xxl"
    ],
    // an icon named only by one of these draws a cross, and a person calls it a close button: octicon-x, feather-x,
    // fa-times, fa-circle-xmark (not "twitter-x": there it is a letter)
    "synonyms": {"x": "close", "times": "close", "xmark": "close"},
    // attributes icon libraries name their icon in, before or after their script draws it: <i data-feather="x">,
    // <i data-lucide="trash-2">, Font Awesome's <svg data-icon="magnifying-glass">; read as a guess, as class names
    "data": ["data-icon", "data-feather", "data-lucide"],
    // icon fonts that draw text as an icon (a ligature: "more_vert")
    "fonts": ["material-icons", "material-symbols", "google-symbols"],
    // at most this many words in a guess
    "words": 3,
    // controls inside a control: what they show is their own name, not the one around them (a product card and the
    // "Save" heart in it); by tag (an <a> only with an href) or by their role's first word
    "innerTags": ["a", "button", "input", "select", "summary", "textarea"],
    "innerRoles": [
      "button", "checkbox", "link", "menuitem", "menuitemcheckbox", "menuitemradio", "option", "radio", "switch",
      "tab", "treeitem"
    ]
  }
  /*END RULES*/
);
