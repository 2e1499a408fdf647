// Test helpers for driving the built bridge (dist/bridge.mjs) as a real child
// process over real sockets: startBridge() spawns it and waits for its ready
// line; connectClient() is a raw ws client that records every frame and
// validates each one with bridgeFrameSchema. Host-kit tests reuse these.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WebSocket } from 'ws';
import { z } from 'zod';
import {
  PROTOCOL_VERSION_V1,
  bridgeFrameSchema,
  type BridgeFrame,
  type BridgeFrameType,
  type JournalRecord,
  type LaunchSpecInput,
} from '../../protocol/v1/index.ts';

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
export const bridgeBundle = join(repoRoot, 'dist/bridge.mjs');
export const fixtureCli = join(repoRoot, 'host/testing/fixture/fixture-cli.mjs');

export const readyLineSchema = z.object({
  type: z.literal('bridge-ready'),
  port: z.number().int().positive(),
  bridgeId: z.string().min(1),
  journalId: z.string().min(1),
  version: z.string().min(1),
  pid: z.number().int().positive(),
});
export type ReadyLine = z.infer<typeof readyLineSchema>;

export type Exit = { code: number | null; signal: NodeJS.Signals | null };

export type RunningBridge = {
  port: number;
  token: string;
  url: string;
  stateDir: string;
  proc: ChildProcess;
  ready: ReadyLine;
  /** Resolves when the process has exited. */
  exited: Promise<Exit>;
  /** Everything the bridge wrote to stderr so far. */
  stderr(): string;
  /** Sends `signal` (default SIGKILL) and waits for the exit. */
  kill(signal?: NodeJS.Signals): Promise<Exit>;
};

export type StartBridgeOptions = {
  /** Default: a fresh temp dir. */
  stateDir?: string;
  /** Extra environment; HARNESS_BRIDGE_TOKEN is set to `token` unless `env` sets it (use null to leave it unset). */
  env?: Record<string, string | null>;
  /** Default: a fresh random token. */
  token?: string;
  args?: string[];
  /** Default: dist/bridge.mjs. */
  bundle?: string;
  /** The node binary to run it with (default: the one running the tests). */
  node?: string;
  /** Rewrites the command (e.g. to start the bridge inside a namespace of the test's). */
  wrap?: (cmd: string, args: string[]) => { cmd: string; args: string[] };
  cwd?: string;
  readyTimeoutMs?: number;
};

/** A fresh temp dir, readable by anyone: a root bridge runs its CLIs under their own uid (docs/security.md), and test CLIs and scripts live here. */
export function tempDir(prefix = 'hb-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  chmodSync(dir, 0o755);
  return dir;
}

export function randomToken(): string {
  return randomBytes(24).toString('base64url');
}

const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const proc of running) proc.kill('SIGKILL');
});

/** Spawns `node dist/bridge.mjs --state-dir DIR` and resolves with its parsed ready line. */
export async function startBridge(options: StartBridgeOptions = {}): Promise<RunningBridge> {
  const stateDir = options.stateDir ?? join(tempDir(), 'state');
  const token = options.token ?? randomToken();
  const env: NodeJS.ProcessEnv = { ...process.env, HARNESS_BRIDGE_TOKEN: token };
  delete env.NODE_OPTIONS; // vitest's loader hooks must not leak into the bundle
  for (const [key, value] of Object.entries(options.env ?? {})) {
    if (value === null) delete env[key];
    else env[key] = value;
  }
  const command = { cmd: options.node ?? process.execPath, args: [options.bundle ?? bridgeBundle, '--state-dir', stateDir, ...(options.args ?? [])] };
  const { cmd, args } = options.wrap ? options.wrap(command.cmd, command.args) : command;
  const proc = spawn(cmd, args, {
    cwd: options.cwd ?? repoRoot,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(proc);
  let stderr = '';
  let stdout = '';
  proc.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<Exit>((resolve) =>
    proc.once('exit', (code, signal) => {
      running.delete(proc);
      resolve({ code, signal });
    }),
  );
  const line = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`bridge not ready after ${options.readyTimeoutMs ?? 15_000} ms; stderr: ${stderr}`)), options.readyTimeoutMs ?? 15_000);
    proc.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      const end = stdout.indexOf('\n');
      if (end >= 0) {
        clearTimeout(timer);
        resolve(stdout.slice(0, end));
      }
    });
    void exited.then((exit) => {
      clearTimeout(timer);
      reject(new Error(`bridge exited before ready (${exit.code ?? exit.signal}); stderr: ${stderr}`));
    });
  });
  const ready = readyLineSchema.parse(JSON.parse(line));
  return {
    port: ready.port,
    token,
    url: `ws://127.0.0.1:${ready.port}/`,
    stateDir,
    proc,
    ready,
    exited,
    stderr: () => stderr,
    async kill(signal: NodeJS.Signals = 'SIGKILL') {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      return exited;
    },
  };
}

