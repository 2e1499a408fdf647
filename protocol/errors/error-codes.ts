// The ONE closed list of error codes the package's errors carry: a const array
// per error family (the class that may carry them) and the union of them all.
// Callers and tests branch on `code`, never on wording. A new code goes here
// first; the family's class then accepts it through its code type.
import { errorCodeSchema, type ErrorCode } from '../v1/error-codes.ts';

/**
 * BridgeChannelError (host/channel): why a channel ended for good. Each one
 * means the same socket/cursor cannot continue; the session layer decides
 * which rung of the ladder runs next.
 * - version-mismatch: the bridge speaks another protocol major (hello or close 4001).
 * - unauthorized: HTTP 401/403 on the upgrade (wrong token).
 * - cursor-expired / cursor-ahead / journal-mismatch: the bridge refused attach.
 * - displaced: another host attached (close 4000 / error not-owner).
 * - fenced: the bridge refused our attach: another host with a newer (or the same) owner epoch drives the session.
 * - reconnect-deadline: no attach succeeded within reconnectDeadlineMs of the first failure.
 * - bridge-gone: the bridge looked dead (connection refused, its relay unreachable) and could not be brought back: the message names why.
 * - bridge-stopped: the bridge closed with 4003 (stop/destroy in progress).
 * - bridge-failed: the bridge closed with 4005: it is exiting on a fatal error its close reason names (ENOSPC…).
 * - protocol-violation: the bridge kept sending gaps / broke the protocol past our retries.
 * - consumer-failed: onRecords threw or rejected; the channel stops rather than skip records.
 * - closed: close() was called (only seen by whenLive() waiters; `closed` resolves null).
 */
export const channelErrorCodes = [
  'version-mismatch',
  'unauthorized',
  'cursor-expired',
  'cursor-ahead',
  'journal-mismatch',
  'displaced',
  'fenced',
  'reconnect-deadline',
  'bridge-gone',
  'bridge-stopped',
  'bridge-failed',
  'protocol-violation',
  'consumer-failed',
  'closed',
] as const;
export type BridgeChannelErrorCode = (typeof channelErrorCodes)[number];

/**
 * ChannelRequestError (host/channel): why one `request()` failed. The wire
 * codes (protocol/v1/error-codes.ts) come from the bridge's `error {id}` frame
 * or are refused locally before sending (bad-frame, too-large, queue-full);
 * the host-side ones:
 * - outcome-unknown: an at-most-once frame (start, rerun, input) was sent, the
 *   connection dropped before its ack, and it is NOT re-sent; check the journal
 *   (hello's turns / replayed records) to learn whether it took effect.
 * - closed: the channel closed (close() or a terminal error) before the ack.
 */
export const channelRequestErrorCodes = [...(errorCodeSchema.options as readonly ErrorCode[]), 'outcome-unknown', 'closed'] as const;
export type ChannelRequestErrorCode = (typeof channelRequestErrorCodes)[number];

/**
 * BridgeSessionError / ResumeStateError (host/session):
 * - bridge-start-failed: the bridge did not print its ready line in time, or exited first.
 * - bad-resume-state: a resume payload is foreign or corrupt (ResumeStateError).
 * - session-closed: a lifecycle method was called after doDetach/doStop/doDestroy.
 * - turn-busy / no-turn: a turn API was called out of order.
 * - bridge-refused: the bridge refused a request (its error code is in `cause`).
 * - channel-lost: the channel ended for good and no rung of the ladder could continue the turn.
 * - compact-failed: doCompact's internal turn ended with an error (the CLI refused or failed the compaction).
 * - bad-launch: the adapter's launch spec for a turn is invalid (e.g. io.maxLineBytes outside the protocol's range); nothing was sent.
 * - fenced: another host drives this session (it resumed from the same or a newer state): this one stops.
 * - session-live: doStart without a resume state for a session whose bridge is alive (resume it from a checkpoint or state instead).
 * - disk-full: the bridge could not start because the state dir's disk is full (ENOSPC); free space and resume again.
 * - suspended: doPromptTurn (or its thread start) overlapped a doSuspendTurn or doDetach that began before the
 *   prompt was sent: it was not sent, and the state the suspend returned does not hold it.
 */
export const sessionErrorCodes = [
  'bridge-start-failed',
  'bad-resume-state',
  'session-closed',
  'turn-busy',
  'no-turn',
  'bridge-refused',
  'channel-lost',
  'compact-failed',
  'bad-launch',
  'session-live',
  'fenced',
  'disk-full',
  'suspended',
] as const;
export type SessionErrorCode = (typeof sessionErrorCodes)[number];

/** LocalSandboxError (host/sandbox/local) and DockerSandboxError (host/sandbox/docker): the embedded sandbox providers' failures. */
export const localSandboxErrorCodes = [
  'bwrap-missing',
  'session-exists',
  'session-not-found',
  'outside-sandbox',
  'invalid-option',
  'template-busy',
  /** setNetworkPolicy: a live bridge of the session cannot enforce a policy (no network namespace). */
  'network-policy-unenforced',
  /** setNetworkPolicy: a live bridge did not apply the new policy in time. */
  'network-policy-timeout',
  /** Docker provider: the docker CLI is missing or its daemon does not answer. */
  'docker-unavailable',
  /** Docker provider: a docker command failed; the message carries its stderr. */
  'docker-failed',
] as const;
export type LocalSandboxErrorCode = (typeof localSandboxErrorCodes)[number];

/** BootstrapError (bootstrap/): a recipe that cannot be read or applied. */
export const bootstrapErrorCodes = ['invalid-recipe', 'command-failed', 'command-timeout', 'lock-timeout', 'sandbox-failed', 'bridge-file-missing'] as const;
export type BootstrapErrorCode = (typeof bootstrapErrorCodes)[number];

/** Every family's codes, by family. */
export const harnessBridgeErrorCodes = {
  channel: channelErrorCodes,
  'channel-request': channelRequestErrorCodes,
  session: sessionErrorCodes,
  'local-sandbox': localSandboxErrorCodes,
  bootstrap: bootstrapErrorCodes,
} as const;
export type HarnessBridgeErrorFamily = keyof typeof harnessBridgeErrorCodes;

/** Any code a HarnessBridgeError can carry. */
export type HarnessBridgeErrorCode = (typeof harnessBridgeErrorCodes)[HarnessBridgeErrorFamily][number];

const allCodes: ReadonlySet<string> = new Set(Object.values(harnessBridgeErrorCodes).flat());

/** True when `value` is a code of the closed list (of any family). */
export function isHarnessBridgeErrorCode(value: unknown): value is HarnessBridgeErrorCode {
  return typeof value === 'string' && allCodes.has(value);
}
