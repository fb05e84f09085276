// The popup's words in the browser's language (chrome.i18n: _locales/<language>/messages.json, English by
// default). Keys are checked by tests/test_extension_locales.py: every key used here and in the HTML
// exists in every language.
"use strict";

const I18n = (() => {
  // The language of the messages chrome.i18n picked, as each messages.json names it: getUILanguage() and
  // @@ui_locale said en-US in a Chromium started with --lang=zh-CN whose messages were Chinese.
  const language = chrome.i18n.getMessage("locale") || chrome.i18n.getUILanguage();
  const numbers = new Intl.NumberFormat(language);

  // t("key", "a", 2): the message with $1, $2… filled in (numbers with the language's separators).
  function t(key, ...substitutions) {
    return optional(key, ...substitutions) || key; // a missing key shows itself rather than nothing
  }

  // The same, or "" when there is no such message (a key built from a name that may have none).
  function optional(key, ...substitutions) {
    const filled = substitutions.map((value) => (typeof value === "number" ? numbers.format(value) : String(value)));
    return chrome.i18n.getMessage(key, filled);
  }

  // Fill every data-i18n / data-i18n-placeholder / data-i18n-title element under `root`.
  function apply(root = document) {
    for (const node of root.querySelectorAll("[data-i18n]")) node.textContent = t(node.dataset.i18n);
    for (const node of root.querySelectorAll("[data-i18n-placeholder]")) node.placeholder = t(node.dataset.i18nPlaceholder);
    for (const node of root.querySelectorAll("[data-i18n-title]")) node.title = t(node.dataset.i18nTitle);
    document.documentElement.lang = language;
  }

  return { t, optional, apply, language, number: (value) => numbers.format(value) };
})();
