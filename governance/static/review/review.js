/* The review UI's few lines of script: focus the first hint, and keep a live region current.
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

  function start() {
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
