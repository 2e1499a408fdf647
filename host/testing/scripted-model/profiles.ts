// What the scripted model knows about one CLI, as data an author passes in: which offered tool
// runs a shell command, writes a file, edits one, applies a patch or searches deferred tools (and
// their argument names), how the CLI states its working directory, which parts of a user message
// the CLI injected rather than the user typed, and what its compaction request looks like. The
// three reference profiles (Claude Code, Codex, pi) live here; a CLI with no profile still gets
// the scenarios from the generic guesses in tools.ts (tool names and schemas). Pure data and pure
// functions: nothing here touches the wire.
import type { ToolSet } from '@ai-sdk/provider-utils';

/** A tool named by the profile, with the names of the arguments the scenario fills (guessed from the schema when left out). */
export type ShellToolSpec = {
  readonly name: string;
  /** The command (a string, or argv `['bash', '-lc', cmd]` when the schema says array). Default: `command` or `cmd`. */
  readonly commandArg?: string;
  /** A free-text description the CLI wants with each command (Claude's Bash). */
  readonly descriptionArg?: string;
};

export type WriteToolSpec = {
  readonly name: string;
  /** Default: `file_path`, `path`, `filePath`, `filename` or `file`, whichever the schema has. */
  readonly pathArg?: string;
  /** Default: `content`, `contents`, `file_text` or `text`. */
  readonly contentArg?: string;
  /** The CLI refuses relative paths: the scenario's PATH is joined to the announced working directory. */
  readonly absolutePath?: boolean;
};

export type EditToolSpec = {
  readonly name: string;
  readonly pathArg?: string;
  /** The text to replace; default `old_string`, `oldText`, `old_str`. */
  readonly oldArg?: string;
  /** Its replacement; default `new_string`, `newText`, `new_str`. */
  readonly newArg?: string;
  /** The replacements come as an array of `{ [oldArg], [newArg] }` in this argument (pi's `edits`). */
  readonly editsArg?: string;
  readonly absolutePath?: boolean;
};

export type ToolSearchSpec = {
  readonly name: string;
  /** Default `query`. */
  readonly queryArg?: string;
  /** Put before the wanted tool's name in the query (Claude's ToolSearch: `select:`). */
  readonly queryPrefix?: string;
  readonly limitArg?: string;
  readonly limit?: number;
};

/** What a compaction handler answers: the summary text, or an HTTP error (the CLI's compaction then fails). */
export type CompactionReply = { readonly summary: string } | { readonly error: { readonly status: number; readonly message: string } };

export type CliProfile = {
  /** What to call it in messages. */
  readonly name: string;
  /** The tool SCENARIO:shell calls: its name, or name and argument names. */
  readonly shellTool?: string | ShellToolSpec;
  /** The tool SCENARIO:write calls. */
  readonly writeTool?: string | WriteToolSpec;
  /** The tool SCENARIO:edit calls. */
  readonly editTool?: string | EditToolSpec;
  /**
   * A tool taking a whole patch (Codex's `apply_patch`, `*** Begin Patch` format), used for write and
   * edit when the profile names no write/edit tool. A freeform (custom) tool gets the patch as its
   * input; a function tool gets `{ input: patch }`.
   */
  readonly patchTool?: string;
  /** A tool that loads deferred tool schemas (Claude's ToolSearch); SCENARIO:mcp calls it first when the MCP tool is deferred. */
  readonly toolSearchTool?: string | ToolSearchSpec;
  /** How the CLI tells the model its working directory; group 1 is the path. Relative PATHs are joined to it for absolutePath tools. */
  readonly cwdPattern?: RegExp | ReadonlyArray<RegExp>;
  /** Tags the CLI wraps context in inside user messages (`<system-reminder>…</system-reminder>`): not the user's words, dropped before markers are read. */
  readonly wrapperTags?: ReadonlyArray<string>;
  /** User texts that are the CLI's, not the user's: those starting with a string, or matching a RegExp (after the wrapper tags went). */
  readonly notUserText?: ReadonlyArray<string | RegExp>;
  /**
   * Recognises the CLI's own summarisation request from the last user text and answers it. `earlierUsers`:
   * how many real user texts came before this one. Undefined: not a compaction request.
   */
  readonly compaction?: (lastUserText: string, context: { readonly earlierUsers: number }) => CompactionReply | undefined;
};

