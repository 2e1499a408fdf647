// The provider's base image, built offline from this machine's own files (no
// image registry is needed or reached): the Node binary the host runs on, a
// POSIX shell and the few tools the kit's commands use, each with the shared
// libraries `ldd` names, plus /etc/passwd with the CLI's user. Laid out in a
// staging dir, packed with tar and fed to `docker import`. Tagged by a hash of
// every path, mode and byte that goes in, so a rebuild happens exactly when
// the content changes and a second call is one `docker image inspect`.
// (docs/remote-providers.md#docker)
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { docker } from './docker-cli.ts';
import { DockerSandboxError } from './errors.ts';

export const baseImageRepository = 'harness-bridge-base';

/** Tools the kit's own commands and the conformance list run inside a sandbox; any the machine lacks are left out. */
const tools = [
  'sh', 'dash', 'cat', 'mkdir', 'chmod', 'chown', 'mv', 'rm', 'ls', 'ln', 'cp', 'sleep', 'cut', 'grep', 'env', 'id', 'head', 'tail',
  'sed', 'tr', 'wc', 'touch', 'true', 'false', 'kill', 'dirname', 'basename', 'stat', 'readlink', 'setsid', 'uname', 'date', 'sort',
  'find', 'xargs', 'printf', 'test', 'pwd', 'echo', 'tee', 'rmdir', 'mktemp',
];

const image = {
  env: 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
  workdir: '/work',
};

/** The files that go in: absolute path in the image → where it comes from (a host file) or a symlink target. */
type Entry = { kind: 'file'; from: string; mode: number } | { kind: 'link'; target: string };

function which(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '/usr/bin:/bin').split(':')) {
    const candidate = join(dir, name);
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

/** Shared libraries of an executable, as `ldd` lists them (absolute paths). */
function libraries(path: string): string[] {
  let text: string;
  try {
    text = execFileSync('ldd', [path], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return []; // static, or not an ELF (a script): nothing to add
  }
  return [...text.matchAll(/(\/\S+) \(0x/g)].map((match) => match[1]!);
}

/** Adds `path` (as the image sees it) and, when it is a symlink on the host, the file it resolves to. */
function add(entries: Map<string, Entry>, path: string): void {
  if (entries.has(path)) return;
  const real = realpathSync(path);
  if (real !== path) {
    entries.set(path, { kind: 'link', target: real });
    add(entries, real);
    return;
  }
  entries.set(path, { kind: 'file', from: path, mode: lstatSync(path).mode & 0o7777 });
}

/** What the base image holds, keyed by path. */
function baseEntries(nodePath: string, librariesOf: readonly string[] = []): Map<string, Entry> {
  const entries = new Map<string, Entry>();
  const executables = [nodePath, ...tools.map(which).filter((path): path is string => path !== undefined)];
  for (const executable of executables) {
    add(entries, executable);
    for (const library of libraries(realpathSync(executable))) add(entries, library);
  }
  // Executables bound in at run time (a CLI cache): only their libraries go in the image.
  for (const executable of librariesOf) for (const library of libraries(realpathSync(executable))) add(entries, library);
  // /bin/sh is what `sh -c` and #! lines name; the host's may be a link to dash or bash.
  if (!existsSync('/bin/sh')) throw new DockerSandboxError('docker-failed', 'no /bin/sh on this machine to put in the base image');
  add(entries, '/bin/sh');
  return entries;
}

const passwd = 'root:x:0:0:root:/root:/bin/sh\nharness-agent:x:999:999::/nonexistent:/bin/false\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n';
const group = 'root:x:0:\nharness-agent:x:999:\nnogroup:x:65534:\n';

/** The content hash the image is tagged with: every path, mode, link target and byte, plus the image config. */
function contentHash(entries: Map<string, Entry>): string {
  const hash = createHash('sha256');
  hash.update(`v1\0${image.env}\0${image.workdir}\0${passwd}\0${group}\0`);
  for (const path of [...entries.keys()].sort()) {
    const entry = entries.get(path)!;
    hash.update(`${path}\0`);
    if (entry.kind === 'link') hash.update(`link\0${entry.target}\0`);
    else hash.update(`file\0${entry.mode}\0`).update(readFileSync(entry.from)).update('\0');
  }
  return hash.digest('hex').slice(0, 32);
}

/** Per docker command and Node binary, within this host process: the files are hashed once (~100 MB of Node). */
const building = new Map<string, Promise<string>>();

/**
 * The base image's tag, built first when this machine does not have it yet.
 * `nodePath`: the Node binary to put in (default: the one running this host). `librariesOf`:
 * executables that are not put in (bound in at run time) whose shared libraries are.
 */
export function ensureBaseImage(dockerCommand: string, nodePath = process.execPath, librariesOf: readonly string[] = []): Promise<string> {
  const key = `${dockerCommand}\0${nodePath}\0${librariesOf.join('\0')}`;
  let pending = building.get(key);
  if (!pending) {
    pending = (async () => {
      const entries = baseEntries(nodePath, librariesOf);
      const tag = `${baseImageRepository}:${contentHash(entries)}`;
      if ((await docker(dockerCommand, ['image', 'inspect', '--format', '{{.Id}}', tag])).code === 0) return tag;
      await importRootfs(dockerCommand, entries, tag);
      return tag;
    })();
    building.set(key, pending);
    pending.catch(() => building.delete(key));
  }
  return pending;
}

async function importRootfs(dockerCommand: string, entries: Map<string, Entry>, tag: string): Promise<void> {
  const staging = mkdtempSync(join(tmpdir(), 'hb-docker-rootfs-'));
  try {
    for (const dir of ['tmp', 'work', 'root', 'etc', 'proc', 'sys', 'dev', 'run']) mkdirSync(join(staging, dir), { recursive: true });
    chmodSync(join(staging, 'tmp'), 0o1777);
    chmodSync(join(staging, 'root'), 0o700);
    writeFileSync(join(staging, 'etc/passwd'), passwd);
    writeFileSync(join(staging, 'etc/group'), group);
    for (const [path, entry] of [...entries].sort(([a], [b]) => a.length - b.length)) {
      const target = join(staging, path);
      if (existsSync(target)) continue; // reached through a link already placed (a merged /usr's /lib → usr/lib)
      mkdirSync(dirname(target), { recursive: true });
      if (entry.kind === 'link') symlinkSync(entry.target, target);
      else {
        copyFileSync(entry.from, target);
        chmodSync(target, entry.mode);
      }
    }
    await new Promise<void>((resolve, reject) => {
      const tar = spawn('tar', ['-C', staging, '--numeric-owner', '--owner=0', '--group=0', '-cf', '-', '.'], { stdio: ['ignore', 'pipe', 'pipe'] });
      const load = spawn(dockerCommand, ['import', '-c', `ENV ${image.env}`, '-c', `WORKDIR ${image.workdir}`, '-c', 'CMD ["sleep","infinity"]', '-', tag], { stdio: ['pipe', 'ignore', 'pipe'] });
      let stderr = '';
      tar.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      load.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      tar.stdout!.pipe(load.stdin!);
      tar.once('error', reject);
      load.once('error', reject);
      load.once('close', (code) =>
        code === 0 ? resolve() : reject(new DockerSandboxError('docker-failed', `docker import of the base rootfs exited ${code}: ${stderr.trim().slice(-2000)}`)),
      );
    });
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}
