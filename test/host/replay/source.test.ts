import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadSource } from '../../../host/replay/source.ts';

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('loadSource: recording entries', () => {
  it('invalid lines and events become typed entries (event attrs: the listed fields, in file order)', () => {
    dir = mkdtempSync(join(tmpdir(), 'hb-source-'));
    const path = join(dir, 'r.ndjson');
    const lines = [
      { type: 'recording-header', format: 'harness-bridge-recording', version: 1, startedAt: 1000, url: 'ws://127.0.0.1:1/', protocolVersion: '1.0', cursor: 0 },
      { dir: 'event', t: 0.5, event: 'connect', attempt: 1, cursor: 0 },
      { dir: 'in', t: 1, invalid: '{"type":', code: 'bad-frame', message: 'not JSON' },
      { dir: 'event', t: 2, event: 'disconnect', reason: 'heartbeat timeout', cursor: 0, extra: true },
    ];
    writeFileSync(path, lines.map((line) => JSON.stringify(line)).join('\n') + '\n');
    const source = loadSource(path);
    expect(source.kind).toBe('recording');
    const entries = source.kind === 'recording' ? source.segments[0]!.entries : [];
    expect(entries).toEqual([
      { type: 'event', line: 2, at: 1000.5, event: 'connect', attrs: { attempt: 1, cursor: 0 } },
      { type: 'invalid', line: 3, at: 1001, code: 'bad-frame', message: 'not JSON' },
      { type: 'event', line: 4, at: 1002, event: 'disconnect', attrs: { reason: 'heartbeat timeout', cursor: 0 } },
    ]);
  });
});
