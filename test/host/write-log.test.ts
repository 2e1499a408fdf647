// WriteLog: whether a start, rerun or input whose ack was lost reached the bridge.
import { describe, expect, it } from 'vitest';
import { WriteLog } from '../../host/session/write-log.ts';
import type { HelloFrame } from '../../protocol/v1/index.ts';

const hello = (over: Partial<HelloFrame>): HelloFrame => ({
  type: 'hello',
  protocolVersion: '1.0',
  bridgeVersion: '0.1.0',
  bridgeId: 'b',
  journalId: 'j',
  state: 'idle',
  firstSeq: 1,
  lastSeq: 4,
  turns: [],
  ...over,
});

describe('WriteLog.turnStarted', () => {
  it('a turn the bridge runs but has not made durable yet started (a second start would be refused turn-busy)', () => {
    const log = new WriteLog(8);
    expect(log.turnStarted('turn-5-aa', hello({ state: 'running', runningTurnId: 'turn-5-aa' }))).toBe(true);
    expect(log.turnStarted('turn-5-aa', hello({ state: 'running', runningTurnId: 'turn-9-bb' }))).toBe(false);
  });

  it('a turn hello lists, or whose turn-start record arrived since, started; any other did not', () => {
    const log = new WriteLog(8);
    const listed = hello({ turns: [{ turnId: 'turn-2-aa', firstSeq: 2, lastSeq: 4, status: 'ended' }] });
    expect(log.turnStarted('turn-2-aa', listed)).toBe(true);
    expect(log.turnStarted('turn-7-cc', listed)).toBe(false);
    log.remember({ seq: 7, t: 0, kind: 'turn-start', turnId: 'turn-7-cc', data: { argv: ['x'] } } as never);
    expect(log.turnStarted('turn-7-cc', listed)).toBe(true);
    expect(log.turnStarted('turn-7-cc', null)).toBe(true);
  });
});
