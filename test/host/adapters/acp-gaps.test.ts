// The ACP translator's file changes and approval inputs as agents other than claude-code-acp send them, and
// acpAdapter's files, HOME files and launch prelude: a new file is a create even when the call was first
// announced as an edit without content; an approval's tool-call carries the input the permission request
// names (or what its diff or locations say); the prelude and HOME files run for real through sh with the
// agent's binPath as the exec'd command.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { LaunchContext } from '../../../host/adapter-kit/adapter.ts';
import { acpAdapter, type AcpState } from '../../../host/adapters/acp/acp.ts';
import { checkEveryCutResumes } from '../../../host/testing/every-cut.ts';
import type { HarnessV1StreamPart } from '../../../protocol/harness-v1/stream-part.ts';
import type { JournalRecord } from '../../../protocol/v1/journal-record.ts';
import { launchSpecSchema } from '../../../protocol/v1/launch-spec.ts';

const adapter = acpAdapter({ id: 'other-agent', command: ['other-agent', '--acp'] });
const sid = 'sess-1';
const upd = (update: object) => JSON.stringify({ jsonrpc: '2.0', method: 'session/update', params: { sessionId: sid, update } });
const ask = (id: number, toolCall: object) => JSON.stringify({ jsonrpc: '2.0', id, method: 'session/request_permission', params: { sessionId: sid, toolCall, options: [{ kind: 'allow_once', optionId: 'y' }, { kind: 'reject_once', optionId: 'n' }] } });
const done = '{"jsonrpc":"2.0","id":"hb-prompt","result":{"stopReason":"end_turn"}}';

function journal(permissionMode: 'allow-all' | 'allow-reads', lines: string[]): JournalRecord[] {
  const prompt = adapter.encodePrompt!({ text: 'hi', instructions: undefined, skills: [], threadId: sid, permissionMode })!;
  const records: JournalRecord[] = [{ seq: 1, turnId: 't', ts: 0, kind: 'turn-start', data: { argv: ['other-agent'], input: prompt } } as JournalRecord];
  for (const text of lines) records.push({ seq: records.length + 1, turnId: 't', ts: 0, kind: 'stdout', data: { text } } as JournalRecord);
  records.push({ seq: records.length + 1, turnId: 't', ts: 0, kind: 'turn-end', data: { reason: 'matched' } } as JournalRecord);
  return records;
}

function translate(records: JournalRecord[]): HarnessV1StreamPart[] {
  let state: AcpState = adapter.translator.init({ turnId: 't', rerun: false });
  const parts: HarnessV1StreamPart[] = [];
  for (const record of records) {
    const out = adapter.translator.step(state, record);
    state = out.state;
    parts.push(...out.parts);
  }
  return parts;
}

describe('acp file changes', () => {
  // Announced as an edit with no content (so named `edit` and emitted on in_progress); only the completed update's diff shows a new file.
  const lines = [
    upd({ sessionUpdate: 'tool_call', toolCallId: 'w1', title: 'WriteFile', kind: 'edit', status: 'pending', rawInput: { file_path: '/w/new.txt', content: 'x' } }),
    upd({ sessionUpdate: 'tool_call_update', toolCallId: 'w1', status: 'in_progress' }),
    upd({ sessionUpdate: 'tool_call_update', toolCallId: 'w1', status: 'completed', content: [{ type: 'diff', path: '/w/new.txt', oldText: null, newText: 'x' }] }),
    upd({ sessionUpdate: 'tool_call', toolCallId: 'e1', title: 'Edit', kind: 'edit', status: 'in_progress', rawInput: { file_path: '/w/old.txt' }, content: [{ type: 'diff', path: '/w/old.txt', oldText: 'a', newText: 'b' }] }),
    upd({ sessionUpdate: 'tool_call_update', toolCallId: 'e1', status: 'completed' }),
    upd({ sessionUpdate: 'tool_call', toolCallId: 'f1', title: 'WriteFile', kind: 'edit', status: 'in_progress', content: [{ type: 'diff', path: '/w/fail.txt', oldText: null, newText: 'x' }] }),
    upd({ sessionUpdate: 'tool_call_update', toolCallId: 'f1', status: 'failed' }),
    done,
  ];

  it('a diff without old text is a create, one with old text a modify, a failed call none', () => {
    const parts = translate(journal('allow-all', lines));
    expect(parts.filter((p) => p.type === 'file-change')).toEqual([
      { type: 'file-change', event: 'create', path: '/w/new.txt' },
      { type: 'file-change', event: 'modify', path: '/w/old.txt' },
    ]);
  });

  it('resumes at every cut point', () => {
    expect(checkEveryCutResumes(() => adapter, journal('allow-all', lines), 'file changes', false)).toBe(lines.length + 3);
  });
});

