/* Gavel's admin pages, from a file of its own (the Content-Security-Policy allows no inline script).
   1. The language choice in the user links switches at once.
   2. A form over the upload limit is not sent, so the browser keeps what was typed; the largest
      field says the limit (issue 11). The server answers the same case with a message
      (AdminBodyLimitMiddleware). The limit and the messages come from this script tag's data-*. */
(function () {
  "use strict";
  var script = document.currentScript;
  var data = script ? script.dataset : {};

  document.addEventListener("change", function (event) {
    var field = event.target;
    if (field && field.id === "gavel-language-choice" && field.form) { field.form.submit(); }
  });

  document.addEventListener("submit", function (event) {
    var form = event.target, limit = parseInt(data.uploadLimit || "0", 10);
    if (!limit || (form.method || "").toLowerCase() !== "post") { return; }
    var size = 0, largest = null, largestSize = -1;
    Array.prototype.forEach.call(form.elements, function (field) {
      if (!field.name || field.disabled || field.type === "file") { return; }
      var bytes = new TextEncoder().encode(encodeURIComponent(field.value || "")).length + field.name.length + 2;
      size += bytes;
      if (bytes > largestSize) { largest = field; largestSize = bytes; }
    });
    if (size <= limit) { return; }
    event.preventDefault();
    var kb = function (n) { return (n / 1024).toFixed(1) + " KB"; };
    var note = document.createElement("ul");
    note.className = "errorlist gavel-too-big";
    var item = document.createElement("li");
    item.textContent = data.msgFormIs + " " + kb(size) + data.msgAtMost + " " + kb(limit) + data.msgShorten;
    note.appendChild(item);
    var old = form.querySelector(".gavel-too-big"); if (old) { old.remove(); }
    (largest && largest.parentNode ? largest.parentNode : form).insertBefore(note, largest || form.firstChild);
    if (largest && largest.focus) { largest.focus(); }
  }, true);
}());
