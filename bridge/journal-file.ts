// Opening journal.ndjson: the private state dir, creating a file atomically,
// recovering an existing one (scan, then truncate the invalid tail). The
// running journal (appends, reads) is journal.ts.
import { randomUUID } from 'node:crypto';
import { chmod, close, fdatasync, fstat, ftruncate, mkdir, open, rename, stat, write } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { encodeHeaderLine, journalFormatVersion, linePrefixBytes } from './journal-format.ts';
import { scanJournal } from './journal-recovery.ts';
import { JOURNAL_LIMITS } from './limits.ts';

const openAsync = promisify(open);
const closeAsync = promisify(close);
const fstatAsync = promisify(fstat);
const ftruncateAsync = promisify(ftruncate);
const fdatasyncAsync = promisify(fdatasync);
const writeAsync = promisify(write);
const mkdirAsync = promisify(mkdir);
const chmodAsync = promisify(chmod);
const statAsync = promisify(stat);
const renameAsync = promisify(rename);

/** An open, recovered journal file, ready for appends at `fileBytes`. */
export type OpenedFile = { fd: number; journalId: string; lastSeq: number; fileBytes: number; index: number[] };

export type Recovered = { droppedBytes: number; droppedRecords: number };

/** The state dir exists and is 0700 (DESIGN D8). */
export async function ensurePrivateDir(dir: string): Promise<void> {
  await mkdirAsync(dir, { recursive: true, mode: 0o700 });
  const info = await statAsync(dir);
  if ((info.mode & 0o777) !== 0o700) await chmodAsync(dir, 0o700);
}

/** Opens `path`, creating it if missing; truncates an invalid tail (see journal.ts for what that means). */
export async function openJournalFile(path: string): Promise<{ file: OpenedFile; recovered: Recovered }> {
  let fd = await openExisting(path);
  if (fd === null) {
    await createFile(path);
    fd = await openAsync(path, 'r+');
  }
  try {
    const info = await fstatAsync(fd);
    if ((info.mode & 0o777) !== 0o600) await chmodAsync(path, 0o600);
    const scan = await scanJournal(fd, info.size, {
      indexEveryRecords: JOURNAL_LIMITS.indexEveryRecords,
      readChunkBytes: JOURNAL_LIMITS.maxReadChunkBytes,
      maxLineBytes: 3 * JOURNAL_LIMITS.maxRecordChars + linePrefixBytes + 1,
    });
    const recovered = { droppedBytes: scan.droppedBytes, droppedRecords: scan.droppedRecords };
    if (scan.header === null) {
      // Without a header there is no journalId to trust: start a new journal.
      await closeAsync(fd);
      await createFile(path);
      const fresh = await openJournalFile(path);
      return { file: fresh.file, recovered };
    }
    if (scan.header.format !== journalFormatVersion) {
      throw new Error(`journal ${path} has format ${scan.header.format}; this bridge reads format ${journalFormatVersion}`);
    }
    if (scan.droppedBytes > 0) {
      await ftruncateAsync(fd, scan.validBytes);
      // The cut must be on disk before new records land where the old tail was.
      await fdatasyncAsync(fd);
    }
    const file = { fd, journalId: scan.header.journalId, lastSeq: scan.lastSeq, fileBytes: scan.validBytes, index: scan.index };
    return { file, recovered };
  } catch (error) {
    await closeAsync(fd).catch(() => undefined); // already failing; the open error is the one to report
    throw error;
  }
}

async function openExisting(path: string): Promise<number | null> {
  try {
    return await openAsync(path, 'r+');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/** Writes a header-only journal to a temp file, fsyncs it and renames it into place (atomic: never a torn header). */
async function createFile(path: string): Promise<void> {
  const temp = `${path}.tmp`;
  const fd = await openAsync(temp, 'w', 0o600);
  try {
    const header = encodeHeaderLine(randomUUID(), Date.now());
    await writeAsync(fd, header, 0, header.length, 0);
    await fdatasyncAsync(fd);
  } finally {
    await closeAsync(fd);
  }
  await renameAsync(temp, path);
  await syncDir(join(path, '..'));
}

async function syncDir(dir: string): Promise<void> {
  const fd = await openAsync(dir, 'r');
  try {
    await fdatasyncAsync(fd);
  } catch (error) {
    // Some filesystems refuse fsync on a directory (EINVAL); the rename is then as durable as it gets.
    if ((error as NodeJS.ErrnoException).code !== 'EINVAL') throw error;
  } finally {
    await closeAsync(fd);
  }
}