export type ConnectOptions = {
  /** Default: `Authorization: Bearer`; 'query' uses `?token=`; 'none' sends no token. */
  tokenIn?: 'header' | 'query' | 'none';
  /** Frames received before this resolves are kept too. */
  timeoutMs?: number;
};

/** A raw ws client: every received frame is validated and kept in `frames` (invalid ones in `invalid`). */
export class TestClient {
  readonly frames: BridgeFrame[] = [];
  /** Frames that failed bridgeFrameSchema (a test should expect this to stay empty). */
  readonly invalid: { text: string; error: string }[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  #waiters: { test: (frame: BridgeFrame) => boolean; from: number; resolve: (frame: BridgeFrame) => void }[] = [];
  #keepFrames = true;

  constructor(readonly ws: WebSocket) {
    this.closed = new Promise((resolve) => ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
    ws.on('message', (data: Buffer) => this.#received(data.toString('utf8')));
  }

  /** Stop keeping frames (a long stream that a test counts through `onFrame` instead). */
  discardFrames(): void {
    this.#keepFrames = false;
  }

  onFrame: ((frame: BridgeFrame) => void) | null = null;

  #received(text: string): void {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      this.invalid.push({ text: text.slice(0, 200), error: String(error) });
      return;
    }
    const parsed = bridgeFrameSchema.safeParse(json);
    if (!parsed.success) {
      this.invalid.push({ text: text.slice(0, 200), error: parsed.error.message });
      return;
    }
    const frame = parsed.data;
    if (this.#keepFrames) this.frames.push(frame);
    this.onFrame?.(frame);
    const index = this.frames.length - 1;
    this.#waiters = this.#waiters.filter((waiter) => {
      if (this.#keepFrames && index < waiter.from) return true;
      if (!waiter.test(frame)) return true;
      waiter.resolve(frame);
      return false;
    });
  }

  send(frame: object | string): void {
    this.ws.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
  }

  /** The first frame (already received from index `from` on, or arriving later) that passes `test`. */
  waitFor<T extends BridgeFrame = BridgeFrame>(test: (frame: BridgeFrame) => boolean, timeoutMs = 15_000, from = 0): Promise<T> {
    const found = this.frames.slice(from).find(test);
    if (found !== undefined) return Promise.resolve(found as T);
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiters = this.#waiters.filter((waiter) => waiter.resolve !== done);
        reject(new Error(`no matching frame within ${timeoutMs} ms; last frames: ${JSON.stringify(this.frames.slice(-5)).slice(0, 1000)}`));
      }, timeoutMs);
      const done = (frame: BridgeFrame): void => {
        clearTimeout(timer);
        resolve(frame as T);
      };
      this.#waiters.push({ test, from, resolve: done });
    });
  }

  /** The next frame of `type` received after everything seen so far. */
  next<K extends BridgeFrameType>(type: K, timeoutMs?: number): Promise<Extract<BridgeFrame, { type: K }>> {
    return this.waitFor((frame) => frame.type === type, timeoutMs, this.frames.length);
  }

  /** The reply (ack or error) to the request with `id`. */
  reply(id: string, timeoutMs?: number): Promise<Extract<BridgeFrame, { type: 'ack' | 'error' }>> {
    return this.waitFor((frame) => (frame.type === 'ack' || frame.type === 'error') && frame.id === id, timeoutMs);
  }

  /** Sends a request with `id` and waits for its ack or error. */
  request(frame: { type: string; id: string } & Record<string, unknown>, timeoutMs?: number): Promise<Extract<BridgeFrame, { type: 'ack' | 'error' }>> {
    const reply = this.reply(frame.id, timeoutMs);
    this.send(frame);
    return reply;
  }

  /** Every record received so far, in arrival order. */
  records(from = 0): JournalRecord[] {
    return recordsBetween(this.frames, from, this.frames.length);
  }

  /** Attach at `cursor` and wait for replay-end; returns the replayed records and the replay-begin. */
  async attach(cursor: number, extra: Record<string, unknown> = {}): Promise<{ begin: Extract<BridgeFrame, { type: 'replay-begin' }>; records: JournalRecord[] }> {
    const from = this.frames.length;
    // Both waiters exist before the frame goes out: with discardFrames() nothing could be found afterwards.
    const begun = this.waitFor<Extract<BridgeFrame, { type: 'replay-begin' }>>((f) => f.type === 'replay-begin', 15_000, from);
    const ended = this.waitFor((f) => f.type === 'replay-end', 60_000, from);
    this.send({ type: 'attach', protocolVersion: PROTOCOL_VERSION_V1, cursor, ...extra });
    const begin = await begun;
    await ended;
    const beginAt = this.frames.indexOf(begin);
    const endAt = this.frames.findIndex((f, i) => i > beginAt && f.type === 'replay-end');
    return { begin, records: recordsBetween(this.frames, beginAt, endAt) };
  }

  /** Waits until a record passing `test` arrived. */
  waitForRecord(test: (record: JournalRecord) => boolean, timeoutMs = 30_000): Promise<JournalRecord> {
    const seen = this.records().find(test);
    if (seen) return Promise.resolve(seen);
    return this.waitFor((frame) => frame.type === 'records' && frame.records.some(test), timeoutMs).then((frame) => {
      if (frame.type !== 'records') throw new Error('unreachable');
      return frame.records.find(test)!;
    });
  }

  close(): Promise<{ code: number; reason: string }> {
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING) this.ws.close();
    return this.closed;
  }
}

