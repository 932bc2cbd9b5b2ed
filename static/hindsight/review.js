/* Inline review decisions: each row's form is posted with fetch (JSON answer) and the row updated
 * in place, so a reviewer goes through a graph without a page reload per event. Keyboard shortcuts
 * act on the active row. Without scripts the forms post normally and the page redirects back. */
(function () {
  "use strict";
  var rows = Array.prototype.slice.call(document.querySelectorAll("table.review tbody tr[data-event]"));
  if (!rows.length) return;
  var active = 0;
  // The first pending row is marked on load; the first j (or k) goes to it rather than past it.
  var moved = false;
  var pendingEl = document.getElementById("pending-count");

  function activate(index, focus) {
    rows[active].classList.remove("active");
    moved = moved || focus !== false;
    active = Math.max(0, Math.min(rows.length - 1, index));
    rows[active].classList.add("active");
    if (focus !== false) rows[active].focus({ preventScroll: true });
    rows[active].scrollIntoView({ block: "nearest" });
  }

  function badgeClass(status) {
    return { Approved: "good", Rejected: "bad", Revised: "warn" }[status] || "";
  }

  function submit(form, decision) {
    var row = form.closest("tr");
    var errors = row.querySelector(".row-errors");
    var body = new FormData(form);
    body.set("decision", decision);
    if (decision !== "reject") body.set("reason", "");
    if (decision !== "revise") { body.set("revised_title", ""); body.set("revised_date", ""); }
    errors.textContent = "Saving…";
    return fetch(window.location.pathname, {
      method: "POST",
      body: body,
      headers: { "Accept": "application/json", "X-CSRFToken": body.get("csrfmiddlewaretoken") },
      credentials: "same-origin"
    }).then(function (response) {
      return response.json().then(function (data) { return { ok: response.ok, data: data }; });
    }).then(function (result) {
      if (!result.ok || !result.data.ok) {
        var messages = [];
        var errs = (result.data && result.data.errors) || {};
        Object.keys(errs).forEach(function (field) {
          errs[field].forEach(function (e) { messages.push(e.message); });
        });
        errors.textContent = messages.join(" ") || "The decision was not saved.";
        return false;
      }
      var data = result.data;
      errors.textContent = "";
      row.dataset.status = data.status;
      var badge = row.querySelector(".status");
      badge.textContent = data.status;
      badge.className = "badge status " + badgeClass(data.status);
      row.querySelector(".event-title").textContent = data.title;
      row.querySelector(".date-cell").textContent = data.date;
      var li = document.createElement("li");
      li.textContent = data.history;
      row.querySelector(".history").appendChild(li);
      row.classList.remove("revising");
      form.reset();
      if (pendingEl) pendingEl.textContent = data.pending;
      return true;
    }).catch(function () {
      errors.textContent = "The server could not be reached; the decision was not saved.";
      return false;
    });
  }

  rows.forEach(function (row, index) {
    var form = row.querySelector("form.decision");
    row.addEventListener("click", function () { moved = true; if (active !== index) activate(index, false); });
    row.querySelector(".revise-toggle").addEventListener("click", function () {
      row.classList.toggle("revising");
      if (row.classList.contains("revising")) row.querySelector("[name=revised_title]").focus();
    });
    form.addEventListener("submit", function (evt) {
      evt.preventDefault();
      var decision = evt.submitter ? evt.submitter.value : "approve";
      submit(form, decision).then(function (saved) {
        if (saved && index === active && index < rows.length - 1) activate(index + 1);
      });
    });
    // The outcome event has no reject control: it is the resolution itself.
    var reason = form.querySelector("select[name=reason]");
    if (reason) reason.addEventListener("keydown", function (evt) {
      if (evt.key === "Enter") { evt.preventDefault(); submit(form, "reject").then(function (saved) {
        if (saved) activate(index + 1);
      }); }
    });
  });

  document.addEventListener("keydown", function (evt) {
    var tag = (evt.target.tagName || "").toLowerCase();
    if (tag === "input" || tag === "select" || tag === "textarea" || evt.ctrlKey || evt.metaKey || evt.altKey) return;
    var row = rows[active], form = row.querySelector("form.decision");
    if (evt.key === "j" || evt.key === "ArrowDown") activate(moved ? active + 1 : active);
    else if (evt.key === "k" || evt.key === "ArrowUp") activate(moved ? active - 1 : active);
    else if (evt.key === "a") submit(form, "approve").then(function (saved) { if (saved) activate(active + 1); });
    else if (evt.key === "r") { var select = form.querySelector("select[name=reason]"); if (select) select.focus(); }
    else if (evt.key === "e") { row.classList.add("revising"); row.querySelector("[name=revised_title]").focus(); }
    else if (evt.key === "o") { var link = row.querySelector("details a"); if (link) window.open(link.href, "_blank", "noopener"); }
    else return;
    evt.preventDefault();
  });
  var firstPending = rows.findIndex(function (r) { return r.dataset.status === "Pending"; });
  activate(firstPending < 0 ? 0 : firstPending, false);
})();
