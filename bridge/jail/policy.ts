// The network policy in force for this bridge's CLIs (docs/security.md#network-policy): read from
// the policy file the sandbox writes (protocol/v1/network-policy.ts; `--network-policy FILE`, else
// `<the .harness-bridge dir above the state dir>/network/policy.json`), watched, and acknowledged
// in `<dir>/bridges/<bridgeId>.json` once applied, so that a setNetworkPolicy() can wait until every
// live bridge enforces it. No file: allow-all. A file that does not validate: deny-all (fail closed).
import { mkdirSync, readFileSync, renameSync, rmSync, watch, writeFileSync, type FSWatcher } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import { NETWORK_POLICY_FILES, networkPolicyFileSchema, type NetworkPolicy } from '../../protocol/v1/network-policy.ts';

export type PolicyLog = { info(obj: object, msg?: string): void; warn(obj: object, msg?: string): void; error(obj: object, msg?: string): void };

export type PolicyState = { policy: NetworkPolicy; revision: string | null };

/** Where the policy file is, when the flag does not say: the `.harness-bridge` dir above the state dir (the kit's layout). */
export function defaultPolicyFile(stateDir: string): string | undefined {
  const parts = resolve(stateDir).split(sep);
  const at = parts.lastIndexOf('.harness-bridge');
  if (at <= 0) return undefined;
  return join(parts.slice(0, at + 1).join(sep) || sep, 'network', NETWORK_POLICY_FILES.policy);
}

export class PolicySource {
  readonly file: string | undefined;
  readonly #bridgeId: string;
  readonly #log: PolicyLog;
  #state: PolicyState = { policy: { mode: 'allow-all' }, revision: null };
  #enforced = false;
  #mode = 'none';
  #watcher: FSWatcher | null = null;
  readonly #listeners = new Set<(state: PolicyState) => void>();

  constructor(options: { file: string | undefined; bridgeId: string; log: PolicyLog }) {
    this.file = options.file;
    this.#bridgeId = options.bridgeId;
    this.#log = options.log;
    this.reload();
  }

  get current(): PolicyState {
    return this.#state;
  }

  /** Re-reads the file (also before every spawn: a missed watch event never leaves a stale policy in force). */
  reload(): PolicyState {
    if (this.file === undefined) return this.#state;
    let next: PolicyState;
    let text: string;
    try {
      text = readFileSync(this.file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') this.#log.error({ file: this.file, err: error }, 'network policy: unreadable; denying all');
      next = (error as NodeJS.ErrnoException).code === 'ENOENT' ? { policy: { mode: 'allow-all' }, revision: null } : { policy: { mode: 'deny-all' }, revision: 'unreadable' };
      return this.#set(next);
    }
    let parsed: ReturnType<typeof networkPolicyFileSchema.safeParse>;
    try {
      parsed = networkPolicyFileSchema.safeParse(JSON.parse(text));
    } catch {
      parsed = { success: false } as ReturnType<typeof networkPolicyFileSchema.safeParse>;
    }
    if (!parsed.success) {
      this.#log.error({ file: this.file }, 'network policy: the file does not validate; denying all');
      return this.#set({ policy: { mode: 'deny-all' }, revision: 'invalid' });
    }
    return this.#set({ policy: parsed.data.policy, revision: parsed.data.revision });
  }

  /** Calls `listener` on every change (not for the current state). */
  onChange(listener: (state: PolicyState) => void): void {
    this.#listeners.add(listener);
  }

  /** Starts watching the file and registers this bridge; `enforced`: whether its isolation can enforce a policy. */
  start(enforced: boolean, mode: string): void {
    this.#enforced = enforced;
    this.#mode = mode;
    if (this.file === undefined) return;
    const dir = dirname(this.file);
    try {
      mkdirSync(join(dir, NETWORK_POLICY_FILES.bridges), { recursive: true, mode: 0o700 });
      this.#watcher = watch(dir, { persistent: false }, (_event, name) => {
        if (name === null || name === NETWORK_POLICY_FILES.policy) this.reload();
      });
      this.#watcher.on('error', (error) => this.#log.warn({ err: error }, 'network policy: watch failed; the policy is re-read before each spawn only'));
    } catch (error) {
      this.#log.warn({ err: error, file: this.file }, 'network policy: cannot watch its dir; the policy is re-read before each spawn only');
    }
    this.#ack();
    process.on('exit', () => rmSync(this.#ackFile(), { force: true }));
  }

  stop(): void {
    this.#watcher?.close();
    this.#watcher = null;
    if (this.file !== undefined) rmSync(this.#ackFile(), { force: true });
  }

  #set(next: PolicyState): PolicyState {
    const changed = next.revision !== this.#state.revision || JSON.stringify(next.policy) !== JSON.stringify(this.#state.policy);
    this.#state = next;
    if (changed) {
      this.#log.info({ mode: next.policy.mode, revision: next.revision }, 'network policy');
      for (const listener of this.#listeners) listener(next);
      this.#ack();
    }
    return next;
  }

  #ackFile(): string {
    return join(dirname(this.file!), NETWORK_POLICY_FILES.bridges, `${this.#bridgeId}.json`);
  }

  /** Tells policy writers what this bridge applied (written whole, then renamed). */
  #ack(): void {
    if (this.file === undefined || this.#watcher === null) return;
    const path = this.#ackFile();
    try {
      const startTime = processStartTime(process.pid);
      writeFileSync(
        `${path}.tmp`,
        JSON.stringify({ pid: process.pid, ...(startTime ? { startTime } : {}), revision: this.#state.revision, enforced: this.#enforced, mode: this.#mode }),
        { mode: 0o600 },
      );
      renameSync(`${path}.tmp`, path);
    } catch (error) {
      this.#log.warn({ err: error, path }, 'network policy: cannot acknowledge the policy');
    }
  }
}

function processStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}
