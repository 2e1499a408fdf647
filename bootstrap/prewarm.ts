// prewarmHarness with the spec's meaning: getBootstrap → identity →
// createSession({ identity, onFirstCreate: apply }), so the provider bakes the
// recipe into its template/snapshot once; then the (idempotent) apply, then
// the temporary session is stopped. A harness without getBootstrap is a no-op.
import type { HarnessV1, HarnessV1SandboxProvider } from '../protocol/harness-v1/index.ts';
import { applyBootstrap } from './apply.ts';
import { recipeIdentity } from './identity.ts';

export interface PrewarmResult {
  /** Undefined when the harness has no bootstrap recipe. */
  identity?: string;
  elapsedMs: number;
}

export async function prewarmHarness(options: {
  readonly harness: Pick<HarnessV1, 'getBootstrap'>;
  readonly sandboxProvider: HarnessV1SandboxProvider;
  readonly abortSignal?: AbortSignal;
  /** What to do with the temporary session: the spec stops it; 'destroy' also removes it (local provider: its directory). */
  readonly dispose?: 'stop' | 'destroy';
}): Promise<PrewarmResult> {
  const startedAt = performance.now();
  const { harness, sandboxProvider, abortSignal } = options;
  if (!harness.getBootstrap) return { elapsedMs: performance.now() - startedAt };
  const recipe = await harness.getBootstrap(abortSignal ? { abortSignal } : {});
  const identity = recipeIdentity(recipe);
  const session = await sandboxProvider.createSession({
    identity,
    ...(abortSignal ? { abortSignal } : {}),
    onFirstCreate: async (firstSession, opts) => {
      await applyBootstrap(firstSession, recipe, opts.abortSignal ? { abortSignal: opts.abortSignal } : {});
    },
  });
  try {
    // Providers without snapshots may not have run onFirstCreate on this copy; the marker makes this cheap when they did.
    await applyBootstrap(session.restricted(), recipe, abortSignal ? { abortSignal } : {});
  } finally {
    if (options.dispose === 'destroy' && session.destroy) await session.destroy();
    else await session.stop();
  }
  return { identity, elapsedMs: performance.now() - startedAt };
}
