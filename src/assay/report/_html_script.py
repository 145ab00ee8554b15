"""The report's page script: plain JavaScript, no libraries, nothing fetched.

Every string from the data reaches the page through ``textContent`` / text nodes (``el``
below); no code path uses ``innerHTML``, ``insertAdjacentHTML``, ``document.write`` or ``eval``.
Links from data are made only for ``http:`` and ``https:`` URLs.
"""

SCRIPT = r"""
(function () {
"use strict";
const DATA = JSON.parse(document.getElementById("assay-data").textContent);
const PAGE_SIZES = [25, 50, 100, 250];

function el(tag, props, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = String(value);
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat(4)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function fmt(x) {
  if (typeof x === "number") {
    if (Number.isInteger(x)) return String(x);
    const a = Math.abs(x);
    if (a !== 0 && a < 1e-4) return x.toExponential(2);
    const r = Number(x.toFixed(4));
    return String(r === 0 ? 0 : r);
  }
  if (typeof x === "boolean") return x ? "true" : "false";
  if (x === null || x === undefined) return "—";
  return String(x);
}

function safeHref(text) {
  try {
    const url = new URL(String(text));
    return url.protocol === "http:" || url.protocol === "https:" ? url.href : null;
  } catch (e) { return null; }
}

function badge(text, cls) {
  return el("span", {class: "badge" + (cls ? " " + cls : ""), text: text});
}

// A claim's facts: the short ones (probability, source, checker) side by side, a long one
// (the matched window, the deciding features) on a line of its own, each label set apart.
function claimFacts(list) {
  return el("div", {class: "claim-facts muted"}, list.map(f => {
    const value = fmt(f.value);
    return el("span", {class: value.length > 40 ? "claim-fact long" : "claim-fact"},
      el("span", {class: "k", text: f.label}), " ", value);
  }));
}

function facts(list) {
  return el("div", {class: "facts"}, list.map(f => el("div", {class: "fact"},
    el("span", {class: "k", text: f.label}),
    f.badge ? badge(fmt(f.value), f.badge)
            : el("span", {class: "v", text: fmt(f.value)}))));
}

function cell(value, numeric) {
  const td = el("td", {class: numeric ? "num" : null, text: fmt(value)});
  if (typeof value === "number") td.dataset.value = String(value);
  return td;
}

function staticTable(table) {
  const numeric = table.columns.map((_, i) =>
    table.rows.length > 0 && table.rows.every(r => r[i] === null || typeof r[i] === "number"));
  return el("div", {class: "card table-card"},
    el("h3", {text: table.title}),
    table.note ? el("p", {class: "muted", text: table.note}) : null,
    el("div", {class: "scroll"}, el("table", {},
      el("thead", {}, el("tr", {}, table.columns.map((c, i) =>
        el("th", {class: numeric[i] ? "num" : null, text: c})))),
      el("tbody", {}, table.rows.map(r => el("tr", {}, r.map((v, i) => cell(v, numeric[i]))))))));
}

// A spreadsheet runs a cell that starts with = + - @ (or a tab or return) as a formula, and a
// model's answer or a dataset's question can start so: such a text cell gets a leading
// apostrophe, which spreadsheets show as text. Numbers (and text that is one) stay as they are.
const FORMULA_START = /^[=+\-@\t\r]/;
const NUMBER_TEXT = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;

function csvField(value) {
  let text = value === null || value === undefined ? "" : String(value);
  if (typeof value === "string" && FORMULA_START.test(text) && !NUMBER_TEXT.test(text))
    text = "'" + text;
  return /[",\n\r]/.test(text) ? '"' + text.replace(/"/g, '""') + '"' : text;
}

function metricText(m) {
  let text = fmt(m.value);
  if (m.ci_low !== null && m.ci_low !== undefined)
    text += " [" + fmt(m.ci_low) + ", " + fmt(m.ci_high) + "]";
  return text;
}

function metricsTable(metrics) {
  return el("div", {class: "scroll"}, el("table", {class: "metrics"},
    el("thead", {}, el("tr", {}, el("th", {text: "metric"}),
      el("th", {class: "num", text: "value [95% CI]"}), el("th", {text: "note"}))),
    el("tbody", {}, metrics.map(m => el("tr", {"data-path": m.path},
      el("td", {text: m.label}),
      el("td", {class: "num metric-value", text: metricText(m)}),
      el("td", {class: "muted", text: m.note}))))));
}

function renderMarked(text, marks, onRef) {
  text = text || "";
  const box = el("div", {class: "text"});
  let pos = 0;
  const sorted = (marks || []).slice().sort((a, b) => a.start - b.start || b.end - a.end);
  for (const m of sorted) {
    if (m.start < pos || m.end <= m.start || m.end > text.length) continue;
    if (m.start > pos) box.append(document.createTextNode(text.slice(pos, m.start)));
    const mark = el("mark", {class: m.cls, title: m.title || m.label || null},
      text.slice(m.start, m.end), m.label ? el("sup", {text: m.label}) : null);
    if (m.ref !== null && m.ref !== undefined && onRef) linkToEvidence(mark, () => onRef(m.ref));
    box.append(mark);
    pos = m.end;
  }
  if (pos < text.length) box.append(document.createTextNode(text.slice(pos)));
  return box;
}

function linkToEvidence(mark, show) {
  // a marked claim acts as a button: a click, or Enter or Space once it has the focus
  mark.tabIndex = 0;
  mark.setAttribute("role", "button");
  mark.addEventListener("click", show);
  mark.addEventListener("keydown", e => {
    if (e.key !== "Enter" && e.key !== " ") return;
    e.preventDefault();  // Space would scroll the page
    show();
  });
}

function chips(ids, onRef) {
  return ids.map(id => el("button", {class: "chip", type: "button", title: "show evidence",
    onclick: () => onRef(id)}, id));
}

function renderSection(sec, onRef) {
  if (sec.collapsed) {
    return el("details", {class: "section"}, el("summary", {text: sec.title}),
      renderSection(Object.assign({}, sec, {collapsed: false, title: ""}), onRef));
  }
  const box = el("div", {class: "section section-" + sec.type});
  if (sec.type === "table") { box.append(staticTable(sec.table)); return box; }
  if (sec.title) box.append(el("h3", {text: sec.title}));
  if (sec.type === "text") {
    box.append(sec.pre ? el("pre", {class: "text", text: sec.text || ""})
                       : renderMarked(sec.text, sec.marks, onRef));
  } else if (sec.type === "facts") {
    box.append(facts(sec.facts));
  } else if (sec.type === "claims") {
    box.append(el("ol", {class: "claims"}, (sec.items || []).map(c => el("li", {class: "claim"},
      badge(c.label, c.cls === "supported" ? "good" : c.cls === "unsupported" ? "bad" : "warn"),
      el("span", {class: "claim-text", text: c.text}),
      (c.facts || []).length ? claimFacts(c.facts) : null,
      (c.cited || []).length ? el("div", {}, el("span", {class: "muted", text: "cites "}),
        chips(c.cited, onRef)) : null,
      (c.supporting || []).length ? el("div", {},
        el("span", {class: "muted", text: "supported by "}), chips(c.supporting, onRef)) : null,
      c.note ? el("div", {class: "muted", text: c.note}) : null))));
  } else if (sec.type === "evidence") {
    box.classList.add("evidence");
    for (const ev of sec.items || []) {
      const href = ev.source ? safeHref(ev.source) : null;
      const card = el("div", {class: "ev"},
        el("div", {}, el("span", {class: "id", text: ev.evidence_id}), " ",
          ev.title ? el("span", {text: ev.title}) : null, " ",
          (ev.badges || []).map(b => badge(fmt(b.value), b.badge))),
        ev.source ? el("div", {class: "muted"}, "source: ",
          href ? el("a", {href: href, rel: "noopener noreferrer", target: "_blank",
            text: ev.source}) : el("span", {text: ev.source})) : null,
        ev.details ? el("div", {class: "muted ev-details", text: ev.details}) : null,
        renderMarked(ev.text, ev.marks, null));
      card.evidenceId = ev.evidence_id;
      box.append(card);
    }
  }
  return box;
}

function renderDetail(detail) {
  const body = el("div", {class: "detail-body"});
  const onRef = id => {
    for (const card of body.querySelectorAll(".ev")) {
      if (card.evidenceId !== id) continue;
      card.scrollIntoView({block: "nearest"});
      card.classList.add("flash");
      setTimeout(() => card.classList.remove("flash"), 1200);
      return;
    }
  };
  body.append(facts(detail.facts || []));
  for (const sec of detail.sections || []) body.append(renderSection(sec, onRef));
  return body;
}

async function decodeBlock(id, encoding) {
  const text = document.getElementById(id).textContent;
  if (encoding !== "gzip") return JSON.parse(text);
  const binary = atob(text.trim());
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return JSON.parse(await new Response(stream).text());
}

const blockCache = new Map();
async function loadBlock(id, encoding) {
  if (!blockCache.has(id)) blockCache.set(id, await decodeBlock(id, encoding));
  return blockCache.get(id);
}

async function loadChunk(set, k) {
  return loadBlock(set.chunk_ids[k], set.chunk_encoding);
}

// texts shared between examples are stored once; put them back before drawing
async function resolveTexts(set, detail) {
  const nodes = [];
  for (const sec of detail.sections || []) {
    if (sec.text_ref !== undefined) nodes.push(sec);
    for (const item of sec.items || []) if (item.text_ref !== undefined) nodes.push(item);
  }
  for (const node of nodes) {
    const k = Math.floor(node.text_ref / set.text_chunk_size);
    const texts = await loadBlock(set.text_chunk_ids[k], set.chunk_encoding);
    node.text = texts[node.text_ref % set.text_chunk_size];
  }
}

function exampleTable(set, setKey) {
  const cols = set.columns;
  const state = {query: "", cats: new Map(), sort: -1, dir: 1, page: 0, size: 50,
    view: null, open: -1};
  const haystack = new Array(set.rows.length);
  const textCols = cols.map((c, i) => c.type === "text" || c.searchable ? i : -1)
    .filter(i => i >= 0);
  const searched = textCols.map(i => cols[i].label).join(", ");
  const search = el("input", {type: "search", class: "filter", placeholder: "filter: " + searched,
    "aria-label": "filter examples by " + searched});
  const count = el("span", {class: "count"});
  const tbody = el("tbody", {class: "rows"});
  const pageInfo = el("span", {class: "page-info count"});
  const detailBox = el("div", {class: "detail-slot"});
  const selects = [];
  let card = null;
  cols.forEach((c, i) => {
    if (c.type !== "category") return;
    const values = Array.from(new Set(set.rows.map(r => fmt(r[i])))).sort();
    const select = el("select", {"aria-label": c.label, "data-column": c.key},
      el("option", {value: "", text: c.label + ": all"}),
      values.map(v => el("option", {value: v, text: v})));
    select.addEventListener("change", () => {
      if (select.value === "") state.cats.delete(i); else state.cats.set(i, select.value);
      update();
    });
    selects.push(select);
  });
  function matches(r) {
    for (const [i, v] of state.cats) if (fmt(set.rows[r][i]) !== v) return false;
    if (!state.query) return true;
    if (haystack[r] === undefined)
      haystack[r] = textCols.map(i => String(set.rows[r][i] ?? "")).join("\u0001").toLowerCase();
    return haystack[r].includes(state.query);
  }
  function compare(a, b) {
    const x = set.rows[a][state.sort], y = set.rows[b][state.sort];
    if (x === y) return a - b;
    if (x === null || x === undefined) return 1;
    if (y === null || y === undefined) return -1;
    const c = typeof x === "number" && typeof y === "number" ? x - y
      : String(x).localeCompare(String(y));
    return c === 0 ? a - b : c * state.dir;
  }
  function update() {
    const started = performance.now();
    const view = [];
    for (let r = 0; r < set.rows.length; r++) if (matches(r)) view.push(r);
    if (state.sort >= 0) view.sort(compare);
    state.view = view;
    state.page = 0;
    draw();
    // timings for benchmarks/bench_report.py (what a user waits for, in milliseconds)
    if (card) card.dataset.updateMs = (performance.now() - started).toFixed(1);
  }
  function draw() {
    const pages = Math.max(1, Math.ceil(state.view.length / state.size));
    state.page = Math.min(state.page, pages - 1);
    count.textContent = state.view.length + " of " + set.rows.length + " shown";
    pageInfo.textContent = "page " + (state.page + 1) + " of " + pages;
    const start = state.page * state.size;
    tbody.replaceChildren(...state.view.slice(start, start + state.size).map(r => {
      const tr = el("tr", {tabindex: 0, "data-row": r, class: r === state.open ? "open" : null},
        set.rows[r].map((v, i) => {
          const td = cell(v, cols[i].type === "number");
          if (cols[i].type === "text") { td.classList.add("clip"); td.title = fmt(v); }
          return td;
        }));
      tr.addEventListener("click", () => openRow(r));
      tr.addEventListener("keydown", e => { if (e.key === "Enter") openRow(r); });
      return tr;
    }));
  }
  function step(r, delta) {
    // the previous or next example of the current filter and sort order
    const at = state.view.indexOf(r) + delta;
    if (at < 0 || at >= state.view.length) return;
    state.page = Math.floor(at / state.size);
    state.open = state.view[at];
    draw();
    openRow(state.view[at]);
  }
  async function openRow(r) {
    const started = performance.now();
    state.open = r;
    for (const tr of tbody.children) tr.classList.toggle("open", Number(tr.dataset.row) === r);
    const close = el("button", {type: "button", class: "close", text: "close ✕",
      onclick: () => {
        detailBox.replaceChildren(); state.open = -1; draw();
        // the address no longer links to an example that is not open
        history.replaceState(null, "", location.pathname + location.search);
      }});
    const at = state.view.indexOf(r);
    const nav = el("span", {class: "nav"},
      el("button", {type: "button", class: "prev-example", text: "‹ previous",
        disabled: at <= 0, onclick: () => step(r, -1)}),
      el("span", {class: "count", text: at >= 0 ? (at + 1) + " of " + state.view.length : ""}),
      el("button", {type: "button", class: "next-example", text: "next ›",
        disabled: at < 0 || at >= state.view.length - 1, onclick: () => step(r, 1)}),
      close);
    const box = el("div", {class: "detail", "data-row": r},
      el("div", {class: "head"}, el("h3", {text: "loading…"}), nav));
    detailBox.replaceChildren(box);
    let detail;
    try {
      const chunk = await loadChunk(set, Math.floor(r / set.chunk_size));
      detail = chunk[r % set.chunk_size];
      await resolveTexts(set, detail);
    } catch (err) {
      box.append(el("p", {class: "note", text: "could not read this example: " + err}));
      return;
    }
    // another example was opened (or this one closed) while this one's data was decoded
    if (!box.isConnected) return;
    box.firstChild.firstChild.textContent = detail.title;
    box.append(renderDetail(detail));
    box.scrollIntoView({block: "nearest"});
    box.dataset.openMs = (performance.now() - started).toFixed(1);
    // a link to this example: report.html#open=<set>/<row>
    history.replaceState(null, "", "#open=" + setKey + "/" + r);
  }
  let timer = null;
  search.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(() => { state.query = search.value.trim().toLowerCase(); update(); }, 120);
  });
  const heads = cols.map((c, i) => {
    const button = el("button", {class: "sort", type: "button", text: c.label});
    button.addEventListener("click", () => {
      state.dir = state.sort === i ? -state.dir : 1;
      state.sort = i;
      heads.forEach((h, j) => h.setAttribute("aria-sort",
        j === i ? (state.dir > 0 ? "ascending" : "descending") : "none"));
      update();
    });
    return el("th", {class: c.type === "number" ? "num" : null, "aria-sort": "none",
      "data-key": c.key}, button);
  });
  const sizeSelect = el("select", {"aria-label": "rows per page"},
    PAGE_SIZES.map(n => el("option", {value: n, text: n + " per page", selected: n === 50})));
  sizeSelect.addEventListener("change", () => { state.size = Number(sizeSelect.value); draw(); });
  const pager = el("div", {class: "pager"},
    el("button", {type: "button", class: "prev", text: "‹ prev",
      onclick: () => { state.page = Math.max(0, state.page - 1); draw(); }}),
    pageInfo,
    el("button", {type: "button", class: "next", text: "next ›",
      onclick: () => { state.page += 1; draw(); }}),
    sizeSelect);
  function csvButton() {
    // the rows as filtered and sorted now, every column, as a CSV download
    const link = el("a", {class: "csv-download", hidden: true});
    const button = el("button", {type: "button", class: "csv", text: "download CSV",
      title: "the rows shown by the current filter and sort, as CSV"});
    button.addEventListener("click", () => {
      const lines = [cols.map(c => csvField(c.label))];
      for (const r of state.view) lines.push(set.rows[r].map(v => csvField(v)));
      const text = lines.map(l => l.join(",")).join("\n") + "\n";
      link.href = "data:text/csv;charset=utf-8," + encodeURIComponent(text);
      link.download = (set.source || "rows").replace(/[^A-Za-z0-9._-]+/g, "_") + ".csv";
      link.click();
    });
    return el("span", {}, button, link);
  }
  card = el("div", {class: "card example-set", "data-set": setKey},
    el("h3", {text: set.title + " (" + set.rows.length + ")"}),
    el("p", {class: "muted", text: "from " + set.source + "; click a row to open it"}),
    set.truncated_to ? el("p", {class: "note", text: "Long texts in opened examples are cut at " +
      set.truncated_to + " characters to keep this file small; " + set.source +
      " has them whole."}) : null,
    el("div", {class: "controls"}, search, selects, count, csvButton()),
    el("div", {class: "scroll"}, el("table", {class: "examples"},
      el("thead", {}, el("tr", {}, heads)), tbody)),
    pager, detailBox);
  update();
  card.openRow = openRow;
  card.rowCount = set.rows.length;
  return card;
}

function runBody(run, r) {
  const body = el("div", {class: "run-body"});
  if (run.metrics.length)
    body.append(el("h3", {text: "Summary metrics"}), metricsTable(run.metrics));
  if (run.plots.length) body.append(el("h3", {text: "Plots"}), el("div", {class: "plots"},
    run.plots.map(p => el("figure", {}, el("img", {src: p.src, alt: p.title}),
      el("figcaption", {text: p.title})))));
  for (const t of run.tables) body.append(staticTable(t));
  run.example_sets.forEach((s, i) => body.append(exampleTable(s, r + "-" + i)));
  for (const d of run.documents) body.append(el("details", {class: "card"},
    el("summary", {text: d.title}), el("pre", {class: "text", text: d.text})));
  body.append(el("details", {class: "card summary-json"},
    el("summary", {text: "summary.json (everything, as recorded)"}),
    el("pre", {class: "text", text: JSON.stringify(run.summary, null, 2)})));
  return body;
}

function runHeader(run) {
  // The answer first: what the run was and its headline numbers; the configuration folds.
  return el("div", {class: "card run-head"},
    el("h2", {}, run.name, " ", badge(run.kind, "neutral")),
    run.description ? el("p", {class: "run-description", text: run.description}) : null,
    run.headline.length ? el("div", {class: "headline"}, run.headline.map(m =>
      el("div", {class: "headline-metric", "data-path": m.path, title: m.note || ""},
        el("div", {class: "headline-value", text: metricText(m)}),
        el("div", {class: "muted", text: m.label})))) : null,
    run.notes.map(n => el("p", {class: "note", text: n})),
    el("details", {class: "reproducibility"},
      el("summary", {text: "Reproducibility: models, decoding, versions, command"}),
      el("div", {class: "muted", text: run.path}),
      facts(run.reproducibility)));
}

function comparisonTable(runs) {
  const labels = [];
  for (const run of runs) for (const m of run.metrics)
    if (!labels.includes(m.label)) labels.push(m.label);
  return el("div", {class: "card comparison"}, el("h2", {text: "Side by side"}),
    el("div", {class: "scroll"}, el("table", {},
      el("thead", {}, el("tr", {}, el("th", {text: "metric"}),
        runs.map(run => el("th", {class: "num", text: run.name})))),
      el("tbody", {}, labels.map(label => el("tr", {}, el("td", {text: label}),
        runs.map(run => {
          const m = run.metrics.find(x => x.label === label);
          return el("td", {class: "num", "data-path": m ? m.path : null,
            text: m ? metricText(m) : "—"});
        })))))));
}

function openFromHash() {
  const found = /^#open=([0-9x]+-[0-9]+)\/([0-9]+)$/.exec(location.hash);
  if (!found) return;
  // the example tables on the page (in a comparison, those of the first tab)
  for (const card of document.querySelectorAll(".example-set")) {
    const row = Number(found[2]);
    if (card.dataset.set === found[1] && card.openRow && row < card.rowCount) card.openRow(row);
  }
}

async function loadRows(runs) {
  const sets = runs.flatMap(run => run.example_sets).concat(DATA.across_runs || []);
  for (const set of sets) if (set.rows_block) set.rows = await decodeBlock(set.rows_block, "gzip");
}

function render() {
  const app = document.getElementById("app");
  const runs = DATA.runs;
  const main = el("main", {});
  if (runs.length > 1) {
    main.append(el("div", {class: "runs-grid"}, runs.map(runHeader)));
    main.lastChild.style.gridTemplateColumns = "repeat(" + runs.length + ", minmax(0, 1fr))";
    main.append(comparisonTable(runs));
    (DATA.across_runs || []).forEach((s, i) => main.append(exampleTable(s, "x-" + i)));
    const tabs = el("div", {class: "tabs", role: "tablist"});
    const slot = el("div", {class: "run-slot"});
    const bodies = runs.map((run, r) => runBody(run, r));
    runs.forEach((run, r) => tabs.append(el("button", {type: "button", role: "tab",
      "aria-selected": r === 0 ? "true" : "false", text: run.name, onclick: e => {
        for (const b of tabs.children) b.setAttribute("aria-selected", "false");
        e.currentTarget.setAttribute("aria-selected", "true");
        slot.replaceChildren(bodies[r]);
      }})));
    slot.append(bodies[0]);
    main.append(tabs, slot);
  } else if (runs.length === 1) {
    main.append(runHeader(runs[0]), runBody(runs[0], 0));
  }
  app.replaceChildren(
    el("header", {class: "top"}, el("h1", {text: DATA.title}),
      el("div", {class: "sub", text: "assay " + DATA.assay_version + " · generated " +
        DATA.generated_at + " · self-contained: opens offline, fetches nothing"})),
    main);
  document.title = DATA.title;
  openFromHash();
  document.documentElement.dataset.readyMs = performance.now().toFixed(0);
  document.documentElement.dataset.ready = "true";
}

loadRows(DATA.runs).then(render).catch(err => {
  const app = document.getElementById("app");
  app.replaceChildren(el("p", {class: "note", text: "The report could not be drawn: " + err}));
  document.documentElement.dataset.ready = "error";
});
})();
"""
