// The enforcement point of the control-plane isolation (docs/security.md): how the supervisor
// (and the keeper, for launch `survive`) spawns a CLI. `prepare(launch)` turns the host's launch
// into what is actually spawned — the CLI's dirs created and handed to its uid, HOME/TMPDIR of
// its own, and in the namespace modes the argv wrapped in sandbox-runtime (srt.ts) with the
// state dir hidden and the network behind the bridge's egress proxy — plus the uid/gid to spawn
// it under. The launch the host sent stays what is journaled and what reuse compares.
import { lstatSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import type { IsolationMode, IsolationReport } from '../../protocol/v1/isolation.ts';
import type { LaunchSpec } from '../../protocol/v1/launch-spec.ts';
import type { AgentUser } from './agent-user.ts';
import type { EgressProxy } from './egress-proxy.ts';
import type { KeptEgressSpec } from './kept-egress.ts';
import type { AheadGo } from '../survive/jail-ahead.ts';
import type { PolicyState } from './policy.ts';
import { nprocPrefix } from './pids-cap.ts';
import { blockedAncestor, cliDirs, closeToOthers, handOver, handOverRefusal, openStateDirPath, prepareArea } from './cli-dirs.ts';
import { SESSION_UID_BASE, SESSION_UID_SLOTS } from './session-uid.ts';

export type Credentials = { readonly uid: number; readonly gid: number };

export type Jailed =
  | {
      ok: true;
      launch: LaunchSpec;
      credentials?: Credentials;
      /** Cleans up after the process (its srt settings file). */
      release?: () => void;
      /** How signals reach the CLI (inside a namespace the spawned process is srt, not the CLI). */
      signal?: (pid: number, signal: NodeJS.Signals) => boolean;
      /** A kept CLI in a network namespace: the egress proxy its keeper runs (kept-egress.ts). */
      keptEgress?: KeptEgressSpec;
      /** The CLI takes the jail its keeper started ahead (launch.argv is that jail's): what to tell the jail's shell (survive/jail-ahead.ts). */
      ahead?: AheadGo;
    }
  | { ok: false; message: string };

/**
 * A jail made ahead of its CLI (docs/bridge-internals.md#jail-ahead), for a spare keeper to start now: its shell
 * waits for the CLI's env and argv. `key`: which launches it fits (srt.ts). `keep`: the env names srt sets.
 */
export type JailAhead = {
  key: string;
  start: { argv: string[]; cwd: string; env: Record<string, string> };
  credentials?: Credentials;
  /** The keeper's egress socket, bound into the jail. */
  socket: string;
  marker: string;
  keep: string[];
  /** The jail ended, or was never started. */
  release(): void;
};

/** A launch whose jail can be made ahead: kept, on pipes (the jail's shell reads the CLI's env and argv from its stdin pipe). */
export function aheadFits(launch: LaunchSpec): boolean {
  return launch.survive === true && launch.io.mode === 'pipes';
}

/** Takes the jail made ahead when it fits `key` (undefined: none, or it does not fit). */
export type AheadClaim = (key: string) => JailAhead | undefined;

export interface CliJail {
  readonly report: IsolationReport;
  /** The egress proxy every jailed CLI's traffic goes through (namespace modes). */
  readonly egress?: EgressProxy;
  /** Ends what the jail runs beside the bridge (the namespace's helper); stop and destroy call it. */
  close?(): void;
  /**
   * What to spawn for `launch`, or why it must not be spawned (the turn then ends spawn-failed). Synchronous when there is nothing
   * to prepare. `claim`: a kept launch may take a jail made ahead (`ahead`) that fits it.
   */
  prepare(launch: LaunchSpec, claim?: AheadClaim): Jailed | Promise<Jailed>;
  /** A jail for a launch like `launch`, made now for a spare keeper to start (namespace modes; undefined where none can be made). */
  ahead?(launch: LaunchSpec): Promise<JailAhead | undefined>;
}

/** No isolation: the launch as the host sent it (tests that build a Supervisor directly, `--isolation none`). */
export const NO_JAIL: CliJail = {
  report: { mode: 'none', requested: 'none', required: false, networkPolicy: false, reasons: [] },
  prepare: (launch) => ({ ok: true, launch }),
};

/** Wraps a prepared launch in a namespace (srt.ts); absent in the modes without one. */
/** `user`: the uid the CLI runs as (undefined: the bridge's), which its jail helper runs as too. */
export type NamespaceWrap = (launch: LaunchSpec, dirs: JailDirs, claim?: AheadClaim) => Promise<Jailed>;
/** Makes the jail for a launch ahead of it (srt.ts), or says none can be. */
export type AheadWrap = (launch: LaunchSpec, dirs: JailDirs) => Promise<JailAhead | undefined>;
export type JailDirs = { areas: string[]; project: string | undefined; user: AgentUser | undefined };

export type JailOptions = {
  readonly report: IsolationReport;
  readonly stateDir: string;
  /** The bridge bundle: its dir (the bootstrap dir) is never handed to the CLI. */
  readonly bridgeFile: string;
  /** The CLI's uid (uid modes). */
  readonly user?: AgentUser;
  /** `user` is a uid of this session's own (session-uid.ts): no other session's processes count under it. */
  readonly sessionUid?: boolean;
  /** Told of a project dir before it is handed to `user`, with the owner it had (a session uid's lease gives it back: session-uid.ts). */
  readonly handedOver?: (path: string, owner: { uid: number; gid: number; mode: number }) => void;
  readonly wrap?: NamespaceWrap;
  readonly ahead?: AheadWrap;
  readonly egress?: EgressProxy;
  readonly close?: () => void;
  /** The network policy in force, re-read before each spawn; anything but allow-all needs a namespace. */
  readonly policy?: () => PolicyState;
  readonly log: { warn(obj: object, msg?: string): void; info(obj: object, msg?: string): void };
};

export function createJail(options: JailOptions): CliJail {
  const { report, user, log } = options;
  const stateDir = resolve(options.stateDir);
  const keep = [stateDir, dirname(resolve(options.bridgeFile))];
  const handedOver = new Set<string>();
  if (user) openStateDirPath(stateDir);
  const refuse = (message: string): { ok: false; message: string } => ({ ok: false, message: `${message} (isolation ${report.mode})` });

  return {
    report,
    ...(options.egress ? { egress: options.egress } : {}),
    ...(options.close ? { close: options.close } : {}),
    async prepare(launch, claim) {
      const got = await made(launch);
      if (!got.ok) return got;
      const { jailed, dirs, credentials, capped } = got;
      if (options.wrap) {
        const wrapped = await options.wrap(jailed, dirs, claim);
        if (!wrapped.ok) return refuse(wrapped.message);
        // A jail made ahead was capped as it was made.
        return { ...wrapped, launch: wrapped.ahead ? wrapped.launch : capped(wrapped.launch), ...(credentials ? { credentials } : {}) };
      }
      return { ok: true, launch: capped(jailed), ...(credentials ? { credentials } : {}) };
    },
    ...(options.ahead
      ? {
          async ahead(launch: LaunchSpec) {
            const got = await made(launch);
            if (!got.ok) return undefined;
            const jail = await options.ahead!(got.jailed, got.dirs);
            if (jail === undefined) return undefined;
            return { ...jail, start: { ...jail.start, argv: got.capped({ ...launch, argv: jail.start.argv }).argv }, ...(got.credentials ? { credentials: got.credentials } : {}) };
          },
        }
      : {}),
  };

  /** The launch with the CLI's dirs made and handed over, its uid and env: what the jail wraps, or why it must not run. */
  async function made(
    launch: LaunchSpec,
  ): Promise<{ ok: true; jailed: LaunchSpec; dirs: JailDirs; credentials: Credentials | undefined; capped: (spec: LaunchSpec) => LaunchSpec } | { ok: false; message: string }> {
    if (report.mode === 'none' && report.required) {
      return refuse(`the CLI would run without isolation, which this bridge was told to refuse: ${report.reasons.join('; ') || 'no isolation is available'}`);
    }
    const policy = options.policy?.().policy;
    if (policy !== undefined && policy.mode !== 'allow-all' && !report.networkPolicy) {
      return refuse(`the sandbox's network policy (${policy.mode}) cannot be enforced without a network namespace: ${report.reasons.join('; ') || 'none is available'}`);
    }
    const found = cliDirs(launch, stateDir);
    if (!found.ok) return refuse(found.message);
    const { areas, project, env } = found.dirs;
    // The CLI's uid must reach its cwd, its binary and its areas, and in a namespace the bridge file (its
    // jail helper runs from it as that uid). Where it cannot (a sandbox under a 0700 dir of root's, as
    // mkdtemp makes), a namespace still isolates it: that spawn runs without the uid of its own, with a
    // warning (a diagnostic to the host); with no namespace to fall back on, the spawn is refused.
    let asUser = user;
    if (user) {
      const needed = [launch.cwd, isAbsolute(launch.argv[0]!) ? launch.argv[0] : undefined, ...areas];
      // The bridge file is read, not entered: its dir chain must be passable.
      if (options.wrap) needed.push(dirname(resolve(options.bridgeFile)));
      for (const path of needed) {
        if (path === undefined) continue;
        const blocked = blockedAncestor(resolve(path, 'x'), user);
        if (!blocked) continue;
        const why = `uid ${user.uid} cannot enter ${blocked.dir} (mode ${blocked.mode.toString(8)}) on the way to ${path}`;
        if (!options.wrap) return refuse(`the CLI runs as uid ${user.uid}, but ${why}; install the CLI and keep the project where that user can reach them`);
        log.warn({ path, blocked: blocked.dir, mode: blocked.mode.toString(8) }, `jail: ${why}; this CLI runs in the namespace without a uid of its own`);
        asUser = undefined;
        break;
      }
    }
    try {
      for (const area of areas) prepareArea(area, asUser);
    } catch (error) {
      return refuse(`cannot prepare the CLI's dirs: ${(error as Error).message}`);
    }
    if (asUser && project !== undefined && !handedOver.has(project)) {
      const refusal = handOverRefusal(project, keep);
      if (refusal === undefined) {
        try {
          // A uid of the session's own: the project is closed to other uids (the files its CLI makes are 0644),
          // and its owner and mode are recorded to be given back (session-uid.ts).
          const ownUid = asUser === user && options.handedOver !== undefined;
          if (ownUid) options.handedOver!(project, ownerBefore(project));
          const { changed } = handOver(project, asUser, keep);
          if (ownUid) closeToOthers(project);
          if (changed > 0) log.info({ project, uid: asUser.uid, changed }, 'jail: project dir handed to the CLI user');
        } catch (error) {
          return refuse(`cannot hand the project dir ${project} to uid ${asUser.uid}: ${(error as Error).message}`);
        }
      } else {
        log.warn({ project, refusal }, 'jail: the project dir is not handed to the CLI user; it may only read it');
      }
      handedOver.add(project);
    }
    const names: Record<string, string> = asUser && /^[a-z_]/.test(asUser.name) ? { USER: asUser.name, LOGNAME: asUser.name } : {};
    const jailed: LaunchSpec = { ...launch, env: { ...launch.env, ...env, ...names } };
    const credentials = asUser ? { uid: asUser.uid, gid: asUser.gid } : undefined;
    // A uid of the session's own without a pids cgroup: the process cap is RLIMIT_NPROC on that uid (pids-cap.ts).
    const capped = (spec: LaunchSpec): LaunchSpec => {
      const prefix = asUser !== undefined && asUser === user && options.sessionUid === true ? nprocPrefix() : [];
      return prefix.length === 0 ? spec : { ...spec, argv: [...prefix, ...spec.argv] };
    };
    return { ok: true, jailed, dirs: { areas, project, user: asUser }, credentials, capped };
  }
}

/** Who a project dir goes back to, with its mode: its owner, or its parent's (and 0755) when a session uid (another session's) holds it. */
function ownerBefore(project: string): { uid: number; gid: number; mode: number } {
  const info = lstatSync(project);
  if (info.uid < SESSION_UID_BASE || info.uid >= SESSION_UID_BASE + SESSION_UID_SLOTS) return { uid: info.uid, gid: info.gid, mode: info.mode & 0o7777 };
  const parent = lstatSync(dirname(project));
  return { uid: parent.uid, gid: parent.gid, mode: 0o755 };
}

export function modeHasUid(mode: IsolationMode): boolean {
  return mode === 'uid+namespace' || mode === 'uid';
}

export function modeHasNamespace(mode: IsolationMode): boolean {
  return mode === 'uid+namespace' || mode === 'namespace';
}
