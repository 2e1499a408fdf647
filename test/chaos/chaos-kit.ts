// Shared pieces of the chaos suite: a host kit whose every slice is a fresh
// harness instance (what a new host process builds) routed through a chaos
// proxy (drop every live connection, or stall the bridge→host direction: a
// paused socket), a fixture adapter that can crash the CLI after N deltas of a
// turn (CRASHAT:n in the prompt), and the oracle: what an uninterrupted run of
// a prompt emits, computed by the adapter's own translator over synthetic
// records, plus the check that a concatenation of slices equals it (or, where
// the ladder reran, an interrupted prefix + a recomputed marker + a full run).
import { chmod, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HarnessV1Diagnostic } from '../../protocol/harness-v1/diagnostics.ts';
import type { HarnessV1NetworkSandboxSession } from '../../protocol/harness-v1/sandbox.ts';
import type { HarnessV1ResumeState, HarnessV1Session } from '../../protocol/harness-v1/session.ts';
import type { HarnessV1StreamPart } from '../../protocol/harness-v1/stream-part.ts';
import type { JournalRecord } from '../../protocol/v1/index.ts';
import { defineCliAdapter, type CliAdapter } from '../../host/adapter-kit/adapter.ts';
import { createBridgeHarness, defaultStateDir, type BridgeHarnessSettings } from '../../host/harness.ts';
import { createLocalSandboxProvider, type LocalSandboxProvider } from '../../host/sandbox/local/provider.ts';
import { fixtureAdapter } from '../fixtures/fixture-adapter.ts';
import { execChaos } from './exec-chaos.ts';
import { hostedExecSession } from '../fixtures/hosted-sandbox.ts';

export type Part = HarnessV1StreamPart;

/** HB_CHAOS_SCALE multiplies every count of the chaos suite (deep local runs). */
export const chaosScale = Math.max(0.01, Number(process.env.HB_CHAOS_SCALE ?? 1));
export const scaled = (n: number, min = 1): number => Math.max(min, Math.round(n * chaosScale));

// ── the adapter ─────────────────────────────────────────────────────────────

const marker = (text: string, name: string): string | undefined => new RegExp(`${name}:(\\S+)`).exec(text)?.[1];

/**
 * The fixture adapter, plus CRASHAT:n in a prompt: that turn's CLI exits 3
 * right after its n-th delta (the launch differs, so the bridge retires the
 * session's process and spawns one with --crash-after n; the next turn's
 * launch differs again and respawns a healthy one). Found by the suite: two
 * consecutive turns with one launch share a process and its delta count.
 */
export function chaosAdapter(options: { survive?: boolean } = {}): CliAdapter<unknown> {
  const base = fixtureAdapter({ survive: options.survive === true }) as unknown as CliAdapter<unknown>;
  return defineCliAdapter<unknown>({
    ...base,
    launch: (ctx) => {
      const spec = base.launch(ctx);
      const crash = marker(ctx.prompt, 'CRASHAT');
      // HOLDAT:n HOLDFILE:path: the CLI holds right after its n-th delta until the file exists (the SIGKILL lanes
      // kill the bridge while it holds, so the kill lands mid-turn by construction, not by timing).
      const hold = marker(ctx.prompt, 'HOLDAT');
      const holdFile = marker(ctx.prompt, 'HOLDFILE');
      const extra = [...(crash === undefined ? [] : ['--crash-after', crash]), ...(hold === undefined || holdFile === undefined ? [] : ['--hold-after', hold, '--hold-file', holdFile])];
      // --crash-after and --hold-after count deltas per process: the prompt in env makes every such turn's launch
      // unique, so the bridge never reuses a process whose count an earlier turn already advanced.
      return extra.length === 0 ? spec : { ...spec, argv: [...spec.argv, ...extra], env: { ...spec.env, CHAOS_TURN: ctx.prompt } };
    },
  });
}

// ── a proxy that drops and stalls ───────────────────────────────────────────

