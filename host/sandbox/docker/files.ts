// File I/O of a Docker sandbox session, per Experimental_SandboxSession, through
// `docker exec` (cat out, cat in): null for a missing path, rejection for a
// directory where a file is expected, parent dirs created on write. Relative
// paths resolve against the session's working directory.
import { posix } from 'node:path';
import type { SandboxSession } from '../../../protocol/harness-v1/index.ts';
import { docker } from './docker-cli.ts';
import { DockerSandboxError } from './errors.ts';
import type { ContainerHost } from './process.ts';

type FileMethods = Pick<SandboxSession, 'readFile' | 'readBinaryFile' | 'readTextFile' | 'writeFile' | 'writeBinaryFile' | 'writeTextFile'>;

/** Exit code of the read script for a path that does not exist. */
const missingExit = 44;
const readScript = `[ -d "$0" ] && { echo "$0: is a directory" >&2; exit 21; }; [ -e "$0" ] || exit ${missingExit}; exec cat -- "$0"`;
const writeScript = 'mkdir -p -- "$(dirname -- "$0")" && cat > "$0"';

function sliceLines(text: string, startLine: number | undefined, endLine: number | undefined): string {
  if (startLine === undefined && endLine === undefined) return text;
  const start = startLine ?? 1;
  if (!Number.isInteger(start) || start < 1) throw new RangeError(`readTextFile: startLine must be an integer >= 1, got ${start}`);
  if (endLine !== undefined && (!Number.isInteger(endLine) || endLine < 1)) throw new RangeError(`readTextFile: endLine must be an integer >= 1, got ${endLine}`);
  const lines = text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
  return lines.slice(start - 1, endLine ?? lines.length).join('');
}

function encode(text: string, encoding: string | undefined): Uint8Array {
  const label = (encoding ?? 'utf-8').toLowerCase();
  if (label === 'utf-8' || label === 'utf8') return Buffer.from(text, 'utf8');
  if (Buffer.isEncoding(label)) return Buffer.from(text, label);
  throw new RangeError(`writeTextFile: unsupported encoding ${JSON.stringify(encoding)}`);
}

export function createFileMethods(host: ContainerHost): FileMethods {
  const absolute = (path: string) => posix.resolve(host.resolveCwd(undefined), path);

  const readBinaryFile: FileMethods['readBinaryFile'] = async ({ path, abortSignal }) => {
    abortSignal?.throwIfAborted();
    await host.ensureRunning();
    const target = absolute(path);
    const result = await docker(host.docker, ['exec', host.container, '/bin/sh', '-c', readScript, target], abortSignal ? { abortSignal } : {});
    if (result.code === missingExit) return null;
    if (result.code !== 0) throw new DockerSandboxError('docker-failed', `cannot read ${target}: ${result.stderr.trim() || `exit ${result.code}`}`);
    return new Uint8Array(result.stdout.buffer, result.stdout.byteOffset, result.stdout.byteLength);
  };

  const writeBinaryFile: FileMethods['writeBinaryFile'] = async ({ path, content, abortSignal }) => {
    abortSignal?.throwIfAborted();
    await host.ensureRunning();
    const target = absolute(path);
    const result = await docker(host.docker, ['exec', '-i', host.container, '/bin/sh', '-c', writeScript, target], { input: content, ...(abortSignal ? { abortSignal } : {}) });
    if (result.code !== 0) throw new DockerSandboxError('docker-failed', `cannot write ${target}: ${result.stderr.trim() || `exit ${result.code}`}`);
  };

  return {
    readBinaryFile,
    readFile: async (options) => {
      const bytes = await readBinaryFile(options);
      if (bytes === null) return null;
      return new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(bytes);
          controller.close();
        },
      });
    },
    readTextFile: async ({ encoding, startLine, endLine, ...options }) => {
      const bytes = await readBinaryFile(options);
      return bytes === null ? null : sliceLines(new TextDecoder(encoding ?? 'utf-8').decode(bytes), startLine, endLine);
    },
    writeBinaryFile,
    writeFile: async ({ content, ...options }) => {
      const bytes = new Uint8Array(await new Response(content).arrayBuffer());
      await writeBinaryFile({ ...options, content: bytes });
    },
    writeTextFile: async ({ content, encoding, ...options }) => writeBinaryFile({ ...options, content: encode(content, encoding) }),
  };
}
