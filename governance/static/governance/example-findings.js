// The example form's finding rows (governance/admin/example_fields.py): the second and third pickers
// show only what the chosen check (and list or snippet) can name. Without this file every option shows
// and the server still refuses a mismatch by name.
(function () {
  "use strict";

  function narrow(row) {
    var check = row.querySelector(".gavel-finding-check");
    var target = row.querySelector(".gavel-finding-target");
    var detail = row.querySelector(".gavel-finding-detail");
    if (!check || !target || !detail) { return; }
    var groups = target.querySelectorAll("optgroup");
    for (var i = 0; i < groups.length; i++) {
      var show = groups[i].getAttribute("data-check") === check.value;
      groups[i].hidden = !show;
      groups[i].disabled = !show;
    }
    var chosen = target.options[target.selectedIndex];
    if (chosen && chosen.value && chosen.getAttribute("data-check") && chosen.getAttribute("data-check") !== check.value) {
      target.value = "";
    }
    var options = detail.querySelectorAll("option[data-target]");
    for (var j = 0; j < options.length; j++) {
      var fits = options[j].getAttribute("data-check") === check.value &&
                 options[j].getAttribute("data-target") === target.value;
      options[j].hidden = !fits;
      options[j].disabled = !fits;
      if (!fits && options[j].selected) { detail.value = ""; }
    }
    target.disabled = check.value === "field" || check.value === "";
    detail.disabled = !(check.value === "term_list" || check.value === "rules_judge");
  }

  function start() {
    var rows = document.querySelectorAll("table.gavel-findings tr.gavel-finding");
    for (var i = 0; i < rows.length; i++) {
      (function (row) {
        narrow(row);
        row.addEventListener("change", function () { narrow(row); });
      })(rows[i]);
    }
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
