// Turning one scripted action (run a shell command, write a file, edit one, call an MCP tool,
// search for a deferred tool) into a concrete call against the tools a CLI offered: the profiles
// (profiles.ts) name the tools and their arguments; a CLI no profile knows gets guesses from the
// offered tools' names and JSON schemas. Pure and deterministic.
import type { CliProfile, EditToolSpec, ShellToolSpec, ToolSearchSpec, WriteToolSpec } from './profiles.ts';
import type { Conversation, ToolCall, ToolDef } from './types.ts';

export const WRITE_CONTENT = 'hello from the scripted model\n';
export const EDIT_OLD = 'this is old text';
export const EDIT_NEW = 'this is new text';

export interface Action {
  kind: 'shell' | 'write' | 'edit' | 'mcp' | 'tool_search';
  command?: string;
  path?: string;
  mcpName?: string;
}

type Schema = Record<string, unknown>;
type Hint = (schema: Schema) => unknown;

/** Build arguments for `schema`: every property we have a hint for, plus every other required property. */
export function argsFromSchema(schema: Schema, hints: Record<string, Hint>): Record<string, unknown> {
  const props = (schema.properties ?? {}) as Record<string, Schema>;
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  const out: Record<string, unknown> = {};
  for (const [key, prop] of Object.entries(props)) {
    const hint = hints[key];
    if (hint) out[key] = hint(prop);
    else if (required.has(key)) out[key] = defaultFor(prop, hints);
  }
  return out;
}

function defaultFor(prop: Schema, hints: Record<string, Hint>): unknown {
  const type = Array.isArray(prop.type) ? prop.type[0] : prop.type;
  if (Array.isArray(prop.enum) && prop.enum.length > 0) return prop.enum[0];
  switch (type) {
    case 'number':
    case 'integer':
      return 1;
    case 'boolean':
      return false;
    case 'array': {
      const items = (prop.items ?? {}) as Schema;
      return [defaultFor(items, hints)];
    }
    case 'object':
      return argsFromSchema(prop, hints);
    default:
      return 'hello mcp';
  }
}

// ---- argument names a schema may use (the generic guesses) -----------------------------------

const commandArgs = ['command', 'cmd'];
const pathArgs = ['file_path', 'path', 'filePath', 'filename', 'file'];
const contentArgs = ['content', 'contents', 'file_text', 'text'];
const oldArgs = ['oldText', 'old_string', 'old_str'];
const newArgs = ['newText', 'new_string', 'new_str'];

const spec = <T extends { name: string }>(ref: string | T | undefined): T | undefined =>
  ref === undefined ? undefined : typeof ref === 'string' ? ({ name: ref } as T) : ref;

const propsOf = (tool: ToolDef): Record<string, Schema> => (tool.schema.properties ?? {}) as Record<string, Schema>;
const has = (tool: ToolDef, names: ReadonlyArray<string>) => names.some((name) => name in propsOf(tool));

function fullName(t: ToolDef): string {
  return t.namespace !== undefined ? `${t.namespace}__${t.name}` : t.name;
}

const isMcp = (t: ToolDef) => fullName(t).startsWith('mcp__');

/** An offered tool by exact name (not a Responses tool_search entry). */
function offered(tools: ReadonlyArray<ToolDef>, name: string): ToolDef | undefined {
  return tools.find((t) => t.name === name && t.variant !== 'tool_search');
}

/** The first profile's tool of this role that the CLI offered, with its spec. */
function named<T extends { name: string }>(tools: ReadonlyArray<ToolDef>, profiles: ReadonlyArray<CliProfile>, role: (p: CliProfile) => string | T | undefined) {
  for (const profile of profiles) {
    const s = spec<T>(role(profile));
    const tool = s && offered(tools, s.name);
    if (s && tool) return { tool, spec: s };
  }
  return undefined;
}

