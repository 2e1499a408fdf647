// Opening journal.ndjson: the private state dir, creating a file atomically,
// recovering an existing one (scan, then truncate the invalid tail). The
// running journal (appends, reads) is journal.ts.
import {
  chmod,
  chmodSync,
  close,
  closeSync,
  existsSync,
  fdatasync,
  fstat,
  ftruncate,
  mkdirSync,
  open,
  openSync,
  readSync,
  renameSync,
  statSync,
  writeSync,
} from 'node:fs';
import { promisify } from 'node:util';
import { decodeHeaderLine, encodeHeaderLine, journalFormatVersion, linePrefixBytes } from '../../protocol/journal/line-format.ts';
import { scanJournal } from './recovery-scan.ts';
import { randomUUID } from '../random.ts';
import { JOURNAL_LIMITS } from '../limits.ts';

const closeAsync = promisify(close);
const fstatAsync = promisify(fstat);
const ftruncateAsync = promisify(ftruncate);
const fdatasyncAsync = promisify(fdatasync);
const chmodAsync = promisify(chmod);

/**
 * An open, recovered journal file, ready for appends at `fileBytes`.
 * `created`: the file was just created and neither its header nor its
 * directory entry is fsynced yet — the journal's first fdatasync must also
 * fsync the state dir (see createFile).
 */
export type OpenedFile = { fd: number; journalId: string; lastSeq: number; fileBytes: number; index: number[]; created: boolean };

export type Recovered = { droppedBytes: number; droppedRecords: number };

/**
 * The state dir exists, and only its owner may list or write it (docs/design.md#d8): 0700, or 0711
 * when a bridge's CLI has a uid of its own and passes through to its areas (docs/security.md) — a
 * second bridge refused by the lock must not take that away from the live one's CLI. Synchronous:
 * it runs before the ready line, where a thread-pool round trip costs more than the syscall.
 */
export function ensurePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const mode = statSync(dir).mode & 0o777;
  if ((mode & 0o700) !== 0o700 || (mode & 0o066) !== 0) chmodSync(dir, 0o700 | (mode & 0o011));
}

/** Opens `path`, creating it if missing; truncates an invalid tail (see journal.ts for what that means). */
export async function openJournalFile(path: string): Promise<{ file: OpenedFile; recovered: Recovered }> {
  const fd = openExisting(path);
  if (fd === null) return { file: createFile(path), recovered: { droppedBytes: 0, droppedRecords: 0 } };
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
      return { file: createFile(path), recovered };
    }
    if (scan.header.format !== journalFormatVersion) {
      throw new Error(`journal ${path} has format ${scan.header.format}; this bridge reads format ${journalFormatVersion}`);
    }
    if (scan.droppedBytes > 0) {
      await ftruncateAsync(fd, scan.validBytes);
      // The cut must be on disk before new records land where the old tail was.
      await fdatasyncAsync(fd);
    }
    const file = { fd, journalId: scan.header.journalId, lastSeq: scan.lastSeq, fileBytes: scan.validBytes, index: scan.index, created: false };
    return { file, recovered };
  } catch (error) {
    await closeAsync(fd).catch(() => undefined); // already failing; the open error is the one to report
    throw error;
  }
}

function openExisting(path: string): number | null {
  // A fresh state dir is the common start: check first, rather than pay for an ENOENT error object.
  if (!existsSync(path)) return null;
  try {
    return openSync(path, 'r+');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/**
 * Writes a header-only journal to a temp file and renames it into place
 * (atomic: a reader never sees a half-written header), then opens it for
 * appends. Synchronous and without fsync, because it runs before the ready
 * line: the fsyncs of the header and of the state dir's entry happen with the
 * journal's first fdatasync (journal.ts `created`; main.ts runs sync() right
 * after the ready line and attaches the server only once it returned). No
 * host can see a record before that. A power loss before it can leave an
 * empty or torn header, which the next open reads as "no header": a fresh
 * journal with a new journalId, which is what this one was.
 */
function createFile(path: string): OpenedFile {
  const temp = `${path}.tmp`;
  const journalId = randomUUID();
  const header = encodeHeaderLine(journalId, Date.now());
  const fd = openSync(temp, 'w+', 0o600); // the same open file description serves the appends after the rename
  try {
    writeSync(fd, header, 0, header.length, 0);
    renameSync(temp, path);
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  return { fd, journalId, lastSeq: 0, fileBytes: header.length, index: [], created: true };
}

/**
 * A new journal id in the file's header, in place (issue: a journal found behind, docs/design.md#d5):
 * the records keep their seqs and offsets, and from now on (new id, seq) names them, so no record
 * written from here on shares a (journal id, seq) with one of the lost ones. The header keeps its
 * length (a UUID for a UUID, the same createdAt), so one positional write replaces it; fdatasync'ed
 * before it returns. A torn write reads as "no header" at the next open: a fresh journal, a new
 * identity either way.
 */
export async function rewriteJournalId(fd: number): Promise<string> {
  const head = Buffer.alloc(4096);
  const read = readSync(fd, head, 0, head.length, 0);
  const end = head.subarray(0, read).indexOf(0x0a);
  const header = end < 0 ? null : decodeHeaderLine(head, 0, end);
  if (header === null) throw new Error('the journal has no readable header to give a new id');
  const journalId = randomUUID();
  const line = encodeHeaderLine(journalId, header.createdAt);
  if (line.length !== end + 1) throw new Error(`a new header would be ${line.length} bytes, not ${end + 1}`);
  writeSync(fd, line, 0, line.length, 0);
  await fdatasyncAsync(fd);
  return journalId;
}

/** fsyncs a directory (a file's entry in it); filesystems that refuse (EINVAL) make the rename as durable as it gets. */
export function syncDir(dir: string, done: (error: Error | null) => void): void {
  open(dir, 'r', (openError, fd) => {
    if (openError) return done(openError);
    fdatasync(fd, (syncError) => {
      close(fd, (closeError) => {
        const error = syncError && (syncError as NodeJS.ErrnoException).code !== 'EINVAL' ? syncError : closeError;
        done(error ?? null);
      });
    });
  });
}
