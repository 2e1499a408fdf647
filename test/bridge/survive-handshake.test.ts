// A surviving CLI whose launch has a handshake (launch `start`, as ACP's initialize): a bridge
// SIGKILLed after the handshake, or while its answer is still outstanding, hands the CLI to the next
// bridge, which neither writes the handshake again nor holds the turn's later input behind a step
// that is done (docs/bridge-internals.md#process-start). An input frame the handshake held at the
// kill was never acked, so the host sends it again to the adopting bridge: written once.
// Built bridge, real processes and sockets; the CLI answers the handshake only once a file exists,
// so the crash point is chosen, not timed.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { launchSpecSchema } from '../../protocol/v1/index.ts';
import { tempDir } from './helpers.ts';
import { keeperPids, killedBridges, texts } from './killed-bridges.ts';

// Echoes each stdin line as {"got": line}; answers {"id":"init"} once the file in argv[1] exists;
// a {"method":"prompt"} line ends the turn ({"done":true}).
const CLI = `
const fs = require('node:fs');
const rl = require('node:readline').createInterface({ input: process.stdin });
rl.on('line', (line) => {
  console.log(JSON.stringify({ got: line }));
  let msg; try { msg = JSON.parse(line); } catch { return; }
  if (msg.method === 'init') {
    const answer = () => (fs.existsSync(process.argv[1]) ? console.log(JSON.stringify({ id: 'init', result: {} })) : setTimeout(answer, 20));
    answer();
  }
  if (msg.method === 'prompt') console.log(JSON.stringify({ done: true }));
});
setInterval(() => {}, 1000);`;

const handshake = '{"id":"init","method":"init"}\n';

const { groups, bridgeOn } = killedBridges();

/**
 * A bridge running turn t1 on a kept CLI that has read the handshake (so it reached the CLI before any
 * kill: a write journaled in the instant before a SIGKILL is survive-input.test.ts's case) and not answered it.
 */
async function handshakeRead() {
  const answerFile = join(tempDir(), 'answer-init');
  const first = await bridgeOn();
  const launch = launchSpecSchema.parse({
    argv: [process.execPath, '-e', CLI, answerFile],
    stdin: 'pipe',
    lifetime: 'session',
    survive: true,
    turnEnd: [{ json: { path: ['done'], equals: true } }],
    start: [{ input: handshake, until: [{ path: ['id'], equals: 'init' }] }],
  });
  await first.client.request({ type: 'start', id: 's', turnId: 't1', launch, input: '{"method":"hello"}\n' });
  const spawn = await first.client.waitForRecord((r) => r.kind === 'spawn');
  if (spawn.kind === 'spawn') groups.push(spawn.data.pid);
  await first.client.waitForRecord((r) => r.kind === 'stdout' && r.data.text === JSON.stringify({ got: handshake.trimEnd() }));
  return { first, answerFile };
}

describe('launch start across a bridge SIGKILL (survive)', () => {
  for (const when of ['after the handshake was answered', 'while the handshake answer is outstanding'] as const) {
    it(`${when}: the adopting bridge writes the turn's next input once, not the handshake again`, { timeout: 60_000 }, async () => {
      const { first, answerFile } = await handshakeRead();
      if (when === 'after the handshake was answered') {
        writeFileSync(answerFile, '');
        // The gate opened: the held turn input went out after the answer.
        await first.client.waitForRecord((r) => r.kind === 'stdout' && r.data.text === JSON.stringify({ got: '{"method":"hello"}' }));
      }
      for (const pid of keeperPids(first.bridge.stateDir)) groups.push(pid);
      await first.bridge.kill('SIGKILL');

      const second = await bridgeOn(first.bridge.stateDir, 0);
      if (when === 'while the handshake answer is outstanding') writeFileSync(answerFile, '');
      await second.client.request({ type: 'input', id: 'i', turnId: 't1', text: '{"method":"prompt"}\n' });
      await second.client.waitForRecord((r) => r.kind === 'turn-end' && r.turnId === 't1', 30_000);
      const records = second.client.records();
      const stdin = texts(records, 'stdin');
      expect(stdin.filter((t) => t === handshake), 'the handshake written once, by the first bridge').toHaveLength(1);
      expect(stdin.at(-1)).toBe('{"method":"prompt"}\n');
      const got = texts(records, 'stdout').filter((t) => t.startsWith('{"got"'));
      // The turn's input: written after the answer by the first bridge, or (its gate held it when it died) by the second.
      expect(got, 'the CLI read each write once, in order').toEqual(
        [handshake, '{"method":"hello"}\n', '{"method":"prompt"}\n'].map((line) => JSON.stringify({ got: line.trimEnd() })),
      );
      const end = records.find((r) => r.kind === 'turn-end' && r.turnId === 't1');
      expect(end?.kind === 'turn-end' && end.data.reason).toBe('matched');
    });
  }

  it('an input frame held at the kill is not acked; sent again to the adopting bridge, it is written and read once', { timeout: 60_000 }, async () => {
    const held = '{"method":"held"}\n';
    const { first, answerFile } = await handshakeRead();
    first.client.send({ type: 'input', id: 'held', turnId: 't1', text: held });
    // Frames are routed in order: once the later frame is acked, the input frame is held by the gate.
    expect(await first.client.request({ type: 'diagnostics', id: 'later', enabled: false })).toMatchObject({ type: 'ack' });
    for (const pid of keeperPids(first.bridge.stateDir)) groups.push(pid);
    await first.bridge.kill('SIGKILL');
    await first.client.closed;
    expect(first.client.frames.filter((f) => (f.type === 'ack' || f.type === 'error') && f.id === 'held'), 'the host holds no ack for the held input').toEqual([]);

    const second = await bridgeOn(first.bridge.stateDir, 0);
    // The host settles its unacked input from the journal (host/session/send-request.ts): no stdin record of it, so it sends it again.
    expect(texts(second.client.records(), 'stdin')).not.toContain(held);
    const again = second.client.request({ type: 'input', id: 'again', turnId: 't1', text: held });
    writeFileSync(answerFile, '');
    expect(await again).toMatchObject({ type: 'ack' });
    await second.client.request({ type: 'input', id: 'p', turnId: 't1', text: '{"method":"prompt"}\n' });
    await second.client.waitForRecord((r) => r.kind === 'turn-end' && r.turnId === 't1', 30_000);
    const records = second.client.records();
    expect(texts(records, 'stdin').filter((t) => t === held), 'one stdin record of the input').toHaveLength(1);
    const got = texts(records, 'stdout').filter((t) => t.startsWith('{"got"'));
    expect(got, 'the CLI read each write once, in order').toEqual(
      [handshake, '{"method":"hello"}\n', held, '{"method":"prompt"}\n'].map((line) => JSON.stringify({ got: line.trimEnd() })),
    );
  });
});
