// The viewer page's script (inlined by page.ts; plain browser JS, no
// backticks or template substitutions inside). It reads the embedded data
// (view-data.ts) and renders lazily: virtual lists draw only the rows in view,
// so a page with 50,000 kept records opens as fast as one with 50.
export const pageScript = String.raw`
"use strict";
(function () {
var D = JSON.parse(document.getElementById('view-data').textContent);
var H = 20;
var $ = function (id) { return document.getElementById(id); };
var esc = function (s) { return String(s).replace(/[&<>"]/g, function (c) { return { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }[c]; }); };
var fmt = function (n) { return n == null ? '-' : Number(n).toLocaleString('en-US'); };
var secs = function (ms) { return '+' + (ms / 1000).toFixed(3) + 's'; };
var R = D.records, P = D.parts, M = D.marks, E = D.elided, T = D.turns;

// Indexes: record id -> kept row; part index -> kept row; parts by record id.
var recPos = new Map(), partPos = new Map(), partsOfRec = new Map(), marksAt = new Map(), callsAt = new Map();
R.forEach(function (r, i) { recPos.set(r[0], i); });
P.forEach(function (p, i) { partPos.set(p[0], i); var l = partsOfRec.get(p[1]); if (!l) partsOfRec.set(p[1], l = []); l.push(i); });
M.forEach(function (m, i) { var l = marksAt.get(m.record); if (!l) marksAt.set(m.record, l = []); l.push(i); });
D.hostCalls.forEach(function (c, i) { [c.callRecord, c.answerRecord].forEach(function (id) { if (id == null) return; var l = callsAt.get(id); if (!l) callsAt.set(id, l = []); l.push(i); }); });

// The records list: marks before the record they sit at, elided runs between kept records.
var items = [];
(function () {
  var ri = 0, ei = 0, mi = 0;
  var ids = M.map(function (m) { return m.record; });
  while (ri < R.length || ei < E.length || mi < M.length) {
    var rid = ri < R.length ? R[ri][0] : Infinity, eid = ei < E.length ? E[ei][0] : Infinity, mid = mi < M.length ? ids[mi] : Infinity;
    if (mid <= rid && mid <= eid) items.push({ k: 'm', i: mi++ });
    else if (eid < rid) items.push({ k: 'e', i: ei++ });
    else items.push({ k: 'r', i: ri++ });
  }
})();
var itemOfRec = new Map(), itemOfMark = new Map();
items.forEach(function (it, n) { if (it.k === 'r') itemOfRec.set(it.i, n); else if (it.k === 'm') itemOfMark.set(it.i, n); });

function VList(el, count, render) {
  el.innerHTML = '<div class="spacer"></div>';
  var spacer = el.firstChild, drawn = new Map(), self = this;
  this.el = el; this.count = count;
  spacer.style.height = (count * H) + 'px';
  this.draw = function () {
    var top = el.scrollTop, h = el.clientHeight || 400;
    var from = Math.max(0, Math.floor(top / H) - 10), to = Math.min(self.count, Math.ceil((top + h) / H) + 10);
    drawn.forEach(function (node, i) { if (i < from || i >= to) { node.remove(); drawn.delete(i); } });
    for (var i = from; i < to; i++) {
      if (drawn.has(i)) continue;
      var node = render(i);
      node.style.top = (i * H) + 'px';
      node.dataset.item = i;
      el.appendChild(node);
      drawn.set(i, node);
    }
  };
  this.redraw = function () { drawn.forEach(function (node) { node.remove(); }); drawn.clear(); self.draw(); };
  this.show = function (i) {
    var top = i * H, h = el.clientHeight || 400;
    if (top < el.scrollTop || top + H > el.scrollTop + h) el.scrollTop = Math.max(0, top - h / 3);
    self.redraw();
  };
  el.addEventListener('scroll', function () { self.draw(); });
  window.addEventListener('resize', function () { self.draw(); });
}

var state = { rec: -1, part: -1, mark: -1, cursor: -1, hits: [], hit: -1, query: '' };
var hitSet = new Set();

function laneName(l) { return D.lanes[l]; }
function recRow(i) {
  var r = R[i], d = document.createElement('div');
  var cls = 'row rec' + (i === state.rec ? ' sel' : '') + (r[9] > 1 ? ' redelivered-rec' : '') + (hitSet.has('r' + i) ? ' hit' : '');
  d.className = cls;
  d.dataset.rec = r[0]; d.dataset.seq = r[2];
  d.innerHTML = '<span class="seq">' + (D.source.journals > 1 ? 'j' + (r[1] + 1) + ' ' : '') + 'seq ' + r[2] + '</span><span class="t">' + secs(r[4]) + '</span><span class="lane lane-' + r[3] + '">' + laneName(r[3]) + '</span><span class="np">' + (r[8] > 0 ? '→' + r[8] : '') + '</span>' + esc(r[6]);
  d.onclick = function () { selectRecord(i, true); };
  return d;
}
function markRow(i) {
  var m = M[i], d = document.createElement('div');
  d.className = 'row mark ' + m.kind + (i === state.mark ? ' sel' : '') + (hitSet.has('m' + i) ? ' hit' : '');
  d.dataset.mark = i; d.dataset.kind = m.kind; if (m.rule) d.dataset.rule = m.rule;
  var icon = { finding: '✖', rung: '⚑', segment: '━━', event: '·', diagnostic: '!', redelivered: '↺', replayed: '↻', recomputed: '⟳' }[m.kind] || '·';
  d.textContent = icon + ' ' + m.kind + ' at seq ' + m.seq + (m.toSeq != null ? '..' + m.toSeq : '') + ': ' + m.text;
  d.title = m.text;
  d.onclick = function () { showMark(i); };
  return d;
}
function elidedRow(i) {
  var e = E[i], d = document.createElement('div');
  d.className = 'row elided';
  var n = e[1] - e[0] + 1, by = [];
  e[2].forEach(function (c, l) { if (c) by.push(laneName(l) + ' ' + fmt(c)); });
  d.textContent = '… ' + fmt(n) + ' record' + (n > 1 ? 's' : '') + ' not kept in detail (records #' + e[0] + '–#' + e[1] + ': ' + by.join(', ') + ') — counted in the turn timelines';
  return d;
}
function partRow(i) {
  var p = P[i], d = document.createElement('div');
  var linked = state.rec >= 0 && p[1] === R[state.rec][0];
  d.className = 'row part' + (i === state.part ? ' sel' : '') + (linked ? ' linked' : '') + (hitSet.has('p' + i) ? ' hit' : '');
  d.dataset.part = p[0]; d.dataset.rec = p[1];
  var r = R[recPos.get(p[1])];
  d.innerHTML = '<span class="seq">#' + p[0] + '</span><span class="seq">' + (r && D.source.journals > 1 ? 'j' + (r[1] + 1) + ' ' : '') + 'seq ' + (r ? r[2] : '?') + '</span><b>' + esc(p[2]) + '</b> ' + esc(p[3]);
  d.onclick = function () { selectPart(i, true); };
  return d;
}

var recList = new VList($('records'), items.length, function (n) { var it = items[n]; return it.k === 'r' ? recRow(it.i) : it.k === 'm' ? markRow(it.i) : elidedRow(it.i); });
var partList = new VList($('parts'), P.length, partRow);

function selectRecord(i, fromClick) {
  state.rec = i;
  var r = R[i], ps = partsOfRec.get(r[0]) || [];
  state.part = fromClick ? (ps.length ? ps[0] : -1) : state.part;
  state.mark = -1; state.cursor = itemOfRec.get(i);
  recList.show(state.cursor);
  if (ps.length) partList.show(ps[0]); else partList.redraw();
  selectTurnOf(r[5], false);
  showRecordDetail(i);
}
function selectPart(i) {
  state.part = i;
  var p = P[i], ri = recPos.get(p[1]);
  if (ri != null) { state.rec = ri; state.mark = -1; state.cursor = itemOfRec.get(ri); recList.show(state.cursor); selectTurnOf(R[ri][5], false); }
  partList.show(i);
  showRecordDetail(ri, i);
}
function showMark(i) {
  state.mark = i; state.cursor = itemOfMark.get(i);
  recList.show(state.cursor);
  var m = M[i], ri = recPos.get(m.record);
  $('detail').innerHTML = '<h2>' + esc(m.kind) + '</h2><div class="body"><dl><dt>at</dt><dd>seq ' + m.seq + (m.toSeq != null ? '..' + m.toSeq : '') + '</dd>' + (m.rule ? '<dt>rule</dt><dd>' + esc(m.rule) + '</dd>' : '') + '</dl><pre>' + esc(m.text) + '</pre>' +
    (ri != null ? '<a class="link" data-goto-rec="' + ri + '">record seq ' + R[ri][2] + '</a>' : '<span class="hint">' + (m.record >= D.counts.records ? 'after the last record' : 'its record is not kept in detail') + '</span>') + '</div>';
  wireLinks();
}
function showRecordDetail(ri, pi) {
  if (ri == null) return;
  var r = R[ri], ps = partsOfRec.get(r[0]) || [];
  var turn = r[5] >= 0 ? T[r[5]] : null;
  var html = '<h2>record seq ' + r[2] + '</h2><div class="body" id="detail-record" data-rec="' + r[0] + '"><dl>' +
    '<dt>record</dt><dd>#' + r[0] + (D.source.journals > 1 ? ' (journal ' + (r[1] + 1) + ')' : '') + '</dd>' +
    '<dt>lane</dt><dd>' + laneName(r[3]) + '</dd><dt>time</dt><dd>' + secs(r[4]) + '</dd>' +
    '<dt>turn</dt><dd>' + (turn ? esc(turn.turnId) : '(outside a turn)') + '</dd>' +
    (r[9] > 1 ? '<dt>delivered</dt><dd>more than once (redelivered)</dd>' : '') + '</dl><pre>' + esc(r[6]) + '</pre>';
  html += '<h3>became ' + r[8] + ' part' + (r[8] === 1 ? '' : 's') + '</h3><ul id="detail-parts">';
  ps.forEach(function (p) { html += '<li><a class="link" data-goto-part="' + p + '">#' + P[p][0] + ' ' + esc(P[p][2]) + '</a>' + (p === pi ? ' ◀' : '') + '</li>'; });
  html += '</ul>';
  if (pi != null) html += '<h3>part #' + P[pi][0] + ' ' + esc(P[pi][2]) + '</h3><pre>' + esc(P[pi][3]) + '</pre><p>from <a class="link" data-goto-rec="' + ri + '">record seq ' + r[2] + '</a></p>';
  (callsAt.get(r[0]) || []).forEach(function (c) { html += callHtml(D.hostCalls[c]); });
  (marksAt.get(r[0]) || []).forEach(function (m) { html += '<p class="mark-note"><b>' + esc(M[m].kind) + '</b> ' + esc(M[m].text) + '</p>'; });
  $('detail').innerHTML = html + '</div>';
  wireLinks();
}
function callHtml(c) {
  return '<h3>' + (c.kind === 'tool' ? 'host tool call' : 'approval') + ' ' + esc(c.name) + '</h3><dl><dt>id</dt><dd>' + esc(c.id) + '</dd><dt>called</dt><dd>seq ' + c.callSeq + ' (' + c.source + ')</dd><dt>answered</dt><dd>' +
    (c.answerSeq == null ? 'never' : 'seq ' + c.answerSeq + ', ' + esc(c.outcome) + ', by ' + esc(c.by)) + '</dd><dt>took</dt><dd>' + (c.ms == null ? '-' : c.ms + ' ms') + '</dd></dl>';
}
function wireLinks() {
  document.querySelectorAll('[data-goto-rec]').forEach(function (a) { a.onclick = function () { showTab('session'); selectRecord(Number(a.dataset.gotoRec), false); }; });
  document.querySelectorAll('[data-goto-part]').forEach(function (a) { a.onclick = function () { selectPart(Number(a.dataset.gotoPart)); }; });
  document.querySelectorAll('[data-goto-id]').forEach(function (a) { a.onclick = function () { showTab('session'); gotoId(Number(a.dataset.gotoId)); }; });
  document.querySelectorAll('[data-goto-mark]').forEach(function (a) { a.onclick = function () { showTab('session'); showMark(Number(a.dataset.gotoMark)); }; });
}
/** The kept record with this id, or the first kept one after it. */
function gotoId(id) {
  var lo = 0, hi = R.length;
  while (lo < hi) { var mid = (lo + hi) >> 1; if (R[mid][0] < id) lo = mid + 1; else hi = mid; }
  if (lo < R.length) selectRecord(lo, true);
}

// Header.
$('source').textContent = D.source.path + ' (' + D.source.kind + (D.source.segments ? ', ' + D.source.segments + ' segments' : '') + (D.source.journals > 1 ? ', ' + D.source.journals + ' journals' : '') + ', adapter ' + D.source.adapter + ')';
var c = D.counts;
$('counts').innerHTML = [['records', c.records], ['parts', c.parts], ['deliveries', c.deliveries], ['turns', c.turns], ['host calls', c.hostCalls], ['findings', c.findings], ['flags', M.length - Math.min(M.length, M.filter(function (m) { return m.kind === 'finding'; }).length)]]
  .map(function (p) { return '<span data-count="' + p[0] + '">' + p[0] + ' <b>' + fmt(p[1]) + '</b></span>'; }).join('') + (c.findings ? '' : '<span class="badge green" data-count="check">check ok</span>');
var b = D.bound;
$('bound').textContent = (b.kept === c.records ? 'every record kept in detail' : fmt(b.kept) + ' of ' + fmt(c.records) + ' records kept in detail (' + b.window + ' around each turn edge, host call and flag; at most ' + fmt(b.maxKept) + '); the rest are counted in the timelines') + ' · ' + fmt(b.keptParts) + ' of ' + fmt(c.parts) + ' parts listed';

// Turns: a row each, a canvas timeline from the histogram, usage per step and in total.
var turnSel = -1, axis = 'seq';
function usageText(u) { return u ? 'in ' + fmt(u.input) + ' / out ' + fmt(u.output) : '-'; }
function drawTurn(ti, canvas) {
  var t = T[ti], h = t.histogram, cols = h.t.length, L = D.lanes.length;
  var w = canvas.clientWidth || 600, ht = 68; canvas.width = w; canvas.height = ht;
  var g = canvas.getContext('2d'), lh = ht / L, styles = getComputedStyle(document.documentElement);
  g.clearRect(0, 0, w, ht);
  var span = Math.max(1, t.t1 - t.t0);
  var xOf = function (col) { return axis === 'seq' ? col / Math.max(1, cols) * w : (h.t[col] - t.t0) / span * (w - 4); };
  var max = 1; h.counts.forEach(function (v) { if (v > max) max = v; });
  for (var col = 0; col < cols; col++) {
    var x = xOf(col), cw = axis === 'seq' ? Math.max(1, w / Math.max(1, cols) - 1) : 3;
    for (var l = 0; l < L; l++) {
      var v = h.counts[col * L + l]; if (!v) continue;
      g.globalAlpha = 0.25 + 0.75 * Math.sqrt(v / max);
      g.fillStyle = styles.getPropertyValue('--l' + l) || '#333';
      g.fillRect(x, l * lh + 1, cw, lh - 2);
    }
  }
  g.globalAlpha = 1;
  M.forEach(function (m) {
    if (m.record < t.firstRecord || m.record > t.lastRecord) return;
    var n = (m.record - t.firstRecord) / Math.max(1, t.lastRecord - t.firstRecord + 1);
    var ri = recPos.get(m.record);
    var x = axis === 'seq' ? n * w : ri != null ? (R[ri][4] - t.t0) / span * (w - 4) : n * w;
    g.fillStyle = m.kind === 'finding' ? '#dc2626' : m.kind === 'rung' || m.kind === 'recomputed' ? '#b45309' : '#6b7280';
    g.fillRect(x, 0, 2, ht);
  });
}
function renderTurns() {
  var el = $('turns'); el.innerHTML = '';
  var head = document.createElement('div');
  head.className = 'turn'; head.style.cursor = 'default';
  head.innerHTML = '<div class="meta"><b>' + fmt(T.length) + ' turn' + (T.length === 1 ? '' : 's') + '</b>' + (D.turnsDropped ? ' (+' + fmt(D.turnsDropped) + ' not shown)' : '') + ' · x: <a class="link" id="axis">' + axis + '</a></div><div class="meta">' +
    D.lanes.map(function (l, i) { return '<span class="lane-' + i + '">■ ' + l + '</span>'; }).join(' ') + ' <span style="color:#dc2626">| finding</span> <span style="color:#b45309">| rung</span></div>';
  el.appendChild(head);
  $('axis').onclick = function () { axis = axis === 'seq' ? 'time' : 'seq'; renderTurns(); };
  T.slice(0, 500).forEach(function (t, ti) {
    var d = document.createElement('div');
    d.className = 'turn' + (ti === turnSel ? ' on' : '');
    d.dataset.turn = ti;
    var badges = (t.rerun ? '<span class="badge amber">rerun</span>' : '') + (t.end ? '<span class="badge ' + (t.end === 'matched' || t.end === 'exit' ? 'green' : 'amber') + '">' + esc(t.end) + '</span>' : '<span class="badge amber">open</span>') + (t.findings ? '<span class="badge red" data-findings="' + t.findings + '">' + t.findings + ' finding' + (t.findings > 1 ? 's' : '') + '</span>' : '');
    var steps = t.steps.map(function (u, i) { return 'step ' + (i + 1) + ': ' + usageText(u); }).join(' · ');
    d.innerHTML = '<div class="meta"><span class="id">' + esc(t.turnId) + '</span>' + badges + '<br>seq ' + t.firstSeq + '–' + t.lastSeq + (D.source.journals > 1 ? ' (journal ' + (t.journal + 1) + ')' : '') + ' · ' + secs(t.t1 - t.t0).slice(1) + '<br><span data-turn-records="' + t.records + '">' + fmt(t.records) + ' records</span> → <span data-turn-parts="' + t.parts + '">' + fmt(t.parts) + ' parts</span>' +
      '<div class="usage">usage: ' + usageText(t.total) + (steps ? ' — ' + esc(steps) : '') + '</div></div><canvas></canvas>';
    d.onclick = function (ev) {
      var canvas = d.querySelector('canvas');
      if (ev.target === canvas) {
        var frac = ev.offsetX / canvas.clientWidth;
        gotoId(t.firstRecord + Math.floor(frac * (t.lastRecord - t.firstRecord + 1)));
      } else gotoId(t.firstRecord);
      selectTurnOf(ti, true);
    };
    el.appendChild(d);
    drawTurn(ti, d.querySelector('canvas'));
  });
  if (T.length > 500) { var more = document.createElement('div'); more.className = 'turn'; more.textContent = fmt(T.length - 500) + ' more turns: use [ and ] or search'; el.appendChild(more); }
}
function selectTurnOf(ti, scroll) {
  if (ti === turnSel || ti < 0) return;
  turnSel = ti;
  document.querySelectorAll('.turn.on').forEach(function (n) { n.classList.remove('on'); });
  var n = document.querySelector('.turn[data-turn="' + ti + '"]');
  if (n) { n.classList.add('on'); if (scroll) n.scrollIntoView({ block: 'nearest' }); }
}

// Host calls and flags tabs.
function renderCalls() {
  var rows = D.hostCalls.map(function (h, i) {
    return '<tr data-call="' + i + '"><td>' + h.kind + '</td><td>' + esc(h.name) + '</td><td>' + esc(h.id) + '</td><td>' + (h.turn >= 0 ? esc(T[h.turn].turnId) : '-') + '</td><td><a class="link" data-goto-id="' + h.callRecord + '">seq ' + h.callSeq + '</a> (' + h.source + ')</td><td>' +
      (h.answerSeq == null ? '<span class="badge red">never answered</span>' : '<a class="link" data-goto-id="' + h.answerRecord + '">seq ' + h.answerSeq + '</a>') + '</td><td class="ms">' + (h.ms == null ? '-' : fmt(h.ms) + ' ms') + '</td><td>' + esc(h.outcome || '-') + '</td><td>' + esc(h.by || '-') + '</td></tr>';
  });
  $('calls').innerHTML = '<table><thead><tr><th>kind</th><th>name</th><th>id</th><th>turn</th><th>call</th><th>answer</th><th>took</th><th>outcome</th><th>answered by</th></tr></thead><tbody>' + rows.join('') + '</tbody></table>' +
    (c.hostCalls > D.hostCalls.length ? '<p class="hint">' + fmt(c.hostCalls - D.hostCalls.length) + ' more not listed</p>' : '');
}
function renderFlags() {
  var rows = M.map(function (m, i) { return '<tr class="flag ' + m.kind + '" data-flag="' + i + '"><td>' + m.kind + '</td><td>' + (m.rule ? esc(m.rule) : '') + '</td><td>seq ' + m.seq + (m.toSeq != null ? '..' + m.toSeq : '') + '</td><td><a class="link" data-goto-mark="' + i + '">' + esc(m.text) + '</a></td></tr>'; });
  $('flags').innerHTML = '<table><thead><tr><th>flag</th><th>rule</th><th>where</th><th>what</th></tr></thead><tbody>' + rows.join('') + '</tbody></table>' + (c.findingsDropped ? '<p class="hint">' + fmt(c.findingsDropped) + ' more findings not listed</p>' : '');
}

// Diff tab: one row per part line, aligned by seq.
var diffLines = [], diffList = null;
function renderDiff() {
  var df = D.diff; if (!df) return;
  df.rows.forEach(function (row, ri) {
    var n = Math.max(row.a.length, row.b.length, 1);
    for (var k = 0; k < n; k++) diffLines.push({ r: ri, k: k });
  });
  $('diff-head').innerHTML = '<b>a</b> = ' + esc(df.a) + '<br><b>b</b> = ' + esc(df.b) + '<br><span data-count="diff-seqs">' + fmt(df.seqs) + ' seqs compared</span>, <span data-count="diff-differing">' + fmt(df.differing) + ' differ</span>, parts a ' + fmt(df.partsA) + ' / b ' + fmt(df.partsB) +
    (df.elided ? ', ' + fmt(df.elided) + ' same seqs not shown' : '') + (df.differing ? '' : ' <span class="badge green">same</span>');
  diffList = new VList($('diff'), diffLines.length, function (n) {
    var line = diffLines[n], row = df.rows[line.r], d = document.createElement('div');
    d.className = 'row diffrow' + (row.same ? '' : ' differ');
    d.dataset.diffSeq = row.seq; d.dataset.same = row.same ? '1' : '0';
    d.innerHTML = '<span class="dseq">' + (line.k === 0 ? (D.source.journals > 1 ? 'j' + (row.journal + 1) + ' ' : '') + 'seq ' + row.seq + (row.same ? '' : ' ≠') : '') + '</span><span class="a">' + esc(row.a[line.k] || '') + '</span> <span class="b">' + esc(row.b[line.k] || '') + '</span>';
    d.title = (row.a[line.k] || '') + '\n' + (row.b[line.k] || '');
    return d;
  });
}

// Tabs.
var tabs = [['session', 'session'], ['calls', 'host calls (' + D.hostCalls.length + ')'], ['flags', 'flags (' + M.length + ')']];
if (D.diff) tabs.push(['diff', 'diff' + (D.diff.differing ? ' (' + D.diff.differing + ' differ)' : ' (same)')]);
var current = 'session';
$('tabs').innerHTML = tabs.map(function (t) { return '<button data-tab="' + t[0] + '">' + esc(t[1]) + '</button>'; }).join('');
document.querySelectorAll('#tabs button').forEach(function (bt) { bt.onclick = function () { showTab(bt.dataset.tab); }; });
function showTab(name) {
  current = name;
  tabs.forEach(function (t) { $('tab-' + t[0]).hidden = t[0] !== name; });
  document.querySelectorAll('#tabs button').forEach(function (bt) { bt.classList.toggle('on', bt.dataset.tab === name); });
  if (name === 'session') { recList.draw(); partList.draw(); }
  if (name === 'diff' && diffList) diffList.draw();
}

// Search: records' summaries, parts' text, flags; Enter steps through the hits.
var searchTimer = 0;
function runSearch(q) {
  state.query = q; hitSet = new Set(); state.hits = []; state.hit = -1;
  if (q) {
    var ql = q.toLowerCase();
    items.forEach(function (it, n) {
      if (it.k === 'r' && (R[it.i][6].toLowerCase().indexOf(ql) >= 0 || ('seq ' + R[it.i][2]) === ql)) { hitSet.add('r' + it.i); state.hits.push(n); }
      else if (it.k === 'm' && M[it.i].text.toLowerCase().indexOf(ql) >= 0) { hitSet.add('m' + it.i); state.hits.push(n); }
    });
    P.forEach(function (p, i) {
      if ((p[2] + ' ' + p[3]).toLowerCase().indexOf(ql) < 0) return;
      hitSet.add('p' + i);
      var n = itemOfRec.get(recPos.get(p[1]));
      if (n != null && !hitSet.has('r' + items[n].i)) { hitSet.add('r' + items[n].i); state.hits.push(n); }
    });
    state.hits.sort(function (a, b) { return a - b; });
  }
  $('search-status').textContent = q ? state.hits.length + ' match' + (state.hits.length === 1 ? '' : 'es') : '';
  $('search-status').dataset.matches = state.hits.length;
  recList.redraw(); partList.redraw();
}
function stepHit(dir) {
  if (!state.hits.length) return;
  state.hit = (state.hit + dir + state.hits.length) % state.hits.length;
  var it = items[state.hits[state.hit]];
  showTab('session');
  if (it.k === 'r') selectRecord(it.i, true); else showMark(it.i);
  $('search-status').textContent = (state.hit + 1) + ' of ' + state.hits.length + ' matches';
}
$('search').addEventListener('input', function (ev) { clearTimeout(searchTimer); searchTimer = setTimeout(function () { runSearch(ev.target.value.trim()); }, 150); });
$('search').addEventListener('keydown', function (ev) {
  if (ev.key === 'Enter') { clearTimeout(searchTimer); if (state.query !== ev.target.value.trim()) runSearch(ev.target.value.trim()); stepHit(ev.shiftKey ? -1 : 1); ev.preventDefault(); }
  if (ev.key === 'Escape') { ev.target.value = ''; runSearch(''); ev.target.blur(); }
});

// Keyboard.
function flagItems() { var out = []; items.forEach(function (it, n) { if (it.k === 'm') out.push(n); }); return out; }
var flagList = null;
document.addEventListener('keydown', function (ev) {
  if (ev.target && (ev.target.tagName === 'INPUT' || ev.ctrlKey || ev.metaKey || ev.altKey)) return;
  var k = ev.key;
  if (k === '/') { $('search').focus(); ev.preventDefault(); return; }
  if ((k === 'j' || k === 'k' || k === 'ArrowDown' || k === 'ArrowUp') && !R.length) return;
  if (k === 'j' || k === 'ArrowDown') { showTab('session'); selectRecord(Math.min(R.length - 1, state.rec + 1), true); ev.preventDefault(); }
  else if (k === 'k' || k === 'ArrowUp') { showTab('session'); selectRecord(Math.max(0, state.rec - 1), true); ev.preventDefault(); }
  else if (k === 'n' || k === 'p') {
    flagList = flagList || flagItems(); if (!flagList.length) return;
    var at = state.cursor, next;
    if (k === 'n') next = flagList.find(function (n) { return n > at; }); else next = flagList.slice().reverse().find(function (n) { return n < at; });
    if (next == null) next = k === 'n' ? flagList[0] : flagList[flagList.length - 1];
    showTab('session');
    showMark(items[next].i);
  }
  else if (k === ']' || k === '[') {
    if (!T.length) return;
    var ti = k === ']' ? Math.min(T.length - 1, turnSel + 1) : Math.max(0, turnSel - 1);
    showTab('session'); gotoId(T[ti].firstRecord); selectTurnOf(ti, true);
  }
  else if (k === '?') { alert('j / k or ↓ / ↑: next / previous record\nn / p: next / previous flag (finding, rung, segment, event)\n] / [: next / previous turn\n/: search; Enter / Shift+Enter: next / previous match; Esc: clear\nclick a record: its parts; click a part: its record'); }
});

renderTurns(); renderCalls(); renderFlags(); renderDiff(); wireLinks();
showTab('session');
document.body.dataset.ready = '1';
})();
`;
