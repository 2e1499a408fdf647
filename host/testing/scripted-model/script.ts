// The scripted "model": turns a normalised conversation into a reply plan.
// Owns scenario markers, step counting and tool-argument building; leaves wire formats
// (Anthropic / Responses / Chat) to anthropic.ts here and test/model-server's responses.ts and
// chat.ts. Product code because `harness-bridge demo` serves it (host/cli/demo-model.ts); the
// scripted model server the tests run (test/model-server) builds on it.
// Everything here is pure and deterministic: same conversation in, same reply out.
import { createHash } from 'node:crypto';

export type Item =
  | { kind: 'text'; role: 'user' | 'assistant'; text: string; real: boolean }
  | { kind: 'tool_call'; name: string; id: string }
  | { kind: 'tool_result'; id: string; text: string; isError: boolean };

/** A tool offered by the client. `variant` decides how a call is rendered on the wire. */
export interface ToolDef {
  name: string;
  schema: Record<string, unknown>;
  variant: 'function' | 'custom' | 'tool_search';
  /** Responses API namespace (Codex MCP servers: `mcp__<server>`). */
  namespace?: string;
}

export interface Conversation {
  items: Item[];
  tools: ToolDef[];
  /** Working directory if the client told the model (Claude env block, Codex `<cwd>`). */
  cwd?: string;
  /** The raw request body as text, for finding deferred MCP tool names. */
  rawText: string;
}

export interface ToolCall {
  id: string;
  name: string;
  variant: ToolDef['variant'];
  namespace?: string;
  /** Object arguments for function tools; a string for custom (freeform) tools. */
  input: Record<string, unknown> | string;
}

export type Block =
  | { type: 'thinking'; text: string }
  | { type: 'text'; chunks: string[]; intervalMs: number }
  | { type: 'tool_call'; call: ToolCall };

export type Reply =
  | { kind: 'error'; status: number; message: string }
  | { kind: 'message'; blocks: Block[]; stop: 'end_turn' | 'tool_use' };

export interface Markers {
  scenario: string;
  path?: string;
  intervalMs: number;
  chunks?: number;
  lines: number;
  tool?: string;
}

// Defaults: `slow` runs ~30 s at 200 ms per delta unless told otherwise; `long` prints 200 lines.
const defaultIntervalMs = 200;
const maxSlowMs = 30_000;
const defaultLines = 200;
const maxLines = 1_000_000;

const SHELL_CMD_FILE = 'f.txt';
export const WRITE_CONTENT = 'hello from the scripted model\n';
export const EDIT_OLD = 'this is old text';
export const EDIT_NEW = 'this is new text';

// Wrapper blocks CLIs add to user messages that are not the user's words.
const WRAPPER_TAGS = [
  'system-reminder',
  'environment_context',
  'turn_aborted',
  'user_instructions',
  'permissions instructions',
  // Claude Code slash-command bookkeeping (e.g. after /compact).
  'local-command-caveat',
  'local-command-stdout',
  'local-command-stderr',
  'command-name',
  'command-message',
  'command-args',
];

/** How Codex hands a compaction summary to the model on later requests (a user message, not the user's words). */
const CODEX_SUMMARY_PREFIX = 'Another language model started to solve this problem and produced a summary';
/** How pi does (its COMPACTION_SUMMARY_PREFIX, a user message before the kept messages). */
const PI_SUMMARY_PREFIX = 'The conversation history before this point was compacted into the following summary:';

