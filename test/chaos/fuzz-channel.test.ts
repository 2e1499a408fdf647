// Fuzzing the host channel (host/channel/channel.ts) with a small real ws server that
// plays a malicious bridge: between genuine records it sends malformed JSON,
// wrong types, invalid records, unknown frame types, huge values, stale and
// overlapping seqs, gaps and out-of-order batches, acks and errors for
// requests that do not exist, hellos and replay brackets at the wrong time,
// records of turns nobody started, pings. The channel must not crash or end:
// every genuine record reaches onRecords exactly once and in order, every
// invalid frame is reported (one warn diagnostic each) and dropped, every gap
// costs exactly one re-attach at the right cursor, and every ping is answered.
// HB_CHAOS_SCALE scales the frame count; HB_FUZZ_SEED fixes the seed.
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import { PROTOCOL_VERSION_V1, type JournalRecord } from '../../protocol/v1/index.ts';
import { createBridgeChannel } from '../../host/channel/index.ts';
import { scaled } from './chaos-kit.ts';
import { seeded } from './fuzz-frames.ts';

const seed = Number(process.env.HB_FUZZ_SEED ?? (Date.now() + 7) % 2 ** 31);
const totalFrames = scaled(50_000, 500);
const started = Date.now();
const figures = { frames: 0, byCategory: {} as Record<string, number>, delivered: 0, reattaches: 0, invalid: 0, pongs: 0 };

afterAll(() => {
  const byCategory = Object.entries(figures.byCategory).map(([k, v]) => `${k}:${v}`).join(',');
  console.log(
    `[figures] fuzz-channel frames=${figures.frames} categories={${byCategory}} delivered=${figures.delivered} gaps=0 duplicates=0 ` +
      `invalid-reported=${figures.invalid} re-attaches=${figures.reattaches} pongs=${figures.pongs} crashes=0 seed=${seed} wall=${((Date.now() - started) / 1000).toFixed(1)}s`,
  );
});

const turnIds = ['t-real', 't-ghost-1', 'never-started', null] as const;
/** The genuine journal: record `seq` is a pure function of seq, so the test keeps no copy. */
function recordAt(seq: number): JournalRecord {
  const turnId = turnIds[seq % turnIds.length]!;
  if (seq % 97 === 0) return { seq, turnId, ts: seq, kind: 'tool-call', data: { callId: `c${seq}`, name: 'probe', input: { seq } } };
  if (seq % 13 === 0) return { seq, turnId, ts: seq, kind: 'stderr', data: { text: `err ${seq}` } };
  return { seq, turnId, ts: seq, kind: 'stdout', data: { text: `line ${seq} ${'é'.repeat(seq % 5)}` } };
}
const canonical = (record: JournalRecord): string =>
  JSON.stringify([record.seq, record.turnId, record.ts, record.kind, record.data]);

