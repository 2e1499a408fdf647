// The local sandbox provider: every conformance case, plus what only the local
// provider promises (resume keeps a running server reachable, an explicit
// namespace mode without bwrap fails closed, the isolation options reach the
// bridges, setNetworkPolicy persists and waits for live bridges, templates
// shared by concurrent processes). Real processes and dirs under os.tmpdir().
// Enforcing the policy is the bridge's: test/chaos/network-policy.test.ts.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isAlive } from '../../../host/sandbox/local/pids.ts';
import { createConformanceContext, sandboxProviderConformance } from '../../../host/testing/conformance/sandbox-provider-conformance.ts';
import { createLocalSandboxProvider, findFreeLoopbackPorts, LocalSandboxError } from '../../../host/sandbox/local/provider.ts';
import { networkPolicyDir, writeNetworkPolicy } from '../../../host/sandbox/local/network-policy.ts';
import { sanitizeId } from '../../../host/sandbox/local/paths.ts';
import { BRIDGE_ISOLATION, bridgeIsolationOf } from '../../../host/reach/bridge-isolation.ts';

const repoRoot = resolve(import.meta.dirname, '../../..');
let tempRoot = '';

beforeAll(async () => {
  tempRoot = await mkdtemp(join(tmpdir(), 'hb-local-sandbox-'));
});
afterAll(async () => {
  await rm(tempRoot, { recursive: true, force: true });
});

describe('local provider conformance', () => {
  for (const testCase of sandboxProviderConformance) {
    it(testCase.name, async (t) => {
      const provider = createLocalSandboxProvider({ root: join(tempRoot, 'conformance', 'sandboxes'), templatesRoot: join(tempRoot, 'conformance', 'templates') });
      const { ctx, cleanup } = createConformanceContext(provider);
      try {
        const outcome = await testCase.run(ctx);
        if (outcome.status === 'skip') t.skip(outcome.reason);
      } finally {
        await cleanup();
      }
    });
  }
});

async function readLine(stream: ReadableStream<Uint8Array>): Promise<string> {
  const reader = stream.getReader();
  let text = '';
  while (!text.includes('\n')) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  return text.trim();
}

async function reachable(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
    return (await response.text()) === 'pong';
  } catch {
    return false;
  }
}

