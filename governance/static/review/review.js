/* The review UI's script: focus the first hint, keep a live region current, single-key shortcuts
 * with a help overlay, and a live character counter for field-fill edits.
 *
 * A region with data-live-url polls that JSON view; when the signature it returns differs from
 * the one the page was rendered with, the page is fetched again and only the region is swapped,
 * so the page updates without a full reload. No library and no build step. */
(function () {
  "use strict";
  var INTERVAL_MS = 2000;

  function focusFirstHint() {
    var hint = document.querySelector("[data-first-hint]");
    if (hint && !document.querySelector("[role=alert]")) {
      hint.focus({preventScroll: false});
    }
  }

  function watch(region) {
    var url = region.getAttribute("data-live-url");
    if (!url) {
      return;
    }
    var signature = region.getAttribute("data-signature");
    function later() {
      window.setTimeout(tick, INTERVAL_MS);
    }
    function swap(html) {
      var fresh = new DOMParser().parseFromString(html, "text/html").getElementById(region.id);
      if (!fresh) {
        return later();
      }
      fresh = document.importNode(fresh, true);
      region.replaceWith(fresh);
      watch(fresh);
    }
    function tick() {
      if (document.hidden) {
        return later();
      }
      fetch(url, {credentials: "same-origin", headers: {"Accept": "application/json"}})
        .then(function (response) { return response.ok ? response.json() : null; })
        .then(function (state) {
          if (!state || state.signature === signature) {
            return later();
          }
          return fetch(window.location.href, {credentials: "same-origin"})
            .then(function (response) { return response.ok ? response.text() : Promise.reject(); })
            .then(swap);
        })
        .catch(later);
    }
    later();
  }

  /* --- keyboard shortcuts, as in mail clients: plain keydown handlers (access keys do nothing in
   * a headless browser, and differ between browsers). A key does nothing while a person types in a
   * field or holds Control, Alt or Meta; ? lists every key. --- */
  function typing(target) {
    if (!target || !target.tagName) {
      return false;
    }
    var tag = target.tagName.toLowerCase();
    return tag === "input" || tag === "textarea" || tag === "select" || target.isContentEditable;
  }

  function help(show) {
    var box = document.getElementById("shortcut-help");
    if (!box) {
      return;
    }
    var open = show === undefined ? box.hidden : show;
    box.hidden = !open;
    if (open) {
      var close = box.querySelector("[data-help-close]");
      if (close) {
        close.focus();
      }
    }
  }

  function press(selector) {
    var button = document.querySelector(selector);
    if (button && !button.disabled) {
      button.click();
      return true;
    }
    return false;
  }

  function rows() {
    return Array.prototype.slice.call(document.querySelectorAll("#queue-table tr.gavel-row"));
  }

  function select(step) {
    var all = rows();
    if (!all.length) {
      return;
    }
    var current = all.indexOf(document.querySelector("#queue-table tr.gavel-row.selected"));
    var next = current < 0 ? 0 : Math.min(Math.max(current + step, 0), all.length - 1);
    all.forEach(function (row) { row.classList.remove("selected"); row.removeAttribute("aria-selected"); });
    all[next].classList.add("selected");
    all[next].setAttribute("aria-selected", "true");
    var link = all[next].querySelector("a.gavel-row-link");
    if (link) {
      link.focus();
    }
  }

  function go(url) {
    if (url) {
      window.location.assign(url);
      return true;
    }
    return false;
  }

  function onQueueKey(key) {
    if (key === "j") {
      select(1);
    } else if (key === "k") {
      select(-1);
    } else if (key === "o" || key === "Enter") {
      var row = document.querySelector("#queue-table tr.gavel-row.selected a.gavel-row-link");
      return row ? go(row.getAttribute("href")) : false;
    } else if (key === "/") {
      var search = document.getElementById("queue-search");
      if (search) {
        search.focus();
        search.select();
      }
    } else {
      return false;
    }
    return true;
  }

  function onTaskKey(key, main) {
    switch (key) {
    case "j":
      return go(main.getAttribute("data-older-url"));
    case "k":
      return go(main.getAttribute("data-newer-url"));
    case "u":
      return go(main.getAttribute("data-queue-url"));
    case "a":
      // On the "edited text still has hints" page, a accepts the edit the page shows (issue 43),
      // never the original underneath it.
      return press("#confirm-hints-button") || press("#accept-button");
    case "r":
      return press("#reject-button");
    case "t":
      return press("#retry-button");
    case "e":
      var text = document.querySelector("#edit-form textarea");
      if (text) {
        text.focus();
        return true;
      }
      return false;
    default:
      return false;
    }
  }

  function onKey(event) {
    var box = document.getElementById("shortcut-help");
    if (event.key === "Escape") {
      if (box && !box.hidden) {
        help(false);
        event.preventDefault();
      } else if (typing(event.target)) {
        event.target.blur();
      }
      return;
    }
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey) && event.target.closest &&
        event.target.closest("#edit-form")) {
      event.preventDefault();
      press("#edit-accept-button");
      return;
    }
    if (event.defaultPrevented || event.ctrlKey || event.altKey || event.metaKey || typing(event.target)) {
      return;
    }
    if (event.key === "?") {
      help();
      event.preventDefault();
      return;
    }
    if (box && !box.hidden) {
      return;
    }
    var main = document.querySelector("[data-shortcuts]");
    if (!main) {
      return;
    }
    if (event.key === "Enter" && main.getAttribute("data-shortcuts") === "queue" &&
        document.activeElement && document.activeElement.tagName.toLowerCase() === "a") {
      return;  // a focused link opens itself
    }
    var handled = main.getAttribute("data-shortcuts") === "queue" ? onQueueKey(event.key)
      : onTaskKey(event.key, main);
    if (handled) {
      event.preventDefault();
    }
  }

  /* --- a field fill's edit counts its characters against the field's max_length, as it is typed --- */
  function counter() {
    var text = document.querySelector("#edit-form textarea[data-max-length]");
    var out = document.getElementById("edit-count");
    if (!text || !out) {
      return;
    }
    var limit = parseInt(text.getAttribute("data-max-length"), 10);
    function fill(template, length) {
      return template.replace("%(length)s", String(length)).replace("%(limit)s", String(limit))
        .replace("%(over)s", String(length - limit));
    }
    function update() {
      // Characters as the server counts them (code points), not UTF-16 units.
      var length = Array.from(text.value).length;
      var over = length > limit;
      out.textContent = fill(out.getAttribute(over ? "data-over-template" : "data-template"), length);
      out.classList.toggle("over", over);
    }
    text.addEventListener("input", update);
    update();
  }

  /* On a phone the queue's filters start folded (issue 43): the tasks come first, Filters opens them. */
  function foldFilters() {
    var fold = document.getElementById("queue-filter-fold");
    if (fold && window.matchMedia && window.matchMedia("(max-width: 767px)").matches) {
      fold.removeAttribute("open");
    }
  }

  function start() {
    foldFilters();
    document.addEventListener("keydown", onKey);
    Array.prototype.forEach.call(document.querySelectorAll("[data-help-open]"), function (button) {
      button.addEventListener("click", function () { help(true); });
    });
    Array.prototype.forEach.call(document.querySelectorAll("[data-help-close]"), function (button) {
      button.addEventListener("click", function () { help(false); });
    });
    counter();
    focusFirstHint();
    var region = document.getElementById("review-live");
    if (region) {
      watch(region);
    }
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
