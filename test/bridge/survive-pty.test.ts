// Launch `survive` on a pty: the keeper holds the CLI's pty (node-pty in the keeper), and a bridge
// restarted after a SIGKILL adopts the CLI and journals every byte of its terminal output once,
// resuming at a character boundary even when a kill lands inside a UTF-8 sequence. Built bridge,
// real pty, processes and sockets; the byte-level resume is also checked on random splits (seeded).
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PtyChunks } from '../../bridge/survive/capture-reader.ts';
import { isAlive as alive } from '../../host/sandbox/local/pids.ts';
import { launchSpecSchema, type JournalRecord, type RecordOf } from '../../protocol/v1/index.ts';
import { eventually, seqProblem, tempDir } from './helpers.ts';
import { killedBridges } from './killed-bridges.ts';

const { groups, bridgeOn } = killedBridges();

const ptyIo = { mode: 'pty', cols: 120, rows: 40 } as const;

/** The journal's pty text of a turn, in order. */
const ptyText = (records: readonly JournalRecord[], turnId: string): string =>
  records
    .filter((r): r is RecordOf<'pty'> => r.kind === 'pty' && r.turnId === turnId)
    .map((r) => r.data.text)
    .join('');

function capture(stateDir: string): Buffer {
  const [keeper] = readdirSync(join(stateDir, 'keepers')).filter((name) => existsSync(join(stateDir, 'keepers', name, 'stdout')));
  return keeper === undefined ? Buffer.alloc(0) : readFileSync(join(stateDir, 'keepers', keeper, 'stdout'));
}

// Lines, then a long line written in parts: the first part ends inside '€' (E2 82 | AC), and the
// CLI writes the next part only once the test creates the file that allows it (go1, go2).
const script = `
import { existsSync } from 'node:fs';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const w = (s) => new Promise((r) => process.stdout.write(s, r));
const allowed = async (name) => { for (let i = 0; i < 6000 && !existsSync(new URL(name, import.meta.url)); i++) await sleep(10); };
if (!process.stdout.isTTY) throw new Error('not on a tty');
for (let i = 0; i < 10; i++) { await w('line ' + i + '\\n'); await sleep(10); }
await w('long-' + 'é'.repeat(50));
await w(Buffer.from([0xe2, 0x82]));
await allowed('go1');
await w(Buffer.from([0xac]));
await w('y'.repeat(100));
await allowed('go2');
await w('z'.repeat(20) + '\\n');
for (let i = 10; i < 20; i++) { await w('line ' + i + '\\n'); await sleep(10); }
`;

function expectedText(): string {
  const lines = [];
  for (let i = 0; i < 10; i++) lines.push(`line ${i}`);
  lines.push(`long-${'é'.repeat(50)}€${'y'.repeat(100)}${'z'.repeat(20)}`);
  for (let i = 10; i < 20; i++) lines.push(`line ${i}`);
  return lines.map((line) => `${line}\r\n`).join(''); // the terminal's output processing: \n → \r\n
}

// A session CLI: each stdin line is answered `RESULT <line>`; `split` writes `RES`, waits for the
// release file, then `ULT split`, so a turnEnd line can straddle a kill.
const sessionCli = `
const fs = require('node:fs');
const rl = require('node:readline').createInterface({ input: process.stdin });
rl.on('line', async (line) => {
  if (line === 'split') {
    process.stdout.write('RES');
    for (let i = 0; i < 6000 && !fs.existsSync(process.argv[1]); i++) await new Promise((r) => setTimeout(r, 10));
    process.stdout.write('ULT split\\n');
  } else process.stdout.write('RESULT ' + line + '\\n');
});
setInterval(() => {}, 1000);`;

