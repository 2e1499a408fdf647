// A host process for test/chaos/memory.test.ts: one BridgeChannel that
// starts a turn and consumes it slowly (async onRecords with a delay per
// batch), so its peak RSS is measured alone (VmHWM of this process).
// argv: url token launchJson delayMs. Prints one JSON line per ~5% progress and a final one.
// Like an embedding app may, it opts in to limitYoungGeneration() (host/memory.ts)
// first; HB_MEMORY_HOST_YOUNG_GEN=grow leaves V8's default young-generation growth.
import { readFileSync } from 'node:fs';
import { getHeapSpaceStatistics } from 'node:v8';
import { limitYoungGeneration } from '../../host/memory.ts';
import { createBridgeChannel } from '../../host/channel/index.ts';
import type { LaunchSpecInput } from '../../protocol/v1/index.ts';

if (process.env.HB_MEMORY_HOST_YOUNG_GEN !== 'grow') limitYoungGeneration();
const [url, token, launchJson, delayArg] = process.argv.slice(2);
const delayMs = Number(delayArg ?? 1);
const launch = JSON.parse(launchJson!) as LaunchSpecInput;
const hwmKiB = (): number => Number(/VmHWM:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0);

const memoryMiB = (): Record<string, number> =>
  Object.fromEntries(Object.entries(process.memoryUsage()).map(([k, v]) => [k, Math.round((v / 1048576) * 10) / 10]));

// HB_MEMORY_TRACE=1: sample every 5 ms and print, on exit to stderr, the breakdown at the highest RSS seen
// (process.memoryUsage plus V8's heap spaces in MiB): tells a young-generation spike from old-space garbage
// from external buffers.
let peak: Record<string, unknown> = { rss: 0 };
if (process.env.HB_MEMORY_TRACE) {
  setInterval(() => {
    const now = memoryMiB();
    if ((now.rss ?? 0) <= (peak.rss as number)) return;
    const spaces = Object.fromEntries(getHeapSpaceStatistics().map((s) => [s.space_name, Math.round(s.space_size / 104857.6) / 10]));
    peak = { ...now, lines, spaces };
  }, 5).unref();
  process.on('exit', () => process.stderr.write(`${JSON.stringify({ peak })}\n`));
}

let records = 0;
let lines = 0;
let lastLine = -1;
let outOfOrder = 0;
let ended = false;
let batches = 0;
let done!: () => void;
const finished = new Promise<void>((resolve) => (done = resolve));
const channel = createBridgeChannel({
  url: url!,
  token: token!,
  cursor: 0,
  ...(process.env.HB_MEMORY_INBOUND_FRAMES ? { maxInboundQueuedFrames: Number(process.env.HB_MEMORY_INBOUND_FRAMES) } : {}),
  ...(process.env.HB_MEMORY_INBOUND_BYTES ? { maxInboundQueuedBytes: Number(process.env.HB_MEMORY_INBOUND_BYTES) } : {}),
  onRecords: async (batch) => {
    batches++;
    for (const record of batch) {
      records++;
      if (record.turnId === 'mem' && record.kind === 'stdout' && record.data.text.startsWith('{"type":"line"')) {
        const n = (JSON.parse(record.data.text) as { n: number }).n;
        if (n !== lastLine + 1) outOfOrder++;
        lastLine = n;
        lines++;
      }
      if (record.turnId === 'mem' && record.kind === 'turn-end') ended = true;
    }
    if (batches % 200 === 0) process.stdout.write(`${JSON.stringify({ progress: lines, hwmKiB: hwmKiB(), ...memoryMiB() })}\n`);
    await new Promise((resolve) => setTimeout(resolve, delayMs)); // the slow consumer
    if (ended) done();
  },
});
await channel.whenLive();
await channel.request({ type: 'start', turnId: 'mem', launch });
await finished;
process.stdout.write(`${JSON.stringify({ done: true, records, lines, outOfOrder, batches, hwmKiB: hwmKiB(), ...memoryMiB() })}\n`);
await channel.close();
process.exit(0);
