// The exec transport over a hosted exec API (docs/remote-providers.md#hosted-exec), simulated by
// test/fixtures/hosted-sandbox.ts (a mock: the hosted services cannot run here): output reaches the
// host as strings, each stdin write is delayed and rate-limited. With base64-line framing a turn
// arrives whole; with the default byte framing the same API breaks the WebSocket (a frame header is
// not text), and the host gets an error, not a hang. Batched writes cut the billed stdin writes.
// The conformance list over it: test/host/adapter-conformance.test.ts; its chaos lane: test/chaos/chaos.test.ts (live-hosted).
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBridgeHarness, type BridgeHarnessSettings } from '../../host/harness.ts';
import { Base64LineDecoder, encodeBase64Line } from '../../protocol/v1/relay-framing.ts';
import { fixtureAdapter } from '../fixtures/fixture-adapter.ts';
import { hostedExecSession, type HostedApiFigures } from '../fixtures/hosted-sandbox.ts';
import { createKit, runTurn, textOf, type Kit } from './session-helpers.ts';

let kit: Kit;
beforeAll(async () => {
  kit = await createKit('exec-hosted');
});
/** Every sandbox a test made: destroyed at the end, whose bridge a failed start (the bytes framing) left running too. */
const sandboxes: Array<{ destroy(): Promise<void> }> = [];
afterAll(async () => {
  await Promise.all(sandboxes.splice(0).map((sandbox) => sandbox.destroy().catch(() => undefined)));
  await kit.cleanup();
});

/** A session over the simulated hosted API with `settings`; its API figures. */
async function hostedSession(sessionId: string, settings: BridgeHarnessSettings) {
  const local = await kit.provider.createSession({ sessionId });
  sandboxes.push(local);
  const { session: sandbox, figures } = hostedExecSession(local);
  const workDir = join(local.defaultWorkingDirectory, 'work');
  await mkdir(workDir, { recursive: true });
  const session = await createBridgeHarness(fixtureAdapter(), { probeTimeoutMs: 3_000, ...settings }).doStart({ sessionId, sandboxSession: sandbox, sessionWorkDir: workDir });
  return { session, figures };
}

const lines = (prompt: string, n: number) => Array.from({ length: n }, (_, i) => `${prompt} #${i}\n`).join('');

describe('the exec transport over a hosted exec API', () => {
  it('base64 lines: a 300-line turn (non-ASCII text too) arrives whole and in order; batched writes make fewer stdin writes', { timeout: 120_000 }, async () => {
    const prompt = 'héllo ✓ LINES:300 INTERVAL:1';
    const runs: Array<{ batch: number; figures: HostedApiFigures }> = [];
    for (const batchWritesMs of [0, 5]) {
      const { session, figures } = await hostedSession(`b64-${batchWritesMs}`, { execTransport: { framing: 'base64-lines', batchWritesMs } });
      expect(textOf(await runTurn(session, prompt))).toBe(lines(prompt, 300));
      expect(textOf(await runTurn(session, 'next LINES:2'))).toBe(lines('next LINES:2', 2));
      await session.doDestroy();
      expect(figures.replacedChars, 'the API decoded nothing lossily: base64 is ASCII').toBe(0);
      runs.push({ batch: batchWritesMs, figures: { ...figures } });
    }
    const [plain, batched] = runs as [(typeof runs)[0], (typeof runs)[0]];
    console.log(
      `[figures] exec-hosted base64-lines turn=300 lines stdin-writes unbatched=${plain.figures.stdinWrites} batched(5ms)=${batched.figures.stdinWrites} ` +
        `stdin-bytes=${plain.figures.stdinBytes}/${batched.figures.stdinBytes} throttled=${plain.figures.throttled}/${batched.figures.throttled} output-chunks=${batched.figures.outputChunks}`,
    );
    expect(batched.figures.stdinWrites, 'batching joins the writes of a frame (and of frames close together)').toBeLessThan(plain.figures.stdinWrites);
  });

  it('bytes (the default) over the same API: the WebSocket breaks and the host says so, no hang', { timeout: 120_000 }, async () => {
    const attempt = hostedSession('bytes', { probeTimeoutMs: 1_500, channel: { reconnectDeadlineMs: 3_000 } }).then(async ({ session, figures }) => {
      try {
        await runTurn(session, 'big LINES:50');
        return { error: undefined, figures };
      } finally {
        await Promise.resolve(session.doDestroy()).catch(() => undefined);
      }
    });
    const outcome = await attempt.then(
      (result) => result,
      (error: unknown) => ({ error, figures: undefined }),
    );
    expect(outcome.error, 'a byte stream decoded as strings cannot carry the bridge').toBeInstanceOf(Error);
    console.log(`[figures] exec-hosted bytes-framing error="${String((outcome.error as Error).message).slice(0, 200)}"`);
  });
});

describe('base64-line framing', () => {
  it('decodes chunks split at any point, CRLF too; refuses what is not base64', () => {
    const chunks = [Buffer.from([0, 255, 126, 127, 128]), Buffer.from('héllo'), Buffer.alloc(0), Buffer.from(Array.from({ length: 1000 }, (_, i) => i % 256))];
    const wire = chunks.map((chunk) => encodeBase64Line(chunk)).join('');
    for (let cut = 0; cut <= wire.length; cut += 7) {
      const decoder = new Base64LineDecoder();
      const out = [...decoder.push(wire.slice(0, cut)), ...decoder.push(Buffer.from(wire.slice(cut), 'latin1'))];
      expect(Buffer.concat(out).equals(Buffer.concat(chunks)), `cut at ${cut}`).toBe(true);
      expect(decoder.partial).toBe(false);
    }
    expect(Buffer.concat(new Base64LineDecoder().push('aGk=\r\n'))).toEqual(Buffer.from('hi'));
    expect(() => new Base64LineDecoder().push('not base64!\n')).toThrow(/not a base64 line/);
    expect(() => new Base64LineDecoder().push('abc\n')).toThrow(/not a base64 line/);
  });
});
