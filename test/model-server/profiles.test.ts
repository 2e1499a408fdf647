// The scripted model serves a CLI it has never seen (issue 16): what it knows about a CLI is a
// profile passed in (tool names and arguments, how the working directory is stated, what the CLI
// injects into user messages, its compaction request), with guesses from the offered tools'
// schemas when no profile names them. The reference CLIs' own behaviour is model-server.test.ts's
// (byte for byte the same with their profiles, checked here too).
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claudeCodeBuiltinTools } from '../../host/adapters/claude-code/tools.ts';
import { codexBuiltinTools } from '../../host/adapters/codex/tools.ts';
import { piBuiltinTools } from '../../host/adapters/pi/tools.ts';
import { loadProfiles } from '../../host/testing/scripted-model/load-profile.ts';
import { normalizeAnthropic } from '../../host/testing/scripted-model/anthropic.ts';
import { normalizeChat } from '../../host/testing/scripted-model/chat.ts';
import {
  claudeCodeProfile,
  codexProfile,
  piProfile,
  profileFromBuiltinTools,
  referenceProfiles,
  type CliProfile,
} from '../../host/testing/scripted-model/profiles.ts';
import { planReply } from '../../host/testing/scripted-model/script.ts';
import { EDIT_NEW, EDIT_OLD, WRITE_CONTENT, startModelServer, type ModelServer } from './index.ts';

type Json = Record<string, any>;

/** A CLI the kit has never seen: its own tool names and argument names, its own phrasing. */
const acmeTools = [
  { type: 'function', function: { name: 'run_terminal', parameters: { type: 'object', properties: { script: { type: 'string' }, timeout_s: { type: 'number' } }, required: ['script'] } } },
  { type: 'function', function: { name: 'create_file', parameters: { type: 'object', properties: { target: { type: 'string' }, body: { type: 'string' } }, required: ['target', 'body'] } } },
  {
    type: 'function',
    function: { name: 'patch_file', parameters: { type: 'object', properties: { target: { type: 'string' }, find: { type: 'string' }, replace_with: { type: 'string' } }, required: ['target', 'find', 'replace_with'] } },
  },
  { type: 'function', function: { name: 'host.echo_upper', parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } } },
];

const acmeProfile: CliProfile = {
  name: 'acme',
  shellTool: { name: 'run_terminal', commandArg: 'script' },
  writeTool: { name: 'create_file', pathArg: 'target', contentArg: 'body', absolutePath: true },
  editTool: { name: 'patch_file', pathArg: 'target', oldArg: 'find', newArg: 'replace_with' },
  cwdPattern: /\[acme cwd=([^\]]+)\]/,
  wrapperTags: ['acme-context'],
  notUserText: ['[acme] session resumed'],
  compaction: (text, { earlierUsers }) => (text.startsWith('ACME SUMMARISE') ? { summary: `acme summary of ${earlierUsers}` } : undefined),
};

/** A Chat Completions request as the acme CLI sends it: its context block and its own resume notice before the prompt. */
function acmeBody(prompt: string, tools: unknown[] = acmeTools): Json {
  return {
    model: 'acme-model',
    stream: false,
    tools,
    messages: [
      { role: 'system', content: 'You are acme. [acme cwd=/w/acme]' },
      { role: 'user', content: '[acme] session resumed at 12:00 SCENARIO:fail' },
      { role: 'user', content: `<acme-context>SCENARIO:fail is not the user's</acme-context>\n${prompt}` },
    ],
  };
}

const plan = (body: Json, profiles: ReadonlyArray<CliProfile>) => planReply(normalizeChat(body, JSON.stringify(body), profiles), profiles);
const calls = (planned: ReturnType<typeof planReply>) =>
  planned.reply.kind === 'message' ? planned.reply.blocks.flatMap((b) => (b.type === 'tool_call' ? [{ name: b.call.name, input: b.call.input }] : [])) : [];
const text = (planned: ReturnType<typeof planReply>) =>
  planned.reply.kind === 'message' ? planned.reply.blocks.flatMap((b) => (b.type === 'text' ? b.chunks : [])).join('') : '';

