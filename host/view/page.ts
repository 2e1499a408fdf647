// The viewer page: one self-contained HTML file (no request leaves it: inline
// style and script, the data embedded as JSON, a Content-Security-Policy that
// allows nothing else). The script (page-script.ts) renders lazily: the
// record and part lists draw only the rows in view, turn timelines are canvases
// drawn from pre-aggregated histograms.
import { pageScript } from './page-script.ts';
import { pageStyle } from './page-style.ts';
import type { ViewData } from './view-data.ts';

/** JSON text made safe inside a <script> element: no `</script>`, no `<!--`, no line separators JS would choke on. Per character, so chunks can be escaped one by one. */
function safe(json: string): string {
  return json.replace(/[<\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** `value` as JSON, in chunks: large arrays element by element in batches, so the page is never one string in memory. */
function* jsonChunks(value: unknown, batch = 500): Generator<string, void, undefined> {
  if (Array.isArray(value) && value.length > batch) {
    yield '[';
    for (let i = 0; i < value.length; i += batch) yield safe((i > 0 ? ',' : '') + value.slice(i, i + batch).map((item) => JSON.stringify(item)).join(','));
    yield ']';
    return;
  }
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined);
    yield '{';
    for (const [i, [key, v]] of entries.entries()) {
      yield `${i > 0 ? ',' : ''}${safe(JSON.stringify(key))}:`;
      yield* jsonChunks(v, batch);
    }
    yield '}';
    return;
  }
  yield safe(JSON.stringify(value));
}

const escapeHtml = (text: string) => text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);

/** The page, as chunks of text to write out in order. */
export function* pageChunks(data: ViewData): Generator<string, void, undefined> {
  yield `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(`harness-bridge view — ${data.title}`)}</title>
<style>${pageStyle}</style>
</head>
<body>
<header>
  <div class="title"><b>harness-bridge view</b> <span id="source"></span></div>
  <div id="counts"></div>
  <div class="tools">
    <nav id="tabs"></nav>
    <input id="search" type="search" placeholder="search records and parts  ( / )" autocomplete="off" spellcheck="false">
    <span id="search-status"></span>
    <span class="keys">j/k record · n/p flag · [ ] turn · / search · Enter next match · ? help</span>
  </div>
  <div id="bound"></div>
</header>
<main>
  <section id="tab-session" class="tab">
    <div id="turns"></div>
    <div id="panes">
      <div class="pane"><h2>records <span class="hint">(seq · +time · lane · summary → parts)</span></h2><div id="records" class="vlist" tabindex="0"></div></div>
      <div class="pane"><h2>parts <span class="hint">(as replay translates · ← record)</span></h2><div id="parts" class="vlist" tabindex="0"></div></div>
      <aside id="detail"><p class="hint">Select a record or a part.</p></aside>
    </div>
  </section>
  <section id="tab-calls" class="tab" hidden><div id="calls"></div></section>
  <section id="tab-flags" class="tab" hidden><div id="flags"></div></section>
  <section id="tab-diff" class="tab" hidden><div id="diff-head"></div><div id="diff" class="vlist"></div></section>
</main>
<script id="view-data" type="application/json">`;
  yield* jsonChunks(data);
  yield `</script>
<script>${pageScript}</script>
</body>
</html>
`;
}

/** The page as one string (small data, tests). */
export function renderPage(data: ViewData): string {
  return [...pageChunks(data)].join('');
}
