// One revival of a dead bridge, bounded: the channel's options.revive (the
// session layer climbing the ladder) raced against a deadline whose expiry
// aborts the climb (its signal) and rejects naming the bound. `cancel` (the
// channel closed meanwhile) aborts it too.
import type { BridgeChannelOptions, RevivedEndpoint } from './types.ts';

export async function reviveWithin(
  revive: NonNullable<BridgeChannelOptions['revive']>,
  dead: { cause: string; bridgeId: string | undefined },
  timeoutMs: number,
  cancel: AbortSignal,
): Promise<RevivedEndpoint | null> {
  const controller = new AbortController();
  const onCancel = () => controller.abort(cancel.reason);
  cancel.addEventListener('abort', onCancel, { once: true });
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new Error(`no bridge came back within ${timeoutMs} ms`);
      controller.abort(error);
      reject(error);
    }, timeoutMs);
  });
  try {
    return await Promise.race([revive(dead, controller.signal), expired]);
  } finally {
    clearTimeout(timer);
    cancel.removeEventListener('abort', onCancel);
  }
}
