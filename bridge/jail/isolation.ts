// Deciding the isolation mode (docs/security.md#modes): what was asked (`--isolation`, default
// auto = the strongest this machine allows), what the machine allows (root → a CLI uid; user
// namespaces + bubblewrap + sandbox-runtime → the namespace), and the jail that enforces it.
// An explicit mode that is not available, or auto finding nothing with `--require-isolation`,
// gives a jail that refuses every spawn: the bridge fails closed at the spawn point.
import type { IsolationMode, IsolationReport, IsolationRequest } from '../../protocol/v1/isolation.ts';
import { ensureAgentUser, type AgentUser } from './agent-user.ts';
import { DEFAULT_CLI_USER, type CliUserSpec } from './cli-user.ts';
import { leaseSessionUid, type SessionUid, type SessionUidOptions } from './session-uid.ts';
import { createJail, modeHasNamespace, modeHasUid, type AheadWrap, type CliJail, type NamespaceWrap } from './cli-jail.ts';
import type { EgressProxy } from './egress-proxy.ts';
import type { PolicyState } from './policy.ts';
import type { NamespaceSupport } from './srt.ts';
import { blockedAncestor } from './cli-dirs.ts';
import { resolve } from 'node:path';

/** How a reason says the CLI lost its uid to a dir it cannot pass (the host warns on it: host/reach/bridge-isolation.ts). */
export const NO_UID_OF_ITS_OWN = 'runs in the namespace without a uid of its own';

export type IsolationOptions = {
  readonly requested: IsolationRequest;
  readonly required: boolean;
  /** `{ session: true }`: a uid of the session's own (session-uid.ts); else one user for every session. */
  readonly cliUser: CliUserSpec;
  /** Where session uids are leased (tests); default session-uid.ts's pool. */
  readonly sessionUids?: SessionUidOptions;
  readonly stateDir: string;
  readonly bridgeFile: string;
  /** Whether (and how) the namespace can be made here, as the CLI user when there is one (srt.ts). */
  readonly namespace: (user: AgentUser | undefined) => Promise<NamespaceSupport>;
  /** The network policy in force, re-read before each spawn (policy.ts). */
  readonly policy?: () => PolicyState;
  readonly log: { warn(obj: object, msg?: string): void; info(obj: object, msg?: string): void };
};

export async function resolveIsolation(options: IsolationOptions): Promise<CliJail> {
  const { requested, required, log } = options;
  const reasons: string[] = [];
  let user: AgentUser | undefined;
  let wrap: NamespaceWrap | undefined;
  let ahead: AheadWrap | undefined;
  let egress: EgressProxy | undefined;
  let closeNamespace: (() => void) | undefined;
  let sessionUid: SessionUid | undefined;
  if (requested === 'none') return jail('none', undefined, undefined);

  if (process.getuid?.() !== 0) {
    reasons.push('the bridge does not run as root, so the CLI cannot get a uid of its own');
  } else if (requested !== 'namespace') {
    let spec = options.cliUser;
    if ('session' in spec) {
      const leased = await leaseSessionUid(options.stateDir, options.sessionUids);
      if (leased.ok) {
        sessionUid = leased.uid;
        user = sessionUid.user;
        log.info({ user: user.name, uid: user.uid, created: sessionUid.created, ...(sessionUid.reclaimed ? { reclaimed: sessionUid.reclaimed } : {}) }, 'isolation: the session\'s own CLI uid');
      } else {
        // Still a uid apart from the bridge, but one every such session shares (docs/security.md#session-uid).
        reasons.push(`${leased.reason}; the CLI runs as ${DEFAULT_CLI_USER}, which other sessions' CLIs on this machine may share`);
        spec = { name: DEFAULT_CLI_USER };
      }
    }
    if (!('session' in spec)) {
      const ensured = ensureAgentUser(spec);
      if (ensured.ok) {
        user = ensured.user;
        if (ensured.created) log.info({ user: user.name, uid: user.uid }, 'isolation: created the CLI user');
      } else {
        reasons.push(ensured.reason);
      }
    }
  }
  if (requested !== 'uid') {
    const support = await options.namespace(user);
    if (support.ok) ({ wrap, ahead, egress, close: closeNamespace } = support);
    else reasons.push(support.reason);
  }
  // The jail helper runs from the bridge file as the CLI's uid: a bridge under a dir that uid cannot pass
  // (a sandbox in a 0700 mkdtemp dir of root's) gives its CLIs the namespace without a uid of their own.
  if (user && wrap && requested !== 'uid') {
    const bridgeFile = resolve(options.bridgeFile);
    const blocked = blockedAncestor(bridgeFile, user);
    if (blocked) {
      reasons.push(
        `uid ${user.uid} cannot reach the bridge file ${bridgeFile} (${blocked.dir} is mode ${blocked.mode.toString(8)}), so the CLI ${NO_UID_OF_ITS_OWN}; ` +
          `make it passable (chmod o+x ${blocked.dir}) or keep the sandbox where that user can reach it`,
      );
      user = undefined;
    }
  }
  const available: IsolationMode = user && wrap ? 'uid+namespace' : wrap ? 'namespace' : user ? 'uid' : 'none';
  if (requested === 'auto') return jail(available, user, wrap);
  // An explicit mode: exactly that, or a jail that refuses to spawn.
  const fits = (!modeHasUid(requested) || user !== undefined) && (!modeHasNamespace(requested) || wrap !== undefined);
  if (fits) return jail(requested, modeHasUid(requested) ? user : undefined, modeHasNamespace(requested) ? wrap : undefined);
  reasons.unshift(`isolation ${requested} was asked for and is not available here`);
  void egress?.close();
  closeNamespace?.();
  return createJail({ report: report('none', true), stateDir: options.stateDir, bridgeFile: options.bridgeFile, log });

  function report(mode: IsolationMode, mustRefuse: boolean): IsolationReport {
    return {
      mode,
      requested,
      required: required || mustRefuse,
      ...(user && modeHasUid(mode) ? { cliUid: user.uid } : {}),
      networkPolicy: modeHasNamespace(mode),
      reasons: reasons.slice(0, 8),
    };
  }

  function jail(mode: IsolationMode, withUser: AgentUser | undefined, withWrap: NamespaceWrap | undefined): CliJail {
    const r = report(mode, false);
    // A session uid's CLI outside a namespace can leave files in the host's /tmp: its lease says so (session-uid.ts).
    if (sessionUid && withUser && !withWrap) sessionUid.runsUnshared();
    if (!withWrap) {
      void egress?.close();
      closeNamespace?.();
    }
    if (mode === 'none') log.warn({ isolation: r }, 'isolation: the CLI runs with the bridge\'s uid and namespaces; it can read the token and act as the host');
    else log.info({ isolation: r }, 'isolation');
    return createJail({
      report: r,
      stateDir: options.stateDir,
      bridgeFile: options.bridgeFile,
      ...(withUser ? { user: withUser, ...(sessionUid ? { sessionUid: true, handedOver: sessionUid.handedOver } : {}) } : {}),
      ...(withWrap && egress ? { wrap: withWrap, ...(ahead ? { ahead } : {}), egress, ...(closeNamespace ? { close: closeNamespace } : {}) } : {}),
      ...(options.policy ? { policy: options.policy } : {}),
      log,
    });
  }
}
