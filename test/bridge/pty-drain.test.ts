// drainBeforeDestroy: what a pty still holds when node-pty destroys its socket (200 ms
// after the CLI exits) is read and delivered, not dropped. The pty's socket is paused at
// once, so nothing is read the usual way: without the drain every byte the CLI wrote is lost.
// 3,000 bytes: less than the kernel holds for a pty, so the CLI is never blocked writing and
// exits whether or not the stream read ahead into its buffer before the pause (both are drained).
import * as pty from 'node-pty';
import { describe, expect, it } from 'vitest';
import { drainBeforeDestroy } from '../../bridge/supervisor/pty-drain.ts';

// No newline in the output: a pty turns '\n' into '\r\n', and the count would depend on it.
const script = (bytes: number) => `printf '%${bytes}s' '' | tr ' ' x; printf END`;

async function runPaused(bytes: number, encoding: 'utf8' | null, drain: boolean): Promise<string> {
  const term = pty.spawn('sh', ['-c', script(bytes)], { name: 'xterm', cols: 80, rows: 24, encoding });
  const got: string[] = [];
  const take = (data: string | Buffer) => got.push(typeof data === 'string' ? data : data.toString('latin1'));
  term.onData(take);
  if (drain) drainBeforeDestroy(term, encoding, take);
  term.pause(); // the stream reads nothing more: the CLI's bytes wait in the stream's buffer and the kernel
  // node-pty reports the exit after the socket's close: here, after its destroy 200 ms past the exit.
  await new Promise<void>((resolve) => term.onExit(() => resolve()));
  return got.join('');
}

describe('pty drain before node-pty destroys the socket', () => {
  for (const encoding of ['utf8', null] as const) {
    it(`delivers every byte a paused pty held when its CLI exited (encoding ${encoding ?? 'bytes'})`, { timeout: 30_000 }, async () => {
      const text = await runPaused(3_000, encoding, true);
      expect(text).toBe(`${'x'.repeat(3_000)}END`);
    });
  }

  it('without it, node-pty drops what the paused pty held (what the drain is for)', { timeout: 30_000 }, async () => {
    const text = await runPaused(3_000, 'utf8', false);
    expect(text.endsWith('END'), 'the last bytes were lost without the drain').toBe(false);
  });
});
