// A spawn's environment for `docker exec`, kept off the docker client's command
// line: argv is in every host user's `ps` for the life of the client, and a
// bridge's exec lives as long as the bridge (secrets such as the bridge token
// pass here). Each value reaches the container one of two ways:
// - through an env file the client reads from its fd 3 (`--env-file
//   /dev/fd/3`): written 0600 under the temp dir and unlinked before the client
//   starts, so only the open descriptor holds it. The file's format is one
//   `KEY=VALUE` per line, so a value with a line break cannot go there;
// - otherwise by name (`-e KEY`): the client copies the value from its own
//   environment, which only its user can read (/proc/<pid>/environ). A name the
//   docker client or its Go runtime reads itself (DOCKER_HOST, HOME, PATH,
//   GODEBUG…) would change how the client runs, so such a one is refused.
import { randomUUID } from 'node:crypto';
import { closeSync, openSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DockerSandboxError } from './errors.ts';

/** Names the docker client or the Go runtime read from their own environment. */
const clientReads = /^(DOCKER_|GO|OTEL_|SSH_|XDG_)|^(HOME|PATH|TMPDIR)$|_PROXY$/i;
/** What the env file's parser reads back unchanged: a name with no blank, `#` or `=`, a value with no line break. */
const fileSafeName = /^[^\s#=][^\s=]*$/;
const lineBreak = /[\r\n]/;

export type ExecEnv = {
  /** `docker exec` options: `--env-file /dev/fd/3` and `-e KEY` for each value that goes by name. */
  readonly args: string[];
  /** The env file's descriptor, for the client's fd 3 (undefined when no value goes that way). */
  readonly fd?: number;
  /** The client's environment: this process's, plus the values that go by name (undefined when none does). */
  readonly clientEnv?: NodeJS.ProcessEnv;
  /** Closes this process's descriptor once the client has its own copy (after the spawn). */
  release(): void;
};

export function execEnv(env: Record<string, string> | undefined): ExecEnv {
  const lines: string[] = [];
  const byName: Record<string, string> = {};
  for (const [key, value] of Object.entries(env ?? {})) {
    if (key === '' || key.includes('=') || key.includes('\0') || value.includes('\0')) {
      throw new DockerSandboxError('invalid-option', `not an environment variable: ${JSON.stringify(key)} (a name is non-empty without "=", and neither name nor value holds a NUL)`);
    }
    if (fileSafeName.test(key) && !lineBreak.test(value)) {
      lines.push(`${key}=${value}\n`);
      continue;
    }
    if (clientReads.test(key)) {
      throw new DockerSandboxError('invalid-option', `the environment variable ${JSON.stringify(key)} cannot reach a Docker sandbox: its value has a line break, and the docker client reads that name itself`);
    }
    byName[key] = value;
  }
  const args: string[] = [];
  let fd: number | undefined;
  if (lines.length > 0) {
    const path = join(tmpdir(), `hb-docker-env-${randomUUID()}`);
    try {
      fd = openSync(path, 'wx', 0o600);
      unlinkSync(path);
      writeSync(fd, lines.join(''));
    } catch (error) {
      if (fd !== undefined) closeSync(fd);
      throw new DockerSandboxError('docker-failed', `could not write the env file docker exec reads (${path}): ${(error as Error).message}`, { cause: error });
    }
    args.push('--env-file', '/dev/fd/3');
  }
  const names = Object.keys(byName);
  for (const key of names) args.push('-e', key);
  let released = false;
  return {
    args,
    fd,
    clientEnv: names.length > 0 ? { ...process.env, ...byName } : undefined,
    release() {
      if (released || fd === undefined) return;
      released = true;
      closeSync(fd);
    },
  };
}
