// main.ts through the built bridge: SIGKILL mid-turn and resume on the same
// state dir, corrupted-tail recovery, stop and destroy, a 1-MB output line.
import { appendFileSync, existsSync, readFileSync, statSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { recordSchema, type JournalRecord, type RecordOf } from '../../protocol/v1/index.ts';
import { connectClient, eventually, fixtureLaunch, seqProblem, startBridge, type RunningBridge, type TestClient } from './helpers.ts';

const bridges: RunningBridge[] = [];
const clients: TestClient[] = [];

async function bridgeOn(stateDir?: string): Promise<RunningBridge> {
  const bridge = await startBridge(stateDir === undefined ? {} : { stateDir });
  bridges.push(bridge);
  return bridge;
}

async function connect(bridge: RunningBridge) {
  const connected = await connectClient(bridge);
  clients.push(connected.client);
  return connected;
}

afterEach(async () => {
  for (const client of clients) expect(client.invalid).toEqual([]);
  await Promise.all(clients.splice(0).map((client) => client.close()));
  await Promise.all(bridges.splice(0).map((bridge) => bridge.kill()));
});

function journalLines(stateDir: string): string[] {
  return readFileSync(join(stateDir, 'journal.ndjson'), 'utf8').split('\n').filter((line) => line.length > 0);
}

/** The records on disk (every line after the header), validated. */
function journalRecords(stateDir: string): JournalRecord[] {
  return journalLines(stateDir)
    .slice(1)
    .map((line) => recordSchema.parse(JSON.parse(line.slice(line.indexOf('\t') + 1))));
}

describe('SIGKILL mid-turn, a new bridge on the same state dir', () => {
  it('replays every journaled record once from the host cursor, continues the numbering and reports the turn interrupted', async () => {
    const first = await bridgeOn();
    const { client, hello } = await connect(first);
    await client.attach(hello.lastSeq);
    await client.request({ type: 'start', id: 's', turnId: 'doomed', launch: fixtureLaunch(['--json', '--lines', '100000', '--interval-ms', '2']) });
    await eventually(() => client.records().length > 200, 20_000, '200 records');
    const cursor = client.records().at(-1)!.seq; // what the host has seen
    await first.kill('SIGKILL');
    const before = client.records();
    expect(seqProblem(before, hello.lastSeq + 1, before.at(-1)!.seq)).toBeNull();

    const second = await bridgeOn(first.stateDir);
    expect(second.ready.journalId).toBe(first.ready.journalId);
    expect(second.ready.bridgeId).not.toBe(first.ready.bridgeId);
    const { client: resumed, hello: again } = await connect(second);
    expect(again.bridgeId).toBe(second.ready.bridgeId);
    expect(again.turns.at(-1)).toMatchObject({ turnId: 'doomed', status: 'interrupted' });

    const { records } = await resumed.attach(cursor);
    expect(seqProblem(records, cursor + 1, again.lastSeq)).toBeNull();
    // The new bridge's records follow the old ones: turn-end interrupted, then bridge-start.
    const [end, start] = records.slice(-2) as [RecordOf<'turn-end'>, RecordOf<'bridge-start'>];
    expect(end).toMatchObject({ kind: 'turn-end', turnId: 'doomed', data: { reason: 'interrupted' } });
    expect(start).toMatchObject({ kind: 'bridge-start', turnId: null, data: { bridgeId: second.ready.bridgeId } });
    // Everything the old bridge journaled (beyond what the host had) came back exactly once.
    const onDisk = journalLines(first.stateDir).length - 1; // minus the header
    expect(again.lastSeq).toBe(onDisk);
    // The old process group's CLI is not ours any more; the new bridge runs new turns normally.
    expect(await resumed.request({ type: 'start', id: 'n', turnId: 'next', launch: fixtureLaunch(['--json', '--lines', '2']) })).toMatchObject({ type: 'ack' });
    const next = await resumed.waitForRecord((r) => r.kind === 'turn-end' && r.turnId === 'next');
    expect(next.seq).toBeGreaterThan(again.lastSeq);
  });
});

describe('corrupted-tail recovery', () => {
  it('truncates a torn and a corrupted tail and reports what it dropped in the bridge-start record', async () => {
    const first = await bridgeOn();
    const { client, hello } = await connect(first);
    await client.attach(hello.lastSeq);
    await client.request({ type: 'start', id: 's', turnId: 'ok', launch: fixtureLaunch(['--json', '--lines', '20']) });
    await client.waitForRecord((r) => r.kind === 'turn-end' && r.turnId === 'ok');
    await client.request({ type: 'stop', id: 'stop' });
    await first.exited;

    const path = join(first.stateDir, 'journal.ndjson');
    const lines = journalLines(first.stateDir);
    const lastGood = lines.length - 1 - 3; // keep all but the last three records
    const keepBytes = lines.slice(0, lastGood + 1).reduce((sum, line) => sum + Buffer.byteLength(line) + 1, 0);
    // Flip a byte inside the third-from-last record, then add a torn line with no newline.
    const bytes = readFileSync(path);
    bytes[keepBytes + 20] = bytes[keepBytes + 20]! ^ 0x01;
    truncateSync(path, 0);
    appendFileSync(path, bytes);
    appendFileSync(path, '0000abcd\t{"seq":');
    const droppedBytes = statSync(path).size - keepBytes;

    const second = await bridgeOn(first.stateDir);
    const { client: reader, hello: again } = await connect(second);
    const { records } = await reader.attach(0);
    expect(seqProblem(records, 1, again.lastSeq)).toBeNull();
    // The dropped tail held the turn's end, so the turn is now unfinished: the new bridge ends it
    // as interrupted, then announces itself. Numbering continues right after the last valid record.
    const [end, start] = records.slice(-2) as [RecordOf<'turn-end'>, RecordOf<'bridge-start'>];
    expect(end).toMatchObject({ seq: lastGood + 1, kind: 'turn-end', turnId: 'ok', data: { reason: 'interrupted' } });
    expect(start).toMatchObject({ seq: lastGood + 2, kind: 'bridge-start' });
    expect(start.data.recovered).toEqual({ droppedBytes, droppedRecords: 4 });
    expect(again.turns.at(-1)).toMatchObject({ turnId: 'ok', status: 'interrupted' });
  });
});

describe('a bridge killed between its CLI\'s exit record and the turn-end', () => {
  it('the restart ends the turn as the exit said (exit, its code), never interrupted: nothing is rerun for a CLI that finished', async () => {
    const first = await bridgeOn();
    const { client, hello } = await connect(first);
    await client.attach(hello.lastSeq);
    await client.request({ type: 'start', id: 's', turnId: 'done', launch: fixtureLaunch(['--json', '--lines', '5', '--exit-code', '3']) });
    await client.waitForRecord((r) => r.kind === 'turn-end' && r.turnId === 'done');
    await client.request({ type: 'stop', id: 'stop' });
    await first.exited;

    // The journal as a SIGKILL right after the exit record's write leaves it: everything from the turn-end on is gone.
    const path = join(first.stateDir, 'journal.ndjson');
    const lines = journalLines(first.stateDir);
    const endAt = lines.findIndex((line) => line.includes('"kind":"turn-end"') && line.includes('"turnId":"done"'));
    expect(lines[endAt - 1], 'the exit record comes right before the turn-end').toContain('"kind":"exit"');
    truncateSync(path, lines.slice(0, endAt).reduce((sum, line) => sum + Buffer.byteLength(line) + 1, 0));

    const second = await bridgeOn(first.stateDir);
    const { client: reader, hello: again } = await connect(second);
    const { records } = await reader.attach(0);
    expect(seqProblem(records, 1, again.lastSeq)).toBeNull();
    const ends = records.filter((r): r is RecordOf<'turn-end'> => r.kind === 'turn-end' && r.turnId === 'done');
    expect(ends.map((r) => r.data)).toEqual([{ reason: 'exit', code: 3 }]);
    expect(again.turns.at(-1)).toMatchObject({ turnId: 'done', status: 'ended' });
  });
});

describe('stop and destroy', () => {
  it('stop acks, exits 0, fsyncs the journal (everything on disk) and keeps the state dir', async () => {
    const bridge = await bridgeOn();
    const { client, hello } = await connect(bridge);
    await client.attach(hello.lastSeq);
    await client.request({ type: 'start', id: 's', turnId: 'long', launch: fixtureLaunch(['--json', '--lines', '100000', '--interval-ms', '5']) });
    await eventually(() => client.records().length > 20, 20_000);
    const ack = await client.request({ type: 'stop', id: 'bye', graceMs: 2000 });
    expect(ack).toMatchObject({ type: 'ack', id: 'bye', of: 'stop' });
    expect(await bridge.exited).toEqual({ code: 0, signal: null });
    expect((await client.closed).code).toBe(4003);
    // The turn ended as stopped, and the ack's lastSeq is the last record on disk.
    const records = journalRecords(bridge.stateDir);
    const last = records.at(-1)!;
    expect(last.seq).toBe(ack.type === 'ack' ? ack.lastSeq : -1);
    const end = records.find((r) => r.kind === 'turn-end');
    expect(end).toMatchObject({ turnId: 'long', data: { reason: 'stopped' } });
    expect(existsSync(join(bridge.stateDir, 'bridge.json'))).toBe(true);
    // Every record the host saw is on disk (fsynced on close) and the host saw them all.
    expect(client.records().at(-1)!.seq).toBe(last.seq);
  });

  it('destroy kills the CLI, removes the state dir, acks and exits 0', async () => {
    const bridge = await bridgeOn();
    const { client, hello } = await connect(bridge);
    await client.attach(hello.lastSeq);
    await client.request({ type: 'start', id: 's', turnId: 'h', launch: fixtureLaunch(['--json', '--hang']) });
    const spawn = (await client.waitForRecord((r) => r.kind === 'spawn')) as RecordOf<'spawn'>;
    const ack = await client.request({ type: 'destroy', id: 'boom' });
    expect(ack).toMatchObject({ type: 'ack', of: 'destroy' });
    expect(await bridge.exited).toEqual({ code: 0, signal: null });
    expect(existsSync(bridge.stateDir)).toBe(false);
    expect(() => process.kill(spawn.data.pid, 0)).toThrow(); // the hanging CLI is gone
  });

  it('SIGTERM stops gracefully (exit 0, the running turn ends as stopped)', async () => {
    const bridge = await bridgeOn();
    const { client, hello } = await connect(bridge);
    await client.attach(hello.lastSeq);
    await client.request({ type: 'start', id: 's', turnId: 'term', launch: fixtureLaunch(['--json', '--lines', '100000', '--interval-ms', '5']) });
    await eventually(() => client.records().length > 5, 20_000);
    expect(await bridge.kill('SIGTERM')).toEqual({ code: 0, signal: null });
    const records = journalRecords(bridge.stateDir);
    expect(records.find((r) => r.kind === 'turn-end')).toMatchObject({ turnId: 'term', data: { reason: 'stopped' } });
  });
});

describe('a 1-MB single output line', () => {
  it('arrives whole: split into cont pieces, in order, none dropped', async () => {
    const bridge = await bridgeOn();
    const { client, hello } = await connect(bridge);
    await client.attach(hello.lastSeq);
    const size = 1024 * 1024;
    await client.request({ type: 'start', id: 's', turnId: 'big', launch: fixtureLaunch(['--big-line', String(size), '--no-session']) });
    await client.waitForRecord((r) => r.kind === 'turn-end' && r.turnId === 'big');
    const stdout = client.records().filter((r): r is RecordOf<'stdout'> => r.kind === 'stdout' && r.turnId === 'big');
    // Pieces up to the end of the big line carry cont:true except the last one.
    const lastPiece = stdout.findIndex((r) => r.data.cont !== true);
    const pieces = stdout.slice(0, lastPiece + 1);
    expect(pieces.length).toBeGreaterThan(1);
    const text = pieces.map((r) => r.data.text).join('');
    expect(text.length).toBe(size);
    const fill = 'abcdefghijklmnopqrstuvwxyz0123456789';
    expect(text.slice(0, 72)).toBe(fill + fill);
    expect(text === Array.from({ length: size }, (_, i) => fill[i % 36]).join('')).toBe(true);
  });
});
