/**
 * The HTML report's script (inline, run once at load). It unpacks the records (gzipped JSON, in base64), aggregates
 * them in one pass, and builds every element with createElement and textContent: a record's text is never parsed as
 * HTML. Charts are canvases; the call list is paged, so a 100k-record audit costs one pass and one page of rows.
 * Plain ES2020 in a string, written for the browser (this workspace's TypeScript has no DOM types).
 */
export const reportScript = String.raw`"use strict";
(function () {
  var started = performance.now();
  var meta = JSON.parse(document.getElementById("audit-meta").textContent);
  var packed = document.getElementById("audit-records").textContent.trim();
  var raw = typeof Uint8Array.fromBase64 === "function" ? Uint8Array.fromBase64(packed) : Uint8Array.from(atob(packed), function (c) { return c.charCodeAt(0); });
  new Response(new Blob([raw]).stream().pipeThrough(new DecompressionStream("gzip"))).text().then(function (text) {
    document.documentElement.setAttribute("data-unpack-ms", String(Math.round(performance.now() - started)));
    render(JSON.parse(text), Math.round(performance.now() - started));
  }).catch(function (e) {
    document.getElementById("summary").textContent = "The records could not be read: " + String(e);
    console.error(e);
  });

function render(records, parsed) {
  var where = meta.where;
  var n = records.length;
  var Lifecycle = { session_start: 1, list_tools: 1, session_end: 1 };
  var Healthy = { replied: 1, not_subscribed: 1, not_matched: 1 };
  var PageSize = 100;
  var Headers = ["#", "time", "session", "call", "event", "tool", "args", "decision", "reasons", "took"];
  var chosen = -1;
  var list;

  function isObj(u) { return typeof u === "object" && u !== null && !Array.isArray(u); }
  function str(u) { return typeof u === "string" ? u : ""; }
  function num(u) { return typeof u === "number" && isFinite(u) ? u : 0; }
  function arr(u) { return Array.isArray(u) ? u : []; }
  function json(u, max) {
    var s;
    try { s = JSON.stringify(u); } catch (e) { s = String(u); }
    if (s === undefined) s = String(u);
    return max !== undefined && s.length > max ? s.slice(0, max - 1) + "\u2026" : s;
  }
  function same(a, b) { return json(a) === json(b); }
  function ms(x) { return (x < 10 ? Math.round(x * 10) / 10 : Math.round(x)) + " ms"; }
  function el(tag, className, text) {
    var e = document.createElement(tag);
    if (className) e.className = className;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function add(parent) {
    for (var i = 1; i < arguments.length; i++) {
      var c = arguments[i];
      if (c === null || c === undefined) continue;
      parent.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    }
    return parent;
  }
  function row(cells, classes) {
    var tr = document.createElement("tr");
    for (var i = 0; i < cells.length; i++) {
      var c = cells[i];
      var td = el("td", classes && classes[i] ? classes[i] : "");
      if (c instanceof Node) td.appendChild(c); else td.textContent = c === undefined || c === null ? "" : String(c);
      tr.appendChild(td);
    }
    return tr;
  }
  function table(headers, numeric) {
    var t = el("table");
    var tr = document.createElement("tr");
    headers.forEach(function (h, i) { tr.appendChild(el("th", numeric && numeric[i] ? "num" : "", h)); });
    add(t, add(el("thead"), tr));
    var body = el("tbody");
    t.appendChild(body);
    return { table: t, body: body };
  }
  function section(id) { return document.getElementById(id); }
  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }
  function quantile(sorted, q) {
    if (sorted.length === 0) return 0;
    return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
  }
  function fileOf(i) { return meta.files[where[2 * i]] + ":" + where[2 * i + 1]; }

  // ---- one pass over the records --------------------------------------------------------------------------
  var times = new Float64Array(n);
  var decision = new Array(n);
  var exts = new Map();
  var deaths = [];
  var deathSeen = new Set();
  var byCall = new Map();
  var vetoes = new Map();
  var counts = { allow: 0, ask: 0, deny: 0, other: 0 };
  var tmin = Infinity, tmax = -Infinity;
  function ext(name) {
    var e = exts.get(name);
    if (!e) { e = { name: name, lat: [], latT: [], failures: 0, allows: 0 }; exts.set(name, e); }
    return e;
  }
  function veto(name) {
    var v = vetoes.get(name);
    if (!v) { v = { name: name, deny: [], ask: [], rewrote: [] }; vetoes.set(name, v); }
    return v;
  }
  function outcomeOf(r) {
    var o = r.outcome;
    if (r.event !== "tool_call" || !isObj(o)) return null;
    var d = o.decision;
    return d === "allow" || d === "ask" || d === "deny" ? o : null;
  }
  for (var i = 0; i < n; i++) {
    var r = records[i];
    var t = Date.parse(str(r.time));
    times[i] = t;
    if (isFinite(t)) { if (t < tmin) tmin = t; if (t > tmax) tmax = t; }
    var o = outcomeOf(r);
    decision[i] = o ? o.decision : "";
    if (o) counts[o.decision]++; else counts.other++;
    if (typeof r.call_id === "string") {
      var key = str(r.session_id) + "\u0000" + r.call_id;
      var group = byCall.get(key);
      if (group) group.push(i); else byCall.set(key, [i]);
    }
    var rounds = arr(r.rounds);
    for (var k = 0; k < rounds.length; k++) {
      var xs = arr(rounds[k] && rounds[k].exchanges);
      for (var j = 0; j < xs.length; j++) {
        var x = xs[j];
        if (!isObj(x)) continue;
        var status = str(x.status);
        if (status === "not_subscribed") continue;
        var e = ext(str(x.extension));
        if (status === "replied") {
          if (!Lifecycle[r.event]) { e.lat.push(num(x.latency_ms)); e.latT.push(t); }
          var reply = x.reply;
          if (r.event === "tool_call" && isObj(reply) && typeof reply.reason === "string" && reply.reason !== "" &&
            reply.block !== true && reply.ask !== true) e.allows++;
        } else if (!Healthy[status]) {
          e.failures++;
          var dkey = where[2 * i] + "\u0000" + str(r.session_id) + "\u0000" + e.name;
          if (!deathSeen.has(dkey)) { deathSeen.add(dkey); deaths.push({ ext: e.name, i: i, status: status, error: str(x.error), stderr: x.stderr }); }
        }
      }
    }
    if (o) {
      if (o.decision !== "allow") arr(o.reasons).forEach(function (reason) {
        if (isObj(reason)) veto(str(reason.extension))[o.decision].push(i);
      });
      arr(o.rewrittenBy).forEach(function (name) { veto(str(name)).rewrote.push(i); });
    }
  }
  var aggregated = Math.round(performance.now() - started);
  var names = Array.from(exts.keys()).sort();
  names.forEach(function (name) {
    var e = exts.get(name);
    e.sorted = Float64Array.from(e.lat).sort();
  });

  // ---- summary -----------------------------------------------------------------------------------------------
  (function () {
    var s = section("summary");
    clear(s);
    var calls = counts.allow + counts.ask + counts.deny;
    add(s, el("p", "", n + " records from " + meta.files.length + " file(s): " + calls + " tool calls (" +
      counts.deny + " denied, " + counts.ask + " asked, " + counts.allow + " allowed), " + counts.other + " other events" +
      (isFinite(tmin) ? "; from " + new Date(tmin).toISOString() + " to " + new Date(tmax).toISOString() : "") + "."));
    add(s, el("p", "dim", "Files: " + meta.files.join(", ")));
    if (meta.bad.length > 0) {
      var d = add(el("details"), el("summary", "bad", meta.bad.length + " line(s) were not audit records and are not shown"));
      var ul = el("ul");
      meta.bad.slice(0, 200).forEach(function (b) { add(ul, el("li", "mono", b.file + ":" + b.line + ": " + b.problem)); });
      if (meta.bad.length > 200) add(ul, el("li", "dim", "and " + (meta.bad.length - 200) + " more"));
      add(s, add(d, ul));
    }
  })();

  // ---- decisions over time -----------------------------------------------------------------------------------
  (function () {
    var s = section("decisions");
    var legend = el("p");
    [["deny", "--deny"], ["ask", "--ask"], ["allow", "--allow"]].forEach(function (p) {
      var sw = el("span", "swatch");
      sw.style.background = "var(" + p[1] + ")";
      add(legend, sw, p[0] + " " + counts[p[0]]);
    });
    add(s, legend);
    var canvas = el("canvas");
    canvas.width = 1000; canvas.height = 160;
    canvas.setAttribute("aria-label", "tool calls over time by verdict");
    add(s, canvas);
    add(s, el("p", "dim", isFinite(tmin) ? new Date(tmin).toISOString() + "  \u2192  " + new Date(tmax).toISOString() : "no times"));
    var B = 100, span = Math.max(1, tmax - tmin);
    var bucket = { allow: new Uint32Array(B), ask: new Uint32Array(B), deny: new Uint32Array(B) };
    for (var i = 0; i < n; i++) {
      if (decision[i] === "" || !isFinite(times[i])) continue;
      bucket[decision[i]][Math.min(B - 1, Math.floor((times[i] - tmin) / span * B))]++;
    }
    var top = 1;
    for (var b = 0; b < B; b++) top = Math.max(top, bucket.allow[b] + bucket.ask[b] + bucket.deny[b]);
    var g = canvas.getContext("2d");
    var css = getComputedStyle(document.documentElement);
    var colour = { deny: css.getPropertyValue("--deny"), ask: css.getPropertyValue("--ask"), allow: css.getPropertyValue("--allow") };
    var w = canvas.width / B, h = canvas.height - 10;
    for (var b2 = 0; b2 < B; b2++) {
      var y = canvas.height;
      ["deny", "ask", "allow"].forEach(function (v) {
        var bh = bucket[v][b2] / top * h;
        if (bh <= 0) return;
        g.fillStyle = colour[v];
        g.fillRect(b2 * w + 1, y - bh, Math.max(1, w - 2), bh);
        y -= bh;
      });
    }
    g.fillStyle = "#6b6b70"; g.font = "11px sans-serif"; g.fillText(String(top) + " per bar", 4, 12);
  })();

  // ---- latency per extension -----------------------------------------------------------------------------------
  (function () {
    var s = section("latency");
    add(s, el("p", "dim", "Replies to the agent's events (startup and close left out). The timeline plots each reply's latency at its time; above p99 \u00d7 1.5, at the top in red."));
    var t = table(["extension", "replies", "p50", "p99", "max", "failures", "allows ignored", "timeline"], [0, 1, 1, 1, 1, 1, 1, 0]);
    var span = Math.max(1, tmax - tmin);
    names.forEach(function (name) {
      var e = exts.get(name), sorted = e.sorted;
      var canvas = el("canvas");
      canvas.width = 420; canvas.height = 34;
      var g = canvas.getContext("2d");
      var cap = Math.max(1, quantile(sorted, 0.99) * 1.5);
      for (var i = 0; i < e.lat.length; i++) {
        var over = e.lat[i] > cap;
        g.fillStyle = over ? "#c62828" : "#3f51b5";
        var x = isFinite(e.latT[i]) ? (e.latT[i] - tmin) / span * (canvas.width - 2) : 0;
        var y = over ? 1 : canvas.height - 2 - e.lat[i] / cap * (canvas.height - 4);
        g.fillRect(x, y, 2, 2);
      }
      add(t.body, row([name, sorted.length, sorted.length ? ms(quantile(sorted, 0.5)) : "\u2014",
        sorted.length ? ms(quantile(sorted, 0.99)) : "\u2014", sorted.length ? ms(sorted[sorted.length - 1]) : "\u2014",
        e.failures, e.allows, canvas], ["mono", "num", "num", "num", "num", e.failures ? "num failed" : "num", "num", ""]));
    });
    add(s, names.length ? t.table : el("p", "dim", "No extension took part."));
  })();

  // ---- deaths -----------------------------------------------------------------------------------------------------
  (function () {
    var s = section("deaths");
    if (deaths.length === 0) { add(s, el("p", "dim", "No extension failed.")); return; }
    add(s, el("p", "dim", "The first failure of each extension in each session; every later record shows it dead. Click a row for the record."));
    var t = table(["extension", "session", "time", "record", "status", "cause", "its stderr"]);
    deaths.forEach(function (d) {
      var r = records[d.i];
      var stderr = typeof d.stderr === "string" ? d.stderr
        : isObj(d.stderr) ? num(d.stderr.bytes) + " bytes, sha256 " + str(d.stderr.sha256).slice(0, 12) + "\u2026 (kept with --audit-content full)" : "";
      var tr = row([d.ext, str(r.session_id), str(r.time), (typeof r.call_id === "string" ? r.call_id + " " : "") + str(r.event),
        d.status, d.error, stderr], ["mono", "mono", "mono", "mono", "failed", "", "mono"]);
      pickable(tr, d.i);
      add(t.body, tr);
    });
    add(s, t.table);
  })();

  // ---- what each denied, asked for or rewrote -------------------------------------------------------------------------
  (function () {
    var s = section("vetoes");
    var who = Array.from(vetoes.keys()).sort();
    if (who.length === 0) { add(s, el("p", "dim", "Nothing was denied, asked for or rewritten.")); return; }
    add(s, el("p", "dim", "By the reasons of each decision (the extension, or \"policy\" for the operator's rules) and the extensions that rewrote the args. Click a call for its record."));
    who.forEach(function (name) {
      var v = vetoes.get(name);
      var d = el("details");
      d.setAttribute("data-extension", name);
      add(d, el("summary", "", name + ": denied " + v.deny.length + ", asked " + v.ask.length + ", rewrote " + v.rewrote.length));
      [["denied", v.deny], ["asked", v.ask], ["rewrote", v.rewrote]].forEach(function (p) {
        if (p[1].length === 0) return;
        add(d, el("div", "round", p[0]));
        var box = el("div");
        add(d, box);
        callTable(box, p[1], name);
      });
      add(s, d);
    });
  })();

  // ---- the calls, paged, and a drill-down ---------------------------------------------------------------------------
  function pickable(tr, i) {
    tr.className = "pick";
    tr.setAttribute("data-record", String(i));
    tr.tabIndex = 0;
    tr.addEventListener("click", function () { drill(i); });
    tr.addEventListener("keydown", function (e) { if (e.key === "Enter") drill(i); });
  }
  function reasonsOf(i) {
    var o = outcomeOf(records[i]);
    return o ? arr(o.reasons).map(function (x) { return isObj(x) ? str(x.extension) + ": " + str(x.reason) : ""; }).join("; ") : "";
  }
  function callRow(i) {
    var r = records[i];
    var d = decision[i];
    var tr = row([i + 1, str(r.time), str(r.session_id), typeof r.call_id === "string" ? r.call_id : "", str(r.event),
      typeof r.tool === "string" ? r.tool : "", r.args !== undefined ? json(r.args, 160) : "", d, reasonsOf(i), ms(num(r.duration_ms))],
      ["num", "mono", "mono", "mono", "", "mono", "mono clip", d, "clip", "num"]);
    pickable(tr, i);
    if (i === chosen) tr.className += " chosen";
    return tr;
  }
  /** A paged table of the records in indices, in box. */
  function callTable(box, indices, label) {
    var page = 0;
    var t = table(Headers, [1, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
    var nav = el("div", "controls");
    var prev = el("button", "", "\u2190 previous"), next = el("button", "", "next \u2192"), info = el("span", "dim");
    prev.type = next.type = "button";
    add(nav, prev, next, info);
    function draw() {
      var pages = Math.max(1, Math.ceil(indices.length / PageSize));
      page = Math.max(0, Math.min(page, pages - 1));
      clear(t.body);
      var end = Math.min(indices.length, (page + 1) * PageSize);
      for (var k = page * PageSize; k < end; k++) t.body.appendChild(callRow(indices[k]));
      info.textContent = indices.length === 0 ? "no records" :
        "records " + (page * PageSize + 1) + "\u2013" + end + " of " + indices.length + " (page " + (page + 1) + " of " + pages + ")";
      prev.disabled = page === 0; next.disabled = page >= pages - 1;
    }
    prev.addEventListener("click", function () { page--; draw(); });
    next.addEventListener("click", function () { page++; draw(); });
    clear(box);
    if (label) t.table.setAttribute("data-list", label);
    add(box, nav, t.table);
    draw();
    return { redraw: draw, show: function (i) { var k = indices.indexOf(i); if (k >= 0) { page = Math.floor(k / PageSize); draw(); } } };
  }

  (function () {
    var s = section("calls");
    var controls = el("div", "controls");
    var search = el("input");
    search.type = "search"; search.placeholder = "call id, tool, event, session, args\u2026"; search.id = "search";
    var verdict = el("select"); verdict.id = "verdict";
    [["", "every record"], ["deny", "denied"], ["ask", "asked"], ["allow", "allowed"], ["none", "other events"]].forEach(function (p) {
      var opt = el("option", "", p[1]); opt.value = p[0]; verdict.appendChild(opt);
    });
    var who = el("select"); who.id = "who";
    var any = el("option", "", "any extension"); any.value = ""; who.appendChild(any);
    names.forEach(function (name) { var opt = el("option", "", name); opt.value = name; who.appendChild(opt); });
    add(controls, search, verdict, who);
    var box = el("div");
    add(s, controls, box);
    var all = new Array(n);
    for (var i = 0; i < n; i++) all[i] = i;
    var haystack = null;
    function asked(r, name) {
      return arr(r.rounds).some(function (round) {
        return arr(round && round.exchanges).some(function (x) {
          return isObj(x) && x.extension === name && x.status !== "not_subscribed" && x.status !== "not_matched";
        });
      });
    }
    function apply() {
      var q = search.value.trim().toLowerCase(), v = verdict.value, name = who.value;
      if (q !== "" && haystack === null) {
        haystack = new Array(n);
        for (var i = 0; i < n; i++) {
          var r = records[i];
          haystack[i] = [r.call_id, r.tool, r.event, r.session_id, r.args !== undefined ? json(r.args) : ""].join("\u0000").toLowerCase();
        }
      }
      var picked = [];
      for (var j = 0; j < n; j++) {
        if (v !== "" && (v === "none" ? decision[j] !== "" : decision[j] !== v)) continue;
        if (q !== "" && haystack[j].indexOf(q) < 0) continue;
        if (name !== "" && !asked(records[j], name)) continue;
        picked.push(j);
      }
      list = callTable(box, picked, "calls");
    }
    search.addEventListener("input", apply);
    verdict.addEventListener("change", apply);
    who.addEventListener("change", apply);
    list = callTable(box, all, "calls");
  })();

  function said(event, reply, current) {
    if (!isObj(reply) || Object.keys(reply).length === 0) return "no opinion";
    if (event === "tool_call") {
      var parts = [];
      if (reply.block === true) parts.push("BLOCK");
      if (reply.ask === true) parts.push("ASK");
      if (typeof reply.reason === "string") parts.push(json(reply.reason, 200));
      if (reply.args !== undefined) parts.push(current !== undefined && same(reply.args, current) ? "args unchanged" : "rewrite args \u2192 " + json(reply.args, 200));
      return parts.length ? parts.join(" ") : "no opinion";
    }
    return Object.keys(reply).map(function (k) { return k + ": " + json(reply[k], 120); }).join(", ");
  }

  function drill(i) {
    chosen = i;
    var box = section("drill");
    clear(box);
    var r = records[i];
    var previous = document.querySelectorAll("tr.chosen");
    for (var p = 0; p < previous.length; p++) previous[p].classList.remove("chosen");
    var rows = document.querySelectorAll('tr[data-record="' + i + '"]');
    for (var q = 0; q < rows.length; q++) rows[q].classList.add("chosen");
    box.setAttribute("data-record", String(i));
    add(box, el("h3", "mono", (typeof r.call_id === "string" ? r.call_id + " " : "") + str(r.event) + (typeof r.tool === "string" ? " " + r.tool : "")));
    add(box, el("p", "dim", "session " + str(r.session_id) + ", seq " + num(r.seq) + ", " + str(r.time) + ", took " + ms(num(r.duration_ms)) + "; " + fileOf(i)));
    if (r.args !== undefined) add(box, el("div", "round", "args as the agent passed them"), el("pre", "", JSON.stringify(r.args, null, 2)));
    var current = r.event === "tool_call" ? r.args : undefined;
    var rounds = arr(r.rounds);
    rounds.forEach(function (round) {
      add(box, el("div", "round", "round " + num(round && round.round)));
      var t = table(["extension", "status", "latency", "said", "ignored fields"], [0, 0, 1, 0, 0]);
      var next = current;
      arr(round && round.exchanges).forEach(function (x) {
        if (!isObj(x) || x.status === "not_subscribed") return;
        var status = str(x.status), text, cls = "";
        if (status === "replied") {
          text = said(r.event, x.reply, current);
          if (r.event === "tool_call" && isObj(x.reply) && typeof x.reply.reason === "string" && x.reply.reason !== "" && x.reply.block !== true && x.reply.ask !== true)
            text += " (an allow: ignored, an extension may veto, never permit)";
          if (next === current && current !== undefined && isObj(x.reply) && x.reply.args !== undefined && !same(x.reply.args, current)) next = x.reply.args;
        } else if (status === "not_matched") {
          text = "not matched: skipped by its match rules, not written";
        } else {
          cls = "failed";
          text = status.toUpperCase() + ": " + (str(x.error) || "no reply") +
            (typeof x.stderr === "string" ? "; its stderr: " + x.stderr : isObj(x.stderr) ? "; its stderr: " + num(x.stderr.bytes) + " bytes (kept with --audit-content full)" : "");
        }
        add(t.body, row([str(x.extension), status, status === "not_matched" ? "\u2014" : ms(num(x.latency_ms)), text, arr(x.ignored).join(", ")],
          ["mono", cls, "num", cls, "dim"]));
      });
      current = next;
      add(box, t.table);
    });
    var notes = arr(r.notes);
    if (notes.length) {
      var ul = el("ul");
      notes.forEach(function (note) { add(ul, el("li", "mono", str(note))); });
      add(box, el("div", "round", "notes"), ul);
    }
    var o = outcomeOf(r);
    var out = el("p");
    if (o) {
      add(out, el("span", o.decision, o.decision.toUpperCase()));
      var reasons = reasonsOf(i);
      if (reasons) add(out, " (" + reasons + ")");
      if (typeof o.rounds === "number") add(out, " after " + o.rounds + " round" + (o.rounds === 1 ? "" : "s"));
      if (o.args !== undefined && r.args !== undefined && !same(o.args, r.args))
        add(out, "; args rewritten to " + json(o.args, 300) + (arr(o.rewrittenBy).length ? " by " + arr(o.rewrittenBy).join(", ") : ""));
    } else {
      add(out, "outcome: " + json(r.outcome, 400));
    }
    add(box, el("div", "round", "decided"), out);
    if (typeof r.call_id === "string") {
      var others = (byCall.get(str(r.session_id) + "\u0000" + r.call_id) || []).filter(function (k) { return k !== i; });
      if (others.length) {
        var ol = el("div", "controls");
        add(ol, "other records of this call:");
        others.slice(0, 20).forEach(function (k) {
          var b = el("button", "", "#" + (k + 1) + " " + str(records[k].event));
          b.type = "button";
          b.addEventListener("click", function () { drill(k); });
          ol.appendChild(b);
        });
        add(box, ol);
      }
    }
    add(box, add(el("details"), el("summary", "", "the record as written"), el("pre", "", JSON.stringify(r, null, 2))));
    box.scrollIntoView({ block: "nearest" });
  }

  var took = Math.round(performance.now() - started);
  add(section("footer"), el("p", "dim", "Built in the browser in " + took + " ms from " + n + " records."));
  document.documentElement.setAttribute("data-render-ms", String(took));
  document.documentElement.setAttribute("data-parse-ms", String(parsed));
  document.documentElement.setAttribute("data-aggregate-ms", String(aggregated - parsed));
  document.documentElement.setAttribute("data-ready", "1");
}
})();
`
