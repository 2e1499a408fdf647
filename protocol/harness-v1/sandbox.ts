// Sandbox side of the contract: the network sandbox session (infra surface on
// top of Experimental_SandboxSession), its network policy, and the provider.
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

export interface HarnessV1NetworkSandboxSession extends Experimental_SandboxSession {
  /** Durable id; `resumeSession({ sessionId })` reaches the same resource. */
  readonly id: string;
  /** Where relative run/spawn paths resolve; read from the live sandbox. */
  readonly defaultWorkingDirectory: string;
  readonly ports: ReadonlyArray<number>;
  readonly getPortUrl: (options: { port: number; protocol?: 'http' | 'https' | 'ws' }) => PromiseLike<string>;
  /** Idempotent. */
  readonly stop: () => PromiseLike<void>;
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
