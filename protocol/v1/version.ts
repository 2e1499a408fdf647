// The wire protocol version. A peer whose major differs is refused with
// `version-mismatch`; minor bumps only add optional fields or frames, and a peer sends a newer
// frame only to a peer whose minor has it. 1.1: `host-wait`, `input.callId`, `journal-epoch`, `ack.journalId`.
// 1.2: `expect`.
export const PROTOCOL_VERSION_V1 = '1.2' as const;

/** The minor part of a version ('1.1' → 1; unreadable → 0). */
export function protocolMinor(version: string): number {
  const minor = Number.parseInt(version.split('.')[1] ?? '', 10);
  return Number.isFinite(minor) ? minor : 0;
}

export function protocolMajor(version: string): number {
  const major = Number.parseInt(version.split('.')[0] ?? '', 10);
  return Number.isFinite(major) ? major : -1;
}

export function isCompatibleProtocol(version: string): boolean {
  return protocolMajor(version) === protocolMajor(PROTOCOL_VERSION_V1);
}
