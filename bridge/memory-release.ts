// Gives the heap's garbage back to the system once the bridge's output goes quiet: V8's low-memory
// GC (two mark-compacts that release emptied pages and uncommit most of the young generation),
// asked for through an in-process inspector session, the only way Node offers (no port is opened).
// V8's own memory reducer does the same by itself, but only after ~8 s of low allocation.
// What it buys and costs: docs/bridge-internals.md#memory.
import type { Session } from 'node:inspector';
import { getHeapStatistics } from 'node:v8';

export type MemoryReleaseOptions = {
  /** A release waits until nothing touched it for this long (it runs between quietMs and 2×quietMs after the last touch). */
  quietMs: number;
  /** Never two releases closer than this, however bursty the output. */
  minIntervalMs: number;
  /** Only when the heap's resident bytes grew by at least this much since the last release: a trickle of output never pays for one. */
  minGainBytes: number;
  /** The heap's resident bytes (tests replace it). */
  heapBytes?: () => number;
};

const residentHeapBytes = (): number => getHeapStatistics().total_physical_size;

export class MemoryRelease {
  readonly #options: MemoryReleaseOptions;
  readonly #heapBytes: () => number;
  #session: Promise<Session | null> | null | undefined; // undefined: not opened yet; null: stopped
  #timer: NodeJS.Timeout | undefined;
  #active = false;
  #lastAt = -Infinity;
  #lastHeapBytes = 0;
  #releases = 0;

  constructor(options: MemoryReleaseOptions) {
    this.#options = options;
    this.#heapBytes = options.heapBytes ?? residentHeapBytes;
  }

  /** Releases asked for so far. */
  get releases(): number {
    return this.#releases;
  }

  /** Activity (a record, the start): a flag per call, and a timer only when none is armed. */
  touch(): void {
    this.#active = true;
    if (this.#timer === undefined && this.#session !== null) this.#arm(this.#options.quietMs);
  }

  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    void this.#session?.then((session) => session?.disconnect());
    this.#session = null;
  }

  #arm(ms: number): void {
    this.#timer = setTimeout(() => this.#tick(), ms);
    this.#timer.unref(); // never what keeps the bridge alive
  }

  #tick(): void {
    this.#timer = undefined;
    if (this.#active) {
      this.#active = false;
      this.#arm(this.#options.quietMs);
      return;
    }
    const wait = this.#lastAt + this.#options.minIntervalMs - Date.now();
    if (wait > 0) return this.#arm(wait);
    if (this.#heapBytes() < this.#lastHeapBytes + this.#options.minGainBytes) return; // the next touch re-arms
    if (this.#session === null) return;
    this.#lastAt = Date.now();
    this.#releases++;
    this.#session ??= openSession();
    void this.#session.then((session) =>
      // V8 runs it as a task on this thread; the callback comes after the collection.
      session?.post('HeapProfiler.collectGarbage', () => {
        this.#lastHeapBytes = this.#heapBytes();
      }),
    );
  }
}

/** Loaded on the first release; null in a Node built without the inspector (its module throws on load). */
async function openSession(): Promise<Session | null> {
  try {
    const { Session } = await import('node:inspector');
    const session = new Session();
    session.connect();
    return session;
  } catch {
    return null;
  }
}
