/**
 * The HTML report's script, second part: the call list (paged, searchable, filtered) and a record's drill-down.
 * A fragment of the function ReportScript.ts opens: it is only ever the end of `reportScript`, never run alone.
 */
export const reportCalls = String.raw`  // ---- the calls, paged, and a drill-down ---------------------------------------------------------------------------
  function pickable(tr, i) {
    tr.className = "pick";
    tr.setAttribute("data-record", String(i));
    tr.tabIndex = 0;
    tr.addEventListener("click", function () { drill(i); });
    tr.addEventListener("keydown", function (e) { if (e.key === "Enter") drill(i); });
  }
  function callRow(i) {
    var d = Decisions[rows.decision[i]];
    var tr = row([i + 1, s(rows.time[i]), s(rows.session[i]), s(rows.call[i]), s(rows.event[i]), s(rows.tool[i]),
      clip(s(rows.args[i]), 160), d, s(rows.reasons[i]), ms(rows.took[i])],
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
  }

  (function () {
    var sec = section("calls");
    var controls = el("div", "controls");
    var search = el("input");
    search.type = "search"; search.placeholder = "call id, tool, event, session, args\u2026"; search.id = "search";
    var verdict = el("select"); verdict.id = "verdict";
    [["", "every record"], ["deny", "denied"], ["ask", "asked"], ["allow", "allowed"], ["none", "other events"]].forEach(function (p) {
      var opt = el("option", "", p[1]); opt.value = p[0]; verdict.appendChild(opt);
    });
    var who = el("select"); who.id = "who";
    var any = el("option", "", "any extension"); any.value = ""; who.appendChild(any);
    data.extensions.forEach(function (e) { var opt = el("option", "", e.name); opt.value = e.name; who.appendChild(opt); });
    add(controls, search, verdict, who);
    var box = el("div");
    add(sec, controls, box);
    var all = new Array(n);
    for (var i = 0; i < n; i++) all[i] = i;
    var haystack = null;
    function apply() {
      var q = search.value.trim().toLowerCase(), v = verdict.value, name = who.value;
      var code = v === "none" ? 0 : Decisions.indexOf(v);
      if (q !== "" && haystack === null) {
        haystack = new Array(n);
        for (var i = 0; i < n; i++) {
          haystack[i] = [s(rows.call[i]), s(rows.tool[i]), s(rows.event[i]), s(rows.session[i]), s(rows.args[i])].join("\u0000").toLowerCase();
        }
      }
      // Whether each set of asked extensions holds the chosen one: a look-up per record.
      var askedOk = null;
      if (name !== "") {
        var at = strings.indexOf(name);
        askedOk = data.askedSets.map(function (set) { return set.indexOf(at) >= 0; });
      }
      var picked = [];
      for (var j = 0; j < n; j++) {
        if (v !== "" && rows.decision[j] !== code) continue;
        if (q !== "" && haystack[j].indexOf(q) < 0) continue;
        if (askedOk !== null && !askedOk[rows.asked[j]]) continue;
        picked.push(j);
      }
      callTable(box, picked, "calls");
    }
    search.addEventListener("input", apply);
    verdict.addEventListener("change", apply);
    who.addEventListener("change", apply);
    callTable(box, all, "calls");
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

  /** An extension's own words on why it failed (its stderr line, a failed reply's text), or their digest. */
  function words(label, w) {
    if (typeof w === "string") return "; " + label + ": " + w;
    if (isObj(w)) return "; " + label + ": " + num(w.bytes) + " bytes, sha256 " + str(w.sha256).slice(0, 12) + "\u2026 (kept with --audit-content full)";
    return "";
  }

  function outcomeOf(r) {
    var o = r.outcome;
    if (r.event !== "tool_call" || !isObj(o)) return null;
    var d = o.decision;
    return d === "allow" || d === "ask" || d === "deny" ? o : null;
  }

  /** Opens record i: marks its rows at once, then shows it when its chunk is unpacked (the last click wins). */
  function drill(i) {
    chosen = i;
    var ticket = ++drawing;
    var box = section("drill");
    var previous = document.querySelectorAll("tr.chosen");
    for (var p = 0; p < previous.length; p++) previous[p].classList.remove("chosen");
    var marked = document.querySelectorAll('tr[data-record="' + i + '"]');
    for (var q = 0; q < marked.length; q++) marked[q].classList.add("chosen");
    box.removeAttribute("data-record");
    clear(box);
    add(box, el("p", "dim", "Reading record " + (i + 1) + "\u2026"));
    recordOf(i).then(function (r) {
      if (ticket === drawing) show(box, i, r);
    }).catch(function (e) {
      if (ticket !== drawing) return;
      clear(box);
      add(box, el("p", "bad", "Record " + (i + 1) + " could not be read: " + String(e)));
      console.error(e);
    });
  }

  function show(box, i, r) {
    clear(box);
    add(box, el("h3", "mono", (typeof r.call_id === "string" ? r.call_id + " " : "") + str(r.event) + (typeof r.tool === "string" ? " " + r.tool : "")));
    add(box, el("p", "dim", "session " + str(r.session_id) + ", seq " + num(r.seq) + ", " + str(r.time) + ", took " + ms(num(r.duration_ms)) + "; " + fileOf(i)));
    if (r.args !== undefined) add(box, el("div", "round", "args as the agent passed them"), el("pre", "", JSON.stringify(r.args, null, 2)));
    var current = r.event === "tool_call" ? r.args : undefined;
    arr(r.rounds).forEach(function (round) {
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
            words("its stderr", x.stderr) + words("it said", x.failed);
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
      var reasons = s(rows.reasons[i]);
      if (reasons) add(out, " (" + reasons + ")");
      if (typeof o.rounds === "number") add(out, " after " + o.rounds + " round" + (o.rounds === 1 ? "" : "s"));
      if (o.args !== undefined && r.args !== undefined && !same(o.args, r.args))
        add(out, "; args rewritten to " + json(o.args, 300) + (arr(o.rewrittenBy).length ? " by " + arr(o.rewrittenBy).join(", ") : ""));
    } else {
      add(out, "outcome: " + json(r.outcome, 400));
    }
    add(box, el("div", "round", "decided"), out);
    if (rows.call[i] >= 0) {
      // The other records of this call: same session, same call id (a scan of two integer columns).
      var others = [];
      for (var k = 0; k < n && others.length < 20; k++) {
        if (k !== i && rows.call[k] === rows.call[i] && rows.session[k] === rows.session[i]) others.push(k);
      }
      if (others.length) {
        var ol = el("div", "controls");
        add(ol, "other records of this call:");
        others.forEach(function (k) {
          var b = el("button", "", "#" + (k + 1) + " " + s(rows.event[k]));
          b.type = "button";
          b.addEventListener("click", function () { drill(k); });
          ol.appendChild(b);
        });
        add(box, ol);
      }
    }
    add(box, add(el("details"), el("summary", "", "the record as written"), el("pre", "", JSON.stringify(r, null, 2))));
    box.setAttribute("data-record", String(i));
    box.scrollIntoView({ block: "nearest" });
  }

  var took = Math.round(performance.now() - started);
  add(section("footer"), el("p", "dim", "Drawn in the browser in " + took + " ms from " + n + " records."));
  document.documentElement.setAttribute("data-render-ms", String(took));
  document.documentElement.setAttribute("data-chunks-unpacked", "0");
  document.documentElement.setAttribute("data-ready", "1");
}
})();
`