describe('fuzz: host channel', () => {
  it(`${totalFrames} frames from a malicious bridge: genuine records once each in order, every invalid frame reported and dropped, gaps re-attached, no crash`, { timeout: 240_000 }, async () => {
    const random = seeded(seed);
    const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
    const int = (min: number, max: number): number => min + Math.floor(random() * (max - min + 1));
    /** Highest seq the channel must have: the end of the contiguous genuine records sent on valid frames. */
    let accepted = 0;
    let invalidSent = 0;
    let pingsSent = 0;
    let attachProblems: string[] = [];
    let pumping: Promise<void> = Promise.resolve();

    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, maxPayload: 64 * 1024 * 1024 });
    await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
    const port = (wss.address() as AddressInfo).port;

    const send = (ws: WebSocket, text: string | Buffer, category: string): void => {
      figures.frames++;
      figures.byCategory[category] = (figures.byCategory[category] ?? 0) + 1;
      ws.send(text);
    };
    const recordsFrame = (from: number, to: number): string =>
      JSON.stringify({ type: 'records', records: Array.from({ length: to - from + 1 }, (_, i) => recordAt(from + i)) });

    /** One connection's worth of traffic, until a gap makes the channel re-attach or the budget is spent. */
    const pump = async (ws: WebSocket): Promise<void> => {
      let sent = accepted;
      for (let i = 0; figures.frames < totalFrames && ws.readyState === ws.OPEN; i++) {
        if (i % 64 === 0) await new Promise((resolve) => setImmediate(resolve)); // let the channel breathe; pongs come back
        while (ws.bufferedAmount > 4 * 1024 * 1024 && ws.readyState === ws.OPEN) await new Promise((resolve) => setTimeout(resolve, 2));
        const roll = random();
        if (roll < 0.3) {
          const to = sent + int(1, 20);
          send(ws, recordsFrame(sent + 1, to), 'genuine');
          sent = accepted = to;
        } else if (roll < 0.33) {
          // A genuine record with a huge value (valid: delivered).
          const seq = sent + 1;
          const record = { ...recordAt(seq), kind: 'stdout', data: { text: 'H'.repeat(int(64, 512) * 1024) } } as JournalRecord;
          send(ws, JSON.stringify({ type: 'records', records: [record] }), 'huge-genuine');
          hugeAt.add(seq);
          sent = accepted = seq;
        } else if (roll < 0.41 && sent > 0) {
          const from = int(Math.max(1, sent - 30), sent);
          send(ws, recordsFrame(from, sent), 'stale-seq');
        } else if (roll < 0.45 && sent > 2) {
          const to = sent + int(1, 5);
          send(ws, recordsFrame(sent - 2, to), 'overlapping-seq');
          sent = accepted = to;
        } else if (roll < 0.455) {
          // A gap (or an out-of-order batch): the channel must re-attach from `sent`.
          const out = random() < 0.5 ? recordsFrame(sent + 2, sent + 4) : JSON.stringify({ type: 'records', records: [recordAt(sent + 2), recordAt(sent + 1)] });
          send(ws, out, random() < 0.5 ? 'gap' : 'out-of-order');
          return; // the channel closes this socket; the next attach names the cursor
        } else if (roll < 0.75) {
          invalidSent++;
          const category = pick(['malformed-json', 'wrong-type', 'bad-record', 'unknown-type', 'not-an-object', 'binary-garbage', 'huge-invalid'] as const);
          let text: string | Buffer;
          switch (category) {
            case 'malformed-json': {
              const valid = recordsFrame(sent + 1, sent + 3);
              text = pick([valid.slice(0, int(0, valid.length - 1)), `${valid},`, "{'type':'records'}", '{"type":"records","records":[{]}']);
              break;
            }
            case 'wrong-type':
              text = JSON.stringify(
                pick([
                  { type: 'records', records: 'nope' },
                  { type: 'records', records: [] },
                  { type: 'replay-begin', from: 'a', to: 1 },
                  { type: 'ack', id: 5, of: 'start' },
                  { type: 'error', code: 'no-such-code', message: 'x' },
                  { type: 'hello', protocolVersion: 1 },
                  { type: 'ping', t: 'soon' },
                ]),
              );
              break;
            case 'bad-record': {
              const good = recordAt(sent + 1) as Record<string, unknown>;
              const bad = pick([
                { ...good, seq: -1 },
                { ...good, seq: 1.5 },
                { ...good, kind: 'teleport' },
                { ...good, data: { text: 42 } },
                { ...good, turnId: '' },
                { ...good, ts: 'yesterday' },
                { seq: sent + 1 },
              ]);
              text = JSON.stringify({ type: 'records', records: [bad, recordAt(sent + 2)] });
              break;
            }
            case 'unknown-type':
              text = JSON.stringify({ type: pick(['attach', 'start', 'records2', '', 'RECORDS']), records: [recordAt(sent + 1)] });
              break;
            case 'not-an-object':
              text = JSON.stringify(pick([null, 7, 'records', [recordAt(sent + 1)]]));
              break;
            case 'binary-garbage':
              text = Buffer.from(Array.from({ length: int(1, 200) }, () => int(0, 255)));
              break;
            case 'huge-invalid':
              text = JSON.stringify({ type: 'records', records: [{ ...recordAt(sent + 1), kind: 'x'.repeat(256 * 1024) }] });
              break;
          }
          send(ws, text, category);
        } else if (roll < 0.8) {
          pingsSent++;
          send(ws, JSON.stringify({ type: 'ping', t: i }), 'ping');
        } else {
          // Valid frames that mean nothing here: the channel reports or ignores them and carries on.
          const noise = pick([
            { type: 'ack', id: `no-such-request-${i}`, of: 'input', lastSeq: sent },
            { type: 'error', id: `no-such-request-${i}`, code: pick(['unknown-turn', 'not-owner', 'cursor-expired', 'internal']), message: 'fuzz' },
            { type: 'error', code: pick(['bad-frame', 'internal', 'queue-full', 'unknown-turn']), message: 'fuzz, no id' },
            { type: 'diagnostic', level: 'info', subsystem: 'fuzz', message: 'noise', ts: i, attrs: { deep: { er: [1, 2] } } },
            { type: 'replay-end', to: sent },
            { type: 'pong', t: i },
            {
              type: 'hello', protocolVersion: PROTOCOL_VERSION_V1, bridgeVersion: '0', bridgeId: 'evil', journalId: 'other',
              state: 'idle', firstSeq: 0, lastSeq: 0, turns: [],
            },
          ]);
          send(ws, JSON.stringify(noise), `noise-${noise.type}`);
        }
      }
    };
    const hugeAt = new Set<number>();

    let connections = 0;
    wss.on('connection', (ws, request) => {
      connections++;
      if (request.headers.authorization !== 'Bearer fuzz-token') attachProblems.push('no bearer token');
      ws.on('message', (data) => {
        const frame = JSON.parse(String(data)) as { type: string; id?: string; cursor?: number; t?: number };
        if (frame.type === 'attach') {
          if (frame.cursor !== accepted) attachProblems.push(`attach at cursor ${frame.cursor}, but the channel holds ${accepted}`);
          if (connections > 1) figures.reattaches++;
          ws.send(JSON.stringify({ type: 'replay-begin', from: accepted + 1, to: accepted }));
          ws.send(JSON.stringify({ type: 'replay-end', to: accepted }));
          pumping = pump(ws);
        } else if (frame.type === 'pong') figures.pongs++;
      });
      ws.send(
        JSON.stringify({
          type: 'hello', protocolVersion: PROTOCOL_VERSION_V1, bridgeVersion: '0.0.0-fuzz', bridgeId: `evil-${connections}`,
          journalId: 'fuzz-journal', state: 'running', firstSeq: 1, lastSeq: accepted, turns: [],
        }),
      );
    });

    let cursor = 0;
    const deliveryProblems: string[] = [];
    let invalidReported = 0;
    const channel = createBridgeChannel({
      url: `ws://127.0.0.1:${port}/`,
      token: 'fuzz-token',
      cursor: 0,
      backoff: { initialMs: 5, maxMs: 50 },
      heartbeatMs: 60_000,
      onRecords: (records) => {
        for (const record of records) {
          if (record.seq !== cursor + 1) deliveryProblems.push(`delivered seq ${record.seq} after ${cursor}`);
          cursor = record.seq;
          const want = hugeAt.has(record.seq) ? null : canonical(recordAt(record.seq));
          if (want !== null && canonical(record) !== want) deliveryProblems.push(`seq ${record.seq} content differs`);
          figures.delivered++;
        }
      },
      onDiagnostic: (d) => {
        if (d.level === 'warn' && /dropped an invalid frame/.test(d.message)) invalidReported++;
      },
    });
    try {
      for (let i = 0; i < 2400 && (figures.frames < totalFrames || cursor < accepted); i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        if (channel.state === 'closed') break;
      }
      await pumping;
      for (let i = 0; i < 200 && (cursor < accepted || invalidReported < invalidSent); i++) await new Promise((resolve) => setTimeout(resolve, 25));
      figures.invalid = invalidReported;
      expect(channel.state, 'the channel never ended').not.toBe('closed');
      expect(deliveryProblems.slice(0, 5)).toEqual([]);
      expect(attachProblems.slice(0, 5)).toEqual([]);
      expect(cursor, 'every genuine record delivered').toBe(accepted);
      expect(figures.frames).toBeGreaterThanOrEqual(totalFrames);
      expect(invalidReported, 'one warn diagnostic per invalid frame').toBe(invalidSent);
      expect(figures.pongs, 'every ping answered with a pong').toBeGreaterThanOrEqual(pingsSent - 64);
    } finally {
      await channel.close();
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    }
    attachProblems = [];
  });
});
