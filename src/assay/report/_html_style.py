"""The report's stylesheet (system fonts only: nothing is fetched)."""

STYLE = r"""
:root { --fg:#1d232b; --muted:#5b6675; --line:#d9dee5; --bg:#f6f7f9; --card:#fff;
  --accent:#2457c5; --good:#1f7a3a; --bad:#b42318; --warn:#a15c00;
  --sup:#d7f2df; --uns:#fddcd8; --unc:#fff0c2; --quote:#dfe8ff; --gold:#efe3ff; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;
  color:var(--fg); background:var(--bg); }
header.top { background:#17202c; color:#fff; padding:14px 24px; }
header.top h1 { margin:0; font-size:20px; }
header.top .sub { color:#b9c3d0; font-size:12px; }
main { padding:16px 24px 48px; max-width:1600px; margin:0 auto; }
h2 { font-size:18px; margin:22px 0 8px; }
h3 { font-size:15px; margin:16px 0 6px; }
.card { background:var(--card); border:1px solid var(--line); border-radius:8px;
  padding:12px 16px; margin:10px 0; }
.runs-grid { display:grid; gap:12px; }
.headline { display:flex; flex-wrap:wrap; gap:8px 28px; margin:8px 0 4px; }
.headline-value { font-size:1.35em; font-weight:600; font-variant-numeric:tabular-nums; }
.run-description { margin:2px 0 6px; }
.reproducibility > summary { cursor:pointer; color:var(--muted); }
.facts { display:grid; grid-template-columns:repeat(auto-fill,minmax(220px,1fr)); gap:4px 16px; }
.fact .k { color:var(--muted); font-size:12px; display:block; }
.fact .v { font-family:ui-monospace,SFMono-Regular,Menlo,monospace; font-size:13px;
  overflow-wrap:anywhere; }
table { border-collapse:collapse; width:100%; background:var(--card); }
th, td { border-bottom:1px solid var(--line); padding:4px 8px; text-align:left;
  vertical-align:top; }
th { background:#eef1f5; font-weight:600; font-size:12px; white-space:nowrap; }
td.num, th.num { text-align:right; font-variant-numeric:tabular-nums; }
.scroll { overflow-x:auto; }
.plots { display:grid; grid-template-columns:repeat(auto-fill,minmax(360px,1fr)); gap:12px; }
.plots figure { margin:0; background:var(--card); border:1px solid var(--line);
  border-radius:8px; padding:8px; }
.plots img { width:100%; height:auto; display:block; }
.plots figcaption { font-size:12px; color:var(--muted); }
.note { color:var(--warn); background:#fff7e6; border:1px solid #f3d9a4; border-radius:6px;
  padding:6px 10px; margin:6px 0; }
.controls { display:flex; flex-wrap:wrap; gap:8px; align-items:center; margin:6px 0; }
.controls input[type=search] { min-width:260px; padding:4px 8px; }
.controls select, .controls button, .pager button { padding:3px 8px; }
.count { color:var(--muted); font-size:12px; }
th button.sort { all:unset; cursor:pointer; }
th button.sort:focus-visible { outline:2px solid var(--accent); }
tbody.rows tr { cursor:pointer; }
tbody.rows tr:hover { background:#f0f4ff; }
tbody.rows tr.open { background:#e3ebff; }
table.metrics { max-width:1100px; }
tbody.rows td { white-space:nowrap; }
td.clip { max-width:520px; overflow:hidden; text-overflow:ellipsis; white-space:nowrap; }
.pager { display:flex; gap:6px; align-items:center; margin:6px 0; }
.badge { display:inline-block; border-radius:10px; padding:0 8px; font-size:12px;
  border:1px solid var(--line); background:#f2f4f7; margin-right:4px; }
.badge.good { background:#e3f5e8; color:var(--good); border-color:#b7e1c3; }
.badge.bad { background:#fde7e4; color:var(--bad); border-color:#f5b8b0; }
.badge.warn { background:#fff3d6; color:var(--warn); border-color:#f1d08c; }
.detail { background:var(--card); border:2px solid var(--accent); border-radius:8px;
  padding:12px 16px; margin:10px 0; }
/* a model's 5,000-character token must wrap inside the example, not widen the page */
.detail-body { overflow-wrap:anywhere; }
/* data set beside the page's own words: a right-to-left override a model never closes must
   not reverse the label after it */
.text mark sup, .claim-text, ol.claims li span, .ev span, .fact .v { unicode-bidi:isolate; }
.detail .head { display:flex; justify-content:space-between; align-items:center; gap:8px; }
.detail h3 { margin:0; overflow-wrap:anywhere; }
.detail .nav { display:flex; gap:6px; align-items:center; white-space:nowrap; }
.text { white-space:pre-wrap; overflow-wrap:anywhere; background:#fbfcfd;
  border:1px solid var(--line); border-radius:6px; padding:8px 10px; }
pre.text { font-family:ui-monospace,SFMono-Regular,Menlo,monospace; font-size:12px;
  max-height:420px; overflow:auto; }
mark { border-radius:3px; padding:0 1px; color:inherit; }
mark.supported { background:var(--sup); }
mark.unsupported { background:var(--uns); }
mark.uncertain { background:var(--unc); }
mark.quote { background:var(--quote); }
mark.gold { background:var(--gold); }
mark.missing { background:#eee; }
mark sup { font-size:10px; color:var(--muted); margin-left:2px; }
ol.claims li { margin:6px 0; }
.chip { all:unset; cursor:pointer; font-family:ui-monospace,monospace; font-size:12px;
  border:1px solid var(--accent); color:var(--accent); border-radius:4px; padding:0 4px;
  margin:0 3px 0 0; }
.chip:focus-visible { outline:2px solid var(--accent); }
.evidence .ev { border:1px solid var(--line); border-radius:6px; padding:6px 10px;
  margin:6px 0; }
.evidence .ev.flash { outline:3px solid var(--accent); }
.evidence .ev .id { font-family:ui-monospace,monospace; font-weight:600; }
.muted { color:var(--muted); }
.claim-facts { display:flex; flex-wrap:wrap; gap:2px 14px; margin:2px 0; }
.claim-fact.long { flex-basis:100%; overflow-wrap:anywhere; }
.claim-fact > .k { font-weight:600; }
details > summary { cursor:pointer; font-weight:600; margin:8px 0; }
.tabs { display:flex; gap:4px; flex-wrap:wrap; margin:8px 0; }
.tabs button { padding:4px 10px; border:1px solid var(--line); background:#fff;
  border-radius:6px 6px 0 0; cursor:pointer; }
.tabs button[aria-selected=true] { background:var(--accent); color:#fff; }
"""
