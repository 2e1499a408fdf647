// Fuzzing the bridge (dist/bridge.mjs over real sockets) with generated host
// frames (see fuzz-frames.ts), in batches: every frame gets exactly the answer
// the protocol names (bad-frame / too-large / not-owner / unknown-turn /
// unknown-call / turn-busy / cursor-ahead / journal-mismatch / pong / ack,
// echoing ids), the bridge never crashes, every bridge frame stays valid, and
// a session running alongside on the same bridge completes intact.
//   Phase 1: non-owner connections hammer a bridge whose stream a kit session
//            owns while it runs turns (every part once, in order).
//   Phase 2: the owner's own connection carries the fuzz between a live
//            turn's records (contiguous seqs, each once, every line in order).
// HB_CHAOS_SCALE scales the frame counts; HB_FUZZ_SEED fixes the seed.
import { mkdtempSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PROTOCOL_VERSION_V1, type BridgeFrame, type JournalRecord } from '../../protocol/v1/index.ts';
import { defaultStateDir } from '../../host/harness.ts';
import { connectClient, fixtureLaunch, startBridge, type RunningBridge, type TestClient } from '../bridge/helpers.ts';
import { createChaosKit, scaled, shapeOf, verifyTurn, type ChaosKit, type Part } from './chaos-kit.ts';
import { generateSafe, oversized, seeded, type Expected, type FuzzContext, type Generated } from './fuzz-frames.ts';

const seed = Number(process.env.HB_FUZZ_SEED ?? Date.now() % 2 ** 31);
const counts = { nonOwner: scaled(45_000, 200), owner: scaled(20_000, 100), oversized: 4 };
const batchSize = 400;
const figures = { frames: 0, byCategory: {} as Record<string, number>, answers: {} as Record<string, number>, crashes: 0, turns: 0, records: 0 };
const started = Date.now();

const bridges: RunningBridge[] = [];
let kit: ChaosKit | undefined;
afterAll(async () => {
  await kit?.cleanup();
  for (const bridge of bridges) await bridge.kill();
  const byCategory = Object.entries(figures.byCategory).map(([k, v]) => `${k}:${v}`).join(',');
  const answers = Object.entries(figures.answers).map(([k, v]) => `${k}:${v}`).join(',');
  console.log(
    `[figures] fuzz-bridge frames=${figures.frames} categories={${byCategory}} answers={${answers}} unanswered=0 crashes=${figures.crashes} ` +
      `live-turns-intact=${figures.turns} live-records=${figures.records} gaps=0 duplicates=0 seed=${seed} wall=${((Date.now() - started) / 1000).toFixed(1)}s`,
  );
}, 60_000);

/**
 * Tallies the replies of one connection against what was sent; frames without an id are matched by code.
 * Generated ids can repeat (a wrong-type frame may carry `'x'.repeat(n)` as its id), so each id holds a
 * queue: one connection's replies come in the order its frames were sent.
 */
class Ledger {
  readonly byId = new Map<string, Expected[]>();
  readonly anonymous = new Map<string, number>();
  pongs = 0;
  pending = 0;
  readonly problems: string[] = [];
  #waiter: (() => void) | null = null;

  expectReply(generated: Generated): void {
    const e = generated.expected;
    figures.frames++;
    figures.byCategory[generated.category] = (figures.byCategory[generated.category] ?? 0) + 1;
    if (e.kind === 'none') return;
    this.pending++;
    if (e.kind === 'pong') this.pongs++;
    else if (e.kind === 'ack' || e.id !== undefined) this.#queue(e.id ?? '').push(e);
    else this.anonymous.set(e.code, (this.anonymous.get(e.code) ?? 0) + 1);
  }

