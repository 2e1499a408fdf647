// The scripted "model": turns a normalised conversation into a reply plan.
// Owns scenario markers, step counting and the reply texts; what it knows about a
// particular CLI (tool names, arguments, phrasing, compaction requests) comes from
// the profiles it is given (profiles.ts; the reference CLIs' by default), and the
// tool calls from tools.ts. Leaves wire formats (Anthropic / Responses / Chat) to
// anthropic.ts, responses.ts and chat.ts. Product code: `harness-bridge demo` and
// `harness-bridge model-server` serve it, and the tests' model server
// (test/model-server) is this one. README.md here documents the markers.
// Everything here is pure and deterministic: same conversation in, same reply out.
import { createHash } from 'node:crypto';
import { compactionReply, realUserText } from './phrasing.ts';
import { referenceProfiles, shortPrompt, type CliProfile } from './profiles.ts';
import { callFor, fullName, isSearchName, mcpTool, searchTool, type Action } from './tools.ts';
import type { Block, Conversation, Item, Markers, Reply } from './types.ts';

export { argsFromSchema, EDIT_NEW, EDIT_OLD, WRITE_CONTENT } from './tools.ts';
export { findCwd, realUserText } from './phrasing.ts';

export type { Block, Conversation, Item, Markers, Reply, ToolCall, ToolDef } from './types.ts';

// Defaults: `slow` runs ~30 s at 200 ms per delta unless told otherwise; `long` prints 200 lines.
const defaultIntervalMs = 200;
const maxSlowMs = 30_000;
const defaultLines = 200;
const maxLines = 1_000_000;

const SHELL_CMD_FILE = 'f.txt';

/** Parse `KEY:value` markers from the trailing user texts; the last occurrence of each wins. */
export function parseMarkers(texts: string[]): Markers {
  const found = new Map<string, string>();
  for (const text of texts) {
    for (const m of text.matchAll(/\b(SCENARIO|PATH|INTERVAL|CHUNKS|LINES|TOOL|CMD):(\S+)/g)) {
      found.set(m[1]!, m[2]!);
    }
  }
  const num = (k: string): number | undefined => {
    const v = found.get(k);
    if (v === undefined) return undefined;
    const n = Number.parseInt(v, 10);
    return Number.isFinite(n) && n >= 0 ? n : undefined;
  };
  const intervalMs = num('INTERVAL') ?? defaultIntervalMs;
  const markers: Markers = {
    scenario: (found.get('SCENARIO') ?? 'text').toLowerCase(),
    intervalMs,
    lines: Math.min(num('LINES') ?? defaultLines, maxLines),
  };
  const path = found.get('PATH');
  if (path !== undefined) markers.path = path;
  const chunks = num('CHUNKS');
  if (chunks !== undefined) markers.chunks = chunks;
  const tool = found.get('TOOL');
  if (tool !== undefined) markers.tool = tool;
  const command = found.get('CMD');
  if (command !== undefined) markers.command = Buffer.from(command, 'base64url').toString('utf8');
  return markers;
}

function shortHash(...parts: string[]): string {
  const h = createHash('sha256');
  for (const p of parts) h.update(p).update('\u0000');
  return h.digest('hex').slice(0, 16);
}

/** Index of the last real user text, plus the contiguous user texts ending there. */
function anchor(items: Item[]): { index: number; texts: string[]; userCount: number } {
  let index = -1;
  let userCount = 0;
  for (let i = 0; i < items.length; i++) {
    const it = items[i]!;
    if (it.kind === 'text' && it.role === 'user' && it.real) {
      index = i;
      userCount++;
    }
  }
  const texts: string[] = [];
  for (let i = index; i >= 0; i--) {
    const it = items[i]!;
    if (it.kind !== 'text' || it.role !== 'user') break;
    if (it.real) texts.unshift(it.text);
  }
  return { index, texts, userCount };
}

// ---- scenarios ------------------------------------------------------------------------------

/** The tool-call groups of a scenario; each group is one assistant turn (parallel calls). */
function plan(m: Markers, conv: Conversation, history: Item[], profiles: ReadonlyArray<CliProfile>): Action[][] {
  const shell = (file: string): Action => ({ kind: 'shell', command: `echo hi > ${file} && cat ${file}` });
  switch (m.scenario) {
    case 'shell':
      return [[m.command !== undefined ? { kind: 'shell', command: m.command } : shell(m.path ?? SHELL_CMD_FILE)]];
    case 'write':
      return [[{ kind: 'write', path: m.path ?? 'written.txt' }]];
    case 'edit':
      return [[{ kind: 'edit', path: m.path ?? 'edit-me.txt' }]];
    case 'multi':
      return [[shell(SHELL_CMD_FILE), { kind: 'write', path: m.path ?? 'written.txt' }]];
    case 'chain':
      return [[shell(SHELL_CMD_FILE)], [{ kind: 'write', path: m.path ?? 'written.txt' }], [{ kind: 'edit', path: 'edit-me.txt' }]];
    case 'mcp': {
      const searched = history.some((it) => it.kind === 'tool_call' && isSearchName(it.name, profiles));
      const found = mcpTool(conv, m.tool);
      const name = found ? fullName(found) : deferredMcpName(conv, m.tool);
      const hasSearch = searchTool(conv, profiles) !== undefined;
      const mcp: Action = name !== undefined ? { kind: 'mcp', mcpName: name } : { kind: 'mcp' };
      if (searched || (!found && hasSearch)) {
        const search: Action = name !== undefined ? { kind: 'tool_search', mcpName: name } : { kind: 'tool_search' };
        return [[search], [mcp]];
      }
      return [[mcp]];
    }
    default:
      return [];
  }
}

