// bt_raider trace viewer: the tree at any tick, the events of each tick, each guard's trace.
// Our own code (no libraries). The trace format is bt_raider/viewer/trace.schema.json.
(function () {
  "use strict";

  var W = 156, H = 50, GAP_X = 14, GAP_Y = 44, LINE = 13, CHARS = 24;
  var ICONS = { sequence: "\u2192", selector: "?", parallel: "\u21c9", decorator: "\u25c7", behaviour: "" };
  var ISSUE_FREE = { none: true };
  var SVGNS = "http://www.w3.org/2000/svg";

  var S = {
    header: null, nodes: new Map(), order: [], events: [], eventTicks: [], tickEvents: new Map(),
    times: { t: [], v: [] }, maxTick: 0, tick: 0, selected: null, finished: true, entries: 0,
    layoutKey: "", orient: "td", orientKey: null, orientUser: false, userMoved: false, view: { x: 0, y: 0, k: 1 }, rows: [], playing: null,
    drawn: new Map(), source: null
  };
  var $ = function (id) { return document.getElementById(id); };

  // ------------------------------------------------------------------ helpers
  function esc(text) {
    return String(text == null ? "" : text).replace(/[&<>"']/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c];
    });
  }
  function hist() { return { t: [], v: [] }; }
  function push(h, tick, value) {
    var n = h.t.length;
    if (n && h.t[n - 1] === tick) { h.v[n - 1] = value; } else { h.t.push(tick); h.v.push(value); }
  }
  function indexAt(h, tick) { // the last change at or before tick, -1 if none
    var lo = 0, hi = h.t.length - 1, found = -1;
    while (lo <= hi) {
      var mid = (lo + hi) >> 1;
      if (h.t[mid] <= tick) { found = mid; lo = mid + 1; } else { hi = mid - 1; }
    }
    return found;
  }
  function valueAt(h, tick, fallback) { var i = indexAt(h, tick); return i < 0 ? fallback : h.v[i]; }
  function el(tag, attrs, parent) {
    var e = document.createElementNS(SVGNS, tag);
    for (var k in attrs) { e.setAttribute(k, attrs[k]); }
    if (parent) { parent.appendChild(e); }
    return e;
  }
  function wrap(text, chars, lines) {
    var words = String(text).split(/\s+/), out = [], line = "";
    for (var i = 0; i < words.length; i++) {
      var w = words[i];
      while (w.length > chars) { // a long word: cut it
        if (line) { out.push(line); line = ""; }
        out.push(w.slice(0, chars)); w = w.slice(chars);
      }
      if (!line) { line = w; } else if ((line + " " + w).length <= chars) { line += " " + w; } else { out.push(line); line = w; }
    }
    if (line) { out.push(line); }
    if (out.length > lines) { out = out.slice(0, lines); out[lines - 1] = out[lines - 1].slice(0, chars - 1) + "\u2026"; }
    return out;
  }
  function isIssue(ev) {
    return ev.kind === "verdict" && ev.verdict && !ISSUE_FREE[ev.verdict.category];
  }

  // ------------------------------------------------------------------ reading the trace
  function ingest(entry) {
    var tick = entry.tick, structure = false;
    (entry.add || []).forEach(function (d) {
      var n = {
        id: d.id, name: d.name, type: d.type, shape: d.shape, parent: d.parent, guard: !!d.guard,
        recovery: !!d.recovery, born: tick, gone: Infinity, kids: [], status: hist(),
        feedback: hist(), phase: hist(), attempts: hist(), query: hist(), evs: []
      };
      S.nodes.set(d.id, n);
      S.order.push(n);
      var p = S.nodes.get(d.parent);
      if (p) { p.kids.push(n); }
      structure = true;
    });
    (entry.remove || []).forEach(function (id) {
      var n = S.nodes.get(id); if (n) { n.gone = tick; structure = true; }
    });
    var k, n;
    for (k in entry.status || {}) { n = S.nodes.get(+k); if (n) { push(n.status, tick, entry.status[k]); } }
    for (k in entry.feedback || {}) { n = S.nodes.get(+k); if (n) { push(n.feedback, tick, entry.feedback[k]); } }
    for (k in entry.guards || {}) {
      n = S.nodes.get(+k); if (!n) { continue; }
      var g = entry.guards[k];
      if ("phase" in g) { push(n.phase, tick, g.phase); }
      if ("attempts" in g) { push(n.attempts, tick, g.attempts); }
      if ("query" in g) { push(n.query, tick, g.query); }
    }
    var evs = entry.events || [];
    if (evs.length) {
      var list = [];
      evs.forEach(function (ev) {
        var rec = { tick: tick, ev: ev, index: S.events.length };
        S.events.push(rec); list.push(rec);
        var owner = S.nodes.get(ev.node); if (owner) { owner.evs.push(rec); }
      });
      var before = S.tickEvents.get(tick);
      S.tickEvents.set(tick, before ? before.concat(list) : list);
      if (!before) { S.eventTicks.push(tick); }
    }
    push(S.times, tick, entry.t);
    S.maxTick = Math.max(S.maxTick, tick);
    S.entries += 1;
    return structure;
  }

  function alive(n, tick) { return n.born <= tick && tick < n.gone; }

  // ------------------------------------------------------------------ layout (a tidy tree)
  // Each subtree gets its own band along the siblings' axis, as wide as its children's bands
  // together; a parent sits centred over its children. Top-down ("td"): depth goes down;
  // left-right ("lr"): depth goes right, which suits wide and shallow trees.
  var LABEL_ROOM = 26; // above a recovery subtree (left-right), for its label
  function layout(tick, orient) {
    var root = S.order.length ? S.order[0] : null;
    if (!root) { return []; }
    var lr = orient === "lr", SIB = lr ? H : W, GAP = lr ? 20 : GAP_X, STEP = lr ? W + 56 : H + GAP_Y;
    function kids(n) { return n.kids.filter(function (c) { return alive(c, tick); }); }
    function room(n) { return lr && n.recovery ? LABEL_ROOM : 0; }
    function measure(n) {
      var ks = kids(n), sum = 0;
      ks.forEach(function (c) { sum += measure(c); });
      n._w = (ks.length ? Math.max(SIB, sum + GAP * (ks.length - 1)) : SIB) + room(n);
      return n._w;
    }
    var placed = [];
    function place(n, at, depth, inRecovery) {
      var ks = kids(n), centre;
      at += room(n);
      n._inRecovery = inRecovery || n.recovery;
      if (ks.length) {
        var total = -GAP;
        ks.forEach(function (c) { total += c._w + GAP; });
        var cursor = at + (n._w - room(n) - total) / 2;
        ks.forEach(function (c) { place(c, cursor, depth + 1, n._inRecovery); cursor += c._w + GAP; });
        centre = (ks[0]._centre + ks[ks.length - 1]._centre) / 2;
      } else {
        centre = at + (n._w - room(n)) / 2;
      }
      n._centre = centre;
      // (_x, _y): the box's horizontal centre and its top.
      if (lr) { n._x = depth * STEP + W / 2 + 12; n._y = centre - H / 2; } else { n._x = centre; n._y = depth * STEP + 14; }
      placed.push(n);
    }
    measure(root);
    place(root, 0, 0, false);
    return placed;
  }
  function extent(placed) {
    var b = { x0: Infinity, y0: Infinity, x1: -Infinity, y1: -Infinity };
    placed.forEach(function (n) {
      b.x0 = Math.min(b.x0, n._x - W / 2); b.x1 = Math.max(b.x1, n._x + W / 2);
      b.y0 = Math.min(b.y0, n._y); b.y1 = Math.max(b.y1, n._y + H);
    });
    return b;
  }
  function chooseOrientation(tick) { // the one that shows the boxes bigger, once
    var svg = $("tree"), rw = svg.clientWidth || 800, rh = svg.clientHeight || 500, best = "td", scale = 0;
    ["td", "lr"].forEach(function (o) {
      var b = extent(layout(tick, o)), k = Math.min(rw / (b.x1 - b.x0 + 40), rh / (b.y1 - b.y0 + 50));
      if (k > scale * 1.2) { best = o; scale = k; }
    });
    return best;
  }

  function subtree(n, tick) {
    var out = [n];
    n.kids.forEach(function (c) { if (alive(c, tick)) { out = out.concat(subtree(c, tick)); } });
    return out;
  }

  function recoveryCode(n) { // the code of the recovery event that grafted subtree root n
    var guard = S.nodes.get(n.parent);
    if (!guard) { return ""; }
    for (var i = guard.evs.length - 1; i >= 0; i--) {
      var ev = guard.evs[i].ev;
      if (ev.kind === "recovery" && ev.subtree === n.id) { return ev.text; }
    }
    return "";
  }

  // ------------------------------------------------------------------ drawing the tree
  function drawTree(tick) {
    // The orientation suits the tree at the latest tick: stable while scrubbing, re-chosen as a
    // live run grows it, never again once the user picked one.
    var latest = S.order.filter(function (n) { return alive(n, S.maxTick); }).map(function (n) { return n.id; }).join(",");
    if (!S.orientUser && latest !== S.orientKey) {
      S.orientKey = latest;
      S.orient = S.order.length ? chooseOrientation(S.maxTick) : "td";
      showOrientation();
    }
    var lr = S.orient === "lr", placed = layout(tick, S.orient);
    var key = S.orient + ":" + placed.map(function (n) { return n.id; }).join(",");
    if (key === S.layoutKey) { return false; }
    S.layoutKey = key;
    var regions = $("regions"), edges = $("edges"), nodes = $("nodes");
    regions.textContent = ""; edges.textContent = ""; nodes.textContent = "";
    S.drawn = new Map();
    placed.forEach(function (n) {
      if (!n.recovery) { return; }
      var b = extent(subtree(n, tick));
      el("rect", { "class": "region", x: b.x0 - 8, y: b.y0 - 22, width: b.x1 - b.x0 + 16, height: b.y1 - b.y0 + 30, rx: 8 }, regions);
      var label = el("text", { "class": "region-label", x: b.x0 - 2, y: b.y0 - 8 }, regions);
      var code = recoveryCode(n), room = Math.max(8, Math.floor((b.x1 - b.x0 + 8) / 6.3) - 10);
      label.textContent = "recovery" + (code ? ": " + (code.length > room ? code.slice(0, room - 1) + "\u2026" : code) : "");
      el("title", {}, label).textContent = code;
    });
    placed.forEach(function (n) {
      var p = S.nodes.get(n.parent), d;
      if (p && alive(p, tick)) {
        if (lr) {
          var ax = p._x + W / 2, ay = p._y + H / 2, bx = n._x - W / 2 - (n.recovery ? 8 : 0), by = n._y + H / 2, mx = (ax + bx) / 2;
          d = "M" + ax + "," + ay + " C" + mx + "," + ay + " " + mx + "," + by + " " + bx + "," + by;
        } else {
          var x0 = p._x, y0 = p._y + H, x1 = n._x, y1 = n._y - (n.recovery ? 22 : 0), my = (y0 + y1) / 2;
          d = "M" + x0 + "," + y0 + " C" + x0 + "," + my + " " + x1 + "," + my + " " + x1 + "," + y1;
        }
        el("path", { "class": "edge" + (n.recovery ? " recovery" : ""), d: d }, edges);
      }
      var g = el("g", { "class": "node" + (n.guard ? " guard" : "") + (n._inRecovery ? " in-recovery" : ""), "data-id": n.id, "data-name": n.name, "data-shape": n.shape, transform: "translate(" + (n._x - W / 2) + "," + n._y + ")" }, nodes);
      el("rect", { "class": "box", width: W, height: H, rx: n.shape === "behaviour" ? 16 : 4 }, g);
      var icon = n.guard ? "G" : ICONS[n.shape] || "";
      if (icon) {
        el("circle", { "class": "icon-bg", cx: 0, cy: 0, r: 8 }, g);
        el("text", { "class": "icon", x: 0, y: 4, "text-anchor": "middle" }, g).textContent = icon;
      }
      var lines = wrap(n.name, CHARS, 3), text = el("text", { x: W / 2, y: (H - lines.length * LINE) / 2 + LINE - 2, "text-anchor": "middle" }, g);
      lines.forEach(function (line, i) { el("tspan", { x: W / 2, dy: i ? LINE : 0 }, text).textContent = line; });
      if (n.guard) {
        el("rect", { "class": "phase", x: W / 2 - 36, y: -9, width: 72, height: 15, rx: 7 }, g);
        n._phaseText = el("text", { "class": "phase-text", x: W / 2, y: 2, "text-anchor": "middle" }, g);
      }
      n._title = el("title", {}, g);
      S.drawn.set(n.id, g);
    });
    if (!S.userMoved) { fit(); }
    return true;
  }
  function showOrientation() {
    $("orient").textContent = "layout: " + (S.orient === "lr" ? "left-right" : "top-down");
  }

  function paint(tick) {
    S.drawn.forEach(function (g, id) {
      var n = S.nodes.get(id), i = indexAt(n.status, tick), status = i < 0 ? "INVALID" : n.status.v[i];
      g.setAttribute("data-status", status);
      g.classList.toggle("changed", i >= 0 && n.status.t[i] === tick && tick > 0);
      g.classList.toggle("selected", S.selected === id);
      var fb = valueAt(n.feedback, tick, "");
      var title = n.name + "\n" + n.type + " \u2014 " + status + (fb ? "\n" + fb : "");
      if (n.guard) {
        var phase = valueAt(n.phase, tick, "idle");
        g.setAttribute("data-phase", phase);
        n._phaseText.textContent = phase;
        title += "\nphase: " + phase;
      }
      n._title.textContent = title;
    });
  }

  // ------------------------------------------------------------------ pan and zoom
  function applyView() {
    $("viewport").setAttribute("transform", "translate(" + S.view.x + "," + S.view.y + ") scale(" + S.view.k + ")");
  }
  function fit() {
    var svg = $("tree"), box = $("viewport").getBBox ? $("viewport").getBBox() : null;
    var rw = svg.clientWidth || 800, rh = svg.clientHeight || 500;
    if (!box || !box.width) { return; }
    var k = Math.min(1.4, (rw - 30) / box.width, (rh - 30) / box.height);
    S.view = { k: k, x: (rw - box.width * k) / 2 - box.x * k, y: Math.max(15, (rh - box.height * k) / 2) - box.y * k };
    applyView();
  }
  function setupPanZoom() {
    var svg = $("tree"), drag = null;
    svg.addEventListener("wheel", function (e) {
      e.preventDefault();
      var r = svg.getBoundingClientRect(), px = e.clientX - r.left, py = e.clientY - r.top;
      var k = Math.max(0.1, Math.min(4, S.view.k * (e.deltaY < 0 ? 1.15 : 1 / 1.15)));
      S.view.x = px - (px - S.view.x) * k / S.view.k; S.view.y = py - (py - S.view.y) * k / S.view.k; S.view.k = k;
      S.userMoved = true; applyView();
    }, { passive: false });
    svg.addEventListener("mousedown", function (e) {
      if (e.target.closest && e.target.closest(".node")) { return; }
      drag = { x: e.clientX - S.view.x, y: e.clientY - S.view.y }; svg.classList.add("dragging");
    });
    window.addEventListener("mousemove", function (e) {
      if (!drag) { return; }
      S.view.x = e.clientX - drag.x; S.view.y = e.clientY - drag.y; S.userMoved = true; applyView();
    });
    window.addEventListener("mouseup", function () { drag = null; svg.classList.remove("dragging"); });
    $("fit").addEventListener("click", function () { S.userMoved = false; fit(); });
    $("orient").addEventListener("click", function () {
      S.orient = S.orient === "lr" ? "td" : "lr"; S.orientUser = true; S.userMoved = false; showOrientation(); setTick(S.tick);
    });
    window.addEventListener("resize", function () { if (!S.userMoved) { fit(); } drawMarks(); });
    $("nodes").addEventListener("click", function (e) {
      var g = e.target.closest ? e.target.closest(".node") : null;
      if (g) { select(+g.getAttribute("data-id")); }
    });
  }

  // ------------------------------------------------------------------ events list and marks
  function nodeName(id) { var n = S.nodes.get(id); return n ? n.name : ""; }
  function eventRow(rec) {
    var ev = rec.ev, cls = "ev k-" + esc(ev.kind) + (isIssue(ev) ? " issue" : "");
    var text = ev.kind === "ask" && ev.answer != null ? ev.text + "  \u2192  " + ev.answer : ev.text;
    return '<div class="' + cls + '" data-tick="' + esc(rec.tick) + '" data-index="' + rec.index + '">' +
      '<span class="tk">' + esc(rec.tick) + '</span><span class="kind">' + esc(ev.kind) + '</span>' +
      '<span><span class="tx">' + esc(text) + '</span>' +
      (ev.node != null ? ' <span class="who">\u00b7 ' + esc(nodeName(ev.node)) + '</span>' : "") + "</span></div>";
  }
  function appendRows(from) {
    var html = [];
    for (var i = from; i < S.events.length; i++) { html.push(eventRow(S.events[i])); }
    if (!html.length) { return; }
    var box = $("events");
    box.insertAdjacentHTML("beforeend", html.join(""));
    S.rows = box.children;
    S.rowTick = -1; // re-mark past/now/future
  }
  function markRows(tick) { // dim what has not happened yet, highlight this tick's events
    var rows = S.rows, prev = S.rowTick, lo, hi;
    if (prev < 0) { lo = 0; hi = rows.length; } else {
      lo = firstRowAfter(Math.min(prev, tick) - 1); hi = firstRowAfter(Math.max(prev, tick));
    }
    for (var i = lo; i < hi && i < rows.length; i++) {
      var t = S.events[i].tick;
      rows[i].classList.toggle("future", t > tick);
      rows[i].classList.toggle("now", t === tick);
    }
    S.rowTick = tick;
    var now = S.tickEvents.get(tick);
    if (now && rows[now[0].index]) { scrollIntoViewIfNeeded(rows[now[0].index], $("events")); }
  }
  function firstRowAfter(tick) { // index of the first event with a tick > tick
    var lo = 0, hi = S.events.length;
    while (lo < hi) { var mid = (lo + hi) >> 1; if (S.events[mid].tick <= tick) { lo = mid + 1; } else { hi = mid; } }
    return lo;
  }
  function scrollIntoViewIfNeeded(row, box) {
    var top = row.offsetTop - box.offsetTop, bottom = top + row.offsetHeight;
    if (top < box.scrollTop || bottom > box.scrollTop + box.clientHeight) { box.scrollTop = top - box.clientHeight / 3; }
  }
  var MARK_COLOURS = { issue: "#c62828", verdict: "#2e7d32", recovery: "#7e57c2", ask: "#ef6c00", say: "#ef6c00", wait: "#ef6c00", action: "#1565c0", world: "#6d4c41" };
  function drawMarks() {
    var canvas = $("marks"), w = canvas.clientWidth, h = 18, ctx = canvas.getContext("2d");
    canvas.width = w; canvas.height = h;
    ctx.clearRect(0, 0, w, h);
    var span = Math.max(1, S.maxTick), x0 = 8, x1 = w - 8;
    S.eventTicks.forEach(function (tick) {
      var recs = S.tickEvents.get(tick), colour = null, tall = false;
      recs.forEach(function (r) {
        var c = isIssue(r.ev) ? MARK_COLOURS.issue : MARK_COLOURS[r.ev.kind];
        if (isIssue(r.ev)) { tall = true; colour = c; } else if (!tall && c && (!colour || r.ev.kind === "recovery")) { colour = c; }
      });
      if (!colour) { colour = "#999"; }
      var x = Math.round(x0 + (x1 - x0) * tick / span);
      ctx.fillStyle = colour;
      ctx.fillRect(x - 1, tall ? 0 : 7, tall ? 3 : 2, tall ? h : h - 7);
    });
    var cx = x0 + (x1 - x0) * S.tick / span;
    ctx.fillStyle = "rgba(230,81,0,0.25)"; ctx.fillRect(cx - 3, 0, 6, h);
  }

  // ------------------------------------------------------------------ details of the selected node
  function verdictHtml(rec, tick) {
    var v = rec.ev.verdict || {}, issue = isIssue(rec.ev);
    var html = '<details class="verdict' + (rec.tick > tick ? " later" : "") + '"' + (issue ? " open" : "") + "><summary>tick " + esc(rec.tick) +
      ' \u00b7 <span class="cat ' + (issue ? "issue" : "ok") + '">' + esc(v.category) + "</span> (" + esc(v.final_response) + ")" +
      (v.elapsed_s != null ? ' <span class="meta">' + esc(v.elapsed_s) + " s</span>" : "") + "</summary>";
    html += "<p>" + esc(v.explanation) + "</p>";
    var trace = v.trace || [];
    if (trace.length) {
      html += "<div><b>Ground / Ask / Answer / Issue</b></div><table class=\"trace\">";
      trace.forEach(function (m) {
        var role = String(m.role || m.kind || "");
        html += '<tr class="r-' + esc(role) + '"><td class="role">' + esc(role) + "</td><td>" + esc(m.content == null ? JSON.stringify(m.tool_calls || "") : m.content) + "</td></tr>";
      });
      html += "</table>";
    }
    if ((v.questions || []).length) {
      html += "<div><b>Questions asked</b></div><ul>" + v.questions.map(function (q) { return "<li>" + esc(q) + "</li>"; }).join("") + "</ul>";
    }
    if ((v.tool_calls || []).length) {
      html += "<details><summary>" + v.tool_calls.length + " tool calls</summary><ul>" + v.tool_calls.map(function (c) {
        var res = c.error ? "error: " + c.error : JSON.stringify(c.result);
        if (res && res.length > 300) { res = res.slice(0, 299) + "\u2026"; }
        return "<li><code>" + esc(c.tool) + "(" + esc((c.args || []).map(function (a) { return JSON.stringify(a); }).join(", ")) + ")</code> \u2192 " + esc(res) + "</li>";
      }).join("") + "</ul></details>";
    }
    var grounding = v.grounding || {};
    var keys = Object.keys(grounding);
    if (keys.length) {
      html += "<div><b>Grounding</b></div><ul>" + keys.map(function (k) { return "<li>" + esc(k) + " \u2192 " + esc(grounding[k].join(", ")) + "</li>"; }).join("") + "</ul>";
    }
    return html + "</details>";
  }
  function recoveryHtml(rec, tick) {
    var ev = rec.ev;
    var html = '<details class="recovery' + (rec.tick > tick ? " later" : "") + '" open><summary>tick ' + esc(rec.tick) + " \u00b7 recovery code" +
      (ev.proposals > 1 ? " (" + esc(ev.proposals) + " proposals)" : "") + (ev.gives_up ? " \u00b7 gives up" : "") + "</summary>";
    html += "<pre>" + esc(ev.code || ev.text) + "</pre>";
    if ((ev.compiled || []).length) {
      html += '<div><b>Compiled to</b> <a data-select="' + esc(ev.subtree) + '">show</a></div><div class="compiled">' + ev.compiled.map(function (c) {
        return "<div>" + esc(new Array(c.depth + 1).join("  ") + c.name) + ' <span class="meta">' + esc(c.type) + "</span></div>";
      }).join("") + "</div>";
    }
    if ((ev.rejected || []).length) {
      html += "<div><b>Rejected proposals</b></div><ul>" + ev.rejected.map(function (r) { return "<li>" + esc(r) + "</li>"; }).join("") + "</ul>";
    }
    return html + "</details>";
  }
  function guardOf(n) { // the guard whose recovery subtree holds n
    var m = n;
    while (m && !m.recovery) { m = S.nodes.get(m.parent); }
    return m ? S.nodes.get(m.parent) : null;
  }
  function summaryHtml(tick) {
    var issues = 0, recoveries = 0;
    S.events.forEach(function (r) { if (isIssue(r.ev)) { issues++; } if (r.ev.kind === "recovery") { recoveries++; } });
    var html = "<h2>" + esc(S.header ? S.header.title : "trace") + "</h2><div class=\"meta\">" + S.maxTick + " ticks \u00b7 " +
      issues + " issues \u00b7 " + recoveries + " recoveries" + (S.header && S.header.started ? " \u00b7 started " + esc(S.header.started) : "") + "</div>";
    var guards = S.order.filter(function (n) { return n.guard; });
    if (guards.length) {
      html += "<h3>Guards</h3><p class=\"meta\">click a guard (here or in the tree) for its checks and recoveries</p><ul>";
      guards.forEach(function (g) {
        var cats = g.evs.filter(function (r) { return r.ev.kind === "verdict"; }).map(function (r) {
          return '<span class="cat ' + (isIssue(r.ev) ? "issue" : "ok") + '">' + esc(r.ev.verdict.category) + "</span>";
        });
        html += '<li><a data-select="' + g.id + '">' + esc(g.name) + "</a> " + (cats.join(" \u2192 ") || '<span class="meta">not checked</span>') + "</li>";
      });
      html += "</ul>";
    }
    return html;
  }
  function renderDetails() {
    var box = $("details"), tick = S.tick, n = S.nodes.get(S.selected);
    if (!n) { box.innerHTML = summaryHtml(tick); return; }
    var status = valueAt(n.status, tick, "INVALID"), fb = valueAt(n.feedback, tick, "");
    var html = '<div class="meta"><a data-select="">\u2190 all guards</a></div><h2>' + esc(n.name) + '</h2><div class="meta">' + esc(n.type) + " \u00b7 " + esc(n.shape) +
      (n.guard ? " \u00b7 guard" : "") + "</div>";
    html += '<div class="kv"><span>at tick</span><span>' + tick + '</span><span>status</span><span><span class="badge" data-status="' + esc(status) + '">' + esc(status) +
      "</span></span><span>feedback</span><span>" + (esc(fb) || "\u2014") + "</span>";
    if (!alive(n, tick)) { html += "<span>in tree</span><span>" + (tick < n.born ? "from tick " + n.born : "until tick " + n.gone) + "</span>"; }
    if (n.guard) {
      html += "<span>phase</span><span>" + esc(valueAt(n.phase, tick, "idle")) + "</span><span>attempts</span><span>" + esc(valueAt(n.attempts, tick, 0)) +
        "</span><span>query</span><span>" + esc(valueAt(n.query, tick, "") || "\u2014") + "</span>";
    }
    html += "</div>";
    var owner = guardOf(n);
    if (owner && !n.guard) { html += '<p>Part of the recovery of <a data-select="' + owner.id + '">' + esc(owner.name) + "</a></p>"; }
    if (n.guard) {
      var verdicts = n.evs.filter(function (r) { return r.ev.kind === "verdict"; });
      var recoveries = n.evs.filter(function (r) { return r.ev.kind === "recovery"; });
      html += "<h3>Checks (" + verdicts.length + ")</h3>" + (verdicts.map(function (r) { return verdictHtml(r, tick); }).join("") || '<p class="meta">none yet</p>');
      html += "<h3>Recoveries (" + recoveries.length + ")</h3>" + (recoveries.map(function (r) { return recoveryHtml(r, tick); }).join("") || '<p class="meta">none</p>');
    }
    var own = n.evs.filter(function (r) { return r.ev.kind !== "verdict" && r.ev.kind !== "recovery"; });
    if (own.length) {
      html += "<h3>Events (" + own.length + ")</h3><div>" + own.map(eventRow).join("") + "</div>";
    }
    box.innerHTML = html;
  }

  // ------------------------------------------------------------------ state changes
  function setTick(tick) {
    tick = Math.max(0, Math.min(S.maxTick, Math.round(tick)));
    S.tick = tick;
    $("slider").value = String(tick);
    if (drawTree(tick)) { /* new nodes drawn */ }
    paint(tick);
    var root = S.order[0], rs = root ? valueAt(root.status, tick, "INVALID") : "INVALID";
    $("root-status").setAttribute("data-status", rs);
    $("root-status").textContent = "tree: " + rs;
    var t = valueAt(S.times, tick, 0);
    $("tick-label").textContent = "tick " + tick + " / " + S.maxTick + " \u00b7 t = " + Number(t).toFixed(2) + " s";
    markRows(tick);
    drawMarks();
    renderDetails();
  }
  function select(id) {
    S.selected = id === "" || id == null ? null : id;
    paint(S.tick);
    renderDetails();
  }
  function stepToEvent(dir) {
    var ticks = S.eventTicks, target = null;
    for (var i = 0; i < ticks.length; i++) {
      if (dir > 0 && ticks[i] > S.tick) { target = ticks[i]; break; }
      if (dir < 0 && ticks[i] < S.tick) { target = ticks[i]; }
    }
    if (target != null) { setTick(target); }
  }
  function play() {
    if (S.playing) { clearInterval(S.playing); S.playing = null; $("play").textContent = "play"; return; }
    if (S.tick >= S.maxTick) { setTick(0); }
    $("play").textContent = "pause";
    var last = performance.now(), carry = 0;
    S.playing = setInterval(function () {
      var now = performance.now(), speed = +$("speed").value;
      carry += (now - last) / 1000 * speed; last = now;
      var steps = Math.floor(carry);
      if (!steps) { return; }
      carry -= steps;
      if (S.tick >= S.maxTick) { if (S.finished) { play(); } return; }
      setTick(S.tick + steps);
    }, 40);
  }
  function setupControls() {
    $("slider").addEventListener("input", function () { setTick(+this.value); });
    $("first").addEventListener("click", function () { setTick(0); });
    $("last").addEventListener("click", function () { setTick(S.maxTick); });
    $("back").addEventListener("click", function () { setTick(S.tick - 1); });
    $("forward").addEventListener("click", function () { setTick(S.tick + 1); });
    $("prev-event").addEventListener("click", function () { stepToEvent(-1); });
    $("next-event").addEventListener("click", function () { stepToEvent(1); });
    $("play").addEventListener("click", play);
    $("issues-only").addEventListener("change", function () { $("events").classList.toggle("issues-only", this.checked); });
    $("marks").addEventListener("click", function (e) {
      var r = this.getBoundingClientRect();
      setTick((e.clientX - r.left - 8) / Math.max(1, r.width - 16) * S.maxTick);
    });
    $("events").addEventListener("click", function (e) {
      var row = e.target.closest ? e.target.closest(".ev") : null;
      if (!row) { return; }
      var rec = S.events[+row.getAttribute("data-index")];
      S.selected = rec.ev.node == null ? S.selected : rec.ev.node;
      setTick(rec.tick);
    });
    $("details").addEventListener("click", function (e) {
      var a = e.target.closest ? e.target.closest("[data-select]") : null;
      if (a) { var v = a.getAttribute("data-select"); select(v === "" ? null : +v); return; }
      var row = e.target.closest ? e.target.closest(".ev") : null;
      if (row) { setTick(S.events[+row.getAttribute("data-index")].tick); }
    });
    document.addEventListener("keydown", function (e) {
      if (e.target && /INPUT|SELECT|TEXTAREA/.test(e.target.tagName)) { return; }
      if (e.key === "ArrowRight") { setTick(S.tick + 1); } else if (e.key === "ArrowLeft") { setTick(S.tick - 1); } else if (e.key === " ") { e.preventDefault(); play(); } else { return; }
    });
  }

  // ------------------------------------------------------------------ loading, and following a live run
  function start(trace) {
    S.header = trace;
    S.finished = trace.finished !== false;
    $("title").textContent = trace.title || "trace";
    document.title = (trace.title || "trace") + " \u2014 bt_raider";
    var t0 = performance.now(), times = window.btViewer.timings;
    (trace.ticks || []).forEach(ingest);
    S.maxTick = Math.max(S.maxTick, trace.tick_count || 0);
    window.btViewer.loadedTicks = S.maxTick; // what came with the page; the rest came live
    $("slider").max = String(S.maxTick);
    times.ingest = performance.now() - t0; t0 = performance.now();
    appendRows(0);
    times.events = performance.now() - t0; t0 = performance.now();
    if (!S.order.length) { $("message").hidden = false; $("message").textContent = "The trace has no tree."; }
    setTick(S.maxTick);
    times.draw = performance.now() - t0; t0 = performance.now();
    document.body.getBoundingClientRect(); $("events").scrollHeight;
    times.layout = performance.now() - t0;
    if (!S.finished) { follow(); }
    window.btViewer.loadMs = performance.now();
    window.btViewer.ready = true;
  }
  function follow() {
    if (!window.EventSource) { return; }
    $("live").hidden = false;
    var source = new EventSource("events?from=" + S.entries), pending = false, shownEvents = S.events.length;
    S.source = source;
    function refresh() {
      pending = false;
      window.btViewer.liveUpdates += 1;
      var atEnd = S.tick >= +$("slider").max;
      $("slider").max = String(S.maxTick);
      appendRows(shownEvents); shownEvents = S.events.length;
      if (atEnd && !S.playing) { setTick(S.maxTick); } else { setTick(S.tick); }
    }
    source.addEventListener("tick", function (e) {
      ingest(JSON.parse(e.data));
      if (!pending) { pending = true; requestAnimationFrame(refresh); }
    });
    source.addEventListener("end", function (e) {
      source.close();
      var header = JSON.parse(e.data);
      S.finished = true; S.header.finished = true;
      S.maxTick = Math.max(S.maxTick, header.tick_count || 0);
      $("live").hidden = true;
      refresh();
      window.btViewer.finished = true;
    });
  }

  window.btViewer = { state: S, setTick: setTick, select: select, ready: false, finished: false, loadMs: null, timings: {}, loadedTicks: 0, liveUpdates: 0 };
  setupPanZoom();
  setupControls();
  var embedded = document.getElementById("bt-trace");
  if (embedded) {
    var t0 = performance.now(), trace = JSON.parse(embedded.textContent);
    window.btViewer.timings.parse = performance.now() - t0;
    start(trace);
    window.btViewer.finished = true;
  } else {
    fetch("trace.json", { cache: "no-store" }).then(function (r) {
      if (!r.ok) { throw new Error("HTTP " + r.status); }
      return r.text();
    }).then(function (text) {
      var t0 = performance.now(), trace = JSON.parse(text);
      window.btViewer.timings.parse = performance.now() - t0;
      start(trace);
      if (S.finished) { window.btViewer.finished = true; }
    }).catch(function (err) {
      $("message").hidden = false;
      $("message").textContent = "Could not load the trace: " + err.message;
    });
  }
})();
