// bridge/memory-release.ts: when the bridge asks V8 for its low-memory GC (scheduling on fake
// timers, releases counted), and that a release really runs V8's mark-compacts (gc entries counted).
import { PerformanceObserver, constants, type PerformanceEntry } from 'node:perf_hooks';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryRelease } from '../../bridge/memory-release.ts';

const quietMs = 200;
const MiB = 1024 * 1024;

describe('MemoryRelease scheduling', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('releases once the output has been quiet, never while it keeps coming', async () => {
    vi.useFakeTimers();
    let heap = 10 * MiB;
    const memory = new MemoryRelease({ quietMs, minIntervalMs: 1000, minGainBytes: MiB, heapBytes: () => heap });
    for (let i = 0; i < 40; i++) {
      memory.touch();
      await vi.advanceTimersByTimeAsync(quietMs / 2);
    }
    expect(memory.releases).toBe(0);
    await vi.advanceTimersByTimeAsync(2 * quietMs);
    expect(memory.releases).toBe(1);
    await vi.advanceTimersByTimeAsync(10 * quietMs);
    expect(memory.releases).toBe(1); // nothing touched it since
    heap += 2 * MiB;
    memory.touch();
    await vi.advanceTimersByTimeAsync(10 * quietMs);
    expect(memory.releases).toBe(2);
    memory.stop();
  });

  it('keeps minIntervalMs between releases and waits for minGainBytes of heap growth', async () => {
    vi.useFakeTimers();
    let heap = 10 * MiB;
    const reads = counted(() => heap);
    const memory = new MemoryRelease({ quietMs, minIntervalMs: 5000, minGainBytes: MiB, heapBytes: reads.read });
    memory.touch();
    await vi.advanceTimersByTimeAsync(2 * quietMs);
    expect(memory.releases).toBe(1);
    await vi.waitFor(() => expect(reads.count).toBe(2)); // the gate's read, then the release's callback's
    // Grown, quiet again, but within minIntervalMs of the last release: held until the interval is over.
    heap += 2 * MiB;
    memory.touch();
    await vi.advanceTimersByTimeAsync(4 * quietMs);
    expect(memory.releases).toBe(1);
    await vi.advanceTimersByTimeAsync(5000);
    expect(memory.releases).toBe(2);
    memory.stop();
  });

  it('does not release when the heap has not grown by minGainBytes since the last release', async () => {
    vi.useFakeTimers();
    const reads = counted(() => 10 * MiB);
    const memory = new MemoryRelease({ quietMs, minIntervalMs: 0, minGainBytes: MiB, heapBytes: reads.read });
    memory.touch();
    await vi.advanceTimersByTimeAsync(2 * quietMs);
    expect(memory.releases).toBe(1);
    await vi.waitFor(() => expect(reads.count).toBe(2));
    for (let i = 0; i < 5; i++) {
      memory.touch();
      await vi.advanceTimersByTimeAsync(3 * quietMs);
    }
    expect(memory.releases).toBe(1);
    memory.stop();
  });

  it('never releases once stopped', async () => {
    vi.useFakeTimers();
    const memory = new MemoryRelease({ quietMs, minIntervalMs: 0, minGainBytes: 0, heapBytes: () => 10 * MiB });
    memory.touch();
    memory.stop();
    memory.touch();
    await vi.advanceTimersByTimeAsync(10 * quietMs);
    expect(memory.releases).toBe(0);
  });
});

describe('MemoryRelease on a real heap', () => {
  it("runs V8's low-memory GC: mark-compacts once quiet", async () => {
    const majors: number[] = [];
    const observer = new PerformanceObserver((list) => {
      for (const entry of list.getEntries() as (PerformanceEntry & { detail?: { kind?: number } })[]) {
        if (entry.detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) majors.push(entry.startTime);
      }
    });
    observer.observe({ entryTypes: ['gc'] });
    const memory = new MemoryRelease({ quietMs: 10, minIntervalMs: 0, minGainBytes: 0 });
    try {
      memory.touch();
      // Its two mark-compacts (V8's minimum for a low-memory GC); the time budget is only a hang guard.
      await vi.waitFor(() => expect(majors.length).toBeGreaterThanOrEqual(2), { timeout: 10_000, interval: 20 });
      expect(memory.releases).toBe(1);
    } finally {
      memory.stop();
      observer.disconnect();
    }
  });
});

/** A heapBytes stub that counts its reads: the release's callback reads once its GC is done. */
function counted(value: () => number): { read: () => number; readonly count: number } {
  let count = 0;
  return {
    read: () => {
      count++;
      return value();
    },
    get count() {
      return count;
    },
  };
}