/**
 * An MCP tool mentioned anywhere in the request while its schema is deferred behind tool search:
 * Claude names it in full (`mcp__host__echo_upper`); Codex only names the namespace (`mcp__host`),
 * so we return the server name, which Codex's tool search matches.
 */
function deferredMcpName(conv: Conversation, wanted: string | undefined): string | undefined {
  if (wanted !== undefined) return wanted;
  const full = /mcp__[A-Za-z0-9-]+__[A-Za-z0-9_-]+/.exec(conv.rawText);
  if (full) return full[0];
  return /\bmcp__([A-Za-z0-9-]+)/.exec(conv.rawText)?.[1];
}

function textBlock(text: string): Block {
  return { type: 'text', chunks: splitChunks(text), intervalMs: 0 };
}

/** Split text into small deterministic chunks so clients see several deltas. */
function splitChunks(text: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += 12) out.push(text.slice(i, i + 12));
  return out.length > 0 ? out : [''];
}

export interface Planned {
  markers: Markers;
  reply: Reply;
}

/**
 * Decide the reply for one request. Pure: depends only on `conv` and `profiles` (what the model knows
 * about the CLIs it serves; the reference CLIs' by default). Normalise the request with the same profiles.
 */
export function planReply(conv: Conversation, profiles: ReadonlyArray<CliProfile> = referenceProfiles): Planned {
  const { index, texts, userCount } = anchor(conv.items);
  const markers = parseMarkers(texts);
  const history = index >= 0 ? conv.items.slice(index + 1) : conv.items;
  const seed = shortHash(JSON.stringify(conv.items));

  const compaction = compactionReply(texts[texts.length - 1] ?? '', userCount - 1, profiles);
  if (compaction && 'error' in compaction) {
    return { markers: { ...markers, scenario: 'fail' }, reply: { kind: 'error', status: compaction.error.status, message: compaction.error.message } };
  }
  if (compaction) {
    return { markers: { ...markers, scenario: 'compact' }, reply: { kind: 'message', stop: 'end_turn', blocks: [textBlock(compaction.summary)] } };
  }
  if (markers.scenario === 'fail') {
    return { markers, reply: { kind: 'error', status: 400, message: 'scripted failure' } };
  }
  if (markers.scenario === 'slow') {
    const count = markers.chunks ?? Math.max(1, Math.ceil(maxSlowMs / Math.max(1, markers.intervalMs)));
    const chunks = Array.from({ length: count }, (_, i) => `slow ${i + 1} `);
    return { markers, reply: { kind: 'message', stop: 'end_turn', blocks: [{ type: 'text', chunks, intervalMs: markers.intervalMs }] } };
  }
  if (markers.scenario === 'long') {
    const chunks = Array.from({ length: markers.lines }, (_, i) => `line ${i + 1} of ${markers.lines}\n`);
    return { markers, reply: { kind: 'message', stop: 'end_turn', blocks: [{ type: 'text', chunks, intervalMs: 0 }] } };
  }

  const groups = plan(markers, conv, history, profiles);
  const callsSoFar = history.filter((it) => it.kind === 'tool_call').length;
  let consumed = 0;
  for (let g = 0; g < groups.length; g++) {
    const group = groups[g]!;
    if (consumed + group.length > callsSoFar) {
      const blocks: Block[] = [];
      for (let i = 0; i < group.length; i++) {
        const call = callFor(group[i]!, conv, `${seed}${g}${i}`, profiles);
        if (typeof call === 'string') {
          return { markers, reply: { kind: 'message', stop: 'end_turn', blocks: [textBlock(`Cannot run scenario ${markers.scenario}: ${call}.`)] } };
        }
        blocks.push({ type: 'tool_call', call });
      }
      return { markers, reply: { kind: 'message', stop: 'tool_use', blocks } };
    }
    consumed += group.length;
  }

  const blocks: Block[] = [];
  if (markers.scenario === 'think') {
    blocks.push({ type: 'thinking', text: `Thinking about request ${userCount}: the user wants a scripted answer.` });
  }
  const results = history.filter((it): it is Extract<Item, { kind: 'tool_result' }> => it.kind === 'tool_result');
  const last = results[results.length - 1];
  if (last) {
    const shown = last.text.length > 200 ? `${last.text.slice(0, 200)}…` : last.text;
    blocks.push(textBlock(`Done (${results.length} tool result${results.length === 1 ? '' : 's'}). Last tool result was: ${shown}`));
  } else {
    blocks.push(textBlock(`Scripted reply ${userCount} (${markers.scenario}): you said "${shortPrompt(texts[texts.length - 1] ?? '')}".`));
  }
  return { markers, reply: { kind: 'message', stop: 'end_turn', blocks } };
}

/** Deterministic id for wire objects (messages, responses) derived from the request. */
export function wireId(prefix: string, ...parts: string[]): string {
  return `${prefix}_${shortHash(...parts)}`;
}