describe('local provider specifics', () => {
  it('resume from a new provider instance keeps a still-running server reachable, and its stop() kills it', async () => {
    const options = { root: join(tempRoot, 'resume', 'sandboxes'), templatesRoot: join(tempRoot, 'resume', 'templates') };
    const first = createLocalSandboxProvider(options);
    const session = await first.createSession({ sessionId: 'resume-me' });
    const [port] = await findFreeLoopbackPorts(1);
    const server = await session.spawn({
      command: `node -e "require('http').createServer((q,r)=>r.end('pong')).listen(${port},'127.0.0.1',()=>console.log('up'))"`,
    });
    try {
      expect(await readLine(server.stdout)).toBe('up');
      const second = createLocalSandboxProvider(options);
      const resumed = await second.resumeSession({ sessionId: 'resume-me' });
      const url = await resumed.getPortUrl({ port: port!, protocol: 'http' });
      expect(url).toBe(`http://127.0.0.1:${port}`);
      expect(await reachable(url)).toBe(true);
      // The second instance never spawned the server: only the pid record lets it stop it.
      await resumed.stop();
      await server.wait();
      expect(await reachable(url)).toBe(false);
      await resumed.destroy();
      expect(existsSync(session.defaultWorkingDirectory)).toBe(false);
    } finally {
      await server.kill();
      await session.destroy();
    }
  });

  it('stop() also kills a bridge keeper that left every recorded group (own session) and its CLI group, and leaves other processes in the dir alone', async () => {
    const provider = createLocalSandboxProvider({ root: join(tempRoot, 'residents', 'sandboxes'), templatesRoot: join(tempRoot, 'residents', 'templates') });
    const session = await provider.createSession({ sessionId: 'residents' });
    const keeperDir = join(session.defaultWorkingDirectory, 'state', 'keepers', 'k1');
    await mkdir(keeperDir, { recursive: true });
    // A stand-in keeper (argv --keeper, cwd its keeper dir, a session of its own) whose "CLI" runs in its own group
    // and is named in cli.pid; beside it a plain detached process with its cwd in the sandbox (a developer's shell).
    const keeperScript = [
      "const cp=require('child_process');",
      "const cli=cp.spawn(process.execPath,['-e','setInterval(()=>{},1000)'],{detached:true,stdio:'ignore'});",
      "require('fs').writeFileSync('cli.pid',String(cli.pid));",
      'setInterval(()=>{},1000);',
    ].join('');
    const launcher = [
      "const cp=require('child_process');",
      `const k=cp.spawn(process.execPath,['-e',${JSON.stringify(keeperScript)},'--','--keeper','.'],{detached:true,stdio:'ignore',cwd:${JSON.stringify(keeperDir)}});`,
      "const o=cp.spawn(process.execPath,['-e','setInterval(()=>{},1000)'],{detached:true,stdio:'ignore',cwd:process.cwd()});",
      'k.unref();o.unref();console.log(k.pid,o.pid)',
    ].join('');
    const run = await session.run({ command: `node -e ${JSON.stringify(launcher)}` });
    const [keeper, other] = run.stdout.trim().split(' ').map(Number) as [number, number];
    let cli = 0;
    try {
      for (let i = 0; i < 200 && cli === 0; i++) {
        cli = Number(await readFile(join(keeperDir, 'cli.pid'), 'utf8').catch(() => '0'));
        if (cli === 0) await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect([isAlive(keeper), isAlive(cli), isAlive(other)], `all three outlived the command that started them (stdout: ${run.stdout})`).toEqual([true, true, true]);
      await session.stop();
      expect([isAlive(keeper), isAlive(cli)], 'stop() killed the keeper and its CLI although no recorded group held them').toEqual([false, false]);
      expect(isAlive(other), 'a process that is no keeper is not stop()ped by its cwd').toBe(true);
    } finally {
      for (const pid of [keeper, cli, other]) {
        try {
          if (pid > 0) process.kill(pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
      await session.destroy();
    }
  });

  it('a server spawned by a host process that has exited (handle unref()ed) stays reachable, and a resumed instance stops it', async () => {
    const base = join(tempRoot, 'host-exit');
    await mkdir(base, { recursive: true });
    const [port] = await findFreeLoopbackPorts(1);
    const script = join(base, 'spawn-and-exit.mts');
    await writeFile(
      script,
      `import { createLocalSandboxProvider } from ${JSON.stringify(join(repoRoot, 'host/sandbox/local/provider.ts'))};
const provider = createLocalSandboxProvider({ root: ${JSON.stringify(join(base, 'sandboxes'))} });
const session = await provider.createSession({ sessionId: 'outlives-host' });
const server = await session.spawn({ command: \`node -e "require('http').createServer((q,r)=>r.end('pong')).listen(${port},'127.0.0.1')"\` });
server.stdout.cancel(); server.stderr.cancel();
(server as unknown as { unref(): void }).unref();
`,
    );
    const code = await new Promise<number | null>((resolvePromise, reject) => {
      const child = spawn(join(repoRoot, 'node_modules/.bin/tsx'), [script], { stdio: 'inherit' });
      child.once('error', reject);
      child.once('exit', resolvePromise);
    });
    expect(code).toBe(0);
    const provider = createLocalSandboxProvider({ root: join(base, 'sandboxes') });
    const resumed = await provider.resumeSession({ sessionId: 'outlives-host' });
    try {
      const url = await resumed.getPortUrl({ port: port!, protocol: 'http' });
      let up = false;
      for (let i = 0; i < 100 && !up; i++) {
        up = await reachable(url);
        if (!up) await new Promise((r) => setTimeout(r, 50));
      }
      expect(up).toBe(true);
      await resumed.stop();
      expect(await reachable(url)).toBe(false);
    } finally {
      await resumed.destroy();
    }
  });

  // The abort lands while the process is still being started (the cwd's stat, the spawn, its pid recorded): run() and
  // spawn() return at once, so the abort comes before any of it. A missed abort would leave `sleep 3600` running,
  // and the test's hang guard would fail it.
  it('run and spawn aborted while their process starts: the process is killed, run rejects, wait() rejects', async () => {
    const provider = createLocalSandboxProvider({ root: join(tempRoot, 'abort-starting') });
    const session = await provider.createSession();
    try {
      const runAbort = new AbortController();
      const running = session.run({ command: 'sleep 3600', abortSignal: runAbort.signal });
      runAbort.abort(new Error('aborted while starting'));
      await expect(running).rejects.toThrow('aborted while starting');
      const spawnAbort = new AbortController();
      const spawning = session.spawn({ command: 'sleep 3600', abortSignal: spawnAbort.signal });
      spawnAbort.abort(new Error('aborted while starting'));
      const proc = await spawning;
      await expect(proc.wait()).rejects.toThrow('aborted while starting');
      expect(isAlive(proc.pid!), 'the spawned process is gone').toBe(false);
    } finally {
      await session.destroy();
    }
  }, 20_000);

  it('an explicit namespace mode without a bwrap binary fails with a clear error and creates nothing', async () => {
    const root = join(tempRoot, 'nobwrap');
    const provider = createLocalSandboxProvider({ root, isolation: 'uid+namespace', bwrapSearchPath: '/nonexistent-bin:/also-not-here' });
    const error = await provider.createSession({ sessionId: 'x' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(LocalSandboxError.isInstance(error)).toBe(true);
    expect((error as LocalSandboxError).code).toBe('bwrap-missing');
    expect((error as Error).message).toMatch(/bwrap/);
    expect(existsSync(join(root, 'x'))).toBe(false);
    expect(() => createLocalSandboxProvider({ root, isolation: 'bwrap' as never })).toThrow(/isolation must be one of/);
  });

  it('the isolation options (default auto) travel to bridges on the session and its restricted view, with the policy file and the sessions root', async () => {
    const provider = createLocalSandboxProvider({ root: join(tempRoot, 'iso', 'sandboxes'), requireIsolation: true, cliUser: 'harness-agent' });
    const session = await provider.createSession();
    try {
      expect(provider.isolation).toBe('auto');
      const carried = bridgeIsolationOf(session.restricted());
      expect(carried).toEqual({
        mode: 'auto',
        require: true,
        cliUser: 'harness-agent',
        networkPolicyFile: join(networkPolicyDir(session.defaultWorkingDirectory), 'policy.json'),
        sessionsRoot: join(tempRoot, 'iso', 'sandboxes'), // hidden from each session's CLI but its own dirs
        srt: join(repoRoot, 'node_modules/@anthropic-ai/sandbox-runtime/dist/cli.js'), // the bridge bundle the recipe copies has no node_modules beside it
      });
      expect(session[BRIDGE_ISOLATION]).toBe(carried);
      expect(bridgeIsolationOf({ ...session.restricted() }), 'a wrapper that spreads the view keeps it').toEqual(carried);
    } finally {
      await session.destroy();
    }
  });

  it('setNetworkPolicy validates, persists for later bridges, and waits for every live bridge to apply it', async () => {
    const provider = createLocalSandboxProvider({ root: join(tempRoot, 'policy', 'sandboxes') });
    const session = await provider.createSession();
    try {
      expect(await session.getNetworkPolicy()).toEqual({ mode: 'allow-all' });
      await expect(session.setNetworkPolicy({ mode: 'custom', allowedHosts: ['not a host!'] })).rejects.toMatchObject({ code: 'invalid-option' });
      await expect(session.setNetworkPolicy({ mode: 'custom', allowedCIDRs: ['10.0.0.0/33'] })).rejects.toMatchObject({ code: 'invalid-option' });
      // No live bridge: written and kept (a bridge started later reads it).
      const policy = { mode: 'custom', allowedHosts: ['Model.Test', '*.example.test'], deniedCIDRs: ['169.254.169.254/32'] } as const;
      await session.setNetworkPolicy(policy);
      expect(await session.getNetworkPolicy()).toEqual({ mode: 'custom', allowedHosts: ['model.test', '*.example.test'], deniedCIDRs: ['169.254.169.254/32'] });
      const dir = networkPolicyDir(session.defaultWorkingDirectory);
      expect((await stat(dir)).mode & 0o777).toBe(0o700);
      expect((await stat(join(dir, 'policy.json'))).mode & 0o777).toBe(0o600);
      // A live bridge (this process stands in) that never acknowledges: the writer gives up, saying which.
      await writeFile(join(dir, 'bridges', 'silent.json'), JSON.stringify({ pid: process.pid, revision: null, enforced: true, mode: 'uid+namespace' }));
      await expect(writeNetworkPolicy(session.defaultWorkingDirectory, { mode: 'deny-all' }, { maxWaitMs: 200 })).rejects.toMatchObject({ code: 'network-policy-timeout' });
      // A bridge whose pid is gone is forgotten.
      await writeFile(join(dir, 'bridges', 'silent.json'), JSON.stringify({ pid: 2 ** 22 + 7, revision: null, enforced: true, mode: 'uid' }));
      await session.setNetworkPolicy({ mode: 'deny-all' });
      expect(existsSync(join(dir, 'bridges', 'silent.json'))).toBe(false);
    } finally {
      await session.destroy();
    }
  });

  it('session ids are sanitised: traversal stays under the root, distinct ids get distinct dirs', async () => {
    const root = join(tempRoot, 'ids');
    const provider = createLocalSandboxProvider({ root });
    const a = await provider.createSession({ sessionId: '../../escape' });
    const b = await provider.createSession({ sessionId: '.._.._escape' });
    try {
      expect(a.id).toBe('../../escape');
      expect(a.defaultWorkingDirectory.startsWith(`${root}/`)).toBe(true);
      expect(a.defaultWorkingDirectory).not.toBe(b.defaultWorkingDirectory);
      expect((await provider.resumeSession({ sessionId: '../../escape' })).defaultWorkingDirectory).toBe(a.defaultWorkingDirectory);
      await expect(provider.createSession({ sessionId: '../../escape' })).rejects.toMatchObject({ code: 'session-exists' });
      await expect(provider.resumeSession({ sessionId: 'never-created' })).rejects.toMatchObject({ code: 'session-not-found' });
    } finally {
      await a.destroy();
      await b.destroy();
    }
  });

  it('two processes creating sessions with one new identity run onFirstCreate exactly once', async () => {
    const base = join(tempRoot, 'xproc');
    const counter = join(base, 'calls.log');
    const script = join(base, 'create.mts');
    await rm(base, { recursive: true, force: true });
    await mkdir(base, { recursive: true });
    await writeFile(
      script,
      `import { appendFile } from 'node:fs/promises';
import { createLocalSandboxProvider } from ${JSON.stringify(join(repoRoot, 'host/sandbox/local/provider.ts'))};
const provider = createLocalSandboxProvider({ root: ${JSON.stringify(join(base, 'sandboxes'))}, templatesRoot: ${JSON.stringify(join(base, 'templates'))} });
const session = await provider.createSession({
  sessionId: process.argv[2],
  identity: 'shared-identity',
  onFirstCreate: async (s) => {
    await appendFile(${JSON.stringify(counter)}, process.argv[2] + '\\n');
    await new Promise((r) => setTimeout(r, 300));
    await s.writeTextFile({ path: 'baked.txt', content: 'baked' });
  },
});
console.log(JSON.stringify({ baked: await session.readTextFile({ path: 'baked.txt' }), origin: session.origin }));
`,
    );
    const tsx = join(repoRoot, 'node_modules/.bin/tsx');
    const runChild = (id: string) =>
      new Promise<string>((resolvePromise, reject) => {
        const child = spawn(tsx, [script, id], { stdio: ['ignore', 'pipe', 'inherit'] });
        let out = '';
        child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
        child.once('error', reject);
        child.once('exit', (code) => (code === 0 ? resolvePromise(out) : reject(new Error(`child ${id} exited ${code}`))));
      });
    const outputs = await Promise.all([runChild('p1'), runChild('p2')]);
    const results = outputs.map((out) => JSON.parse(out.trim()) as { baked: string; origin: { builtTemplate: boolean; copyMs: number; firstCreateMs: number } });
    expect((await readFile(counter, 'utf8')).trim().split('\n')).toHaveLength(1);
    expect(results.map((r) => r.baked)).toEqual(['baked', 'baked']);
    expect(results.filter((r) => r.origin.builtTemplate)).toHaveLength(1);
    const copy = results.find((r) => !r.origin.builtTemplate)!.origin;
    console.log(`[figures] template: onFirstCreate ${copy.firstCreateMs.toFixed(1)} ms once, copy ${copy.copyMs.toFixed(1)} ms per session`);
  });

  it('a template another caller put in place while this one built (two builders, after a stale lock broken twice) is used, not an error', async () => {
    const base = join(tempRoot, 'two-builders');
    const templatesRoot = join(base, 'templates');
    const provider = createLocalSandboxProvider({ root: join(base, 'sandboxes'), templatesRoot });
    const session = await provider.createSession({
      sessionId: 'second-builder',
      identity: 'raced-identity',
      onFirstCreate: async (s) => {
        await s.writeTextFile({ path: 'baked.txt', content: 'ours' });
        // The other builder's rename into place lands while this one is still building.
        await mkdir(join(templatesRoot, sanitizeId('raced-identity')), { recursive: true });
        await writeFile(join(templatesRoot, sanitizeId('raced-identity'), 'baked.txt'), 'theirs');
      },
    });
    try {
      expect(await session.readTextFile({ path: 'baked.txt' })).toBe('theirs');
      expect(session.origin).toMatchObject({ fromTemplate: true, builtTemplate: false });
      expect((await readdir(templatesRoot)).filter((name) => name.includes('.staging-')), 'the dropped build left nothing').toEqual([]);
    } finally {
      await session.destroy();
    }
  });
});