  #queue(id: string): Expected[] {
    let queue = this.byId.get(id);
    if (queue === undefined) this.byId.set(id, (queue = []));
    return queue;
  }

  /** A bridge frame that is a reply (error, ack, pong); records/replay/diagnostic frames are not. */
  received(frame: BridgeFrame): void {
    if ((frame.type === 'ack' || frame.type === 'error') && frame.id?.startsWith('live-')) return; // the test's own requests
    if (frame.type === 'pong') {
      this.pongs--;
      if (this.pongs < 0) this.problems.push('a pong nobody asked for');
    } else if (frame.type === 'ack' || frame.type === 'error') {
      const key = frame.type === 'ack' ? 'ack' : frame.code;
      figures.answers[key] = (figures.answers[key] ?? 0) + 1;
      if (frame.id !== undefined) {
        const queue = this.byId.get(frame.id);
        const want = queue?.shift();
        if (queue?.length === 0) this.byId.delete(frame.id);
        const got = frame.type === 'ack' ? 'ack' : frame.code;
        const wanted = want === undefined ? 'nothing' : want.kind === 'ack' ? 'ack' : want.kind === 'error' ? want.code : want.kind;
        if (got !== wanted) this.problems.push(`frame ${frame.id}: answered ${got}, the protocol says ${wanted}${frame.type === 'error' ? ` (${frame.message.slice(0, 120)})` : ''}`);
      } else if (frame.type === 'error') {
        const left = (this.anonymous.get(frame.code) ?? 0) - 1;
        if (left < 0) this.problems.push(`an id-less ${frame.code} error nobody earned: ${frame.message.slice(0, 120)}`);
        this.anonymous.set(frame.code, left);
      } else this.problems.push('an id-less ack');
    } else return;
    this.pending--;
    if (this.pending <= 0 && this.#waiter) this.#waiter();
  }

  drained(timeoutMs: number): Promise<void> {
    if (this.pending <= 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiter = null;
        reject(new Error(`${this.pending} frames unanswered after ${timeoutMs} ms; still waiting for ids ${[...this.byId.keys()].slice(0, 10).join(',')}`));
      }, timeoutMs);
      this.#waiter = () => {
        clearTimeout(timer);
        this.#waiter = null;
        resolve();
      };
    });
  }
}

/** Sends `count` generated frames on `client` in batches, waiting for each batch's answers. */
async function fuzz(client: TestClient, ledger: Ledger, count: number, ctx: () => FuzzContext, random: () => number, offset: number, isAlive: () => boolean): Promise<void> {
  client.discardFrames();
  for (let sent = 0; sent < count; ) {
    const n = Math.min(batchSize, count - sent);
    for (let i = 0; i < n; i++) {
      const generated = generateSafe(random, offset + sent + i, ctx());
      ledger.expectReply(generated);
      client.ws.send(generated.data);
    }
    sent += n;
    await ledger.drained(30_000);
    if (ledger.problems.length > 0) throw new Error(`seed ${seed}: ${ledger.problems.slice(0, 5).join('; ')}`);
    if (!isAlive()) throw new Error(`seed ${seed}: the bridge died after ${sent} frames`);
  }
}

