// The jail helper: sandbox-runtime used as a library, once per bridge. Starting srt's CLI for every
// CLI spawn costs a Node start and srt's whole module graph and set-up (1–2 s on a loaded 2-core
// machine); the helper pays that once, during the bridge's start (srt.ts), and then turns each launch into the bubblewrap
// command line srt would run (SandboxManager.wrapWithSandbox) in milliseconds. It is the same
// bridge file in another mode (`--jail-helper SRT_INDEX`, like the keeper), run as the CLI's uid so
// that srt's relays and files are the CLI's, and it lives as long as the bridge: the command lines
// it hands out point at its relays, except a kept CLI's (launch `survive`), whose relay is its keeper's
// socket (`kept`): a helper that goes while such a CLI runs leaves srt's mount points in place
// (jail-helper-main.ts). Protocol: JSON lines on stdin/stdout.
//   bridge → helper  {"t":"init","config":…,"credentials"?:{uid,gid}}  {"t":"wrap","id":n,"command":…,"filesystem":…,"cwd"?:…,"kept"?:…}
//                    {"t":"forget","kept":…} (that kept CLI ended)  {"t":"cleanup"}
//   helper → bridge  {"t":"ready","srt":"bundle"|"installed","ms":{…},"note"?:…}  {"t":"wrapped","id":n,"command":…}  {"t":"error","id"?:n,"message":…}
// The helper's own side is jail-helper-main.ts (reached from stage 1, so it imports lazily).
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Credentials } from './cli-jail.ts';
import { endJailHelper, spawnJailHelper } from './early-helper.ts';

export type JailHelperStartMs = { start: number; load: number; initialize: number };

export type JailHelperReply =
  /**
   * `srt`: where sandbox-runtime came from (srt-bundle.ts); `note`: why not the bundle, when one was there. `ms`: the
   * helper's start (Node's and the bridge file's), srt's load, and srt's initialize (from the init message on).
   */
  | { t: 'ready'; srt: 'bundle' | 'installed'; ms: JailHelperStartMs; note?: string }
  | { t: 'wrapped'; id: number; command: string } | { t: 'error'; id?: number; message: string };

/** Bridge side: one helper process, started once; `wrap` resolves the command line for one launch. */
export class JailHelper {
  readonly #child: ChildProcess;
  readonly #pending = new Map<number, { resolve: (command: string) => void; reject: (error: Error) => void }>();
  readonly ready: Promise<void>;
  /** Resolves once the helper process has exited. */
  readonly exited: Promise<void>;
  #next = 0;
  #failed: Error | null = null;
  #exited = false;
  #wasReady = false;
  #killed = false;
  #srt: { from: 'bundle' | 'installed'; ms: JailHelperStartMs; note?: string } | undefined;
  /** Jailed processes still running: srt's clean-up (its mount-point files) waits until none is. */
  #active = 0;

  #initialized = false;

  /**
   * `config`: srt's (SandboxManager.initialize); without it the helper starts and loads srt, and waits for init().
   * `credentials`: the uid it runs as from its start. `child`: a helper process already running (the bridge started
   * it with itself, as root: early-helper.ts; it gets its uid with init()), adopted instead of spawning one.
   */
  constructor(options: { bridgeFile: string; srtIndex: string; config?: unknown; credentials?: Credentials; child?: ChildProcess }) {
    this.#child = options.child ?? spawnJailHelper(spawn, options.bridgeFile, options.srtIndex, options.credentials);
    let stderr = '';
    this.#child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr = keepTail(stderr + chunk)));
    this.#child.stdin!.on('error', () => undefined);
    this.exited = new Promise<void>((resolve) => this.#child.once('close', () => resolve()));
    this.ready = new Promise<void>((resolve, reject) => {
      const fail = (error: Error) => {
        this.#failed ??= error;
        reject(error);
        for (const waiter of this.#pending.values()) waiter.reject(error);
        this.#pending.clear();
      };
      this.#child.once('error', (error) => fail(new Error(`the jail helper did not start: ${error.message}`)));
      this.#child.once('exit', (code, signal) => {
        this.#exited = true;
        this.#killed = signal === 'SIGKILL';
        const said = errorLines(stderr);
        fail(new Error(`the jail helper exited (${code ?? signal})${said ? `: ${said}` : ''}`));
      });
      createInterface({ input: this.#child.stdout! }).on('line', (line) => {
        let reply: JailHelperReply;
        try {
          reply = JSON.parse(line) as JailHelperReply;
        } catch {
          return;
        }
        if (reply.t === 'ready') {
          this.#wasReady = true;
          this.#srt = { from: reply.srt, ms: reply.ms, ...(reply.note === undefined ? {} : { note: reply.note }) };
          resolve();
        }
        else if (reply.t === 'wrapped') this.#settle(reply.id, (w) => w.resolve(reply.command));
        else if (reply.id === undefined) fail(new Error(reply.message));
        else this.#settle(reply.id, (w) => w.reject(new Error(reply.message)));
      });
    });
    this.ready.catch(() => undefined);
    if (options.config !== undefined) this.init(options.config);
  }