describe('a profile for a CLI the kit has never seen', () => {
  it('the same scenarios, with its tools and its argument names', () => {
    expect(calls(plan(acmeBody('SCENARIO:shell'), [acmeProfile]))).toEqual([{ name: 'run_terminal', input: { script: 'echo hi > f.txt && cat f.txt' } }]);
    expect(calls(plan(acmeBody('SCENARIO:write PATH:notes.txt'), [acmeProfile]))).toEqual([
      { name: 'create_file', input: { target: '/w/acme/notes.txt', body: WRITE_CONTENT } },
    ]);
    expect(calls(plan(acmeBody('SCENARIO:edit PATH:e.txt'), [acmeProfile]))).toEqual([
      { name: 'patch_file', input: { target: 'e.txt', find: EDIT_OLD, replace_with: EDIT_NEW } },
    ]);
    expect(calls(plan(acmeBody('SCENARIO:multi'), [acmeProfile])).map((c) => c.name)).toEqual(['run_terminal', 'create_file']);
    expect(calls(plan(acmeBody('SCENARIO:mcp TOOL:echo_upper'), [acmeProfile]))).toEqual([{ name: 'host.echo_upper', input: { text: 'hello mcp' } }]);
  });

  it('its phrasing: wrapper blocks and its own notices are not the user\'s words, so their markers are ignored', () => {
    const planned = plan(acmeBody('SCENARIO:text hello acme'), [acmeProfile]);
    expect(text(planned)).toBe('Scripted reply 1 (text): you said "hello acme".');
    // Without the profile the notice counts as a user message and the wrapper as the user's words.
    expect(text(plan(acmeBody('SCENARIO:text hello acme'), []))).toBe('Scripted reply 2 (text): you said "<acme-context> is not the user\'s</acme-context> hello acme".');
  });

  it('its compaction request gets its summary', () => {
    const body = acmeBody('SCENARIO:text first');
    body.messages.push({ role: 'assistant', content: 'ok' }, { role: 'user', content: 'ACME SUMMARISE the above' });
    const planned = plan(body, [acmeProfile]);
    expect(planned.markers.scenario).toBe('compact');
    expect(text(planned)).toBe('acme summary of 1');
  });

  it('served over HTTP: startModelServer({ profiles })', async () => {
    const server = await startModelServer({ profiles: [acmeProfile] });
    try {
      const res = await fetch(`${server.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(acmeBody('SCENARIO:shell')) });
      const json = (await res.json()) as Json;
      expect(json.choices[0].finish_reason).toBe('tool_calls');
      expect(json.choices[0].message.tool_calls[0].function).toEqual({ name: 'run_terminal', arguments: JSON.stringify({ script: 'echo hi > f.txt && cat f.txt' }) });
      expect(server.requests().at(-1)).toMatchObject({ api: 'chat', scenario: 'shell', outcome: 'completed' });
    } finally {
      await server.close();
    }
  });
});

describe('no profile: guesses from the tools offered', () => {
  const generic = [
    { type: 'function', function: { name: 'shell', parameters: { type: 'object', properties: { command: { type: 'array', items: { type: 'string' } }, workdir: { type: 'string' } }, required: ['command'] } } },
    {
      type: 'function',
      function: { name: 'write_file', parameters: { type: 'object', properties: { file_path: { type: 'string', description: 'Absolute path of the file' }, contents: { type: 'string' } }, required: ['file_path', 'contents'] } },
    },
    { type: 'function', function: { name: 'str_replace', parameters: { type: 'object', properties: { path: { type: 'string' }, old_str: { type: 'string' }, new_str: { type: 'string' } }, required: ['path', 'old_str', 'new_str'] } } },
    { type: 'function', function: { name: 'mcp__host__echo_upper', parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } } },
  ];
  const body = (prompt: string, tools: unknown[] = generic): Json => ({
    model: 'm',
    tools,
    messages: [{ role: 'system', content: 'Working directory: /w/g' }, { role: 'user', content: prompt }],
  });

  it('shell (argv form when the schema says array), write (absolute when the path says so), edit, MCP', () => {
    expect(calls(plan(body('SCENARIO:shell'), []))).toEqual([{ name: 'shell', input: { command: ['bash', '-lc', 'echo hi > f.txt && cat f.txt'] } }]);
    expect(calls(plan(body('SCENARIO:write PATH:w.txt'), []))).toEqual([{ name: 'write_file', input: { file_path: '/w/g/w.txt', contents: WRITE_CONTENT } }]);
    expect(calls(plan(body('SCENARIO:edit PATH:e.txt'), []))).toEqual([{ name: 'str_replace', input: { path: 'e.txt', old_str: EDIT_OLD, new_str: EDIT_NEW } }]);
    expect(calls(plan(body('SCENARIO:mcp'), []))).toEqual([{ name: 'mcp__host__echo_upper', input: { text: 'hello mcp' } }]);
  });

  it('no file tool: write and edit go through the shell; nothing at all: the reply says what is missing', () => {
    const shellOnly = [generic[0]];
    expect(calls(plan(body('SCENARIO:write PATH:w.txt', shellOnly), []))[0]!.input).toEqual({ command: ['bash', '-lc', `printf '%s\\n' 'hello from the scripted model' > w.txt`] });
    expect(text(plan(body('SCENARIO:shell', []), []))).toBe('Cannot run scenario shell: no shell tool was offered.');
  });
});

describe('the reference profiles', () => {
  it('are what a server uses by default, in the order Claude Code, Codex, pi', () => {
    expect(referenceProfiles).toEqual([claudeCodeProfile, codexProfile, piProfile]);
  });

  it('a server given only one CLI\'s profile answers that CLI byte for byte as the default server does', async () => {
    const body = {
      model: 'claude-test',
      stream: true,
      tools: [
        { name: 'Bash', input_schema: { type: 'object', properties: { command: { type: 'string' }, description: { type: 'string' } }, required: ['command'] } },
        { name: 'Write', input_schema: { type: 'object', properties: { file_path: { type: 'string' }, content: { type: 'string' } }, required: ['file_path', 'content'] } },
      ],
      messages: [
        { role: 'user', content: [{ type: 'text', text: '<system-reminder>x</system-reminder>' }, { type: 'text', text: 'SCENARIO:multi PATH:o.txt' }] },
        { role: 'system', content: [{ type: 'text', text: ' - Primary working directory: /w/proj' }] },
      ],
    };
    const servers: ModelServer[] = [await startModelServer(), await startModelServer({ profiles: [claudeCodeProfile] })];
    try {
      const [a, b] = await Promise.all(servers.map(async (s) => (await fetch(`${s.url}/v1/messages`, { method: 'POST', body: JSON.stringify(body) })).text()));
      expect(b).toBe(a);
      expect(a).toContain('"file_path\\":\\"/w/proj/o.txt\\"');
    } finally {
      await Promise.all(servers.map((s) => s.close()));
    }
  });

  it('profileFromBuiltinTools reads the shell, write, edit (or patch) tools from an adapter\'s declared builtins', () => {
    expect(profileFromBuiltinTools('claude-code', claudeCodeBuiltinTools)).toEqual({ name: 'claude-code', shellTool: 'Bash', writeTool: 'Write', editTool: 'Edit' });
    expect(profileFromBuiltinTools('codex', codexBuiltinTools)).toEqual({ name: 'codex', shellTool: 'exec_command', patchTool: 'apply_patch' });
    expect(profileFromBuiltinTools('pi', piBuiltinTools, { cwdPattern: /cwd: (\S+)/ })).toEqual({ name: 'pi', shellTool: 'bash', writeTool: 'write', editTool: 'edit', cwdPattern: /cwd: (\S+)/ });
    // Names alone are enough: the arguments come from the request's schemas.
    const fromBuiltins = [profileFromBuiltinTools('claude-code', claudeCodeBuiltinTools, { cwdPattern: /[Ww]orking directory: ([^\s"\\<]+)/ })];
    const body = {
      model: 'm',
      tools: [{ name: 'Edit', input_schema: { type: 'object', properties: { file_path: { type: 'string' }, old_string: { type: 'string' }, new_string: { type: 'string' } }, required: ['file_path', 'old_string', 'new_string'] } }],
      messages: [{ role: 'user', content: 'SCENARIO:edit PATH:/a/e.txt' }],
    };
    const planned = planReply(normalizeAnthropic(body, JSON.stringify(body), fromBuiltins), fromBuiltins);
    expect(calls(planned)).toEqual([{ name: 'Edit', input: { file_path: '/a/e.txt', old_string: EDIT_OLD, new_string: EDIT_NEW } }]);
  });
});

describe('--profile: a name or a module', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'hb-profile-'));
    await writeFile(join(dir, 'acme-profile.mjs'), `export default { name: 'acme', shellTool: { name: 'run_terminal', commandArg: 'script' }, cwdPattern: /\\[acme cwd=([^\\]]+)\\]/ };\n`);
    await writeFile(join(dir, 'two.mjs'), `export const profiles = [{ name: 'one' }, { name: 'two' }];\n`);
    await writeFile(join(dir, 'bad.mjs'), `export default 42;\n`);
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('names the reference profiles, all of them, or none', async () => {
    expect(await loadProfiles('pi')).toEqual([piProfile]);
    expect(await loadProfiles('reference')).toBe(referenceProfiles);
    expect(await loadProfiles('generic')).toEqual([]);
    await expect(loadProfiles('nope')).rejects.toThrow(/unknown profile "nope": expected claude-code, codex, pi, reference, generic or a module path/);
  });

  it('loads a module: its default export, or `profiles`; anything else is refused with the shape it wants', async () => {
    expect((await loadProfiles('./acme-profile.mjs', dir)).map((p) => p.name)).toEqual(['acme']);
    expect((await loadProfiles(join(dir, 'two.mjs'))).map((p) => p.name)).toEqual(['one', 'two']);
    await expect(loadProfiles(join(dir, 'bad.mjs'))).rejects.toThrow(/export a profile \(\{ name, shellTool\?, writeTool\?, … \}\)/);
  });

  it('test/model-server/main.ts --profile MODULE serves with it', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'main.ts'), '--profile', join(dir, 'acme-profile.mjs')], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const ready = await new Promise<Json>((resolve, reject) => {
        let out = '';
        child.stdout!.on('data', (d: Buffer) => {
          out += d.toString();
          if (out.includes('\n')) resolve(JSON.parse(out.slice(0, out.indexOf('\n'))) as Json);
        });
        child.once('exit', (code) => reject(new Error(`main.ts exited ${code}`)));
      });
      const res = await fetch(`${ready.url}/v1/chat/completions`, { method: 'POST', body: JSON.stringify(acmeBody('SCENARIO:shell')) });
      expect(((await res.json()) as Json).choices[0].message.tool_calls[0].function.name).toBe('run_terminal');
    } finally {
      child.kill('SIGTERM');
    }
  }, 30_000);
});
