// File I/O of a local sandbox session, per Experimental_SandboxSession: null
// for missing paths, rejection for directories where a file is expected,
// parent dirs created on write. Path policy (which paths are writable) is the
// caller's `guard`; processes live in process.ts.
import { createWriteStream } from 'node:fs';
import { lstat, mkdir, open, readdir, readFile, stat, unlink, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import type { SandboxSession } from '../../../protocol/harness-v1/index.ts';
import { errnoCode } from './errno.ts';

type PathOptions = { path: string; abortSignal?: AbortSignal };

/**
 * File methods a local session offers beyond the contract. @ai-sdk/provider-utils
 * 5.0.46 (what @ai-sdk/harness 1.0.x uses) declares none of them; later 5.0.x
 * releases declare these shapes, so a local session fits either.
 */
export interface LocalFileExtras {
  /** Follows symlinks; null for a missing path. */
  readonly stat: (options: PathOptions) => Promise<{ type: 'file' | 'directory' | 'other'; size: number } | null>;
  /** Null for a missing path; rejects (ENOTDIR) on a file. */
  readonly listDirectory: (options: PathOptions) => Promise<Array<{ name: string; type: 'file' | 'directory' | 'symlink' | 'other' }> | null>;
  /** True when removed, false when missing; rejects on a directory. A symlink is removed, not its target. */
  readonly deleteFile: (options: PathOptions) => Promise<boolean>;
}

type FileMethods = Pick<SandboxSession, 'readFile' | 'readBinaryFile' | 'readTextFile' | 'writeFile' | 'writeBinaryFile' | 'writeTextFile'> & LocalFileExtras;

/** Resolves a caller's path; for access 'write' the session may refuse paths outside its writable area. */
export type PathGuard = (path: string, access: 'read' | 'write') => string;

const missing = new Set(['ENOENT', 'ENOTDIR']);

async function orNull<T>(work: () => Promise<T>): Promise<T | null> {
  try {
    return await work();
  } catch (error) {
    if (missing.has(errnoCode(error) ?? '')) return null;
    throw error;
  }
}

function decode(bytes: Uint8Array, encoding: string | undefined): string {
  return new TextDecoder(encoding ?? 'utf-8').decode(bytes);
}

function encode(text: string, encoding: string | undefined): Uint8Array {
  const label = (encoding ?? 'utf-8').toLowerCase();
  if (label === 'utf-8' || label === 'utf8') return Buffer.from(text, 'utf8');
  if (Buffer.isEncoding(label)) return Buffer.from(text, label);
  throw new RangeError(`writeTextFile: unsupported encoding ${JSON.stringify(encoding)}`);
}

/** Lines keep their terminators so a full range round-trips byte for byte. */
function sliceLines(text: string, startLine: number | undefined, endLine: number | undefined): string {
  if (startLine === undefined && endLine === undefined) return text;
  const start = startLine ?? 1;
  if (!Number.isInteger(start) || start < 1) throw new RangeError(`readTextFile: startLine must be an integer >= 1, got ${start}`);
  if (endLine !== undefined && (!Number.isInteger(endLine) || endLine < 1)) {
    throw new RangeError(`readTextFile: endLine must be an integer >= 1, got ${endLine}`);
  }
  const lines = text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
  return lines.slice(start - 1, endLine ?? lines.length).join('');
}

async function prepareWrite(path: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
}

export function createFileMethods(guard: PathGuard): FileMethods {
  const readBinaryFile: FileMethods['readBinaryFile'] = async ({ path, abortSignal }) => {
    abortSignal?.throwIfAborted();
    const bytes = await orNull(() => readFile(guard(path, 'read'), { signal: abortSignal }));
    return bytes === null ? null : new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  };

  return {
    readFile: async ({ path, abortSignal }) => {
      abortSignal?.throwIfAborted();
      const handle = await orNull(() => open(guard(path, 'read'), 'r'));
      if (handle === null) return null;
      const info = await handle.stat();
      if (info.isDirectory()) {
        await handle.close();
        throw Object.assign(new Error(`EISDIR: illegal operation on a directory, read '${path}'`), { code: 'EISDIR' });
      }
      const nodeStream = handle.createReadStream({ signal: abortSignal });
      return Readable.toWeb(nodeStream) as unknown as ReadableStream<Uint8Array>;
    },

    readBinaryFile,

    readTextFile: async ({ path, encoding, startLine, endLine, abortSignal }) => {
      const bytes = await readBinaryFile({ path, abortSignal });
      return bytes === null ? null : sliceLines(decode(bytes, encoding), startLine, endLine);
    },

    writeFile: async ({ path, content, abortSignal }) => {
      abortSignal?.throwIfAborted();
      const target = guard(path, 'write');
      await prepareWrite(target);
      const source = Readable.fromWeb(content as unknown as NodeReadableStream<Uint8Array>);
      await pipeline(source, createWriteStream(target), { signal: abortSignal });
    },

    writeBinaryFile: async ({ path, content, abortSignal }) => {
      abortSignal?.throwIfAborted();
      const target = guard(path, 'write');
      await prepareWrite(target);
      await writeFile(target, content, { signal: abortSignal });
    },

    writeTextFile: async ({ path, content, encoding, abortSignal }) => {
      abortSignal?.throwIfAborted();
      const target = guard(path, 'write');
      const bytes = encode(content, encoding);
      await prepareWrite(target);
      await writeFile(target, bytes, { signal: abortSignal });
    },

    stat: async ({ path, abortSignal }) => {
      abortSignal?.throwIfAborted();
      const info = await orNull(() => stat(guard(path, 'read')));
      if (info === null) return null;
      return { type: info.isFile() ? 'file' : info.isDirectory() ? 'directory' : 'other', size: info.size };
    },

    listDirectory: async ({ path, abortSignal }) => {
      abortSignal?.throwIfAborted();
      const target = guard(path, 'read');
      const info = await orNull(() => stat(target));
      if (info === null) return null;
      // readdir on a non-directory rejects with ENOTDIR: that is the documented behaviour.
      const entries = await readdir(target, { withFileTypes: true });
      return entries.map((entry) => ({
        name: entry.name,
        type: entry.isSymbolicLink() ? 'symlink' : entry.isFile() ? 'file' : entry.isDirectory() ? 'directory' : 'other',
      }));
    },

    deleteFile: async ({ path, abortSignal }) => {
      abortSignal?.throwIfAborted();
      const target = guard(path, 'write');
      const info = await orNull(() => lstat(target));
      if (info === null) return false;
      if (info.isDirectory()) {
        throw Object.assign(new Error(`EISDIR: deleteFile on a directory '${path}'`), { code: 'EISDIR' });
      }
      await unlink(target);
      return true;
    },
  };
}