  /**
   * Hands srt its config (once): the helper initializes srt with it and then says ready. `credentials`: the uid
   * and gid a helper started as root takes first (setgid/setuid: it keeps nothing of root's).
   */
  init(config: unknown, credentials?: Credentials): void {
    if (this.#initialized) return;
    this.#initialized = true;
    this.#send({ t: 'init', config, ...(credentials === undefined ? {} : { credentials }) });
  }

  /**
   * The bubblewrap command line (for `/bin/sh -c`) that runs `command` under the given filesystem rules.
   * `cwd` is the CLI's working directory: srt keeps the dangerous files it finds there (git hooks, shell rc files) read-only.
   * `kept`: the unix socket the CLI's keeper relays it through; while it answers, the helper leaves srt's mount points as it goes.
   */
  async wrap(command: string, filesystem: unknown, cwd?: string, kept?: string): Promise<string> {
    await this.ready;
    if (this.#failed) throw this.#failed;
    const id = ++this.#next;
    const wrapped = new Promise<string>((resolve, reject) => this.#pending.set(id, { resolve, reject }));
    this.#send({ t: 'wrap', id, command, filesystem, ...(cwd === undefined ? {} : { cwd }), ...(kept === undefined ? {} : { kept }) });
    return wrapped;
  }

  /** The helper process has exited (killed, or failed to start): it wraps nothing more; start another. */
  get exitedAlready(): boolean {
    return this.#exited;
  }

  /** The helper said ready once: it ran, so its exit was done to it, not a failure to start. */
  get wasReady(): boolean {
    return this.#wasReady;
  }

  /** Once ready: where its sandbox-runtime came from (srt-bundle.ts), its start's phases, and why not the bundle when one was there. */
  get srt(): { from: 'bundle' | 'installed'; ms: JailHelperStartMs; note?: string } | undefined {
    return this.#srt;
  }

  /** It ended by SIGKILL: done to it from outside (a failure to start exits with its error), even before it was ready. */
  get killed(): boolean {
    return this.#killed;
  }

  /** A jailed process started (its wrap is in use). */
  started(): void {
    this.#active++;
  }

  /** A wrap naming the keeper socket `kept` will not run: the helper stops watching that socket. */
  forget(kept: string): void {
    this.#send({ t: 'forget', kept });
  }

  /** A jailed process ended (`kept`: the keeper socket of its wrap); with none left, srt removes the mount-point files it made. */
  ended(kept?: string): void {
    if (kept !== undefined) this.forget(kept);
    this.#active = Math.max(0, this.#active - 1);
    if (this.#active === 0) this.#send({ t: 'cleanup' });
  }

  close(): void {
    endJailHelper(this.#child);
  }

  #send(message: object): void {
    if (this.#child.stdin?.writable) this.#child.stdin.write(`${JSON.stringify(message)}\n`);
  }

  #settle(id: number, act: (waiter: { resolve: (command: string) => void; reject: (error: Error) => void }) => void): void {
    const waiter = this.#pending.get(id);
    if (!waiter) return;
    this.#pending.delete(id);
    act(waiter);
  }
}

/** The helper's stderr kept for its exit message: the last lines, whole (never cut mid-line), at most ~4 KB. */
function keepTail(text: string): string {
  if (text.length <= 4096) return text;
  const tail = text.slice(-4096);
  const newline = tail.indexOf('\n');
  return newline === -1 ? tail : tail.slice(newline + 1);
}

/** What the helper said as it failed, without Node's stack frames (`    at …`): the error line(s) whole. */
export function errorLines(stderr: string): string {
  return stderr
    .split('\n')
    .filter((line) => line.trim() !== '' && !/^\s+at /.test(line) && !/^\s*\^+\s*$/.test(line))
    .join('\n')
    .trim();
}
