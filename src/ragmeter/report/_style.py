"""The report's stylesheet, inlined in the page (no web font, no external file)."""

CSS = """
:root {
  --fg: #1f2328; --muted: #656d76; --line: #d8dee4; --soft: #f6f8fa; --accent: #3b6ea8;
  --good: #1a7f37; --good-bg: #dafbe1; --bad: #cf222e; --bad-bg: #ffebe9;
  --warn: #9a6700; --warn-bg: #fff8c5;
}
* { box-sizing: border-box; }
body {
  margin: 0; color: var(--fg); background: #fff; font-size: 14px; line-height: 1.5;
  font-family: system-ui, -apple-system, "Segoe UI", "Noto Sans", "Noto Sans CJK SC",
    "Source Han Sans SC", "PingFang SC", "Hiragino Sans GB", "Microsoft YaHei",
    "WenQuanYi Micro Hei", "Helvetica Neue", Arial, sans-serif;
}
main { max-width: 1180px; margin: 0 auto; padding: 24px 28px 48px; }
h1 { font-size: 22px; margin: 0 0 4px; font-weight: 600; }
h2 {
  font-size: 16px; margin: 32px 0 10px; padding-bottom: 4px; font-weight: 600;
  border-bottom: 1px solid var(--line);
}
h3 { font-size: 14px; margin: 18px 0 6px; font-weight: 600; }
h4 { font-size: 13px; margin: 0 0 4px; font-weight: 600; }
h5 {
  font-size: 11px; margin: 6px 0 2px; font-weight: 600; color: var(--muted);
  text-transform: uppercase; letter-spacing: .03em;
}
a { color: var(--accent); text-decoration: none; }
a:hover { text-decoration: underline; }
nav { margin: 10px 0 0; font-size: 13px; }
nav a { margin-right: 14px; }
.muted, .why { color: var(--muted); }
.why { margin-left: 6px; font-size: 12px; }
.why::before { content: "— "; }
.meta { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; margin: 12px 0 0;
  font-size: 13px; }
.meta dt { color: var(--muted); }
.meta dd { margin: 0; }
.banner { padding: 8px 12px; border-radius: 6px; margin: 12px 0; }
.banner.bad { background: var(--bad-bg); color: var(--bad); }
.banner.warn { background: var(--warn-bg); color: var(--warn); }
table { border-collapse: collapse; width: 100%; font-size: 13px; margin: 4px 0 8px; }
th, td { padding: 5px 8px; border-bottom: 1px solid var(--line); text-align: left;
  vertical-align: top; }
th { background: var(--soft); font-weight: 600; white-space: nowrap; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.dir { text-align: center; color: var(--muted); }
tr:hover td { background: #fbfcfd; }
td.group { background: #fff; border-right: 1px solid var(--line); font-weight: 600; }
table.fit { width: auto; min-width: 50%; }
.scroll { overflow-x: auto; max-width: 100%; }
table.wrap th { white-space: normal; }
table.fit th, table.fit td { padding: 5px 14px 5px 8px; }
table.fixed { table-layout: fixed; }
table.worst-table col.c-rank { width: 36px; }
table.worst-table col.c-sample { width: 150px; }
table.worst-table col.c-score { width: 72px; }
table.worst-table col.c-qa { width: 38%; }
table.metric-table col.c-metric { width: 190px; }
table.metric-table col.c-status { width: 110px; }
table.metric-table col.c-score { width: 72px; }
.num { font-variant-numeric: tabular-nums; }
.better { color: var(--good); font-weight: 600; }
.worse { color: var(--bad); font-weight: 600; }
.same { color: var(--muted); }
.hists { display: grid; grid-template-columns: repeat(auto-fill, minmax(220px, 1fr)); gap: 10px; }
.hist-card { border: 1px solid var(--line); border-radius: 6px; padding: 8px 10px; }
.hist-card h4 span { font-weight: 400; color: var(--muted); margin-left: 6px; }
svg.hist { display: block; width: 100%; height: auto; }
svg.hist .bar { fill: #7c9cc4; }
svg.hist .bar.empty { fill: none; }
svg.hist .axis { stroke: #8c959f; stroke-width: 1; }
svg.hist .tick { font-size: 9px; fill: var(--muted); }
svg.hist .tick.mid { text-anchor: middle; }
svg.hist .tick.end { text-anchor: end; }
svg.scatter { display: block; width: 100%; max-width: 260px; height: auto; }
svg.scatter .frame { fill: #fbfcfd; stroke: var(--line); }
svg.scatter .diag { stroke: #8c959f; stroke-width: 1; stroke-dasharray: 4 3; }
svg.scatter .pt { fill: #8c959f; fill-opacity: .65; stroke: #fff; stroke-width: .5; }
svg.scatter .pt.better { fill: var(--good); }
svg.scatter .pt.worse { fill: var(--bad); }
svg.scatter .tick, svg.deltas .tick { font-size: 9px; fill: var(--muted); }
svg.scatter .tick.mid, svg.deltas .tick.mid { text-anchor: middle; }
svg.scatter .tick.end, svg.deltas .tick.end { text-anchor: end; }
svg.deltas { display: block; max-width: 100%; height: auto; }
svg.deltas .label { font-size: 11px; fill: var(--fg); }
svg.deltas .axis { stroke: #8c959f; stroke-width: 1; }
svg.deltas .dbar { fill: #c4cbd3; }
svg.deltas .dbar.better { fill: var(--good); }
svg.deltas .dbar.worse { fill: var(--bad); }
svg.deltas .whisker { stroke: var(--fg); stroke-width: 1.2; }
td.shaded { color: var(--fg); }
td .n { display: block; font-size: 11px; color: var(--muted); }
tr:hover td.shaded { filter: brightness(.97); }
.legend { display: inline-flex; align-items: center; gap: 2px; margin-left: 6px;
  vertical-align: middle; }
.legend .swatch { display: inline-block; min-width: 38px; padding: 0 4px; font-size: 11px;
  text-align: center; color: var(--fg); border-radius: 2px; }
.chip.rid.relevant { font-weight: 600; }
.chip.missing { text-decoration: none; }
.retrieval .chips { margin: 2px 0; }
.finding { border: 1px solid var(--line); border-left-width: 4px; border-radius: 6px;
  padding: 10px 14px; margin: 10px 0; }
.finding.high { border-left-color: var(--bad); }
.finding.medium { border-left-color: #d4a72c; }
.finding.low { border-left-color: #8c959f; }
.finding h3 { margin: 0 0 4px; }
.finding p { margin: 4px 0; }
.finding ul { margin: 4px 0; padding-left: 20px; }
.badge { display: inline-block; padding: 0 7px; border-radius: 10px; font-size: 11px;
  font-weight: 600; margin-right: 6px; vertical-align: 1px; background: var(--soft);
  color: var(--muted); border: 1px solid var(--line); }
.badge.high { background: var(--bad-bg); color: var(--bad); border-color: #ffcecb; }
.badge.medium { background: var(--warn-bg); color: var(--warn); border-color: #f2e29b; }
.chips { display: flex; flex-wrap: wrap; gap: 4px; margin: 2px 0; }
.chip { display: inline-block; padding: 0 6px; border-radius: 4px; font-size: 12px;
  background: var(--soft); border: 1px solid var(--line); }
.chip.good { background: var(--good-bg); border-color: #aceebb; color: var(--good); }
.chip.bad { background: var(--bad-bg); border-color: #ffcecb; color: var(--bad); }
.verdict { display: inline-block; min-width: 72px; margin-right: 6px; font-size: 11px;
  font-weight: 600; padding: 0 5px; border-radius: 4px; text-align: center; }
.verdict.good { background: var(--good-bg); color: var(--good); }
.verdict.bad { background: var(--bad-bg); color: var(--bad); }
.verdict.warn { background: var(--warn-bg); color: var(--warn); }
ul.claims, ul.plain { list-style: none; padding: 0; margin: 0; }
ul.claims li, ul.plain li { padding: 2px 0; }
ul.claims li.bad { background: var(--bad-bg); border-radius: 4px; }
ul.plain .num { display: inline-block; min-width: 44px; color: var(--muted); }
.details { font-size: 12px; }
details > summary { cursor: pointer; color: var(--accent); font-size: 12px; }
.sample { border: 1px solid var(--line); border-radius: 6px; padding: 10px 14px;
  margin: 12px 0; scroll-margin-top: 12px; }
.sample:target { border-color: var(--accent); box-shadow: 0 0 0 2px #c8daf0; }
.sample .field { display: grid; grid-template-columns: 90px 1fr; gap: 8px; margin: 3px 0; }
.sample .field > .label { color: var(--muted); font-size: 12px; padding-top: 1px; }
.sample .body { white-space: pre-wrap; overflow-wrap: anywhere; }
.sample ol.contexts { margin: 0; padding-left: 22px; }
.sample ol.contexts li { margin: 2px 0; }
.sample ol.contexts .body { font-size: 13px; }
.ctx-id { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  font-size: 11px; color: var(--muted); margin-right: 6px; }
td.text { max-width: 340px; overflow-wrap: anywhere; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12px; }
.status-failed { color: var(--bad); }
.status-not_applicable { color: var(--muted); }
.status-not_started { color: var(--muted); font-style: italic; }
footer { margin-top: 40px; color: var(--muted); font-size: 12px; }
@media print { nav { display: none; } .sample, .finding { break-inside: avoid; } }
"""