/** The records in frames[start, end). */
export function recordsBetween(frames: readonly BridgeFrame[], start: number, end: number): JournalRecord[] {
  const out: JournalRecord[] = [];
  for (let i = start; i < end; i++) {
    const frame = frames[i]!;
    if (frame.type === 'records') out.push(...frame.records);
  }
  return out;
}

/** Opens a raw ws connection and waits for hello. Rejects with the HTTP status on a refused upgrade. */
export async function connectClient(bridge: { port: number; token: string }, options: ConnectOptions = {}): Promise<{ client: TestClient; hello: Extract<BridgeFrame, { type: 'hello' }> }> {
  const tokenIn = options.tokenIn ?? 'header';
  const url = `ws://127.0.0.1:${bridge.port}/${tokenIn === 'query' ? `?token=${encodeURIComponent(bridge.token)}` : ''}`;
  const ws = new WebSocket(url, {
    headers: tokenIn === 'header' ? { authorization: `Bearer ${bridge.token}` } : {},
    maxPayload: 256 * 1024 * 1024,
  });
  const client = new TestClient(ws);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('unexpected-response', (_request, response) => reject(new HttpRefusal(response.statusCode ?? 0)));
    ws.once('error', reject);
  });
  const hello = await client.waitFor<Extract<BridgeFrame, { type: 'hello' }>>((frame) => frame.type === 'hello', options.timeoutMs);
  return { client, hello };
}

export class HttpRefusal extends Error {
  constructor(readonly status: number) {
    super(`upgrade refused with HTTP ${status}`);
  }
}

/** A launch spec for the fixture CLI (one process per turn unless overridden). */
export function fixtureLaunch(args: string[], overrides: Partial<LaunchSpecInput> = {}): LaunchSpecInput {
  return { argv: [process.execPath, fixtureCli, ...args], ...overrides };
}

/** Asserts seqs are exactly from..to, each once, in order; returns a description of the first problem or null. */
export function seqProblem(records: readonly { seq: number }[], from: number, to: number): string | null {
  if (records.length !== Math.max(0, to - from + 1)) return `expected ${Math.max(0, to - from + 1)} records (${from}..${to}), got ${records.length}`;
  for (let i = 0; i < records.length; i++) {
    if (records[i]!.seq !== from + i) return `record ${i} has seq ${records[i]!.seq}, expected ${from + i}`;
  }
  return null;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls `check` until it returns a value other than undefined/false, or throws after timeoutMs. */
export async function eventually<T>(check: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 15_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}
