// How the host asks a bridge to isolate its CLI (docs/security.md#settings), and what it does with
// the answer: harness settings or the sandbox session itself (the local provider hangs its options
// on its sessions under BRIDGE_ISOLATION, so a harness started on one needs no setting of its own)
// become the bridge's flags; hello's `isolation` becomes a warning diagnostic when the CLI runs
// without isolation, and a refusal when isolation was required.
import type { HelloFrame } from '../../protocol/v1/index.ts';
import type { IsolationRequest } from '../../protocol/v1/isolation.ts';

/** The bridge's isolation settings, as the host passes them through. */
export type BridgeIsolation = {
  /** Default 'auto': the strongest mode the sandbox allows. */
  readonly mode?: IsolationRequest;
  /** Refuse to run a CLI without isolation (the bridge exits at start, or refuses each spawn). */
  readonly require?: boolean;
  /** One user for every session's CLI when the bridge runs as root: a name (created if missing) or `UID:GID`. Default: a uid of the session's own (docs/security.md#session-uid). */
  readonly cliUser?: string;
  /** The sandbox's network policy file (host/sandbox/local/network-policy.ts), for the bridge's egress proxy. */
  readonly networkPolicyFile?: string;
  /** sandbox-runtime's CLI (dist/cli.js) inside the sandbox; default: found next to the bridge file. */
  readonly srt?: string;
  /**
   * The dir holding every session's dir on this machine (the local provider's root): the CLI's jail hides it, its
   * own project and areas excepted, so no session's CLI sees another's files (docs/security.md#multi-session).
   */
  readonly sessionsRoot?: string;
};

/** Where a sandbox session (or its restricted view) carries its BridgeIsolation. */
export const BRIDGE_ISOLATION: unique symbol = Symbol.for('harness-bridge.bridge-isolation') as never;

export function bridgeIsolationOf(sandbox: object): BridgeIsolation | undefined {
  return (sandbox as { [BRIDGE_ISOLATION]?: BridgeIsolation })[BRIDGE_ISOLATION];
}

/** Settings over the sandbox's own: each field the settings give wins. */
export function mergeIsolation(settings: BridgeIsolation | undefined, sandbox: BridgeIsolation | undefined): BridgeIsolation | undefined {
  if (settings === undefined) return sandbox;
  if (sandbox === undefined) return settings;
  return { ...sandbox, ...Object.fromEntries(Object.entries(settings).filter(([, v]) => v !== undefined)) };
}

/**
 * What hello says about isolation: a warning when the CLI runs with the bridge's uid and
 * namespaces (it can read the token and act as the host), undefined when it is isolated or the
 * bridge predates the report.
 */
export function isolationWarning(hello: HelloFrame): string | undefined {
  const report = hello.isolation;
  if (report === undefined) return undefined;
  // A root bridge whose CLI user cannot reach the bridge file (a sandbox under a 0700 dir): the namespace
  // alone holds (bridge/jail/isolation.ts words the reason).
  const noUid = report.mode === 'namespace' ? report.reasons.find((reason) => reason.includes('runs in the namespace without a uid of its own')) : undefined;
  if (noUid !== undefined) return `the CLI has no uid of its own, only the namespace separates it from the bridge: ${noUid} (docs/security.md#modes)`;
  if (report.mode !== 'none') return undefined;
  const why = report.reasons.length > 0 ? ` (${report.reasons.join('; ')})` : '';
  return report.required
    ? `the bridge refuses to run the CLI: isolation is required and none is available${why}`
    : `the CLI runs without isolation from the bridge: it can read the session token and act as the host${why}. ` +
        'Run the bridge as root or where user namespaces work, or set requireIsolation to refuse (docs/security.md)';
}
