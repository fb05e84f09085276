// Text a page chose (an element's name, a title, an address, the model's words about the page, a requester) as
// tabpilot's own views show it: the popup, the side panel, the overlay and the approval cards. An attack run named a
// button "Pay \u202Emoc.knab" (U+202E RIGHT-TO-LEFT OVERRIDE): drawn as it is, the card read 'clicked "Pay bank.com"',
// and its words could reorder the card's own around them. One rule everywhere: every control, format and separator
// character that the host's rule for text a person reads names (host/tabpilot/textsafety.py _FOR_PEOPLE; its test
// keeps the two equal) is shown as its code, "<U+202E>"; the page's words are isolated (<bdi>), so they cannot move
// the words around them; and a host someone is asked to trust is shown as the browser spells it (punycode).
"use strict";

var PageText = globalThis.PageText || (() => {
  const CONTROLS = /[\x00-\x08\x0b-\x1f\x7f-\x9f\xad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b\u200e\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\u{110bd}\u{110cd}\u{13430}-\u{1343f}\u{1bca0}-\u{1bca3}\u{1d173}-\u{1d17a}\u{e0001}\u{e0020}-\u{e007f}]/gu;
  // Where a page's words begin and end in a string of ours (FSI … PDI): `nodes` makes each such part a <bdi>. A page's
  // own isolates never reach a string as such: `quote` shows them as codes.
  const OPEN = "\u2068";
  const CLOSE = "\u2069";
  const ASCII = /^[\x00-\x7f]*$/;

  function code(character) {
    return `<U+${character.codePointAt(0).toString(16).toUpperCase().padStart(4, "0")}>`;
  }

  // `text` with every character of the rule shown as its code (a tooltip, a field's value: no <bdi> there).
  function visible(text) {
    return String(text ?? "").replace(CONTROLS, code);
  }

  // A page's words to put in a string of ours (a message's substitution, a line of a card): shown and isolated.
  function quote(text) {
    return `${OPEN}${visible(text)}${CLOSE}`;
  }

  // The browser's spelling of a site as a person is asked to trust or judge it: a host, an origin or a URL whose host
  // has letters beyond ASCII is shown with that host in punycode, as Chromium's address bar shows a host of mixed
  // scripts ("аpple.com" with a Cyrillic а reads as apple.com; its xn--pple-43d.com does not). Anything else as it is.
  function site(text) {
    const value = String(text ?? "");
    if (ASCII.test(value)) return value;
    // the host: after "scheme://" (when there is one) and any "user@", up to a port, the path, the query or the end
    const start = (/^[a-z][a-z0-9+.-]*:\/\//i.exec(value) || [""])[0].length;
    const authority = value.slice(start, start + value.slice(start).search(/[/?#\s]|$/));
    const at = authority.lastIndexOf("@") + 1;
    const host = authority.slice(at).replace(/:\d*$/, "");
    if (!host || ASCII.test(host)) return value;
    try {
      const spelled = new URL(`http://${host}/`).hostname;
      return value.slice(0, start + at) + spelled + value.slice(start + at + host.length);
    } catch (_) {
      return value; // no host the browser would go to
    }
  }

  // Who asked for a task (a record's source, a question's kind: "page", "mcp"…), quoted: a web page's origin as the
  // browser spells it, a program's name as it gave it.
  function requester(source, who) {
    return quote(source === "page" ? site(who) : who);
  }

  // `text` (ours, the page's words in it quoted) as nodes for an element: each quoted part a <bdi>, every other
  // character the rule names shown as its code. Nothing in them is a control a browser obeys.
  function nodes(text) {
    const stack = [document.createDocumentFragment()];
    for (const part of String(text ?? "").split(/([\u2068\u2069])/)) {
      const top = stack[stack.length - 1];
      if (part === OPEN) {
        const isolated = document.createElement("bdi");
        top.append(isolated);
        stack.push(isolated);
      } else if (part === CLOSE) {
        if (stack.length > 1) stack.pop();
        else top.append(code(CLOSE));
      } else if (part) {
        top.append(visible(part));
      }
    }
    return stack[0];
  }

  // The one way text enters an element of tabpilot's views (in place of textContent).
  function set(element, text) {
    element.replaceChildren(nodes(text));
  }

  // The same as plain text, for a tooltip: the page's words shown, not isolated (a tooltip has no <bdi>).
  function plain(text) {
    return nodes(text).textContent;
  }

  return { visible, quote, site, requester, nodes, set, plain };
})();