/** Strip CLI-injected wrappers; an empty result means "not a real user text". */
export function realUserText(text: string): string {
  let t = text;
  for (const tag of WRAPPER_TAGS) {
    t = t.replace(new RegExp(`<${tag}>[\\s\\S]*?(</${tag}>|$)`, 'g'), '');
  }
  t = t.trim();
  if (t.startsWith('# AGENTS.md instructions')) return '';
  if (/^\[Request interrupted by user/.test(t)) return '';
  // Claude Code's post-/compact summary is context, not the user's words; so are Codex's and pi's.
  if (t.startsWith('This session is being continued from a previous conversation')) return '';
  if (t.startsWith(CODEX_SUMMARY_PREFIX)) return '';
  if (t.startsWith(PI_SUMMARY_PREFIX)) return '';
  return t;
}

/** Parse `KEY:value` markers from the trailing user texts; the last occurrence of each wins. */
export function parseMarkers(texts: string[]): Markers {
  const found = new Map<string, string>();
  for (const text of texts) {
    for (const m of text.matchAll(/\b(SCENARIO|PATH|INTERVAL|CHUNKS|LINES|TOOL):(\S+)/g)) {
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

// ---- tool selection and argument building -------------------------------------------------

interface Action {
  kind: 'shell' | 'write' | 'edit' | 'mcp' | 'tool_search';
  command?: string;
  path?: string;
  mcpName?: string;
}

function findTool(tools: ToolDef[], names: string[]): ToolDef | undefined {
  for (const n of names) {
    const t = tools.find((x) => x.name === n && x.variant !== 'tool_search');
    if (t) return t;
  }
  return undefined;
}

function resolvePath(p: string, cwd: string | undefined, absolute: boolean): string {
  if (!absolute || p.startsWith('/') || cwd === undefined) return p;
  return `${cwd.replace(/\/+$/, '')}/${p}`;
}

type Hint = (schema: Record<string, unknown>) => unknown;

/** Build arguments for `schema`: every required property plus every property we have a hint for. */
export function argsFromSchema(schema: Record<string, unknown>, hints: Record<string, Hint>): Record<string, unknown> {
  const props = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  const out: Record<string, unknown> = {};
  for (const [key, prop] of Object.entries(props)) {
    const hint = hints[key];
    if (hint) out[key] = hint(prop);
    else if (required.has(key)) out[key] = defaultFor(prop, hints);
  }
  return out;
}

function defaultFor(prop: Record<string, unknown>, hints: Record<string, Hint>): unknown {
  const type = Array.isArray(prop.type) ? prop.type[0] : prop.type;
  if (Array.isArray(prop.enum) && prop.enum.length > 0) return prop.enum[0];
  switch (type) {
    case 'number':
    case 'integer':
      return 1;
    case 'boolean':
      return false;
    case 'array': {
      const items = (prop.items ?? {}) as Record<string, unknown>;
      return [defaultFor(items, hints)];
    }
    case 'object':
      return argsFromSchema(prop, hints);
    default:
      return 'hello mcp';
  }
}

function argsFor(action: Action, tool: ToolDef, cwd: string | undefined): Record<string, unknown> | string {
  const absolute = tool.name === 'Write' || tool.name === 'Edit' || tool.name === 'Read';
  const path = action.path !== undefined ? resolvePath(action.path, cwd, absolute) : undefined;
  const command = action.command ?? '';
  const isArray = (s: Record<string, unknown>) => s.type === 'array';
  const str = (v: string): Hint => () => v;
  const hints: Record<string, Hint> = {};
  if (action.kind === 'shell') {
    Object.assign(hints, {
      command: (s: Record<string, unknown>) => (isArray(s) ? ['bash', '-lc', command] : command),
      cmd: (s: Record<string, unknown>) => (isArray(s) ? ['bash', '-lc', command] : command),
      description: str('scripted shell step'),
    });
  } else if (action.kind === 'write' && path !== undefined) {
    Object.assign(hints, { file_path: str(path), path: str(path), filePath: str(path), content: str(WRITE_CONTENT) });
  } else if (action.kind === 'edit' && path !== undefined) {
    const pair = { oldText: str(EDIT_OLD), newText: str(EDIT_NEW), old_string: str(EDIT_OLD), new_string: str(EDIT_NEW) };
    Object.assign(hints, { file_path: str(path), path: str(path), filePath: str(path), ...pair });
    hints.edits = (s) => [argsFromSchema((s.items ?? {}) as Record<string, unknown>, pair)];
  } else if (action.kind === 'tool_search') {
    Object.assign(hints, {
      query: str(`select:${action.mcpName ?? ''}`),
      max_results: () => 5,
    });
  } else if (action.kind === 'mcp') {
    Object.assign(hints, { text: str('hello mcp') });
  }
  return argsFromSchema(tool.schema, hints);
}

function applyPatch(action: Action): string {
  const p = action.path ?? '';
  if (action.kind === 'write') {
    const body = WRITE_CONTENT.replace(/\n$/, '').split('\n').map((l) => `+${l}`).join('\n');
    return `*** Begin Patch\n*** Add File: ${p}\n${body}\n*** End Patch\n`;
  }
  return `*** Begin Patch\n*** Update File: ${p}\n@@\n-${EDIT_OLD}\n+${EDIT_NEW}\n*** End Patch\n`;
}

/** Turn one scripted action into a concrete call against the offered tools, or explain why not. */
function callFor(action: Action, conv: Conversation, id: string): ToolCall | string {
  const { tools, cwd } = conv;
  if (action.kind === 'write' || action.kind === 'edit') {
    const direct = findTool(tools, action.kind === 'write' ? ['Write', 'write'] : ['Edit', 'edit']);
    if (direct) return { id, name: direct.name, variant: direct.variant, input: argsFor(action, direct, cwd) };
    const patch = findTool(tools, ['apply_patch']);
    if (patch) {
      const text = applyPatch(action);
      if (patch.variant === 'custom') return { id, name: patch.name, variant: 'custom', input: text };
      return { id, name: patch.name, variant: patch.variant, input: { input: text } };
    }
    // No file tool offered: fall back to the shell.
    const p = action.path ?? '';
    const command =
      action.kind === 'write'
        ? `printf '%s\\n' '${WRITE_CONTENT.trim()}' > ${p}`
        : `sed -i 's/${EDIT_OLD}/${EDIT_NEW}/' ${p}`;
    return callFor({ kind: 'shell', command }, conv, id);
  }
  if (action.kind === 'shell') {
    const t = findTool(tools, ['Bash', 'exec_command', 'shell', 'bash', 'shell_command']);
    if (!t) return 'no shell tool was offered';
    return { id, name: t.name, variant: t.variant, input: argsFor(action, t, cwd) };
  }
  if (action.kind === 'tool_search') {
    const t = tools.find((x) => x.variant === 'tool_search' || x.name === 'ToolSearch');
    if (!t) return 'no tool search tool was offered';
    if (t.variant === 'tool_search') {
      return { id, name: t.name, variant: 'tool_search', input: { query: action.mcpName ?? 'mcp', limit: 8 } };
    }
    return { id, name: t.name, variant: t.variant, input: argsFor(action, t, cwd) };
  }
  const t = mcpTool(conv, action.mcpName);
  if (!t) return `no MCP tool${action.mcpName ? ` ${action.mcpName}` : ''} was offered`;
  const call: ToolCall = { id, name: t.name, variant: t.variant, input: argsFor(action, t, cwd) };
  if (t.namespace !== undefined) call.namespace = t.namespace;
  return call;
}

function fullName(t: ToolDef): string {
  return t.namespace !== undefined ? `${t.namespace}__${t.name}` : t.name;
}

function mcpTool(conv: Conversation, wanted: string | undefined): ToolDef | undefined {
  const mcp = conv.tools.filter((t) => fullName(t).startsWith('mcp__') && t.variant === 'function');
  if (wanted === undefined) return mcp[0];
  // `wanted` may be a full name, a bare tool name, or a server (namespace) name.
  return mcp.find((t) => fullName(t) === wanted || t.name === wanted || t.namespace === wanted || t.namespace === `mcp__${wanted}`);
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

// ---- scenarios ------------------------------------------------------------------------------

/** The tool-call groups of a scenario; each group is one assistant turn (parallel calls). */
function plan(m: Markers, conv: Conversation, history: Item[]): Action[][] {
  const shell = (file: string): Action => ({ kind: 'shell', command: `echo hi > ${file} && cat ${file}` });
  switch (m.scenario) {
    case 'shell':
      return [[shell(m.path ?? SHELL_CMD_FILE)]];
    case 'write':
      return [[{ kind: 'write', path: m.path ?? 'written.txt' }]];
    case 'edit':
      return [[{ kind: 'edit', path: m.path ?? 'edit-me.txt' }]];
    case 'multi':
      return [[shell(SHELL_CMD_FILE), { kind: 'write', path: m.path ?? 'written.txt' }]];
    case 'chain':
      return [[shell(SHELL_CMD_FILE)], [{ kind: 'write', path: m.path ?? 'written.txt' }], [{ kind: 'edit', path: 'edit-me.txt' }]];
    case 'mcp': {
      const searched = history.some((it) => it.kind === 'tool_call' && isSearchName(it.name));
      const found = mcpTool(conv, m.tool);
      const name = found ? fullName(found) : deferredMcpName(conv, m.tool);
      const hasSearch = conv.tools.some((t) => t.variant === 'tool_search' || t.name === 'ToolSearch');
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

function isSearchName(name: string): boolean {
  return name === 'ToolSearch' || name === 'tool_search';
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

function promptSummary(texts: string[]): string {
  const t = (texts[texts.length - 1] ?? '').replace(/\b(SCENARIO|PATH|INTERVAL|CHUNKS|LINES|TOOL):\S+/g, '').replace(/\s+/g, ' ').trim();
  return t.length > 60 ? `${t.slice(0, 60)}…` : t;
}

/** Claude Code's /compact (and auto-compact) summarisation prompt. */
function isCompactRequest(text: string): boolean {
  return text.includes('<summary>') && /Do NOT call any tools/i.test(text);
}

/**
 * Codex's local compaction (thread/compact/start, or auto-compact, with a non-OpenAI provider): a plain
 * Responses request whose last user message is this prompt; the reply text becomes the summary, sent
 * back on later requests as a user message starting with CODEX_SUMMARY_PREFIX.
 */
function isCodexCompactRequest(text: string): boolean {
  return text.startsWith('You are performing a CONTEXT CHECKPOINT COMPACTION');
}

/**
 * pi's compaction (rpc `compact`, auto-compaction): one user message holding the summarised messages
 * serialised as `[User]: …` / `[Assistant]: …` lines inside <conversation>, then pi's summary prompt
 * (a fresh one, an update of a previous summary, or a split turn's prefix), then, for a manual compact
 * with custom instructions, `Additional focus: <instructions>`. The markers in the conversation are
 * not this request's: only the focus is read (`SCENARIO:fail` there fails the summarisation).
 */
function piCompactRequest(text: string): { earlierUsers: number; focus: string | undefined } | undefined {
  const m = /^<conversation>\n([\s\S]*?)\n<\/conversation>\n\n[\s\S]*?(The messages above are|This is the PREFIX of a turn)/.exec(text);
  if (!m) return undefined;
  const focus = /\n\nAdditional focus: ([\s\S]*)$/.exec(text)?.[1]?.trim();
  return { earlierUsers: (m[1]!.match(/^\[User\]: /gm) ?? []).length, focus };
}

export interface Planned {
  markers: Markers;
  reply: Reply;
}

/** Decide the reply for one request. Pure: depends only on `conv`. */
export function planReply(conv: Conversation): Planned {
  const { index, texts, userCount } = anchor(conv.items);
  const markers = parseMarkers(texts);
  const history = index >= 0 ? conv.items.slice(index + 1) : conv.items;
  const seed = shortHash(JSON.stringify(conv.items));

  const lastText = texts[texts.length - 1] ?? '';
  if (isCompactRequest(lastText)) {
    // Claude Code retries a compaction whose reply lacks <summary> tags, so answer in its format.
    const summary = `<analysis>Scripted analysis.</analysis>\n<summary>Scripted summary of a conversation with ${userCount - 1} earlier user message(s).</summary>`;
    return { markers: { ...markers, scenario: 'compact' }, reply: { kind: 'message', stop: 'end_turn', blocks: [textBlock(summary)] } };
  }
  if (isCodexCompactRequest(lastText)) {
    const summary = `Scripted summary of a conversation with ${userCount - 1} earlier user message(s).`;
    return { markers: { ...markers, scenario: 'compact' }, reply: { kind: 'message', stop: 'end_turn', blocks: [textBlock(summary)] } };
  }
  const pi = piCompactRequest(lastText);
  if (pi) {
    const focusMarkers = parseMarkers(pi.focus === undefined ? [] : [pi.focus]);
    if (focusMarkers.scenario === 'fail') return { markers: focusMarkers, reply: { kind: 'error', status: 400, message: 'scripted failure' } };
    const focus = pi.focus === undefined ? '' : `, focus "${promptSummary([pi.focus])}"`;
    const summary = `Scripted summary of a conversation with ${pi.earlierUsers} earlier user message(s)${focus}.`;
    return { markers: { ...markers, scenario: 'compact' }, reply: { kind: 'message', stop: 'end_turn', blocks: [textBlock(summary)] } };
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

  const groups = plan(markers, conv, history);
  const callsSoFar = history.filter((it) => it.kind === 'tool_call').length;
  let consumed = 0;
  for (let g = 0; g < groups.length; g++) {
    const group = groups[g]!;
    if (consumed + group.length > callsSoFar) {
      const blocks: Block[] = [];
      for (let i = 0; i < group.length; i++) {
        const call = callFor(group[i]!, conv, `${seed}${g}${i}`);
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
    blocks.push(textBlock(`Scripted reply ${userCount} (${markers.scenario}): you said "${promptSummary(texts)}".`));
  }
  return { markers, reply: { kind: 'message', stop: 'end_turn', blocks } };
}

/** Deterministic id for wire objects (messages, responses) derived from the request. */
export function wireId(prefix: string, ...parts: string[]): string {
  return `${prefix}_${shortHash(...parts)}`;
}
