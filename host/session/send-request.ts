// Sending one request frame for a session, with the settle-from-the-journal
// rule: a start, rerun or input whose connection dropped before its ack is
// not re-sent blindly by the channel (at-most-once). Once re-attached and
// caught up, the journal says whether it landed: a turn-start for the turn id
// (also in hello's turns), or a stdin record with the same text after the
// cursor it was sent at. Landed → done; not landed → send it again (up to
// HOST_SESSION_LIMITS.maxSettleAttempts). Every failure becomes a
// BridgeSessionError: 'channel-lost' or 'bridge-refused'.
import type { HarnessV1Diagnostic } from '../../protocol/harness-v1/diagnostics.ts';
import type { AckFrame } from '../../protocol/v1/index.ts';
import type { ChannelRequest } from '../channel/index.ts';
import { HOST_SESSION_LIMITS } from '../limits.ts';
import { BridgeSessionError } from './errors.ts';
import type { SessionChannel } from './session-types.ts';
import type { WriteLog } from './write-log.ts';

export type SendContext = {
  /** The session's current channel (null when detached); read again after every await. */
  channel(): SessionChannel | null;
  /** The session's cursor: where the journal is read from to settle a lost ack. */
  cursor(): number;
  writes: WriteLog;
  report(level: HarnessV1Diagnostic['level'], message: string, attrs: Record<string, unknown>): void;
};

export async function sendRequest(ctx: SendContext, frame: ChannelRequest, timeoutMs?: number, attempt = 0): Promise<AckFrame> {
  const channel = ctx.channel();
  if (!channel) throw new BridgeSessionError('channel-lost', `no connection to the bridge (cursor ${ctx.cursor()})`);
  const sentAt = ctx.cursor();
  let timer: NodeJS.Timeout | undefined;
  try {
    const request = channel.request(frame);
    if (timeoutMs === undefined) return await request;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new BridgeSessionError('channel-lost', `no ack for ${frame.type} within ${timeoutMs} ms`)), timeoutMs);
    });
    request.catch(() => undefined); // settled by the timeout race below; a late rejection is expected
    return await Promise.race([request, timeout]);
  } catch (error) {
    if (BridgeSessionError.isInstance(error)) throw error;
    const code = (error as { code?: string }).code ?? 'unknown';
    if (code === 'outcome-unknown' && ctx.channel() === channel && attempt < HOST_SESSION_LIMITS.maxSettleAttempts) {
      try {
        return await settleUnknown(ctx, channel, frame, sentAt, attempt);
      } catch (settleError) {
        if (BridgeSessionError.isInstance(settleError)) throw settleError;
        throw new BridgeSessionError('channel-lost', `lost the bridge while settling ${frame.type}: ${(settleError as Error).message}`, settleError);
      }
    }
    if (code === 'closed') {
      // The channel ended under the request: another host fencing this one off is its own typed error (docs/design.md#d3).
      const ended = await channel.whenLive().then(() => null, (reason: unknown) => reason as { code?: string; message?: string });
      if (ended?.code === 'fenced' || ended?.code === 'displaced') throw new BridgeSessionError('fenced', `another host drives this session: ${ended.message ?? 'fenced'}`, ended);
    }
    throw new BridgeSessionError('bridge-refused', `bridge refused ${frame.type}: ${code}: ${(error as Error).message}`, error);
  } finally {
    clearTimeout(timer);
  }
}

async function settleUnknown(ctx: SendContext, channel: SessionChannel, frame: ChannelRequest, sentAt: number, attempt: number): Promise<AckFrame> {
  await channel.whenLive();
  const landed = ctx.writes.landed(frame, sentAt, channel.hello);
  ctx.report('info', `${frame.type} lost its ack to a dropped connection; the journal says it ${landed ? 'landed' : 'did not land, sending it again'}`, {
    frame: frame.type,
    attempt,
  });
  if (landed) return { type: 'ack', id: `settled-${attempt}`, of: frame.type };
  return sendRequest(ctx, frame, undefined, attempt + 1);
}