describe("acp approvals: the tool-call carries the call's input", () => {
  it('announced with input {}, the permission request names the input: the call part has it', () => {
    const parts = translate(
      journal('allow-reads', [
        upd({ sessionUpdate: 'tool_call', toolCallId: 'c1', title: 'Shell', kind: 'execute', status: 'pending', rawInput: {} }),
        ask(0, { toolCallId: 'c1', title: 'rm -rf build', kind: 'execute', rawInput: { command: 'rm -rf build' } }),
        done,
      ]),
    );
    expect(parts.find((p) => p.type === 'tool-call')).toMatchObject({ toolCallId: 'c1', toolName: 'bash', input: '{"command":"rm -rf build"}' });
    expect(parts.find((p) => p.type === 'tool-approval-request')).toEqual({ type: 'tool-approval-request', approvalId: 'acp-approval-0', toolCallId: 'c1' });
  });

  it('no rawInput anywhere: the input is what the diff says (a new file: a write)', () => {
    const parts = translate(journal('allow-reads', [ask(3, { toolCallId: 'c2', title: 'WriteFile', kind: 'edit', content: [{ type: 'diff', path: '/w/n.txt', oldText: null, newText: 'hello' }] }), done]));
    expect(parts.find((p) => p.type === 'tool-call')).toMatchObject({ toolCallId: 'c2', toolName: 'write', input: '{"path":"/w/n.txt","newText":"hello"}' });
  });

  it('no rawInput and no diff: its locations, else its title', () => {
    const located = translate(journal('allow-reads', [ask(4, { toolCallId: 'c3', title: 'ReadFile', kind: 'read', locations: [{ path: '/w/a.txt' }] }), done]));
    expect(located.find((p) => p.type === 'tool-call')).toMatchObject({ toolName: 'read', input: '{"paths":["/w/a.txt"]}' });
    const titled = translate(journal('allow-reads', [ask(5, { toolCallId: 'c4', title: 'ls -la', kind: 'execute' }), done]));
    expect(titled.find((p) => p.type === 'tool-call')).toMatchObject({ toolName: 'bash', input: '{"title":"ls -la"}' });
  });
});

describe('acpAdapter files, HOME files and prelude', () => {
  const root = mkdtempSync(join(tmpdir(), 'hb-acp-wrap-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const ctx = (bootstrapDir: string): LaunchContext => ({
    mode: 'fresh',
    threadId: undefined,
    prompt: '',
    sessionWorkDir: join(root, 'work'),
    bootstrapDir,
    stateDir: join(root, 'state'),
    permissionMode: 'allow-all',
    tools: [],
    mcp: { urlEnvVar: 'HARNESS_BRIDGE_MCP_URL', tokenEnvVar: 'HARNESS_BRIDGE_MCP_TOKEN' },
    modelId: undefined,
  });

  it('without any: argv is the command as it was', () => {
    expect(adapter.launch(ctx('/b')).argv).toEqual(['other-agent', '--acp']);
    expect(adapter.install).toBeUndefined();
  });

  it('the recipe holds the files and the HOME files; a launch copies the HOME files, runs the prelude and execs binPath with the args', () => {
    const bin = join(root, 'agent.sh');
    writeFileSync(bin, '#!/bin/sh\necho "args: $*"\necho "settings: $(cat "$HOME/.agent/settings.json")"\necho "wrapped: $WRAPPED"\n');
    chmodSync(bin, 0o755);
    const a = acpAdapter({
      id: 'wrapped-agent',
      command: ['wrapped-agent', '--acp', "it's"],
      cli: { package: 'wrapped-agent', version: '1.0.0', bin: 'wrapped-agent' },
      binPath: bin,
      files: [{ path: 'extra.txt', content: 'e' }],
      homeFiles: [{ path: '.agent/settings.json', content: '{"mcp":true}' }],
      prelude: 'export WRAPPED="$HARNESS_BRIDGE_MCP_URL/ok"',
      env: { FOO: 'bar' },
    });
    // binPath: no install command; the files are the recipe's.
    expect(a.install).toEqual({ files: [{ path: 'extra.txt', content: 'e' }, { path: 'acp-home-files/.agent/settings.json', content: '{"mcp":true}' }] });
    // What the recipe writes under bootstrapDir (relative paths land there).
    const bootstrapDir = join(root, 'bootstrap');
    for (const f of a.install!.files!) {
      mkdirSync(join(bootstrapDir, f.path, '..'), { recursive: true });
      writeFileSync(join(bootstrapDir, f.path), f.content);
    }
    const spec = launchSpecSchema.parse(a.launch(ctx(bootstrapDir)));
    expect(spec.argv.slice(0, 2)).toEqual(['sh', '-c']);
    expect(spec.argv.slice(3)).toEqual(['acp-agent', bin, '--acp', "it's"]);
    expect(spec.env).toMatchObject({ FOO: 'bar' });
    const home = spec.env!.HOME!;
    const run = spawnSync(spec.argv[0]!, spec.argv.slice(1), { env: { PATH: process.env.PATH, ...spec.env, HARNESS_BRIDGE_MCP_URL: 'http://127.0.0.1:1/mcp' }, encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe(`args: --acp it's\nsettings: {"mcp":true}\nwrapped: http://127.0.0.1:1/mcp/ok\n`);
    expect(home).toBe(join(root, 'state', 'acp-home'));
  });

  it('a HOME file outside HOME is refused', () => {
    expect(() => acpAdapter({ id: 'x', command: ['x'], homeFiles: [{ path: '../escape', content: '' }] })).toThrow(/must be relative to HOME and stay inside it/);
    expect(() => acpAdapter({ id: 'x', command: ['x'], homeFiles: [{ path: '/etc/x', content: '' }] })).toThrow(/must be relative to HOME/);
  });
});
