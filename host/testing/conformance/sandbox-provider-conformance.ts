// Conformance cases every HarnessV1SandboxProvider must pass, framework-free:
// each case is `{ name, run(ctx) }`, throws on failure and returns a skip with
// its reason when the provider lacks what the case needs. Runners (vitest or
// anything else) own timeouts and reporting; ctx.defer owns cleanup.
import type { HarnessV1NetworkSandboxSession, HarnessV1SandboxProvider, SandboxSession } from '../../../protocol/harness-v1/index.ts';

export interface SandboxConformanceContext {
  readonly provider: HarnessV1SandboxProvider;
  /** Registers cleanup; the runner calls these in reverse order after the case, pass or fail. */
  defer(cleanup: () => unknown): void;
  /** Optional sink for figures and notes. */
  log?(message: string): void;
}

export type ConformanceOutcome = { status: 'pass' } | { status: 'skip'; reason: string };

export interface SandboxConformanceCase {
  readonly name: string;
  run(ctx: SandboxConformanceContext): Promise<ConformanceOutcome>;
}

export class ConformanceFailure extends Error {
  override name = 'ConformanceFailure';
}

/** Runs deferred cleanups of a context in reverse order; the first cleanup error is rethrown after all ran. */
export function createConformanceContext(provider: HarnessV1SandboxProvider, log?: (message: string) => void) {
  const cleanups: Array<() => unknown> = [];
  const ctx: SandboxConformanceContext = { provider, defer: (cleanup) => void cleanups.push(cleanup), ...(log ? { log } : {}) };
  const cleanup = async () => {
    let first: unknown;
    for (const fn of cleanups.reverse()) {
      try {
        await fn();
      } catch (error) {
        first ??= error;
      }
    }
    if (first !== undefined) throw first;
  };
  return { ctx, cleanup };
}

const pass: ConformanceOutcome = { status: 'pass' };
const skip = (reason: string): ConformanceOutcome => ({ status: 'skip', reason });

function check(condition: unknown, message: string): asserts condition {
  if (!condition) throw new ConformanceFailure(message);
}

