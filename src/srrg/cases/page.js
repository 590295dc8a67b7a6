// srrg cases page (docs/cases.md): plain JS, no framework, no network. The view state lives in the
// URL hash (sort, dir, finding, fmode, status, compare, q, page, n, figure, view), so a link or a
// headless browser opens exactly one view.
(function () {
  "use strict";
  const D = JSON.parse(document.getElementById("cases-data").textContent);
  const MARKS = [["\u2713", "matched"], ["\u2260", "attribute differs"], ["\u2717", "missed"], ["+", "false"]];
  const NONE = ["\u00b7", "not compared"];
  const FMODES = { ref: "reference has", hyp: "prediction has", missed: "missed", false: "false", attribute: "attribute differs" };
  const FIGURE_MAX = 6;
  const state = { sort: "", dir: "asc", finding: "", fmode: "ref", status: "", compare: "", q: "", page: 1, n: 50,
                  figure: [], view: "list" };
  const $ = (id) => document.getElementById(id);
  const esc = (s) => String(s == null ? "" : s).replace(/[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
  const fmt = (v) => (v == null ? "n/a" : v.toFixed(3));
  const signed = (v) => (v == null ? "n/a" : (v > 0 ? "+" : v < 0 ? "\u2212" : "\u00b1") + Math.abs(v).toFixed(3));

  // Per study: the names of each side and of each mark, for the finding filter.
  for (const s of D.studies) {
    s.names = { ref: new Set(), hyp: new Set(), missed: new Set(), false: new Set(), attribute: new Set() };
    for (const [name, pos, mark] of s.f) {
      if (!pos) continue;
      if (mark !== 3) s.names.ref.add(name);
      if (mark === 0 || mark === 1 || mark === 3) s.names.hyp.add(name);
      if (mark === 1) s.names.attribute.add(name);
      if (mark === 2) s.names.missed.add(name);
      if (mark === 3) s.names.false.add(name);
    }
  }
  const byId = new Map(D.studies.map((s) => [s.id, s]));

  function readHash() {
    const p = new URLSearchParams(location.hash.replace(/^#/, ""));
    for (const k of Object.keys(state)) {
      if (!p.has(k)) continue;
      const v = p.get(k);
      if (k === "page" || k === "n") state[k] = Math.max(1, parseInt(v, 10) || 1);
      else if (k === "figure") state.figure = v ? v.split(",").filter((id) => byId.has(id)).slice(0, FIGURE_MAX) : [];
      else state[k] = v;
    }
  }
  function writeHash() {
    const p = new URLSearchParams();
    for (const [k, v] of Object.entries(state)) {
      const value = k === "figure" ? v.join(",") : String(v);
      if (value !== "" && !(k === "page" && v === 1) && !(k === "n" && v === 50) && !(k === "fmode" && v === "ref")
          && !(k === "dir" && v === "asc") && !(k === "view" && v === "list")) p.set(k, value);
    }
    try { history.replaceState(null, "", "#" + p.toString()); } catch (e) { /* sandboxed frame: state stays in memory */ }
  }

  function compareRun() { return D.compare.find((c) => c.run === state.compare) || null; }
  function scoreIndex(col) { return D.scores.indexOf(col); }
  function diffOf(s, col, cmp) {
    const i = scoreIndex(col), j = cmp ? cmp.scores.indexOf(col) : -1, other = cmp && cmp.studies[s.id];
    if (i < 0 || j < 0 || !other || s.sc[i] == null || other.sc[j] == null) return null;
    return s.sc[i] - other.sc[j];
  }
  function sortValue(s, cmp) {
    if (!state.sort) return null;
    if (state.sort.startsWith("diff:")) return diffOf(s, state.sort.slice(5), cmp);
    const i = scoreIndex(state.sort);
    return i < 0 ? null : s.sc[i];
  }

  function selected() {
    const cmp = compareRun();
    let list = D.studies;
    if (state.finding) list = list.filter((s) => (s.names[state.fmode] || s.names.ref).has(state.finding));
    if (state.status) {
      const cut = state.status.indexOf("="), col = state.status.slice(0, cut), val = state.status.slice(cut + 1);
      const i = D.statuses.indexOf(col);
      list = list.filter((s) => i >= 0 && s.st[i] === val);
    }
    if (state.q) { const q = state.q.toLowerCase(); list = list.filter((s) => s.id.toLowerCase().includes(q)); }
    if (state.sort) {
      const sign = state.dir === "desc" ? -1 : 1;
      list = list.map((s, k) => [sortValue(s, cmp), k, s]).sort((a, b) => {
        if (a[0] == null || b[0] == null) return (a[0] == null) - (b[0] == null) || a[1] - b[1];  // n/a last
        return sign * (a[0] - b[0]) || a[1] - b[1];
      }).map((x) => x[2]);
    }
    return list;
  }

  function attrCells(a, side, scores) {
    if (!a) return `<td class="${side}" colspan="3">\u2014</td>`;
    const diff = (k) => (side === "hyp" && scores && scores[k] < 1);
    const cell = (k, v, what) => (diff(k)
      ? `<td class="${side} differs" title="${what} differs (S-Score part ${scores[k]})"><span class="sym">\u2260</span> ${esc(v == null ? "\u2014" : v)}</td>`
      : `<td class="${side}">${esc(v == null ? "\u2014" : v)}</td>`);
    return cell(0, a[0], "probability") + cell(1, a[1], "level") + cell(2, a[2], "location");
  }
  function findingRow(r) {
    const [name, pos, mark, ra, ha, scores] = r;
    const [sym, word] = mark < 0 ? NONE : MARKS[mark];
    const markCell = `<td class="mark" data-mark="${esc(word)}"><span class="sym" aria-hidden="true">${sym}</span> ${word}</td>`;
    if (!pos) {
      const has = (side) => (side === "ref" ? mark === 0 || mark === 2 || mark < 0 : mark === 0 || mark === 3);
      const cell = (side) => `<td class="${side} neg" colspan="3">${has(side) ? "ruled out (negative)" : "\u2014"}</td>`;
      return `<tr class="m${mark}"><td>${esc(name)}</td>${cell("ref")}${cell("hyp")}${markCell}</tr>`;
    }
    const hyp = mark < 0 ? `<td class="hyp" colspan="3">not structured</td>` : attrCells(ha, "hyp", scores);
    return `<tr class="m${mark}"><td>${esc(name)}</td>${attrCells(ra, "ref", null)}${hyp}${markCell}</tr>`;
  }
  function findingsTable(s) {
    if (!s.f.length) return `<p class="note">No finding in either report.</p>`;
    return `<table class="findings"><thead><tr><th rowspan="2" scope="col">finding</th>` +
      `<th colspan="3" scope="colgroup">reference</th><th colspan="3" scope="colgroup">predicted</th>` +
      `<th rowspan="2" scope="col">mark</th></tr><tr><th>probability</th><th>level</th><th>location</th>` +
      `<th>probability</th><th>level</th><th>location</th></tr></thead><tbody>${s.f.map(findingRow).join("")}</tbody></table>`;
  }
  function scoresTable(s) {
    const key = state.sort.replace(/^diff:/, "");
    const head = D.scores.map((c) => `<th scope="col" class="${c === key ? "key" : ""}">${esc(c)}</th>`).join("");
    const body = s.sc.map((v, i) => `<td class="${D.scores[i] === key ? "key" : ""}">${fmt(v)}</td>`).join("");
    return D.scores.length ? `<table class="scores"><tr>${head}</tr><tr>${body}</tr></table>` : "";
  }
  function statusLine(s) {
    // a metric's `ok` is left out: what is shown is the prediction's parse status and what went wrong
    return D.statuses.map((c, i) => (s.st[i] == null || (i > 0 && s.st[i] === "ok") ? "" : `${esc(c)}: ${esc(s.st[i])}`))
      .filter(Boolean).join(" \u00b7 ");
  }
  function comparisonBlock(s, cmp) {
    if (!cmp) return "";
    const other = cmp.studies[s.id];
    if (!other) return `<div class="cmp">${esc(cmp.run)}: this study was not scored there.</div>`;
    const cols = D.scores.filter((c) => cmp.scores.includes(c)).slice(0, 4);
    const key = state.sort.replace(/^diff:/, "");
    if (key && cmp.scores.includes(key) && !cols.includes(key)) cols.unshift(key);
    const parts = cols.map((c) => {
      const d = diffOf(s, c, cmp), v = other.sc[cmp.scores.indexOf(c)];
      return `${esc(c)} ${fmt(v)} (\u0394 <span class="${d > 0 ? "better" : ""}">${signed(d)}</span>)`;
    });
    return `<div class="cmp" data-compare="${esc(cmp.run)}"><strong>vs ${esc(cmp.run)}</strong>` +
      (other.st ? ` (parse: ${esc(other.st)})` : "") + `: ${parts.join(", ")}<br><span class="note">\u0394 = this run \u2212 ${esc(cmp.run)}.</span> ` +
      `${esc(cmp.run)} wrote: ${esc(other.hyp)}</div>`;
  }
  function card(s, cmp, inFigure) {
    const img = s.img
      ? `<img class="thumb" src="${esc(s.img)}" alt="${esc(D.images)} image of study ${esc(s.id)}" width="96" height="96">`
      : `<div class="thumb" role="img" aria-label="no image">${esc(s.note)}</div>`;
    const picked = state.figure.includes(s.id);
    const pick = inFigure ? "" : `<label class="pick"><input type="checkbox" data-pick="${esc(s.id)}"${picked ? " checked" : ""}` +
      `${!picked && state.figure.length >= FIGURE_MAX ? " disabled" : ""}> in figure</label>`;
    const raw = s.raw != null ? `<details><summary>raw output</summary><pre>${esc(s.raw)}</pre></details>` : "";
    const ctx = s.ctx != null ? `<details><summary>prompt context</summary><pre>${esc(s.ctx)}</pre></details>` : "";
    const ex = s.ex ? `<details class="judge"><summary>judge explanations</summary><dl class="judge">` +
      D.explanations.map((c, i) => (s.ex[i] ? `<dt>${esc(c)}</dt><dd>${esc(s.ex[i])}</dd>` : "")).join("") + `</dl></details>` : "";
    const v = sortValue(s, cmp);
    return `<li class="case" data-id="${esc(s.id)}" data-sort="${v == null ? "" : v}">` +
      `<div class="head">${img}<div class="meta"><h2>${esc(s.id)}</h2><span class="status">${statusLine(s)}</span>${pick}</div>` +
      `${scoresTable(s)}</div><div class="texts"><div><h3>Reference</h3><p>${esc(s.ref)}</p></div>` +
      `<div><h3>Generated (${esc(D.run)})</h3><p>${esc(s.hyp)}</p>${ctx}${raw}</div></div>${findingsTable(s)}` +
      `${comparisonBlock(s, cmp)}${ex}</li>`;
  }

  function renderControls() {
    const cmp = compareRun();
    const sortCols = [["", "report order"], ...D.scores.map((c) => [c, c])];
    if (cmp) {  // differences of the first few common scores (S, P, D for structured runs)
      for (const c of D.scores.filter((c) => cmp.scores.includes(c)).slice(0, 4)) sortCols.push(["diff:" + c, "\u0394 " + c]);
    }
    $("sort-buttons").innerHTML = sortCols.map(([k, label]) =>
      `<button type="button" data-sort="${esc(k)}" aria-pressed="${state.sort === k}">${esc(label)}</button>`).join("");
    // lowest first = worst first for scores; for error counts (GREEN's, VERT's) it is the best first
    $("dir").textContent = state.dir === "asc" ? "\u2191 lowest first" : "\u2193 highest first";
    $("dir").setAttribute("aria-label", "sort direction: " + (state.dir === "asc" ? "ascending" : "descending"));
    $("finding").value = state.finding;
    $("fmode").value = state.fmode;
    $("status").value = state.status;
    $("compare").value = state.compare;
    $("q").value = state.q;
    $("n").value = String(state.n);
    $("figure-count").textContent = String(state.figure.length);
  }

  function render() {
    renderControls();
    const cmp = compareRun();
    const figure = state.view === "figure";
    document.body.classList.toggle("figure-view", figure);
    $("list-view").hidden = figure;
    $("figure").hidden = !figure;
    if (figure) {
      const chosen = state.figure.map((id) => byId.get(id));
      $("figure-grid").innerHTML = chosen.map((s) => card(s, cmp, true)).join("");
      $("figure-empty").hidden = chosen.length > 0;
      writeHash();
      return;
    }
    const list = selected();
    const pages = Math.max(1, Math.ceil(list.length / state.n));
    state.page = Math.min(state.page, pages);
    const start = (state.page - 1) * state.n, shown = list.slice(start, start + state.n);
    $("cases").innerHTML = shown.map((s) => card(s, cmp, false)).join("");
    const filtered = list.length === D.studies.length ? "" : ` (filtered from ${D.studies.length})`;
    $("summary").textContent = list.length
      ? `${list.length} studies${filtered}; showing ${start + 1}\u2013${start + shown.length}, page ${state.page} of ${pages}.`
      : `No study matches${filtered}.`;
    $("summary").dataset.matching = String(list.length);
    $("prev").disabled = state.page <= 1;
    $("next").disabled = state.page >= pages;
    $("page-of").textContent = `page ${state.page} / ${pages}`;
    writeHash();
  }

  function options() {
    const counts = new Map();
    for (const s of D.studies) for (const n of s.names.ref) counts.set(n, (counts.get(n) || 0) + 1);
    const names = [...new Set(D.studies.flatMap((s) => [...s.names.hyp]))].filter((n) => !counts.has(n));
    $("finding").innerHTML = `<option value="">any finding</option>` +
      [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
        .map(([n, c]) => `<option value="${esc(n)}">${esc(n)} (${c} references)</option>`).join("") +
      names.sort().map((n) => `<option value="${esc(n)}">${esc(n)} (predicted only)</option>`).join("");
    $("fmode").innerHTML = Object.entries(FMODES).map(([k, v]) => `<option value="${k}">${v}</option>`).join("");
    const st = new Map();
    for (const s of D.studies) D.statuses.forEach((c, i) => {
      if (s.st[i] != null) { const k = c + "=" + s.st[i]; st.set(k, (st.get(k) || 0) + 1); }
    });
    $("status").innerHTML = `<option value="">any status</option>` +
      [...st].sort().map(([k, c]) => `<option value="${esc(k)}">${esc(k.replace("=", ": "))} (${c})</option>`).join("");
    $("compare").innerHTML = `<option value="">no comparison</option>` +
      D.compare.map((c) => `<option value="${esc(c.run)}">${esc(c.run)}</option>`).join("");
    $("compare-box").hidden = D.compare.length === 0;
  }

  function bind() {
    $("sort-buttons").addEventListener("click", (e) => {
      const b = e.target.closest("button[data-sort]");
      if (!b) return;
      if (state.sort === b.dataset.sort && b.dataset.sort) state.dir = state.dir === "asc" ? "desc" : "asc";
      state.sort = b.dataset.sort; state.page = 1; render();
      const again = $("sort-buttons").querySelector(`button[data-sort="${CSS.escape(state.sort)}"]`);
      if (again) again.focus();  // keep the keyboard where it was after the buttons are redrawn
    });
    $("dir").addEventListener("click", () => { state.dir = state.dir === "asc" ? "desc" : "asc"; state.page = 1; render(); $("dir").focus(); });
    for (const id of ["finding", "fmode", "status", "compare", "n"]) {
      $(id).addEventListener("change", (e) => {
        state[id] = id === "n" ? parseInt(e.target.value, 10) : e.target.value;
        if (id === "compare" && !state.compare && state.sort.startsWith("diff:")) state.sort = "";
        state.page = 1; render();
      });
    }
    $("q").addEventListener("input", (e) => { state.q = e.target.value; state.page = 1; render(); });
    $("prev").addEventListener("click", () => { state.page -= 1; render(); window.scrollTo(0, 0); });
    $("next").addEventListener("click", () => { state.page += 1; render(); window.scrollTo(0, 0); });
    $("cases").addEventListener("change", (e) => {
      const id = e.target.dataset && e.target.dataset.pick;
      if (!id) return;
      state.figure = e.target.checked ? [...state.figure, id].slice(0, FIGURE_MAX) : state.figure.filter((x) => x !== id);
      render();
    });
    $("figure-open").addEventListener("click", () => { state.view = "figure"; render(); });
    $("figure-close").addEventListener("click", () => { state.view = "list"; render(); });
    $("figure-print").addEventListener("click", () => window.print());
    $("figure-clear").addEventListener("click", () => { state.figure = []; render(); });
    window.addEventListener("hashchange", () => { readHash(); render(); });
  }

  readHash();
  options();
  bind();
  render();
  // milliseconds from navigation to the first view (read by benchmarks/cases_page.py)
  document.documentElement.dataset.readyMs = String(Math.round(performance.now()));
})();