// ---- the reference CLIs ----------------------------------------------------------------------

/** Codex hands a compaction summary to the model on later requests as a user message starting with this. */
export const CODEX_SUMMARY_PREFIX = 'Another language model started to solve this problem and produced a summary';
/** pi does it with this (its COMPACTION_SUMMARY_PREFIX, a user message before the kept messages). */
export const PI_SUMMARY_PREFIX = 'The conversation history before this point was compacted into the following summary:';

const summaryOf = (earlierUsers: number) => `Scripted summary of a conversation with ${earlierUsers} earlier user message(s)`;

/** Claude Code (`claude -p`, Anthropic Messages). */
export const claudeCodeProfile: CliProfile = {
  name: 'claude-code',
  shellTool: { name: 'Bash', commandArg: 'command', descriptionArg: 'description' },
  // Claude's Write and Edit refuse relative paths.
  writeTool: { name: 'Write', pathArg: 'file_path', contentArg: 'content', absolutePath: true },
  editTool: { name: 'Edit', pathArg: 'file_path', oldArg: 'old_string', newArg: 'new_string', absolutePath: true },
  toolSearchTool: { name: 'ToolSearch', queryArg: 'query', queryPrefix: 'select:', limitArg: 'max_results', limit: 5 },
  // "# Environment … Primary working directory: /w/proj" in a role:"system" message.
  cwdPattern: /[Ww]orking directory: ([^\s"\\<]+)/,
  // system-reminder blocks, and the slash-command bookkeeping (e.g. after /compact).
  wrapperTags: ['system-reminder', 'local-command-caveat', 'local-command-stdout', 'local-command-stderr', 'command-name', 'command-message', 'command-args'],
  // The interruption notice, and the post-/compact summary (context, not the user's words).
  notUserText: [/^\[Request interrupted by user/, 'This session is being continued from a previous conversation'],
  // /compact (and auto-compact): Claude retries a reply without <summary> tags, so answer in its format.
  compaction: (text, { earlierUsers }) =>
    text.includes('<summary>') && /Do NOT call any tools/i.test(text)
      ? { summary: `<analysis>Scripted analysis.</analysis>\n<summary>${summaryOf(earlierUsers)}.</summary>` }
      : undefined,
};

/** Codex (`codex app-server`, OpenAI Responses). */
export const codexProfile: CliProfile = {
  name: 'codex',
  shellTool: { name: 'exec_command', commandArg: 'cmd' },
  patchTool: 'apply_patch',
  // `<environment_context>\n  <cwd>/w/proj</cwd>…` in a user message.
  cwdPattern: /<cwd>([^<]+)<\/cwd>/,
  wrapperTags: ['environment_context', 'turn_aborted', 'user_instructions', 'permissions instructions'],
  notUserText: ['# AGENTS.md instructions', CODEX_SUMMARY_PREFIX],
  // Local compaction (thread/compact/start, or auto-compact, with a non-OpenAI provider): a plain request whose
  // last user message is this prompt; the reply becomes the summary, sent back later after CODEX_SUMMARY_PREFIX.
  compaction: (text, { earlierUsers }) =>
    text.startsWith('You are performing a CONTEXT CHECKPOINT COMPACTION') ? { summary: `${summaryOf(earlierUsers)}.` } : undefined,
};

/**
 * pi's compaction (rpc `compact`, auto-compaction): one user message holding the summarised messages
 * serialised as `[User]: …` / `[Assistant]: …` lines inside <conversation>, then pi's summary prompt
 * (a fresh one, an update of a previous summary, or a split turn's prefix), then, for a manual compact
 * with custom instructions, `Additional focus: <instructions>`. The markers in the conversation are
 * not this request's: only the focus is read (`SCENARIO:fail` there fails the summarisation).
 */
function piCompaction(text: string): CompactionReply | undefined {
  const m = /^<conversation>\n([\s\S]*?)\n<\/conversation>\n\n[\s\S]*?(The messages above are|This is the PREFIX of a turn)/.exec(text);
  if (!m) return undefined;
  const focus = /\n\nAdditional focus: ([\s\S]*)$/.exec(text)?.[1]?.trim();
  const scenario = focus === undefined ? undefined : [...focus.matchAll(/\bSCENARIO:(\S+)/g)].at(-1)?.[1]?.toLowerCase();
  if (scenario === 'fail') return { error: { status: 400, message: 'scripted failure' } };
  const earlierUsers = (m[1]!.match(/^\[User\]: /gm) ?? []).length;
  return { summary: `${summaryOf(earlierUsers)}${focus === undefined ? '' : `, focus "${shortPrompt(focus)}"`}.` };
}

/** pi (`pi --mode rpc`; Chat Completions, or Anthropic Messages / Responses by provider). */
export const piProfile: CliProfile = {
  name: 'pi',
  shellTool: { name: 'bash', commandArg: 'command' },
  writeTool: { name: 'write', pathArg: 'path', contentArg: 'content' },
  editTool: { name: 'edit', pathArg: 'path', editsArg: 'edits', oldArg: 'oldText', newArg: 'newText' },
  // "Current working directory: /w/proj" in the system prompt.
  cwdPattern: /[Ww]orking directory: ([^\s"\\<]+)/,
  notUserText: [PI_SUMMARY_PREFIX],
  compaction: piCompaction,
};

/** The profiles a server uses when given none: the three reference CLIs, in this order (first match wins). */
export const referenceProfiles: ReadonlyArray<CliProfile> = [claudeCodeProfile, codexProfile, piProfile];

/**
 * Gemini CLI (Google GenAI, its ACP mode): its context block leads the first user message, and it states the
 * project dir under "Workspace Directories"; its MCP tools are `mcp_<server>_<tool>` (a TOOL marker picks one).
 */
export const geminiCliProfile: CliProfile = {
  name: 'gemini-cli',
  shellTool: { name: 'run_shell_command', commandArg: 'command', descriptionArg: 'description' },
  writeTool: { name: 'write_file', pathArg: 'file_path', contentArg: 'content', absolutePath: true },
  editTool: { name: 'replace', pathArg: 'file_path', oldArg: 'old_string', newArg: 'new_string', absolutePath: true },
  cwdPattern: /Workspace Directories:\*\*\n\s*- (\S+)/,
  wrapperTags: ['session_context'],
};

// ---- shared helpers ---------------------------------------------------------------------------

const markerPattern = /\b(SCENARIO|PATH|INTERVAL|CHUNKS|LINES|TOOL):\S+/g;

/** A prompt without its markers, whitespace folded, at most 60 characters: what text replies quote. */
export function shortPrompt(text: string): string {
  const t = text.replace(markerPattern, '').replace(/\s+/g, ' ').trim();
  return t.length > 60 ? `${t.slice(0, 60)}…` : t;
}

/**
 * A profile from an adapter's declared builtin tools (CliAdapterDefinition.builtinTools): the tools whose
 * common name is `bash`, `write` and `edit` give the shell, write and edit tools by their native names; a
 * CLI whose write and edit are the same native tool (Codex's apply_patch) gets it as its patch tool. Argument
 * names are left to the schema guesses; `extra` adds the rest (cwdPattern, wrapperTags, compaction…) and wins.
 */
export function profileFromBuiltinTools(name: string, builtinTools: ToolSet, extra: Partial<CliProfile> = {}): CliProfile {
  const byCommon = new Map<string, string>();
  for (const [key, tool] of Object.entries(builtinTools)) {
    const entry = tool as { nativeName?: unknown; commonName?: unknown };
    const native = typeof entry.nativeName === 'string' ? entry.nativeName : key;
    const common = typeof entry.commonName === 'string' ? entry.commonName : key;
    if (!byCommon.has(common)) byCommon.set(common, native);
  }
  const shell = byCommon.get('bash') ?? byCommon.get('shell');
  const write = byCommon.get('write');
  const edit = byCommon.get('edit');
  const patch = write !== undefined && write === edit ? write : undefined;
  return {
    name,
    ...(shell === undefined ? {} : { shellTool: shell }),
    ...(patch !== undefined ? { patchTool: patch } : {}),
    ...(patch === undefined && write !== undefined ? { writeTool: write } : {}),
    ...(patch === undefined && edit !== undefined ? { editTool: edit } : {}),
    ...extra,
  };
}