describe('fuzz: bridge', () => {
  it(`${counts.nonOwner} generated frames from non-owner connections are each answered per the protocol while a session on the same bridge completes its turns intact`, { timeout: 240_000 }, async () => {
    kit = await createChaosKit('fuzz');
    const host = await kit.open('fuzzed');
    const stateDir = defaultStateDir(join(kit.root, 'sandboxes', 'fuzzed'), 'fixture', 'fuzzed');
    const port = (JSON.parse(await readFile(join(stateDir, 'bridge.json'), 'utf8')) as { port: number }).port;
    const token = (await readFile(join(stateDir, 'token'), 'utf8')).trim();
    const pid = await kit.bridgePid('fuzzed');
    const alive = (): boolean => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };

    // The live session: turns back to back until the fuzzing is done, each checked part for part.
    let fuzzing = true;
    const session = (async () => {
      for (let turn = 0; fuzzing || turn === 0; turn++) {
        const prompt = `alongside-${turn} LINES:150 INTERVAL:3`;
        const parts: Part[] = [];
        await (await host.session.doPromptTurn({ prompt, emit: (part) => parts.push(part) })).done;
        const verdict = verifyTurn(shapeOf(prompt), parts);
        if (!verdict.ok || verdict.markers !== 0) throw new Error(`live turn ${turn}: ${verdict.ok ? 'unexpected marker' : verdict.problem}`);
        figures.turns++;
      }
    })();

    const { client, hello } = await connectClient({ port, token });
    const ledger = new Ledger();
    client.onFrame = (frame) => ledger.received(frame);
    const random = seeded(seed);
    const ctx = (): FuzzContext => ({ owner: false, journalId: hello.journalId, runningTurnId: null, lastSeqBound: 1_000_000 });
    try {
      await fuzz(client, ledger, counts.nonOwner, ctx, random, 0, alive);
      // Over the size limit: too-large, and the connection stays usable.
      for (let i = 0; i < counts.oversized; i++) {
        const generated = oversized(1e9 + i);
        ledger.expectReply(generated);
        client.ws.send(generated.data);
      }
      const ping = { type: 'ping', t: 42 } as const;
      ledger.expectReply({ data: JSON.stringify(ping), category: 'ping-pong', expected: { kind: 'pong', t: 42 } });
      client.ws.send(JSON.stringify(ping));
      await ledger.drained(60_000);
      expect(ledger.problems).toEqual([]);
      expect(client.invalid, 'every bridge frame passed bridgeFrameSchema').toEqual([]);
    } finally {
      fuzzing = false;
    }
    await session;
    expect(alive(), 'the bridge survived').toBe(true);
    await client.close();
    await host.session.doDestroy();
    await host.dispose();
  });

  it(`${counts.owner} generated frames on the owner's own connection are answered per the protocol between a live turn's records, which arrive contiguous, once each, in order`, { timeout: 240_000 }, async () => {
    const bridge = await startBridge();
    bridges.push(bridge);
    const alive = (): boolean => bridge.proc.exitCode === null && bridge.proc.signalCode === null;
    const { client, hello } = await connectClient(bridge);
    const ledger = new Ledger();
    // The host's view of the stream: contiguous from the attach cursor; a duplicate or gap is a failure.
    let cursor = 0;
    const lines: string[] = [];
    let turnEnd: JournalRecord | null = null;
    const streamProblems: string[] = [];
    client.onFrame = (frame) => {
      if (frame.type === 'records') {
        for (const record of frame.records) {
          if (record.seq !== cursor + 1) streamProblems.push(`seq ${record.seq} after ${cursor}`);
          cursor = record.seq;
          figures.records++;
          if (record.turnId === 'live' && record.kind === 'stdout') lines.push(record.data.text);
          if (record.turnId === 'live' && record.kind === 'turn-end') turnEnd = record;
        }
      } else ledger.received(frame);
    };
    const attached = client.attach(0);
    await attached;
    // The live turn streams while the fuzz runs and, however slow the machine, cannot end before it: past
    // 20,000 lines the CLI holds (on a file nobody creates, its stdin open) until the abort below.
    const lineCount = 30_000;
    const holdDir = mkdtempSync(join(tmpdir(), 'hb-fuzz-hold-'));
    const holdFile = join(holdDir, 'never-created');
    const start = await client.request({
      type: 'start',
      id: 'live-start',
      turnId: 'live',
      launch: fixtureLaunch(['--lines', String(lineCount), '--interval-ms', '1', '--hold-after', '20000', '--hold-file', holdFile], { stdin: 'pipe' }),
    });
    expect(start).toMatchObject({ type: 'ack' });
    const random = seeded(seed ^ 0x5a5a);
    const ctx = (): FuzzContext => ({ owner: true, journalId: hello.journalId, runningTurnId: turnEnd === null ? 'live' : null, lastSeqBound: 1_000_000 });
    await fuzz(client, ledger, counts.owner, ctx, random, 0, alive);
    expect(turnEnd, 'the live turn outlasted the fuzzing (start frames were answered turn-busy)').toBeNull();
    const abort = await client.request({ type: 'abort', id: 'live-abort', turnId: 'live', graceMs: 500 });
    expect(abort).toMatchObject({ type: 'ack' });
    for (let i = 0; i < 400 && turnEnd === null; i++) await new Promise((resolve) => setTimeout(resolve, 25));
    expect(turnEnd, 'the live turn ended').not.toBeNull();
    expect(streamProblems, 'records contiguous, each once').toEqual([]);
    expect(lines.length).toBeGreaterThan(0);
    const outOfOrder = lines.findIndex((text, i) => text !== `line ${i}`);
    expect(outOfOrder, `every line once, in order (first problem at ${outOfOrder}: ${lines[outOfOrder]?.slice(0, 60)})`).toBe(-1);
    expect(ledger.problems).toEqual([]);
    expect(client.invalid).toEqual([]);
    expect(alive(), 'the bridge survived').toBe(true);
    figures.turns++;
    void PROTOCOL_VERSION_V1;
    await client.close();
    rmSync(holdDir, { recursive: true, force: true });
  });
});
