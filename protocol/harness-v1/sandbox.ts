// Sandbox side of the contract: the network sandbox session (infra surface on
// top of Experimental_SandboxSession), its network policy, and the provider.
// Declared as what producers of either release give us (session.ts explains
// the two releases): 1.0.x resolves ports with getPortEndpoint (URL plus
// headers) and always has destroy; canary.3 has getPortUrl only and an
// optional destroy. A session with neither port method cannot carry a bridge;
// the harness says so with HarnessCapabilityUnsupportedError. Our own local
// provider (host/sandbox/local/) has all of them.
import type { Experimental_SandboxSession } from '@ai-sdk/provider-utils';

export type SandboxSession = Experimental_SandboxSession;

export type HarnessV1NetworkPolicy =
  | { mode: 'allow-all' }
  | { mode: 'deny-all' }
  | {
      mode: 'custom';
      allowedHosts: ReadonlyArray<string>;
      allowedCIDRs?: ReadonlyArray<string>;
      deniedCIDRs?: ReadonlyArray<string>;
    }
  | {
      mode: 'custom';
      allowedHosts?: ReadonlyArray<string>;
      allowedCIDRs: ReadonlyArray<string>;
      deniedCIDRs?: ReadonlyArray<string>;
    };

/** How to reach a sandbox port: the URL, and headers the connection must carry (scoped to that URL). */
export type HarnessV1PortEndpoint = {
  readonly url: string;
  readonly headers?: Readonly<Record<string, string>>;
};

export type HarnessV1PortOptions = { port: number; protocol?: 'http' | 'https' | 'ws' };

export interface HarnessV1NetworkSandboxSession extends Experimental_SandboxSession {
  /** Durable id; `resumeSession({ sessionId })` reaches the same resource. */
  readonly id: string;
  /** Where relative run/spawn paths resolve; read from the live sandbox. */
  readonly defaultWorkingDirectory: string;
  readonly ports: ReadonlyArray<number>;
  /** 1.0.x: preferred. */
  readonly getPortEndpoint?: (options: HarnessV1PortOptions) => PromiseLike<HarnessV1PortEndpoint>;
  /** canary.3 (deprecated in 1.0.x for getPortEndpoint). */
  readonly getPortUrl?: (options: HarnessV1PortOptions) => PromiseLike<string>;
  /** Idempotent. */
  readonly stop: () => PromiseLike<void>;
  /** Stop, then remove the backing resource (required in 1.0.x, optional in canary.3). */
  readonly destroy?: () => PromiseLike<void>;
  readonly setNetworkPolicy?: (policy: HarnessV1NetworkPolicy) => PromiseLike<void>;
  readonly setPorts?: (ports: ReadonlyArray<number>, options?: { abortSignal?: AbortSignal }) => PromiseLike<void>;
  /** Same resource, narrower surface: file I/O, run and spawn only. */
  readonly restricted: () => Experimental_SandboxSession;
}

export interface HarnessV1SandboxProvider {
  readonly specificationVersion: 'harness-sandbox-v1';
  readonly providerId: string;
  readonly bridgePorts?: ReadonlyArray<number>;
  readonly createSession: (options?: {
    sessionId?: string;
    abortSignal?: AbortSignal;
    /** Snapshot identity: sessions with the same identity may start from one snapshot. */
    identity?: string;
    /** Called exactly once per identity, on fresh creation (baked into the snapshot). */
    onFirstCreate?: (session: Experimental_SandboxSession, opts: { abortSignal?: AbortSignal }) => Promise<void>;
  }) => PromiseLike<HarnessV1NetworkSandboxSession>;
  readonly resumeSession?: (options: {
    sessionId: string;
    abortSignal?: AbortSignal;
  }) => PromiseLike<HarnessV1NetworkSandboxSession>;
}

/** A network sandbox session, as opposed to the basic SandboxSession 1.0.x may pass to doStart. */
export function isNetworkSandboxSession(session: HarnessV1NetworkSandboxSession | SandboxSession): session is HarnessV1NetworkSandboxSession {
  return 'restricted' in session && typeof (session as { restricted?: unknown }).restricted === 'function';
}
