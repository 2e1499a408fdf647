// `replay` and `inspect` on input that is not a journal (or not a whole one):
// random bytes, a journal whose last line is cut short, a corrupted line in
// the middle, a recording where a journal belongs, a journal or recording file
// given to inspect. Each is one line on stderr naming the file, the line and
// byte offset and what was expected there, and a non-zero exit.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { encodeHeaderLine, encodeLine, serializeRecord } from '../../../protocol/journal/line-format.ts';
import { runCli, type CliRun } from './cli-helpers.ts';

const dir = mkdtempSync(join(tmpdir(), 'hb-offline-errors-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A small valid journal: the header and `n` stdout records of one turn; returns its bytes and each line's offset. */
function journalBytes(n: number): { bytes: Buffer; offsets: number[] } {
  const lines = [encodeHeaderLine('jrn-errors', 1000)];
  lines.push(encodeLine(serializeRecord(1, 1001, { turnId: 't1', kind: 'turn-start', data: {} })));
  for (let seq = 2; seq <= n + 1; seq++) lines.push(encodeLine(serializeRecord(seq, 1000 + seq, { turnId: 't1', kind: 'stdout', data: { text: `line ${seq} ✓` } })));
  const offsets: number[] = [];
  let at = 0;
  for (const line of lines) {
    offsets.push(at);
    at += line.length;
  }
  return { bytes: Buffer.concat(lines), offsets };
}

/** Deterministic "random" bytes (xorshift), never starting like a journal line or JSON. */
function noise(length: number): Buffer {
  const bytes = Buffer.alloc(length);
  let x = 0x9e3779b9;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    bytes[i] = x & 0xff;
  }
  bytes[0] = 0x89; // like a PNG: not a hex digit, not whitespace, not `{`
  return bytes;
}

function oneLineError(result: CliRun): string {
  expect(result.code, `exit code (stderr: ${result.stderr})`).not.toBe(0);
  const lines = result.stderr.split('\n').filter((line) => line.length > 0);
  expect(lines, 'exactly one line on stderr').toHaveLength(1);
  return lines[0]!;
}

const expectedJournal = /expected <crc32 of the JSON, 8 lowercase hex digits><tab>\{"type":"journal-header"/;

describe('replay and inspect: input that is not a journal', () => {
  it('random bytes: replay names the file, line 1, byte 0 and both formats it expected; inspect of a state dir holding them too', async () => {
    const file = join(dir, 'noise.bin');
    writeFileSync(file, noise(200_000));
    for (const mode of [[], ['--check'], ['--timeline'], ['--json']]) {
      const line = oneLineError(await runCli(['replay', file, ...mode]));
      expect(line).toMatch(/noise\.bin:1: not JSON and not a journal line: neither a journal nor a recording \(it starts "\\x89/);
      expect(line).toMatch(/\(byte 0; expected a journal \(<crc32 .*\) or a recording header line \{"type":"recording-header"/);
    }
    const state = join(dir, 'noise-state');
    mkdirSync(state);
    writeFileSync(join(state, 'journal.ndjson'), noise(200_000));
    const inspected = oneLineError(await runCli(['inspect', state]));
    expect(inspected).toMatch(/^harness-bridge inspect: .*noise-state\/journal\.ndjson:1: not a journal: line 1 is not framed as a journal line: it holds binary data \(byte 0; /);
    expect(inspected).toMatch(expectedJournal);
    expect(oneLineError(await runCli(['inspect', state, '--json']))).toBe(inspected);
    expect(oneLineError(await runCli(['replay', state]))).toMatch(/journal\.ndjson:1: journal not a journal: line 1 is not framed as a journal line: it holds binary data \(byte 0;/);
  });

  it('a journal whose last line is cut short: every replay mode names that line and its byte offset; inspect reports it as damage', async () => {
    const { bytes, offsets } = journalBytes(40);
    const torn = join(dir, 'torn.ndjson');
    writeFileSync(torn, bytes.subarray(0, bytes.length - 5));
    const last = offsets.length; // 1-based number of the last line
    for (const mode of [[], ['--check'], ['--timeline'], ['--json'], ['--adapter', 'fixture']]) {
      const line = oneLineError(await runCli(['replay', torn, ...mode]));
      expect(line).toContain(`torn.ndjson:${last}: journal torn tail: the last line has no newline (a write was cut short) (byte ${offsets[last - 1]}; expected <crc32 of the JSON`);
    }
    // inspect reads a damaged journal and reports the damage (exit 0): the bridge truncates a torn tail when it next opens it.
    const state = join(dir, 'torn-state');
    mkdirSync(state);
    writeFileSync(join(state, 'journal.ndjson'), bytes.subarray(0, bytes.length - 5));
    const report = await runCli(['inspect', state, '--json']);
    expect(report.code, report.stderr).toBe(0);
    expect(JSON.parse(report.stdout).journal).toMatchObject({ tornTail: true, healthy: false, records: 40, problems: [expect.stringMatching(new RegExp(`^line ${last}: torn tail`))] });
  });

  it('a corrupted line in the middle: named with its byte offset; the lines before it are not printed', async () => {
    const { bytes, offsets } = journalBytes(40);
    const broken = Buffer.from(bytes);
    const line = 20;
    const at = offsets[line - 1]! + 15; // inside the JSON: the crc no longer matches
    broken[at] = broken[at]! ^ 0x01;
    const file = join(dir, 'flipped.ndjson');
    writeFileSync(file, broken);
    const result = await runCli(['replay', file, '--adapter', 'fixture', '--json']);
    expect(oneLineError(result)).toContain(`flipped.ndjson:${line}: journal crc mismatch: the line is corrupted (byte ${offsets[line - 1]}; expected <crc32 of the JSON`);
    expect(result.stdout, 'validated before any output').toBe('');
  });

  it('a recording where a journal belongs, and files where a state dir belongs', async () => {
    const header = { type: 'recording-header', format: 'harness-bridge-recording', version: 1, startedAt: 1000, url: 'ws://127.0.0.1:1/', protocolVersion: '1.0', cursor: 0 };
    const recording = `${JSON.stringify(header)}\n${JSON.stringify({ dir: 'event', t: 1, event: 'close', cursor: 0 })}\n`;
    const state = join(dir, 'recording-state');
    mkdirSync(state);
    writeFileSync(join(state, 'journal.ndjson'), recording);
    const inspected = oneLineError(await runCli(['inspect', state]));
    expect(inspected).toMatch(/recording-state\/journal\.ndjson:1: not a journal: line 1 is not framed as a journal line: it is a recording header \(a channel recording/);
    expect(inspected).toMatch(/\(byte 0; expected <crc32 /);
    // The same file given to inspect directly, and a journal file too.
    const recordingFile = join(dir, 'session.ndjson');
    writeFileSync(recordingFile, recording);
    expect(oneLineError(await runCli(['inspect', recordingFile]))).toMatch(/session\.ndjson is a recording \(a channel recording: harness-bridge replay reads it\), not a bridge state dir/);
    const journalFile = join(dir, 'journal-copy.ndjson');
    writeFileSync(journalFile, journalBytes(3).bytes);
    expect(oneLineError(await runCli(['inspect', journalFile]))).toMatch(/journal-copy\.ndjson is a journal file \(inspect its state dir, .*; harness-bridge replay reads the file\), not a bridge state dir/);
    // replay takes the recording (it is one) and the journal.
    expect((await runCli(['replay', recordingFile, '--check'])).code).toBe(0);
    expect((await runCli(['replay', journalFile, '--check'])).code).toBe(0);
  });

  it('JSON that is not a recording, and an empty file', async () => {
    const file = join(dir, 'other.ndjson');
    writeFileSync(file, '{"hello":"world"}\n');
    expect(oneLineError(await runCli(['replay', file]))).toMatch(/other\.ndjson:1: expected a recording header first \(is this a recording\?\) \(byte 0; expected a recording header line/);
    const empty = join(dir, 'empty.ndjson');
    writeFileSync(empty, '');
    expect(oneLineError(await runCli(['replay', empty]))).toMatch(/empty\.ndjson: empty file/);
  });
});
