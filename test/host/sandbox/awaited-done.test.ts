// "Awaited means done" (issue #13 item 5): a plain node program whose last
// line is `await x()` exits only after x's work is finished. Each case runs
// such a program (node with the tsx loader, the sources imported by path),
// lets it exit on its own, and only then checks the work: processes gone,
// directories removed, state written. The processes are made hard to stop
// (they ignore SIGTERM, or are unref'd like a bridge), which is exactly when
// an early exit used to leave them behind.
import { spawn } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isAlive } from '../../../host/sandbox/local/pids.ts';

const repoRoot = fileURLToPath(new URL('../../..', import.meta.url));
const src = (path: string) => JSON.stringify(join(repoRoot, path));
const sdkAgent = JSON.stringify(join(repoRoot, 'node_modules/@ai-sdk/harness/dist/agent/index.js'));

let base = '';
beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'hb-awaited-'));
  await chmod(base, 0o711); // a root bridge runs the CLI under a uid of its own (docs/security.md): it must pass through
});
afterAll(async () => {
  if (base) await rm(base, { recursive: true, force: true });
});

/** Runs `body` as a module (after the common imports) with plain node + the tsx loader; resolves with its last stdout line, parsed, once it exited 0. */
async function runProgram(name: string, body: string): Promise<Record<string, unknown>> {
  const file = join(base, `${name}.mts`);
  await writeFile(
    file,
    `import { createLocalSandboxProvider } from ${src('host/sandbox/local/provider.ts')};
import { createBridgeHarness } from ${src('host/harness.ts')};
import { fixtureAdapter } from ${src('host/testing/fixture/fixture-adapter.ts')};
import { HarnessAgent } from ${sdkAgent};
import { writeFileSync } from 'node:fs';
const root = ${JSON.stringify(join(base, name))};
const provider = createLocalSandboxProvider({ root: root + '/sandboxes', templatesRoot: root + '/templates' });
const report = (facts) => writeFileSync(root + '.json', JSON.stringify(facts));
${body}
`,
  );
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', file], { cwd: repoRoot, stdio: ['ignore', 'inherit', 'inherit'] });
    child.once('error', reject);
    child.once('exit', resolve);
  });
  expect(code, `${name} exited cleanly`).toBe(0);
  return JSON.parse(await readFile(join(base, `${name}.json`), 'utf8')) as Record<string, unknown>;
}

const exists = async (path: string) => (await stat(path).catch(() => null)) !== null;

/** A process that ignores SIGTERM (only the SIGKILL after the grace period ends it), detached from the event loop like a bridge. */
const stubborn = `const proc = await box.spawn({ command: 'trap "" TERM; while :; do sleep 1; done' }); proc.unref();`;

describe('awaited means done: a program may end right after the await', () => {
  it('LocalSandboxSession.destroy(): its processes are gone and its directory removed', async () => {
    const facts = await runProgram(
      'destroy',
      `const box = await provider.createSession({ sessionId: 'doomed' });
${stubborn}
report({ pid: proc.pid, dir: box.defaultWorkingDirectory });
await box.destroy();`,
    );
    expect(isAlive(facts.pid as number), 'the SIGTERM-proof process').toBe(false);
    expect(await exists(facts.dir as string), 'the sandbox dir').toBe(false);
  });

  it('LocalSandboxSession.stop(): its processes are gone, its directory kept', async () => {
    const facts = await runProgram(
      'stop',
      `const box = await provider.createSession({ sessionId: 'stopped' });
${stubborn}
report({ pid: proc.pid, dir: box.defaultWorkingDirectory });
await box.stop();`,
    );
    expect(isAlive(facts.pid as number)).toBe(false);
    expect(await exists(facts.dir as string)).toBe(true);
  });

  it('a sandbox process kill(): the process is gone', async () => {
    const facts = await runProgram(
      'kill',
      `const box = await provider.createSession({ sessionId: 'killer' });
${stubborn}
report({ pid: proc.pid });
await proc.kill();`,
    );
    expect(isAlive(facts.pid as number)).toBe(false);
  });

  it('provider.createSession with an identity: the template is built and the session copied from it', async () => {
    const facts = await runProgram(
      'template',
      `const box = await provider.createSession({ sessionId: 'templated', identity: 'id-1', onFirstCreate: async (s) => { await s.writeTextFile({ path: 'baked.txt', content: 'baked' }); } });
report({ dir: box.defaultWorkingDirectory });
await box.stop();`,
    );
    expect(await readFile(join(facts.dir as string, 'baked.txt'), 'utf8')).toBe('baked');
  });

  it('HarnessAgent session.destroy() (doDestroy, then the sandbox destroy): the bridge and CLI are gone, the directory removed', async () => {
    const facts = await runProgram(
      'agent-destroy',
      `const agent = new HarnessAgent({ harness: createBridgeHarness(fixtureAdapter()), sandbox: provider });
const session = await agent.createSession({ sessionId: 'agent-doomed' });
await agent.generate({ session, prompt: 'hi LINES:1' });
const dir = root + '/sandboxes/agent-doomed';
const bridge = JSON.parse(await (await import('node:fs/promises')).readFile(dir + '/.harness-bridge/sessions/fixture-agent-doomed/bridge.json', 'utf8'));
report({ dir, bridgePid: bridge.pid });
await session.destroy();`,
    );
    expect(isAlive(facts.bridgePid as number), 'the bridge').toBe(false);
    expect(await exists(facts.dir as string)).toBe(false);
  });

  it.each(['stop', 'detach'] as const)('HarnessAgent session.%s(): the state is written and another program resumes from it', async (how) => {
    const first = await runProgram(
      `agent-${how}`,
      `const agent = new HarnessAgent({ harness: createBridgeHarness(fixtureAdapter()), sandbox: provider });
const session = await agent.createSession({ sessionId: 'agent-${how}' });
await agent.generate({ session, prompt: 'before LINES:1' });
const state = await session.${how}();
report({ state });`,
    );
    const state = first.state as { type: string; data: { stateDir: string } };
    expect(state.type).toBe('resume-session');
    const bridge = JSON.parse(await readFile(join(state.data.stateDir, 'bridge.json'), 'utf8')) as { pid: number };
    // stop: the sandbox (bridge and CLI) was stopped before the program exited; detach leaves the bridge running.
    expect(isAlive(bridge.pid), how === 'stop' ? 'stopped bridge' : 'detached bridge').toBe(how === 'detach');
    const second = await runProgram(
      `agent-${how}`,
      `const agent = new HarnessAgent({ harness: createBridgeHarness(fixtureAdapter()), sandbox: provider });
const session = await agent.createSession({ sessionId: 'agent-${how}', resumeFrom: ${JSON.stringify(state)} });
const result = await agent.generate({ session, prompt: 'after LINES:1' });
report({ text: result.text });
await session.destroy();`,
    );
    expect(second.text).toBe('after LINES:1 #0\n');
    expect(await exists(join(base, `agent-${how}`, 'sandboxes', `agent-${how}`))).toBe(false);
  });
});
