// bridge/server/owner-watch.ts through the real bridge: a host tool call whose
// host went away is failed after the owner-less timeout (an error result the
// CLI reads, journaled like any answer), never while a host owns the stream.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { HostToolSpec } from '../../protocol/v1/index.ts';
import { connectClient, repoRoot, sleep, startBridge, tempDir, type RunningBridge } from './helpers.ts';

const echoTool: HostToolSpec = {
  name: 'echo_upper',
  description: 'Echo the text in upper case.',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
};
const mcpClient = join(repoRoot, 'test/fixtures/mcp-client.mjs');
const ownerlessToolMs = 300;

let dir: string;
let bridge: RunningBridge | null = null;
beforeEach(() => {
  dir = tempDir('hb-owner-watch-');
});
afterEach(async () => {
  await bridge?.kill();
  bridge = null;
  rmSync(dir, { recursive: true, force: true });
});

const launch = () => ({ argv: [process.execPath, mcpClient, '--call', 'echo_upper', '--args', '{"text":"x"}'], cwd: dir });

describe('owner-less host tool calls', () => {
  it('the host goes away while the CLI waits on a host tool: the call fails after the timeout and the turn ends', async () => {
    bridge = await startBridge({ env: { HARNESS_BRIDGE_OWNERLESS_TOOL_MS: String(ownerlessToolMs) } });
    const first = await connectClient(bridge);
    await first.client.attach(0);
    await first.client.request({ type: 'start', id: 's1', turnId: 't1', launch: launch(), tools: [echoTool] });
    await first.client.waitForRecord((r) => r.kind === 'tool-call');
    await first.client.close(); // the host is gone (a crash closes its socket the same way)
    // Attach only once the turn ended without us (probes never attach, so they own nothing).
    let polls = 0;
    for (;;) {
      const probe = await connectClient(bridge);
      await probe.client.close();
      if (probe.hello.turns.some((t) => t.turnId === 't1' && t.status !== 'running')) break;
      if (++polls > 2_000) throw new Error('the turn never ended');
      await sleep(50);
    }
    const second = await connectClient(bridge);
    await second.client.attach(0);
    await second.client.waitForRecord((r) => r.kind === 'turn-end');
    const records = second.client.records();
    const results = records.filter((r) => r.kind === 'tool-result');
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ data: { isError: true } });
    expect(JSON.stringify(results[0])).toMatch(/no host answered/);
    const called = records.some((r) => r.kind === 'stdout' && /"step":"tools\/call"/.test(r.data.text) && /no host answered/.test(r.data.text));
    expect(called, 'the CLI read the error result').toBe(true);
    await second.client.close();
    console.log(`[figures] ownerless-tool timeoutMs=${ownerlessToolMs} failed-calls=${results.length} turn-ended=1`);
  });

  it('while a host owns the stream the call waits, however long', async () => {
    bridge = await startBridge({ env: { HARNESS_BRIDGE_OWNERLESS_TOOL_MS: String(ownerlessToolMs) } });
    const { client } = await connectClient(bridge);
    await client.attach(0);
    await client.request({ type: 'start', id: 's1', turnId: 't1', launch: launch(), tools: [echoTool] });
    const call = await client.waitForRecord((r) => r.kind === 'tool-call');
    await sleep(ownerlessToolMs * 4);
    expect(client.records().filter((r) => r.kind === 'tool-result')).toEqual([]);
    if (call.kind !== 'tool-call') throw new Error('unreachable');
    await client.request({ type: 'tool-result', id: 'r1', callId: call.data.callId, output: 'X' });
    await client.waitForRecord((r) => r.kind === 'turn-end');
    expect(client.records().filter((r) => r.kind === 'tool-result')).toMatchObject([{ data: { isError: false } }]);
    await client.close();
  });
});
