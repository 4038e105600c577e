import { reportCalls } from "./ReportCalls.ts"

/**
 * The HTML report's script (inline, run once at load). The CLI has done the counting (ReportData.ts): the script
 * unpacks and parses that one block, draws the charts and tables from it, and builds every element with createElement and
 * textContent: a record's text is never parsed as HTML. Charts are canvases; the call list is paged; a record is
 * unpacked (its gzipped chunk of lines) and parsed only when its drill-down is opened.
 * Plain ES2020 in a string, written for the browser (this workspace's TypeScript has no DOM types).
 */
/** The script up to the call list: set-up, unpacking, the summary, the charts and the per-extension tables. */
const overview = String.raw`"use strict";
(function () {
  var started = performance.now();
  /** Text gzipped in base64, unpacked natively (DecompressionStream: off the page's thread). */
  function unpack(b64) {
    var raw = typeof Uint8Array.fromBase64 === "function" ? Uint8Array.fromBase64(b64) : Uint8Array.from(atob(b64), function (ch) { return ch.charCodeAt(0); });
    return new Response(new Blob([raw]).stream().pipeThrough(new DecompressionStream("gzip"))).text();
  }
  unpack(document.getElementById("audit-data").textContent.trim()).then(function (text) {
    var unpacked = performance.now();
    var data = JSON.parse(text);
    var parsed = performance.now();
    document.documentElement.setAttribute("data-unpack-ms", String(Math.round(unpacked - started)));
    document.documentElement.setAttribute("data-parse-ms", String(Math.round(parsed - unpacked)));
    // Drawn in a task of its own: the page answers (scrolls, clicks) between parsing and drawing.
    setTimeout(function () { render(data); }, 0);
  }).catch(function (e) {
    document.getElementById("summary").textContent = "The report's data could not be read: " + String(e);
    console.error(e);
  });

function render(data) {
  var n = data.n;
  var rows = data.rows;
  var strings = data.strings;
  var counts = data.counts;
  var tmin = data.tmin === null ? NaN : data.tmin, tmax = data.tmax === null ? NaN : data.tmax;
  var Decisions = ["", "allow", "ask", "deny"];
  var PageSize = 100;
  var Headers = ["#", "time", "session", "call", "event", "tool", "args", "decision", "reasons", "took"];
  var chosen = -1;
  var drawing = 0;

  function isObj(u) { return typeof u === "object" && u !== null && !Array.isArray(u); }
  function str(u) { return typeof u === "string" ? u : ""; }
  function num(u) { return typeof u === "number" && isFinite(u) ? u : 0; }
  function arr(u) { return Array.isArray(u) ? u : []; }
  function s(k) { return k < 0 ? "" : strings[k]; }
  function json(u, max) {
    var t;
    try { t = JSON.stringify(u); } catch (e) { t = String(u); }
    if (t === undefined) t = String(u);
    return clip(t, max);
  }
  function clip(t, max) { return max !== undefined && t.length > max ? t.slice(0, max - 1) + "\u2026" : t; }
  function same(a, b) { return json(a) === json(b); }
  function ms(x) { return (x < 10 ? Math.round(x * 10) / 10 : Math.round(x)) + " ms"; }
  /**
   * Text as shown: controls, bidirectional overrides and invisible characters written out (\u202e), so a record
   * cannot reorder or hide what the page shows (an args that reads as harmless right to left).
   */
  function shown(t) {
    return String(t).replace(/[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u00ad\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\u{e0000}-\u{e007f}]/gu, function (c) {
      var code = c.codePointAt(0);
      return code < 0x80 ? "\\x" + ("0" + code.toString(16)).slice(-2) : code > 0xffff ? "\\u{" + code.toString(16) + "}" : "\\u" + ("000" + code.toString(16)).slice(-4);
    });
  }
  function el(tag, className, text) {
    var e = document.createElement(tag);
    if (className) e.className = className;
    if (text !== undefined && text !== null) e.textContent = shown(text);
    return e;
  }
  function add(parent) {
    for (var i = 1; i < arguments.length; i++) {
      var c = arguments[i];
      if (c === null || c === undefined) continue;
      parent.appendChild(typeof c === "string" ? document.createTextNode(shown(c)) : c);
    }
    return parent;
  }
  function row(cells, classes) {
    var tr = document.createElement("tr");
    for (var i = 0; i < cells.length; i++) {
      var c = cells[i];
      var td = el("td", classes && classes[i] ? classes[i] : "");
      if (c instanceof Node) td.appendChild(c); else td.textContent = c === undefined || c === null ? "" : shown(c);
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
  function fileOf(i) { return data.files[rows.file[i]] + ":" + rows.line[i]; }
  function callEvent(i) { return (rows.call[i] >= 0 ? s(rows.call[i]) + " " : "") + s(rows.event[i]); }

  // ---- the records, unpacked a chunk at a time, when a drill-down needs one ------------------------------------------
  var packed = null;
  var unpacked = new Map();
  function chunkOf(c) {
    var got = unpacked.get(c);
    if (got) return got;
    if (packed === null) packed = document.getElementById("audit-records").textContent.trim().split("\n");
    got = unpack(packed[c] || "").then(function (text) { return text.split("\n"); });
    unpacked.set(c, got);
    document.documentElement.setAttribute("data-chunks-unpacked", String(unpacked.size));
    return got;
  }
  function recordOf(i) {
    return chunkOf(Math.floor(i / data.chunk)).then(function (lines) { return JSON.parse(lines[i % data.chunk]); });
  }

  // ---- summary -----------------------------------------------------------------------------------------------
  (function () {
    var sec = section("summary");
    clear(sec);
    var calls = counts.allow + counts.ask + counts.deny;
    add(sec, el("p", "", n + " records from " + data.files.length + " file(s): " + calls + " tool calls (" +
      counts.deny + " denied, " + counts.ask + " asked, " + counts.allow + " allowed), " + counts.other + " other events" +
      (isFinite(tmin) ? "; from " + new Date(tmin).toISOString() + " to " + new Date(tmax).toISOString() : "") + "."));
    add(sec, el("p", "dim", "Files: " + data.files.join(", ")));
    if (data.bad.length > 0) {
      var d = add(el("details"), el("summary", "bad", data.bad.length + " line(s) were not audit records and are not shown"));
      var ul = el("ul");
      data.bad.slice(0, 200).forEach(function (b) { add(ul, el("li", "mono", b.file + ":" + b.line + ": " + b.problem)); });
      if (data.bad.length > 200) add(ul, el("li", "dim", "and " + (data.bad.length - 200) + " more"));
      add(sec, add(d, ul));
    }
  })();

  // ---- decisions over time -----------------------------------------------------------------------------------
  (function () {
    var sec = section("decisions");
    var legend = el("p");
    [["deny", "--deny"], ["ask", "--ask"], ["allow", "--allow"]].forEach(function (p) {
      var sw = el("span", "swatch");
      sw.style.background = "var(" + p[1] + ")";
      add(legend, sw, p[0] + " " + counts[p[0]]);
    });
    add(sec, legend);
    var canvas = el("canvas");
    canvas.width = 1000; canvas.height = 160;
    canvas.setAttribute("aria-label", "tool calls over time by verdict");
    add(sec, canvas);
    add(sec, el("p", "dim", isFinite(tmin) ? new Date(tmin).toISOString() + "  \u2192  " + new Date(tmax).toISOString() : "no times"));
    var bucket = data.slices, B = bucket.allow.length;
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
    var sec = section("latency");
    add(sec, el("p", "dim", "Replies to the agent's events (startup and close left out). The timeline plots each reply's latency at its time; above p99 \u00d7 1.5, at the top in red."));
    var t = table(["extension", "replies", "p50", "p99", "max", "failures", "allows ignored", "timeline"], [0, 1, 1, 1, 1, 1, 1, 0]);
    data.extensions.forEach(function (e) {
      var canvas = el("canvas");
      canvas.width = data.timeline.width; canvas.height = data.timeline.height;
      var g = canvas.getContext("2d");
      for (var i = 0; i < e.points.length; i++) {
        var x = Math.floor(e.points[i] / 64), y = e.points[i] % 64, over = y === 63;
        g.fillStyle = over ? "#c62828" : "#3f51b5";
        g.fillRect(x, over ? 1 : y, 2, 2);
      }
      var some = e.replies > 0;
      add(t.body, row([e.name, e.replies, some ? ms(e.p50) : "\u2014", some ? ms(e.p99) : "\u2014", some ? ms(e.max) : "\u2014",
        e.failures, e.allows, canvas], ["mono", "num", "num", "num", "num", e.failures ? "num failed" : "num", "num", ""]));
    });
    add(sec, data.extensions.length ? t.table : el("p", "dim", "No extension took part."));
  })();

  // ---- deaths -----------------------------------------------------------------------------------------------------
  (function () {
    var sec = section("deaths");
    if (data.deaths.length === 0) { add(sec, el("p", "dim", "No extension failed.")); return; }
    add(sec, el("p", "dim", "The first failure of each extension in each session; every later record shows it dead. Click a row for the record."));
    var t = table(["extension", "session", "time", "record", "status", "cause", "its stderr"]);
    data.deaths.forEach(function (d) {
      var i = d.record;
      var stderr = typeof d.stderr === "string" ? d.stderr
        : isObj(d.stderr) ? num(d.stderr.bytes) + " bytes, sha256 " + str(d.stderr.sha256).slice(0, 12) + "\u2026 (kept with --audit-content full)" : "";
      var tr = row([d.extension, s(rows.session[i]), s(rows.time[i]), callEvent(i), d.status, d.error, stderr],
        ["mono", "mono", "mono", "mono", "failed", "", "mono"]);
      pickable(tr, i);
      add(t.body, tr);
    });
    add(sec, t.table);
  })();

  // ---- what each denied, asked for or rewrote -------------------------------------------------------------------------
  (function () {
    var sec = section("vetoes");
    if (data.vetoes.length === 0) { add(sec, el("p", "dim", "Nothing was denied, asked for or rewritten.")); return; }
    add(sec, el("p", "dim", "By the reasons of each decision (the extension, or \"policy\" for the operator's rules) and the extensions that rewrote the args. Click a call for its record."));
    data.vetoes.forEach(function (v) {
      var d = el("details");
      d.setAttribute("data-extension", v.name);
      add(d, el("summary", "", v.name + ": denied " + v.deny.length + ", asked " + v.ask.length + ", rewrote " + v.rewrote.length));
      [["denied", v.deny], ["asked", v.ask], ["rewrote", v.rewrote]].forEach(function (p) {
        if (p[1].length === 0) return;
        add(d, el("div", "round", p[0]));
        var box = el("div");
        add(d, box);
        callTable(box, p[1], v.name);
      });
      add(sec, d);
    });
  })();

`

export const reportScript: string = overview + reportCalls
