// The responder: requests a CLI sends to its host over stdout (JSON-RPC CLIs such as ACP agents:
// session/request_permission, fs/read_text_file, fs/write_text_file) and the answers the kit writes
// to its stdin (docs/writing-an-adapter.md#responder). An adapter says which records are requests,
// which stdin records answer them and how to answer; the kit runs it for the records of the
// running turn, once caught up with the journal, and only for requests no journaled stdin record
// answers yet, so a replay or a resumed host answers nothing twice and a rerun answers its own
// turn's requests again. The answers themselves are journaled (stdin), hence replayed as given.
import type { SandboxSession } from '../../protocol/harness-v1/sandbox.ts';
import type { HarnessV1PermissionMode } from '../../protocol/harness-v1/session.ts';
import type { JournalRecord } from '../../protocol/v1/journal-record.ts';

/** A request of the CLI to its host; `key` identifies it within the session (a JSON-RPC id). */
export type CliRequest = {
  readonly key: string;
  readonly method: string;
  readonly params: unknown;
};

/** What an answer may use: the session's permission mode and the project dir's files, confined to it. */
export type ResponderIo = {
  readonly permissionMode: HarnessV1PermissionMode;
  /** The sandbox project dir (the CLI's cwd): fs requests are confined to it. */
  readonly projectDir: string;
  /** Reads a text file inside projectDir; rejects a path outside it (symlinks resolved first), and a missing file with FileNotFoundError. */
  readTextFile(path: string): Promise<string>;
  /** Writes a text file inside projectDir (parents created); rejects a path outside it (symlinks resolved first). */
  writeTextFile(path: string, content: string): Promise<void>;
};

export type Responder = {
  /** The request a record (a whole stdout line) carries, if any. */
  request(record: JournalRecord): CliRequest | undefined;
  /** The key of the request a stdin record answers, if any. */
  answered(record: JournalRecord): string | undefined;
  /**
   * The stdin text that answers `request`, or undefined when the responder leaves it to the host
   * (an approval the translator turned into a `tool-approval-request`, answered by encodeApproval).
   * Must not throw for a refusal: answer with the CLI's own error shape (a JSON-RPC error).
   */
  answer(request: CliRequest, io: ResponderIo): Promise<string | undefined>;
};

/** A path refused by the confinement: outside the project dir, or relative. */
export class ConfinementError extends Error {
  constructor(path: string, projectDir: string) {
    super(`${path} is outside the project dir ${projectDir}`);
    this.name = 'ConfinementError';
  }
}

/** A read of a file that does not exist (inside the project dir): a protocol answers it with its own not-found error. */
export class FileNotFoundError extends Error {
  constructor(readonly path: string) {
    super(`${path}: no such file`);
    this.name = 'FileNotFoundError';
  }
}

/** The largest file content an fs answer carries (it travels as one stdin line and one journal record). */
export const maxResponderFileChars = 4 * 1024 * 1024;

/**
 * ResponderIo over the sandbox's own surface: the path is resolved inside the sandbox
 * (`realpath -m`, every symlink followed, missing tails allowed) and must stay under the
 * resolved project dir; the file is then read or written at the resolved path. The sandbox user
 * (root for the local provider) does the I/O, so the check is what keeps the CLI's request in
 * its project dir. A symlink swapped in between check and write can still race it
 * (docs/security.md#responder).
 */
export function sandboxResponderIo(sandbox: SandboxSession, projectDir: string, permissionMode: HarnessV1PermissionMode): ResponderIo {
  const resolve = async (path: string): Promise<string> => {
    if (!path.startsWith('/')) throw new ConfinementError(path, projectDir);
    const script = 'root=$(realpath -m -- "$HB_ROOT") && p=$(realpath -m -- "$HB_PATH") && case "$p" in "$root"/*) printf %s "$p";; *) exit 3;; esac';
    const result = await sandbox.run({ command: script, env: { HB_ROOT: projectDir, HB_PATH: path } });
    if (result.exitCode !== 0 || result.stdout === '') throw new ConfinementError(path, projectDir);
    return result.stdout;
  };
  return {
    permissionMode,
    projectDir,
    readTextFile: async (path) => {
      const real = await resolve(path);
      const content = await sandbox.readTextFile({ path: real });
      if (content === null || content === undefined) throw new FileNotFoundError(path);
      if (content.length > maxResponderFileChars) throw new Error(`${path}: over ${maxResponderFileChars} characters`);
      return content;
    },
    writeTextFile: async (path, content) => {
      if (content.length > maxResponderFileChars) throw new Error(`${path}: over ${maxResponderFileChars} characters`);
      const real = await resolve(path);
      await sandbox.writeTextFile({ path: real, content });
      // The sandbox user wrote it; the file belongs to whoever owns the project dir (the CLI's uid under the jail).
      await sandbox.run({ command: 'chown --reference="$HB_ROOT" -- "$HB_PATH" 2>/dev/null; true', env: { HB_ROOT: projectDir, HB_PATH: real } });
    },
  };
}

/**
 * Responder parts for a JSON-RPC CLI: a stdout line with `method` and `id` is a request (key
 * `rpc:<id as JSON>`), a stdin line with `id` and `result` or `error` answers one.
 */
export const jsonRpc = {
  request(record: JournalRecord): CliRequest | undefined {
    if (record.kind !== 'stdout' || record.data.cont === true) return undefined;
    const line = parse(record.data.text);
    if (!line || typeof line.method !== 'string' || (typeof line.id !== 'string' && typeof line.id !== 'number')) return undefined;
    return { key: `rpc:${JSON.stringify(line.id)}`, method: line.method, params: line.params };
  },
  answered(record: JournalRecord): string | undefined {
    if (record.kind !== 'stdin') return undefined;
    for (const text of record.data.text.split('\n')) {
      const line = parse(text);
      if (line && line.method === undefined && (typeof line.id === 'string' || typeof line.id === 'number') && ('result' in line || 'error' in line)) return `rpc:${JSON.stringify(line.id)}`;
    }
    return undefined;
  },
  /** The answer line for request `key` (`rpc:<id>`). */
  result(key: string, result: unknown): string {
    return `${JSON.stringify({ jsonrpc: '2.0', id: rpcId(key), result })}\n`;
  },
  error(key: string, code: number, message: string): string {
    return `${JSON.stringify({ jsonrpc: '2.0', id: rpcId(key), error: { code, message } })}\n`;
  },
};

function rpcId(key: string): string | number {
  return JSON.parse(key.slice('rpc:'.length)) as string | number;
}

function parse(text: string): Record<string, unknown> | undefined {
  if (!text.startsWith('{')) return undefined;
  try {
    const value = JSON.parse(text) as unknown;
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
