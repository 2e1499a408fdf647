// The wire protocol version. A peer whose major differs is refused with
// `version-mismatch`; minor bumps only add optional fields or frames.
export const PROTOCOL_VERSION_V1 = '1.0' as const;

export function protocolMajor(version: string): number {
  const major = Number.parseInt(version.split('.')[0] ?? '', 10);
  return Number.isFinite(major) ? major : -1;
}

export function isCompatibleProtocol(version: string): boolean {
  return protocolMajor(version) === protocolMajor(PROTOCOL_VERSION_V1);
}