export type ChaosProxy = {
  readonly url: string;
  /** Reset every live connection (both sides, no close handshake); returns how many. */
  dropAll(): number;
  /** Stop forwarding bridge→host bytes for `ms` on every live connection (a paused socket); returns how many. */
  stall(ms: number): number;
  close(): Promise<void>;
};

export async function startChaosProxy(targetPort: number): Promise<ChaosProxy> {
  const live = new Map<net.Socket, net.Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const stalled = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, '127.0.0.1');
    live.set(client, upstream);
    const teardown = (): void => {
      live.delete(client);
      client.destroy();
      upstream.destroy();
    };
    for (const socket of [client, upstream]) {
      socket.on('error', teardown);
      socket.on('close', teardown);
    }
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address() as net.AddressInfo;
  return {
    url: `ws://127.0.0.1:${address.port}`,
    dropAll() {
      const count = live.size;
      if (process.env.HB_CHAOS_TRACE === '1') console.log(`dropAll ${count} at ${Date.now()}`, new Error().stack?.split('\n').slice(2, 5).join(' | '));
      for (const [client, upstream] of [...live]) {
        live.delete(client);
        upstream.destroy();
        client.resetAndDestroy();
      }
      return count;
    },
    stall(ms) {
      let count = 0;
      for (const [client, upstream] of live) {
        if (stalled.has(upstream)) continue; // one stall at a time: a second pipe() would duplicate bytes
        count++;
        stalled.add(upstream);
        upstream.unpipe(client);
        upstream.pause();
        const timer = setTimeout(() => {
          timers.delete(timer);
          stalled.delete(upstream);
          if (!upstream.destroyed && !client.destroyed) {
            upstream.pipe(client);
            upstream.resume();
          }
        }, ms);
        timers.add(timer);
      }
      return count;
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      for (const [client, upstream] of [...live]) {
        upstream.destroy();
        client.destroy();
      }
      live.clear();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

// ── the kit ─────────────────────────────────────────────────────────────────

export type HostInstance = {
  session: HarnessV1Session;
  /** The proxy the session's channel goes through (the one made for its last getPortEndpoint). */
  proxy(): ChaosProxy | undefined;
  /** Closes the proxies this instance made. */
  dispose(): Promise<void>;
};

export type ChaosKit = {
  root: string;
  provider: LocalSandboxProvider;
  diagnostics: HarnessV1Diagnostic[];
  /** A fresh host instance (new harness, new channel) for a new or resumed session, through a chaos proxy. */
  open(
    sessionId: string,
    resumeFrom?: HarnessV1ResumeState,
    options?: { settings?: BridgeHarnessSettings; onProxy?: (proxy: ChaosProxy) => void },
  ): Promise<HostInstance>;
  /** The bridge pid of a session (from its state dir's bridge.json). */
  bridgePid(sessionId: string): Promise<number>;
  cleanup(): Promise<void>;
};

/** Which host instance (the kit's open() calls, numbered from 1 across kits) reported a diagnostic: a failing schedule's
 * diagnostics name the host that said each line, so a race between two hosts of one session can be read off them. */
const hostOfDiagnostic = new WeakMap<HarnessV1Diagnostic, number>();
let openedHosts = 0;

/** A diagnostic as one line, led by the host instance that reported it (`host 3`). */
export function diagnosticLine(d: HarnessV1Diagnostic): string {
  const host = hostOfDiagnostic.get(d);
  return `${host === undefined ? '' : `host ${host} `}${d.level} ${d.subsystem}: ${d.message}`;
}

/**
 * `survive`: the fixture CLI runs under a keeper and outlives a SIGKILLed bridge (launch spec `survive`).
 * `transport: 'exec'`: the sandbox has no port methods; every connection is a relay over its spawn stdio
 * (exec-chaos.ts), and the proxy's faults cut or hold those exec streams. `'hosted'`: the same over a
 * simulated hosted exec API (test/fixtures/hosted-sandbox.ts: strings out, delayed and rate-limited
 * writes in), with base64-line framing and batched writes.
 */
export async function createChaosKit(name: string, options: { survive?: boolean; transport?: 'port' | 'exec' | 'hosted' } = {}): Promise<ChaosKit> {
  const root = await mkdtemp(join(tmpdir(), `hb-chaos-${name}-`));
  await chmod(root, 0o711); // a root bridge runs the CLI under a uid of its own (docs/security.md): it must pass through
  const provider = createLocalSandboxProvider({ root: join(root, 'sandboxes'), templatesRoot: join(root, 'templates') });
  const diagnostics: HarnessV1Diagnostic[] = [];
  const sessionIds = new Set<string>();
  const workDirs = new Map<string, string>();
  const adapter = chaosAdapter(options);
  return {
    root,
    provider,
    diagnostics,
    async open(sessionId, resumeFrom, { settings = {}, onProxy } = {}) {
      const fresh = !sessionIds.has(sessionId);
      sessionIds.add(sessionId);
      const sandbox = fresh && resumeFrom === undefined ? await provider.createSession({ sessionId }) : await provider.resumeSession({ sessionId });
      const proxies: ChaosProxy[] = [];
      const overExec =
        options.transport === 'exec' ? execChaos(sandbox) : options.transport === 'hosted' ? execChaos(hostedExecSession(sandbox).session) : undefined;
      if (overExec) {
        proxies.push(overExec.proxy);
        onProxy?.(overExec.proxy);
      }
      const wrapped: HarnessV1NetworkSandboxSession = overExec?.session ?? {
        ...sandbox,
        getPortEndpoint: async ({ port }) => {
          const proxy = await startChaosProxy(port);
          proxies.push(proxy);
          onProxy?.(proxy);
          return { url: proxy.url };
        },
      };
      workDirs.set(sessionId, sandbox.defaultWorkingDirectory);
      const workDir = join(sandbox.defaultWorkingDirectory, 'work');
      await mkdir(workDir, { recursive: true });
      const harness = createBridgeHarness(adapter, {
        probeTimeoutMs: 2_000,
        ...(options.transport === 'hosted' ? { execTransport: { framing: 'base64-lines', batchWritesMs: 2 } } : {}),
        channel: { backoff: { initialMs: 20, maxMs: 200 }, reconnectDeadlineMs: 30_000 },
        // HB_CHAOS_RECORD_DIR: record every channel's frames (docs/recording-format.md) to debug a failing seed.
        ...(process.env.HB_CHAOS_RECORD_DIR ? { recordDir: process.env.HB_CHAOS_RECORD_DIR } : {}),
        ...settings,
      });
      const host = ++openedHosts;
      const session = await harness.doStart({
        sessionId,
        sandboxSession: wrapped,
        sessionWorkDir: workDir,
        observability: {
          report: (d) => {
            hostOfDiagnostic.set(d, host);
            diagnostics.push(d);
          },
        },
        ...(resumeFrom ? { resumeFrom } : {}),
      });
      return {
        session,
        proxy: () => proxies.at(-1),
        dispose: async () => {
          for (const proxy of proxies.splice(0)) await proxy.close();
        },
      };
    },
    async bridgePid(sessionId) {
      const dir = workDirs.get(sessionId);
      if (dir === undefined) throw new Error(`no session ${sessionId} opened`);
      const stateDir = defaultStateDir(dir, 'fixture', sessionId);
      return (JSON.parse(await readFile(join(stateDir, 'bridge.json'), 'utf8')) as { pid: number }).pid;
    },
    async cleanup() {
      for (const sessionId of sessionIds) {
        const sandbox = await provider.resumeSession({ sessionId }).catch(() => null);
        await sandbox?.stop();
      }
      if (process.env.HB_CHAOS_KEEP === '1') console.log(`HB_CHAOS_KEEP: kept ${root}`);
      else await rm(root, { recursive: true, force: true });
    },
  };
}

// ── the oracle ──────────────────────────────────────────────────────────────

export type TurnShape = { prompt: string; lines: number; crashAt?: number };

export function shapeOf(prompt: string): TurnShape {
  const lines = Number(marker(prompt, 'LINES') ?? 3);
  const crash = marker(prompt, 'CRASHAT');
  return { prompt, lines, ...(crash === undefined ? {} : { crashAt: Number(crash) }) };
}

/**
 * The parts an uninterrupted run of `shape` emits, from the adapter's own
 * translator over the records the fixture CLI and the bridge would journal.
 * `cut`: the run as journaled up to `cut` deltas and then ended `interrupted`
 * by a restarted bridge (the prefix the ladder keeps before it reruns).
 */
export function expectedParts(shape: TurnShape, cut?: number): Part[] {
  const { translator } = fixtureAdapter();
  const turnId = 't';
  let seq = 0;
  const records: JournalRecord[] = [];
  const add = (kind: JournalRecord['kind'], data: unknown): void => {
    records.push({ seq: ++seq, turnId, ts: 0, kind, data } as JournalRecord);
  };
  const stdout = (value: unknown): void => add('stdout', { text: JSON.stringify(value) });
  add('turn-start', {});
  stdout({ type: 'start', turn: 1, text: shape.prompt });
  const produced = shape.crashAt === undefined ? shape.lines : Math.min(shape.lines, Math.max(1, shape.crashAt));
  const deltas = cut === undefined ? produced : Math.min(cut, produced);
  for (let n = 0; n < deltas; n++) stdout({ type: 'delta', turn: 1, n, text: `${shape.prompt} #${n}` });
  if (cut !== undefined) add('turn-end', { reason: 'interrupted' });
  else if (shape.crashAt !== undefined && shape.crashAt <= shape.lines) {
    add('exit', { pid: 1, code: 3, signal: null });
    add('turn-end', { reason: 'exit', code: 3 });
  } else {
    stdout({ type: 'result', turn: 1, text: shape.prompt, lines: shape.lines });
    add('turn-end', { reason: 'matched' });
  }
  let state = translator.init({ turnId, rerun: false });
  const parts: Part[] = [];
  for (const record of records) {
    const out = translator.step(state, record);
    state = out.state;
    parts.push(...out.parts);
  }
  return parts;
}

/**
 * Text ids are derived from seqs; compare shapes by renaming them in order of appearance. The kit's
 * recomputed / re-delivered marks on harnessMetadata (host/session/marks.ts) are the markers' business,
 * not the shape's: dropped here.
 */
export function normalize(parts: readonly Part[]): string[] {
  const ids = new Map<string, string>();
  return parts.map((given) => {
    const part = withoutMarks(given);
    if ('id' in part && typeof part.id === 'string' && part.type.startsWith('text-')) {
      if (!ids.has(part.id)) ids.set(part.id, `T${ids.size}`);
      return JSON.stringify({ ...part, id: ids.get(part.id) });
    }
    return JSON.stringify(part);
  });
}

function withoutMarks(part: Part): Part {
  if (!('harnessMetadata' in part) || !part.harnessMetadata || !('harnessBridge' in part.harnessMetadata)) return part;
  const { harnessBridge: _marks, ...meta } = part.harnessMetadata;
  const { harnessMetadata: _meta, ...rest } = part;
  return (Object.keys(meta).length > 0 ? { ...rest, harnessMetadata: meta } : rest) as Part;
}

export const isRecomputedMarker = (part: Part): boolean =>
  part.type === 'stream-start' && (part.warnings ?? []).some((w) => w.type === 'other' && /recomputed/.test(w.message));

export type Verdict = { ok: true; markers: number; delivered: number } | { ok: false; problem: string };

/**
 * Every part exactly once and in order, or: where the ladder had to rerun, an
 * explicit recomputed marker (a stream-start warning) stands exactly where the
 * journaled prefix ends; each segment before a marker is the uninterrupted
 * run's prefix closed as `interrupted`, and the last segment is a complete run.
 */
export function verifyTurn(shape: TurnShape, given: readonly Part[]): Verdict {
  const full = normalize(expectedParts(shape));
  const parts = withoutReopened(given);
  const starts: number[] = [];
  parts.forEach((part, i) => {
    if (isRecomputedMarker(part)) starts.push(i);
  });
  const bounds = [0, ...starts, parts.length];
  for (let s = 0; s + 1 < bounds.length; s++) {
    const segment = parts.slice(bounds[s], bounds[s + 1]).map((part, i) =>
      i === 0 && s > 0 && part.type === 'stream-start' ? stripMarker(part) : part,
    );
    const got = normalize(segment);
    const last = s + 2 === bounds.length;
    if (last) {
      const diff = firstDiff(got, full);
      if (diff !== null) return { ok: false, problem: `segment ${s} (${s === 0 ? 'no marker' : 'after marker'}) differs from a complete run: ${diff}` };
    } else {
      const deltas = segment.filter((p) => p.type === 'text-delta').length;
      const expected = normalize(expectedParts(shape, deltas));
      const diff = firstDiff(got, expected);
      if (diff !== null) return { ok: false, problem: `segment ${s} (before marker ${s}) is not the uninterrupted prefix of ${deltas} deltas closed as interrupted: ${diff}` };
    }
  }
  return { ok: true, markers: starts.length, delivered: parts.length };
}

/**
 * The slices' parts as one stream: a text-start for a block that is still open is the start a continuing
 * slice re-sends for the block an earlier slice left open (docs/guarantees.md#ui), dropped here; a
 * repeated delta is not, and counts as a duplicate.
 */
function withoutReopened(parts: readonly Part[]): Part[] {
  const open = new Set<string>();
  return parts.filter((part) => {
    if (part.type === 'text-start') {
      if (open.has(part.id)) return false;
      open.add(part.id);
    } else if (part.type === 'text-end') open.delete(part.id);
    else if (isRecomputedMarker(part)) open.clear(); // a rerun is a new run: what the lost one left open stays unclosed
    return true;
  });
}

function stripMarker(part: Extract<Part, { type: 'stream-start' }>): Part {
  const warnings = (part.warnings ?? []).filter((w) => !(w.type === 'other' && /recomputed/.test(w.message)));
  const { warnings: _drop, ...rest } = part;
  return warnings.length > 0 ? { ...rest, warnings } : rest;
}

/** The first index where two part lists differ, described for a failure message; null when equal. */
export function firstDiff(got: readonly string[], want: readonly string[]): string | null {
  const n = Math.max(got.length, want.length);
  for (let i = 0; i < n; i++) {
    if (got[i] !== want[i]) {
      const kind = got[i] === undefined ? 'missing (gap)' : want[i] === undefined ? 'extra (duplicate?)' : 'different';
      return `part ${i} ${kind}: got ${got[i]?.slice(0, 160) ?? '∅'}, want ${want[i]?.slice(0, 160) ?? '∅'} (${got.length} parts vs ${want.length})`;
    }
  }
  return null;
}

/** Counts gaps (expected deltas never delivered) and duplicates (deltas delivered twice) in a part list, by delta text. */
export function gapsAndDuplicates(shape: TurnShape, parts: readonly Part[]): { gaps: number; duplicates: number } {
  const seen = new Map<string, number>();
  // Parts of the recomputed run are a second, marked run: count each run's deltas on its own.
  let run = 0;
  for (const part of parts) {
    if (isRecomputedMarker(part)) run++;
    if (part.type === 'text-delta') seen.set(`${run}:${part.delta}`, (seen.get(`${run}:${part.delta}`) ?? 0) + 1);
  }
  let duplicates = 0;
  for (const count of seen.values()) duplicates += count - 1;
  const produced = shape.crashAt === undefined ? shape.lines : Math.min(shape.lines, Math.max(1, shape.crashAt));
  let gaps = 0;
  for (let n = 0; n < produced; n++) if (!seen.has(`${run}:${shape.prompt} #${n}\n`)) gaps++;
  return { gaps, duplicates };
}

/** Busy-waits `ms` (a consumer doing synchronous work inside emit). */
export function busy(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // spin: the host's event loop is blocked, exactly like a CPU-bound consumer
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
