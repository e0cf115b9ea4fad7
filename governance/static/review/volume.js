/* The queue at volume (issue 29), as progressive enhancement: every form below works without this file.
 *
 * - Reject opens its confirmation (reason, confirm, cancel) in place instead of posting at once;
 * - "Select every hint-free ready task on this page" ticks the bulk-accept boxes and counts them;
 * - Right / Wrong on a hint are sent with fetch and the hint is updated in place: no page load, the
 *   scroll position stays. */
(function () {
  "use strict";

  function rejectPanel(show) {
    var panel = document.getElementById("reject-confirm");
    if (!panel) {
      return false;
    }
    panel.hidden = !show;
    if (show) {
      var reason = document.getElementById("reject-reason");
      if (reason) {
        reason.focus();
      }
    }
    return true;
  }

  function countSelected() {
    var out = document.getElementById("bulk-count");
    if (!out) {
      return;
    }
    var n = document.querySelectorAll(".gavel-bulk-box:checked").length;
    out.textContent = n ? (out.getAttribute("data-template") || "%(count)s").replace("%(count)s", String(n)) : "";
  }

  function onClick(event) {
    var target = event.target.closest ? event.target.closest("button, a") : null;
    if (!target) {
      return;
    }
    if (target.id === "reject-button" && rejectPanel(true)) {
      event.preventDefault();
    } else if (target.hasAttribute("data-reject-cancel") && rejectPanel(false)) {
      event.preventDefault();
      var button = document.getElementById("reject-button");
      if (button) {
        button.focus();
      }
    } else if (target.id === "bulk-select-all") {
      Array.prototype.forEach.call(document.querySelectorAll(".gavel-bulk-box"), function (box) {
        box.checked = true;
      });
      countSelected();
    }
  }

  function verdictBadge(group, number) {
    var badge = group.querySelector(".gavel-verdict");
    if (!badge) {
      badge = document.createElement("span");
      badge.id = "verdict-" + number;
      group.insertBefore(badge, group.firstChild);
    }
    return badge;
  }

  function onSubmit(event) {
    var form = event.target;
    var group = form.closest ? form.closest(".gavel-feedback") : null;
    if (!group || !window.fetch || !window.FormData) {
      return;
    }
    event.preventDefault();
    var submitter = event.submitter;
    var body = new FormData(form);
    if (submitter && submitter.name) {
      body.append(submitter.name, submitter.value);
    }
    var number = (form.querySelector("input[name=number]") || {}).value || "";
    var buttons = form.querySelectorAll("button");
    Array.prototype.forEach.call(buttons, function (b) { b.disabled = true; });
    fetch(form.action, {method: "POST", body: body, credentials: "same-origin",
                        headers: {"Accept": "application/json"}})
      .then(function (response) {
        return response.json().then(function (data) { return {ok: response.ok, data: data}; });
      })
      .then(function (result) {
        var badge = verdictBadge(group, number);
        if (!result.ok) {
          badge.className = "gavel-verdict verdict-error";
          badge.textContent = result.data.error || "";
          return;
        }
        badge.className = "gavel-verdict verdict-" + result.data.verdict;
        badge.textContent = result.data.label;
        badge.setAttribute("role", "status");
        Array.prototype.forEach.call(buttons, function (b) {
          b.setAttribute("aria-pressed", b.value === result.data.verdict ? "true" : "false");
        });
      })
      .catch(function () { form.submit(); })
      .then(function () {
        Array.prototype.forEach.call(buttons, function (b) { b.disabled = false; });
      });
  }

  function onKey(event) {
    // Escape in the reject confirmation closes it (review.js blurs a field on Escape; this runs first).
    if (event.key === "Escape" && event.target && event.target.id === "reject-reason" && rejectPanel(false)) {
      event.preventDefault();
      var button = document.getElementById("reject-button");
      if (button) {
        button.focus();
      }
    }
  }

  function start() {
    document.addEventListener("keydown", onKey, true);
    document.addEventListener("click", onClick);
    document.addEventListener("submit", onSubmit);
    document.addEventListener("change", function (event) {
      if (event.target.classList && event.target.classList.contains("gavel-bulk-box")) {
        countSelected();
      }
    });
    offerSelectAll();
    // The queue's live region is swapped when its rows change: offer the button in the new region too.
    if (window.MutationObserver) {
      new MutationObserver(offerSelectAll).observe(document.body, {childList: true, subtree: true});
    }
  }

  function offerSelectAll() {
    var all = document.getElementById("bulk-select-all");
    if (all && all.hidden && document.querySelector(".gavel-bulk-box")) {
      all.hidden = false;
    }
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
