// The viewer page's stylesheet (inlined by page.ts).
export const pageStyle = String.raw`
:root { --bg:#fff; --fg:#1d1f24; --dim:#6b7280; --line:#e5e7eb; --sel:#dbeafe; --hit:#fef9c3; --red:#dc2626; --amber:#b45309; --blue:#2563eb; --green:#15803d; --violet:#7c3aed;
  --l0:#2563eb; --l1:#dc2626; --l2:#0891b2; --l3:#7c3aed; --l4:#c026d3; --l5:#d97706; --l6:#4b5563; --l7:#059669; }
* { box-sizing: border-box; }
body { margin:0; font:13px/1.35 system-ui, sans-serif; color:var(--fg); background:var(--bg); height:100vh; display:flex; flex-direction:column; }
header { padding:6px 10px; border-bottom:1px solid var(--line); background:#f9fafb; }
header .title { font-size:14px; }
#source { color:var(--dim); font-family:ui-monospace, monospace; font-size:12px; }
#counts { margin:4px 0; display:flex; gap:14px; flex-wrap:wrap; }
#counts span b { font-variant-numeric:tabular-nums; }
#bound { color:var(--dim); font-size:11px; }
.tools { display:flex; gap:10px; align-items:center; flex-wrap:wrap; }
#tabs button { border:1px solid var(--line); background:#fff; padding:3px 10px; cursor:pointer; border-radius:4px; }
#tabs button.on { background:var(--fg); color:#fff; }
#search { width:280px; padding:3px 6px; }
.keys, .hint { color:var(--dim); font-size:11px; font-weight:normal; }
main { flex:1; min-height:0; display:flex; }
.tab { flex:1; min-height:0; display:flex; flex-direction:column; }
.tab[hidden] { display:none; }
#turns { max-height:34vh; overflow:auto; border-bottom:1px solid var(--line); }
.turn { display:grid; grid-template-columns: 270px 1fr; gap:8px; padding:4px 10px; border-bottom:1px solid var(--line); cursor:pointer; }
.turn.on { background:#eff6ff; }
.turn .meta { font-size:12px; }
.turn .meta .id { font-family:ui-monospace, monospace; }
.turn canvas { width:100%; height:68px; display:block; }
.turn .usage { color:var(--dim); font-size:11px; }
.badge { display:inline-block; padding:0 5px; border-radius:8px; font-size:11px; margin-left:4px; color:#fff; background:var(--dim); }
.badge.red { background:var(--red); } .badge.amber { background:var(--amber); } .badge.blue { background:var(--blue); } .badge.green { background:var(--green); }
#panes { flex:1; min-height:0; display:grid; grid-template-columns: 1.15fr 1fr 0.8fr; }
.pane { display:flex; flex-direction:column; min-height:0; border-right:1px solid var(--line); }
.pane h2, #detail h2 { font-size:12px; margin:0; padding:4px 8px; background:#f3f4f6; border-bottom:1px solid var(--line); }
.vlist { flex:1; overflow:auto; position:relative; font:12px/20px ui-monospace, monospace; outline:none; }
.vlist .spacer { width:1px; }
.vlist .row { position:absolute; left:0; right:0; height:20px; white-space:nowrap; overflow:hidden; text-overflow:ellipsis; padding:0 6px; cursor:pointer; }
.vlist .row:hover { background:#f3f4f6; }
.row .seq { color:var(--dim); display:inline-block; width:8.5em; }
.row .t { color:var(--dim); display:inline-block; width:6.5em; text-align:right; margin-right:6px; }
.row .lane { display:inline-block; width:6.5em; }
.row .np { color:var(--blue); display:inline-block; width:2.6em; }
.row.sel { background:var(--sel) !important; }
.row.linked { background:#e0f2fe; }
.row.hit { background:var(--hit); }
.row.mark { font-family:system-ui, sans-serif; font-weight:600; }
.row.mark.finding { color:var(--red); background:#fef2f2; }
.row.mark.rung, .row.mark.recomputed { color:var(--amber); background:#fffbeb; }
.row.mark.segment { color:var(--fg); background:#f3f4f6; }
.row.mark.event, .row.mark.diagnostic { color:var(--violet); }
.row.mark.redelivered, .row.mark.replayed { color:var(--blue); }
.row.elided { color:var(--dim); font-style:italic; background:repeating-linear-gradient(45deg,#fafafa,#fafafa 6px,#f3f4f6 6px,#f3f4f6 12px); }
.row.redelivered-rec .seq::after { content:" ↺"; color:var(--blue); }
.row.diffrow { border-bottom:1px solid var(--line); }
.row.differ { background:#fef2f2; }
.diffrow span { display:inline-block; width:calc(50% - 5em); overflow:hidden; text-overflow:ellipsis; vertical-align:top; }
.diffrow span.dseq { width:8em; color:var(--dim); }
#detail { overflow:auto; padding:0 0 10px; }
#detail .body { padding:6px 8px; }
#detail dl { display:grid; grid-template-columns:auto 1fr; gap:2px 8px; margin:0; }
#detail dt { color:var(--dim); }
#detail dd { margin:0; word-break:break-all; }
#detail pre { white-space:pre-wrap; word-break:break-all; background:#f9fafb; padding:4px; margin:4px 0; font-size:11px; }
a.link { color:var(--blue); cursor:pointer; text-decoration:underline; }
table { border-collapse:collapse; width:100%; font-size:12px; }
th, td { border-bottom:1px solid var(--line); padding:3px 8px; text-align:left; }
th { background:#f3f4f6; position:sticky; top:0; }
#calls, #flags { overflow:auto; flex:1; }
#diff-head { padding:6px 10px; border-bottom:1px solid var(--line); }
.lane-0 { color:var(--l0); } .lane-1 { color:var(--l1); } .lane-2 { color:var(--l2); } .lane-3 { color:var(--l3); }
.lane-4 { color:var(--l4); } .lane-5 { color:var(--l5); } .lane-6 { color:var(--l6); } .lane-7 { color:var(--l7); }
`;
