// Regression: the bridge's `unknown-turn` reply to an abort can overtake the
// turn-end record it refers to (the reply is sent at once, records only after
// their journal write). The slice used to fail at the reply and drop the
// turn's last parts (its finish). A scripted channel reproduces the order.
import { describe, expect, it } from 'vitest';
import type { HarnessV1StreamPart } from '../../protocol/harness-v1/stream-part.ts';
import type { AckFrame, JournalRecord } from '../../protocol/v1/index.ts';
import { ChannelRequestError } from '../../host/channel/errors.ts';
import { BridgeSession, type OpenChannel } from '../../host/session/session.ts';
import { fixtureAdapter } from '../fixtures/fixture-adapter.ts';

const hello = {
  type: 'hello' as const,
  protocolVersion: '1.0',
  bridgeVersion: 'test',
  bridgeId: 'b',
  journalId: 'j',
  state: 'idle' as const,
  firstSeq: 0,
  lastSeq: 0,
  turns: [],
};

describe('abort answered with unknown-turn before the turn-end record arrives', () => {
  it('waits for the turn-end record: the consumer still gets the finish part, then done rejects with AbortError', async () => {
    let deliver: (records: JournalRecord[]) => void = () => undefined;
    let seq = 0;
    let turnId = '';
    const record = (kind: string, data: unknown): JournalRecord => ({ seq: ++seq, turnId, ts: 0, kind, data }) as JournalRecord;
    const stdout = (line: object) => record('stdout', { text: JSON.stringify(line) });
    const openChannel: OpenChannel = (options) => {
      deliver = (records) => options.onRecords(records);
      return {
        hello,
        whenLive: async () => undefined,
        close: async () => undefined,
        request: async (frame): Promise<AckFrame> => {
          if (frame.type === 'start') {
            turnId = frame.turnId;
            setTimeout(() =>
              deliver([
                record('turn-start', {}),
                stdout({ type: 'delta', turn: 1, n: 0, text: 'a' }),
                stdout({ type: 'delta', turn: 1, n: 1, text: 'b' }),
              ]),
            );
            return { type: 'ack', id: '1', of: 'start' };
          }
          if (frame.type === 'abort') {
            // The CLI already ended the turn: the reply goes out now, the records after their write.
            setTimeout(() => deliver([stdout({ type: 'result', turn: 1, interrupted: true }), record('turn-end', { reason: 'matched' })]), 30);
            throw new ChannelRequestError('unknown-turn', `turn ${frame.turnId} has ended`, { frameType: 'abort' });
          }
          return { type: 'ack', id: '2', of: frame.type };
        },
      };
    };
    const session = new BridgeSession(
      {
        adapter: fixtureAdapter(),
        sessionId: 's',
        sessionWorkDir: '/tmp',
        stateDir: '/tmp/state',
        bootstrapDir: '/tmp/boot',
        permissionMode: 'allow-all',
        skills: [],
        observability: undefined,
        openChannel,
        sandbox: {} as never, // not used: no destroy in this test
        mcp: undefined,
      },
      { link: { url: 'ws://x', headers: {}, token: 't', port: 1, hello }, isResume: false, rungs: [] },
    );
    const abort = new AbortController();
    const parts: HarnessV1StreamPart[] = [];
    const control = await session.doPromptTurn({
      prompt: 'p',
      abortSignal: abort.signal,
      emit: (part) => {
        parts.push(part);
        if (part.type === 'text-delta' && parts.filter((p) => p.type === 'text-delta').length === 2) abort.abort();
      },
    });
    await expect(control.done).rejects.toMatchObject({ name: 'AbortError' });
    expect(parts.at(-1), 'the finish part of the interrupted turn reached the consumer').toMatchObject({
      type: 'finish',
      finishReason: { unified: 'other' },
    });
  });
});