/** Tools a guess may pick: not MCP (host tools), not a tool the profiles give another role. */
function candidates(tools: ReadonlyArray<ToolDef>, profiles: ReadonlyArray<CliProfile>): ToolDef[] {
  const claimed = new Set<string>();
  for (const p of profiles) {
    for (const ref of [p.shellTool, p.writeTool, p.editTool, p.toolSearchTool]) {
      const s = spec<{ name: string }>(ref);
      if (s) claimed.add(s.name);
    }
    if (p.patchTool) claimed.add(p.patchTool);
  }
  return tools.filter((t) => t.variant === 'function' && !isMcp(t) && !claimed.has(t.name));
}

const shellNames = ['shell', 'bash', 'shell_command', 'sh', 'run_shell_command', 'execute_command', 'run_command', 'terminal', 'exec'];

function guessShell(tools: ReadonlyArray<ToolDef>): ToolDef | undefined {
  for (const name of shellNames) {
    const t = tools.find((x) => x.name.toLowerCase() === name);
    if (t) return t;
  }
  return tools.find((t) => has(t, commandArgs) && /shell|bash|exec|command|terminal|run/i.test(t.name));
}

function guessEditLike(tool: ToolDef): boolean {
  if (has(tool, oldArgs) && has(tool, newArgs)) return true;
  const edits = propsOf(tool).edits;
  const items = (edits?.items ?? {}) as Schema;
  return edits !== undefined && has({ ...tool, schema: items }, oldArgs);
}

function guessWrite(tools: ReadonlyArray<ToolDef>): ToolDef | undefined {
  return tools.find((t) => has(t, pathArgs) && has(t, contentArgs) && !guessEditLike(t));
}

function guessEdit(tools: ReadonlyArray<ToolDef>): ToolDef | undefined {
  return tools.find((t) => has(t, pathArgs) && guessEditLike(t));
}

/** A profile's tool-search tool, or a Responses `tool_search` entry, or one named like it. */
export function searchTool(conv: Conversation, profiles: ReadonlyArray<CliProfile>): { tool: ToolDef; spec: ToolSearchSpec | undefined } | undefined {
  const wire = conv.tools.find((t) => t.variant === 'tool_search');
  const fromProfile = named<ToolSearchSpec>(conv.tools, profiles, (p) => p.toolSearchTool);
  if (wire && (!fromProfile || conv.tools.indexOf(wire) < conv.tools.indexOf(fromProfile.tool))) return { tool: wire, spec: undefined };
  if (fromProfile) return fromProfile;
  const guessed = conv.tools.find((t) => /^(tool_?search|search_tools)$/i.test(t.name));
  return guessed ? { tool: guessed, spec: undefined } : undefined;
}

/** Whether a call of this name (in the history) was a tool search. */
export function isSearchName(name: string, profiles: ReadonlyArray<CliProfile>): boolean {
  return name === 'tool_search' || /^(tool_?search|search_tools)$/i.test(name) || profiles.some((p) => spec<ToolSearchSpec>(p.toolSearchTool)?.name === name);
}

/** An offered MCP tool: `wanted` may be a full name, a bare tool name, or a server (namespace) name; the first when undefined. */
export function mcpTool(conv: Conversation, wanted: string | undefined): ToolDef | undefined {
  const mcp = conv.tools.filter((t) => isMcp(t) && t.variant === 'function');
  if (wanted === undefined) return mcp[0];
  // Full name, bare tool name (`echo_upper`: the full name `mcp__<server>__echo_upper`), or server.
  const found = mcp.find((t) => fullName(t) === wanted || t.name === wanted || fullName(t).endsWith(`__${wanted}`) || t.namespace === wanted || t.namespace === `mcp__${wanted}`);
  if (found || mcp.length > 0) return found;
  // A CLI that names host tools its own way (`host_echo_upper`, `host.echo_upper`): the tool the marker names, by suffix.
  return conv.tools.find((t) => t.variant === 'function' && (t.name === wanted || /[_.:/-]$/.test(t.name.slice(0, -wanted.length)) && t.name.endsWith(wanted)));
}