function equal<T>(actual: T, expected: T, what: string): void {
  check(Object.is(actual, expected), `${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
}

async function rejects(work: () => PromiseLike<unknown>, what: string): Promise<void> {
  try {
    await work();
  } catch {
    return;
  }
  throw new ConformanceFailure(`${what}: expected a rejection`);
}

function uniqueId(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
}

async function open(
  ctx: SandboxConformanceContext,
  options: Parameters<HarnessV1SandboxProvider['createSession']>[0] = {},
): Promise<HarnessV1NetworkSandboxSession> {
  const session = await ctx.provider.createSession({ sessionId: uniqueId('conf'), ...options });
  ctx.defer(() => (session.destroy ? session.destroy() : session.stop()));
  return session;
}

async function text(stream: ReadableStream<Uint8Array>): Promise<string> {
  return new Response(stream).text();
}

function bytesEqual(a: Uint8Array | null, b: Uint8Array): boolean {
  return a !== null && a.length === b.length && a.every((value, i) => value === b[i]);
}

function streamOf(chunks: Uint8Array[]): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
}

async function hasNode(session: SandboxSession): Promise<boolean> {
  return (await session.run({ command: 'command -v node' })).exitCode === 0;
}

/** The contract's SandboxSession (@ai-sdk/provider-utils 5.0.46). */
const sandboxSessionKeys = ['description', 'readBinaryFile', 'readFile', 'readTextFile', 'run', 'spawn', 'writeBinaryFile', 'writeFile', 'writeTextFile'];
/** File methods later provider-utils releases add; a provider may offer them (the local one does), and when it does they are checked. */
const optionalFileKeys = ['deleteFile', 'listDirectory', 'stat'];

type PathOptions = { path: string };
type OptionalFileMethods = {
  stat(options: PathOptions): PromiseLike<{ type: string; size: number } | null>;
  listDirectory(options: PathOptions): PromiseLike<Array<{ name: string; type: string }> | null>;
  deleteFile(options: PathOptions): PromiseLike<boolean>;
};

/** The session's optional file methods, or undefined when it lacks any of them. */
function fileExtras(session: SandboxSession): OptionalFileMethods | undefined {
  const candidate = session as Partial<Record<keyof OptionalFileMethods, unknown>>;
  return optionalFileKeys.every((key) => typeof candidate[key as keyof OptionalFileMethods] === 'function') ? (session as unknown as OptionalFileMethods) : undefined;
}

/** How the session resolves a port: getPortEndpoint (1.0.x) or, failing that, getPortUrl (canary.3). */
async function portUrl(session: HarnessV1NetworkSandboxSession, port: number, protocol: 'http' | 'ws'): Promise<{ url: string; headers: Readonly<Record<string, string>> }> {
  if (session.getPortEndpoint) {
    const endpoint = await session.getPortEndpoint({ port, protocol });
    return { url: endpoint.url, headers: endpoint.headers ?? {} };
  }
  if (session.getPortUrl) return { url: await session.getPortUrl({ port, protocol }), headers: {} };
  throw new ConformanceFailure('the session has neither getPortEndpoint nor getPortUrl');
}

export const sandboxProviderConformance: ReadonlyArray<SandboxConformanceCase> = [
  {
    name: 'createSession returns a session with id, absolute working directory and description',
    async run(ctx) {
      const sessionId = uniqueId('conf');
      const session = await ctx.provider.createSession({ sessionId });
      ctx.defer(() => (session.destroy ? session.destroy() : session.stop()));
      equal(session.id, sessionId, 'id');
      check(session.defaultWorkingDirectory.startsWith('/'), 'defaultWorkingDirectory is absolute');
      check(typeof session.description === 'string' && session.description.length > 0, 'description is a non-empty string');
      const pwd = await session.run({ command: 'pwd' });
      equal(pwd.stdout.trim(), session.defaultWorkingDirectory, 'run starts in defaultWorkingDirectory');
      return pass;
    },
  },
  {
    name: 'resumeSession reaches the same resource by id',
    async run(ctx) {
      if (!ctx.provider.resumeSession) return skip('provider has no resumeSession');
      const session = await open(ctx);
      await session.writeTextFile({ path: 'resume/probe.txt', content: 'same resource' });
      const resumed = await ctx.provider.resumeSession({ sessionId: session.id });
      equal(resumed.id, session.id, 'resumed id');
      equal(resumed.defaultWorkingDirectory, session.defaultWorkingDirectory, 'resumed defaultWorkingDirectory');
      equal(await resumed.readTextFile({ path: 'resume/probe.txt' }), 'same resource', 'file written before resume');
      return pass;
    },
  },
  {
    name: 'text files: parent dirs created, overwrite, 1-based inclusive line ranges, missing is null',
    async run(ctx) {
      const session = await open(ctx);
      await session.writeTextFile({ path: 'a/b/c.txt', content: 'old' });
      await session.writeTextFile({ path: 'a/b/c.txt', content: 'one\ntwo\nthree\n' });
      equal(await session.readTextFile({ path: 'a/b/c.txt' }), 'one\ntwo\nthree\n', 'full read');
      equal(await session.readTextFile({ path: 'a/b/c.txt', startLine: 2, endLine: 2 }), 'two\n', 'line 2');
      equal(await session.readTextFile({ path: 'a/b/c.txt', startLine: 2, endLine: 99 }), 'two\nthree\n', 'endLine past EOF');
      equal(await session.readTextFile({ path: 'a/b/c.txt', endLine: 1 }), 'one\n', 'startLine defaults to 1');
      equal(await session.readTextFile({ path: 'a/missing.txt' }), null, 'missing text file');
      equal(await session.readBinaryFile({ path: 'a/missing.bin' }), null, 'missing binary file');
      equal(await session.readFile({ path: 'a/missing.bin' }), null, 'missing file stream');
      equal(await session.readTextFile({ path: 'unicode.txt' }), null, 'not yet written');
      await session.writeTextFile({ path: 'unicode.txt', content: 'żółw 🐢' });
      equal(await session.readTextFile({ path: 'unicode.txt' }), 'żółw 🐢', 'utf-8 round trip');
      return pass;
    },
  },
  {
    name: 'binary files and streams round-trip every byte value',
    async run(ctx) {
      const session = await open(ctx);
      const bytes = Uint8Array.from({ length: 256 * 64 }, (_, i) => i % 256);
      await session.writeBinaryFile({ path: 'bin/all.bin', content: bytes });
      check(bytesEqual(await session.readBinaryFile({ path: 'bin/all.bin' }), bytes), 'readBinaryFile returns the bytes written');
      const stream = await session.readFile({ path: 'bin/all.bin' });
      check(stream !== null, 'readFile returns a stream');
      check(bytesEqual(new Uint8Array(await new Response(stream).arrayBuffer()), bytes), 'readFile stream carries the bytes');
      await session.writeFile({ path: 'bin/streamed/x.bin', content: streamOf([bytes.slice(0, 1000), bytes.slice(1000)]) });
      check(bytesEqual(await session.readBinaryFile({ path: 'bin/streamed/x.bin' }), bytes), 'writeFile from a stream');
      await rejects(() => session.writeTextFile({ path: 'bin', content: 'x' }), 'writing to a directory path');
      return pass;
    },
  },
  {
    name: 'stat and listDirectory (when offered): types, sizes, symlinks, null for missing, reject on non-directory',
    async run(ctx) {
      const opened = await open(ctx);
      const session = fileExtras(opened);
      if (!session) return skip('no stat/listDirectory/deleteFile (not in the contract)');
      await opened.writeTextFile({ path: 'd/file.txt', content: '12345' });
      await opened.writeTextFile({ path: 'd/sub/inner.txt', content: '' });
      const link = await opened.run({ command: 'ln -s file.txt d/link' });
      equal(link.exitCode, 0, 'ln -s exit code');
      const fileStat = await session.stat({ path: 'd/file.txt' });
      equal(fileStat?.type, 'file', 'stat file type');
      equal(fileStat?.size, 5, 'stat file size');
      equal((await session.stat({ path: 'd/sub' }))?.type, 'directory', 'stat dir type');
      equal((await session.stat({ path: 'd/link' }))?.type, 'file', 'stat follows symlinks');
      equal(await session.stat({ path: 'd/nope' }), null, 'stat missing');
      const entries = await session.listDirectory({ path: 'd' });
      check(entries !== null, 'listDirectory returns entries');
      const byName = Object.fromEntries(entries.map((entry) => [entry.name, entry.type]));
      equal(JSON.stringify(Object.keys(byName).sort()), JSON.stringify(['file.txt', 'link', 'sub']), 'entry names');
      equal(byName['link'], 'symlink', 'symlink entry not followed');
      equal(byName['sub'], 'directory', 'directory entry');
      equal(await session.listDirectory({ path: 'nope' }), null, 'listDirectory missing');
      await rejects(() => session.listDirectory({ path: 'd/file.txt' }), 'listDirectory on a file');
      return pass;
    },
  },
  {
    name: 'deleteFile (when offered): true then false, symlink removed not its target, directory rejects',
    async run(ctx) {
      const opened = await open(ctx);
      const session = fileExtras(opened);
      if (!session) return skip('no stat/listDirectory/deleteFile (not in the contract)');
      await opened.writeTextFile({ path: 'del/target.txt', content: 'keep' });
      equal((await opened.run({ command: 'ln -s target.txt del/link' })).exitCode, 0, 'ln -s');
      equal(await session.deleteFile({ path: 'del/link' }), true, 'delete symlink');
      equal(await opened.readTextFile({ path: 'del/target.txt' }), 'keep', 'symlink target survives');
      equal(await session.deleteFile({ path: 'del/target.txt' }), true, 'delete file');
      equal(await session.deleteFile({ path: 'del/target.txt' }), false, 'delete missing');
      await rejects(() => session.deleteFile({ path: 'del' }), 'deleteFile on a directory');
      return pass;
    },
  },
  {
    name: 'relative paths resolve against the working directory for files and processes alike',
    async run(ctx) {
      const session = await open(ctx);
      await session.writeTextFile({ path: 'rel/in.txt', content: 'from-file-api' });
      const cat = await session.run({ command: 'cat in.txt', workingDirectory: 'rel' });
      equal(cat.stdout, 'from-file-api', 'run with relative workingDirectory reads the file');
      await session.run({ command: 'printf from-run > rel/out.txt' });
      equal(await session.readTextFile({ path: `${session.defaultWorkingDirectory}/rel/out.txt` }), 'from-run', 'absolute path reads it');
      return pass;
    },
  },
  {
    name: 'run: exit codes, stdout and stderr apart, env merged',
    async run(ctx) {
      const session = await open(ctx);
      const ok = await session.run({ command: 'echo out; echo err >&2' });
      equal(ok.exitCode, 0, 'exit 0');
      equal(ok.stdout, 'out\n', 'stdout');
      equal(ok.stderr, 'err\n', 'stderr');
      equal((await session.run({ command: 'exit 7' })).exitCode, 7, 'exit 7');
      equal((await session.run({ command: 'echo "$CONF_VAR"', env: { CONF_VAR: 'v1' } })).stdout, 'v1\n', 'env var');
      check((await session.run({ command: 'echo "$PATH"' })).stdout.trim().length > 0, 'default env keeps PATH');
      return pass;
    },
  },
  {
    name: 'run: abortSignal kills the command and rejects',
    async run(ctx) {
      const session = await open(ctx);
      const controller = new AbortController();
      const started = Date.now();
      const running = session.run({ command: 'sleep 30', abortSignal: controller.signal });
      setTimeout(() => controller.abort(new Error('conformance abort')), 200);
      await rejects(() => running, 'aborted run');
      check(Date.now() - started < 10_000, 'abort returned promptly');
      return pass;
    },
  },
  {
    name: 'spawn: abortSignal kills the process and wait() rejects',
    async run(ctx) {
      const session = await open(ctx);
      const controller = new AbortController();
      const proc = await session.spawn({ command: 'sleep 30', abortSignal: controller.signal });
      controller.abort(new Error('conformance abort'));
      const outcome = await Promise.race([
        Promise.resolve(proc.wait()).then(() => 'resolved', () => 'rejected'),
        new Promise((resolve) => setTimeout(() => resolve('still running'), 10_000)),
      ]);
      equal(outcome, 'rejected', 'wait() after abort');
      return pass;
    },
  },
  {
    name: 'spawn without stdin: streams, exit code, no stdin property',
    async run(ctx) {
      const session = await open(ctx);
      const proc = await session.spawn({ command: 'echo one; echo two >&2; exit 3' });
      check(!('stdin' in proc), 'no stdin property without stdin: true');
      const [out, err] = await Promise.all([text(proc.stdout), text(proc.stderr)]);
      equal(out, 'one\n', 'stdout');
      equal(err, 'two\n', 'stderr');
      equal((await proc.wait()).exitCode, 3, 'exit code');
      return pass;
    },
  },
  {
    name: 'spawn with stdin (when offered): bytes reach the process, closing stdin delivers EOF',
    async run(ctx) {
      const session = await open(ctx);
      // Not in the contract (provider-utils 5.0.46 has no stdin): a provider that ignores the option gives no stdin.
      const spawn = session.spawn as (options: { command: string; stdin: boolean }) => PromiseLike<{ stdin?: WritableStream<Uint8Array>; stdout: ReadableStream<Uint8Array>; wait(): PromiseLike<{ exitCode: number }>; kill(): PromiseLike<void> }>;
      const proc = await spawn({ command: 'cat; echo done', stdin: true });
      if (!proc.stdin) {
        await proc.kill();
        return skip('spawn offers no stdin (not in the contract)');
      }
      const writer = proc.stdin.getWriter();
      await writer.write(new TextEncoder().encode('hello '));
      await writer.write(new TextEncoder().encode('world\n'));
      await writer.close();
      equal(await text(proc.stdout), 'hello world\ndone\n', 'echoed stdin then EOF');
      equal((await proc.wait()).exitCode, 0, 'exit code');
      return pass;
    },
  },
  {
    name: 'kill ends the whole process tree and is idempotent',
    async run(ctx) {
      const session = await open(ctx);
      const proc = await session.spawn({ command: 'sleep 300 & echo $!; wait' });
      const reader = proc.stdout.getReader();
      const first = await reader.read();
      const childPid = Number(new TextDecoder().decode(first.value).trim());
      check(Number.isInteger(childPid) && childPid > 0, 'background child pid printed');
      await proc.kill();
      await proc.kill();
      await proc.wait();
      let gone = false;
      for (let i = 0; i < 50 && !gone; i++) {
        // A zombie (reaped late by a container's init) counts as gone.
        const alive = `kill -0 ${childPid} 2>/dev/null && ! (cut -d')' -f2 /proc/${childPid}/stat 2>/dev/null | grep -q '^ Z')`;
        gone = (await session.run({ command: alive })).exitCode !== 0;
        if (!gone) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      check(gone, `background child ${childPid} was killed with its parent`);
      reader.releaseLock();
      return pass;
    },
  },
  {
    name: 'getPortEndpoint (or getPortUrl) reaches a server spawned inside the sandbox',
    async run(ctx) {
      const session = await open(ctx);
      // A port-less sandbox (a container with no network): the host reaches its bridge through the exec stream instead,
      // which the stdin case covers (docs/remote-providers.md#exec-transport).
      if (!session.getPortEndpoint && !session.getPortUrl) return skip('no port methods: the host reaches this sandbox through its exec stream');
      if (!(await hasNode(session))) return skip('no node inside the sandbox to run a test server');
      const port = session.ports[0] ?? 0;
      const server = await session.spawn({
        command: `node -e "const s=require('http').createServer((q,r)=>r.end('pong')).listen(${port},'0.0.0.0',()=>console.log(s.address().port))"`,
      });
      ctx.defer(() => server.kill());
      const reader = server.stdout.getReader();
      const line = new TextDecoder().decode((await reader.read()).value);
      reader.releaseLock();
      const listening = Number(line.trim());
      check(Number.isInteger(listening) && listening > 0, `server printed its port, got ${JSON.stringify(line)}`);
      const { url, headers } = await portUrl(session, listening, 'http');
      check(/^https?:\/\//.test(url), `http url, got ${url}`);
      const response = await fetch(url, { headers, signal: AbortSignal.timeout(10_000) });
      equal(await response.text(), 'pong', 'response body through the port endpoint');
      const { url: wsUrl } = await portUrl(session, listening, 'ws');
      check(/^wss?:\/\//.test(wsUrl), `ws url, got ${wsUrl}`);
      return pass;
    },
  },
  {
    name: 'restricted() exposes only the SandboxSession surface over the same resource',
    async run(ctx) {
      const session = await open(ctx);
      const view = session.restricted();
      const keys = Object.keys(view).sort();
      const extra = keys.filter((key) => !sandboxSessionKeys.includes(key) && !optionalFileKeys.includes(key));
      equal(JSON.stringify(sandboxSessionKeys.filter((key) => !keys.includes(key))), '[]', 'restricted view lacks contract keys');
      equal(JSON.stringify(extra), '[]', 'restricted view has keys beyond SandboxSession');
      for (const infra of ['stop', 'destroy', 'getPortEndpoint', 'getPortUrl', 'restricted', 'setNetworkPolicy', 'setPorts']) {
        check(!(infra in view), `restricted view has no ${infra}`);
      }
      await view.writeTextFile({ path: 'restricted.txt', content: 'via view' });
      equal(await session.readTextFile({ path: 'restricted.txt' }), 'via view', 'same resource');
      return pass;
    },
  },
  {
    name: 'stop ends spawned processes and is idempotent',
    async run(ctx) {
      const session = await open(ctx);
      const proc = await session.spawn({ command: 'sleep 300' });
      await Promise.all([session.stop(), session.stop()]);
      await session.stop();
      const result = await Promise.race([
        Promise.resolve(proc.wait()).then(() => 'exited'),
        new Promise((resolve) => setTimeout(() => resolve('still running'), 10_000)),
      ]);
      equal(result, 'exited', 'process after stop');
      return pass;
    },
  },
  {
    name: 'destroy leaves nothing behind and is safe after stop',
    async run(ctx) {
      const sessionId = uniqueId('conf');
      const session = await ctx.provider.createSession({ sessionId });
      if (!session.destroy) {
        await session.stop();
        return skip('provider has no destroy');
      }
      await session.writeTextFile({ path: 'doomed.txt', content: 'x' });
      const proc = await session.spawn({ command: 'sleep 300' });
      await session.stop();
      await session.destroy();
      await proc.wait();
      if (ctx.provider.resumeSession) {
        let resumed: HarnessV1NetworkSandboxSession | undefined;
        try {
          resumed = await ctx.provider.resumeSession({ sessionId });
        } catch {
          return pass;
        }
        ctx.defer(() => resumed?.destroy?.());
        equal(await resumed.readTextFile({ path: 'doomed.txt' }), null, 'file after destroy');
      }
      return pass;
    },
  },
  {
    name: 'onFirstCreate runs once per identity, and every session with it starts with its effects',
    async run(ctx) {
      const identity = uniqueId('identity');
      let calls = 0;
      const onFirstCreate = async (session: SandboxSession) => {
        calls += 1;
        await session.writeTextFile({ path: 'baked/stamp.txt', content: `call ${calls}` });
        await new Promise((resolve) => setTimeout(resolve, 100));
      };
      const [a, b] = await Promise.all([open(ctx, { identity, onFirstCreate }), open(ctx, { identity, onFirstCreate })]);
      const c = await open(ctx, { identity, onFirstCreate });
      equal(calls, 1, 'onFirstCreate calls');
      for (const session of [a, b, c]) {
        equal(await session.readTextFile({ path: 'baked/stamp.txt' }), 'call 1', `baked file in ${session.id}`);
      }
      await a.writeTextFile({ path: 'baked/stamp.txt', content: 'changed in a' });
      equal(await b.readTextFile({ path: 'baked/stamp.txt' }), 'call 1', 'sessions do not share files');
      return pass;
    },
  },
  {
    name: 'a failed onFirstCreate leaves no template: the next create runs it again',
    async run(ctx) {
      const identity = uniqueId('identity');
      await rejects(
        () => ctx.provider.createSession({ sessionId: uniqueId('conf'), identity, onFirstCreate: async () => Promise.reject(new Error('setup failed')) }),
        'createSession with a failing onFirstCreate',
      );
      let ran = false;
      const session = await open(ctx, {
        identity,
        onFirstCreate: async (s) => {
          ran = true;
          await s.writeTextFile({ path: 'ok.txt', content: 'ok' });
        },
      });
      check(ran, 'onFirstCreate ran again after the failure');
      equal(await session.readTextFile({ path: 'ok.txt' }), 'ok', 'second attempt baked');
      return pass;
    },
  },
];
