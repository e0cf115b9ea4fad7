/* Gavel's admin script (a static file: pages allow no inline script).
 *
 * A form over the upload limit is not sent, so the browser keeps what was typed; the largest field
 * says the limit (issue 11). The server answers the same case with a message
 * (AdminBodyLimitMiddleware). The limit and the words come from <meta name="gavel-upload-limit">.
 * The language switch sends itself when a language is chosen. */
(function () {
  "use strict";

  function words() {
    var meta = document.querySelector('meta[name="gavel-upload-limit"]');
    if (!meta) {
      return null;
    }
    return {
      limit: parseInt(meta.getAttribute("content"), 10) || 0,
      thisForm: meta.getAttribute("data-this-form") || "",
      atMost: meta.getAttribute("data-at-most") || "",
      shorten: meta.getAttribute("data-shorten") || ""
    };
  }

  document.addEventListener("submit", function (event) {
    var form = event.target, said = words();
    if (!said || !said.limit || (form.method || "").toLowerCase() !== "post") {
      return;
    }
    var size = 0, largest = null, largestSize = -1;
    Array.prototype.forEach.call(form.elements, function (field) {
      if (!field.name || field.disabled || field.type === "file") {
        return;
      }
      var bytes = new TextEncoder().encode(encodeURIComponent(field.value || "")).length + field.name.length + 2;
      size += bytes;
      if (bytes > largestSize) {
        largest = field;
        largestSize = bytes;
      }
    });
    if (size <= said.limit) {
      return;
    }
    event.preventDefault();
    var kb = function (n) { return (n / 1024).toFixed(1) + " KB"; };
    var note = document.createElement("ul");
    note.className = "errorlist gavel-too-big";
    var item = document.createElement("li");
    item.textContent = said.thisForm + " " + kb(size) + said.atMost + " " + kb(said.limit) + said.shorten;
    note.appendChild(item);
    var old = form.querySelector(".gavel-too-big");
    if (old) {
      old.remove();
    }
    (largest && largest.parentNode ? largest.parentNode : form).insertBefore(note, largest || form.firstChild);
    if (largest && largest.focus) {
      largest.focus();
    }
  }, true);

  function start() {
    Array.prototype.forEach.call(document.querySelectorAll("select[data-submit-on-change]"), function (select) {
      select.addEventListener("change", function () { select.form.submit(); });
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
