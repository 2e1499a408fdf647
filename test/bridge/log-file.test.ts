// bridge/log-file.ts: a keeper's lines go into the bridge's existing bridge.log, whole; a state dir whose log is gone
// (being removed with its session) gets no new file, so removing the dir never races a keeper's refusal.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { appendingLog, logFileName } from '../../bridge/log-file.ts';
import { tempDir } from './helpers.ts';

describe('appendingLog', () => {
  it('appends pino-shaped lines to an existing bridge.log and never creates one', () => {
    const dir = tempDir('hb-log-file-');
    appendingLog(dir, 'keeper-x-egress').info({ host: 'a' }, 'egress: refused');
    expect(readdirSync(dir)).toEqual([]);
    writeFileSync(join(dir, logFileName), '');
    const log = appendingLog(dir, 'keeper-x-egress');
    log.info({ host: 'a', reason: 'not-allowed' }, 'egress: refused');
    log.error({ err: Object.assign(new Error('boom'), { code: 'EX' }) }, 'network policy: unreadable');
    const lines = readFileSync(join(dir, logFileName), 'utf8').trimEnd().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines).toMatchObject([
      { level: 30, subsystem: 'keeper-x-egress', host: 'a', reason: 'not-allowed', msg: 'egress: refused' },
      { level: 50, err: { message: 'boom', code: 'EX' }, msg: 'network policy: unreadable' },
    ]);
  });
});
