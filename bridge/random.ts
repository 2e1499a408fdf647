// Random bytes for what runs before the ready line (bridgeId, journalId, a
// generated token) without loading node:crypto: importing it pulls ~20 of
// Node's internal modules (ciphers, keys, webcrypto, streams), a few ms of a
// cold start whose budget is Node's own start-up plus 40 %. The kernel's CSPRNG
// is read directly (/dev/urandom, the source node:crypto's randomBytes also
// ends in); where it is missing (a sandbox without /dev) the bytes come from
// node:crypto after all — main.ts awaits prepareRandom() first, which loads it then.
import { closeSync, openSync, readSync } from 'node:fs';

type Source = (target: Buffer) => void;

let fallback: Source | null = null;
/** Bytes read ahead from /dev/urandom (one open/read/close serves start-up's few ids), used once each. */
const poolBytes = 256;
let pool = Buffer.alloc(0);
let poolUsed = 0;

function fromUrandom(target: Buffer): boolean {
  let fd: number;
  try {
    fd = openSync('/dev/urandom', 'r');
  } catch {
    return false;
  }
  try {
    let done = 0;
    while (done < target.length) {
      const n = readSync(fd, target, done, target.length - done, null);
      if (n <= 0) return false;
      done += n;
    }
    return true;
  } catch {
    return false;
  } finally {
    closeSync(fd);
  }
}

/** Makes randomBytes work where /dev/urandom does not (loads node:crypto only then). */
export async function prepareRandom(): Promise<void> {
  if (fallback !== null || refill()) return;
  const { randomFillSync } = await import('node:crypto');
  fallback = (target) => randomFillSync(target);
}

function refill(): boolean {
  const next = Buffer.allocUnsafe(poolBytes);
  if (!fromUrandom(next)) return false;
  pool = next;
  poolUsed = 0;
  return true;
}

/** `n` bytes from the kernel's CSPRNG. */
export function randomBytes(n: number): Buffer {
  const bytes = Buffer.allocUnsafe(n);
  if (n <= poolBytes && (poolUsed + n <= pool.length || refill())) {
    pool.copy(bytes, 0, poolUsed, poolUsed + n);
    pool.fill(0, poolUsed, poolUsed + n); // handed out once; not left in memory
    poolUsed += n;
    return bytes;
  }
  if (fromUrandom(bytes)) return bytes;
  if (fallback === null) {
    const web = (globalThis as { crypto?: { getRandomValues?: (a: Uint8Array) => Uint8Array } }).crypto;
    if (typeof web?.getRandomValues !== 'function') throw new Error('no random source: /dev/urandom is unreadable and prepareRandom() was not awaited');
    fallback = (target) => void web.getRandomValues!(target);
  }
  fallback(bytes);
  return bytes;
}

/** A version 4 UUID (RFC 9562), like crypto.randomUUID(). */
export function randomUUID(): string {
  const b = randomBytes(16);
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
