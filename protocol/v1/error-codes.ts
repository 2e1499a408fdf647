// The closed list of error codes an `error` frame can carry. Tests assert the
// code, never the wording.
import * as z from 'zod';

export const errorCodeSchema = z.enum([
  'bad-frame', // not JSON, or not a valid frame of this protocol
  'unauthorized', // wrong or missing token (HTTP 401 before any frame)
  'version-mismatch', // the peer speaks another major protocol version
  'cursor-expired', // attach cursor older than what the journal still holds
  'cursor-ahead', // attach cursor beyond the journal's last seq (journal lost or swapped)
  'journal-mismatch', // attach names a journalId this bridge does not hold
  'not-owner', // the sender does not own the session's stream (never attached, or displaced)
  'fenced', // attach with an older owner epoch (or another owner of the same epoch) while the current owner is connected
  'turn-busy', // a turn is already running
  'unknown-turn', // the frame names a turn that does not exist or has ended
  'unknown-call', // tool-result/approval for a call that is not pending
  'no-process', // input/signal with no live CLI process
  'spawn-failed', // the launch spec could not be spawned
  'too-large', // frame over maxFrameBytes
  'queue-full', // a bounded queue refused the frame
  'stopping', // the bridge is stopping or destroying
  'journal-cap', // start refused: the session's journal reached its cap (HARNESS_BRIDGE_MAX_SESSION_JOURNAL_BYTES)
  'disk-full', // unsolicited: the journal cannot be written (ENOSPC); the CLI is paused until space returns
  'internal', // a bug in the bridge; the session carries on
]);
export type ErrorCode = z.infer<typeof errorCodeSchema>;
