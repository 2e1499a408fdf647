import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKit, runTurn, textOf, type Kit } from './session-helpers.ts';

let kit: Kit;
beforeAll(async () => {
  kit = await createKit('session');
});
afterAll(async () => {
  await kit.cleanup();
});

describe('BridgeSession over the fixture CLI', () => {
  it('runs a prompt turn to finish: stream-start, text, finish, done resolves', async () => {
    const { session } = await kit.start('basic');
    const parts = await runTurn(session, 'hello LINES:3');
    expect(parts.map((p) => p.type)).toEqual([
      'stream-start',
      'text-start',
      'text-delta',
      'text-delta',
      'text-delta',
      'text-end',
      'finish-step',
      'finish',
    ]);
    expect(textOf(parts)).toBe('hello LINES:3 #1\nhello LINES:3 #2\nhello LINES:3 #3\n');
    const second = await runTurn(session, 'again LINES:1');
    expect(textOf(second)).toBe('again LINES:1 #1\n');
    await session.doDestroy();
  });
});