describe('launch survive on a pty: the keeper holds the pty, and the CLI is re-adopted', () => {
  it('is accepted by the launch schema', () => {
    expect(launchSpecSchema.parse({ argv: ['x'], survive: true, io: ptyIo }).survive).toBe(true);
  });

  it('pty chunks resumed at any chunk offset continue exactly, never splitting a character (seeded)', () => {
    const seed = Number(process.env.HB_SEED ?? 20261202);
    let state = seed;
    const next = (n: number) => {
      state = (state * 1103515245 + 12345) % 2 ** 31;
      return state % n;
    };
    const bytes = Buffer.concat([Buffer.from('ab€é\r\n😀x'.repeat(40)), Buffer.from([0xff, 0x80, 0x61]), Buffer.from('€'.repeat(30))]);
    for (let round = 0; round < 200; round++) {
      const max = 4 + next(40);
      const chunks: Array<{ text: string; off: number }> = [];
      const splitter = new PtyChunks(max, (text, off) => chunks.push({ text, off }), 0);
      for (let at = 0; at < bytes.length; ) {
        const n = 1 + next(17);
        splitter.push(bytes.subarray(at, at + n));
        at += n;
      }
      splitter.end();
      expect(chunks.map((c) => c.text).join(''), `seed ${seed} round ${round}`).toBe(bytes.toString('utf8'));
      for (const { off } of chunks) expect(off === bytes.length || (bytes[off]! & 0xc0) !== 0x80, `seed ${seed} round ${round}: off ${off} splits a character`).toBe(true);
      // An adopting bridge resumes at a journaled off: what follows decodes to the rest of the text.
      const { off } = chunks[next(chunks.length)]!;
      const rest: string[] = [];
      const resumed = new PtyChunks(max, (text) => rest.push(text), off);
      resumed.push(bytes.subarray(off));
      resumed.end();
      expect(chunks.filter((c) => c.off <= off).map((c) => c.text).join('') + rest.join(''), `seed ${seed} round ${round}`).toBe(bytes.toString('utf8'));
    }
  });

  it('two SIGKILLs mid-turn, one inside a UTF-8 sequence: the terminal text once, in order, no U+FFFD, the turn ends with the exit', { timeout: 60_000 }, async () => {
    const scriptDir = tempDir();
    writeFileSync(join(scriptDir, 'tty.mjs'), script);
    const first = await bridgeOn();
    const { stateDir } = first.bridge;
    await first.client.request({ type: 'start', id: 's', turnId: 'tty', launch: { argv: [process.execPath, join(scriptDir, 'tty.mjs')], survive: true, io: ptyIo } });
    const spawn = (await first.client.waitForRecord((r) => r.kind === 'spawn')) as RecordOf<'spawn'>;
    groups.push(spawn.data.pid);
    expect(spawn.data).toMatchObject({ pty: true, keeper: expect.stringMatching(/^[0-9a-f]{12}$/) });
    // The capture ends inside '€'; the bridge has journaled everything before it.
    await eventually(() => capture(stateDir).subarray(-2).equals(Buffer.from([0xe2, 0x82])), 20_000, 'the capture ending inside €');
    await eventually(() => ptyText(first.client.records(), 'tty').endsWith('é'.repeat(50)), 20_000, 'the text before € journaled');
    await first.bridge.kill('SIGKILL');
    expect(alive(spawn.data.pid)).toBe(true);

    const second = await bridgeOn(stateDir, 0);
    writeFileSync(join(scriptDir, 'go1'), '');
    await eventually(() => ptyText(second.client.records(), 'tty').endsWith(`€${'y'.repeat(100)}`), 20_000, 'the second part journaled');
    await second.bridge.kill('SIGKILL');
    writeFileSync(join(scriptDir, 'go2'), '');

    const third = await bridgeOn(stateDir, 0);
    await third.client.waitForRecord((r) => r.kind === 'turn-end' && r.turnId === 'tty', 30_000);
    const records = third.client.records();
    expect(seqProblem(records, 1, records.at(-1)!.seq)).toBeNull();
    expect(ptyText(records, 'tty')).toBe(expectedText());
    const pieces = records.filter((r): r is RecordOf<'pty'> => r.kind === 'pty');
    expect(pieces.every((r) => typeof r.data.off === 'number'), 'every kept pty piece carries its capture offset').toBe(true);
    expect(pieces.at(-1)!.data.off).toBe(Buffer.byteLength(expectedText()));
    expect(records.filter((r) => r.kind === 'turn-end').map((r) => (r as RecordOf<'turn-end'>).data)).toEqual([{ reason: 'exit', code: 0 }]);
    expect(records.filter((r) => r.kind === 'bridge-start').map((r) => (r as RecordOf<'bridge-start'>).data.adopted?.pid)).toEqual([undefined, spawn.data.pid, spawn.data.pid]);
    await eventually(() => !existsSync(join(stateDir, 'keepers', spawn.data.keeper!)), 10_000, 'keeper dir removed');
  });

  it('a flood with a SIGKILL in it: 100,000 lines (~2 MiB, past what the keeper lets run ahead), each journaled once, in order', { timeout: 60_000 }, async () => {
    const flood = `for (let i = 0; i < 100000; i++) process.stdout.write('flood ' + i + ' ' + 'é'.repeat(i % 7) + '\\n');`;
    const first = await bridgeOn();
    const { stateDir } = first.bridge;
    await first.client.request({ type: 'start', id: 's', turnId: 'flood', launch: { argv: [process.execPath, '-e', flood], survive: true, io: ptyIo } });
    const spawn = (await first.client.waitForRecord((r) => r.kind === 'spawn')) as RecordOf<'spawn'>;
    groups.push(spawn.data.pid);
    await first.client.waitForRecord((r) => r.kind === 'pty' && r.data.text.includes('flood 2000 '));
    await first.bridge.kill('SIGKILL');
    const second = await bridgeOn(stateDir, 0);
    await second.client.waitForRecord((r) => r.kind === 'turn-end' && r.turnId === 'flood', 30_000);
    const records = second.client.records();
    expect(seqProblem(records, 1, records.at(-1)!.seq)).toBeNull();
    const lines = ptyText(records, 'flood').split('\r\n');
    expect(lines.pop()).toBe('');
    expect(lines).toEqual(Array.from({ length: 100000 }, (_, i) => `flood ${i} ${'é'.repeat(i % 7)}`));
    expect(records.filter((r) => r.kind === 'turn-end').map((r) => (r as RecordOf<'turn-end'>).data)).toEqual([{ reason: 'exit', code: 0 }]);
  });

  it('a session CLI: a turnEnd line that straddles the kill matches after adoption; input after adoption reaches the adopted pty', { timeout: 60_000 }, async () => {
    const release = join(tempDir(), 'release');
    const launch = {
      argv: [process.execPath, '-e', sessionCli, release],
      survive: true,
      lifetime: 'session',
      io: ptyIo,
      turnEnd: [{ prefix: 'RESULT ' }],
    } as const;
    const first = await bridgeOn();
    const { stateDir } = first.bridge;
    await first.client.request({ type: 'start', id: 's1', turnId: 't1', launch, input: 'one\n' });
    const spawn = (await first.client.waitForRecord((r) => r.kind === 'spawn')) as RecordOf<'spawn'>;
    groups.push(spawn.data.pid);
    expect((await first.client.waitForRecord((r) => r.kind === 'turn-end' && r.turnId === 't1')).data).toEqual({ reason: 'matched' });
    await first.client.request({ type: 'start', id: 's2', turnId: 't2', launch, input: 'split\n' });
    // The CLI's echo of `split` and then `RES`: the line's first half is journaled, the rest is not written yet.
    await eventually(() => /split\r\nRES$/.test(ptyText(first.client.records(), 't2')), 20_000, 'RES journaled');
    await first.bridge.kill('SIGKILL');

    const second = await bridgeOn(stateDir, 0);
    writeFileSync(release, '');
    const end2 = await second.client.waitForRecord((r) => r.kind === 'turn-end' && r.turnId === 't2', 30_000);
    expect(end2.data, 'RES + ULT split matched as one line').toEqual({ reason: 'matched' });
    // The next turn reuses the adopted CLI: its pty gets the input, and answers.
    await second.client.request({ type: 'start', id: 's3', turnId: 't3', launch, input: 'three\n' });
    expect((await second.client.waitForRecord((r) => r.kind === 'turn-end' && r.turnId === 't3', 30_000)).data).toEqual({ reason: 'matched' });
    const records = second.client.records();
    expect(seqProblem(records, 1, records.at(-1)!.seq)).toBeNull();
    expect(records.filter((r) => r.kind === 'spawn')).toHaveLength(1);
    expect(ptyText(records, 't2')).toBe('split\r\nRESULT split\r\n');
    expect(ptyText(records, 't3')).toBe('three\r\nRESULT three\r\n');
    expect(records.some((r) => r.kind === 'turn-end' && r.data.reason === 'interrupted')).toBe(false);
  });
});