export { fullName };

// ---- from an action to a call -----------------------------------------------------------------

function resolvePath(p: string, cwd: string | undefined, absolute: boolean): string {
  if (!absolute || p.startsWith('/') || cwd === undefined) return p;
  return `${cwd.replace(/\/+$/, '')}/${p}`;
}

/** A guessed tool wants an absolute path when its path argument's description says so. */
function guessAbsolute(tool: ToolDef): boolean {
  for (const name of pathArgs) {
    const description = propsOf(tool)[name]?.description;
    if (typeof description === 'string') return /\babsolute\b/i.test(description) && !/\brelative\b/i.test(description);
  }
  return false;
}

type AnySpec = Partial<ShellToolSpec & WriteToolSpec & EditToolSpec & ToolSearchSpec>;

function argsFor(action: Action, tool: ToolDef, cwd: string | undefined, s: AnySpec | undefined): Record<string, unknown> {
  const absolute = s ? s.absolutePath === true : guessAbsolute(tool);
  const path = action.path !== undefined ? resolvePath(action.path, cwd, absolute) : undefined;
  const command = action.command ?? '';
  const str = (v: string): Hint => () => v;
  const set = (hints: Record<string, Hint>, names: ReadonlyArray<string | undefined>, hint: Hint) => {
    for (const name of names) if (name !== undefined) hints[name] = hint;
  };
  const hints: Record<string, Hint> = {};
  if (action.kind === 'shell') {
    set(hints, [...commandArgs, s?.commandArg], (schema) => (schema.type === 'array' ? ['bash', '-lc', command] : command));
    set(hints, ['description', s?.descriptionArg], str('scripted shell step'));
  } else if (action.kind === 'write' && path !== undefined) {
    set(hints, [...pathArgs, s?.pathArg], str(path));
    set(hints, [...contentArgs, s?.contentArg], str(WRITE_CONTENT));
  } else if (action.kind === 'edit' && path !== undefined) {
    const pair: Record<string, Hint> = {};
    set(pair, [...oldArgs, s?.oldArg], str(EDIT_OLD));
    set(pair, [...newArgs, s?.newArg], str(EDIT_NEW));
    set(hints, [...pathArgs, s?.pathArg], str(path));
    Object.assign(hints, pair);
    set(hints, ['edits', s?.editsArg], (schema) => [argsFromSchema((schema.items ?? {}) as Schema, pair)]);
  } else if (action.kind === 'tool_search') {
    set(hints, ['query', s?.queryArg], str(`${s ? (s.queryPrefix ?? '') : 'select:'}${action.mcpName ?? ''}`));
    set(hints, ['max_results', s?.limitArg], () => s?.limit ?? 5);
  } else if (action.kind === 'mcp') {
    hints.text = str('hello mcp');
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

function call(id: string, tool: ToolDef, input: ToolCall['input']): ToolCall {
  const out: ToolCall = { id, name: tool.name, variant: tool.variant, input };
  if (tool.namespace !== undefined) out.namespace = tool.namespace;
  return out;
}

/** Turn one scripted action into a concrete call against the offered tools, or say why not. */
export function callFor(action: Action, conv: Conversation, id: string, profiles: ReadonlyArray<CliProfile>): ToolCall | string {
  const { tools, cwd } = conv;
  if (action.kind === 'write' || action.kind === 'edit') {
    const direct =
      action.kind === 'write'
        ? named<WriteToolSpec>(tools, profiles, (p) => p.writeTool)
        : named<EditToolSpec>(tools, profiles, (p) => p.editTool);
    if (direct) return call(id, direct.tool, argsFor(action, direct.tool, cwd, direct.spec));
    const patch = profiles.map((p) => p.patchTool && offered(tools, p.patchTool)).find((t) => t !== undefined);
    const guessed = patch ? undefined : action.kind === 'write' ? guessWrite(candidates(tools, profiles)) : guessEdit(candidates(tools, profiles));
    if (guessed) return call(id, guessed, argsFor(action, guessed, cwd, undefined));
    const patchTool = patch || offered(tools, 'apply_patch');
    if (patchTool) {
      const text = applyPatch(action);
      return call(id, patchTool, patchTool.variant === 'custom' ? text : { input: text });
    }
    // No file tool offered: fall back to the shell.
    const p = action.path ?? '';
    const command =
      action.kind === 'write'
        ? `printf '%s\\n' '${WRITE_CONTENT.trim()}' > ${p}`
        : `sed -i 's/${EDIT_OLD}/${EDIT_NEW}/' ${p}`;
    return callFor({ kind: 'shell', command }, conv, id, profiles);
  }
  if (action.kind === 'shell') {
    const direct = named<ShellToolSpec>(tools, profiles, (p) => p.shellTool);
    if (direct) return call(id, direct.tool, argsFor(action, direct.tool, cwd, direct.spec));
    const guessed = guessShell(candidates(tools, profiles));
    if (!guessed) return 'no shell tool was offered';
    return call(id, guessed, argsFor(action, guessed, cwd, undefined));
  }
  if (action.kind === 'tool_search') {
    const found = searchTool(conv, profiles);
    if (!found) return 'no tool search tool was offered';
    if (found.tool.variant === 'tool_search') {
      return { id, name: found.tool.name, variant: 'tool_search', input: { query: action.mcpName ?? 'mcp', limit: 8 } };
    }
    return call(id, found.tool, argsFor(action, found.tool, cwd, found.spec ?? {}));
  }
  const t = mcpTool(conv, action.mcpName) ?? deferredMcpTool(conv, action.mcpName);
  if (!t) return `no MCP tool${action.mcpName ? ` ${action.mcpName}` : ''} was offered`;
  const via = t.variant === 'function' && !conv.tools.includes(t) ? deferredCallTool(conv) : undefined;
  // A tool its search only described (Qwen Code): called through the CLI's deferred-call tool, by name.
  if (via) return call(id, via, { name: t.name, arguments: argsFor(action, t, cwd, undefined) });
  return call(id, t, argsFor(action, t, cwd, undefined));
}

/** A CLI's tool that calls a deferred tool by name (Qwen Code's `tool_call {name, arguments}`), when offered. */
function deferredCallTool(conv: Conversation): ToolDef | undefined {
  return conv.tools.find((t) => t.variant === 'function' && t.name === 'tool_call' && 'name' in propsOf(t) && 'arguments' in propsOf(t));
}

/**
 * An MCP tool a tool search returned as a declaration (`<function>{"name":…,"parametersJsonSchema":…}</function>`)
 * that the CLI keeps out of its tool list: callable only through deferredCallTool.
 */
function deferredMcpTool(conv: Conversation, wanted: string | undefined): ToolDef | undefined {
  if (deferredCallTool(conv) === undefined) return undefined;
  for (const item of conv.items) {
    if (item.kind !== 'tool_result') continue;
    for (const match of item.text.matchAll(/<function>(\{.*?\})<\/function>/gs)) {
      let declared: { name?: unknown; parametersJsonSchema?: unknown; parameters?: unknown };
      try {
        declared = JSON.parse(match[1]!) as typeof declared;
      } catch {
        continue;
      }
      if (typeof declared.name !== 'string' || !declared.name.startsWith('mcp__')) continue;
      if (wanted !== undefined && declared.name !== wanted && !declared.name.endsWith(`__${wanted}`)) continue;
      const schema = (declared.parametersJsonSchema ?? declared.parameters ?? {}) as Record<string, unknown>;
      return { name: declared.name, schema, variant: 'function' };
    }
  }
  return undefined;
}
