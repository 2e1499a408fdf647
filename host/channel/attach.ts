// What the bridge's side of the attach handshake means for this channel:
// whether a hello lets it attach (protocol version, the pinned journal) and
// which error frames refuse the attach for good. Pure; the channel acts on
// the verdicts (a refusal ends it).
import {
  PROTOCOL_VERSION_V1,
  isCompatibleProtocol,
  type ErrorFrame,
  type HelloFrame,
} from '../../protocol/v1/index.ts';
import type { BridgeChannelErrorCode } from './errors.ts';

/** Error codes that refuse an attach for good on this bridge. */
const terminalAttachCodes = new Set<string>(['cursor-expired', 'cursor-ahead', 'journal-mismatch', 'version-mismatch', 'unauthorized', 'fenced']);

/** Why the channel ends; `details` says what the journal holds, when known. */
export type AttachRefusal = {
  code: BridgeChannelErrorCode;
  message: string;
  details?: { firstSeq?: number; lastSeq?: number };
};

/** Why this hello ends the channel, or null when the channel may attach. */
export function refuseHello(hello: HelloFrame, expected: { journalId: string | undefined; cursor: number }): AttachRefusal | null {
  if (!isCompatibleProtocol(hello.protocolVersion)) {
    return {
      code: 'version-mismatch',
      message: `bridge speaks protocol ${hello.protocolVersion}, this host speaks ${PROTOCOL_VERSION_V1}; last cursor ${expected.cursor}`,
    };
  }
  if (expected.journalId !== undefined && hello.journalId !== expected.journalId) {
    return {
      code: 'journal-mismatch',
      message: `bridge holds journal ${hello.journalId}, expected ${expected.journalId}; last cursor ${expected.cursor}`,
      details: { firstSeq: hello.firstSeq, lastSeq: hello.lastSeq },
    };
  }
  return null;
}

/**
 * The refusal an error frame carries when it answers our attach (its id, or
 * no id while attaching) with a terminal code; null for any other error.
 */
export function refuseAttach(frame: ErrorFrame, context: { attachId: string; attaching: boolean; cursor: number }): AttachRefusal | null {
  const isAttach = frame.id === undefined || frame.id === context.attachId;
  if (!isAttach || !terminalAttachCodes.has(frame.code) || !(context.attaching || frame.id === context.attachId)) return null;
  const held = frame.firstSeq !== undefined ? ` (journal holds ${frame.firstSeq}..${frame.lastSeq ?? '?'})` : '';
  return {
    code: frame.code as BridgeChannelErrorCode,
    message: `attach refused: ${frame.code}: ${frame.message}${held}; last cursor ${context.cursor}`,
    details: {
      ...(frame.firstSeq !== undefined ? { firstSeq: frame.firstSeq } : {}),
      ...(frame.lastSeq !== undefined ? { lastSeq: frame.lastSeq } : {}),
    },
  };
}
