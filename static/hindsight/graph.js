/* The hindsight graph drawn with cytoscape (vendored, static/vendor/README.md).
 *
 * Events sit on a time axis (x = date); events close in time are stacked in lanes so their labels
 * do not overlap. Causal links are arrows coloured by relation; key events have a gold border; the
 * outcome node is dark. With a forecast overlay, the forecast's dated events sit in a band below
 * the reference, each joined by a dotted line to the reference event its grade matched.
 * The page's timeline and link table hold the same content for readers who cannot use a canvas.
 */
(function () {
  "use strict";
  var dataEl = document.getElementById("graph-data");
  var container = document.getElementById("graph");
  if (!dataEl || !container || typeof cytoscape !== "function") return;
  var data = JSON.parse(dataEl.textContent);
  var DAY = 86400000;
  var PX_PER_DAY_MIN = 12, WIDTH = 1300, LANE = 66, GAP = 176;

  function toTime(iso) { return Date.parse(iso + "T00:00:00Z"); }
  // Three lines fit in a node; the full title is in the detail line and the timeline.
  function short(text) { return text.length > 72 ? text.slice(0, 70) + "…" : text; }

  var overlay = data.overlay || { events: [], matches: [] };
  var times = data.nodes.map(function (n) { return toTime(n.date); })
    .concat(overlay.events.map(function (e) { return toTime(e.date); }));
  if (!times.length) return;
  var t0 = Math.min.apply(null, times), t1 = Math.max.apply(null, times);
  var days = Math.max(1, (t1 - t0) / DAY);
  var pxPerDay = Math.max(PX_PER_DAY_MIN, WIDTH / days);
  function x(iso) { return (toTime(iso) - t0) / DAY * pxPerDay; }

  // Greedy lanes: each item takes the first lane whose last label ends before it.
  function lanes(items) {
    var ends = [];
    items.slice().sort(function (a, b) { return x(a.date) - x(b.date); }).forEach(function (item) {
      var px = x(item.date), lane = 0;
      while (lane < ends.length && ends[lane] > px) lane++;
      ends[lane] = px + GAP;
      item._lane = lane;
    });
    return ends.length;
  }
  var refLanes = lanes(data.nodes);
  var bandTop = refLanes * LANE + 90;
  lanes(overlay.events);

  var matchedRefs = {}, matchedForecast = {};
  overlay.matches.forEach(function (m) { matchedRefs[m.reference] = true; matchedForecast[m.forecast] = true; });

  var elements = [];
  data.nodes.forEach(function (n) {
    var classes = ["event"];
    if (n.direction === "Positive") classes.push("positive");
    if (n.direction === "Negative") classes.push("negative");
    if (n.key_event) classes.push("key");
    if (n.outcome) classes.push("outcome");
    if (n.rejected) classes.push("rejected");
    if (matchedRefs[n.id]) classes.push("matched");
    elements.push({ group: "nodes", data: { id: n.id, label: short(n.title), info: n }, classes: classes.join(" "),
      position: { x: x(n.date), y: n._lane * LANE } });
  });
  data.edges.forEach(function (e) {
    elements.push({ group: "edges", data: { id: e.id, source: e.source, target: e.target, colour: e.colour,
      width: 1.5 + 3 * Math.abs(e.strength), info: e }, classes: e.relation === "Correlates" ? "undirected" : "" });
  });
  overlay.events.forEach(function (f) {
    elements.push({ group: "nodes", data: { id: f.id, label: short(f.title), info: f },
      classes: "forecast" + (matchedForecast[f.id] ? " matched" : ""),
      position: { x: x(f.date), y: bandTop + f._lane * LANE } });
  });
  overlay.matches.forEach(function (m, i) {
    if (!data.nodes.some(function (n) { return n.id === m.reference; })) return;
    if (!overlay.events.some(function (f) { return f.id === m.forecast; })) return;
    elements.push({ group: "edges", data: { id: "m" + i, source: m.forecast, target: m.reference, score: m.score },
      classes: "match" });
  });
  // The time axis: a tick per month (per week for short spans), below everything else.
  var axisY = (overlay.events.length ? bandTop + LANE * 2 : bandTop) - 30;
  var step = days > 120 ? "month" : "week";
  var tick = new Date(t0);
  tick.setUTCHours(0, 0, 0, 0);
  if (step === "month") tick.setUTCDate(1); else tick.setUTCDate(tick.getUTCDate() - ((tick.getUTCDay() + 6) % 7));
  for (var guard = 0; tick.getTime() <= t1 + DAY && guard < 400; guard++) {
    if (tick.getTime() >= t0 - DAY) {
      var iso = tick.toISOString().slice(0, 10);
      elements.push({ group: "nodes", data: { id: "tick-" + iso, label: iso }, classes: "tick",
        position: { x: x(iso), y: axisY }, selectable: false, grabbable: false });
    }
    if (step === "month") tick.setUTCMonth(tick.getUTCMonth() + 1); else tick.setUTCDate(tick.getUTCDate() + 7);
  }

  var cy = cytoscape({
    container: container,
    elements: elements,
    layout: { name: "preset", fit: true, padding: 40 },
    minZoom: 0.1,
    maxZoom: 3,
    boxSelectionEnabled: false,
    style: [
      { selector: "node.event, node.forecast", style: {
        "shape": "round-rectangle", "width": 168, "height": 48, "background-color": "#f4f6f9",
        "border-width": 1, "border-color": "#8a94a0", "label": "data(label)", "font-size": 12,
        "text-wrap": "ellipsis", "text-max-width": 160, "text-valign": "center", "text-halign": "center",
        "color": "#1b1f24" } },
      { selector: "node.event", style: { "text-wrap": "wrap", "text-max-width": 160 } },
      { selector: "node.positive", style: { "background-color": "#e0f3e5", "border-color": "#1e7d34" } },
      { selector: "node.negative", style: { "background-color": "#fbe3e1", "border-color": "#b3261e" } },
      { selector: "node.key", style: { "border-width": 4, "border-color": "#c28a00" } },
      { selector: "node.outcome", style: { "background-color": "#12263f", "color": "#ffffff", "shape": "round-hexagon",
        "width": 190, "height": 60, "font-weight": "bold" } },
      { selector: "node.rejected", style: { "opacity": 0.4, "border-style": "dashed" } },
      { selector: "node.event.matched", style: { "underlay-color": "#1f5fbf", "underlay-opacity": 0.18, "underlay-padding": 6 } },
      { selector: "node.forecast", style: { "background-color": "#eef2ff", "border-color": "#1f5fbf", "border-style": "dashed" } },
      { selector: "node.forecast.matched", style: { "border-style": "solid", "border-width": 2 } },
      { selector: "node.tick", style: { "shape": "rectangle", "width": 1, "height": 10, "background-color": "#8a94a0",
        "label": "data(label)", "font-size": 11, "color": "#5b6470", "text-valign": "bottom", "text-margin-y": 4,
        "events": "no" } },
      { selector: "edge[colour]", style: { "curve-style": "bezier", "width": "data(width)", "line-color": "data(colour)",
        "target-arrow-color": "data(colour)", "target-arrow-shape": "triangle", "arrow-scale": 1.1, "opacity": 0.85 } },
      { selector: "edge.undirected", style: { "target-arrow-shape": "none", "line-style": "dashed" } },
      { selector: "edge.match", style: { "curve-style": "bezier", "line-style": "dotted", "line-color": "#1f5fbf", "width": 2,
        "target-arrow-shape": "none", "opacity": 0.7 } },
      { selector: ":selected", style: { "overlay-color": "#1f5fbf", "overlay-opacity": 0.15 } }
    ]
  });
  window.hindsightGraph = cy;
  // On a narrow screen the whole time axis fits only at a zoom where events are specks: open at a
  // readable zoom on the outcome instead (pan or "Fit" to see the rest).
  // The outcome sits near the right edge, the events that led to it to its left.
  var READABLE_ZOOM = 0.75;
  if (cy.zoom() < READABLE_ZOOM) {
    var focus = cy.nodes("node.outcome");
    if (!focus.length) focus = cy.nodes("node.event").last();
    cy.zoom(READABLE_ZOOM);
    cy.center(focus);
    cy.panBy({ x: container.clientWidth * 0.3, y: 0 });
  }

  var detail = document.getElementById("graph-detail");
  function describe(el) {
    var d = el.data("info") || {};
    if (el.isEdge()) {
      if (el.hasClass("match")) return "Match: forecast event ↔ reference event, similarity " + el.data("score") + ".";
      return d.relation + " · strength " + d.strength + " · confidence " + d.confidence + ": " +
        cy.getElementById(d.source).data("label") + " → " + cy.getElementById(d.target).data("label");
    }
    if (el.hasClass("forecast")) return d.date + " · forecast event: " + d.title + (el.hasClass("matched") ? " (matched)" : " (no match)");
    var parts = [d.date, d.type];
    if (d.key_event) parts.push("key event");
    if (d.rejected) parts.push("rejected by review");
    if (d.score !== null && d.score !== undefined) parts.push("impact " + d.direction + " " + d.score);
    return parts.join(" · ") + ": " + d.title;
  }
  cy.on("tap", "node.event, node.forecast, edge", function (evt) {
    detail.textContent = describe(evt.target);
    detail.classList.remove("muted");
    var info = evt.target.data("info");
    if (info && info.key) {
      var item = document.getElementById("event-" + info.key);
      if (item) { detail.appendChild(document.createTextNode(" ")); var a = document.createElement("a");
        a.href = "#event-" + info.key; a.textContent = "In the timeline"; detail.appendChild(a); }
    }
  });

  function zoomBy(factor) {
    cy.zoom({ level: cy.zoom() * factor, renderedPosition: { x: container.clientWidth / 2, y: container.clientHeight / 2 } });
  }
  document.querySelectorAll("[data-graph]").forEach(function (button) {
    button.addEventListener("click", function () {
      var action = button.getAttribute("data-graph");
      if (action === "zoom-in") zoomBy(1.25);
      else if (action === "zoom-out") zoomBy(0.8);
      else cy.fit(undefined, 40);
    });
  });
  container.addEventListener("keydown", function (evt) {
    var pan = { ArrowLeft: [60, 0], ArrowRight: [-60, 0], ArrowUp: [0, 60], ArrowDown: [0, -60] }[evt.key];
    if (evt.key === "+" || evt.key === "=") zoomBy(1.25);
    else if (evt.key === "-") zoomBy(0.8);
    else if (evt.key === "0") cy.fit(undefined, 40);
    else if (pan) cy.panBy({ x: pan[0], y: pan[1] });
    else return;
    evt.preventDefault();
  });
})();
